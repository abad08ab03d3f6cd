#pragma once
// The model's context-parallel ring (e2e/model/context_parallel.hpp) served by the runtime's cp Communicator, so the
// model never sees MPI or NCCL. Counts land in the cp communicator's stats (one send and one recv per shift; size - 1
// of each per all-to-all).
#include "e2e/comm/communicator.hpp"
#include "e2e/model/context_parallel.hpp"

namespace zeropp::e2e {

class ContextParallelCommAdapter final : public ContextParallelComm {
 public:
  explicit ContextParallelCommAdapter(Communicator& cp) : cp_(cp) {}
  int size() const override { return cp_.size(); }
  int rank() const override { return cp_.rank(); }
  void ring_shift(Tensor send, Tensor recv, std::int64_t n) override;
  void all_to_all(Tensor send, Tensor recv, std::int64_t n) override;

 private:
  Communicator& cp_;
};

}  // namespace zeropp::e2e
