#include "cuda_util/random_fill.hpp"

#include "cuda_util/check.hpp"
#include "cuda_util/grid.hpp"

namespace zeropp::cuda_util {
namespace {

constexpr int kThreads = 256;

__global__ void fill_uniform_bf16_kernel(__nv_bfloat16* out, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    out[i] = __float2bfloat16_rn(uniform_hash(seed, i));
  }
}

}  // namespace

void fill_uniform_bf16(__nv_bfloat16* out, std::size_t n, std::uint64_t seed, cudaStream_t stream) {
  if (n == 0) return;
  fill_uniform_bf16_kernel<<<grid_stride_blocks(static_cast<std::int64_t>(n), kThreads), kThreads, 0, stream>>>(out, n,
                                                                                                                seed);
  CUDA_CHECK_LAUNCH();
}

}  // namespace zeropp::cuda_util
