// The CUDA backend's own kernels: everything that is not a GEMM. One file, so the 2-core CI machine compiles
// device code once. Simple, correct kernels first (one warp per row for row-wise operations, grid-stride loops
// for element-wise ones); lanes of a warp touch consecutive elements, so every access is coalesced.
#include "e2e/backend/cuda/kernels.cuh"

#include "e2e/backend/cuda/flash_shape.cuh"
#include "e2e/backend/cuda/warp_reduce.cuh"
#include "e2e/backend/cuda/flash_launch.cuh"
#include "e2e/backend/cuda/flash_mma.cuh"
#include "e2e/backend/cuda/flash_tc.cuh"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "cuda_util/check.hpp"
#include "cuda_util/grid.hpp"

namespace zeropp::e2e::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kThreads = 256;
constexpr float kLayerNormEps = 1e-5f;
constexpr float kGeluScale = 0.7978845608028654f;  // sqrt(2 / pi)

__device__ __forceinline__ float to_f(float x) { return x; }
__device__ __forceinline__ float to_f(bf16 x) { return __bfloat162float(x); }
template <typename T>
__device__ __forceinline__ T from_f(float x);
template <>
__device__ __forceinline__ float from_f<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ bf16 from_f<bf16>(float x) {
  return __float2bfloat16(x);
}

// Reduction over a block of kThreads threads; every thread gets the result. `shared` holds kThreads/32 floats.
template <bool Max>
__device__ float block_reduce(float v, float* shared) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  v = Max ? warp_max(v) : warp_sum(v);
  __syncthreads();  // `shared` may still be read by a previous reduction
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < kThreads / kWarp ? shared[lane] : (Max ? -INFINITY : 0.0f);
  return Max ? warp_max(v) : warp_sum(v);
}

int grid_for(std::int64_t n, int threads = kThreads) { return cuda_util::grid_stride_blocks(n, threads); }
// Row kernels have no grid-stride loop (a warp owns its row): refuse more rows than one launch covers.
int warp_rows_grid(std::int64_t rows) {
  const int blocks = grid_for(rows * kWarp);
  if (std::int64_t{blocks} * (kThreads / kWarp) < rows)
    throw std::length_error("cuda kernels: " + std::to_string(rows) + " rows exceed one launch");
  return blocks;
}

// ---------------------------------------------------------------- embedding

__global__ void embedding_forward_kernel(bf16* out, const std::int32_t* tokens, const bf16* wte, const bf16* wpe, int N,
                                         int T, int C, int row0, int V, int* error) {
  const std::int64_t total = std::int64_t{N} * C;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < total;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const int r = static_cast<int>(i / C), c = static_cast<int>(i % C);
    const int tok = tokens[r];
    if (tok < 0 || tok >= V) {
      *error = 1;
      out[i] = __float2bfloat16(0.0f);
      continue;
    }
    const int pos = (row0 + r) % T;
    const float p = wpe == nullptr ? 0.0f : to_f(wpe[std::int64_t{pos} * C + c]);
    out[i] = __float2bfloat16(to_f(wte[std::int64_t{tok} * C + c]) + p);
  }
}

// Atomics: many rows may share a token (and every T-th row a position); the order of the fp32 adds varies.
__global__ void embedding_backward_kernel(float* dwte, float* dwpe, const bf16* dout, const std::int32_t* tokens, int N,
                                          int T, int C, int row0, int V) {
  const std::int64_t total = std::int64_t{N} * C;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < total;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const int r = static_cast<int>(i / C), c = static_cast<int>(i % C);
    const int tok = tokens[r];
    if (tok < 0 || tok >= V) continue;  // reported by the forward
    const float g = to_f(dout[i]);
    atomicAdd(dwte + std::int64_t{tok} * C + c, g);
    if (dwpe != nullptr) atomicAdd(dwpe + std::int64_t{(row0 + r) % T} * C + c, g);
  }
}

// ---------------------------------------------------------------- layer norm (one warp per row)

__global__ void layernorm_forward_kernel(bf16* out, float* mean, float* rstd, const bf16* inp, const bf16* weight,
                                         const bf16* bias, int N, int C) {
  const std::int64_t row = (blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= N) return;
  const bf16* x = inp + row * C;
  float s = 0.0f;
  for (int c = lane; c < C; c += kWarp) s += to_f(x[c]);
  const float m = warp_sum(s) / static_cast<float>(C);
  float v = 0.0f;
  for (int c = lane; c < C; c += kWarp) {
    const float d = to_f(x[c]) - m;
    v += d * d;
  }
  const float r = rsqrtf(warp_sum(v) / static_cast<float>(C) + kLayerNormEps);
  bf16* o = out + row * C;
  for (int c = lane; c < C; c += kWarp) o[c] = __float2bfloat16((to_f(x[c]) - m) * r * to_f(weight[c]) + to_f(bias[c]));
  if (lane == 0) {
    mean[row] = m;
    rstd[row] = r;
  }
}

__global__ void layernorm_backward_input_kernel(bf16* dinp, const bf16* dout, const bf16* inp, const float* mean,
                                                const float* rstd, const bf16* weight, int N, int C, bool accumulate) {
  const std::int64_t row = (blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= N) return;
  const bf16* x = inp + row * C;
  const bf16* dy = dout + row * C;
  const float m = mean[row], r = rstd[row];
  float a = 0.0f, b = 0.0f;
  for (int c = lane; c < C; c += kWarp) {
    const float xhat = (to_f(x[c]) - m) * r;
    const float dxhat = to_f(dy[c]) * to_f(weight[c]);
    a += dxhat;
    b += dxhat * xhat;
  }
  const float mean_dxhat = warp_sum(a) / static_cast<float>(C);
  const float mean_dxhat_xhat = warp_sum(b) / static_cast<float>(C);
  bf16* dx = dinp + row * C;
  for (int c = lane; c < C; c += kWarp) {
    const float xhat = (to_f(x[c]) - m) * r;
    float g = (to_f(dy[c]) * to_f(weight[c]) - mean_dxhat - xhat * mean_dxhat_xhat) * r;
    if (accumulate) g += to_f(dx[c]);
    dx[c] = __float2bfloat16(g);
  }
}

// The same two kernels with 16-byte accesses: each lane moves 8 bf16 of the row per load or store (the scalar
// kernels above move 2 bytes per lane, 64 bytes per warp instruction, which kept them at 785-878 GB/s on an H100,
// results/measured/h100-80gb-hbm3). For rows of C % 8 == 0 with 16-byte aligned activations; weight and bias are
// often views into the flat parameter buffer at any offset, so they take 16-byte loads only when `wb_vec` says
// they are aligned and 8 element loads otherwise (they are C elements, read from cache by every row).
// Same arithmetic and passes as the scalar kernels; only the order of each lane's fp32 partial sums differs.
constexpr int kVec = 8;  // bf16 per 16 bytes

__device__ __forceinline__ void unpack8(const uint4& u, float* f) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
  for (int k = 0; k < kVec / 2; ++k) {
    const float2 t = __bfloat1622float2(h[k]);
    f[2 * k] = t.x;
    f[2 * k + 1] = t.y;
  }
}
__device__ __forceinline__ uint4 pack8(const float* f) {
  uint4 u;
  __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&u);
#pragma unroll
  for (int k = 0; k < kVec / 2; ++k) h[k] = __floats2bfloat162_rn(f[2 * k], f[2 * k + 1]);  // .x: the lower address
  return u;
}
// Elements [8 v, 8 v + 8) of p: one 16-byte load if `vec`, else eight 2-byte loads.
__device__ __forceinline__ void load8(const bf16* p, int v, bool vec, float* f) {
  if (vec) {
    unpack8(reinterpret_cast<const uint4*>(p)[v], f);
  } else {
#pragma unroll
    for (int k = 0; k < kVec; ++k) f[k] = to_f(p[v * kVec + k]);
  }
}

__global__ void layernorm_forward_vec_kernel(bf16* out, float* mean, float* rstd, const bf16* inp, const bf16* weight,
                                             const bf16* bias, int N, int C, bool wb_vec) {
  const std::int64_t row = (blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= N) return;
  const int V = C / kVec;
  const uint4* x = reinterpret_cast<const uint4*>(inp + row * C);
  float f[kVec];
  float s = 0.0f;
  for (int v = lane; v < V; v += kWarp) {
    unpack8(x[v], f);
#pragma unroll
    for (int k = 0; k < kVec; ++k) s += f[k];
  }
  const float m = warp_sum(s) / static_cast<float>(C);
  float var = 0.0f;
  for (int v = lane; v < V; v += kWarp) {
    unpack8(x[v], f);
#pragma unroll
    for (int k = 0; k < kVec; ++k) var += (f[k] - m) * (f[k] - m);
  }
  const float r = rsqrtf(warp_sum(var) / static_cast<float>(C) + kLayerNormEps);
  uint4* o = reinterpret_cast<uint4*>(out + row * C);
  for (int v = lane; v < V; v += kWarp) {
    float w[kVec], b[kVec];
    unpack8(x[v], f);
    load8(weight, v, wb_vec, w);
    load8(bias, v, wb_vec, b);
#pragma unroll
    for (int k = 0; k < kVec; ++k) f[k] = (f[k] - m) * r * w[k] + b[k];
    o[v] = pack8(f);
  }
  if (lane == 0) {
    mean[row] = m;
    rstd[row] = r;
  }
}

