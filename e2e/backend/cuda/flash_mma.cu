// Launchers of the mma.sync FlashAttention-2 kernels (flash_mma_kernels.cuh, where the design is described).
#include "e2e/backend/cuda/flash_mma.cuh"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "cuda_util/check.hpp"
#include "e2e/backend/cuda/flash_launch.cuh"
#include "e2e/backend/cuda/warp_mma.cuh"
// The kernels after their primitives (warp_mma.cuh), as the file asks.
#include "e2e/backend/cuda/flash_mma_kernels.cuh"

namespace zeropp::e2e::cuda {
namespace {

namespace fm = flash_mma;
using bf16 = __nv_bfloat16;

dim3 mma_grid(int T, std::int64_t pairs) { return flash_launch_grid(fm::row_tiles(T), pairs); }

float softmax_scale(int hs) { return 1.0f / std::sqrt(static_cast<float>(hs)); }

template <int HS>
void forward(bf16* out, float* lse, const bf16* qkv, int B, int T, int NH, int KVH, cudaStream_t stream) {
  const std::size_t bytes = fm::Smem<HS>::forward;
  allow_dynamic_shared(fm::flash_mma_forward_kernel<HS>, bytes);
  fm::flash_mma_forward_kernel<HS><<<mma_grid(T, std::int64_t{B} * NH), fm::kThreads, bytes, stream>>>(
      out, lse, qkv, FlashShape{T, NH, KVH, HS}, softmax_scale(HS));
  CUDA_CHECK_LAUNCH();
}

template <int HS>
void backward(bf16* dqkv, const float* delta, const bf16* dout, const float* lse, const bf16* qkv, int B, int T, int NH,
              int KVH, cudaStream_t stream) {
  const FlashShape sh{T, NH, KVH, HS};
  const float scale = softmax_scale(HS);
  allow_dynamic_shared(fm::flash_mma_dq_kernel<HS>, fm::Smem<HS>::dq);
  fm::flash_mma_dq_kernel<HS><<<mma_grid(T, std::int64_t{B} * NH), fm::kThreads, fm::Smem<HS>::dq, stream>>>(
      dqkv, delta, dout, lse, qkv, sh, scale);
  CUDA_CHECK_LAUNCH();
  allow_dynamic_shared(fm::flash_mma_dkv_kernel<HS>, fm::Smem<HS>::dkv);
  fm::flash_mma_dkv_kernel<HS><<<mma_grid(T, std::int64_t{B} * KVH), fm::kThreads, fm::Smem<HS>::dkv, stream>>>(
      dqkv, delta, dout, lse, qkv, sh, scale);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

bool flash_mma_supports(int hs) { return fm::supports(hs); }

std::size_t flash_mma_shared_bytes(int hs) {
  if (hs == 64) return std::max({fm::Smem<64>::forward, fm::Smem<64>::dq, fm::Smem<64>::dkv});
  if (hs == 128) return std::max({fm::Smem<128>::forward, fm::Smem<128>::dq, fm::Smem<128>::dkv});
  throw std::invalid_argument("flash_mma_shared_bytes: head size " + std::to_string(hs) + " is not 64 or 128");
}

void flash_mma_forward(bf16* out, float* lse, const bf16* qkv, int B, int T, int NH, int KVH, int hs,
                       cudaStream_t stream) {
  if (hs == 64) return forward<64>(out, lse, qkv, B, T, NH, KVH, stream);
  if (hs == 128) return forward<128>(out, lse, qkv, B, T, NH, KVH, stream);
  throw std::invalid_argument("flash_mma_forward: head size " + std::to_string(hs) + " is not 64 or 128");
}

void flash_mma_backward(bf16* dqkv, const float* delta, const bf16* dout, const float* lse, const bf16* qkv, int B,
                        int T, int NH, int KVH, int hs, cudaStream_t stream) {
  if (hs == 64) return backward<64>(dqkv, delta, dout, lse, qkv, B, T, NH, KVH, stream);
  if (hs == 128) return backward<128>(dqkv, delta, dout, lse, qkv, B, T, NH, KVH, stream);
  throw std::invalid_argument("flash_mma_backward: head size " + std::to_string(hs) + " is not 64 or 128");
}

}  // namespace zeropp::e2e::cuda
