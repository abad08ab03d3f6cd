#pragma once
// Host-side launch helpers shared by the three flash implementations (kernels.cu's scalar kernels, flash_tc.cu's
// WMMA kernels, flash_mma.cu's mma.sync kernels). Included by .cu files only.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

#include "cuda_util/check.hpp"

namespace zeropp::e2e::cuda {

// A flash grid: x over the row tiles of a sequence, y over (sequence, head) pairs, at most 65535 per launch.
inline dim3 flash_launch_grid(int row_tiles, std::int64_t pairs) {
  if (pairs < 1 || pairs > 65535)
    throw std::length_error("cuda flash attention: " + std::to_string(pairs) +
                            " (sequence, head) pairs exceed one launch's grid.y of 65535");
  return dim3(static_cast<unsigned>(row_tiles), static_cast<unsigned>(pairs));
}

// More than 48 KB of dynamic shared memory must be allowed per kernel; set it to exactly what this launch needs.
template <typename Kernel>
void allow_dynamic_shared(Kernel kernel, std::size_t bytes) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
}

}  // namespace zeropp::e2e::cuda
