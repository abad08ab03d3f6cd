#pragma once
// FlashAttention-2 (Dao 2023, arXiv 2307.08691, Algorithm 1 forward, Algorithm 2 backward) on tensor cores through
// mma.sync.m16n8k16 (bf16 in, fp32 accumulate) and ldmatrix, for head sizes HS = 64 and 128: the kernels' device code.
// flash_mma.cu launches them; the host emulation (tests/e2e/flash_mma_emulation) compiles this same file for CPU
// lanes. Include the primitives first: e2e/backend/cuda/warp_mma.cuh on the device, the emulation's shim on the host;
// everything that touches shared memory or another lane goes through them (warp::...).
//
// Same interface and results as flash_tc.cu's WMMA kernels: packed qkv rows [B T, (NH + 2 KVH) HS] (flash_shape.cuh),
// grouped-query heads, causal, lse [B, NH, T] fp32 saved by the forward, delta = rowsum(dout * out) computed before
// the backward (kernels.cu), and a backward of two kernels without atomics: dq per query tile, dk and dv per key
// tile (summed over the query heads of its group), each element written once, so results are deterministic. The
// price of that choice: S and dP are computed in both kernels, 7 matrix products where FlashAttention-2's one
// kernel with fp32 atomic adds into dq computes 5.
//
// Why registers instead of WMMA's shared-memory round trips: mma.sync's fragment layouts are documented (warp_mma.cuh),
// so each lane knows the rows and columns of its accumulator elements. S = Q K^T stays in the accumulators; a row
// of the warp's 16 is spread over the 4 lanes of a quad (lanes 4 g .. 4 g + 3 hold rows g and g + 8), so its max and
// sum need two __shfl_xor_sync; P is packed to bf16 A fragments in registers (two adjacent C tiles are one A tile);
// O accumulates in registers and is rescaled per row in registers.
//
// Tiles: a block is kWarps = 4 warps; each warp owns 16 rows (a query tile's in the forward and dq kernels, a key
// tile's in the dk/dv kernel) for the whole kernel, so warps share only the staged tiles of the other side, which
// the block walks in tiles of kRows = 64 rows. 64 x 64 is the smallest square of whole warp tiles (16 rows) that
// keeps one S/dP accumulator at 32 registers per lane (16 x 64 fp32 / 32 lanes); with kRows the same on both sides
// the causal diagonal falls inside exactly one tile per block, the only one masked, and tiles above it are skipped.
// Registers and shared memory per kernel, and the occupancy they allow, are beside each kernel (nvcc 13.0 -Xptxas -v,
// sm_90a). Shared memory rows are padded by 16 bytes (kPad): ldmatrix reads 8 rows of 16 bytes per matrix, and with
// a row stride of HS + 8 elements (an odd multiple of 16 bytes) those 8 rows start in 8 different groups of 4 banks,
// so neither ldmatrix nor the 16-byte cp.async stores conflict.
//
// Rows past T: staged as zeros (cp.async's zero fill), never stored. Keys past T exist only in the last key tile,
// which only the last query tile visits, as its diagonal tile: the causal mask hides them from every valid row.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "e2e/backend/cuda/flash_shape.cuh"

