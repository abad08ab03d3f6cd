// FlashAttention-2 (Dao 2023, arXiv 2307.08691, Algorithms 1 and 2) on tensor cores through nvcuda::wmma: bf16
// 16x16x16 fragments with fp32 accumulators. Causal, grouped-query heads, the trainer's packed qkv layout.
//
// Tiles: a block of kWarps = 4 warps owns kTile = 64 rows (query rows in the forward and dq kernels, key rows in
// the dk/dv kernel) and walks over the other side in tiles of kTile rows staged in shared memory. Warp w owns rows
// 16 w .. 16 w + 15 of the block's tile from start to end: it computes their scores, their softmax and their output
// rows, so within a step only __syncwarp is needed; __syncthreads guards the staged tiles all warps read.
// WMMA does not say which fragment element holds which row, so everything row-wise goes through shared memory:
// scores (S, dP) are stored as fp32 and turned into bf16 probabilities (P, dS) there. The forward's fp32 output
// accumulator O lives in shared memory, loaded into a fragment, updated and stored back per step (the documented
// load/store round trip), which is where the online softmax rescales its rows. The backward's sums (dQ, dK, dV)
// need no rescaling, so they stay in fragments (registers) and pass through shared memory once, at the end.
// Causal masking: key tiles wholly above the diagonal are never visited (the loops stop at the diagonal tile);
// inside the diagonal tile, and for rows/columns past T (staged as zeros), probabilities are set to exactly 0.
// Backward: two kernels without atomics (deterministic, like the scalar kernels): dq per (sequence, query head,
// query tile), dk and dv per (sequence, key/value head, key tile) summed over the query heads of the group.
// Correctness first: no pipelining (tiles are staged synchronously), no reliance on the fragments' element layout.
#include "e2e/backend/cuda/flash_tc.cuh"

#include <mma.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "cuda_util/check.hpp"
#include "e2e/backend/cuda/flash_launch.cuh"
#include "e2e/backend/cuda/flash_shape.cuh"
#include "e2e/backend/cuda/warp_reduce.cuh"

