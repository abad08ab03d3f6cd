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
// the block walks in tiles of kRows = 64 rows. Why 16 rows per warp: its accumulators are 16 x HS fp32, HS / 2
// registers per lane (64 at HS 128), and the dk/dv kernel holds two (dK, dV) beside a 16 x 64 score tile (32) and its
// gradient (32): with 32 rows per warp, as FlashAttention-2's forward has at HS 128 (128-row tiles, 4 warps), that
// kernel would need twice as many and spill past the 255-register limit. The price is shared-memory traffic: each B
// fragment an ldmatrix brings feeds one m16 tile instead of two (0.56 ldmatrix.x4 per mma in the forward). 64 keys
// per step keep one score accumulator at 32 registers (16 x 64 / 32 lanes); with kRows the same on both sides the
// causal diagonal falls inside exactly one tile per block, the only one masked, and the tiles above it are skipped.
// Registers, shared memory and the blocks per SM they allow are beside each kernel: nvcc 13.0 -Xptxas -v, sm_90a,
// against an H100/H200 SM's 64 K registers and 228 KB of shared memory (227 KB per block, 1 KB of it reserved per
// block). Shared memory rows are padded by 16 bytes (kPad): ldmatrix reads 8 rows of 16 bytes per matrix, and with a
// row stride of HS + 8 elements (an odd multiple of 16 bytes) those 8 rows start in 8 different groups of 4 banks,
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

// Shared memory is addressed as the PTX instructions take it, 32-bit addresses in the shared window
// (warp::smem_addr): a tile's base plus byte offsets that are per-lane values computed once (LaneOffsets) and
// constants after unrolling, which the assembler folds into the instructions' immediate offsets.
template <int HS>
__host__ __device__ constexpr uint32_t tile_bytes(int row, int col) {
  return static_cast<uint32_t>((row * Smem<HS>::ld + col) * sizeof(bf16));
}

// Blocks per SM each kernel is compiled for: __launch_bounds__(kThreads, n) caps a thread's registers at
// 65536 / (128 n) (the register file of an H100/H200 SM: 64 K 32-bit registers). Chosen so that registers are not
// what limits occupancy where shared memory allows more, without spilling (nvcc 13.0, sm_90a; figures beside the
// kernels).
template <int HS>
constexpr int kForwardBlocks = HS == 64 ? 4 : 3;
template <int HS>
constexpr int kDqBlocks = HS == 64 ? 3 : 2;
template <int HS>
constexpr int kDkvBlocks = 2;

// ---- staging (cp.async): every thread of the block issues its share; the caller commits and waits.

// Rows r0 .. r0 + kRows - 1 of columns col .. col + HS - 1 of a bf16 matrix with row stride ld (elements) into the
// tile at shared address dst ([kRows][HS + kPad]); rows at or past `rows` become zeros. Sources are 16-byte
// aligned: the launcher checks the base pointer, and ld and col are multiples of HS. Thread t copies the 16-byte
// piece t % (HS / 8) of rows t / (HS / 8) + i kThreads / (HS / 8).
template <int HS>
__device__ __forceinline__ void stage_tile(uint32_t dst, const bf16* src, std::int64_t ld, int col, int r0, int rows) {
  constexpr int kChunks = HS / 8;  // 16-byte pieces per row
  constexpr int kRowStep = kThreads / kChunks;
  static_assert(kRowStep * kChunks == kThreads && kRows % kRowStep == 0, "the pieces of a tile are shared out evenly");
  const int t = static_cast<int>(threadIdx.x), c = t % kChunks, r_first = t / kChunks;
  const bf16* from = src + col + c * 8;
#pragma unroll
  for (int i = 0; i < kRows / kRowStep; ++i) {
    const int r = r_first + i * kRowStep;
    const bool valid = r0 + r < rows;
    // a mapped address either way (nothing is read when !valid)
    warp::cp_async_16(dst + tile_bytes<HS>(r, c * 8), from + std::int64_t{valid ? r0 + r : r0} * ld, valid);
  }
}