__global__ void layernorm_backward_input_vec_kernel(bf16* dinp, const bf16* dout, const bf16* inp, const float* mean,
                                                    const float* rstd, const bf16* weight, int N, int C,
                                                    bool accumulate, bool w_vec) {
  const std::int64_t row = (blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= N) return;
  const int V = C / kVec;
  const uint4* x = reinterpret_cast<const uint4*>(inp + row * C);
  const uint4* dy = reinterpret_cast<const uint4*>(dout + row * C);
  const float m = mean[row], r = rstd[row];
  float xf[kVec], gf[kVec], w[kVec];
  float a = 0.0f, b = 0.0f;
  for (int v = lane; v < V; v += kWarp) {
    unpack8(x[v], xf);
    unpack8(dy[v], gf);
    load8(weight, v, w_vec, w);
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const float xhat = (xf[k] - m) * r;
      const float dxhat = gf[k] * w[k];
      a += dxhat;
      b += dxhat * xhat;
    }
  }
  const float mean_dxhat = warp_sum(a) / static_cast<float>(C);
  const float mean_dxhat_xhat = warp_sum(b) / static_cast<float>(C);
  uint4* dx = reinterpret_cast<uint4*>(dinp + row * C);
  for (int v = lane; v < V; v += kWarp) {
    float prev[kVec];
    unpack8(x[v], xf);
    unpack8(dy[v], gf);
    load8(weight, v, w_vec, w);
    if (accumulate) unpack8(dx[v], prev);
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const float xhat = (xf[k] - m) * r;
      xf[k] = (gf[k] * w[k] - mean_dxhat - xhat * mean_dxhat_xhat) * r;
      if (accumulate) xf[k] += prev[k];
    }
    dx[v] = pack8(xf);
  }
}

// Column sums: a block of 32 columns x 8 row lanes; gridDim.y row slices add their partial sums atomically.
// Mode: kBias sums dout into dbias; kLayerNorm also dout * xhat into dweight; kRmsNorm only dout * inp * rstd into
// dweight (dbias unused).
constexpr int kColRows = 8;
constexpr int kBias = 0, kLayerNorm = 1, kRmsNorm = 2;

template <int Mode>
__global__ void column_sums_kernel(float* dweight, float* dbias, const bf16* dout, const bf16* inp, const float* mean,
                                   const float* rstd, int N, int C) {
  __shared__ float sw[kColRows][kWarp + 1];
  __shared__ float sb[kColRows][kWarp + 1];
  const int c = blockIdx.x * kWarp + threadIdx.x;
  float w = 0.0f, b = 0.0f;
  if (c < C) {
    for (int n = blockIdx.y * kColRows + threadIdx.y; n < N; n += gridDim.y * kColRows) {
      const std::int64_t i = std::int64_t{n} * C + c;
      const float g = to_f(dout[i]);
      b += g;
      if (Mode == kLayerNorm) w += g * (to_f(inp[i]) - mean[n]) * rstd[n];
      if (Mode == kRmsNorm) w += g * to_f(inp[i]) * rstd[n];
    }
  }
  sw[threadIdx.y][threadIdx.x] = w;
  sb[threadIdx.y][threadIdx.x] = b;
  __syncthreads();
  if (threadIdx.y == 0 && c < C) {
    for (int k = 1; k < kColRows; ++k) {
      w += sw[k][threadIdx.x];
      b += sb[k][threadIdx.x];
    }
    if (Mode != kRmsNorm) atomicAdd(dbias + c, b);
    if (Mode != kBias) atomicAdd(dweight + c, w);
  }
}

dim3 column_grid(int N, int C) {
  const int slices = (N + 255) / 256;
  return dim3(static_cast<unsigned>((C + kWarp - 1) / kWarp), static_cast<unsigned>(slices < 64 ? slices : 64));
}

// The same column sums with 16-byte loads (ColumnSumsKernel::vec16). The scalar kernel above reads one bf16 per
// thread per row (64 bytes per warp instruction, one load in flight per thread). On an H200 (results/measured/h200)
// the trainer's weight-gradient pass of a GPT-3 1.3B layer (layer/trainer/bf16/W, 2048 tokens) took 0.507 ms, its
// four GEMMs 0.326 ms (gemm/cublaslt/bf16/*_W): ~0.18 ms for these sums, which read ~109 MB (dout of the 9h bias
// columns; dout and x of two layer norms), ~0.6 TB/s of the GPU's 4.8 TB/s (datasheet, configs/clusters).
// Here a thread owns 8 adjacent columns (one 16-byte vector of a row), a block kColVecRows row lanes x 32 vectors =
// 256 columns, and each thread walks the rows of its block's row slice kColUnroll at a time, issuing all their loads
// (dout, and inp with its row statistics) before using any. The row lanes' partial sums meet in shared memory in a
// fixed order; then each of the block's 256 threads adds one column's slice total to the fp32 output atomically, as
// the scalar kernel does (the outputs accumulate across micro-batches). Needs C % 8 == 0 and 16-byte aligned dout
// and inp (column_sums_vectorized); the launchers run the scalar kernel otherwise.
constexpr int kColVecRows = 8;                           // row lanes per block: 32 x 8 = 256 threads
constexpr int kColUnroll = 4;                            // rows per thread whose loads are in flight together
constexpr int kColVecCols = kWarp * kVec;                // columns per block
constexpr int kColSliceRows = kColVecRows * kColUnroll;  // a row slice is a multiple of one unrolled pass

// Adds one row's 8 columns: g the dout vector, x the inp vector (unused for kBias), m and r its statistics.
template <int Mode>
__device__ __forceinline__ void column_row(float* w, float* b, const uint4& g, const uint4& x, float m, float r) {
  float gf[kVec], xf[kVec];
  unpack8(g, gf);
  if (Mode != kBias) unpack8(x, xf);
#pragma unroll
  for (int k = 0; k < kVec; ++k) {
    if (Mode != kRmsNorm) b[k] += gf[k];
    if (Mode == kLayerNorm) w[k] += gf[k] * (xf[k] - m) * r;
    if (Mode == kRmsNorm) w[k] += gf[k] * xf[k] * r;
  }
}

template <int Mode>
__global__ void __launch_bounds__(kWarp* kColVecRows)
    column_sums_vec_kernel(float* dweight, float* dbias, const bf16* dout, const bf16* inp, const float* mean,
                           const float* rstd, int N, int C, int slice_rows) {
  __shared__ __align__(16) float sw[kColVecRows][kColVecCols];
  __shared__ __align__(16) float sb[kColVecRows][kColVecCols];
  const int V = C / kVec;                          // vectors per row
  const int v = blockIdx.x * kWarp + threadIdx.x;  // this thread's vector: columns [8 v, 8 v + 8)
  const int r0 = blockIdx.y * slice_rows, r1 = min(N, r0 + slice_rows);
  float w[kVec] = {}, b[kVec] = {};
  if (v < V) {
    const uint4* dy = reinterpret_cast<const uint4*>(dout) + v;
    const uint4* x = Mode == kBias ? dy : reinterpret_cast<const uint4*>(inp) + v;  // kBias never reads x
    int n = r0 + threadIdx.y;
    for (; n + (kColUnroll - 1) * kColVecRows < r1; n += kColUnroll * kColVecRows) {
      uint4 g[kColUnroll], xv[kColUnroll];
      float m[kColUnroll], r[kColUnroll];
#pragma unroll
      for (int u = 0; u < kColUnroll; ++u) {
        const std::int64_t row = n + u * kColVecRows;
        g[u] = dy[row * V];
        xv[u] = Mode == kBias ? g[u] : x[row * V];
        m[u] = Mode == kLayerNorm ? mean[row] : 0.0f;
        r[u] = Mode == kBias ? 0.0f : rstd[row];
      }
#pragma unroll
      for (int u = 0; u < kColUnroll; ++u) column_row<Mode>(w, b, g[u], xv[u], m[u], r[u]);
    }
    for (; n < r1; n += kColVecRows) {  // the slice's last rows, fewer than one unrolled pass
      const uint4 g = dy[std::int64_t{n} * V];
      column_row<Mode>(w, b, g, Mode == kBias ? g : x[std::int64_t{n} * V], Mode == kLayerNorm ? mean[n] : 0.0f,
                       Mode == kBias ? 0.0f : rstd[n]);
    }
  }
  float4* w4 = reinterpret_cast<float4*>(&sw[threadIdx.y][threadIdx.x * kVec]);  // 16-byte stores: 2-way conflicts
  float4* b4 = reinterpret_cast<float4*>(&sb[threadIdx.y][threadIdx.x * kVec]);
  w4[0] = make_float4(w[0], w[1], w[2], w[3]);
  w4[1] = make_float4(w[4], w[5], w[6], w[7]);
  b4[0] = make_float4(b[0], b[1], b[2], b[3]);
  b4[1] = make_float4(b[4], b[5], b[6], b[7]);
  __syncthreads();
  const int t = threadIdx.y * kWarp + threadIdx.x;  // the block's column t
  const int c = blockIdx.x * kColVecCols + t;
  if (c >= C) return;
  float tw = 0.0f, tb = 0.0f;
  for (int k = 0; k < kColVecRows; ++k) {
    tw += sw[k][t];
    tb += sb[k][t];
  }
  if (Mode != kRmsNorm) atomicAdd(dbias + c, tb);
  if (Mode != kBias) atomicAdd(dweight + c, tw);
}