namespace zeropp::e2e::cuda::flash_mma {

using bf16 = __nv_bfloat16;
using std::uint32_t;

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kWarpRows = 16;              // an m16 tile: the rows one warp owns
constexpr int kRows = kWarps * kWarpRows;  // rows per block and per staged tile: 64
constexpr int kPad = 8;                    // bf16 elements of padding per staged row (16 bytes)
constexpr float kLog2e = 1.4426950408889634f;

__host__ __device__ constexpr bool supports(int hs) { return hs == 64 || hs == 128; }
__host__ __device__ constexpr int row_tiles(int T) { return (T + kRows - 1) / kRows; }

// Shared memory of each kernel (bytes), in the order the kernel carves it.
template <int HS>
struct Smem {
  static constexpr int ld = HS + kPad;  // elements per staged row
  static constexpr std::size_t tile = std::size_t{kRows} * ld * sizeof(bf16);
  static constexpr std::size_t rowvec = std::size_t{kRows} * sizeof(float);
  static constexpr std::size_t forward = 3 * tile;           // Q, K, V
  static constexpr std::size_t dq = 5 * tile;                // Q, dO, K x 2, V
  static constexpr std::size_t dkv = 6 * tile + 4 * rowvec;  // K, V, (Q, dO, lse, delta) x 2
};

// ---- staging (cp.async): every thread of the block issues its share; the caller commits and waits.

// Rows r0 .. r0 + kRows - 1 of columns col .. col + HS - 1 of a bf16 matrix with row stride ld (elements) into
// dst[kRows][HS + kPad]; rows at or past `rows` become zeros. Sources are 16-byte aligned: the launcher checks the
// base pointer, and ld and col are multiples of HS.
template <int HS>
__device__ __forceinline__ void stage_tile(bf16* dst, const bf16* src, std::int64_t ld, int col, int r0, int rows) {
  constexpr int kChunks = HS / 8;  // 16-byte pieces per row
  constexpr int kPerThread = kRows * kChunks / kThreads;
  static_assert(kPerThread * kThreads == kRows * kChunks, "the pieces of a tile are shared out evenly");
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int idx = static_cast<int>(threadIdx.x) + i * kThreads, r = idx / kChunks, c = idx % kChunks;
    const bool valid = r0 + r < rows;
    const bf16* from = src + std::int64_t{valid ? r0 + r : r0} * ld + col + c * 8;  // a mapped address either way
    warp::cp_async_16(dst + r * Smem<HS>::ld + c * 8, from, valid);
  }
}

// Entries r0 .. r0 + kRows - 1 of an fp32 vector (zeros at and past `rows`) into dst[kRows]: threads 0 .. 63.
__device__ __forceinline__ void stage_rowvec(float* dst, const float* src, int r0, int rows) {
  const int i = static_cast<int>(threadIdx.x);
  if (i < kRows) warp::cp_async_4(dst + i, src + (r0 + i < rows ? r0 + i : r0), r0 + i < rows);
}

// ---- fragments (warp_mma.cuh gives the layouts). Tiles are staged row-major with row stride Smem<HS>::ld.

// The A fragment of rows row0 .. row0 + 15, columns col0 .. col0 + 15: lanes 0-15 address rows 0-15 at col0 (matrices
// a0, a1), lanes 16-31 the same rows at col0 + 8 (a2, a3).
__device__ __forceinline__ void load_a(uint32_t (&a)[4], const bf16* tile, int ld, int row0, int col0, int lane) {
  warp::ldmatrix_x4(a, tile + (row0 + lane % 16) * ld + col0 + (lane / 16) * 8);
}

// B fragments (k x n = 16 x 8) of two adjacent n tiles where the tile holds B transposed, B[k][n] = tile[n0 + n][k0 +
// k] (K in Q K^T): lanes 0-7 address rows n0 .. n0 + 7 at k0 (b0 of tile n0), 8-15 the same rows at k0 + 8 (b1),
// 16-31 rows n0 + 8 .. n0 + 15 likewise (b0, b1 of tile n0 + 8). Row n of the tile is column n of B, as the
// non-transposing load hands lane l the elements [l / 4][2 (l % 4) ...] = B[2 (l % 4) ...][l / 4].
__device__ __forceinline__ void load_b_nk(uint32_t (&b)[4], const bf16* tile, int ld, int n0, int k0, int lane) {
  warp::ldmatrix_x4(b, tile + (n0 + lane % 8 + (lane / 16) * 8) * ld + k0 + ((lane / 8) % 2) * 8);
}

// The same where the tile holds B itself, B[k][n] = tile[k0 + k][n0 + n] (V in P V), through the transposing load:
// lanes 0-7 rows k0 .. k0 + 7 at n0 (b0 of tile n0), 8-15 rows k0 + 8 .. k0 + 15 at n0 (b1), 16-31 likewise at n0 + 8.
__device__ __forceinline__ void load_b_kn(uint32_t (&b)[4], const bf16* tile, int ld, int k0, int n0, int lane) {
  warp::ldmatrix_x4_trans(b, tile + (k0 + lane % 8 + ((lane / 8) % 2) * 8) * ld + n0 + (lane / 16) * 8);
}