// Entries r0 .. r0 + kRows - 1 of an fp32 vector (zeros at and past `rows`) into the kRows floats at shared address
// dst: threads 0 .. 63.
__device__ __forceinline__ void stage_rowvec(uint32_t dst, const float* src, int r0, int rows) {
  const int i = static_cast<int>(threadIdx.x);
  if (i < kRows) warp::cp_async_4(dst + 4 * i, src + (r0 + i < rows ? r0 + i : r0), r0 + i < rows);
}

// ---- fragments (warp_mma.cuh gives the layouts). Tiles are staged row-major with row stride Smem<HS>::ld.

// This lane's row address within a 16 x 16 block of a staged tile, for each of the three ways the kernels load
// fragments with ldmatrix .x4 (lane l addresses row l % 8 of matrix l / 8):
//   a     the A fragment of rows 0-15, columns 0-15: lanes 0-15 rows 0-15 at column 0 (matrices a0, a1), lanes 16-31
//         the same rows at column 8 (a2, a3);
//   b_nk  B fragments (k x n = 16 x 8) of two adjacent n tiles where the tile holds B transposed, B[k][n] =
//         tile[n][k] (K in Q K^T): lanes 0-7 rows 0-7 at column 0 (b0 of n tile 0), 8-15 the same rows at column 8
//         (b1), 16-31 rows 8-15 likewise (b0, b1 of n tile 8). Row n of the tile is column n of B, as the
//         non-transposing load hands lane l the elements [l / 4][2 (l % 4) ...] = B[2 (l % 4) ...][l / 4];
//   b_kn  the same where the tile holds B itself, B[k][n] = tile[k][n] (V in P V), through the transposing load:
//         lanes 0-7 rows 0-7 at column 0 (b0 of n tile 0), 8-15 rows 8-15 at column 0 (b1), 16-31 likewise at
//         column 8 (n tile 8).
template <int HS>
struct LaneOffsets {
  uint32_t a, b_nk, b_kn;
  __device__ explicit LaneOffsets(int lane)
      : a(tile_bytes<HS>(lane % 16, (lane / 16) * 8)),
        b_nk(tile_bytes<HS>(lane % 8 + (lane / 16) * 8, ((lane / 8) % 2) * 8)),
        b_kn(tile_bytes<HS>(lane % 8 + ((lane / 8) % 2) * 8, (lane / 16) * 8)) {}
};

// acc (16 x 64: 8 n tiles of 8) += A B^T for A = rows a_row0 .. a_row0 + 15 of tile a and B = the 64 rows of tile b,
// both HS wide: S = Q K^T, dP = dO V^T, and in the dk/dv kernel S^T = K Q^T, dP^T = V dO^T.
template <int HS>
__device__ __forceinline__ void mma_abt(float (&acc)[8][4], uint32_t a, int a_row0, uint32_t b,
                                        const LaneOffsets<HS>& lo) {
  const uint32_t a_rows = a + tile_bytes<HS>(a_row0, 0) + lo.a, b_rows = b + lo.b_nk;
#pragma unroll
  for (int k = 0; k < HS / 16; ++k) {
    uint32_t af[4];
    warp::ldmatrix_x4(af, a_rows + tile_bytes<HS>(0, 16 * k));
#pragma unroll
    for (int n = 0; n < 4; ++n) {
      uint32_t bf[4];
      warp::ldmatrix_x4(bf, b_rows + tile_bytes<HS>(16 * n, 16 * k));
      warp::mma_bf16(acc[2 * n], af, bf[0], bf[1]);
      warp::mma_bf16(acc[2 * n + 1], af, bf[2], bf[3]);
    }
  }
}

