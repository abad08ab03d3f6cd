#pragma once
// DeepSpeed-Ulysses attention over the CP group (deepspeed/sequence/layer.py: DistributedAttention, _SeqAllToAll;
// Jacobs et al. 2023). Rank r holds the contiguous rows [r*Tl, (r+1)*Tl) of every sequence with all of this TP
// rank's heads; an all-to-all over the CP group turns q, k and v into whole sequences (T = cp*Tl rows) of its
// heads/cp query heads and kv_heads/cp key/value heads (head group r: query heads [r*NH/cp, (r+1)*NH/cp) and the
// key/value heads they read), the flash kernel runs causal attention on them, and a second all-to-all returns the
// output to the sequence split. The backward does the same in reverse with the gradients (two all-to-alls). Heads
// and key/value heads must be divisible by cp (validate_context_parallel).
#include "e2e/backend/backend.hpp"
#include "e2e/model/context_parallel.hpp"

namespace zeropp::e2e {

// What the forward keeps for the backward: the head-split inputs, output and log-sum-exp.
struct UlyssesStash {
  Buffer qkv;  // [B, T, (NH+2*KVH)/cp * hs]
  Buffer out;  // [B, T, NH/cp * hs]
  Buffer lse;  // [B, NH/cp, T] fp32
};

// qkv [B, Tl, (NH+2*KVH)*hs] (rotated); writes out [B, Tl, NH*hs] and fills `st`.
void ulysses_attention_forward(Backend&, const ContextParallel&, Tensor out, UlyssesStash& st, Tensor qkv, int B,
                               int Tl, int NH, int KVH, int hs);
// dqkv [B, Tl, (NH+2*KVH)*hs] overwritten with the gradients of this rank's rows of q, k and v.
void ulysses_attention_backward(Backend&, const ContextParallel&, Tensor dqkv, Tensor dout, const UlyssesStash& st,
                                int B, int Tl, int NH, int KVH, int hs);

}  // namespace zeropp::e2e
