#pragma once
// The warp-level primitives the mma.sync flash kernels (flash_mma_kernels.cuh) are written in, as inline PTX. Device
// code only (included by flash_mma.cu before flash_mma_kernels.cuh). The host emulation of those kernels
// (tests/e2e/flash_mma_emulation/warp_emulation.hpp) defines the same functions for CPU "lanes" instead; keep the two
// lists in step: the kernels use nothing else that touches shared memory or other lanes.
//
// Layouts (PTX ISA 9.0, "Matrix Fragments for mma.m16n8k16 with floating point type" and "Warp-level matrix load
// instruction: ldmatrix"), with g = lane / 4 (groupID) and q = lane % 4 (threadID_in_group):
//   A 16x16 bf16, 4 registers of 2 elements (the lower-indexed element in the low 16 bits):
//     a0 = A[g][2q, 2q+1]   a1 = A[g+8][2q, 2q+1]   a2 = A[g][2q+8, 2q+9]   a3 = A[g+8][2q+8, 2q+9]
//   B 16x8 bf16 (k x n), 2 registers:  b0 = B[2q, 2q+1][g]   b1 = B[2q+8, 2q+9][g]
//   C, D 16x8 fp32, 4 registers:       c0, c1 = C[g][2q, 2q+1]   c2, c3 = C[g+8][2q, 2q+1]
//   ldmatrix .x4: lane l gives the address of row l % 8 of matrix l / 8 (16 bytes: 8 bf16); register i of lane l gets
//     matrix i's elements [l / 4][2 (l % 4), 2 (l % 4) + 1]; with .trans, [2 (l % 4)][l / 4] and [2 (l % 4) + 1][l /
//     4].
// So the C fragments of two n-adjacent 16x8 tiles, packed in pairs, are the A fragment of their 16x16 (used for
// P = softmax(S) and dS without going through shared memory, as FlashAttention-2 does).
#include <cstdint>

#include <cuda_bf16.h>

namespace zeropp::e2e::cuda::warp {

// The block's dynamic shared memory (128-byte aligned; the launcher sizes it).
__device__ __forceinline__ unsigned char* dynamic_smem() {
  extern __shared__ __align__(128) unsigned char smem_bytes[];
  return smem_bytes;
}

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// D += A B for one m16n8k16 tile (bf16 in, fp32 accumulate), fragments as above.
__device__ __forceinline__ void mma_bf16(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                         std::uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Shared memory below is addressed by 32-bit addresses in the shared window (smem_addr).

// Four 8x8 bf16 matrices from shared memory; `row` is this lane's row address (16-byte aligned).
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(row)
               : "memory");
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(row)
               : "memory");
}

// Asynchronous 16-byte (4-byte) copy global -> shared, zeros instead when !valid (src-size 0: nothing is read, but
// `src` must still be a mapped address). Complete only after cp_async_wait and visible to other threads only after
// a barrier that follows it.
__device__ __forceinline__ void cp_async_16(std::uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0) : "memory");
}
__device__ __forceinline__ void cp_async_4(std::uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 4 : 0) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void block_sync() { __syncthreads(); }

__device__ __forceinline__ float shfl_xor(float v, int lane_mask) { return __shfl_xor_sync(0xffffffffu, v, lane_mask); }

// Two consecutive fp32 from shared memory (8-byte aligned).
__device__ __forceinline__ float2 lds_f32x2(std::uint32_t p) {
  float2 v;
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(v.x), "=f"(v.y) : "r"(p) : "memory");
  return v;
}

// 2^x: the hardware approximation (ex2.approx.ftz, what exp2f becomes under --use_fast_math; 2^-inf = +0). Its error
// is far below the bf16 rounding every probability gets next.
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// Two floats as two bf16 (round to nearest even) in one register, `lo` in the low half.
__device__ __forceinline__ std::uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const std::uint32_t*>(&v);
}

// The two bf16 of a packed pair as floats (exact).
__device__ __forceinline__ float bf16_lo(std::uint32_t pair) { return __uint_as_float(pair << 16); }
__device__ __forceinline__ float bf16_hi(std::uint32_t pair) { return __uint_as_float(pair & 0xffff0000u); }

// Global memory: a 4-byte store of a packed pair (4-byte aligned), an fp32 store, an fp32 load through the
// read-only path (the value must not change during the kernel).
__device__ __forceinline__ void store_bf16x2(__nv_bfloat16* p, std::uint32_t v) {
  *reinterpret_cast<std::uint32_t*>(p) = v;
}
__device__ __forceinline__ void store_f32(float* p, float v) { *p = v; }
__device__ __forceinline__ float load_f32(const float* p) { return __ldg(p); }

}  // namespace zeropp::e2e::cuda::warp