// acc (16 x HS: HS / 8 n tiles) += P X for P 16 x 64 as A fragments (4 k steps) and X = the 64 x HS tile x:
// O += P V, dQ += dS K, dV += P^T dO, dK += dS^T Q.
template <int HS>
__device__ __forceinline__ void mma_px(float (&acc)[HS / 8][4], const uint32_t (&p)[4][4], uint32_t x,
                                       const LaneOffsets<HS>& lo) {
  const uint32_t x_rows = x + lo.b_kn;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
#pragma unroll
    for (int n = 0; n < HS / 16; ++n) {
      uint32_t bf[4];
      warp::ldmatrix_x4_trans(bf, x_rows + tile_bytes<HS>(16 * k, 16 * n));
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

// This thread's place in its block: its lane, its warp's first row w0 in the block's tile, and the accumulator rows
// (w0 + g, w0 + g + 8) and column pairs (c2, c2 + 1, plus 8 n) it holds (warp_mma.cuh's C layout).
struct LanePlace {
  int lane, w0, g, c2;
  __device__ LanePlace()
      : lane(static_cast<int>(threadIdx.x) % 32),
        w0(static_cast<int>(threadIdx.x) / 32 * kWarpRows),
        g(lane / 4),
        c2(2 * (lane % 4)) {}
};

// The query tile of a forward or dq block: rows q0 .. q0 + 63 (tile index `tile`) of head h of sequence b, whose
// key/value head is kvh. The heaviest blocks (last query tiles, the most key tiles) get the lowest block indices,
// so they start first.
struct QueryTile {
  int tile, q0, b, h, kvh;
  __device__ explicit QueryTile(const FlashShape& sh)
      : tile(static_cast<int>(gridDim.x - 1 - blockIdx.x)),
        q0(tile * kRows),
        b(static_cast<int>(blockIdx.y) / sh.NH),
        h(static_cast<int>(blockIdx.y) % sh.NH),
        kvh(h / (sh.NH / sh.KVH)) {}
};

// Sets the elements of a 16 x 64 score accumulator to -inf (probability 0 after the exponential) where hidden(r, c)
// says so, r the row in the block's tile (w0 + g, w0 + g + 8), c the column in the staged tile (8 j + c2, + 1).
// Called only for the tiles that have hidden elements, so the others run no mask code at all.
template <typename Hidden>
__device__ __forceinline__ void mask_scores(float (&s)[8][4], int w0, int g, int c2, Hidden hidden) {
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int i = 0; i < 4; ++i)
      if (hidden(w0 + g + 8 * (i >> 1), 8 * j + c2 + (i & 1))) s[j][i] = -INFINITY;
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
// Query rows q0 .. q0 + 63 of head h of sequence b (QueryTile). Q, K, V are staged once each and the copies overlap the
// arithmetic as in FlashAttention-2's kernel: V's copy runs while S and the softmax are computed, the next K's while O
// += P V is; two barriers per key tile. Q is re-read as A fragments from shared memory each step rather than held in
// registers (32 more per lane at HS 128). HS 128: 162 registers, 52,224 B (3 tiles) -> 3 blocks per SM (12 warps);
// HS 64: 124 registers, 27,648 B -> 4 blocks (16 warps). No spills.
template <int HS>
__global__ void __launch_bounds__(kThreads, kForwardBlocks<HS>)
    flash_mma_forward_kernel(bf16* out, float* lse, const bf16* qkv, FlashShape sh, float scale) {
  using L = Smem<HS>;
  const uint32_t qs = warp::smem_addr(warp::dynamic_smem()), ks = qs + L::tile, vs = ks + L::tile;
  const auto [lane, w0, g, c2] = LanePlace();
  const auto [tile, q0, b, h, kvh] = QueryTile(sh);
  const LaneOffsets<HS> lo(lane);
  const int T = sh.T, W = sh.W();
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
    mma_abt<HS>(s, qs, w0, ks, lo);  // S = Q K^T, unscaled
    // The diagonal tile (key tile n = query tile): key column c is visible to query row r iff c <= r.
    if (n == tile) mask_scores(s, w0, g, c2, [](int r, int c) { return c > r; });
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
    mma_px<HS>(o, p, vs, lo);  // O += P V
    warp::cp_async_wait<0>();  // K[n + 1] ...
    warp::block_sync();        // ... everyone's; everyone is done reading V[n]
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
// Query rows q0 .. q0 + 63 of head h (QueryTile): for each key tile at or below the diagonal, S = Q K^T, dP = dO V^T,
// P = exp(scale S - lse), dS = P (dP - delta), dQ += dS K; finally dq = scale dQ. Q and dO stay staged for the
// whole kernel and are re-read as A fragments (keeping them in registers would cost 64 of them at HS 128); K is
// double-buffered, since it is read at both ends of a step (S, then dQ), and its next tile's copy runs during the
// whole step; V's next copy runs while dS and dQ are computed. HS 128: 238 registers, 87,040 B (5 tiles) -> 2 blocks
// per SM (8 warps; shared memory allows no third); HS 64: 168 registers, 46,080 B -> 3 blocks (12 warps). No spills.
template <int HS>
__global__ void __launch_bounds__(kThreads, kDqBlocks<HS>)
    flash_mma_dq_kernel(bf16* dqkv, const float* delta, const bf16* dout, const float* lse, const bf16* qkv,
                        FlashShape sh, float scale) {
  using L = Smem<HS>;
  const uint32_t qs = warp::smem_addr(warp::dynamic_smem());
  const uint32_t gs = qs + L::tile;    // dO
  const uint32_t kbuf = gs + L::tile;  // K[n] at kbuf + (n % 2) tile
  const uint32_t vs = kbuf + 2 * L::tile;
  const auto [lane, w0, g, c2] = LanePlace();
  const auto [tile, q0, b, h, kvh] = QueryTile(sh);
  const LaneOffsets<HS> lo(lane);
  const int T = sh.T, W = sh.W();
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
    const uint32_t kcur = kbuf + (n % 2) * L::tile;
    if (n < tile) {  // K[n + 1] into the other buffer: its last readers (step n - 1) passed the barrier ending it
      stage_tile<HS>(kbuf + ((n + 1) % 2) * L::tile, base, W, sh.k_col(kvh), (n + 1) * kRows, T);
      warp::cp_async_commit();
    }
    float s[8][4], dp[8][4];
    zero(s);
    zero(dp);
    mma_abt<HS>(s, qs, w0, kcur, lo);  // S = Q K^T
    mma_abt<HS>(dp, gs, w0, vs, lo);   // dP = dO V^T
    warp::block_sync();                // everyone is done reading V[n]
    if (n < tile) {
      stage_tile<HS>(vs, base, W, sh.v_col(kvh), (n + 1) * kRows, T);
      warp::cp_async_commit();
    }
    if (n == tile) mask_scores(s, w0, g, c2, [](int r, int c) { return c > r; });  // as in the forward
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int r = i >> 1;
        const float p = warp::exp2_approx(fmaf(s[j][i], scale_log2, -lse2[r]));  // 0 where masked
        s[j][i] = p * (dp[j][i] - dlt[r]);                                       // dS, in place of S
      }
    uint32_t ds[4][4];
    to_a_fragments(ds, s);
    mma_px<HS>(dq, ds, kcur, lo);  // dQ += dS K
    warp::cp_async_wait<0>();      // K[n + 1], V[n + 1] ...
    warp::block_sync();            // ... everyone's; everyone is done reading K[n]
  }
  store_rows<HS>(dqkv + std::int64_t{b} * T * W + sh.q_col(h), W, dq, q0 + w0, T, scale, scale, lane);
}

// ---- dk, dv: grid (row_tiles(T), B KVH), block kThreads, Smem<HS>::dkv bytes.
// Key rows j0 .. j0 + 63 of key/value head kvh, summed over the query heads of its group and, for each, the query
// tiles at or below the diagonal: S^T = K Q^T, P^T = exp(scale S^T - lse), dP^T = V dO^T, dS^T = P^T (dP^T - delta),
// dV += P^T dO, dK += dS^T Q; finally dk = scale dK. The (head, query tile) steps run as one sequence, so the next
// step's Q, dO, lse and delta are copied (double-buffered) during the whole current step, one barrier per step.
// K and V stay staged and are re-read as A fragments (two accumulators of 16 x HS already take HS registers per
// lane). HS 128: 255 registers, 105,472 B (6 tiles, 4 row vectors) -> 2 blocks per SM (8 warps); HS 64: 210
// registers, 56,320 B -> 2 blocks (registers). No spills.
template <int HS>
__global__ void __launch_bounds__(kThreads, kDkvBlocks<HS>)
    flash_mma_dkv_kernel(bf16* dqkv, const float* delta, const bf16* dout, const float* lse, const bf16* qkv,
                         FlashShape sh, float scale) {
  using L = Smem<HS>;
  const uint32_t ks = warp::smem_addr(warp::dynamic_smem()), vs = ks + L::tile;
  const uint32_t qbuf = vs + L::tile;          // Q of step i at qbuf + (i % 2) tile
  const uint32_t gbuf = qbuf + 2 * L::tile;    // dO likewise
  const uint32_t lbuf = gbuf + 2 * L::tile;    // lse likewise, rowvec bytes each
  const uint32_t dbuf = lbuf + 2 * L::rowvec;  // delta likewise
  const auto [lane, w0, g, c2] = LanePlace();
  const LaneOffsets<HS> lo(lane);
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
    stage_tile<HS>(qbuf + buf * L::tile, base, W, sh.q_col(h), i0, T);
    stage_tile<HS>(gbuf + buf * L::tile, gbase, C, h * HS, i0, T);
    stage_rowvec(lbuf + buf * L::rowvec, lse + rows_bh, i0, T);
    stage_rowvec(dbuf + buf * L::rowvec, delta + rows_bh, i0, T);
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
    const uint32_t qcur = qbuf + buf * L::tile, gcur = gbuf + buf * L::tile;
    const uint32_t lcur = lbuf + buf * L::rowvec, dcur = dbuf + buf * L::rowvec;
    float s[8][4];
    zero(s);
    mma_abt<HS>(s, ks, w0, qcur, lo);  // S^T = K Q^T
    // Query column c is visible to key row r iff i0 + c >= j0 + r and i0 + c < T; only the diagonal tile and the
    // last query tile have invisible columns.
    if (i0 == j0 || i0 + kRows > T)
      mask_scores(s, w0, g, c2, [=](int r, int c) { return i0 + c < j0 + r || i0 + c >= T; });
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float2 l2 = warp::lds_f32x2(lcur + 4 * (8 * j + c2));  // lse of this lane's two query columns
      const float lse2[2] = {l2.x * kLog2e, l2.y * kLog2e};
#pragma unroll
      for (int e = 0; e < 4; ++e) s[j][e] = warp::exp2_approx(fmaf(s[j][e], scale_log2, -lse2[e & 1]));  // P^T
    }
    uint32_t pt[4][4];
    to_a_fragments(pt, s);
    mma_px<HS>(dv, pt, gcur, lo);  // dV += P^T dO
    float dp[8][4];
    zero(dp);
    mma_abt<HS>(dp, vs, w0, gcur, lo);  // dP^T = V dO^T
    // dS^T = P^T (dP^T - delta) from the bf16 P^T that dV used (its fp32 copy would cost 16 more registers per lane
    // while dP^T is computed; the rounding is the one dS^T gets anyway on its way into the next product). Element
    // (j, e) of an accumulator is half e % 2 of register 2 (j % 2) + e / 2 of A fragment j / 2 (to_a_fragments).
    uint32_t dst[4][4];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float2 d2 = warp::lds_f32x2(dcur + 4 * (8 * j + c2));  // delta of this lane's two query columns
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const uint32_t pair = pt[j / 2][2 * (j % 2) + h];
        dst[j / 2][2 * (j % 2) + h] = warp::pack_bf16x2(warp::bf16_lo(pair) * (dp[j][2 * h] - d2.x),
                                                        warp::bf16_hi(pair) * (dp[j][2 * h + 1] - d2.y));
      }
    }
    mma_px<HS>(dk, dst, qcur, lo);  // dK += dS^T Q
    warp::cp_async_wait<0>();       // step i + 1's copies ...
    warp::block_sync();             // ... everyone's; everyone is done reading step i's buffers
  }
  bf16* kv_rows = dqkv + std::int64_t{b} * T * W;
  store_rows<HS>(kv_rows + sh.k_col(kvh), W, dk, j0 + w0, T, scale, scale, lane);
  store_rows<HS>(kv_rows + sh.v_col(kvh), W, dv, j0 + w0, T, 1.0f, 1.0f, lane);
}

}  // namespace zeropp::e2e::cuda::flash_mma