// acc (16 x 64: 8 n tiles of 8) += A B^T for A = rows a_row0 .. a_row0 + 15 of tile a and B = the 64 rows of tile b,
// both HS wide: S = Q K^T, dP = dO V^T, and in the dk/dv kernel S^T = K Q^T, dP^T = V dO^T.
template <int HS>
__device__ __forceinline__ void mma_abt(float (&acc)[8][4], const bf16* a, int a_row0, const bf16* b, int lane) {
  constexpr int ld = Smem<HS>::ld;
#pragma unroll
  for (int k = 0; k < HS / 16; ++k) {
    uint32_t af[4];
    load_a(af, a, ld, a_row0, k * 16, lane);
#pragma unroll
    for (int n = 0; n < 4; ++n) {
      uint32_t bf[4];
      load_b_nk(bf, b, ld, n * 16, k * 16, lane);
      warp::mma_bf16(acc[2 * n], af, bf[0], bf[1]);
      warp::mma_bf16(acc[2 * n + 1], af, bf[2], bf[3]);
    }
  }
}

// acc (16 x HS: HS / 8 n tiles) += P X for P 16 x 64 as A fragments (4 k steps) and X = the 64 x HS tile x:
// O += P V, dQ += dS K, dV += P^T dO, dK += dS^T Q.
template <int HS>
__device__ __forceinline__ void mma_px(float (&acc)[HS / 8][4], const uint32_t (&p)[4][4], const bf16* x, int lane) {
  constexpr int ld = Smem<HS>::ld;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
#pragma unroll
    for (int n = 0; n < HS / 16; ++n) {
      uint32_t bf[4];
      load_b_kn(bf, x, ld, k * 16, n * 16, lane);
      warp::mma_bf16(acc[2 * n], p[k], bf[0], bf[1]);
      warp::mma_bf16(acc[2 * n + 1], p[k], bf[2], bf[3]);
    }
  }
}

// The C fragments of a 16 x 64 accumulator as the bf16 A fragments of the same 16 x 64 (4 k steps of 16): k step k is
// n tiles 2k (columns 0-7 of the step: a0, a1) and 2k + 1 (columns 8-15: a2, a3).
__device__ __forceinline__ void to_a_fragments(uint32_t (&p)[4][4], const float (&s)[8][4]) {
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    p[k][0] = warp::pack_bf16x2(s[2 * k][0], s[2 * k][1]);
    p[k][1] = warp::pack_bf16x2(s[2 * k][2], s[2 * k][3]);
    p[k][2] = warp::pack_bf16x2(s[2 * k + 1][0], s[2 * k + 1][1]);
    p[k][3] = warp::pack_bf16x2(s[2 * k + 1][2], s[2 * k + 1][3]);
  }
}

template <int N>
__device__ __forceinline__ void zero(float (&acc)[N][4]) {
#pragma unroll
  for (int n = 0; n < N; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
}

// Rows r0 + g and r0 + g + 8 (g = lane / 4) of a 16 x HS accumulator, times `mul`, to bf16 rows of `dst` (row stride
// ld elements, the first column at dst) where the row is < rows: each lane writes its column pairs 2 (lane % 4) + 8 n.
template <int HS>
__device__ __forceinline__ void store_rows(bf16* dst, std::int64_t ld, const float (&acc)[HS / 8][4], int r0, int rows,
                                           float mul0, float mul1, int lane) {
  const int g = lane / 4, c = 2 * (lane % 4);
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int r = r0 + g + 8 * half;
    if (r >= rows) continue;
    const float mul = half == 0 ? mul0 : mul1;
    bf16* row = dst + std::int64_t{r} * ld + c;
#pragma unroll
    for (int n = 0; n < HS / 8; ++n)
      warp::store_bf16x2(row + 8 * n, warp::pack_bf16x2(acc[n][2 * half] * mul, acc[n][2 * half + 1] * mul));
  }
}

