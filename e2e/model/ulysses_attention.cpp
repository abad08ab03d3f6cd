#include "e2e/model/ulysses_attention.hpp"

#include <array>
#include <stdexcept>
#include <vector>

namespace zeropp::e2e {
namespace {

// {offset in a row of the sequence-split tensor, offset in a row of the head-split one, width}.
using Parts = std::vector<std::array<int, 3>>;

// Head group g of a row of [q (NH heads) | k (KVH) | v (KVH)], hs columns per head: its q, k and v columns.
Parts qkv_parts(int g, int NH, int KVH, int hs, int cp) {
  const int nq = NH / cp, nkv = KVH / cp;
  return {{g * nq * hs, 0, nq * hs},
          {(NH + g * nkv) * hs, nq * hs, nkv * hs},
          {(NH + KVH + g * nkv) * hs, (nq + nkv) * hs, nkv * hs}};
}
// Head group g of an attention output row [NH heads]: one run of NH/cp heads.
Parts out_parts(int g, int NH, int hs, int cp) { return {{g * (NH / cp) * hs, 0, (NH / cp) * hs}}; }

// The all-to-all, this rank's own block copied locally (the communicator leaves it).
void exchange(Backend& be, const ContextParallel& cp, Buffer& send, Buffer& recv, std::int64_t n) {
  be.synchronize();
  if (cp.size > 1) cp.comm->all_to_all(send.view(), recv.view(), n);
  be.copy(recv.view().slice(cp.rank * n, n), send.view().slice(cp.rank * n, n), n);
}

// Sequence split -> head split: local [B, Tl, w] (this rank's rows, every head group) to whole sequences
// [B, cp*Tl, wg] of this rank's head group; `parts(g)` names group g's columns.
template <class PartsOf>
Buffer to_heads(Backend& be, const ContextParallel& cp, Tensor local, int B, int Tl, int w, int wg, PartsOf parts) {
  const std::int64_t rows = std::int64_t{B} * Tl, block = rows * wg, seq = std::int64_t{Tl} * wg;
  Buffer send(be, cp.size * block, local.dtype), recv(be, send.numel(), local.dtype);
  for (int g = 0; g < cp.size; ++g)
    for (std::int64_t i = 0; i < rows; ++i)
      for (const auto& [at, to, width] : parts(g))
        be.copy(send.view().slice(g * block + i * wg + to, width), local.slice(i * w + at, width), width);
  exchange(be, cp, send, recv, block);
  Buffer whole(be, cp.size * block, local.dtype);  // sequence b: rank p's rows at p*Tl
  for (int p = 0; p < cp.size; ++p)
    for (int b = 0; b < B; ++b)
      be.copy(whole.view().slice((std::int64_t{b} * cp.size + p) * seq, seq),
              recv.view().slice(p * block + b * seq, seq), seq);
  return whole;
}

// Head split -> sequence split: the inverse of to_heads, written into local [B, Tl, w].
template <class PartsOf>
void to_sequence(Backend& be, const ContextParallel& cp, Tensor local, Tensor whole, int B, int Tl, int w, int wg,
                 PartsOf parts) {
  const std::int64_t rows = std::int64_t{B} * Tl, block = rows * wg, seq = std::int64_t{Tl} * wg;
  Buffer send(be, cp.size * block, whole.dtype), recv(be, send.numel(), whole.dtype);
  for (int p = 0; p < cp.size; ++p)  // rank p's rows of this rank's heads
    for (int b = 0; b < B; ++b)
      be.copy(send.view().slice(p * block + b * seq, seq), whole.slice((std::int64_t{b} * cp.size + p) * seq, seq),
              seq);
  exchange(be, cp, send, recv, block);
  for (int g = 0; g < cp.size; ++g)
    for (std::int64_t i = 0; i < rows; ++i)
      for (const auto& [at, from, width] : parts(g))
        be.copy(local.slice(i * w + at, width), recv.view().slice(g * block + i * wg + from, width), width);
}

void check(const ContextParallel& cp, int NH, int KVH) {
  if (cp.size > 1 && cp.comm == nullptr) throw std::invalid_argument("ulysses attention: cp > 1 needs a communicator");
  if (NH % cp.size != 0 || KVH % cp.size != 0)
    throw std::invalid_argument("ulysses attention: cp must divide the heads and the key/value heads");
}

}  // namespace

void ulysses_attention_forward(Backend& be, const ContextParallel& cp, Tensor out, UlyssesStash& st, Tensor qkv, int B,
                               int Tl, int NH, int KVH, int hs) {
  check(cp, NH, KVH);
  const int P = cp.size, T = P * Tl, nq = NH / P, nkv = KVH / P;
  const int W = (NH + 2 * KVH) * hs, Wg = (nq + 2 * nkv) * hs, C = NH * hs, Cg = nq * hs;
  st.qkv = to_heads(be, cp, qkv, B, Tl, W, Wg, [&](int g) { return qkv_parts(g, NH, KVH, hs, P); });
  st.out = Buffer(be, std::int64_t{B} * T * Cg, qkv.dtype);
  st.lse = Buffer(be, std::int64_t{B} * nq * T, DType::f32);
  be.flash_attention_forward(st.out.view(), st.lse.view(), st.qkv.view(), B, T, nq, nkv, hs);
  to_sequence(be, cp, out, st.out.view(), B, Tl, C, Cg, [&](int g) { return out_parts(g, NH, hs, P); });
}

void ulysses_attention_backward(Backend& be, const ContextParallel& cp, Tensor dqkv, Tensor dout,
                                const UlyssesStash& st, int B, int Tl, int NH, int KVH, int hs) {
  check(cp, NH, KVH);
  const int P = cp.size, T = P * Tl, nq = NH / P, nkv = KVH / P;
  const int W = (NH + 2 * KVH) * hs, Wg = (nq + 2 * nkv) * hs, C = NH * hs, Cg = nq * hs;
  Buffer dout_heads = to_heads(be, cp, dout, B, Tl, C, Cg, [&](int g) { return out_parts(g, NH, hs, P); });
  Buffer dheads(be, std::int64_t{B} * T * Wg, dout.dtype);
  be.flash_attention_backward(dheads.view(), dout_heads.view(), st.out.view(), st.lse.view(), st.qkv.view(), B, T, nq,
                              nkv, hs);
  to_sequence(be, cp, dqkv, dheads.view(), B, Tl, W, Wg, [&](int g) { return qkv_parts(g, NH, KVH, hs, P); });
}

}  // namespace zeropp::e2e
