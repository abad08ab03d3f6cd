#include "microbench/cuda/nccl_comm.hpp"

namespace zeropp::microbench::cuda {

NcclComm::NcclComm(MPI_Comm mpi) : mpi_(mpi) {
  MPI_Comm_rank(mpi_, &rank_);
  MPI_Comm_size(mpi_, &size_);
  ncclUniqueId id{};
  if (rank_ == 0) NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, mpi_);
  NCCL_CHECK(ncclCommInitRank(&comm_, size_, id, rank_));
}

NcclComm::~NcclComm() {
  if (comm_) ncclCommDestroy(comm_);
}

}  // namespace zeropp::microbench::cuda
