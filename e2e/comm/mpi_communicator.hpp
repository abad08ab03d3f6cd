#pragma once
// Communicator over MPI, for host buffers (the CPU backend). Reductions run in a fixed order that does not
// depend on MPI's algorithm choice: each rank sums its share of the buffer over the group in rank order
// 0, 1, ..., n-1 (after an all-to-all), then the shares are all-gathered. So results are bitwise identical on
// every rank and from run to run, and a group of one returns its input unchanged.
// Sends are staged (copied, MPI_Isend) so the caller may reuse its buffer at once; flush() waits for them.
#include <deque>
#include <memory>
#include <string>
#include <vector>

// Only the C API is used; OpenMPI's deprecated C++ bindings do not compile warning-free.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include "e2e/comm/communicator.hpp"

namespace zeropp::e2e {

class MpiCommunicator final : public Communicator {
 public:
  // Wraps MPI_COMM_WORLD (not freed). MPI must be initialised.
  static std::unique_ptr<MpiCommunicator> world();
  // Takes ownership of `comm` (freed in the destructor).
  MpiCommunicator(MPI_Comm comm, std::string group);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  const std::string& group() const override { return group_; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void send(const void* buf, std::size_t count, DataType, int peer, int tag) override;
  void recv(void* buf, std::size_t count, DataType, int peer, int tag) override;
  void flush() override;
  void all_reduce(void* buf, std::size_t count, DataType) override;
  void all_gather(const void* send, void* recv, std::size_t count, DataType) override;
  void reduce_scatter(const void* send, void* recv, std::size_t count, DataType) override;
  void barrier() override;
  std::unique_ptr<Communicator> split(int color, int key, const std::string& name) override;
  [[noreturn]] void abort(int code) override;

  MPI_Comm handle() const { return comm_; }

 private:
  struct PendingSend {
    std::vector<unsigned char> data;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  void retire_completed_sends();

  MPI_Comm comm_;
  bool owned_;
  std::string group_;
  int rank_ = 0;
  int size_ = 1;
  std::deque<PendingSend> pending_;
  std::vector<unsigned char> scratch_;  // all-to-all staging for the reductions
};

}  // namespace zeropp::e2e
