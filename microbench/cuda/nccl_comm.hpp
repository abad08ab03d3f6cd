#pragma once
// An NCCL communicator over the ranks of an MPI communicator: rank 0 draws the unique id and MPI broadcasts it
// (one process per GPU, the GPU chosen before by the caller).
#include <mpi.h>

#include "microbench/cuda/cuda_check.hpp"

namespace zeropp::microbench::cuda {

class NcclComm {
 public:
  explicit NcclComm(MPI_Comm mpi);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  ncclComm_t get() const { return comm_; }
  MPI_Comm mpi() const { return mpi_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  ncclComm_t comm_ = nullptr;
  MPI_Comm mpi_;
  int rank_ = 0, size_ = 1;
};

}  // namespace zeropp::microbench::cuda