// vec16's grid: x over blocks of 256 columns, y over row slices of a multiple of kColSliceRows rows, as many as
// bring the grid to `resident` blocks (what the device holds at once), so that each thread has rows to stream and a
// column gets few atomic adds. slice_rows: the rows of a slice.
dim3 column_vec_grid(int N, int C, int resident, int& slice_rows) {
  const int col_blocks = (C / kVec + kWarp - 1) / kWarp;
  const int most_slices = (N + kColSliceRows - 1) / kColSliceRows;
  const int slices = std::min(most_slices, std::max(1, resident / col_blocks));
  slice_rows = (N + slices - 1) / slices;
  slice_rows = (slice_rows + kColSliceRows - 1) / kColSliceRows * kColSliceRows;
  return dim3(static_cast<unsigned>(col_blocks), static_cast<unsigned>((N + slice_rows - 1) / slice_rows));
}

// ---------------------------------------------------------------- RMSNorm (one warp per row)

__global__ void rmsnorm_forward_kernel(bf16* out, float* rstd, const bf16* inp, const bf16* weight, int N, int C) {
  const std::int64_t row = (blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= N) return;
  const bf16* x = inp + row * C;
  float ss = 0.0f;
  for (int c = lane; c < C; c += kWarp) ss += to_f(x[c]) * to_f(x[c]);
  const float r = rsqrtf(warp_sum(ss) / static_cast<float>(C) + kLayerNormEps);
  bf16* o = out + row * C;
  for (int c = lane; c < C; c += kWarp) o[c] = __float2bfloat16(to_f(x[c]) * r * to_f(weight[c]));
  if (lane == 0) rstd[row] = r;
}

__global__ void rmsnorm_backward_input_kernel(bf16* dinp, const bf16* dout, const bf16* inp, const float* rstd,
                                              const bf16* weight, int N, int C, bool accumulate) {
  const std::int64_t row = (blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= N) return;
  const bf16* x = inp + row * C;
  const bf16* dy = dout + row * C;
  const float r = rstd[row];
  float a = 0.0f;
  for (int c = lane; c < C; c += kWarp) a += to_f(dy[c]) * to_f(weight[c]) * to_f(x[c]) * r;
  const float mean_g_xhat = warp_sum(a) / static_cast<float>(C);
  bf16* dx = dinp + row * C;
  for (int c = lane; c < C; c += kWarp) {
    float g = (to_f(dy[c]) * to_f(weight[c]) - to_f(x[c]) * r * mean_g_xhat) * r;
    if (accumulate) g += to_f(dx[c]);
    dx[c] = __float2bfloat16(g);
  }
}

// ---------------------------------------------------------------- SwiGLU

__device__ __forceinline__ float logistic(float x) { return 1.0f / (1.0f + expf(-x)); }

__global__ void swiglu_forward_kernel(bf16* out, const bf16* inp, int N, int F) {
  const std::int64_t total = std::int64_t{N} * F;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < total;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t n = i / F, f = i % F;
    const float gate = to_f(inp[n * 2 * F + f]), up = to_f(inp[n * 2 * F + F + f]);
    out[i] = __float2bfloat16(gate * logistic(gate) * up);
  }
}

__global__ void swiglu_backward_kernel(bf16* dinp, const bf16* inp, const bf16* dout, int N, int F) {
  const std::int64_t total = std::int64_t{N} * F;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < total;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t n = i / F, f = i % F;
    const float gate = to_f(inp[n * 2 * F + f]), up = to_f(inp[n * 2 * F + F + f]), g = to_f(dout[i]);
    const float s = logistic(gate);
    dinp[n * 2 * F + f] = __float2bfloat16(g * up * s * (1.0f + gate * (1.0f - s)));
    dinp[n * 2 * F + F + f] = __float2bfloat16(g * gate * s);
  }
}

// ---------------------------------------------------------------- rotary position embedding

// One thread per (row, q-or-k head, pair); the angle in double (positions up to 2^20 times frequencies down to
// theta^-1 keep ~1e-10 absolute accuracy), the rotation in fp32.
__global__ void rope_kernel(bf16* qkv, int N, int T, int pos0, int heads, int W, int hs, int rotary_dims, double theta,
                            float sign) {
  const int half = rotary_dims / 2;
  const std::int64_t total = std::int64_t{N} * heads * half;
  for (std::int64_t idx = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; idx < total;
       idx += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t r = idx / (std::int64_t{heads} * half);
    const int rem = static_cast<int>(idx % (std::int64_t{heads} * half));
    const int h = rem / half, i = rem % half;
    const double angle = static_cast<double>(pos0 + r % T) * pow(theta, -2.0 * i / rotary_dims);
    double sn, cs;
    sincos(angle, &sn, &cs);
    const float c = static_cast<float>(cs), s = sign * static_cast<float>(sn);
    bf16* head = qkv + r * W + std::int64_t{h} * hs;
    const float a = to_f(head[i]), b = to_f(head[i + half]);
    head[i] = __float2bfloat16(a * c - b * s);
    head[i + half] = __float2bfloat16(b * c + a * s);
  }
}

// ---------------------------------------------------------------- flash-style attention
// FlashAttention-2's algorithm (Dao 2023) with one warp per query row (forward, dq) or per key row (dk, dv), and
// kFlashTile rows of the other side staged in shared memory per step. Scores are dot products over the head
// (each lane takes one row of the staged tile), output rows are accumulated with each lane holding the columns
// lane, lane + 32, ... of the head in registers. No tensor cores, no pipelining: these are the kernels for heads the
// tensor-core ones (flash_tc.cu) do not take (not a multiple of 16, or above 128) and for unaligned buffers. On an
// H100 they were 84% of a 4-layer Llama-3 8B step (results/measured/h100-80gb-hbm3), which is why those exist.
// Shared memory per block, kFlashMaxHead = 256: two bf16 tiles 2 x 32 x 258 x 2 B = 33,024 B, plus per-warp fp32
// rows 4 x 256 x 4 B each (one for the forward, two for the backward kernels) and, for dk/dv, 2 x 32 fp32:
// at most 41,472 B, under the 48 KB of static shared memory every architecture gives.
// The bf16 tile rows are padded by 2 elements (258: an odd number of 4-byte words), so lane j reading row j at a
// common column hits bank (j * 129 + c) mod 32: all 32 lanes in different banks.
constexpr int kFlashWarps = 4;
constexpr int kFlashTile = 32;  // rows staged per step: one per lane
constexpr int kFlashStride = kFlashMaxHead + 2;
constexpr int kFlashRegs = kFlashMaxHead / kWarp;  // output columns per lane
static_assert(kFlashTile == kWarp, "each lane owns one staged row");
static_assert(2 * kFlashTile * kFlashStride * 2 + 2 * kFlashWarps * kFlashMaxHead * 4 + 2 * kFlashTile * 4 <= 48 * 1024,
              "flash kernels must fit static shared memory");

// Stages rows r0 .. r0 + kFlashTile - 1 (zeros past `rows`) of a [rows, ld] bf16 matrix, columns col .. col + hs - 1,
// into tile[kFlashTile][kFlashStride]. All threads of the block take part.
__device__ void stage_tile(bf16 (*tile)[kFlashStride], const bf16* src, std::int64_t ld, int col, int r0, int rows,
                           int hs) {
  for (int idx = threadIdx.x; idx < kFlashTile * hs; idx += blockDim.x) {
    const int rr = idx / hs, d = idx % hs, r = r0 + rr;
    tile[rr][d] = r < rows ? src[std::int64_t{r} * ld + col + d] : __float2bfloat16(0.0f);
  }
}

__device__ __forceinline__ float row_dot(const float* a, const bf16* b, int hs) {
  float s = 0.0f;
  for (int d = 0; d < hs; ++d) s += a[d] * to_f(b[d]);
  return s;
}