namespace zeropp::e2e::cuda {
namespace {

namespace wmma = nvcuda::wmma;
using bf16 = __nv_bfloat16;

constexpr int kWarp = 32;
constexpr int kWarps = 4;
constexpr int kThreads = kWarps * kWarp;
constexpr int kFrag = 16;                 // WMMA m = n = k
constexpr int kTile = kWarps * kFrag;     // 64 rows per block and per staged tile
constexpr int kLdS = kTile + 4;           // fp32 score rows: WMMA wants ldm % 4 == 0 for float
constexpr int kLdP = kTile + 8;           // bf16 probability rows: ldm % 8 == 0 for 16-bit types
constexpr int kPadBf16 = 8, kPadF32 = 4;  // the same rules for the head-wide tiles
// The paddings also shift consecutive rows across shared-memory banks. Every array below is a multiple of 128 bytes
// (tile: 64 (hs + 8) 2 B with hs % 16 == 0; scores 64 x 68 x 4; probabilities 64 x 72 x 2; accumulators
// 64 (hs + 4) 4 B; row vectors 64 x 4), so each starts 128-byte aligned after the first, and every fragment pointer
// (rows multiple of 16, columns multiple of 16) is 32-byte aligned as load/store_matrix_sync require.

using FragA = wmma::fragment<wmma::matrix_a, kFrag, kFrag, kFrag, bf16, wmma::row_major>;
using FragBRow = wmma::fragment<wmma::matrix_b, kFrag, kFrag, kFrag, bf16, wmma::row_major>;
using FragBCol = wmma::fragment<wmma::matrix_b, kFrag, kFrag, kFrag, bf16, wmma::col_major>;
using FragC = wmma::fragment<wmma::accumulator, kFrag, kFrag, kFrag, float>;

using Shape = FlashShape;

// Shared-memory sizes (bytes) for head size hs; the kernels carve their arrays in this order.
struct Smem {
  int hs;
  __host__ __device__ int ldt() const { return hs + kPadBf16; }  // bf16 [kTile][ldt] staged rows
  __host__ __device__ int ldo() const { return hs + kPadF32; }   // fp32 [kTile][ldo] accumulators
  __host__ __device__ std::size_t tile() const { return std::size_t{kTile} * ldt() * sizeof(bf16); }
  __host__ __device__ std::size_t acc() const { return std::size_t{kTile} * ldo() * sizeof(float); }
  static constexpr std::size_t scores = std::size_t{kTile} * kLdS * sizeof(float);
  static constexpr std::size_t probs = std::size_t{kTile} * kLdP * sizeof(bf16);
  static constexpr std::size_t rowvec = std::size_t{kTile} * sizeof(float);
  __host__ __device__ std::size_t forward() const { return 3 * tile() + scores + probs + acc(); }
  // The backward kernels keep their sums in registers. dq's two score arrays double as the place its final sums
  // pass through on their way out (16 rows x hs per warp), so that region is the larger of the two uses; dk/dv
  // has one score array and writes out 16 columns at a time.
  __host__ __device__ std::size_t scores_or_acc() const { return 2 * scores > acc() ? 2 * scores : acc(); }
  __host__ __device__ std::size_t dq() const { return 4 * tile() + scores_or_acc() + probs + 2 * rowvec; }
  __host__ __device__ std::size_t dkv() const { return 4 * tile() + scores + 2 * probs + 2 * rowvec; }
};

// Hands out consecutive pieces of the dynamic shared memory.
struct Carve {
  unsigned char* p;
  template <typename T>
  __device__ T* take(std::size_t bytes) {
    T* r = reinterpret_cast<T*>(p);
    p += bytes;
    return r;
  }
};

// Stages rows r0 .. r0 + kTile - 1 of a bf16 matrix with row stride ld (elements), columns col .. col + hs - 1, into
// dst[kTile][hs + kPadBf16]; rows at or past `rows` become zeros. 16-byte copies: hs % 16 == 0, ld and col are
// multiples of hs (so of 8 elements) and the launcher checked that the base pointer is 16-byte aligned.
// Each thread issues all its loads before its first store: the compiler may not move a global load above an
// earlier shared-memory store (it cannot prove they do not alias), so a load-store loop pays one memory latency per
// 16 bytes; on the H100 that kept the first version of these kernels at 21-28 TFLOP/s (results/measured/
// h100-80gb-hbm3, attention/trainer/bf16/flash/*).
constexpr int kStageVecs = kTile * (kFlashTcMaxHead / 8) / kThreads;  // 16-byte pieces per thread at hs 128: 8
static_assert(kStageVecs * kThreads == kTile * (kFlashTcMaxHead / 8), "the pieces of a tile cover it exactly");

// One tile's part of a staging: where it comes from and where it goes.
struct StageTile {
  bf16* dst;
  const bf16* src;
  std::int64_t ld;
  int col;
};

// Stages Tiles tiles (rows r0 .. r0 + kTile - 1 of each) with all of this thread's loads of all of them issued
// before its first store.
template <int Tiles>
__device__ void stage_tiles(const StageTile (&tiles)[Tiles], int r0, int rows, int hs) {
  const int vecs = hs / 8, n = kTile * vecs;
  const int ldt = hs + kPadBf16;
  uint4 v[Tiles][kStageVecs];
#pragma unroll
  for (int k = 0; k < Tiles; ++k)
#pragma unroll
    for (int i = 0; i < kStageVecs; ++i) {
      const int idx = static_cast<int>(threadIdx.x) + i * kThreads;
      const int r = r0 + idx / vecs;
      v[k][i] = make_uint4(0u, 0u, 0u, 0u);
      if (idx < n && r < rows)
        v[k][i] = *reinterpret_cast<const uint4*>(tiles[k].src + std::int64_t{r} * tiles[k].ld + tiles[k].col +
                                                  (idx % vecs) * 8);
    }
#pragma unroll
  for (int k = 0; k < Tiles; ++k)
#pragma unroll
    for (int i = 0; i < kStageVecs; ++i) {
      const int idx = static_cast<int>(threadIdx.x) + i * kThreads;
      if (idx < n) *reinterpret_cast<uint4*>(tiles[k].dst + (idx / vecs) * ldt + (idx % vecs) * 8) = v[k][i];
    }
}

__device__ void stage(bf16* dst, const bf16* src, std::int64_t ld, int col, int r0, int rows, int hs) {
  stage_tiles<1>({{dst, src, ld, col}}, r0, rows, hs);
}
// Two tiles of the same rows at once (16 loads in flight per thread): K and V, or Q and dO.
__device__ void stage2(const StageTile& a, const StageTile& b, int r0, int rows, int hs) {
  stage_tiles<2>({a, b}, r0, rows, hs);
}

// rows r0 .. r0 + kTile - 1 of an fp32 vector (zeros past `rows`) into dst[kTile].
__device__ void stage_vec(float* dst, const float* src, int r0, int rows) {
  for (int i = threadIdx.x; i < kTile; i += blockDim.x) dst[i] = r0 + i < rows ? src[r0 + i] : 0.0f;
}

__device__ void zero(float* dst, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) dst[i] = 0.0f;
}

// out[16][kTile] (fp32, row stride kLdS) = A[16][hs] B[kTile][hs]^T for the warp's 16 rows of A (row stride lda)
// and all kTile rows of B (row stride ldb): B^T read as a column-major matrix_b.
__device__ void scores_abt(float* out, const bf16* a, int lda, const bf16* b, int ldb, int hs) {
  FragC acc[kTile / kFrag];
#pragma unroll
  for (int n = 0; n < kTile / kFrag; ++n) wmma::fill_fragment(acc[n], 0.0f);
  for (int kk = 0; kk < hs; kk += kFrag) {
    FragA fa;
    wmma::load_matrix_sync(fa, a + kk, lda);
#pragma unroll
    for (int n = 0; n < kTile / kFrag; ++n) {
      FragBCol fb;  // element (k, n') at b[(n * 16 + n') ldb + kk + k] = B[n * 16 + n'][kk + k]
      wmma::load_matrix_sync(fb, b + n * kFrag * ldb + kk, ldb);
      wmma::mma_sync(acc[n], fa, fb, acc[n]);
    }
  }
#pragma unroll
  for (int n = 0; n < kTile / kFrag; ++n) wmma::store_matrix_sync(out + n * kFrag, acc[n], kLdS, wmma::mem_row_major);
}

// acc[16][hs] (fp32 in shared memory, row stride ldo) += P[16][kTile] (bf16, row stride kLdP) X[kTile][hs] (bf16,
// row stride ldx), for the warp's 16 rows.
__device__ void accumulate_px(float* acc, int ldo, const bf16* p, const bf16* x, int ldx, int hs) {
  FragA fa[kTile / kFrag];  // the warp's P rows, loaded once for every 16 output columns
#pragma unroll
  for (int kk = 0; kk < kTile / kFrag; ++kk) wmma::load_matrix_sync(fa[kk], p + kk * kFrag, kLdP);
  for (int n = 0; n < hs; n += kFrag) {
    FragC c;
    wmma::load_matrix_sync(c, acc + n, ldo, wmma::mem_row_major);
#pragma unroll
    for (int kk = 0; kk < kTile / kFrag; ++kk) {
      FragBRow fb;
      wmma::load_matrix_sync(fb, x + kk * kFrag * ldx + n, ldx);
      wmma::mma_sync(c, fa[kk], fb, c);
    }
    wmma::store_matrix_sync(acc + n, c, ldo, wmma::mem_row_major);
  }
}

// The backward's sums need no rescaling, so they stay in fragments for the whole kernel: acc[n] holds output columns
// 16 n .. 16 n + 15 of the warp's 16 rows, n < hs / 16 (the loops run to the largest head and skip the rest, so
// every index is a constant after unrolling and the array stays in registers).
constexpr int kMaxFrags = kFlashTcMaxHead / kFrag;
using AccRegs = FragC[kMaxFrags];

__device__ void zero_regs(AccRegs& acc) {
#pragma unroll
  for (int n = 0; n < kMaxFrags; ++n) wmma::fill_fragment(acc[n], 0.0f);
}

// acc += P[16][kTile] (bf16, row stride kLdP) X[kTile][hs] (bf16, row stride ldx).
__device__ void accumulate_px_regs(AccRegs& acc, const bf16* p, const bf16* x, int ldx, int hs) {
  FragA fa[kTile / kFrag];
#pragma unroll
  for (int kk = 0; kk < kTile / kFrag; ++kk) wmma::load_matrix_sync(fa[kk], p + kk * kFrag, kLdP);
#pragma unroll
  for (int n = 0; n < kMaxFrags; ++n) {
    if (n * kFrag < hs) {
#pragma unroll
      for (int kk = 0; kk < kTile / kFrag; ++kk) {
        FragBRow fb;
        wmma::load_matrix_sync(fb, x + kk * kFrag * ldx + n * kFrag, ldx);
        wmma::mma_sync(acc[n], fa[kk], fb, acc[n]);
      }
    }
  }
}

// The warp's 16 x hs sums into out (fp32, row stride ldo).
__device__ void store_regs(float* out, int ldo, const AccRegs& acc, int hs) {
#pragma unroll
  for (int n = 0; n < kMaxFrags; ++n)
    if (n * kFrag < hs) wmma::store_matrix_sync(out + n * kFrag, acc[n], ldo, wmma::mem_row_major);
}

// grid (ceil(T / kTile), B * NH): query rows q0 .. q0 + 63 of head h of sequence b. The heaviest blocks (last
// query tiles, the most key tiles) get the lowest block indices, so they start first.
__global__ void __launch_bounds__(kThreads)
    flash_tc_forward_kernel(bf16* out, float* lse, const bf16* qkv, Shape sh, float scale) {
  extern __shared__ __align__(128) unsigned char smem[];
  const Smem L{sh.hs};
  Carve cv{smem};
  bf16* qs = cv.take<bf16>(L.tile());
  bf16* ks = cv.take<bf16>(L.tile());
  bf16* vs = cv.take<bf16>(L.tile());
  float* ss = cv.take<float>(Smem::scores);
  bf16* ps = cv.take<bf16>(Smem::probs);
  float* os = cv.take<float>(L.acc());
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const int T = sh.T, hs = sh.hs, W = sh.W(), ldt = L.ldt(), ldo = L.ldo();
  const int q0 = (gridDim.x - 1 - blockIdx.x) * kTile;
  const int b = blockIdx.y / sh.NH, h = blockIdx.y % sh.NH, kvh = h / (sh.NH / sh.KVH);
  const bf16* base = qkv + std::int64_t{b} * T * W;
  stage(qs, base, W, sh.q_col(h), q0, T, hs);
  zero(os, kTile * ldo);
  // Running max and sum of the warp's 16 rows; every lane holds the same values (they come from warp reductions).
  float m_r[kFrag], l_r[kFrag];
#pragma unroll
  for (int r = 0; r < kFrag; ++r) m_r[r] = -INFINITY, l_r[r] = 0.0f;
  const int last = min(T - 1, q0 + kTile - 1);  // the last key any row of the block sees
  for (int k0 = 0; k0 <= last; k0 += kTile) {
    __syncthreads();  // the previous K, V tiles are consumed (the first time: qs, os are written)
    stage2({ks, base, W, sh.k_col(kvh)}, {vs, base, W, sh.v_col(kvh)}, k0, T, hs);
    __syncthreads();
    float* s_w = ss + warp * kFrag * kLdS;
    bf16* p_w = ps + warp * kFrag * kLdP;
    float* o_w = os + warp * kFrag * ldo;
    scores_abt(s_w, qs + warp * kFrag * ldt, ldt, ks, ldt, hs);  // S = Q K^T (unscaled)
    __syncwarp();
#pragma unroll
    for (int r = 0; r < kFrag; ++r) {
      const int t = q0 + warp * kFrag + r;  // rows past T are computed (key 0 is visible to them) but never stored
      float s[2];
#pragma unroll
      for (int c2 = 0; c2 < 2; ++c2) {
        const int c = lane + c2 * kWarp, j = k0 + c;
        s[c2] = j <= t && j < T ? scale * s_w[r * kLdS + c] : -INFINITY;
      }
      const float m_new = fmaxf(m_r[r], warp_max(fmaxf(s[0], s[1])));
      // Every row sees key k0 of each tile it visits (k0 <= q0 <= t), so m_new is finite; the guard keeps a fully
      // masked row at p = 0 instead of NaN should that ever change.
      const float m_use = m_new == -INFINITY ? 0.0f : m_new;
      const float alpha = expf(m_r[r] - m_use);  // 0 on the first tile (m = -inf)
      float psum = 0.0f;
#pragma unroll
      for (int c2 = 0; c2 < 2; ++c2) {
        const float p = expf(s[c2] - m_use);  // exactly 0 where masked
        psum += p;
        p_w[r * kLdP + lane + c2 * kWarp] = __float2bfloat16(p);
      }
      l_r[r] = l_r[r] * alpha + warp_sum(psum);
      m_r[r] = m_new;
      for (int d = lane; d < hs; d += kWarp) o_w[r * ldo + d] *= alpha;
    }
    __syncwarp();
    accumulate_px(o_w, ldo, p_w, vs, ldt, hs);  // O += P V
  }
  __syncwarp();
  const float* o_w = os + warp * kFrag * ldo;
#pragma unroll
  for (int r = 0; r < kFrag; ++r) {
    const int t = q0 + warp * kFrag + r;
    if (t >= T) continue;
    const float inv = 1.0f / l_r[r];
    bf16* o = out + (std::int64_t{b} * T + t) * sh.C() + std::int64_t{h} * hs;
    for (int d = lane; d < hs; d += kWarp) o[d] = __float2bfloat16(o_w[r * ldo + d] * inv);
    if (lane == 0) lse[(std::int64_t{b} * sh.NH + h) * T + t] = m_r[r] + logf(l_r[r]);
  }
}

// dq: grid (ceil(T / kTile), B * NH), query rows q0 .. q0 + 63 of head h. For each visible key tile:
// S = Q K^T, dP = dO V^T, P = exp(scale S - lse), dS = P (dP - delta), dQ += dS K; finally dq = scale dQ.
__global__ void __launch_bounds__(kThreads)
    flash_tc_dq_kernel(bf16* dqkv, const float* delta, const bf16* dout, const float* lse, const bf16* qkv, Shape sh,
                       float scale) {
  extern __shared__ __align__(128) unsigned char smem[];
  const Smem L{sh.hs};
  Carve cv{smem};
  bf16* qs = cv.take<bf16>(L.tile());
  bf16* gs = cv.take<bf16>(L.tile());  // dO
  bf16* ks = cv.take<bf16>(L.tile());
  bf16* vs = cv.take<bf16>(L.tile());
  float* scratch = cv.take<float>(L.scores_or_acc());
  float* ss = scratch;                  // S  [kTile][kLdS]
  float* dps = scratch + kTile * kLdS;  // dP [kTile][kLdS]
  bf16* dss = cv.take<bf16>(Smem::probs);
  float* lse_s = cv.take<float>(Smem::rowvec);
  float* delta_s = cv.take<float>(Smem::rowvec);
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const int T = sh.T, hs = sh.hs, W = sh.W(), C = sh.C(), ldt = L.ldt(), ldo = L.ldo();
  const int q0 = (gridDim.x - 1 - blockIdx.x) * kTile;
  const int b = blockIdx.y / sh.NH, h = blockIdx.y % sh.NH, kvh = h / (sh.NH / sh.KVH);
  const bf16* base = qkv + std::int64_t{b} * T * W;
  const std::int64_t rows_bh = (std::int64_t{b} * sh.NH + h) * T;  // lse, delta of (b, h)
  stage2({qs, base, W, sh.q_col(h)}, {gs, dout + std::int64_t{b} * T * C, C, h * hs}, q0, T, hs);
  stage_vec(lse_s, lse + rows_bh, q0, T);
  stage_vec(delta_s, delta + rows_bh, q0, T);
  AccRegs dq;
  zero_regs(dq);
  float* s_w = ss + warp * kFrag * kLdS;
  float* dp_w = dps + warp * kFrag * kLdS;
  bf16* ds_w = dss + warp * kFrag * kLdP;
  const int last = min(T - 1, q0 + kTile - 1);
  for (int k0 = 0; k0 <= last; k0 += kTile) {
    __syncthreads();
    stage2({ks, base, W, sh.k_col(kvh)}, {vs, base, W, sh.v_col(kvh)}, k0, T, hs);
    __syncthreads();
    scores_abt(s_w, qs + warp * kFrag * ldt, ldt, ks, ldt, hs);   // S = Q K^T
    scores_abt(dp_w, gs + warp * kFrag * ldt, ldt, vs, ldt, hs);  // dP = dO V^T
    __syncwarp();
    for (int idx = lane; idx < kFrag * kTile; idx += kWarp) {
      const int r = idx / kTile, c = idx % kTile;
      const int row = warp * kFrag + r, t = q0 + row, j = k0 + c;
      float ds = 0.0f;
      if (j <= t && t < T) {  // t < T implies j < T
        const float p = expf(scale * s_w[r * kLdS + c] - lse_s[row]);
        ds = p * (dp_w[r * kLdS + c] - delta_s[row]);
      }
      ds_w[r * kLdP + c] = __float2bfloat16(ds);
    }
    __syncwarp();
    accumulate_px_regs(dq, ds_w, ks, ldt, hs);  // dQ += dS K
  }
  __syncthreads();  // every warp is done with the scores: their region now takes the sums (other warps' rows too)
  float* dq_w = scratch + warp * kFrag * ldo;
  store_regs(dq_w, ldo, dq, hs);
  __syncwarp();
  for (int r = 0; r < kFrag; ++r) {
    const int t = q0 + warp * kFrag + r;
    if (t >= T) break;
    bf16* out = dqkv + (std::int64_t{b} * T + t) * W + sh.q_col(h);
    for (int d = lane; d < hs; d += kWarp) out[d] = __float2bfloat16(scale * dq_w[r * ldo + d]);
  }
}

// dk, dv: grid (ceil(T / kTile), B * KVH), key rows j0 .. j0 + 63 of key/value head kvh, summed over the query
// heads of its group and the query tiles at or below the diagonal: S^T = K Q^T, P^T = exp(scale S^T - lse),
// dP^T = V dO^T, dS^T = P^T (dP^T - delta), dV += P^T dO, dK += dS^T Q; finally dk = scale dK. S^T and dP^T take
// turns in one score array (P^T is kept as the bf16 that dV uses, and dS^T is computed from that P^T), so the
// kernel fits 2 blocks per SM at hs 128 (103.5 KB of shared memory).
__global__ void __launch_bounds__(kThreads)
    flash_tc_dkv_kernel(bf16* dqkv, const float* delta, const bf16* dout, const float* lse, const bf16* qkv, Shape sh,
                        float scale) {
  extern __shared__ __align__(128) unsigned char smem[];
  const Smem L{sh.hs};
  Carve cv{smem};
  bf16* ks = cv.take<bf16>(L.tile());
  bf16* vs = cv.take<bf16>(L.tile());
  bf16* qs = cv.take<bf16>(L.tile());
  bf16* gs = cv.take<bf16>(L.tile());         // dO
  float* sts = cv.take<float>(Smem::scores);  // S^T, then dP^T [kTile][kLdS]
  bf16* pts = cv.take<bf16>(Smem::probs);
  bf16* dsts = cv.take<bf16>(Smem::probs);
  float* lse_s = cv.take<float>(Smem::rowvec);
  float* delta_s = cv.take<float>(Smem::rowvec);
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const int T = sh.T, hs = sh.hs, W = sh.W(), C = sh.C(), ldt = L.ldt(), group = sh.NH / sh.KVH;
  const int j0 = blockIdx.x * kTile;  // the first key tiles see the most query tiles: lowest indices start first
  const int b = blockIdx.y / sh.KVH, kvh = blockIdx.y % sh.KVH;
  const bf16* base = qkv + std::int64_t{b} * T * W;
  const bf16* gbase = dout + std::int64_t{b} * T * C;
  stage2({ks, base, W, sh.k_col(kvh)}, {vs, base, W, sh.v_col(kvh)}, j0, T, hs);
  AccRegs dk, dv;
  zero_regs(dk);
  zero_regs(dv);
  float* st_w = sts + warp * kFrag * kLdS;  // the warp's 16 rows: only this warp reads or writes them
  bf16* pt_w = pts + warp * kFrag * kLdP;
  bf16* dst_w = dsts + warp * kFrag * kLdP;
  for (int g = 0; g < group; ++g) {
    const int h = kvh * group + g;
    const std::int64_t rows_bh = (std::int64_t{b} * sh.NH + h) * T;
    for (int i0 = j0; i0 < T; i0 += kTile) {  // query tiles with a row t >= j0 (tiles align, so from i0 = j0)
      __syncthreads();  // the previous Q, dO tiles and row vectors are consumed (first time: ks, vs are written)
      stage(qs, base, W, sh.q_col(h), i0, T, hs);
      stage(gs, gbase, C, h * hs, i0, T, hs);
      stage_vec(lse_s, lse + rows_bh, i0, T);
      stage_vec(delta_s, delta + rows_bh, i0, T);
      __syncthreads();
      scores_abt(st_w, ks + warp * kFrag * ldt, ldt, qs, ldt, hs);  // S^T = K Q^T
      __syncwarp();
      for (int idx = lane; idx < kFrag * kTile; idx += kWarp) {
        const int r = idx / kTile, c = idx % kTile;
        const int j = j0 + warp * kFrag + r, t = i0 + c;
        // t < T and j <= t imply j < T; masked and padded entries are exactly 0
        const float p = t >= j && t < T ? expf(scale * st_w[r * kLdS + c] - lse_s[c]) : 0.0f;
        pt_w[r * kLdP + c] = __float2bfloat16(p);
      }
      __syncwarp();                                                 // S^T is consumed before dP^T replaces it
      scores_abt(st_w, vs + warp * kFrag * ldt, ldt, gs, ldt, hs);  // dP^T = V dO^T
      __syncwarp();
      for (int idx = lane; idx < kFrag * kTile; idx += kWarp) {
        const int r = idx / kTile, c = idx % kTile;
        const int j = j0 + warp * kFrag + r, t = i0 + c;
        const float p = __bfloat162float(pt_w[r * kLdP + c]);
        const float ds = t >= j && t < T ? p * (st_w[r * kLdS + c] - delta_s[c]) : 0.0f;
        dst_w[r * kLdP + c] = __float2bfloat16(ds);
      }
      __syncwarp();
      accumulate_px_regs(dv, pt_w, gs, ldt, hs);   // dV += P^T dO
      accumulate_px_regs(dk, dst_w, qs, ldt, hs);  // dK += dS^T Q
    }
  }
  // Out 16 columns at a time through the warp's own score rows (16 x 16 fp32 of its 16 x 68).
  auto write = [&](const AccRegs& acc, int col0, float mul) {
#pragma unroll
    for (int n = 0; n < kMaxFrags; ++n) {
      if (n * kFrag < hs) {
        __syncwarp();  // the previous 16 columns are read
        wmma::store_matrix_sync(st_w, acc[n], kLdS, wmma::mem_row_major);
        __syncwarp();
        for (int e = lane; e < kFrag * kFrag; e += kWarp) {
          const int r = e / kFrag, c = e % kFrag, j = j0 + warp * kFrag + r;
          if (j < T)
            dqkv[(std::int64_t{b} * T + j) * W + col0 + n * kFrag + c] = __float2bfloat16(mul * st_w[r * kLdS + c]);
        }
      }
    }
  };
  write(dk, sh.k_col(kvh), scale);
  write(dv, sh.v_col(kvh), 1.0f);
}

dim3 tc_grid(int T, std::int64_t pairs) { return flash_launch_grid((T + kTile - 1) / kTile, pairs); }

}  // namespace

