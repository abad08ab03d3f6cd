#include "e2e/model/ring_attention.hpp"

#include <stdexcept>
#include <utility>

namespace zeropp::e2e {
namespace {

// K and V of each row sit side by side after the q heads in a qkv row: copy them out (or the gradients back in).
void pack_kv(Backend& be, Tensor kv, Tensor qkv, int rows, int W, int q_cols, int kv_cols) {
  for (int r = 0; r < rows; ++r)
    be.copy(kv.slice(std::int64_t{r} * kv_cols, kv_cols), qkv.slice(std::int64_t{r} * W + q_cols, kv_cols), kv_cols);
}
void unpack_kv(Backend& be, Tensor qkv, Tensor kv, int rows, int W, int q_cols, int kv_cols) {
  for (int r = 0; r < rows; ++r)
    be.copy(qkv.slice(std::int64_t{r} * W + q_cols, kv_cols), kv.slice(std::int64_t{r} * kv_cols, kv_cols), kv_cols);
}

void check(const ContextParallel& cp, int Tl) {
  if (cp.size > 1 && cp.comm == nullptr) throw std::invalid_argument("ring attention: cp > 1 needs a communicator");
  if (cp.rank < 0 || cp.rank >= cp.size) throw std::invalid_argument("ring attention: cp rank outside [0, cp)");
  if (cp.size > 1 && Tl % 2 != 0) throw std::invalid_argument("ring attention: a rank's rows must be two chunks");
}

}  // namespace

Backend::AttentionBlock ring_block(int rank, int step, int cp, int Tl) {
  const int j = ((rank - step) % cp + cp) % cp, tc = Tl / 2;
  if (step == 0) return {0, Tl, 0, Tl, true};
  if (j < rank) return {0, Tl, 0, tc, false};
  return {tc, tc, 0, Tl, false};
}

void ring_attention_forward(Backend& be, const ContextParallel& cp, Tensor out, Tensor lse, Tensor qkv, int B, int Tl,
                            int NH, int KVH, int hs) {
  check(cp, Tl);
  const int W = (NH + 2 * KVH) * hs, kv_cols = 2 * KVH * hs, rows = B * Tl;
  const DType dt = qkv.dtype;
  Buffer kv(be, std::int64_t{rows} * kv_cols, dt), next;
  pack_kv(be, kv.view(), qkv, rows, W, NH * hs, kv_cols);
  for (int s = 0; s < cp.size; ++s) {
    if (s > 0) {
      if (next.empty()) next = Buffer(be, kv.numel(), dt);
      be.synchronize();
      cp.comm->ring_shift(kv.view(), next.view(), kv.numel());
      std::swap(kv, next);
    }
    be.attention_block_forward(out, lse, qkv, kv.view(), B, Tl, NH, KVH, hs, ring_block(cp.rank, s, cp.size, Tl),
                               s > 0);
  }
}

void ring_attention_backward(Backend& be, const ContextParallel& cp, Tensor dqkv, Tensor dout, Tensor out, Tensor lse,
                             Tensor qkv, int B, int Tl, int NH, int KVH, int hs) {
  check(cp, Tl);
  const int W = (NH + 2 * KVH) * hs, kv_cols = 2 * KVH * hs, rows = B * Tl;
  const DType dt = qkv.dtype;
  be.fill_zero(dqkv);
  Buffer kv(be, std::int64_t{rows} * kv_cols, dt), dkv(be, kv.numel(), dt), next, dnext;
  pack_kv(be, kv.view(), qkv, rows, W, NH * hs, kv_cols);
  be.fill_zero(dkv.view());
  for (int s = 0; s < cp.size; ++s) {
    be.attention_block_backward(dqkv, dkv.view(), dout, out, lse, qkv, kv.view(), B, Tl, NH, KVH, hs,
                                ring_block(cp.rank, s, cp.size, Tl));
    if (cp.size == 1) break;
    if (next.empty()) {
      next = Buffer(be, kv.numel(), dt);
      dnext = Buffer(be, kv.numel(), dt);
    }
    be.synchronize();
    // The keys move on for the next block; their gradient follows them, and after the last block it goes once
    // more, home to its owner.
    if (s + 1 < cp.size) {
      cp.comm->ring_shift(kv.view(), next.view(), kv.numel());
      std::swap(kv, next);
    }
    cp.comm->ring_shift(dkv.view(), dnext.view(), dkv.numel());
    std::swap(dkv, dnext);
  }
  unpack_kv(be, dqkv, dkv.view(), rows, W, NH * hs, kv_cols);
}

}  // namespace zeropp::e2e
