#pragma once
// FlashAttention-2 on tensor cores through mma.sync and ldmatrix (e2e/backend/cuda/flash_mma.cu; the device code is
// flash_mma_kernels.cuh) for head sizes 64 and 128. Same layout and results as the WMMA kernels of flash_tc.cuh and
// the scalar ones of kernels.cu (packed qkv rows [B T, (NH + 2 KVH) hs], GQA, causal, lse [B, NH, T] fp32, bf16 in
// and out); kernels.cu's flash_attention_forward/backward choose between them (flash_kernel_for) and compute
// delta = rowsum(dout * out) before flash_mma_backward.
#include <cstddef>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace zeropp::e2e::cuda {

// Whether these kernels take this head size (64 or 128: the models' head sizes; others go to flash_tc or scalar).
bool flash_mma_supports(int hs);
// Dynamic shared memory of the largest of the three kernels for head size hs (bytes): the device must allow it per
// block (cudaDevAttrMaxSharedMemoryPerBlockOptin; 227 KB on an H100 against 105,472 B at hs 128: the dk/dv kernel).
std::size_t flash_mma_shared_bytes(int hs);

// No argument checks here (kernels.cu's launchers check the shape); every pointer 16-byte aligned.
void flash_mma_forward(__nv_bfloat16* out, float* lse, const __nv_bfloat16* qkv, int B, int T, int NH, int KVH, int hs,
                       cudaStream_t);
// delta [B, NH, T] = rowsum(dout * out), already computed. Overwrites the whole of dqkv.
void flash_mma_backward(__nv_bfloat16* dqkv, const float* delta, const __nv_bfloat16* dout, const float* lse,
                        const __nv_bfloat16* qkv, int B, int T, int NH, int KVH, int hs, cudaStream_t);

}  // namespace zeropp::e2e::cuda