// grid (ceil(T / kFlashWarps), B * NH); warp w of block x handles query row x * kFlashWarps + w of (b, h).
__global__ void __launch_bounds__(kFlashWarps* kWarp)
    flash_forward_kernel(bf16* out, float* lse, const bf16* qkv, FlashShape sh, float scale) {
  __shared__ bf16 ks[kFlashTile][kFlashStride];
  __shared__ bf16 vs[kFlashTile][kFlashStride];
  __shared__ float qs[kFlashWarps][kFlashMaxHead];
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const int b = blockIdx.y / sh.NH, h = blockIdx.y % sh.NH, kvh = h / (sh.NH / sh.KVH);
  const int T = sh.T, hs = sh.hs, W = sh.W();
  const int t = blockIdx.x * kFlashWarps + warp;
  const bool active = t < T;
  const bf16* base = qkv + std::int64_t{b} * T * W;
  if (active)
    for (int d = lane; d < hs; d += kWarp) qs[warp][d] = to_f(base[std::int64_t{t} * W + sh.q_col(h) + d]);
  float acc[kFlashRegs];
#pragma unroll
  for (int k = 0; k < kFlashRegs; ++k) acc[k] = 0.0f;
  float m = -INFINITY, l = 0.0f;
  const int last = min(T - 1, static_cast<int>(blockIdx.x) * kFlashWarps + kFlashWarps - 1);
  for (int j0 = 0; j0 <= last; j0 += kFlashTile) {
    __syncthreads();  // the previous tile is consumed; qs is written
    stage_tile(ks, base, W, sh.k_col(kvh), j0, T, hs);
    stage_tile(vs, base, W, sh.v_col(kvh), j0, T, hs);
    __syncthreads();
    if (!active) continue;
    const int j = j0 + lane;
    const float s = j <= t ? scale * row_dot(qs[warp], ks[lane], hs) : -INFINITY;
    const float m_new = fmaxf(m, warp_max(s));  // finite: key 0 is in the first tile and 0 <= t
    const float p = j <= t ? expf(s - m_new) : 0.0f;
    const float alpha = expf(m - m_new);  // 0 on the first tile (m = -inf)
    l = l * alpha + warp_sum(p);
#pragma unroll
    for (int k = 0; k < kFlashRegs; ++k) acc[k] *= alpha;
    const int visible = min(kFlashTile, t - j0 + 1);  // the same for the whole warp
    for (int jj = 0; jj < visible; ++jj) {
      const float pj = __shfl_sync(0xffffffffu, p, jj);
#pragma unroll
      for (int k = 0; k < kFlashRegs; ++k) {
        const int d = lane + k * kWarp;
        if (d < hs) acc[k] += pj * to_f(vs[jj][d]);
      }
    }
    m = m_new;
  }
  if (!active) return;
  const float inv = 1.0f / l;
  bf16* o = out + (std::int64_t{b} * T + t) * sh.C() + std::int64_t{h} * hs;
#pragma unroll
  for (int k = 0; k < kFlashRegs; ++k) {
    const int d = lane + k * kWarp;
    if (d < hs) o[d] = __float2bfloat16(acc[k] * inv);
  }
  if (lane == 0) lse[(std::int64_t{b} * sh.NH + h) * T + t] = m + logf(l);
}

// delta[b, h, t] = sum_d dout * out over the head's columns (one warp per row).
__global__ void flash_delta_kernel(float* delta, const bf16* dout, const bf16* out, int B, FlashShape sh) {
  const std::int64_t row = (blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x) / kWarp;  // (b * NH + h) * T + t
  const int lane = threadIdx.x % kWarp;
  if (row >= std::int64_t{B} * sh.NH * sh.T) return;
  const std::int64_t t = row % sh.T, bh = row / sh.T;
  const std::int64_t b = bh / sh.NH, h = bh % sh.NH;
  const std::int64_t off = (b * sh.T + t) * sh.C() + h * sh.hs;
  float s = 0.0f;
  for (int d = lane; d < sh.hs; d += kWarp) s += to_f(dout[off + d]) * to_f(out[off + d]);
  s = warp_sum(s);
  if (lane == 0) delta[row] = s;
}

// dq: grid (ceil(T / kFlashWarps), B * NH), one warp per query row; ds_j = p_j (dp_j - delta), dq = scale sum ds_j k_j.
__global__ void __launch_bounds__(kFlashWarps* kWarp)
    flash_dq_kernel(bf16* dqkv, const float* delta, const bf16* dout, const float* lse, const bf16* qkv, FlashShape sh,
                    float scale) {
  __shared__ bf16 ks[kFlashTile][kFlashStride];
  __shared__ bf16 vs[kFlashTile][kFlashStride];
  __shared__ float qs[kFlashWarps][kFlashMaxHead];
  __shared__ float gs[kFlashWarps][kFlashMaxHead];
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const int b = blockIdx.y / sh.NH, h = blockIdx.y % sh.NH, kvh = h / (sh.NH / sh.KVH);
  const int T = sh.T, hs = sh.hs, W = sh.W(), C = sh.C();
  const int t = blockIdx.x * kFlashWarps + warp;
  const bool active = t < T;
  const bf16* base = qkv + std::int64_t{b} * T * W;
  float row_lse = 0.0f, row_delta = 0.0f;
  if (active) {
    for (int d = lane; d < hs; d += kWarp) {
      qs[warp][d] = to_f(base[std::int64_t{t} * W + sh.q_col(h) + d]);
      gs[warp][d] = to_f(dout[(std::int64_t{b} * T + t) * C + std::int64_t{h} * hs + d]);
    }
    row_lse = lse[(std::int64_t{b} * sh.NH + h) * T + t];
    row_delta = delta[(std::int64_t{b} * sh.NH + h) * T + t];
  }
  float acc[kFlashRegs];
#pragma unroll
  for (int k = 0; k < kFlashRegs; ++k) acc[k] = 0.0f;
  const int last = min(T - 1, static_cast<int>(blockIdx.x) * kFlashWarps + kFlashWarps - 1);
  for (int j0 = 0; j0 <= last; j0 += kFlashTile) {
    __syncthreads();
    stage_tile(ks, base, W, sh.k_col(kvh), j0, T, hs);
    stage_tile(vs, base, W, sh.v_col(kvh), j0, T, hs);
    __syncthreads();
    if (!active) continue;
    const int j = j0 + lane;
    float ds = 0.0f;
    if (j <= t) {
      const float p = expf(scale * row_dot(qs[warp], ks[lane], hs) - row_lse);
      ds = p * (row_dot(gs[warp], vs[lane], hs) - row_delta);
    }
    const int visible = min(kFlashTile, t - j0 + 1);
    for (int jj = 0; jj < visible; ++jj) {
      const float dsj = __shfl_sync(0xffffffffu, ds, jj);
#pragma unroll
      for (int k = 0; k < kFlashRegs; ++k) {
        const int d = lane + k * kWarp;
        if (d < hs) acc[k] += dsj * to_f(ks[jj][d]);
      }
    }
  }
  if (!active) return;
  bf16* dq = dqkv + (std::int64_t{b} * T + t) * W + sh.q_col(h);
#pragma unroll
  for (int k = 0; k < kFlashRegs; ++k) {
    const int d = lane + k * kWarp;
    if (d < hs) dq[d] = __float2bfloat16(scale * acc[k]);
  }
}

// dk, dv: grid (ceil(T / kFlashWarps), B * KVH), one warp per key row j of key/value head kvh, summing over the
// query heads of its group and the query rows t >= j: dv = sum p_t dout_t, dk = scale sum ds_t q_t.
__global__ void __launch_bounds__(kFlashWarps* kWarp)
    flash_dkv_kernel(bf16* dqkv, const float* delta, const bf16* dout, const float* lse, const bf16* qkv, FlashShape sh,
                     float scale) {
  __shared__ bf16 qt[kFlashTile][kFlashStride];
  __shared__ bf16 gt[kFlashTile][kFlashStride];
  __shared__ float lse_t[kFlashTile];
  __shared__ float delta_t[kFlashTile];
  __shared__ float kw[kFlashWarps][kFlashMaxHead];
  __shared__ float vw[kFlashWarps][kFlashMaxHead];
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const int b = blockIdx.y / sh.KVH, kvh = blockIdx.y % sh.KVH, group = sh.NH / sh.KVH;
  const int T = sh.T, hs = sh.hs, W = sh.W(), C = sh.C();
  const int j = blockIdx.x * kFlashWarps + warp;
  const bool active = j < T;
  const bf16* base = qkv + std::int64_t{b} * T * W;
  const bf16* gbase = dout + std::int64_t{b} * T * C;
  if (active)
    for (int d = lane; d < hs; d += kWarp) {
      kw[warp][d] = to_f(base[std::int64_t{j} * W + sh.k_col(kvh) + d]);
      vw[warp][d] = to_f(base[std::int64_t{j} * W + sh.v_col(kvh) + d]);
    }
  float dk[kFlashRegs], dv[kFlashRegs];
#pragma unroll
  for (int k = 0; k < kFlashRegs; ++k) dk[k] = dv[k] = 0.0f;
  const int first = static_cast<int>(blockIdx.x) * kFlashWarps;  // the block's first key row
  for (int g = 0; g < group; ++g) {
    const int h = kvh * group + g;
    const float* lse_h = lse + (std::int64_t{b} * sh.NH + h) * T;
    const float* delta_h = delta + (std::int64_t{b} * sh.NH + h) * T;
    for (int i0 = first / kFlashTile * kFlashTile; i0 < T; i0 += kFlashTile) {
      __syncthreads();  // the previous tile is consumed; kw, vw are written
      stage_tile(qt, base, W, sh.q_col(h), i0, T, hs);
      stage_tile(gt, gbase, C, h * hs, i0, T, hs);
      if (threadIdx.x < kFlashTile) {
        const int t = i0 + threadIdx.x;
        lse_t[threadIdx.x] = t < T ? lse_h[t] : 0.0f;
        delta_t[threadIdx.x] = t < T ? delta_h[t] : 0.0f;
      }
      __syncthreads();
      if (!active) continue;
      const int t = i0 + lane;
      float p = 0.0f, ds = 0.0f;
      if (t < T && t >= j) {
        p = expf(scale * row_dot(kw[warp], qt[lane], hs) - lse_t[lane]);
        ds = p * (row_dot(vw[warp], gt[lane], hs) - delta_t[lane]);
      }
      for (int ii = 0; ii < kFlashTile; ++ii) {
        const float pi = __shfl_sync(0xffffffffu, p, ii), dsi = __shfl_sync(0xffffffffu, ds, ii);
#pragma unroll
        for (int k = 0; k < kFlashRegs; ++k) {
          const int d = lane + k * kWarp;
          if (d < hs) {
            dv[k] += pi * to_f(gt[ii][d]);
            dk[k] += dsi * to_f(qt[ii][d]);
          }
        }
      }
    }
  }
  if (!active) return;
  bf16* row = dqkv + (std::int64_t{b} * T + j) * W;
#pragma unroll
  for (int k = 0; k < kFlashRegs; ++k) {
    const int d = lane + k * kWarp;
    if (d < hs) {
      row[sh.k_col(kvh) + d] = __float2bfloat16(scale * dk[k]);
      row[sh.v_col(kvh) + d] = __float2bfloat16(dv[k]);
    }
  }
}

