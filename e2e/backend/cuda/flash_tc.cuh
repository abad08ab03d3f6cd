#pragma once
// Tensor-core FlashAttention-2 kernels (e2e/backend/cuda/flash_tc.cu) for heads of 16, 32, ..., kFlashTcMaxHead.
// Same layout and results as the scalar flash kernels of kernels.cu (packed qkv rows [B T, (NH + 2 KVH) hs], GQA,
// causal, lse [B, NH, T] in fp32, bf16 in and out); kernels.cu's flash_attention_forward/backward choose between
// them (flash_kernel_for) and compute delta = rowsum(dout * out) before flash_tc_backward.
#include <cstddef>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace zeropp::e2e::cuda {

constexpr int kFlashTcMaxHead = 128;

// Whether the tensor-core kernels take this head size (a multiple of the 16-wide WMMA fragment, at most 128).
bool flash_tc_supports(int hs);
// Dynamic shared memory of the largest of the three kernels for head size hs (bytes): the device must allow it
// per block (cudaDevAttrMaxSharedMemoryPerBlockOptin; 227 KB on an H100 against 186.5 KB at hs 128).
std::size_t flash_tc_shared_bytes(int hs);

// No argument checks here (kernels.cu's launchers check the shape); every pointer 16-byte aligned.
void flash_tc_forward(__nv_bfloat16* out, float* lse, const __nv_bfloat16* qkv, int B, int T, int NH, int KVH, int hs,
                      cudaStream_t);
// delta [B, NH, T] = rowsum(dout * out), already computed. Overwrites the whole of dqkv.
void flash_tc_backward(__nv_bfloat16* dqkv, const float* delta, const __nv_bfloat16* dout, const float* lse,
                       const __nv_bfloat16* qkv, int B, int T, int NH, int KVH, int hs, cudaStream_t);

}  // namespace zeropp::e2e::cuda