// ---- forward: grid (row_tiles(T), B NH), block kThreads, Smem<HS>::forward bytes.
// Query rows q0 .. q0 + 63 of head h of sequence b; the heaviest blocks (last query tiles, the most key tiles) get
// the lowest block indices, so they start first. Q, K, V are staged once each (3 tiles: 52 KB at HS 128, 27 KB at
// 64) and the copies overlap the arithmetic as in FlashAttention-2's kernel: V's copy runs while S and the softmax
// are computed, the next K's while O += P V is; two barriers per key tile.
template <int HS>
__global__ void __launch_bounds__(kThreads)
    flash_mma_forward_kernel(bf16* out, float* lse, const bf16* qkv, FlashShape sh, float scale) {
  using L = Smem<HS>;
  bf16* qs = reinterpret_cast<bf16*>(warp::dynamic_smem());
  bf16* ks = qs + kRows * L::ld;
  bf16* vs = ks + kRows * L::ld;
  const int lane = static_cast<int>(threadIdx.x) % 32, w0 = static_cast<int>(threadIdx.x) / 32 * kWarpRows;
  const int g = lane / 4, c2 = 2 * (lane % 4);  // this lane's accumulator rows w0 + g (+ 8), columns c2 (+ 1) + 8 n
  const int T = sh.T, W = sh.W();
  const int tile = static_cast<int>(gridDim.x - 1 - blockIdx.x), q0 = tile * kRows;
  const int b = static_cast<int>(blockIdx.y) / sh.NH, h = static_cast<int>(blockIdx.y) % sh.NH;
  const int kvh = h / (sh.NH / sh.KVH);
  const bf16* base = qkv + std::int64_t{b} * T * W;
  const float scale_log2 = scale * kLog2e;  // p = exp(scale s - scale m) = 2^((s - m) scale_log2)

  stage_tile<HS>(qs, base, W, sh.q_col(h), q0, T);
  stage_tile<HS>(ks, base, W, sh.k_col(kvh), 0, T);
  warp::cp_async_commit();
  warp::cp_async_wait<0>();
  warp::block_sync();

  float o[HS / 8][4];
  zero(o);
  // Running max (of unscaled scores) and this lane's part of the running sum of rows g and g + 8: the max is the
  // quad's (reduced), the sum only this lane's columns until the end (alpha is the same for the whole quad).
  float m_run[2] = {-INFINITY, -INFINITY}, l_run[2] = {0.0f, 0.0f};
  for (int n = 0; n <= tile; ++n) {
    stage_tile<HS>(vs, base, W, sh.v_col(kvh), n * kRows, T);  // V[n]: the buffer is free (barrier at loop end)
    warp::cp_async_commit();
    float s[8][4];
    zero(s);
    mma_abt<HS>(s, qs, w0, ks, lane);  // S = Q K^T, unscaled
    if (n == tile) {                   // the diagonal tile: key column c is visible to query row r iff c <= r
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int i = 0; i < 4; ++i)
          if (8 * j + c2 + (i & 1) > w0 + g + 8 * (i >> 1)) s[j][i] = -INFINITY;
    }
    float mx[2] = {m_run[0], m_run[1]};
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      mx[0] = fmaxf(mx[0], fmaxf(s[j][0], s[j][1]));
      mx[1] = fmaxf(mx[1], fmaxf(s[j][2], s[j][3]));
    }
    float msc[2], alpha[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      mx[r] = fmaxf(mx[r], warp::shfl_xor(mx[r], 1));
      mx[r] = fmaxf(mx[r], warp::shfl_xor(mx[r], 2));
      // Every row sees key 0 of the first tile and key k0 of the diagonal tile, so mx is finite; the guard keeps a
      // fully masked row at p = 0 rather than NaN should that ever change.
      const float m_use = mx[r] == -INFINITY ? 0.0f : mx[r];
      alpha[r] = warp::exp2_approx((m_run[r] - m_use) * scale_log2);  // 0 on the first tile (m_run = -inf)
      m_run[r] = mx[r];
      msc[r] = m_use * scale_log2;
    }
    float rowsum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        s[j][i] = warp::exp2_approx(fmaf(s[j][i], scale_log2, -msc[i >> 1]));  // masked: 2^-inf = 0
        rowsum[i >> 1] += s[j][i];
      }
#pragma unroll
    for (int r = 0; r < 2; ++r) l_run[r] = l_run[r] * alpha[r] + rowsum[r];