// ---------------------------------------------------------------- GELU (tanh approximation)

__device__ __forceinline__ float gelu(float x) {
  return 0.5f * x * (1.0f + tanhf(kGeluScale * (x + 0.044715f * x * x * x)));
}
__device__ __forceinline__ float gelu_grad(float x) {
  const float th = tanhf(kGeluScale * (x + 0.044715f * x * x * x));
  return 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * kGeluScale * (1.0f + 3.0f * 0.044715f * x * x);
}

// Element-wise kernels over n elements: with `vec` (every pointer 16-byte aligned) the first n / W * W elements
// move 16 bytes at a time (Op::kWidth = W elements: 8 bf16 through unpack8/pack8, 4 fp32 as a float4), the other
// n % W (or all of them without `vec`) one at a time. The 2-byte versions alone moved 1.3-1.9 TB/s on the H200
// (results/measured/h200, kernel/cuda/bf16/gelu_*, residual_add), where the cost model prices these kernels at the
// HBM's achievable rate. Same formulas per element.
template <typename Op>
__device__ void map_vectors(std::int64_t n, bool vec, const Op& op) {
  const std::int64_t first = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  const std::int64_t nv = vec ? n / Op::kWidth : 0;
  for (std::int64_t v = first; v < nv; v += stride) op.vector(v);
  for (std::int64_t i = nv * Op::kWidth + first; i < n; i += stride) op.scalar(i);
}

struct GeluForward {
  static constexpr int kWidth = kVec;
  bf16* out;
  const bf16* inp;
  __device__ void vector(std::int64_t v) const {
    float f[kVec];
    unpack8(reinterpret_cast<const uint4*>(inp)[v], f);
#pragma unroll
    for (int k = 0; k < kVec; ++k) f[k] = gelu(f[k]);
    reinterpret_cast<uint4*>(out)[v] = pack8(f);
  }
  __device__ void scalar(std::int64_t i) const { out[i] = __float2bfloat16(gelu(to_f(inp[i]))); }
};

// out[i] = f(a[i], b[i]) over bf16 elements, f in fp32: GELU's backward (a the input, b the output gradient) and
// the residual add.
template <typename F>
struct Bf16Binary {
  static constexpr int kWidth = kVec;
  bf16* out;
  const bf16 *a, *b;
  F f;
  __device__ void vector(std::int64_t v) const {
    float x[kVec], y[kVec];
    unpack8(reinterpret_cast<const uint4*>(a)[v], x);
    unpack8(reinterpret_cast<const uint4*>(b)[v], y);
#pragma unroll
    for (int k = 0; k < kVec; ++k) x[k] = f(x[k], y[k]);
    reinterpret_cast<uint4*>(out)[v] = pack8(x);
  }
  __device__ void scalar(std::int64_t i) const { out[i] = __float2bfloat16(f(to_f(a[i]), to_f(b[i]))); }
};
struct GeluGradTimes {
  __device__ float operator()(float x, float dy) const { return gelu_grad(x) * dy; }
};
struct Plus {
  __device__ float operator()(float x, float y) const { return x + y; }
};

template <typename Op>
__global__ void map_kernel(Op op, std::int64_t n, bool vec) {
  map_vectors(n, vec, op);
}

// ---------------------------------------------------------------- causal softmax (one warp per row)

__global__ void causal_softmax_forward_kernel(bf16* att, std::int64_t rows, int T) {
  const std::int64_t row = (blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= rows) return;
  const int t = static_cast<int>(row % T);
  bf16* p = att + row * T;
  float mx = -INFINITY;
  for (int j = lane; j <= t; j += kWarp) mx = fmaxf(mx, to_f(p[j]));
  mx = warp_max(mx);
  float z = 0.0f;
  for (int j = lane; j <= t; j += kWarp) z += __expf(to_f(p[j]) - mx);
  const float inv = 1.0f / warp_sum(z);
  for (int j = lane; j < T; j += kWarp) p[j] = __float2bfloat16(j <= t ? __expf(to_f(p[j]) - mx) * inv : 0.0f);
}

__global__ void causal_softmax_backward_kernel(bf16* dp, const bf16* att, std::int64_t rows, int T, float scale) {
  const std::int64_t row = (blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= rows) return;
  const int t = static_cast<int>(row % T);
  bf16* d = dp + row * T;
  const bf16* p = att + row * T;
  float dot = 0.0f;
  for (int j = lane; j <= t; j += kWarp) dot += to_f(d[j]) * to_f(p[j]);
  dot = warp_sum(dot);
  for (int j = lane; j < T; j += kWarp)
    d[j] = __float2bfloat16(j <= t ? to_f(p[j]) * (to_f(d[j]) - dot) * scale : 0.0f);
}

// The same two kernels with 16-byte accesses (unpack8/pack8 above) for rows of T % 8 == 0 at 16-byte aligned
// addresses: the scalar kernels move 2 bytes per lane, and on the H200 the unfused attention they are part of took
// 148 ms of a 489 ms GPT-3 1.3B step (results/measured/h200, trainer-gpt3-1.3b.json). The reading passes visit
// the causal part only (vectors up to the one holding column t, masked inside it); the last pass writes the whole
// row, zeros above the diagonal, as the scores x V GEMM reads it. Same arithmetic as the scalar kernels; only the
// order of each lane's partial sums differs.
__global__ void causal_softmax_forward_vec_kernel(bf16* att, std::int64_t rows, int T) {
  const std::int64_t row = (blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= rows) return;
  const int t = static_cast<int>(row % T), V = T / kVec, vt = t / kVec;  // vt: the last vector with a visible score
  uint4* p = reinterpret_cast<uint4*>(att + row * T);
  float f[kVec];
  float mx = -INFINITY;
  for (int v = lane; v <= vt; v += kWarp) {
    unpack8(p[v], f);
#pragma unroll
    for (int k = 0; k < kVec; ++k)
      if (v * kVec + k <= t) mx = fmaxf(mx, f[k]);
  }
  mx = warp_max(mx);
  float z = 0.0f;
  for (int v = lane; v <= vt; v += kWarp) {
    unpack8(p[v], f);
#pragma unroll
    for (int k = 0; k < kVec; ++k)
      if (v * kVec + k <= t) z += __expf(f[k] - mx);
  }
  const float inv = 1.0f / warp_sum(z);
  for (int v = lane; v < V; v += kWarp) {
    if (v <= vt) {
      unpack8(p[v], f);
#pragma unroll
      for (int k = 0; k < kVec; ++k) f[k] = v * kVec + k <= t ? __expf(f[k] - mx) * inv : 0.0f;
    } else {
#pragma unroll
      for (int k = 0; k < kVec; ++k) f[k] = 0.0f;
    }
    p[v] = pack8(f);
  }
}

