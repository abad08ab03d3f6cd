// The CUDA backend against the CPU backend, operation by operation, on small shapes with fresh random inputs
// (inputs, tolerances and the fixture: tests/e2e/cuda_test_fixture.hpp). Without a GPU every test skips with a
// message (CI machines have none).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "e2e/backend/cpu_backend.hpp"
#include "e2e/backend/cuda/cuda_backend.hpp"
#include "e2e/backend/cuda/kernels.cuh"
#include "tests/e2e/cuda_test_fixture.hpp"

namespace zeropp::e2e {
namespace {

TEST_F(CudaBackendTest, GemmAllTransposesWithStridesAndBeta) {
  const int M = 24, N = 40, K = 56, pad = 8;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      const int a_rows = ta ? K : M, a_cols = ta ? M : K, b_rows = tb ? N : K, b_cols = tb ? K : N;
      const int lda = a_cols + pad, ldb = b_cols + pad, ldc = N + pad;
      const auto a = random_bf16(std::size_t(a_rows) * lda, rng), b = random_bf16(std::size_t(b_rows) * ldb, rng);
      const auto c = random_bf16(std::size_t(M) * ldc, rng);
      Buffer ga = up(a), gb = up(b), gc = up(c);
      Buffer ca = cpu_up(a), cb = cpu_up(b), cc = cpu_up(c);
      gpu->gemm(ta, tb, M, N, K, 0.5f, ga.view(), lda, gb.view(), ldb, 1.0f, gc.view(), ldc);
      cpu.gemm(ta, tb, M, N, K, 0.5f, ca.view(), lda, cb.view(), ldb, 1.0f, cc.view(), ldc);
      EXPECT_LT(rel_err(down(gc.view()), cpu_down(cc.view())), kBf16Out) << "trans_a=" << ta << " trans_b=" << tb;
    }
}

TEST_F(CudaBackendTest, LinearForwardBackward) {
  const int N = 32, IC = 48, OC = 80;
  const auto x = random_bf16(std::size_t(N) * IC, rng), w = random_bf16(std::size_t(OC) * IC, rng, 0.2f);
  const auto bias = random_bf16(OC, rng), dy = random_bf16(std::size_t(N) * OC, rng);
  const auto dx0 = random_bf16(std::size_t(N) * IC, rng), dw0 = random_bf16(std::size_t(OC) * IC, rng);
  const auto db0 = random_bf16(OC, rng);
  Buffer gx = up(x), gw = up(w), gb = up(bias), gdy = up(dy), gout = poisoned(std::size_t(N) * OC);
  Buffer cx = cpu_up(x), cw = cpu_up(w), cb = cpu_up(bias), cdy = cpu_up(dy), cout(cpu, std::int64_t(N) * OC);
  gpu->linear_forward(gout.view(), gx.view(), gw.view(), gb.view(), N, IC, OC);
  cpu.linear_forward(cout.view(), cx.view(), cw.view(), cb.view(), N, IC, OC);
  EXPECT_LT(rel_err(down(gout.view()), cpu_down(cout.view())), kBf16Out) << "forward with the bias epilogue";

  Buffer gdx = up(dx0), cdx = cpu_up(dx0);  // accumulate into existing values
  gpu->linear_backward_input(gdx.view(), gdy.view(), gw.view(), N, IC, OC, true);
  cpu.linear_backward_input(cdx.view(), cdy.view(), cw.view(), N, IC, OC, true);
  EXPECT_LT(rel_err(down(gdx.view()), cpu_down(cdx.view())), kBf16Out) << "input gradient (accumulate)";

  Buffer gdw = up(dw0, DType::f32), gdb = up(db0, DType::f32), cdw = cpu_up(dw0), cdb = cpu_up(db0);
  gpu->linear_backward_weight(gdw.view(), gdb.view(), gdy.view(), gx.view(), N, IC, OC);
  cpu.linear_backward_weight(cdw.view(), cdb.view(), cdy.view(), cx.view(), N, IC, OC);
  EXPECT_LT(rel_err(down(gdw.view()), cpu_down(cdw.view())), kF32Out) << "weight gradient (fp32, accumulated)";
  EXPECT_LT(rel_err(down(gdb.view()), cpu_down(cdb.view())), kF32Out) << "bias gradient (fp32, accumulated)";
}

// Shapes for both kernel pairs (layernorm_vectorized): C = 96 and 2048 take the 16-byte kernels (2048: 8 vectors per
// lane), C = 100 the 2-byte ones; weight and bias one element into their buffers (woff = 1, as a view into a flat
// parameter buffer can be) take the vector kernels' element-load path.
TEST_F(CudaBackendTest, LayerNorm) {
  struct Shape {
    int N, C, woff;
  };
  for (const Shape& s : {Shape{37, 96, 0}, Shape{37, 100, 0}, Shape{19, 2048, 0}, Shape{37, 96, 1}}) {
    const int N = s.N, C = s.C;  // N not a multiple of the 8 rows per warp-block
    SCOPED_TRACE("N " + std::to_string(N) + " C " + std::to_string(C) + " weight offset " + std::to_string(s.woff));
    const auto x = random_bf16(std::size_t(N) * C, rng, 2.0f);
    const auto w = random_bf16(std::size_t(C + s.woff), rng), b = random_bf16(std::size_t(C + s.woff), rng);
    const auto dy = random_bf16(std::size_t(N) * C, rng), dx0 = random_bf16(std::size_t(N) * C, rng);
    const auto dw0 = random_bf16(C, rng), db0 = random_bf16(C, rng);
    Buffer gx = up(x), gwb = up(w), gbb = up(b), gout = poisoned(std::size_t(N) * C);
    const Tensor gw = gwb.view().slice(s.woff, C), gb = gbb.view().slice(s.woff, C);
    const std::vector<float> wc(w.begin() + s.woff, w.end()), bc(b.begin() + s.woff, b.end());
    EXPECT_EQ(cuda::layernorm_vectorized(C, gout.view().data, gx.view().data), C % 8 == 0);
    Buffer gmean = poisoned(N, DType::f32), grstd = poisoned(N, DType::f32);
    Buffer cx = cpu_up(x), cw = cpu_up(wc), cb = cpu_up(bc), cout(cpu, std::int64_t(N) * C), cmean(cpu, N),
           crstd(cpu, N);
    gpu->layernorm_forward(gout.view(), gmean.view(), grstd.view(), gx.view(), gw, gb, N, C);
    cpu.layernorm_forward(cout.view(), cmean.view(), crstd.view(), cx.view(), cw.view(), cb.view(), N, C);
    EXPECT_LT(rel_err(down(gout.view()), cpu_down(cout.view())), kBf16Out);
    EXPECT_LT(rel_err(down(gmean.view()), cpu_down(cmean.view())), kF32Out);
    EXPECT_LT(rel_err(down(grstd.view()), cpu_down(crstd.view())), kF32Out);

    // The backward from the same (CPU) statistics on both sides.
    const auto mean = cpu_down(cmean.view()), rstd = cpu_down(crstd.view());
    Buffer gm = up(mean, DType::f32), gr = up(rstd, DType::f32), gdy = up(dy), gdx = up(dx0);
    Buffer cdy = cpu_up(dy), cdx = cpu_up(dx0);
    gpu->layernorm_backward_input(gdx.view(), gdy.view(), gx.view(), gm.view(), gr.view(), gw, N, C, true);
    cpu.layernorm_backward_input(cdx.view(), cdy.view(), cx.view(), cmean.view(), crstd.view(), cw.view(), N, C, true);
    EXPECT_LT(rel_err(down(gdx.view()), cpu_down(cdx.view())), kBf16Out) << "input gradient (accumulate)";
    Buffer gdx2 = poisoned(std::size_t(N) * C), cdx2(cpu, std::int64_t(N) * C);
    gpu->layernorm_backward_input(gdx2.view(), gdy.view(), gx.view(), gm.view(), gr.view(), gw, N, C, false);
    cpu.layernorm_backward_input(cdx2.view(), cdy.view(), cx.view(), cmean.view(), crstd.view(), cw.view(), N, C,
                                 false);
    EXPECT_LT(rel_err(down(gdx2.view()), cpu_down(cdx2.view())), kBf16Out) << "input gradient (overwrite)";
    Buffer gdw = up(dw0, DType::f32), gdb = up(db0, DType::f32), cdw = cpu_up(dw0), cdb = cpu_up(db0);
    gpu->layernorm_backward_weight(gdw.view(), gdb.view(), gdy.view(), gx.view(), gm.view(), gr.view(), N, C);
    cpu.layernorm_backward_weight(cdw.view(), cdb.view(), cdy.view(), cx.view(), cmean.view(), crstd.view(), N, C);
    EXPECT_LT(rel_err(down(gdw.view()), cpu_down(cdw.view())), kF32Out) << "weight gradient";
    EXPECT_LT(rel_err(down(gdb.view()), cpu_down(cdb.view())), kF32Out) << "bias gradient";
  }
}

TEST_F(CudaBackendTest, Gelu) {
  const std::int64_t n = 5003;  // 625 vectors of 8 and 3 elements one by one (kernels.cu, map_bf16)
  const auto x = random_bf16(n, rng, 2.0f), dy = random_bf16(n, rng);
  Buffer gx = up(x), gdy = up(dy), gout = poisoned(n), gdx = poisoned(n);
  Buffer cx = cpu_up(x), cdy = cpu_up(dy), cout(cpu, n), cdx(cpu, n);
  gpu->gelu_forward(gout.view(), gx.view(), n);
  cpu.gelu_forward(cout.view(), cx.view(), n);
  EXPECT_LT(rel_err(down(gout.view()), cpu_down(cout.view())), kBf16Out);
  gpu->gelu_backward(gdx.view(), gx.view(), gdy.view(), n);
  cpu.gelu_backward(cdx.view(), cx.view(), cdy.view(), n);
  EXPECT_LT(rel_err(down(gdx.view()), cpu_down(cdx.view())), kBf16Out);
}

TEST_F(CudaBackendTest, CausalAttention) {
  const int B = 2, T = 24, C = 64, NH = 4;
  const std::size_t nqkv = std::size_t(B) * T * 3 * C, nout = std::size_t(B) * T * C,
                    natt = std::size_t(B) * NH * T * T;
  const auto qkv = random_bf16(nqkv, rng), dy = random_bf16(nout, rng);
  Buffer gqkv = up(qkv), gout = poisoned(nout), gatt = poisoned(natt);
  Buffer cqkv = cpu_up(qkv), cout(cpu, std::int64_t(nout)), catt(cpu, std::int64_t(natt));
  gpu->attention_forward(gout.view(), gatt.view(), gqkv.view(), B, T, C, NH);
  cpu.attention_forward(cout.view(), catt.view(), cqkv.view(), B, T, C, NH);
  EXPECT_LT(rel_err(down(gatt.view()), cpu_down(catt.view())), kBf16Out) << "probabilities (zero above the diagonal)";
  EXPECT_LT(rel_err(down(gout.view()), cpu_down(cout.view())), kBf16Out) << "output";
  // Backward from the same probabilities on both sides.
  Buffer gp = up(cpu_down(catt.view())), gdy = up(dy), gdqkv = poisoned(nqkv);
  Buffer cdy = cpu_up(dy), cdqkv(cpu, std::int64_t(nqkv));
  // The CPU reference reads the bf16-rounded probabilities too.
  auto p_rounded = cpu_down(catt.view());
  for (auto& v : p_rounded) v = round_bf16(v);
  Buffer cp = cpu_up(p_rounded);
  gpu->attention_backward(gdqkv.view(), gdy.view(), gqkv.view(), gp.view(), B, T, C, NH);
  cpu.attention_backward(cdqkv.view(), cdy.view(), cqkv.view(), cp.view(), B, T, C, NH);
  EXPECT_LT(rel_err(down(gdqkv.view()), cpu_down(cdqkv.view())), kBf16Out) << "dq, dk, dv";
}

// ---- the Llama layers and the attention kernels (issue 22). Same tolerances; the flash kernels accumulate in
// fp32 with bf16 inputs and outputs, as the unfused path's GEMMs do, so kBf16Out holds for them too (a sum of
// fewer bf16 roundings: scores and probabilities never leave registers).

TEST_F(CudaBackendTest, RmsNorm) {
  const int N = 37, C = 96;
  const auto x = random_bf16(std::size_t(N) * C, rng, 2.0f), w = random_bf16(C, rng);
  const auto dy = random_bf16(std::size_t(N) * C, rng), dx0 = random_bf16(std::size_t(N) * C, rng);
  const auto dw0 = random_bf16(C, rng);
  Buffer gx = up(x), gw = up(w), gout = poisoned(std::size_t(N) * C), grstd = poisoned(N, DType::f32);
  Buffer cx = cpu_up(x), cw = cpu_up(w), cout(cpu, std::int64_t(N) * C), crstd(cpu, N);
  gpu->rmsnorm_forward(gout.view(), grstd.view(), gx.view(), gw.view(), N, C);
  cpu.rmsnorm_forward(cout.view(), crstd.view(), cx.view(), cw.view(), N, C);
  EXPECT_LT(rel_err(down(gout.view()), cpu_down(cout.view())), kBf16Out);
  EXPECT_LT(rel_err(down(grstd.view()), cpu_down(crstd.view())), kF32Out);
  Buffer gr = up(cpu_down(crstd.view()), DType::f32), gdy = up(dy), gdx = up(dx0), cdy = cpu_up(dy), cdx = cpu_up(dx0);
  gpu->rmsnorm_backward_input(gdx.view(), gdy.view(), gx.view(), gr.view(), gw.view(), N, C, true);
  cpu.rmsnorm_backward_input(cdx.view(), cdy.view(), cx.view(), crstd.view(), cw.view(), N, C, true);
  EXPECT_LT(rel_err(down(gdx.view()), cpu_down(cdx.view())), kBf16Out) << "input gradient (accumulate)";
  Buffer gdw = up(dw0, DType::f32), cdw = cpu_up(dw0);
  gpu->rmsnorm_backward_weight(gdw.view(), gdy.view(), gx.view(), gr.view(), N, C);
  cpu.rmsnorm_backward_weight(cdw.view(), cdy.view(), cx.view(), crstd.view(), N, C);
  EXPECT_LT(rel_err(down(gdw.view()), cpu_down(cdw.view())), kF32Out) << "weight gradient";
}

TEST_F(CudaBackendTest, Swiglu) {
  const int N = 33, F = 70;
  const auto x = random_bf16(std::size_t(N) * 2 * F, rng, 2.0f), dy = random_bf16(std::size_t(N) * F, rng);
  Buffer gx = up(x), gdy = up(dy), gout = poisoned(std::size_t(N) * F), gdx = poisoned(std::size_t(N) * 2 * F);
  Buffer cx = cpu_up(x), cdy = cpu_up(dy), cout(cpu, std::int64_t(N) * F), cdx(cpu, std::int64_t(N) * 2 * F);
  gpu->swiglu_forward(gout.view(), gx.view(), N, F);
  cpu.swiglu_forward(cout.view(), cx.view(), N, F);
  EXPECT_LT(rel_err(down(gout.view()), cpu_down(cout.view())), kBf16Out);
  gpu->swiglu_backward(gdx.view(), gx.view(), gdy.view(), N, F);
  cpu.swiglu_backward(cdx.view(), cx.view(), cdy.view(), N, F);
  EXPECT_LT(rel_err(down(gdx.view()), cpu_down(cdx.view())), kBf16Out) << "gate and up gradients";
}

TEST_F(CudaBackendTest, Rope) {
  const int B = 2, T = 40, NH = 4, KVH = 2, hs = 32, N = B * T;
  const std::size_t n = std::size_t(N) * (NH + 2 * KVH) * hs;
  for (int rot : {hs, hs / 4}) {
    const auto x = random_bf16(n, rng);
    Buffer gx = up(x), cx = cpu_up(x);
    gpu->rope(gx.view(), N, T, NH, KVH, hs, rot, 500000.0, false, 0);
    cpu.rope(cx.view(), N, T, NH, KVH, hs, rot, 500000.0, false, 0);
    EXPECT_LT(rel_err(down(gx.view()), cpu_down(cx.view())), kBf16Out) << "rotary dims " << rot;
    gpu->rope(gx.view(), N, T, NH, KVH, hs, rot, 500000.0, true, 0);  // the inverse undoes it (up to bf16 rounding)
    EXPECT_LT(rel_err(down(gx.view()), x), kBf16Out) << "inverse, rotary dims " << rot;
    // A context-parallel rank's chunk: T rows at positions 100..139 (pos0 = 100).
    Buffer gy = up(x), cy = cpu_up(x);
    gpu->rope(gy.view(), N, T, NH, KVH, hs, rot, 500000.0, false, 100);
    cpu.rope(cy.view(), N, T, NH, KVH, hs, rot, 500000.0, false, 100);
    EXPECT_LT(rel_err(down(gy.view()), cpu_down(cy.view())), kBf16Out) << "pos0 100, rotary dims " << rot;
  }
}

// T = 24 takes the softmax kernels' 16-byte path (T % 8 == 0), T = 21 the scalar one (kernels.cu).
TEST_F(CudaBackendTest, GroupedQueryAttentionUnfused) {
  const int B = 2, NH = 4, KVH = 2, hs = 16, W = (NH + 2 * KVH) * hs, C = NH * hs;
  for (const int T : {24, 21}) {
    const std::size_t nqkv = std::size_t(B) * T * W, nout = std::size_t(B) * T * C, natt = std::size_t(B) * NH * T * T;
    const auto qkv = random_bf16(nqkv, rng), dy = random_bf16(nout, rng);
    Buffer gqkv = up(qkv), gout = poisoned(nout), gatt = poisoned(natt);
    Buffer cqkv = cpu_up(qkv), cout(cpu, std::int64_t(nout)), catt(cpu, std::int64_t(natt));
    gpu->grouped_attention_forward(gout.view(), gatt.view(), gqkv.view(), B, T, NH, KVH, hs);
    cpu.grouped_attention_forward(cout.view(), catt.view(), cqkv.view(), B, T, NH, KVH, hs);
    EXPECT_LT(rel_err(down(gatt.view()), cpu_down(catt.view())), kBf16Out) << "probabilities";
    EXPECT_LT(rel_err(down(gout.view()), cpu_down(cout.view())), kBf16Out) << "output";
    auto p_rounded = cpu_down(catt.view());
    for (auto& v : p_rounded) v = round_bf16(v);
    Buffer gp = up(p_rounded), cp = cpu_up(p_rounded), gdy = up(dy), cdy = cpu_up(dy), gdqkv = poisoned(nqkv);
    Buffer cdqkv(cpu, std::int64_t(nqkv));
    gpu->grouped_attention_backward(gdqkv.view(), gdy.view(), gqkv.view(), gp.view(), B, T, NH, KVH, hs);
    cpu.grouped_attention_backward(cdqkv.view(), cdy.view(), cqkv.view(), cp.view(), B, T, NH, KVH, hs);
    EXPECT_LT(rel_err(down(gdqkv.view()), cpu_down(cdqkv.view())), kBf16Out)
        << "dq, dk, dv (summed over the group), T " << T;
  }
}

// Shapes: several 32-row tiles with a partial last one (T = 70), a head of 96 (not a multiple of the warp), the
// largest head the kernels take (256), grouped and multi-query heads.
TEST_F(CudaBackendTest, FlashAttentionForwardAndBackward) {
  struct Shape {
    int B, T, NH, KVH, hs;
  };
  for (const Shape& s :
       {Shape{2, 70, 4, 2, 16}, Shape{1, 45, 2, 1, 96}, Shape{1, 33, 2, 2, 256}, Shape{2, 8, 4, 4, 8}}) {
    const int W = (s.NH + 2 * s.KVH) * s.hs, C = s.NH * s.hs;
    const std::size_t nqkv = std::size_t(s.B) * s.T * W, nout = std::size_t(s.B) * s.T * C;
    const std::size_t nlse = std::size_t(s.B) * s.NH * s.T;
    const auto qkv = random_bf16(nqkv, rng), dy = random_bf16(nout, rng);
    Buffer gqkv = up(qkv), gout = poisoned(nout), glse = poisoned(nlse, DType::f32);
    Buffer cqkv = cpu_up(qkv), cout(cpu, std::int64_t(nout)), clse(cpu, std::int64_t(nlse));
    gpu->flash_attention_forward(gout.view(), glse.view(), gqkv.view(), s.B, s.T, s.NH, s.KVH, s.hs);
    cpu.flash_attention_forward(cout.view(), clse.view(), cqkv.view(), s.B, s.T, s.NH, s.KVH, s.hs);
    EXPECT_LT(rel_err(down(gout.view()), cpu_down(cout.view())), kBf16Out) << "output, hs " << s.hs;
    EXPECT_LT(rel_err(down(glse.view()), cpu_down(clse.view())), kF32Out) << "log-sum-exp, hs " << s.hs;
    // The backward from the same forward results (the CPU's, output rounded to bf16) on both sides.
    auto out_rounded = cpu_down(cout.view());
    for (auto& v : out_rounded) v = round_bf16(v);
    const auto lse = cpu_down(clse.view());
    Buffer go = up(out_rounded), gl = up(lse, DType::f32), gdy = up(dy), gdqkv = poisoned(nqkv);
    Buffer co = cpu_up(out_rounded), cl = cpu_up(lse), cdy = cpu_up(dy), cdqkv(cpu, std::int64_t(nqkv));
    gpu->flash_attention_backward(gdqkv.view(), gdy.view(), go.view(), gl.view(), gqkv.view(), s.B, s.T, s.NH, s.KVH,
                                  s.hs);
    cpu.flash_attention_backward(cdqkv.view(), cdy.view(), co.view(), cl.view(), cqkv.view(), s.B, s.T, s.NH, s.KVH,
                                 s.hs);
    EXPECT_LT(rel_err(down(gdqkv.view()), cpu_down(cdqkv.view())), kBf16Out) << "dq, dk, dv, hs " << s.hs;
  }
}

TEST_F(CudaBackendTest, FlashAttentionRefusesHeadsWiderThanItsTiles) {
  const int T = 4, hs = cuda::kFlashMaxHead + 2;
  Buffer qkv = up(random_bf16(std::size_t(T) * 3 * hs, rng)), out = poisoned(std::size_t(T) * hs);
  Buffer lse = poisoned(T, DType::f32);
  EXPECT_THROW(gpu->flash_attention_forward(out.view(), lse.view(), qkv.view(), 1, T, 1, 1, hs), std::invalid_argument);
}

// ---- the flash kernels, each asked for by name: mma.sync (e2e/backend/cuda/flash_mma.cu), WMMA (flash_tc.cu) and
// scalar, at the head sizes that matter (128: Llama-3 8B's 4096 / 32 heads; 64: the other common one). T covers a
// single row, partial tiles (17, 70 = 64 + 6, 130 = 2 x 64 + 2, 257 = 4 x 64 + 1), exactly one tile (64) and, for
// the mma kernels at hs 128, heads 8/2 and one sequence, 16 tiles (1024); heads 4/4 (MHA) and 8/2 (GQA, groups of
// 4); one and two sequences. Besides the norm-wise kBf16Out of the whole-tensor comparisons above, every element is
// checked: |gpu - cpu| <= kBf16Elem (|cpu| + rms(cpu)). Expected error per element: the output's own bf16
// rounding (2^-9 |cpu|, covered by the |cpu| term) plus the bf16 roundings of P (and dS) inside fp32 sums, which are a
// few 2^-9 of the row's scale (rms); 0.1 leaves a wide margin against false failures while an index or mask error (a
// missing, extra or misplaced key or row) moves an element by the order of rms(cpu) and fails. Split by dq, dk, dv so
// that a wrong part cannot hide in the norm of the others. (The host emulation of the mma kernels,
// tests/e2e/flash_mma_emulation, checks them against fp64 at the same bounds without a GPU.)
constexpr double kBf16Elem = 0.1;

// Columns [c0, c0 + n) of rows of width `width`.
std::vector<float> columns(const std::vector<float>& rows, int width, int c0, int n) {
  std::vector<float> out;
  for (std::size_t r = 0; r + width <= rows.size(); r += width)
    out.insert(out.end(), rows.begin() + std::ptrdiff_t(r + c0), rows.begin() + std::ptrdiff_t(r + c0 + n));
  return out;
}

const char* kernel_name(cuda::FlashKernel k) {
  switch (k) {
    case cuda::FlashKernel::mma: return "mma.sync";
    case cuda::FlashKernel::tensor_cores: return "WMMA";
    case cuda::FlashKernel::scalar: return "scalar";
    case cuda::FlashKernel::automatic: return "auto";
  }
  return "?";
}

TEST_F(CudaBackendTest, FlashAttentionKernelsAgainstCpuAtModelHeadSizes) {
  for (const int hs : {64, 128})
    for (const int T : {1, 17, 64, 70, 130, 257, 1024})
      for (const auto& [NH, KVH] : {std::pair{4, 4}, std::pair{8, 2}})
        for (const int B : {1, 2}) {
          // 16 tiles once (the CPU reference's time: 16 times T = 257's), at Llama-3 8B's head size and grouping
          if (T == 1024 && (hs != 128 || NH != 8 || B != 1)) continue;
          const int W = (NH + 2 * KVH) * hs, C = NH * hs;
          const std::size_t nqkv = std::size_t(B) * T * W, nout = std::size_t(B) * T * C;
          const std::size_t nlse = std::size_t(B) * NH * T;
          const auto qkv = random_bf16(nqkv, rng), dy = random_bf16(nout, rng);
          // The CPU's results once per shape; the backward from the CPU's forward results (output rounded to bf16)
          // on both sides.
          Buffer cqkv = cpu_up(qkv), cout(cpu, std::int64_t(nout)), clse(cpu, std::int64_t(nlse));
          cpu.flash_attention_forward(cout.view(), clse.view(), cqkv.view(), B, T, NH, KVH, hs);
          const auto out_c = cpu_down(cout.view()), lse_c = cpu_down(clse.view());
          auto out_rounded = out_c;
          for (auto& v : out_rounded) v = round_bf16(v);
          Buffer co = cpu_up(out_rounded), cl = cpu_up(lse_c), cdy = cpu_up(dy), cdqkv(cpu, std::int64_t(nqkv));
          cpu.flash_attention_backward(cdqkv.view(), cdy.view(), co.view(), cl.view(), cqkv.view(), B, T, NH, KVH, hs);
          const auto dc = cpu_down(cdqkv.view());
          for (const cuda::FlashKernel kernel :
               {cuda::FlashKernel::mma, cuda::FlashKernel::tensor_cores, cuda::FlashKernel::scalar}) {
            if (T == 1024 && kernel != cuda::FlashKernel::mma) continue;
            const std::string what = std::string(kernel_name(kernel)) + " hs " + std::to_string(hs) + " T " +
                                     std::to_string(T) + " heads " + std::to_string(NH) + "/" + std::to_string(KVH) +
                                     " B " + std::to_string(B);
            Buffer gqkv = up(qkv), gout = poisoned(nout), glse = poisoned(nlse, DType::f32);
            cuda::flash_attention_forward(bf(gout), fp(glse), bf(gqkv), B, T, NH, KVH, hs, gpu->stream(), kernel);
            const auto out_g = down(gout.view()), lse_g = down(glse.view());
            EXPECT_LT(rel_err(out_g, out_c), kBf16Out) << "output, " << what;
            EXPECT_LT(max_elem_err(out_g, out_c), kBf16Elem) << "output, " << what;
            EXPECT_LT(rel_err(lse_g, lse_c), kF32Out) << "log-sum-exp, " << what;
            // lse is fp32 from fp32 scores of exact bf16 products: agrees to fp32 rounding of a sum of T terms.
            double lse_worst = 0.0;
            for (std::size_t i = 0; i < nlse; ++i)
              lse_worst = std::max(lse_worst, std::isfinite(lse_g[i]) ? std::abs(double(lse_g[i]) - lse_c[i]) /
                                                                            (1.0 + std::abs(double(lse_c[i])))
                                                                      : std::numeric_limits<double>::infinity());
            EXPECT_LT(lse_worst, 1e-4) << "log-sum-exp per row, " << what;
            Buffer go = up(out_rounded), gl = up(lse_c, DType::f32), gdy = up(dy), gdqkv = poisoned(nqkv);
            Buffer gdelta = poisoned(nlse, DType::f32);
            cuda::flash_attention_backward(bf(gdqkv), fp(gdelta), bf(gdy), bf(go), fp(gl), bf(gqkv), B, T, NH, KVH, hs,
                                           gpu->stream(), kernel);
            const auto dg = down(gdqkv.view());
            const int kv = KVH * hs;
            for (const auto& [name, c0, n] :
                 {std::tuple{"dq", 0, C}, std::tuple{"dk", C, kv}, std::tuple{"dv", C + kv, kv}}) {
              const auto g = columns(dg, W, c0, n), c = columns(dc, W, c0, n);
              if (T == 1 && c0 < C + kv) {
                // One key: P = 1, dS = dP - delta = 0 exactly, so dq and dk are zero up to the rounding of two
                // fp32 dot products of ~11 (|dout . v|, hs terms), ~1e-6, times 1/sqrt(hs) |k|: nothing to be
                // relative to, so an absolute bound.
                double worst = 0.0;
                for (float v : g) worst = std::max(worst, std::isfinite(v) ? std::abs(double(v)) : 1e30);
                EXPECT_LT(worst, 1e-3) << name << " (exactly zero in exact arithmetic), " << what;
                continue;
              }
              EXPECT_LT(rel_err(g, c), kBf16Out) << name << ", " << what;
              EXPECT_LT(max_elem_err(g, c), kBf16Elem) << name << ", " << what;
            }
          }
        }
}

// The trainer calls the backend, which runs `automatic`: at the head sizes of the models that matter it must be
// the mma.sync kernels. Proven by the results, not only by flash_kernel_for's answer: every kernel is deterministic
// (no atomics), the automatic results equal the mma kernels' bit for bit and differ from the WMMA and scalar kernels'
// (other summation orders and roundings), so a silent fallback to either fails. Two runs of the mma kernels agree
// bit for bit.
// The backend takes the WMMA kernels (measured on an H100 and an H200); the mma.sync kernels run when named, until a
// GPU has run them (kernels.cu, flash_kernel_for).
TEST_F(CudaBackendTest, FlashAttentionBackendTakesWmmaKernelsAndMmaWhenNamed) {
  const int B = 1, T = 130, NH = 8, KVH = 2;
  for (const int hs : {64, 128}) {
    const int W = (NH + 2 * KVH) * hs, C = NH * hs;
    const std::size_t nqkv = std::size_t(B) * T * W, nout = std::size_t(B) * T * C, nlse = std::size_t(B) * NH * T;
    const auto qkv = random_bf16(nqkv, rng), dy = random_bf16(nout, rng);
    Buffer gqkv = up(qkv), gdy = up(dy);
    EXPECT_EQ(cuda::flash_kernel_for(hs, {bf(gqkv), bf(gdy)}), cuda::FlashKernel::tensor_cores) << "hs " << hs;
    EXPECT_EQ(cuda::flash_kernel_for(hs, {bf(gqkv) + 1}), cuda::FlashKernel::scalar) << "misaligned, hs " << hs;
    // automatic (the backend), mma, mma again, WMMA, scalar
    const cuda::FlashKernel kernels[] = {cuda::FlashKernel::automatic, cuda::FlashKernel::mma, cuda::FlashKernel::mma,
                                         cuda::FlashKernel::tensor_cores, cuda::FlashKernel::scalar};
    std::vector<float> outs[5], dqkvs[5];
    for (int k = 0; k < 5; ++k) {
      Buffer out = poisoned(nout), lse = poisoned(nlse, DType::f32), dqkv = poisoned(nqkv);
      if (k == 0) {
        gpu->flash_attention_forward(out.view(), lse.view(), gqkv.view(), B, T, NH, KVH, hs);
        gpu->flash_attention_backward(dqkv.view(), gdy.view(), out.view(), lse.view(), gqkv.view(), B, T, NH, KVH, hs);
      } else {
        Buffer delta = poisoned(nlse, DType::f32);
        cuda::flash_attention_forward(bf(out), fp(lse), bf(gqkv), B, T, NH, KVH, hs, gpu->stream(), kernels[k]);
        cuda::flash_attention_backward(bf(dqkv), fp(delta), bf(gdy), bf(out), fp(lse), bf(gqkv), B, T, NH, KVH, hs,
                                       gpu->stream(), kernels[k]);
      }
      outs[k] = down(out.view());
      dqkvs[k] = down(dqkv.view());
    }
    EXPECT_EQ(outs[0], outs[3]) << "the backend's forward is not the WMMA kernel's, hs " << hs;
    EXPECT_EQ(dqkvs[0], dqkvs[3]) << "the backend's backward is not the WMMA kernels', hs " << hs;
    EXPECT_EQ(outs[1], outs[2]) << "the mma forward is not deterministic, hs " << hs;
    EXPECT_EQ(dqkvs[1], dqkvs[2]) << "the mma backward is not deterministic, hs " << hs;
    for (int k = 3; k < 5; ++k) {
      EXPECT_NE(outs[1], outs[k]) << "mma and " << kernel_name(kernels[k])
                                  << " forward agree bit for bit: the test cannot tell them apart";
      EXPECT_NE(dqkvs[1], dqkvs[k]) << "mma and " << kernel_name(kernels[k])
                                    << " backward agree bit for bit: the test cannot tell them apart";
    }
  }
  // Head sizes the mma kernels do not take go to WMMA (multiples of 16 up to 128) or the scalar kernels; asking for
  // a kernel that cannot run the call throws.
  Buffer qkv = up(random_bf16(std::size_t(4) * 3 * 96, rng)), out = poisoned(std::size_t(4) * 96);
  Buffer lse = poisoned(4, DType::f32);
  EXPECT_EQ(cuda::flash_kernel_for(32, {bf(qkv)}), cuda::FlashKernel::tensor_cores);
  EXPECT_EQ(cuda::flash_kernel_for(96, {bf(qkv)}), cuda::FlashKernel::tensor_cores);
  EXPECT_EQ(cuda::flash_kernel_for(8, {bf(qkv)}), cuda::FlashKernel::scalar);
  EXPECT_EQ(cuda::flash_kernel_for(256, {bf(qkv)}), cuda::FlashKernel::scalar);
  EXPECT_EQ(cuda::flash_kernel_for(136, {bf(qkv)}), cuda::FlashKernel::scalar);
  EXPECT_THROW(
      cuda::flash_attention_forward(bf(out), fp(lse), bf(qkv), 1, 4, 1, 1, 96, gpu->stream(), cuda::FlashKernel::mma),
      std::invalid_argument);
  EXPECT_THROW(cuda::flash_attention_forward(bf(out), fp(lse), bf(qkv), 1, 4, 1, 1, 8, gpu->stream(),
                                             cuda::FlashKernel::tensor_cores),
               std::invalid_argument);
}

TEST_F(CudaBackendTest, EmbeddingWithoutPositionTable) {
  const int N = 10, T = 5, C = 40, V = 7;
  std::uniform_int_distribution<std::int32_t> tok(0, V - 1);
  std::vector<std::int32_t> tokens(N);
  for (auto& t : tokens) t = tok(rng);
  const auto wte = random_bf16(std::size_t(V) * C, rng), dy = random_bf16(std::size_t(N) * C, rng);
  Buffer gt = up_i32(tokens, *gpu), gwte = up(wte), gout = poisoned(std::size_t(N) * C);
  Buffer ct = up_i32(tokens, cpu), cwte = cpu_up(wte), cout(cpu, std::int64_t(N) * C);
  gpu->embedding_forward(gout.view(), gt.view(), gwte.view(), Tensor{}, N, T, C, 0);
  cpu.embedding_forward(cout.view(), ct.view(), cwte.view(), Tensor{}, N, T, C, 0);
  EXPECT_LT(rel_err(down(gout.view()), cpu_down(cout.view())), kBf16Out);
  Buffer gdwte = up(std::vector<float>(std::size_t(V) * C, 0.0f), DType::f32);
  Buffer cdwte = cpu_up(std::vector<float>(std::size_t(V) * C, 0.0f));
  Buffer gdy = up(dy), cdy = cpu_up(dy);
  gpu->embedding_backward_weight(gdwte.view(), Tensor{}, gdy.view(), gt.view(), N, T, C, 0);
  cpu.embedding_backward_weight(cdwte.view(), Tensor{}, cdy.view(), ct.view(), N, T, C, 0);
  EXPECT_LT(rel_err(down(gdwte.view()), cpu_down(cdwte.view())), kF32Out);
}

TEST_F(CudaBackendTest, Embedding) {
  const int N = 40, T = 16, C = 48, V = 50, row0 = 8;  // row0: sequence-parallel rows start mid-sequence
  std::uniform_int_distribution<std::int32_t> tok(0, V - 1);
  std::vector<std::int32_t> tokens(N);
  for (auto& t : tokens) t = tok(rng);
  const auto wte = random_bf16(std::size_t(V) * C, rng), wpe = random_bf16(std::size_t(T) * C, rng);
  const auto dy = random_bf16(std::size_t(N) * C, rng);
  Buffer gt = up_i32(tokens, *gpu), gwte = up(wte), gwpe = up(wpe), gout = poisoned(std::size_t(N) * C);
  Buffer ct = up_i32(tokens, cpu), cwte = cpu_up(wte), cwpe = cpu_up(wpe), cout(cpu, std::int64_t(N) * C);
  gpu->embedding_forward(gout.view(), gt.view(), gwte.view(), gwpe.view(), N, T, C, row0);
  cpu.embedding_forward(cout.view(), ct.view(), cwte.view(), cwpe.view(), N, T, C, row0);
  EXPECT_LT(rel_err(down(gout.view()), cpu_down(cout.view())), kBf16Out);
  Buffer gdwte = up(std::vector<float>(std::size_t(V) * C, 0.0f), DType::f32);
  Buffer gdwpe = up(std::vector<float>(std::size_t(T) * C, 0.0f), DType::f32);
  Buffer cdwte = cpu_up(std::vector<float>(std::size_t(V) * C, 0.0f));
  Buffer cdwpe = cpu_up(std::vector<float>(std::size_t(T) * C, 0.0f));
  Buffer gdy = up(dy), cdy = cpu_up(dy);
  gpu->embedding_backward_weight(gdwte.view(), gdwpe.view(), gdy.view(), gt.view(), N, T, C, row0);
  cpu.embedding_backward_weight(cdwte.view(), cdwpe.view(), cdy.view(), ct.view(), N, T, C, row0);
  EXPECT_LT(rel_err(down(gdwte.view()), cpu_down(cdwte.view())), kF32Out);
  EXPECT_LT(rel_err(down(gdwpe.view()), cpu_down(cdwpe.view())), kF32Out);
}

TEST_F(CudaBackendTest, EmbeddingRejectsTokenOutsideVocabulary) {
  const int N = 4, T = 4, C = 8, V = 10;
  Buffer gt = up_i32({1, 2, V, 3}, *gpu);
  Buffer gwte = up(random_bf16(std::size_t(V) * C, rng)), gwpe = up(random_bf16(std::size_t(T) * C, rng));
  Buffer gout = poisoned(std::size_t(N) * C);
  gpu->embedding_forward(gout.view(), gt.view(), gwte.view(), gwpe.view(), N, T, C, 0);
  EXPECT_THROW(gpu->synchronize(), std::out_of_range);
  EXPECT_NO_THROW(gpu->synchronize());  // the error is reported once
}

// V = 1000 takes the 16-byte kernels (V % 8 == 0), V = 1001 the 2-byte ones (kernels.cu).
TEST_F(CudaBackendTest, CrossEntropyInPlace) {
  const int N = 12;
  for (const int V : {1000, 1001}) {
    std::uniform_int_distribution<std::int32_t> tok(0, V - 1);
    std::vector<std::int32_t> targets(N);
    for (auto& t : targets) t = tok(rng);
    const auto logits = random_bf16(std::size_t(N) * V, rng, 3.0f);
    Buffer gl = up(logits), gt = up_i32(targets, *gpu), gloss = poisoned(N, DType::f32);
    Buffer cl = cpu_up(logits), ct = up_i32(targets, cpu), closs(cpu, N);
    gpu->crossentropy_forward(gloss.view(), gl.view(), gl.view(), gt.view(), N, V);  // probs alias logits
    cpu.crossentropy_forward(closs.view(), cl.view(), cl.view(), ct.view(), N, V);
    // Losses come from fp32 arithmetic on the same logits: only exp/log implementations differ.
    EXPECT_LT(rel_err(down(gloss.view()), cpu_down(closs.view())), 1e-4) << "V " << V;
    EXPECT_LT(rel_err(down(gl.view()), cpu_down(cl.view())), kBf16Out) << "probabilities, V " << V;
    gpu->crossentropy_backward(gl.view(), gl.view(), gt.view(), N, V, 0.25f);
    cpu.crossentropy_backward(cl.view(), cl.view(), ct.view(), N, V, 0.25f);
    EXPECT_LT(rel_err(down(gl.view()), cpu_down(cl.view())), kBf16Out) << "logit gradients, V " << V;
  }
}

TEST_F(CudaBackendTest, AdamW) {
  const std::int64_t n = 3001;  // 750 float4 vectors and one element alone (kernels.cu, map_vectors)
  const auto p = random_bf16(n, rng), g = random_bf16(n, rng), m = random_bf16(n, rng, 0.1f);
  auto v = random_bf16(n, rng, 0.1f);
  for (auto& x : v) x = x * x;
  AdamWArgs a;
  a.lr = 1e-2f;
  a.weight_decay = 0.1f;
  a.bias_correction1 = 1.0f - 0.9f * 0.9f;
  a.bias_correction2 = 1.0f - 0.95f * 0.95f;
  a.grad_scale = 0.5f;
  Buffer gp = up(p, DType::f32), gg = up(g, DType::f32), gm = up(m, DType::f32), gv = up(v, DType::f32);
  Buffer cp = cpu_up(p), cg = cpu_up(g), cm = cpu_up(m), cv = cpu_up(v);
  gpu->adamw_update(gp.view(), gg.view(), gm.view(), gv.view(), n, a);
  cpu.adamw_update(cp.view(), cg.view(), cm.view(), cv.view(), n, a);
  EXPECT_LT(rel_err(down(gp.view()), cpu_down(cp.view())), 1e-6);
  EXPECT_LT(rel_err(down(gm.view()), cpu_down(cm.view())), 1e-6);
  EXPECT_LT(rel_err(down(gv.view()), cpu_down(cv.view())), 1e-6);
}

TEST_F(CudaBackendTest, ElementwiseConvertAndSums) {
  const std::int64_t n = 100003;  // not a multiple of any block size
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& e : x) e = d(rng);  // fp32 values, not bf16-representable
  Buffer gx = up(x, DType::f32), gb = poisoned(n), gback = poisoned(n, DType::f32);
  gpu->convert(gb.view(), gx.view(), n);
  gpu->convert(gback.view(), gb.view(), n);
  const auto b = down(gb.view()), back = down(gback.view());
  for (std::int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(b[i], round_bf16(x[i])) << "element " << i << ": f32 -> bf16 must round to nearest even";
    ASSERT_EQ(back[i], b[i]) << "element " << i << ": bf16 -> f32 is exact";
  }
  double s = 0.0, s2 = 0.0;
  for (float e : x) {
    s += e;
    s2 += double(e) * e;
  }
  EXPECT_NEAR(gpu->sum(gx.view()), s, 1e-9 * n);
  EXPECT_NEAR(gpu->sum_squares(gx.view()), s2, 1e-12 * s2 * 1e3);
  EXPECT_EQ(gpu->sum(gx.view()), gpu->sum(gx.view())) << "sums are deterministic";