#pragma unroll
    for (int j = 0; j < HS / 8; ++j) {
      o[j][0] *= alpha[0];
      o[j][1] *= alpha[0];
      o[j][2] *= alpha[1];
      o[j][3] *= alpha[1];
    }
    uint32_t p[4][4];
    to_a_fragments(p, s);
    warp::cp_async_wait<0>();  // V[n] (this thread's part) ...
    warp::block_sync();        // ... and everyone's; everyone is done reading K[n]
    if (n < tile) {
      stage_tile<HS>(ks, base, W, sh.k_col(kvh), (n + 1) * kRows, T);  // K[n + 1] behind O += P V
      warp::cp_async_commit();
    }
    mma_px<HS>(o, p, vs, lane);  // O += P V
    warp::cp_async_wait<0>();    // K[n + 1] ...
    warp::block_sync();          // ... everyone's; everyone is done reading V[n]
  }
  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l_run[r] += warp::shfl_xor(l_run[r], 1);
    l_run[r] += warp::shfl_xor(l_run[r], 2);
    inv[r] = 1.0f / l_run[r];
  }
  const std::int64_t C = sh.C();
  store_rows<HS>(out + std::int64_t{b} * T * C + std::int64_t{h} * HS, C, o, q0 + w0, T, inv[0], inv[1], lane);
  if (lane % 4 == 0) {
    float* lse_bh = lse + (std::int64_t{b} * sh.NH + h) * T;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int t = q0 + w0 + g + 8 * r;
      if (t < T) warp::store_f32(lse_bh + t, m_run[r] * scale + logf(l_run[r]));
    }
  }
}

// ---- dq: grid (row_tiles(T), B NH), block kThreads, Smem<HS>::dq bytes.
// Query rows q0 .. q0 + 63 of head h: for each key tile at or below the diagonal, S = Q K^T, dP = dO V^T,
// P = exp(scale S - lse), dS = P (dP - delta), dQ += dS K; finally dq = scale dQ. Q and dO stay staged for the
// whole kernel and are re-read as A fragments (keeping them in registers would cost 64 of them at HS 128); K is
// double-buffered, since it is read at both ends of a step (S, then dQ), and its next tile's copy runs during the
// whole step; V's next copy runs while dS and dQ are computed. 5 tiles: 85 KB at HS 128, 46 KB at 64.
template <int HS>
__global__ void __launch_bounds__(kThreads)
    flash_mma_dq_kernel(bf16* dqkv, const float* delta, const bf16* dout, const float* lse, const bf16* qkv,
                        FlashShape sh, float scale) {
  using L = Smem<HS>;
  bf16* qs = reinterpret_cast<bf16*>(warp::dynamic_smem());
  bf16* gs = qs + kRows * L::ld;    // dO
  bf16* kbuf = gs + kRows * L::ld;  // K[n] in kbuf + (n % 2) kRows ld
  bf16* vs = kbuf + 2 * kRows * L::ld;
  const int lane = static_cast<int>(threadIdx.x) % 32, w0 = static_cast<int>(threadIdx.x) / 32 * kWarpRows;
  const int g = lane / 4, c2 = 2 * (lane % 4);
  const int T = sh.T, W = sh.W();
  const int tile = static_cast<int>(gridDim.x - 1 - blockIdx.x), q0 = tile * kRows;
  const int b = static_cast<int>(blockIdx.y) / sh.NH, h = static_cast<int>(blockIdx.y) % sh.NH;
  const int kvh = h / (sh.NH / sh.KVH);
  const bf16* base = qkv + std::int64_t{b} * T * W;
  const float scale_log2 = scale * kLog2e;

  stage_tile<HS>(qs, base, W, sh.q_col(h), q0, T);
  stage_tile<HS>(gs, dout + std::int64_t{b} * T * sh.C(), sh.C(), h * HS, q0, T);
  stage_tile<HS>(kbuf, base, W, sh.k_col(kvh), 0, T);
  stage_tile<HS>(vs, base, W, sh.v_col(kvh), 0, T);
  warp::cp_async_commit();
  // lse (in log2 units) and delta of this lane's rows; rows past T get 0 (computed, never stored).
  float lse2[2], dlt[2];
  const std::int64_t rows_bh = (std::int64_t{b} * sh.NH + h) * T;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int t = q0 + w0 + g + 8 * r;
    lse2[r] = t < T ? warp::load_f32(lse + rows_bh + t) * kLog2e : 0.0f;
    dlt[r] = t < T ? warp::load_f32(delta + rows_bh + t) : 0.0f;
  }
  warp::cp_async_wait<0>();
  warp::block_sync();

  float dq[HS / 8][4];
  zero(dq);
  for (int n = 0; n <= tile; ++n) {
    const bf16* kcur = kbuf + (n % 2) * kRows * L::ld;
    if (n < tile) {  // K[n + 1] into the other buffer: its last readers (step n - 1) passed the barrier ending it
      stage_tile<HS>(kbuf + ((n + 1) % 2) * kRows * L::ld, base, W, sh.k_col(kvh), (n + 1) * kRows, T);
      warp::cp_async_commit();
    }
    float s[8][4], dp[8][4];
    zero(s);
    zero(dp);
    mma_abt<HS>(s, qs, w0, kcur, lane);  // S = Q K^T
    mma_abt<HS>(dp, gs, w0, vs, lane);   // dP = dO V^T
    warp::block_sync();                  // everyone is done reading V[n]
    if (n < tile) {
      stage_tile<HS>(vs, base, W, sh.v_col(kvh), (n + 1) * kRows, T);
      warp::cp_async_commit();
    }
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int r = i >> 1;
        float p = warp::exp2_approx(fmaf(s[j][i], scale_log2, -lse2[r]));
        if (n == tile && 8 * j + c2 + (i & 1) > w0 + g + 8 * r) p = 0.0f;  // above the diagonal
        s[j][i] = p * (dp[j][i] - dlt[r]);                                 // dS, in place of S
      }
    uint32_t ds[4][4];
    to_a_fragments(ds, s);
    mma_px<HS>(dq, ds, kcur, lane);  // dQ += dS K
    warp::cp_async_wait<0>();        // K[n + 1], V[n + 1] ...
    warp::block_sync();              // ... everyone's; everyone is done reading K[n]
  }
  store_rows<HS>(dqkv + std::int64_t{b} * T * W + sh.q_col(h), W, dq, q0 + w0, T, scale, scale, lane);
}

