// The Llama layers and the attention kernels of the CPU backend against straightforward fp64 references written
// here from the papers' formulas (RMSNorm: Zhang & Sennrich 2019; SwiGLU: Shazeer 2020; RoPE: Su et al. 2021 in
// HuggingFace's rotate_half layout; causal grouped-query softmax attention), and their gradients against central
// finite differences of the backend's own forward (fp32, step 1e-2, objective in double: norm-wise relative error
// below 1e-3, as unit_layer_grad.cpp; a wrong term gives O(1)). Forward tolerances: 1e-5 relative to the
// reference's norm (fp32 arithmetic on O(1) values; observed 1e-7 .. 1e-6).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "e2e/backend/cpu_backend.hpp"
#include "tests/e2e/unit_test_util.hpp"

namespace zeropp::e2e {
namespace {

using testing::download;
using testing::random_vector;
using testing::rel_error;
using testing::upload;

using testing::dot;
using testing::numeric_grad;
using testing::to_double;

constexpr double kGradTolerance = 1e-3;
constexpr double kForwardTolerance = 1e-5;

// ---------------------------------------------------------------- fp64 references

std::vector<double> ref_rmsnorm(const std::vector<float>& x, const std::vector<float>& w, int N, int C) {
  std::vector<double> y(x.size());
  for (int n = 0; n < N; ++n) {
    double ss = 0;
    for (int c = 0; c < C; ++c) ss += double(x[n * C + c]) * x[n * C + c];
    const double r = 1.0 / std::sqrt(ss / C + 1e-5);
    for (int c = 0; c < C; ++c) y[n * C + c] = x[n * C + c] * r * w[c];
  }
  return y;
}

std::vector<double> ref_swiglu(const std::vector<float>& x, int N, int F) {
  std::vector<double> y(static_cast<std::size_t>(N) * F);
  for (int n = 0; n < N; ++n)
    for (int f = 0; f < F; ++f) {
      const double gate = x[n * 2 * F + f], up = x[n * 2 * F + F + f];
      y[n * F + f] = gate / (1.0 + std::exp(-gate)) * up;
    }
  return y;
}

// The rotation written out per element: y[i] = x[i] cos - x[i + d/2] sin, y[i + d/2] = x[i + d/2] cos + x[i] sin.
std::vector<double> ref_rope(const std::vector<float>& x, int N, int T, int NH, int KVH, int hs, int rot,
                             double theta) {
  std::vector<double> y(x.begin(), x.end());
  const int W = (NH + 2 * KVH) * hs, half = rot / 2;
  for (int r = 0; r < N; ++r)
    for (int h = 0; h < NH + KVH; ++h)
      for (int i = 0; i < half; ++i) {
        const double angle = (r % T) * std::pow(theta, -2.0 * i / rot);
        const std::size_t a = static_cast<std::size_t>(r) * W + h * hs + i, b = a + half;
        y[a] = x[a] * std::cos(angle) - x[b] * std::sin(angle);
        y[b] = x[b] * std::cos(angle) + x[a] * std::sin(angle);
      }
  return y;
}

// Causal softmax attention with grouped-query heads, in double: out [B, T, NH hs] and each row's log-sum-exp.
struct RefAttention {
  std::vector<double> out, lse;
};
RefAttention ref_attention(const std::vector<float>& qkv, int B, int T, int NH, int KVH, int hs) {
  const int W = (NH + 2 * KVH) * hs, C = NH * hs, g = NH / KVH;
  RefAttention r{std::vector<double>(static_cast<std::size_t>(B) * T * C),
                 std::vector<double>(std::size_t(B) * NH * T)};
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h) {
      const int kv = h / g;
      for (int t = 0; t < T; ++t) {
        std::vector<double> s(static_cast<std::size_t>(t) + 1);
        double mx = -INFINITY;
        for (int j = 0; j <= t; ++j) {
          double d = 0;
          for (int c = 0; c < hs; ++c)
            d += double(qkv[(b * T + t) * W + h * hs + c]) * qkv[(b * T + j) * W + C + kv * hs + c];
          s[j] = d / std::sqrt(double(hs));
          mx = std::max(mx, s[j]);
        }
        double z = 0;
        for (double& v : s) z += std::exp(v - mx);
        r.lse[(b * NH + h) * T + t] = mx + std::log(z);
        for (int c = 0; c < hs; ++c) {
          double o = 0;
          for (int j = 0; j <= t; ++j) o += std::exp(s[j] - mx) / z * qkv[(b * T + j) * W + C + KVH * hs + kv * hs + c];
          r.out[(b * T + t) * C + h * hs + c] = o;
        }
      }
    }
  return r;
}

double rel_error_f(const std::vector<float>& got, const std::vector<double>& want) {
  return rel_error(to_double(got), want);
}

// ---------------------------------------------------------------- RMSNorm

TEST(LlamaLayers, RmsNormForwardAndGradients) {
  CpuBackend be;
  const int N = 4, C = 8;
  auto inp = random_vector(N * C, 5, 2.0f), w = random_vector(C, 6);
  const auto r = random_vector(N * C, 8);
  auto objective = [&]() {
    Buffer out(be, N * C), rstd(be, N);
    be.rmsnorm_forward(out.view(), rstd.view(), upload(be, inp).view(), upload(be, w).view(), N, C);
    return dot(download(be, out.view()), r);
  };
  Buffer out(be, N * C), rstd(be, N);
  const Buffer x = upload(be, inp), wt = upload(be, w), dout = upload(be, r);
  be.rmsnorm_forward(out.view(), rstd.view(), x.view(), wt.view(), N, C);
  EXPECT_LT(rel_error_f(download(be, out.view()), ref_rmsnorm(inp, w, N, C)), kForwardTolerance);
  Buffer dinp(be, N * C), dw = upload(be, std::vector<float>(C, 0.0f));
  be.rmsnorm_backward_input(dinp.view(), dout.view(), x.view(), rstd.view(), wt.view(), N, C, false);
  be.rmsnorm_backward_weight(dw.view(), dout.view(), x.view(), rstd.view(), N, C);
  EXPECT_LT(rel_error(to_double(download(be, dinp.view())), numeric_grad(inp, objective)), kGradTolerance);
  EXPECT_LT(rel_error(to_double(download(be, dw.view())), numeric_grad(w, objective)), kGradTolerance);
  // accumulate adds to what is there.
  Buffer acc = upload(be, std::vector<float>(N * C, 1.0f));
  be.rmsnorm_backward_input(acc.view(), dout.view(), x.view(), rstd.view(), wt.view(), N, C, true);
  const auto a = download(be, acc.view()), d = download(be, dinp.view());
  for (int i = 0; i < N * C; ++i) EXPECT_NEAR(a[i], 1.0f + d[i], 1e-6f);  // up to fused multiply-adds
}

// ---------------------------------------------------------------- SwiGLU

TEST(LlamaLayers, SwigluForwardAndGradient) {
  CpuBackend be;
  const int N = 3, F = 7;
  auto inp = random_vector(N * 2 * F, 9, 3.0f);
  const auto r = random_vector(N * F, 10);
  auto objective = [&]() {
    Buffer out(be, N * F);
    be.swiglu_forward(out.view(), upload(be, inp).view(), N, F);
    return dot(download(be, out.view()), r);
  };
  Buffer out(be, N * F), dinp(be, N * 2 * F);
  be.swiglu_forward(out.view(), upload(be, inp).view(), N, F);
  EXPECT_LT(rel_error_f(download(be, out.view()), ref_swiglu(inp, N, F)), kForwardTolerance);
  be.swiglu_backward(dinp.view(), upload(be, inp).view(), upload(be, r).view(), N, F);
  EXPECT_LT(rel_error(to_double(download(be, dinp.view())), numeric_grad(inp, objective)), kGradTolerance);
  // silu at a hand-checked point: silu(1) * 2 = 2 / (1 + e^-1) = 1.462117.
  Buffer one = upload(be, {1.0f, 2.0f}), y(be, 1);
  be.swiglu_forward(y.view(), one.view(), 1, 1);
  EXPECT_NEAR(download(be, y.view())[0], 1.462117f, 1e-5f);
}

// ---------------------------------------------------------------- RoPE

TEST(LlamaLayers, RopeMatchesTheRotationAndItsInverseIsItsBackward) {
  CpuBackend be;
  const int B = 2, T = 5, NH = 4, KVH = 2, hs = 8, W = (NH + 2 * KVH) * hs, N = B * T;
  for (int rot : {hs, hs / 2}) {  // whole heads, and a partial rotary share (GPT-NeoX, Phi)
    for (double theta : {10000.0, 500000.0}) {
      auto x = random_vector(static_cast<std::size_t>(N) * W, 11);
      Buffer buf = upload(be, x);
      be.rope(buf.view(), N, T, NH, KVH, hs, rot, theta, false, 0);
      const auto y = download(be, buf.view());
      EXPECT_LT(rel_error_f(y, ref_rope(x, N, T, NH, KVH, hs, rot, theta)), kForwardTolerance) << rot << " " << theta;
      // v columns untouched; position 0 untouched (angle 0).
      for (int r = 0; r < N; ++r)
        for (int c = (NH + KVH) * hs; c < W; ++c) EXPECT_EQ(y[r * W + c], x[r * W + c]);
      for (int c = 0; c < W; ++c) EXPECT_EQ(y[c], x[c]);
      // The inverse undoes it.
      be.rope(buf.view(), N, T, NH, KVH, hs, rot, theta, true, 0);
      EXPECT_LT(rel_error_f(download(be, buf.view()), to_double(x)), 1e-6);
      // Backward: d/dx sum(rope(x) * r) = rope^-1(r).
      const auto rr = random_vector(x.size(), 12);
      auto objective = [&]() {
        Buffer b2 = upload(be, x);
        be.rope(b2.view(), N, T, NH, KVH, hs, rot, theta, false, 0);
        return dot(download(be, b2.view()), rr);
      };
      Buffer g = upload(be, rr);
      be.rope(g.view(), N, T, NH, KVH, hs, rot, theta, true, 0);
      EXPECT_LT(rel_error(to_double(download(be, g.view())), numeric_grad(x, objective)), kGradTolerance);
    }
  }
  // A hand-checked angle: position 1, pair 0 rotates by 1 radian: (1, 0) -> (cos 1, sin 1).
  std::vector<float> one(static_cast<std::size_t>(2) * 3 * 2, 0.0f);  // N = 2 rows, NH = KVH = 1, hs = 2
  one[6] = 1.0f;                                                      // row 1 (position 1), q[0]
  Buffer b1 = upload(be, one);
  be.rope(b1.view(), 2, 2, 1, 1, 2, 2, 10000.0, false, 0);
  const auto got = download(be, b1.view());
  EXPECT_NEAR(got[6], std::cos(1.0), 1e-6);
  EXPECT_NEAR(got[7], std::sin(1.0), 1e-6);
}

// A context-parallel rank's chunk (rows at positions pos0..pos0+n-1, rope(..., T = n, pos0)) rotates as those rows of
// the whole sequence do, bit for bit (one table of angles per position).
TEST(LlamaLayers, RopeAtAnOffsetEqualsTheSameRowsOfTheWholeSequence) {
  CpuBackend be;
  const int T = 16, NH = 4, KVH = 2, hs = 8, W = (NH + 2 * KVH) * hs, pos0 = 12, n = 4;
  const auto x = random_vector(static_cast<std::size_t>(T) * W, 13);
  Buffer whole = upload(be, x);
  be.rope(whole.view(), T, T, NH, KVH, hs, hs, 500000.0, false, 0);
  const std::vector<float> part_in(x.begin() + pos0 * W, x.begin() + (pos0 + n) * W);
  Buffer part = upload(be, part_in);
  be.rope(part.view(), n, n, NH, KVH, hs, hs, 500000.0, false, pos0);
  const auto w = download(be, whole.view()), p = download(be, part.view());
  for (int i = 0; i < n * W; ++i)
    ASSERT_EQ(p[static_cast<std::size_t>(i)], w[static_cast<std::size_t>(pos0 * W + i)]) << i;
}

// ---------------------------------------------------------------- attention: unfused GQA and flash

struct AttnShape {
  int B, T, NH, KVH, hs;
  int W() const { return (NH + 2 * KVH) * hs; }
  int C() const { return NH * hs; }
  std::size_t qkv() const { return std::size_t(B) * T * W(); }
  std::size_t out() const { return std::size_t(B) * T * C(); }
};

std::vector<float> flash_forward(CpuBackend& be, const AttnShape& a, const std::vector<float>& qkv,
                                 std::vector<float>* lse = nullptr) {
  Buffer out(be, std::int64_t(a.out())), l(be, std::int64_t{a.B} * a.NH * a.T);
  be.flash_attention_forward(out.view(), l.view(), upload(be, qkv).view(), a.B, a.T, a.NH, a.KVH, a.hs);
  if (lse) *lse = download(be, l.view());
  return download(be, out.view());
}

std::vector<float> unfused_forward(CpuBackend& be, const AttnShape& a, const std::vector<float>& qkv) {
  Buffer out(be, std::int64_t(a.out())), att(be, std::int64_t{a.B} * a.NH * a.T * a.T);
  be.grouped_attention_forward(out.view(), att.view(), upload(be, qkv).view(), a.B, a.T, a.NH, a.KVH, a.hs);
  return download(be, out.view());
}

// Shapes: one tile, several tiles with a partial last one (T = 70 > 64), multi-head and grouped (4 over 2, 4 over
// 1: multi-query).
const AttnShape kShapes[] = {{2, 5, 2, 2, 4}, {1, 70, 4, 2, 8}, {2, 9, 4, 1, 4}, {1, 130, 2, 2, 16}};

TEST(LlamaLayers, AttentionForwardMatchesTheFp64Reference) {
  CpuBackend be;
  for (const AttnShape& a : kShapes) {
    const auto qkv = random_vector(a.qkv(), 13);
    const RefAttention want = ref_attention(qkv, a.B, a.T, a.NH, a.KVH, a.hs);
    std::vector<float> lse;
    EXPECT_LT(rel_error_f(flash_forward(be, a, qkv, &lse), want.out), kForwardTolerance) << "flash, T " << a.T;
    EXPECT_LT(rel_error_f(lse, want.lse), kForwardTolerance) << "flash lse, T " << a.T;
    EXPECT_LT(rel_error_f(unfused_forward(be, a, qkv), want.out), kForwardTolerance) << "unfused, T " << a.T;
  }
}

// Both kernels' input gradients for the same qkv and output gradient: {unfused, flash}.
std::pair<std::vector<double>, std::vector<double>> both_backwards(CpuBackend& be, const AttnShape& a,
                                                                   const std::vector<float>& qkv,
                                                                   const std::vector<float>& r) {
  const Buffer x = upload(be, qkv), dy = upload(be, r);
  Buffer out(be, std::int64_t(a.out())), att(be, std::int64_t{a.B} * a.NH * a.T * a.T), d1(be, std::int64_t(a.qkv()));
  be.grouped_attention_forward(out.view(), att.view(), x.view(), a.B, a.T, a.NH, a.KVH, a.hs);
  be.grouped_attention_backward(d1.view(), dy.view(), x.view(), att.view(), a.B, a.T, a.NH, a.KVH, a.hs);
  Buffer fout(be, std::int64_t(a.out())), lse(be, std::int64_t{a.B} * a.NH * a.T), d2(be, std::int64_t(a.qkv()));
  be.flash_attention_forward(fout.view(), lse.view(), x.view(), a.B, a.T, a.NH, a.KVH, a.hs);
  be.flash_attention_backward(d2.view(), dy.view(), fout.view(), lse.view(), x.view(), a.B, a.T, a.NH, a.KVH, a.hs);
  return {to_double(download(be, d1.view())), to_double(download(be, d2.view()))};
}

TEST(LlamaLayers, AttentionGradientsMatchFiniteDifferencesAndEachOther) {
  CpuBackend be;
  for (const AttnShape& a : {kShapes[0], kShapes[2]}) {  // small enough for finite differences of every input
    auto qkv = random_vector(a.qkv(), 14);
    const auto r = random_vector(a.out(), 15);
    const auto [unfused, flash] = both_backwards(be, a, qkv, r);
    const auto numeric = numeric_grad(qkv, [&]() { return dot(flash_forward(be, a, qkv), r); });
    EXPECT_LT(rel_error(flash, numeric), kGradTolerance) << "flash vs differences";
    EXPECT_LT(rel_error(unfused, numeric), kGradTolerance) << "unfused vs differences";
    EXPECT_LT(rel_error(flash, unfused), 1e-5) << "flash vs unfused";
  }
  // Several tiles (T = 70, 130): flash's backward against the unfused one.
  for (const AttnShape& a : {kShapes[1], kShapes[3]}) {
    const auto [unfused, flash] = both_backwards(be, a, random_vector(a.qkv(), 16), random_vector(a.out(), 17));
    EXPECT_LT(rel_error(flash, unfused), 1e-5) << "T " << a.T;
  }
}

TEST(LlamaLayers, FlashAttentionIsCausal) {
  CpuBackend be;
  const AttnShape a{1, 70, 2, 1, 4};
  auto qkv = random_vector(a.qkv(), 18);
  const auto y1 = flash_forward(be, a, qkv);
  for (int c = 0; c < a.W(); ++c) qkv[static_cast<std::size_t>(a.T - 1) * a.W() + c] += 1.0f;  // the last token
  const auto y2 = flash_forward(be, a, qkv);
  for (int i = 0; i < (a.T - 1) * a.C(); ++i) ASSERT_EQ(y1[i], y2[i]) << "position " << i / a.C() << " saw the future";
}

// The memory the cost model assumes for attention "flash" (analytic/memory.cpp): no s x s tensor. The backend's
// allocator sees every buffer the kernels use, so its peak above what the caller holds is the kernels' scratch: a
// few 64 x 64 tiles and O(T) vectors, the same at T = 256 and T = 1024, where the unfused kernel's probabilities
// (which the caller must hold) grow 16 times.
TEST(LlamaLayers, FlashAttentionScratchDoesNotGrowWithTheSquareOfT) {
  std::vector<std::size_t> scratch;
  for (int T : {256, 1024}) {
    CpuBackend be;
    const AttnShape a{1, T, 2, 2, 16};
    const Buffer x = upload(be, random_vector(a.qkv(), 19)), dy = upload(be, random_vector(a.out(), 20));
    Buffer out(be, std::int64_t(a.out())), lse(be, std::int64_t{a.NH} * T), dqkv(be, std::int64_t(a.qkv()));
    const std::size_t held = be.bytes_in_use();
    be.reset_peak();
    be.flash_attention_forward(out.view(), lse.view(), x.view(), a.B, T, a.NH, a.KVH, a.hs);
    be.flash_attention_backward(dqkv.view(), dy.view(), out.view(), lse.view(), x.view(), a.B, T, a.NH, a.KVH, a.hs);
    scratch.push_back(be.peak_bytes() - held);
  }
  // Two 64 x 64 fp32 tiles and one T-vector: 32 KiB + 4 KiB at T = 1024.
  EXPECT_LE(scratch[1], 2u * 64 * 64 * 4 + 1024u * 4 + 64);
  EXPECT_LE(scratch[1], scratch[0] + 3 * 1024u * 4) << "scratch grows faster than T";
}

TEST(LlamaLayers, EmbeddingWithoutPositionTable) {
  CpuBackend be;
  const int N = 4, T = 2, C = 3, V = 5;
  const auto wte = random_vector(V * C, 21);
  const Buffer tok = testing::upload_i32(be, {4, 0, 2, 4});
  Buffer out(be, N * C), dwte = upload(be, std::vector<float>(V * C, 0.0f));
  be.embedding_forward(out.view(), tok.view(), upload(be, wte).view(), Tensor{}, N, T, C, 0);
  const auto y = download(be, out.view());
  for (int c = 0; c < C; ++c) EXPECT_EQ(y[c], wte[4 * C + c]);
  be.embedding_backward_weight(dwte.view(), Tensor{}, upload(be, std::vector<float>(N * C, 1.0f)).view(), tok.view(), N,
                               T, C, 0);
  EXPECT_EQ(download(be, dwte.view())[4 * C], 2.0f);  // token 4 appears twice
}

}  // namespace
}  // namespace zeropp::e2e