bool flash_tc_supports(int hs) { return hs >= kFrag && hs <= kFlashTcMaxHead && hs % kFrag == 0; }

std::size_t flash_tc_shared_bytes(int hs) {
  const Smem L{hs};
  return std::max(L.forward(), std::max(L.dq(), L.dkv()));
}

void flash_tc_forward(bf16* out, float* lse, const bf16* qkv, int B, int T, int NH, int KVH, int hs,
                      cudaStream_t stream) {
  const Shape sh{T, NH, KVH, hs};
  const std::size_t bytes = Smem{hs}.forward();
  allow_dynamic_shared(flash_tc_forward_kernel, bytes);
  flash_tc_forward_kernel<<<tc_grid(T, std::int64_t{B} * NH), kThreads, bytes, stream>>>(
      out, lse, qkv, sh, 1.0f / sqrtf(static_cast<float>(hs)));
  CUDA_CHECK_LAUNCH();
}

void flash_tc_backward(bf16* dqkv, const float* delta, const bf16* dout, const float* lse, const bf16* qkv, int B,
                       int T, int NH, int KVH, int hs, cudaStream_t stream) {
  const Shape sh{T, NH, KVH, hs};
  const float scale = 1.0f / sqrtf(static_cast<float>(hs));
  const Smem L{hs};
  allow_dynamic_shared(flash_tc_dq_kernel, L.dq());
  flash_tc_dq_kernel<<<tc_grid(T, std::int64_t{B} * NH), kThreads, L.dq(), stream>>>(dqkv, delta, dout, lse, qkv, sh,
                                                                                     scale);
  CUDA_CHECK_LAUNCH();
  allow_dynamic_shared(flash_tc_dkv_kernel, L.dkv());
  flash_tc_dkv_kernel<<<tc_grid(T, std::int64_t{B} * KVH), kThreads, L.dkv(), stream>>>(dqkv, delta, dout, lse, qkv, sh,
                                                                                        scale);
  CUDA_CHECK_LAUNCH();
}

}  // namespace zeropp::e2e::cuda
