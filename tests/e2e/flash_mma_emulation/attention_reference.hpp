#pragma once
// Causal grouped-query attention in double precision, straight from the definitions (no tiling, no online softmax):
// the reference the emulated kernels are checked against. Layout as the trainer's flash kernels: qkv rows
// [B T, (NH + 2 KVH) hs] (query heads, then key heads, then value heads), out rows [B T, NH hs], lse [B, NH, T];
// query head h reads key/value head h / (NH / KVH); scale 1 / sqrt(hs).
#include <vector>

namespace zeropp::emu {

struct AttentionShape {
  int B, T, NH, KVH, hs;
};

struct AttentionForward {
  std::vector<double> out, lse;
};

AttentionForward attention_forward(const std::vector<double>& qkv, const AttentionShape& s);

// dqkv of the loss sum(dout * out): dq, dk, dv in the qkv layout (dk, dv summed over the group's query heads).
std::vector<double> attention_backward(const std::vector<double>& qkv, const std::vector<double>& dout,
                                       const AttentionShape& s);

}  // namespace zeropp::emu
