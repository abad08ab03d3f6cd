#pragma once
// Sum and maximum over the 32 lanes of a full warp (butterfly shuffles: every lane gets the result), for the
// kernels of kernels.cu and flash_tc.cu. Device code only (included by .cu files).
namespace zeropp::e2e::cuda {

constexpr int kWarpLanes = 32;

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = kWarpLanes / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = kWarpLanes / 2; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

}  // namespace zeropp::e2e::cuda