__global__ void causal_softmax_backward_vec_kernel(bf16* dp, const bf16* att, std::int64_t rows, int T, float scale) {
  const std::int64_t row = (blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= rows) return;
  const int t = static_cast<int>(row % T), V = T / kVec, vt = t / kVec;
  uint4* d = reinterpret_cast<uint4*>(dp + row * T);
  const uint4* p = reinterpret_cast<const uint4*>(att + row * T);
  float fd[kVec], fp[kVec];
  float dot = 0.0f;
  for (int v = lane; v <= vt; v += kWarp) {
    unpack8(d[v], fd);
    unpack8(p[v], fp);
#pragma unroll
    for (int k = 0; k < kVec; ++k)
      if (v * kVec + k <= t) dot += fd[k] * fp[k];
  }
  dot = warp_sum(dot);
  for (int v = lane; v < V; v += kWarp) {
    if (v <= vt) {
      unpack8(d[v], fd);
      unpack8(p[v], fp);
#pragma unroll
      for (int k = 0; k < kVec; ++k) fd[k] = v * kVec + k <= t ? fp[k] * (fd[k] - dot) * scale : 0.0f;
    } else {
#pragma unroll
      for (int k = 0; k < kVec; ++k) fd[k] = 0.0f;
    }
    d[v] = pack8(fd);
  }
}

// ---------------------------------------------------------------- cross-entropy (one block per row)

__global__ void crossentropy_forward_kernel(float* losses, bf16* probs, const bf16* logits, const std::int32_t* targets,
                                            int V, int* error) {
  __shared__ float shared[kThreads / kWarp];
  const std::int64_t off = std::int64_t{blockIdx.x} * V;
  const int target = targets[blockIdx.x];
  const bool valid = target >= 0 && target < V;
  if (!valid && threadIdx.x == 0) *error = 1;
  float mx = -INFINITY;
  for (int i = threadIdx.x; i < V; i += blockDim.x) mx = fmaxf(mx, to_f(logits[off + i]));
  mx = block_reduce<true>(mx, shared);
  float z = 0.0f;
  for (int i = threadIdx.x; i < V; i += blockDim.x) z += __expf(to_f(logits[off + i]) - mx);
  z = block_reduce<false>(z, shared);
  // Read the target's logit before any thread overwrites it (probs may alias logits).
  const float target_logit = valid ? to_f(logits[off + target]) : 0.0f;
  __syncthreads();
  const float inv = 1.0f / z;
  for (int i = threadIdx.x; i < V; i += blockDim.x)
    probs[off + i] = __float2bfloat16(__expf(to_f(logits[off + i]) - mx) * inv);
  // -log softmax as logsumexp - logit: no log(0) when the target's probability underflows.
  if (threadIdx.x == 0) losses[blockIdx.x] = valid ? logf(z) + mx - target_logit : NAN;
}

// The same two kernels with 16-byte accesses for V % 8 == 0 at 16-byte aligned addresses, one block per row: the
// 2-byte forward moved 0.79 TB/s on the H200 (results/measured/h200, kernel/cuda/bf16/crossentropy_F), the backward
// (a flat grid-stride loop dividing every index by V) 1.3-1.5 TB/s. Same passes and arithmetic per element.
__global__ void crossentropy_forward_vec_kernel(float* losses, bf16* probs, const bf16* logits,
                                                const std::int32_t* targets, int V, int* error) {
  __shared__ float shared[kThreads / kWarp];
  const std::int64_t off = std::int64_t{blockIdx.x} * V;
  const int target = targets[blockIdx.x];
  const bool valid = target >= 0 && target < V;
  if (!valid && threadIdx.x == 0) *error = 1;
  const uint4* x = reinterpret_cast<const uint4*>(logits + off);
  const int vecs = V / kVec;
  float f[kVec];
  float mx = -INFINITY;
  for (int i = threadIdx.x; i < vecs; i += blockDim.x) {
    unpack8(x[i], f);
#pragma unroll
    for (int k = 0; k < kVec; ++k) mx = fmaxf(mx, f[k]);
  }
  mx = block_reduce<true>(mx, shared);
  float z = 0.0f;
  for (int i = threadIdx.x; i < vecs; i += blockDim.x) {
    unpack8(x[i], f);
#pragma unroll
    for (int k = 0; k < kVec; ++k) z += __expf(f[k] - mx);
  }
  z = block_reduce<false>(z, shared);
  const float target_logit = valid ? to_f(logits[off + target]) : 0.0f;  // before probs (may alias) is written
  __syncthreads();
  const float inv = 1.0f / z;
  uint4* y = reinterpret_cast<uint4*>(probs + off);
  for (int i = threadIdx.x; i < vecs; i += blockDim.x) {
    unpack8(x[i], f);
#pragma unroll
    for (int k = 0; k < kVec; ++k) f[k] = __expf(f[k] - mx) * inv;
    y[i] = pack8(f);
  }
  if (threadIdx.x == 0) losses[blockIdx.x] = valid ? logf(z) + mx - target_logit : NAN;
}

__global__ void crossentropy_backward_vec_kernel(bf16* dlogits, const bf16* probs, const std::int32_t* targets, int V,
                                                 float scale) {
  const std::int64_t off = std::int64_t{blockIdx.x} * V;
  const int target = targets[blockIdx.x];
  const uint4* p = reinterpret_cast<const uint4*>(probs + off);
  uint4* d = reinterpret_cast<uint4*>(dlogits + off);
  float f[kVec];
  for (int i = threadIdx.x; i < V / kVec; i += blockDim.x) {
    unpack8(p[i], f);
#pragma unroll
    for (int k = 0; k < kVec; ++k) f[k] = scale * (f[k] - (i * kVec + k == target ? 1.0f : 0.0f));
    d[i] = pack8(f);
  }
}

__global__ void crossentropy_backward_kernel(bf16* dlogits, const bf16* probs, const std::int32_t* targets, int N,
                                             int V, float scale) {
  const std::int64_t total = std::int64_t{N} * V;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < total;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const int n = static_cast<int>(i / V), v = static_cast<int>(i % V);
    dlogits[i] = __float2bfloat16(scale * (to_f(probs[i]) - (v == targets[n] ? 1.0f : 0.0f)));
  }
}

// ---------------------------------------------------------------- element-wise and reductions

template <typename T>
__global__ void add_kernel(T* out, const T* a, const T* b, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    out[i] = from_f<T>(to_f(a[i]) + to_f(b[i]));
}

template <typename T>
__global__ void scale_kernel(T* x, float s, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    x[i] = from_f<T>(to_f(x[i]) * s);
}

// Each block sums a contiguous range in index order per thread, then the block's threads in a fixed tree:
// the same bits every run.
template <typename T>
__global__ void partial_sums_kernel(const T* x, std::int64_t n, bool square, double* partials) {
  __shared__ double shared[kThreads];
  const std::int64_t per_block = (n + gridDim.x - 1) / gridDim.x;
  const std::int64_t lo = blockIdx.x * per_block;
  const std::int64_t hi = lo + per_block < n ? lo + per_block : n;
  double s = 0.0;
  for (std::int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) {
    const double v = to_f(x[i]);
    s += square ? v * v : v;
  }
  shared[threadIdx.x] = s;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = shared[0];
}

// AdamW over fp32 parameters, gradients and moments (an element-wise Op of map_vectors: 4 floats per 16 bytes).
struct AdamW {
  static constexpr int kWidth = 4;
  float* p;
  const float* g;
  float *m, *v;
  float lr, beta1, beta2, eps, wd, bc1, bc2, grad_scale;
  __device__ void update(float& pi, float gi, float& mi, float& vi) const {
    gi *= grad_scale;
    mi = beta1 * mi + (1.0f - beta1) * gi;
    vi = beta2 * vi + (1.0f - beta2) * gi * gi;
    pi -= lr * ((mi / bc1) / (sqrtf(vi / bc2) + eps) + wd * pi);
  }
  __device__ void vector(std::int64_t k) const {
    float4 pk = reinterpret_cast<float4*>(p)[k], mk = reinterpret_cast<float4*>(m)[k];
    float4 vk = reinterpret_cast<float4*>(v)[k];
    const float4 gk = reinterpret_cast<const float4*>(g)[k];
    update(pk.x, gk.x, mk.x, vk.x);
    update(pk.y, gk.y, mk.y, vk.y);
    update(pk.z, gk.z, mk.z, vk.z);
    update(pk.w, gk.w, mk.w, vk.w);
    reinterpret_cast<float4*>(p)[k] = pk;
    reinterpret_cast<float4*>(m)[k] = mk;
    reinterpret_cast<float4*>(v)[k] = vk;
  }
  __device__ void scalar(std::int64_t i) const { update(p[i], g[i], m[i], v[i]); }
};

}  // namespace

// ---------------------------------------------------------------- launchers

void embedding_forward(bf16* out, const std::int32_t* tokens, const bf16* wte, const bf16* wpe, int N, int T, int C,
                       int row0, int V, int* error, cudaStream_t stream) {
  embedding_forward_kernel<<<grid_for(std::int64_t{N} * C), kThreads, 0, stream>>>(out, tokens, wte, wpe, N, T, C, row0,
                                                                                   V, error);
  CUDA_CHECK_LAUNCH();
}

void embedding_backward(float* dwte, float* dwpe, const bf16* dout, const std::int32_t* tokens, int N, int T, int C,
                        int row0, int V, cudaStream_t stream) {
  embedding_backward_kernel<<<grid_for(std::int64_t{N} * C), kThreads, 0, stream>>>(dwte, dwpe, dout, tokens, N, T, C,
                                                                                    row0, V);
  CUDA_CHECK_LAUNCH();
}

