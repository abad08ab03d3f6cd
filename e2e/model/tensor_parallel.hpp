#pragma once
// Megatron-style tensor parallelism inside a transformer block, as seen by the model.
//
// With tp = t ranks, rank i holds heads [i*NH/t, (i+1)*NH/t) of the QKV projection (column-parallel), the
// matching input columns of the attention output projection (row-parallel), rows [i*F/t, (i+1)*F/t) of the
// first MLP linear (column-parallel) and the matching input columns of the second (row-parallel). Biases of the
// row-parallel linears, the layer norms, the embedding and the head are replicated. The block calls the
// communicator at Megatron's f/g points:
//   without sequence parallelism: all-reduce after each row-parallel linear (forward) and of the LN input
//   gradient before each column-parallel linear (backward);
//   with sequence parallelism: each rank holds a contiguous block of N/t rows of the flattened [B*T, C]
//   activations (rows [i*N/t, (i+1)*N/t)); all-gather before each column-parallel linear and reduce-scatter
//   after each row-parallel linear (forward), the reverse in the backward.
// Under sequence parallelism the replicated parameters' gradients are partial sums over each rank's rows; the
// runtime calls Chunk::sync_sequence_parallel_grads() before clipping to all-reduce them.
// The embedding and the LM head are not vocabulary-parallel: every TP rank computes them for its rows.
#include "e2e/backend/tensor.hpp"

namespace zeropp::e2e {

// What the model needs from the runtime's tensor-parallel group. Element type is the backend's compute dtype;
// all calls are blocking collectives over the group, called in the same order by every rank of it.
class TensorParallelComm {
 public:
  virtual ~TensorParallelComm() = default;
  virtual int size() const = 0;
  virtual int rank() const = 0;
  virtual void all_reduce_sum(Tensor inout, std::int64_t n) = 0;
  // full[size * n] = concatenation of every rank's local[n], in rank order.
  virtual void all_gather(Tensor full, Tensor local, std::int64_t n) = 0;
  // local[n] = sum over ranks of full[rank * n .. rank * n + n) (this rank's block of the element-wise sum).
  virtual void reduce_scatter_sum(Tensor local, Tensor full, std::int64_t n) = 0;
};

struct TensorParallel {
  int size = 1;                        // t
  int rank = 0;                        // i, 0 <= i < t
  bool sequence_parallel = false;      // SP (requires B*T % t == 0)
  TensorParallelComm* comm = nullptr;  // required when size > 1; not owned

  bool enabled() const { return size > 1; }
};

}  // namespace zeropp::e2e
