#pragma once
// Where a (sequence, head)'s rows live in the trainer's packed attention tensors, for the flash kernels of both
// kernels.cu (scalar) and flash_tc.cu (tensor cores): qkv rows [NH query heads | KVH key heads | KVH value heads]
// of hs each, output rows [NH heads of hs]. Device code only (included by .cu files).
namespace zeropp::e2e::cuda {

struct FlashShape {
  int T, NH, KVH, hs;
  __host__ __device__ int W() const { return (NH + 2 * KVH) * hs; }  // qkv row
  __host__ __device__ int C() const { return NH * hs; }              // output row
  __host__ __device__ int q_col(int h) const { return h * hs; }
  __host__ __device__ int k_col(int kvh) const { return NH * hs + kvh * hs; }
  __host__ __device__ int v_col(int kvh) const { return (NH + KVH) * hs + kvh * hs; }
};

}  // namespace zeropp::e2e::cuda
