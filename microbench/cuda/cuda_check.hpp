#pragma once
// Every CUDA, cuBLASLt and NCCL call is checked; a failure throws with the call, the library's message and
// file:line (exit code 0 proves nothing on a GPU).
#include <stdexcept>
#include <string>

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nccl.h>

namespace zeropp::microbench::cuda {

[[noreturn]] inline void fail(const char* library, const char* call, const char* message, const char* file,
                              int line) {
  throw std::runtime_error(std::string(library) + " error: " + message + " in " + call + " at " + file + ":" +
                           std::to_string(line));
}

}  // namespace zeropp::microbench::cuda

#define CUDA_CHECK(call)                                                                               \
  do {                                                                                                 \
    const cudaError_t zeropp_status_ = (call);                                                         \
    if (zeropp_status_ != cudaSuccess)                                                                 \
      ::zeropp::microbench::cuda::fail("CUDA", #call, cudaGetErrorString(zeropp_status_), __FILE__, __LINE__); \
  } while (0)

#define CUBLAS_CHECK(call)                                                                                    \
  do {                                                                                                        \
    const cublasStatus_t zeropp_status_ = (call);                                                             \
    if (zeropp_status_ != CUBLAS_STATUS_SUCCESS)                                                              \
      ::zeropp::microbench::cuda::fail("cuBLASLt", #call, cublasLtGetStatusString(zeropp_status_), __FILE__, \
                                       __LINE__);                                                             \
  } while (0)

#define NCCL_CHECK(call)                                                                               \
  do {                                                                                                 \
    const ncclResult_t zeropp_status_ = (call);                                                        \
    if (zeropp_status_ != ncclSuccess)                                                                 \
      ::zeropp::microbench::cuda::fail("NCCL", #call, ncclGetErrorString(zeropp_status_), __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: launch errors now, execution errors at the next synchronisation.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