namespace {
bool aligned16(std::initializer_list<const void*> pointers) {
  for (const void* p : pointers)
    if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0) return false;
  return true;
}
}  // namespace

bool layernorm_vectorized(int C, const void* out, const void* inp) { return C % kVec == 0 && aligned16({out, inp}); }

void layernorm_forward(bf16* out, float* mean, float* rstd, const bf16* inp, const bf16* weight, const bf16* bias,
                       int N, int C, cudaStream_t stream) {
  if (layernorm_vectorized(C, out, inp))
    layernorm_forward_vec_kernel<<<warp_rows_grid(N), kThreads, 0, stream>>>(out, mean, rstd, inp, weight, bias, N, C,
                                                                             aligned16({weight, bias}));
  else
    layernorm_forward_kernel<<<warp_rows_grid(N), kThreads, 0, stream>>>(out, mean, rstd, inp, weight, bias, N, C);
  CUDA_CHECK_LAUNCH();
}

void layernorm_backward_input(bf16* dinp, const bf16* dout, const bf16* inp, const float* mean, const float* rstd,
                              const bf16* weight, int N, int C, bool accumulate, cudaStream_t stream) {
  if (layernorm_vectorized(C, dinp, inp) && aligned16({dout}))
    layernorm_backward_input_vec_kernel<<<warp_rows_grid(N), kThreads, 0, stream>>>(
        dinp, dout, inp, mean, rstd, weight, N, C, accumulate, aligned16({weight}));
  else
    layernorm_backward_input_kernel<<<warp_rows_grid(N), kThreads, 0, stream>>>(dinp, dout, inp, mean, rstd, weight, N,
                                                                                C, accumulate);
  CUDA_CHECK_LAUNCH();
}

bool column_sums_vectorized(int C, const void* dout, const void* inp) {
  return C % kVec == 0 && aligned16({dout, inp});
}

namespace {
// The blocks of column_sums_vec_kernel<Mode> the current device holds at once: its SMs times the blocks per SM that
// registers and shared memory allow (ptxas gives the three modes 32 to 52 registers a thread: 8 to 4 blocks on
// sm_90). Asked once per thread and device: the trainer launches these several times per layer and micro-batch.
template <int Mode>
int column_vec_resident() {
  thread_local int seen_device = -1, resident = 1;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  if (device != seen_device) {
    int sms = 0, per_sm = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, column_sums_vec_kernel<Mode>, kWarp * kColVecRows, 0));
    resident = std::max(1, sms * per_sm);
    seen_device = device;
  }
  return resident;
}

// One column-sum launch of `Mode` with the kernel asked for (vec16 where column_sums_vectorized, else scalar).
template <int Mode>
void column_sums(float* dweight, float* dbias, const bf16* dout, const bf16* inp, const float* mean, const float* rstd,
                 int N, int C, cudaStream_t stream, ColumnSumsKernel kernel) {
  if (N == 0 || C == 0) return;
  if (kernel == ColumnSumsKernel::vec16 && column_sums_vectorized(C, dout, inp)) {
    int slice_rows = 0;
    const dim3 grid = column_vec_grid(N, C, column_vec_resident<Mode>(), slice_rows);
    column_sums_vec_kernel<Mode>
        <<<grid, dim3(kWarp, kColVecRows), 0, stream>>>(dweight, dbias, dout, inp, mean, rstd, N, C, slice_rows);
  } else {
    column_sums_kernel<Mode>
        <<<column_grid(N, C), dim3(kWarp, kColRows), 0, stream>>>(dweight, dbias, dout, inp, mean, rstd, N, C);
  }
  CUDA_CHECK_LAUNCH();
}
}  // namespace

void layernorm_backward_weight(float* dweight, float* dbias, const bf16* dout, const bf16* inp, const float* mean,
                               const float* rstd, int N, int C, cudaStream_t stream, ColumnSumsKernel kernel) {
  column_sums<kLayerNorm>(dweight, dbias, dout, inp, mean, rstd, N, C, stream, kernel);
}

void bias_backward(float* dbias, const bf16* dout, int N, int C, cudaStream_t stream, ColumnSumsKernel kernel) {
  column_sums<kBias>(nullptr, dbias, dout, nullptr, nullptr, nullptr, N, C, stream, kernel);
}

void rmsnorm_forward(bf16* out, float* rstd, const bf16* inp, const bf16* weight, int N, int C, cudaStream_t stream) {
  rmsnorm_forward_kernel<<<warp_rows_grid(N), kThreads, 0, stream>>>(out, rstd, inp, weight, N, C);
  CUDA_CHECK_LAUNCH();
}

void rmsnorm_backward_input(bf16* dinp, const bf16* dout, const bf16* inp, const float* rstd, const bf16* weight, int N,
                            int C, bool accumulate, cudaStream_t stream) {
  rmsnorm_backward_input_kernel<<<warp_rows_grid(N), kThreads, 0, stream>>>(dinp, dout, inp, rstd, weight, N, C,
                                                                            accumulate);
  CUDA_CHECK_LAUNCH();
}

void rmsnorm_backward_weight(float* dweight, const bf16* dout, const bf16* inp, const float* rstd, int N, int C,
                             cudaStream_t stream, ColumnSumsKernel kernel) {
  column_sums<kRmsNorm>(dweight, nullptr, dout, inp, nullptr, rstd, N, C, stream, kernel);
}

void swiglu_forward(bf16* out, const bf16* inp, int N, int F, cudaStream_t stream) {
  swiglu_forward_kernel<<<grid_for(std::int64_t{N} * F), kThreads, 0, stream>>>(out, inp, N, F);
  CUDA_CHECK_LAUNCH();
}

void swiglu_backward(bf16* dinp, const bf16* inp, const bf16* dout, int N, int F, cudaStream_t stream) {
  swiglu_backward_kernel<<<grid_for(std::int64_t{N} * F), kThreads, 0, stream>>>(dinp, inp, dout, N, F);
  CUDA_CHECK_LAUNCH();
}

void rope(bf16* qkv, int N, int T, int NH, int KVH, int hs, int rotary_dims, double theta, bool inverse, int pos0,
          cudaStream_t stream) {
  const std::int64_t total = std::int64_t{N} * (NH + KVH) * (rotary_dims / 2);
  if (total == 0) return;
  rope_kernel<<<grid_for(total), kThreads, 0, stream>>>(qkv, N, T, pos0, NH + KVH, (NH + 2 * KVH) * hs, hs, rotary_dims,
                                                        theta, inverse ? -1.0f : 1.0f);
  CUDA_CHECK_LAUNCH();
}

namespace {
// The flash kernels' grid: x over rows (kFlashWarps per block), y over (sequence, head) pairs.
dim3 flash_grid(int T, std::int64_t pairs) { return flash_launch_grid((T + kFlashWarps - 1) / kFlashWarps, pairs); }
void check_flash(int T, int NH, int KVH, int hs) {
  if (T < 1 || NH < 1 || KVH < 1 || NH % KVH != 0 || hs < 1 || hs > kFlashMaxHead)
    throw std::invalid_argument("cuda flash attention: needs T >= 1, KVH dividing NH and 1 <= hs <= " +
                                std::to_string(kFlashMaxHead) + " (hs = " + std::to_string(hs) + ")");
}
}  // namespace

namespace {
int shared_memory_optin() {
  int device = 0, optin = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return optin;
}

// Whether `kernel` can run this call: its head sizes, 16-byte aligned buffers (both tensor-core kernels stage tiles
// with 16-byte copies) and its shared memory per block on the current device.
bool flash_runs(FlashKernel kernel, int hs, std::initializer_list<const void*> pointers) {
  switch (kernel) {
    case FlashKernel::mma:
      return flash_mma_supports(hs) && aligned16(pointers) &&
             flash_mma_shared_bytes(hs) <= static_cast<std::size_t>(shared_memory_optin());
    case FlashKernel::tensor_cores:
      return flash_tc_supports(hs) && aligned16(pointers) &&
             flash_tc_shared_bytes(hs) <= static_cast<std::size_t>(shared_memory_optin());
    case FlashKernel::automatic:
    case FlashKernel::scalar:
      return true;
  }
  return false;
}
}  // namespace

// The one place that chooses among the flash kernels: mma.sync where it runs (heads of 64 and 128), then WMMA (other
// multiples of 16 up to 128), then the scalar kernels.
FlashKernel flash_kernel_for(int hs, std::initializer_list<const void*> pointers) {
  // The mma.sync kernels run only when asked for by name until a GPU has run them (their tests and benchmarks ask):
  // they are checked in a warp emulation, not on a device (docs/cuda.md). The WMMA kernels were measured on an H100
  // and an H200.
  if (flash_runs(FlashKernel::tensor_cores, hs, pointers)) return FlashKernel::tensor_cores;
  return FlashKernel::scalar;
}

