#include "e2e/backend/cuda/local_device.hpp"

#include <cstdlib>
#include <stdexcept>

#include "microbench/cuda/cuda_check.hpp"

namespace zeropp::e2e::cuda {

int device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no driver" error so later calls report their own
    return 0;
  }
  return count;
}

int select_local_device() {
  const int count = device_count();
  if (count == 0) throw std::runtime_error("cuda: no CUDA device is visible to this process");
  int local_rank = 0;
  for (const char* var : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    if (const char* v = std::getenv(var)) {
      local_rank = std::atoi(v);
      break;
    }
  }
  const int device = local_rank % count;
  CUDA_CHECK(cudaSetDevice(device));
  return device;
}

}  // namespace zeropp::e2e::cuda
