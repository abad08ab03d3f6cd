#pragma once
// The model's tensor-parallel hooks (e2e/model/tensor_parallel.hpp) served by a runtime Communicator (the tp
// group), so the model never sees MPI or NCCL. Counts land in the tp communicator's stats.
#include "e2e/comm/communicator.hpp"
#include "e2e/model/tensor_parallel.hpp"

namespace zeropp::e2e {

DataType comm_type(DType);  // f32 -> f32, bf16 -> bf16, i32 -> std::invalid_argument

class TensorParallelCommAdapter final : public TensorParallelComm {
 public:
  explicit TensorParallelCommAdapter(Communicator& tp) : tp_(tp) {}
  int size() const override { return tp_.size(); }
  int rank() const override { return tp_.rank(); }
  void all_reduce_sum(Tensor inout, std::int64_t n) override;
  void all_gather(Tensor full, Tensor local, std::int64_t n) override;
  void reduce_scatter_sum(Tensor local, Tensor full, std::int64_t n) override;

 private:
  Communicator& tp_;
};

}  // namespace zeropp::e2e