namespace {
// The kernel this call runs: `automatic` resolved, a named one checked.
FlashKernel resolve_flash(FlashKernel asked, int hs, std::initializer_list<const void*> pointers) {
  if (asked == FlashKernel::automatic) return flash_kernel_for(hs, pointers);
  if (asked == FlashKernel::mma && !flash_runs(asked, hs, pointers))
    throw std::invalid_argument(
        "cuda flash attention: the mma.sync kernels need a head size of 64 or 128, 16-byte aligned buffers and " +
        (flash_mma_supports(hs) ? std::to_string(flash_mma_shared_bytes(hs)) : std::string("?")) +
        " B of shared memory per block (hs = " + std::to_string(hs) + ")");
  if (asked == FlashKernel::tensor_cores && !flash_runs(asked, hs, pointers))
    throw std::invalid_argument("cuda flash attention: the tensor-core kernels need a head size multiple of 16 up to " +
                                std::to_string(kFlashTcMaxHead) + ", 16-byte aligned buffers and " +
                                std::to_string(flash_tc_shared_bytes(hs)) +
                                " B of shared memory per block (hs = " + std::to_string(hs) + ")");
  return asked;
}
}  // namespace

void flash_attention_forward(bf16* out, float* lse, const bf16* qkv, int B, int T, int NH, int KVH, int hs,
                             cudaStream_t stream, FlashKernel kernel) {
  check_flash(T, NH, KVH, hs);
  if (B == 0) return;
  const FlashKernel run = resolve_flash(kernel, hs, {out, qkv});
  if (run == FlashKernel::mma) {
    flash_mma_forward(out, lse, qkv, B, T, NH, KVH, hs, stream);
    return;
  }
  if (run == FlashKernel::tensor_cores) {
    flash_tc_forward(out, lse, qkv, B, T, NH, KVH, hs, stream);
    return;
  }
  const FlashShape sh{T, NH, KVH, hs};
  flash_forward_kernel<<<flash_grid(T, std::int64_t{B} * NH), kFlashWarps * kWarp, 0, stream>>>(
      out, lse, qkv, sh, 1.0f / sqrtf(static_cast<float>(hs)));
  CUDA_CHECK_LAUNCH();
}

void flash_attention_backward(bf16* dqkv, float* delta, const bf16* dout, const bf16* out, const float* lse,
                              const bf16* qkv, int B, int T, int NH, int KVH, int hs, cudaStream_t stream,
                              FlashKernel kernel) {
  check_flash(T, NH, KVH, hs);
  if (B == 0) return;
  const FlashKernel run = resolve_flash(kernel, hs, {dqkv, dout, qkv});
  const FlashShape sh{T, NH, KVH, hs};
  const float scale = 1.0f / sqrtf(static_cast<float>(hs));
  flash_delta_kernel<<<warp_rows_grid(std::int64_t{B} * NH * T), kThreads, 0, stream>>>(delta, dout, out, B, sh);
  CUDA_CHECK_LAUNCH();
  if (run == FlashKernel::mma) {
    flash_mma_backward(dqkv, delta, dout, lse, qkv, B, T, NH, KVH, hs, stream);
    return;
  }
  if (run == FlashKernel::tensor_cores) {
    flash_tc_backward(dqkv, delta, dout, lse, qkv, B, T, NH, KVH, hs, stream);
    return;
  }
  flash_dq_kernel<<<flash_grid(T, std::int64_t{B} * NH), kFlashWarps * kWarp, 0, stream>>>(dqkv, delta, dout, lse, qkv,
                                                                                           sh, scale);
  CUDA_CHECK_LAUNCH();
  flash_dkv_kernel<<<flash_grid(T, std::int64_t{B} * KVH), kFlashWarps * kWarp, 0, stream>>>(dqkv, delta, dout, lse,
                                                                                             qkv, sh, scale);
  CUDA_CHECK_LAUNCH();
}

namespace {
// One launch of an element-wise Op over n elements: 16-byte vectors where `pointers` are all aligned.
template <typename Op>
void launch_map(Op op, std::int64_t n, std::initializer_list<const void*> pointers, cudaStream_t stream) {
  const bool vec = aligned16(pointers);
  map_kernel<<<grid_for(vec ? n / Op::kWidth + n % Op::kWidth : n), kThreads, 0, stream>>>(op, n, vec);
  CUDA_CHECK_LAUNCH();
}
}  // namespace

void gelu_forward(bf16* out, const bf16* inp, std::int64_t n, cudaStream_t stream) {
  launch_map(GeluForward{out, inp}, n, {out, inp}, stream);
}

void gelu_backward(bf16* dinp, const bf16* inp, const bf16* dout, std::int64_t n, cudaStream_t stream) {
  launch_map(Bf16Binary<GeluGradTimes>{dinp, inp, dout, {}}, n, {dinp, inp, dout}, stream);
}

void causal_softmax_forward(bf16* att, std::int64_t rows, int T, cudaStream_t stream) {
  if (T % kVec == 0 && aligned16({att}))
    causal_softmax_forward_vec_kernel<<<warp_rows_grid(rows), kThreads, 0, stream>>>(att, rows, T);
  else
    causal_softmax_forward_kernel<<<warp_rows_grid(rows), kThreads, 0, stream>>>(att, rows, T);
  CUDA_CHECK_LAUNCH();
}

void causal_softmax_backward(bf16* dp, const bf16* att, std::int64_t rows, int T, float scale, cudaStream_t stream) {
  if (T % kVec == 0 && aligned16({dp, att}))
    causal_softmax_backward_vec_kernel<<<warp_rows_grid(rows), kThreads, 0, stream>>>(dp, att, rows, T, scale);
  else
    causal_softmax_backward_kernel<<<warp_rows_grid(rows), kThreads, 0, stream>>>(dp, att, rows, T, scale);
  CUDA_CHECK_LAUNCH();
}

void crossentropy_forward(float* losses, bf16* probs, const bf16* logits, const std::int32_t* targets, int N, int V,
                          int* error, cudaStream_t stream) {
  if (N == 0) return;
  if (V % kVec == 0 && aligned16({probs, logits}))
    crossentropy_forward_vec_kernel<<<N, kThreads, 0, stream>>>(losses, probs, logits, targets, V, error);
  else
    crossentropy_forward_kernel<<<N, kThreads, 0, stream>>>(losses, probs, logits, targets, V, error);
  CUDA_CHECK_LAUNCH();
}

void crossentropy_backward(bf16* dlogits, const bf16* probs, const std::int32_t* targets, int N, int V, float scale,
                           cudaStream_t stream) {
  if (N == 0) return;
  if (V % kVec == 0 && aligned16({dlogits, probs}))
    crossentropy_backward_vec_kernel<<<N, kThreads, 0, stream>>>(dlogits, probs, targets, V, scale);
  else
    crossentropy_backward_kernel<<<grid_for(std::int64_t{N} * V), kThreads, 0, stream>>>(dlogits, probs, targets, N,
                                                                                         V, scale);
  CUDA_CHECK_LAUNCH();
}

template <typename T>
void add(T* out, const T* a, const T* b, std::int64_t n, cudaStream_t stream) {
  if constexpr (std::is_same_v<T, bf16>) {
    launch_map(Bf16Binary<Plus>{out, a, b, {}}, n, {out, a, b}, stream);
  } else {
    add_kernel<T><<<grid_for(n), kThreads, 0, stream>>>(out, a, b, n);
    CUDA_CHECK_LAUNCH();
  }
}

template <typename T>
void accumulate(T* y, const T* x, std::int64_t n, cudaStream_t stream) {
  add<T>(y, y, x, n, stream);
}

template <typename T>
void scale(T* x, float s, std::int64_t n, cudaStream_t stream) {
  scale_kernel<T><<<grid_for(n), kThreads, 0, stream>>>(x, s, n);
  CUDA_CHECK_LAUNCH();
}

template <typename T>
void partial_sums(const T* x, std::int64_t n, bool square, double* partials, cudaStream_t stream) {
  partial_sums_kernel<T><<<kReduceBlocks, kThreads, 0, stream>>>(x, n, square, partials);
  CUDA_CHECK_LAUNCH();
}

template void add<float>(float*, const float*, const float*, std::int64_t, cudaStream_t);
template void add<bf16>(bf16*, const bf16*, const bf16*, std::int64_t, cudaStream_t);
template void accumulate<float>(float*, const float*, std::int64_t, cudaStream_t);
template void accumulate<bf16>(bf16*, const bf16*, std::int64_t, cudaStream_t);
template void scale<float>(float*, float, std::int64_t, cudaStream_t);
template void scale<bf16>(bf16*, float, std::int64_t, cudaStream_t);
template void partial_sums<float>(const float*, std::int64_t, bool, double*, cudaStream_t);
template void partial_sums<bf16>(const bf16*, std::int64_t, bool, double*, cudaStream_t);

void adamw(float* params, const float* grads, float* m, float* v, std::int64_t n, float lr, float beta1, float beta2,
           float eps, float weight_decay, float bias_correction1, float bias_correction2, float grad_scale,
           cudaStream_t stream) {
  launch_map(AdamW{params, grads, m, v, lr, beta1, beta2, eps, weight_decay, bias_correction1, bias_correction2,
                   grad_scale},
             n, {params, grads, m, v}, stream);
}

}  // namespace zeropp::e2e::cuda