// ---- dk, dv: grid (row_tiles(T), B KVH), block kThreads, Smem<HS>::dkv bytes.
// Key rows j0 .. j0 + 63 of key/value head kvh, summed over the query heads of its group and, for each, the query
// tiles at or below the diagonal: S^T = K Q^T, P^T = exp(scale S^T - lse), dP^T = V dO^T, dS^T = P^T (dP^T - delta),
// dV += P^T dO, dK += dS^T Q; finally dk = scale dK. The (head, query tile) steps run as one sequence, so the next
// step's Q, dO, lse and delta are copied (double-buffered) during the whole current step, one barrier per step.
// K and V stay staged and are re-read as A fragments (two accumulators of 16 x HS already take 2 HS / 4 registers
// per lane). 6 tiles and 4 row vectors: 103 KB at HS 128, 55 KB at 64.
template <int HS>
__global__ void __launch_bounds__(kThreads)
    flash_mma_dkv_kernel(bf16* dqkv, const float* delta, const bf16* dout, const float* lse, const bf16* qkv,
                         FlashShape sh, float scale) {
  using L = Smem<HS>;
  bf16* ks = reinterpret_cast<bf16*>(warp::dynamic_smem());
  bf16* vs = ks + kRows * L::ld;
  bf16* qbuf = vs + kRows * L::ld;                                   // Q of step i in qbuf + (i % 2) kRows ld
  bf16* gbuf = qbuf + 2 * kRows * L::ld;                             // dO likewise
  float* lbuf = reinterpret_cast<float*>(gbuf + 2 * kRows * L::ld);  // lse likewise, kRows each
  float* dbuf = lbuf + 2 * kRows;                                    // delta likewise
  const int lane = static_cast<int>(threadIdx.x) % 32, w0 = static_cast<int>(threadIdx.x) / 32 * kWarpRows;
  const int g = lane / 4, c2 = 2 * (lane % 4);
  const int T = sh.T, W = sh.W(), C = sh.C(), group = sh.NH / sh.KVH;
  const int tile = static_cast<int>(blockIdx.x), j0 = tile * kRows;  // the first key tiles see the most query tiles
  const int b = static_cast<int>(blockIdx.y) / sh.KVH, kvh = static_cast<int>(blockIdx.y) % sh.KVH;
  const bf16* base = qkv + std::int64_t{b} * T * W;
  const bf16* gbase = dout + std::int64_t{b} * T * C;
  const float scale_log2 = scale * kLog2e;
  const int per_head = row_tiles(T) - tile, steps = group * per_head;  // query tiles tile .. last, per query head

  // Step i's query head and first query row.
  auto step_head = [&](int i) { return kvh * group + i / per_head; };
  auto step_q0 = [&](int i) { return (tile + i % per_head) * kRows; };
  auto stage_step = [&](int i) {
    const int h = step_head(i), i0 = step_q0(i), buf = i % 2;
    const std::int64_t rows_bh = (std::int64_t{b} * sh.NH + h) * T;
    stage_tile<HS>(qbuf + buf * kRows * L::ld, base, W, sh.q_col(h), i0, T);
    stage_tile<HS>(gbuf + buf * kRows * L::ld, gbase, C, h * HS, i0, T);
    stage_rowvec(lbuf + buf * kRows, lse + rows_bh, i0, T);
    stage_rowvec(dbuf + buf * kRows, delta + rows_bh, i0, T);
    warp::cp_async_commit();
  };

  stage_tile<HS>(ks, base, W, sh.k_col(kvh), j0, T);
  stage_tile<HS>(vs, base, W, sh.v_col(kvh), j0, T);
  stage_step(0);
  warp::cp_async_wait<0>();
  warp::block_sync();

  float dk[HS / 8][4], dv[HS / 8][4];
  zero(dk);
  zero(dv);
  for (int i = 0; i < steps; ++i) {
    if (i + 1 < steps) stage_step(i + 1);  // the other buffers: their last readers (step i - 1) passed the barrier
    const int buf = i % 2, i0 = step_q0(i);
    const bf16* qcur = qbuf + buf * kRows * L::ld;
    const bf16* gcur = gbuf + buf * kRows * L::ld;
    const float* lcur = lbuf + buf * kRows;
    const float* dcur = dbuf + buf * kRows;
    // Query column c (key row r) is visible iff i0 + c >= j0 + r and i0 + c < T; only the diagonal tile and the
    // last query tile have invisible columns.
    const bool masked = i0 == j0 || i0 + kRows > T;
    float s[8][4];
    zero(s);
    mma_abt<HS>(s, ks, w0, qcur, lane);  // S^T = K Q^T
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float2 l2 = warp::lds_f32x2(lcur + 8 * j + c2);  // lse of this lane's two query columns
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int c = 8 * j + c2 + (e & 1), r = w0 + g + 8 * (e >> 1);
        float p = warp::exp2_approx(fmaf(s[j][e], scale_log2, -((e & 1) ? l2.y : l2.x) * kLog2e));
        if (masked && (i0 + c < j0 + r || i0 + c >= T)) p = 0.0f;
        s[j][e] = p;  // P^T, fp32
      }
    }
    uint32_t pt[4][4];
    to_a_fragments(pt, s);
    mma_px<HS>(dv, pt, gcur, lane);  // dV += P^T dO
    float dp[8][4];
    zero(dp);
    mma_abt<HS>(dp, vs, w0, gcur, lane);  // dP^T = V dO^T
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float2 d2 = warp::lds_f32x2(dcur + 8 * j + c2);
#pragma unroll
      for (int e = 0; e < 4; ++e) s[j][e] *= dp[j][e] - ((e & 1) ? d2.y : d2.x);  // dS^T (0 where P^T is)
    }
    uint32_t dst[4][4];
    to_a_fragments(dst, s);
    mma_px<HS>(dk, dst, qcur, lane);  // dK += dS^T Q
    warp::cp_async_wait<0>();         // step i + 1's copies ...
    warp::block_sync();               // ... everyone's; everyone is done reading step i's buffers
  }
  bf16* kv_rows = dqkv + std::int64_t{b} * T * W;
  store_rows<HS>(kv_rows + sh.k_col(kvh), W, dk, j0 + w0, T, scale, scale, lane);
  store_rows<HS>(kv_rows + sh.v_col(kvh), W, dv, j0 + w0, T, 1.0f, 1.0f, lane);
}

}  // namespace zeropp::e2e::cuda::flash_mma