  const auto y = random_bf16(n, rng);
  Buffer gy = up(y), gsum = poisoned(n);
  gpu->add(gsum.view(), gb.view(), gy.view(), n);
  gpu->accumulate(gy.view(), gb.view(), n);
  gpu->scale(gy.view(), 2.0f, n);
  const auto sum = down(gsum.view()), acc = down(gy.view());
  for (std::int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(sum[i], round_bf16(b[i] + y[i])) << "add, element " << i;
    ASSERT_EQ(acc[i], 2.0f * round_bf16(b[i] + y[i])) << "accumulate then scale, element " << i;
  }
}

// The gradient norm's sum over many parameter segments with one wait (CudaBackend::total_sum_squares) equals the
// loop of per-part sum_squares calls bit for bit: the same per-block partials added in the same order, so the
// trainer's runs stay exact against the single-rank reference. Parts of f32 and bf16, zero-length ones, parts of
// fewer elements than the partial-sum kernel has blocks, more parts than any call before (its partials buffer
// grows) and then fewer (the larger buffer is reused); no parts at all, and only empty ones, sum to 0.
TEST_F(CudaBackendTest, ManyPartSumOfSquaresEqualsThePerPartLoopBitForBit) {
  const std::int64_t n = 300007;
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(n));
  for (auto& e : x) e = d(rng);
  Buffer gx = up(x, DType::f32), gb = up(random_bf16(4099, rng));
  const Tensor v = gx.view();
  std::vector<Tensor> parts;
  std::int64_t at = 0;
  for (const std::int64_t len : {0, 1, 255, 256, 257, 0, 100000, 3}) {
    parts.push_back(v.slice(at, len));
    at += len;
  }
  parts.push_back(v.slice(at, n - at));  // the rest: the parts cover x once
  parts.push_back(gb.view());
  parts.push_back(gb.view().slice(5, 100));
  for (int i = 0; i < 400; ++i) parts.push_back(v.slice(i * 700, 700));
  const auto loop = [&](std::size_t count) {
    double s = 0.0;
    for (std::size_t i = 0; i < count; ++i) s += gpu->sum_squares(parts[i]);
    return s;
  };
  EXPECT_EQ(gpu->total_sum_squares(parts), loop(parts.size())) << parts.size() << " parts";
  EXPECT_EQ(gpu->total_sum_squares(std::span(parts).first(9)), loop(9)) << "fewer parts after more";
  double host = 0.0;
  for (float e : x) host += double(e) * e;
  EXPECT_NEAR(gpu->total_sum_squares(std::span(parts).first(9)), host, 1e-12 * host) << "the first 9 parts are x";
  EXPECT_EQ(gpu->total_sum_squares({}), 0.0);
  EXPECT_EQ(gpu->total_sum_squares(std::vector<Tensor>{v.slice(0, 0), gb.view().slice(7, 0)}), 0.0);
}

TEST_F(CudaBackendTest, MemoryIsCountedAndReturned) {
  const std::size_t before = gpu->bytes_in_use();
  {
    Buffer a(*gpu, 1 << 20, DType::bf16);
    EXPECT_EQ(gpu->bytes_in_use(), before + (std::size_t{1} << 21));
  }
  EXPECT_EQ(gpu->bytes_in_use(), before);
}

}  // namespace
}  // namespace zeropp::e2e
