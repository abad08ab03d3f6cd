// The warp emulation itself (warp_emulation.hpp), before it is trusted to judge the flash kernels:
// - its fragment layouts against worked entries of the PTX ISA's figures for mma.m16n8k16 and ldmatrix;
// - mma.sync on fragments built by hand from the ISA's formulas, against a host matrix product;
// - the flash kernels' own fragment helpers (flash_mma_kernels.cuh: LaneOffsets' three ldmatrix patterns through
//   mma_abt and mma_px, to_a_fragments) against host matrix products;
// - that it reports what it claims to: races on shared memory, a read before cp.async.wait_group, divergence at a
//   warp-wide instruction, a warp returning while others wait at a barrier, global accesses outside the buffers.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "tests/e2e/flash_mma_emulation/warp_emulation.hpp"
// The kernels after the emulation's primitives, as they ask.
#include "e2e/backend/cuda/flash_mma_kernels.cuh"

namespace zeropp::emu {
namespace {

namespace warp = e2e::cuda::warp;
namespace fm = e2e::cuda::flash_mma;
using bf16 = __nv_bfloat16;

// One block of `threads` threads with `smem` bytes; the globals registered for the test's lifetime.
void run(unsigned threads, std::size_t smem, const std::function<void()>& kernel) {
  Launch how;
  how.grid = {1, 1, 1};
  how.block = {threads, 1, 1};
  how.smem_bytes = smem;
  how.host_threads = 1;
  launch(how, kernel);
}

class WarpEmulation : public ::testing::Test {
 protected:
  void SetUp() override {
    layout_mutation() = LayoutMutation::none;
    clear_globals();
  }
  void TearDown() override { clear_globals(); }
};

// ---- the layouts, entry by entry from the ISA's figures (g = lane / 4, q = lane % 4).
TEST_F(WarpEmulation, FragmentLayoutsMatchThePtxFigures) {
  // A (16 x 16): lane 0 holds a0, a1 = A[0][0..1], a2, a3 = A[8][0..1], a4, a5 = A[0][8..9], a6, a7 = A[8][8..9].
  EXPECT_EQ(a_coord(0, 0).row, 0);
  EXPECT_EQ(a_coord(0, 1).col, 1);
  EXPECT_EQ(a_coord(0, 2).row, 8);
  EXPECT_EQ(a_coord(0, 4).col, 8);
  EXPECT_EQ(a_coord(0, 7).row, 8);
  EXPECT_EQ(a_coord(0, 7).col, 9);
  // lane 31 (g 7, q 3): a0 = A[7][6], a3 = A[15][7], a4 = A[7][14], a7 = A[15][15].
  EXPECT_EQ(a_coord(31, 0).row, 7);
  EXPECT_EQ(a_coord(31, 0).col, 6);
  EXPECT_EQ(a_coord(31, 3).row, 15);
  EXPECT_EQ(a_coord(31, 3).col, 7);
  EXPECT_EQ(a_coord(31, 4).row, 7);
  EXPECT_EQ(a_coord(31, 4).col, 14);
  EXPECT_EQ(a_coord(31, 7).row, 15);
  EXPECT_EQ(a_coord(31, 7).col, 15);
  // B (16 x 8, k x n): lane 5 (g 1, q 1) holds b0, b1 = B[2..3][1], b2, b3 = B[10..11][1].
  EXPECT_EQ(b_coord(5, 0).row, 2);
  EXPECT_EQ(b_coord(5, 0).col, 1);
  EXPECT_EQ(b_coord(5, 1).row, 3);
  EXPECT_EQ(b_coord(5, 2).row, 10);
  EXPECT_EQ(b_coord(5, 3).row, 11);
  EXPECT_EQ(b_coord(5, 3).col, 1);
  // C (16 x 8): lane 6 (g 1, q 2) holds c0, c1 = C[1][4..5], c2, c3 = C[9][4..5].
  EXPECT_EQ(c_coord(6, 0).row, 1);
  EXPECT_EQ(c_coord(6, 0).col, 4);
  EXPECT_EQ(c_coord(6, 1).col, 5);
  EXPECT_EQ(c_coord(6, 2).row, 9);
  EXPECT_EQ(c_coord(6, 3).col, 5);
  // ldmatrix: lane 9 (row 2, columns 2..3 of each matrix); with .trans row 2 of the transpose: M[2..3][2].
  EXPECT_EQ(ldmatrix_coord(9, 0, false).row, 2);
  EXPECT_EQ(ldmatrix_coord(9, 1, false).col, 3);
  EXPECT_EQ(ldmatrix_coord(9, 0, true).row, 2);
  EXPECT_EQ(ldmatrix_coord(9, 1, true).row, 3);
  EXPECT_EQ(ldmatrix_coord(9, 1, true).col, 2);
}

// Matrix element values that are exact in bf16 and tell their position: 8 r + c (r, c < 16 needs 8 bits: exact).
float tag(int r, int c) { return static_cast<float>(16 * r + c); }

std::uint32_t pack(float lo, float hi) { return warp::pack_bf16x2(lo, hi); }
float lo(std::uint32_t r) { return bf16_to_float({static_cast<std::uint16_t>(r & 0xffffu)}); }
float hi(std::uint32_t r) { return bf16_to_float({static_cast<std::uint16_t>(r >> 16)}); }

// Stages a row-major bf16 matrix (rows x 8 k, k 16-byte pieces per row) from global to shared with cp.async, from
// every thread of a 32-thread block, then waits and synchronises.
void stage_all(std::uint32_t smem, const std::vector<bf16>& g) {
  const int pieces = static_cast<int>(g.size() * sizeof(bf16) / 16);
  for (int i = static_cast<int>(threadIdx.x); i < pieces; i += 32) warp::cp_async_16(smem + 16 * i, &g[8 * i], true);
  warp::cp_async_commit();
  warp::cp_async_wait<0>();
  warp::block_sync();
}

TEST_F(WarpEmulation, LdmatrixHandsOutRowsAndColumnsAsDocumented) {
  // Four 8 x 8 matrices, matrix i's element (r, c) = 64 i + 8 r + c, stored one after the other, row-major.
  std::vector<bf16> g(4 * 64);
  for (int i = 0; i < 256; ++i) g[i] = float_to_bf16(static_cast<float>(i));
  register_global(g.data(), g.size() * sizeof(bf16), false);
  std::uint32_t x4[32][4], t4[32][4], x2[32][2], x1t[32][1];
  run(32, 512, [&] {
    const std::uint32_t smem = warp::smem_addr(warp::dynamic_smem());
    stage_all(smem, g);
    const int l = static_cast<int>(threadIdx.x);
    std::uint32_t r4[4], r2[2], r1[1];
    // lane l addresses row l % 8 of matrix l / 8
    warp::ldmatrix_x4(r4, smem + (l / 8) * 128 + (l % 8) * 16);
    std::memcpy(x4[l], r4, sizeof r4);
    warp::ldmatrix_x4_trans(r4, smem + (l / 8) * 128 + (l % 8) * 16);
    std::memcpy(t4[l], r4, sizeof r4);
    // .x2 uses lanes 0-15's addresses: give the others an address that would show (matrix 3) if it were used
    warp::ldmatrix_x2(r2, smem + (l < 16 ? (l / 8) * 128 + (l % 8) * 16 : 3 * 128));
    std::memcpy(x2[l], r2, sizeof r2);
    warp::ldmatrix_x1(r1, smem + (l < 8 ? 2 * 128 + l * 16 : 0), true);
    std::memcpy(x1t[l], r1, sizeof r1);
  });
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 4; ++i) {
      const int r = l / 4, c = 2 * (l % 4);
      EXPECT_EQ(lo(x4[l][i]), 64 * i + 8 * r + c) << "lane " << l << " matrix " << i;
      EXPECT_EQ(hi(x4[l][i]), 64 * i + 8 * r + c + 1) << "lane " << l << " matrix " << i;
      EXPECT_EQ(lo(t4[l][i]), 64 * i + 8 * c + r) << "lane " << l << " matrix " << i << " .trans";
      EXPECT_EQ(hi(t4[l][i]), 64 * i + 8 * (c + 1) + r) << "lane " << l << " matrix " << i << " .trans";
      if (i < 2) {
        EXPECT_EQ(lo(x2[l][i]), 64 * i + 8 * r + c) << "lane " << l << " .x2 matrix " << i;
      }
      if (i == 0) {
        EXPECT_EQ(lo(x1t[l][0]), 128 + 8 * c + r) << "lane " << l << " .x1.trans";
        EXPECT_EQ(hi(x1t[l][0]), 128 + 8 * (c + 1) + r) << "lane " << l << " .x1.trans";
      }
    }
}

// mma.sync on fragments written from the ISA's formulas (not the emulator's tables): D = A B + C for A[m][k] = tag,
// B[k][n] = (k - n) / 4, C[m][n] = m - n.
TEST_F(WarpEmulation, MmaOfHandBuiltFragmentsIsTheMatrixProduct) {
  float d[32][4];
  run(32, 0, [&] {
    const int l = static_cast<int>(threadIdx.x), g = l / 4, q = l % 4;
    auto A = [](int m, int k) { return tag(m, k); };
    auto B = [](int k, int n) { return static_cast<float>(k - n) / 4.0f; };
    const std::uint32_t a[4] = {pack(A(g, 2 * q), A(g, 2 * q + 1)), pack(A(g + 8, 2 * q), A(g + 8, 2 * q + 1)),
                                pack(A(g, 2 * q + 8), A(g, 2 * q + 9)), pack(A(g + 8, 2 * q + 8), A(g + 8, 2 * q + 9))};
    const std::uint32_t b0 = pack(B(2 * q, g), B(2 * q + 1, g)), b1 = pack(B(2 * q + 8, g), B(2 * q + 9, g));
    float acc[4] = {static_cast<float>(g - 2 * q), static_cast<float>(g - 2 * q - 1), static_cast<float>(g + 8 - 2 * q),
                    static_cast<float>(g + 8 - 2 * q - 1)};
    warp::mma_bf16(acc, a, b0, b1);
    std::memcpy(d[l], acc, sizeof acc);
  });
  for (int l = 0; l < 32; ++l)
    for (int e = 0; e < 4; ++e) {
      const int m = l / 4 + 8 * (e / 2), n = 2 * (l % 4) + e % 2;
      double want = m - n;
      for (int k = 0; k < 16; ++k) want += double(tag(m, k)) * (k - n) / 4.0;
      EXPECT_EQ(d[l][e], static_cast<float>(want)) << "lane " << l << " element " << e;
    }
}

// The kernels' helpers on random bf16 tiles staged as the kernels stage them (row stride HS + kPad): mma_abt gives
// A B^T, to_a_fragments turns its C fragments into A fragments, mma_px gives P X.
TEST_F(WarpEmulation, FlashKernelFragmentHelpersMultiplyCorrectly) {
  constexpr int HS = 64, ld = fm::Smem<HS>::ld;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<bf16> a(16 * ld), b(64 * ld), x(64 * ld);
  for (auto* v : {&a, &b, &x})
    for (auto& e : *v) e = float_to_bf16(normal(rng));
  for (auto* v : {&a, &b, &x}) register_global(v->data(), v->size() * sizeof(bf16), false);
  float s_out[32][8][4], o_out[32][HS / 8][4];
  run(32, (16 + 128) * ld * sizeof(bf16), [&] {
    const std::uint32_t as = warp::smem_addr(warp::dynamic_smem());
    const std::uint32_t bs = as + fm::tile_bytes<HS>(16, 0), xs = bs + fm::tile_bytes<HS>(64, 0);
    const int l = static_cast<int>(threadIdx.x);
    for (auto [dst, src, rows] : {std::tuple{as, &a, 16}, std::tuple{bs, &b, 64}, std::tuple{xs, &x, 64}})
      for (int i = l; i < rows * ld / 8; i += 32) warp::cp_async_16(dst + 16 * i, src->data() + 8 * i, true);
    warp::cp_async_commit();
    warp::cp_async_wait<0>();
    warp::block_sync();
    const fm::LaneOffsets<HS> lo(l);
    float s[8][4] = {};
    fm::mma_abt<HS>(s, as, 0, bs, lo);
    std::memcpy(s_out[l], s, sizeof s);
    std::uint32_t p[4][4];
    fm::to_a_fragments(p, s);  // S itself as the 16 x 64 left factor
    float o[HS / 8][4] = {};
    fm::mma_px<HS>(o, p, xs, lo);
    std::memcpy(o_out[l], o, sizeof o);
  });
  auto at = [&](const std::vector<bf16>& m, int r, int c) { return double(bf16_to_float(m[std::size_t(r) * ld + c])); };
  double S[16][64], worst_s = 0, worst_o = 0;
  for (int r = 0; r < 16; ++r)
    for (int n = 0; n < 64; ++n) {
      S[r][n] = 0;
      for (int k = 0; k < HS; ++k) S[r][n] += at(a, r, k) * at(b, n, k);
    }
  for (int l = 0; l < 32; ++l)
    for (int j = 0; j < 8; ++j)
      for (int e = 0; e < 4; ++e)
        worst_s = std::max(worst_s, std::abs(s_out[l][j][e] - S[l / 4 + 8 * (e / 2)][8 * j + 2 * (l % 4) + e % 2]));
  for (int l = 0; l < 32; ++l)
    for (int j = 0; j < HS / 8; ++j)
      for (int e = 0; e < 4; ++e) {
        const int r = l / 4 + 8 * (e / 2), c = 8 * j + 2 * (l % 4) + e % 2;
        double want = 0;  // the bf16-rounded S (what the A fragments hold) times X
        for (int k = 0; k < 64; ++k) want += double(bf16_to_float(float_to_bf16(float(S[r][k])))) * at(x, k, c);
        worst_o = std::max(worst_o, std::abs(o_out[l][j][e] - want) / (1.0 + std::abs(want)));
      }
  // fp32 rounding of sums of 64 products of size ~1 (S) and of ~8 (O): far below any layout error (order 1).
  EXPECT_LT(worst_s, 1e-4);
  EXPECT_LT(worst_o, 1e-4);
}

// ---- what the emulation must report.
TEST_F(WarpEmulation, ReportsAReadOfAnotherThreadsCopyWithoutABarrier) {
  std::vector<bf16> g(8 * 32);
  register_global(g.data(), g.size() * sizeof(bf16), false);
  try {
    run(32, 512, [&] {
      const std::uint32_t smem = warp::smem_addr(warp::dynamic_smem());
      const int l = static_cast<int>(threadIdx.x);
      warp::cp_async_16(smem + 16 * l, &g[8 * l], true);
      warp::cp_async_commit();
      warp::cp_async_wait<0>();
      // no block_sync: lane l's row was copied by lane l, but ldmatrix reads matrix rows other lanes copied
      std::uint32_t r[4];
      warp::ldmatrix_x4(r, smem + 16 * ((l + 1) % 32));
    });
    FAIL() << "no fault reported";
  } catch (const EmulationError& e) {
    EXPECT_NE(std::string(e.what()).find("no __syncthreads"), std::string::npos) << e.what();
  }
}

TEST_F(WarpEmulation, ReportsAReadBeforeTheCopyCompletes) {
  std::vector<float> g(64);
  register_global(g.data(), g.size() * sizeof(float), false);
  try {
    run(32, 256, [&] {
      const std::uint32_t smem = warp::smem_addr(warp::dynamic_smem());
      const int l = static_cast<int>(threadIdx.x);
      warp::cp_async_4(smem + 8 * l, &g[2 * l], true);
      warp::cp_async_4(smem + 8 * l + 4, &g[2 * l + 1], true);
      warp::cp_async_commit();
      warp::lds_f32x2(smem + 8 * l);  // its own words, not waited for
    });
    FAIL() << "no fault reported";
  } catch (const EmulationError& e) {
    EXPECT_NE(std::string(e.what()).find("not complete"), std::string::npos) << e.what();
  }
}

TEST_F(WarpEmulation, ReportsACopyOverDataOthersStillRead) {
  std::vector<bf16> g(8 * 64);
  register_global(g.data(), g.size() * sizeof(bf16), false);
  try {
    run(64, 1024, [&] {
      const std::uint32_t smem = warp::smem_addr(warp::dynamic_smem());
      const int t = static_cast<int>(threadIdx.x), l = t % 32;
      warp::cp_async_16(smem + 16 * t, &g[8 * t], true);
      warp::cp_async_commit();
      warp::cp_async_wait<0>();
      warp::block_sync();
      std::uint32_t r[4];
      warp::ldmatrix_x4(r, smem + 16 * l);  // both warps read rows 0-31
      // no barrier: warp 1 refills rows 0-31 (warp 0's reads of them are in the same barrier interval)
      if (t >= 32) warp::cp_async_16(smem + 16 * l, &g[8 * l], true);
      warp::cp_async_commit();
      warp::cp_async_wait<0>();
      warp::block_sync();
    });
    FAIL() << "no fault reported";
  } catch (const EmulationError& e) {
    EXPECT_NE(std::string(e.what()).find("no __syncthreads"), std::string::npos) << e.what();
  }
}

TEST_F(WarpEmulation, ReportsDivergenceAtAWarpInstruction) {
  try {
    run(32, 0, [&] {
      if (threadIdx.x < 16) warp::shfl_xor(1.0f, 1);
      warp::shfl_xor(2.0f, 2);
    });
    FAIL() << "no fault reported";
  } catch (const EmulationError& e) {
    EXPECT_NE(std::string(e.what()).find("divergence"), std::string::npos) << e.what();
  }
}

TEST_F(WarpEmulation, ReportsAWarpReturningWhileOthersWaitAtABarrier) {
  try {
    run(64, 0, [&] {
      if (threadIdx.x < 32) return;
      warp::block_sync();
    });
    FAIL() << "no fault reported";
  } catch (const EmulationError& e) {
    EXPECT_NE(std::string(e.what()).find("wait at __syncthreads"), std::string::npos) << e.what();
  }
}

TEST_F(WarpEmulation, ReportsGlobalAccessesOutsideTheBuffers) {
  std::vector<float> in(4), out(4);
  register_global(in.data(), in.size() * sizeof(float), false);
  register_global(out.data(), out.size() * sizeof(float), true);
  EXPECT_THROW(run(32, 0, [&] { warp::store_f32(out.data() + 4, 1.0f); }), EmulationError);  // past the end
  EXPECT_THROW(run(32, 0, [&] { warp::store_f32(in.data(), 1.0f); }), EmulationError);       // read-only
  EXPECT_THROW(run(32, 0, [&] { warp::load_f32(in.data() + 4); }), EmulationError);
  // every thread stores once to its own element: counted
  run(32, 0, [&] {
    if (threadIdx.x < 4) warp::store_f32(out.data() + threadIdx.x, 2.0f);
  });
  const auto counts = writes_of(out.data(), out.size() * sizeof(float));
  for (unsigned c : counts) EXPECT_EQ(c, 1u);
}

}  // namespace
}  // namespace zeropp::emu
