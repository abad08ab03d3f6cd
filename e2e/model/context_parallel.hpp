#pragma once
// Context parallelism as seen by the model, in two kinds:
//   ring     Megatron-LM's causal load balancing (megatron/training/utils.py, get_batch_on_this_cp_rank). Every
//            sequence of T tokens is cut into 2*cp chunks of Tc = T/(2*cp); CP rank r holds chunks r and 2*cp-1-r,
//            in that order, so each rank gets one early and one late chunk and the causal work is even; attention
//            over the ring (ring_attention.hpp).
//   ulysses  DeepSpeed-Ulysses (deepspeed/sequence/layer.py, DistributedAttention): rank r holds the contiguous
//            rows [r*Tl, (r+1)*Tl); attention all-to-alls to whole sequences of heads/cp heads and back
//            (ulysses_attention.hpp), so every rank does the same work without reordering.
// A rank's Tl = T/cp rows per sequence run through the whole model: the embedding and RoPE at their global
// positions, the loss over its tokens (its gradient scaled by the whole sequence's count), everything but the
// attention row-local. The CP ranks hold the same parameters; the runtime sums their weight gradients with the
// data-parallel ones (Megatron reduces gradients over dp x cp).
#include <cstdint>
#include <vector>

#include "e2e/backend/tensor.hpp"

namespace zeropp::e2e {

// What the model needs from the runtime's CP group: the ring's one step. Blocking; element type the tensor's.
class ContextParallelComm {
 public:
  virtual ~ContextParallelComm() = default;
  virtual int size() const = 0;
  virtual int rank() const = 0;
  // Sends `send` (n elements) to rank + 1 and receives rank - 1's into `recv` (mod size); distinct buffers.
  virtual void ring_shift(Tensor send, Tensor recv, std::int64_t n) = 0;
  // send and recv hold size() blocks of n elements: block p of `send` goes to rank p, block p of `recv` comes from
  // rank p; block rank() of `recv` is left alone (the caller copies its own block). Distinct buffers.
  virtual void all_to_all(Tensor send, Tensor recv, std::int64_t n) = 0;
};

struct ContextParallel {
  int size = 1;                         // cp
  int rank = 0;                         // r, 0 <= r < cp
  ContextParallelComm* comm = nullptr;  // required when size > 1; not owned
  bool ulysses = false;                 // the kind: ring (false) or ulysses

  bool enabled() const { return size > 1; }
  int rows_per_sequence(int T) const { return T / size; }  // Tl (T when cp = 1)
  // Global position of row t (0 <= t < Tl) of this rank's share of a sequence.
  int position(int t, int T) const {
    if (size == 1) return t;
    if (ulysses) return rank * (T / size) + t;
    const int tc = T / (2 * size);
    return t < tc ? rank * tc + t : (2 * size - 1 - rank) * tc + (t - tc);
  }
  // Runs of consecutive positions in this rank's share: {first row, length, first position}.
  struct Run {
    int row, len, pos;
  };
  std::vector<Run> runs(int T) const {
    if (size == 1) return {{0, T, 0}};
    if (ulysses) return {{0, T / size, rank * (T / size)}};
    const int tc = T / (2 * size);
    return {{0, tc, rank * tc}, {tc, tc, (2 * size - 1 - rank) * tc}};
  }
};

}  // namespace zeropp::e2e
