#pragma once
// One MPI process per GPU: the process's rank among those on its node picks the GPU (local rank mod device
// count). The launcher's environment gives the local rank (Open MPI, MPICH/Hydra, Slurm); 0 when run alone.
namespace zeropp::e2e::cuda {

// Number of CUDA devices this process sees; 0 when there is no driver, no device, or the runtime fails.
int device_count() noexcept;

// Sets the current device for this process (idempotent) and returns its index. Throws std::runtime_error when
// no CUDA device is present.
int select_local_device();

}  // namespace zeropp::e2e::cuda
