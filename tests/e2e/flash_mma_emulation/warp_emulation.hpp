#pragma once
// Host emulation of the CUDA subset that e2e/backend/cuda/flash_mma_kernels.cuh is written in, so that the kernels'
// own device code runs on the CPU: include this, then the kernels header. It stands in for
// e2e/backend/cuda/warp_mma.cuh (the same functions in zeropp::e2e::cuda::warp) and for the CUDA built-ins the kernels
// use (threadIdx, blockIdx, gridDim, __global__, __nv_bfloat16, float2).
//
// Model (warp_emulation.cpp):
// - Every thread of a block is a lane with its own stack (a fiber), so a lane's locals are its registers. A warp's
//   32 lanes run one after the other up to their next warp-wide instruction; when all 32 have reached it, it is
//   carried out over all their operands at once, then they continue. Different instructions (or a lane that has
//   returned) at that point are reported as divergence.
// - mma.sync m16n8k16 and ldmatrix (.x1/.x2/.x4, .trans) gather and scatter register elements lane by lane as the
//   PTX ISA documents them (fragment_layout.hpp); the product is exact (double) and rounded to fp32 once.
// - __syncthreads: a warp that reaches it waits until every warp of the block has; a warp that returns while others
//   wait is reported.
// - cp.async: each thread's copies are queued in commit groups and land in shared memory only when that thread's
//   cp.async.wait_group lets them complete (zeros where the source size is 0).
// - Shared memory is checked word by word (4 bytes): a read of a word never written, of a word whose copy is still in
//   flight, or of a word another thread wrote since the last block barrier, and a copy into a word another thread
//   read or wrote since the last barrier, are data races and reported. Global accesses must fall inside buffers
//   the caller registered (writes inside writable ones), and every global write is counted per byte.
// - Blocks are independent: they run one after another on each of a few OS threads.
// Faults are reported by launch() throwing EmulationError with the block, thread and what happened.
#include <math.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/e2e/flash_mma_emulation/fragment_layout.hpp"

// ---- CUDA spellings on the host
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)

struct __nv_bfloat16 {
  std::uint16_t bits;
};
struct float2 {
  float x, y;
};

namespace zeropp::emu {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};
// The calling lane's thread index, its block's index, the grid and block sizes.
Dim3 thread_index();
Dim3 block_index();
Dim3 grid_dim();
Dim3 block_dim();

}  // namespace zeropp::emu

#define threadIdx (::zeropp::emu::thread_index())
#define blockIdx (::zeropp::emu::block_index())
#define gridDim (::zeropp::emu::grid_dim())
#define blockDim (::zeropp::emu::block_dim())

namespace zeropp::e2e::cuda::warp {

unsigned char* dynamic_smem();
// A shared address: the offset from the start of the block's shared memory (on the device, the address in the
// shared window; either way a 32-bit number the kernels add byte offsets to).
std::uint32_t smem_addr(const void* p);
void mma_bf16(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1);
void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t row);
void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t row);
// The narrower forms (not used by the kernels; layout_test.cpp checks them too).
void ldmatrix_x1(std::uint32_t (&r)[1], std::uint32_t row, bool trans = false);
void ldmatrix_x2(std::uint32_t (&r)[2], std::uint32_t row, bool trans = false);
void cp_async_16(std::uint32_t dst, const void* src, bool valid);
void cp_async_4(std::uint32_t dst, const void* src, bool valid);
void cp_async_commit();
void cp_async_wait_groups(int n);
template <int N>
void cp_async_wait() {
  cp_async_wait_groups(N);
}
void block_sync();
float shfl_xor(float v, int lane_mask);
float2 lds_f32x2(std::uint32_t p);
inline float exp2_approx(float x) { return exp2f(x); }
std::uint32_t pack_bf16x2(float lo, float hi);
float bf16_lo(std::uint32_t pair);
float bf16_hi(std::uint32_t pair);
void store_bf16x2(__nv_bfloat16* p, std::uint32_t v);
void store_f32(float* p, float v);
float load_f32(const float* p);

}  // namespace zeropp::e2e::cuda::warp

namespace zeropp::emu {

struct EmulationError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Launch {
  Dim3 grid, block;
  std::size_t smem_bytes = 0;
  int host_threads = 2;        // OS threads the blocks are spread over
  bool reverse_warps = false;  // run the warps of a block last to first between barriers (another interleaving)
};

// Runs `kernel` (a call of a __global__ function) on every thread of every block; throws EmulationError on the first
// fault (the other blocks may or may not have run).
void launch(const Launch& how, const std::function<void()>& kernel);

// Global memory the kernels may touch: every access must lie inside one registered range, writes inside a writable
// one. Each written byte's count is kept (writes_of).
void register_global(const void* p, std::size_t bytes, bool writable);
void clear_globals();
// How many times each byte of [p, p + bytes) was written since it was registered (every byte must be registered).
std::vector<unsigned> writes_of(const void* p, std::size_t bytes);

float bf16_to_float(__nv_bfloat16 v);
__nv_bfloat16 float_to_bf16(float v);  // round to nearest even, as __float2bfloat16_rn

}  // namespace zeropp::emu
