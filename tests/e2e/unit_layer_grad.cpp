// Finite-difference checks of every backend layer's input gradient (B) and weight gradient (W).
// The backend is fp32 only, so the checks run in fp32 with central differences (step 1e-2 on O(1) inputs) and
// the objective accumulated in double; the norm-wise relative error must stay below 1e-3 (observed on this
// machine: 1e-6 .. 4e-5; a wrong term in a gradient gives O(1)).
#include <gtest/gtest.h>

#include <functional>

#include "e2e/backend/cpu_backend.hpp"
#include "tests/e2e/unit_test_util.hpp"

namespace zeropp::e2e {
namespace {

using testing::download;
using testing::random_vector;
using testing::rel_error;
using testing::upload;
using testing::upload_i32;

constexpr double kTolerance = 1e-3;

using testing::dot;
using testing::numeric_grad;
using testing::to_double;

TEST(LayerGrad, LinearInputAndWeight) {
  CpuBackend be;
  const int N = 6, IC = 5, OC = 4;
  auto inp = random_vector(N * IC, 1), w = random_vector(OC * IC, 2), b = random_vector(OC, 3);
  const auto r = random_vector(N * OC, 4);
  auto objective = [&]() {
    Buffer out(be, N * OC);
    be.linear_forward(out.view(), upload(be, inp).view(), upload(be, w).view(), upload(be, b).view(), N, IC, OC);
    return dot(download(be, out.view()), r);
  };
  Buffer dinp(be, N * IC), dw = upload(be, std::vector<float>(OC * IC, 0.0f)),
                           db = upload(be, std::vector<float>(OC, 0.0f));
  const Buffer dout = upload(be, r);
  be.linear_backward_input(dinp.view(), dout.view(), upload(be, w).view(), N, IC, OC, false);
  be.linear_backward_weight(dw.view(), db.view(), dout.view(), upload(be, inp).view(), N, IC, OC);
  EXPECT_LT(rel_error(to_double(download(be, dinp.view())), numeric_grad(inp, objective)), kTolerance);
  EXPECT_LT(rel_error(to_double(download(be, dw.view())), numeric_grad(w, objective)), kTolerance);
  EXPECT_LT(rel_error(to_double(download(be, db.view())), numeric_grad(b, objective)), kTolerance);
}

TEST(LayerGrad, LinearBackwardAccumulates) {
  CpuBackend be;
  const int N = 3, IC = 2, OC = 2;
  const Buffer dout = upload(be, {1, 0, 0, 1, 1, 1}), w = upload(be, {1, 2, 3, 4});
  Buffer dinp = upload(be, std::vector<float>(N * IC, 10.0f));
  be.linear_backward_input(dinp.view(), dout.view(), w.view(), N, IC, OC, true);
  // dout @ w = [[1,2],[3,4],[4,6]], plus the 10 already there.
  EXPECT_EQ(download(be, dinp.view()), (std::vector<float>{11, 12, 13, 14, 14, 16}));
}

TEST(LayerGrad, LayerNormInputAndWeight) {
  CpuBackend be;
  const int N = 4, C = 8;
  auto inp = random_vector(N * C, 5, 2.0f), w = random_vector(C, 6), b = random_vector(C, 7);
  const auto r = random_vector(N * C, 8);
  auto objective = [&]() {
    Buffer out(be, N * C), mean(be, N), rstd(be, N);
    be.layernorm_forward(out.view(), mean.view(), rstd.view(), upload(be, inp).view(), upload(be, w).view(),
                         upload(be, b).view(), N, C);
    return dot(download(be, out.view()), r);
  };
  Buffer out(be, N * C), mean(be, N), rstd(be, N);
  const Buffer x = upload(be, inp), wt = upload(be, w), dout = upload(be, r);
  be.layernorm_forward(out.view(), mean.view(), rstd.view(), x.view(), wt.view(), upload(be, b).view(), N, C);
  Buffer dinp(be, N * C), dw = upload(be, std::vector<float>(C, 0.0f)), db = upload(be, std::vector<float>(C, 0.0f));
  be.layernorm_backward_input(dinp.view(), dout.view(), x.view(), mean.view(), rstd.view(), wt.view(), N, C, false);
  be.layernorm_backward_weight(dw.view(), db.view(), dout.view(), x.view(), mean.view(), rstd.view(), N, C);
  EXPECT_LT(rel_error(to_double(download(be, dinp.view())), numeric_grad(inp, objective)), kTolerance);
  EXPECT_LT(rel_error(to_double(download(be, dw.view())), numeric_grad(w, objective)), kTolerance);
  EXPECT_LT(rel_error(to_double(download(be, db.view())), numeric_grad(b, objective)), kTolerance);
}

TEST(LayerGrad, Gelu) {
  CpuBackend be;
  const int n = 40;
  auto inp = random_vector(n, 9, 2.0f);
  const auto r = random_vector(n, 10);
  auto objective = [&]() {
    Buffer out(be, n);
    be.gelu_forward(out.view(), upload(be, inp).view(), n);
    return dot(download(be, out.view()), r);
  };
  Buffer dinp(be, n);
  be.gelu_backward(dinp.view(), upload(be, inp).view(), upload(be, r).view(), n);
  EXPECT_LT(rel_error(to_double(download(be, dinp.view())), numeric_grad(inp, objective)), kTolerance);
  // GPT-2's tanh GELU at a hand-checked point: gelu(1) = 0.5 (1 + tanh(0.79788 * 1.044715)) = 0.841192.
  Buffer one = upload(be, {1.0f}), y(be, 1);
  be.gelu_forward(y.view(), one.view(), 1);
  EXPECT_NEAR(download(be, y.view())[0], 0.841192f, 1e-5f);
}

TEST(LayerGrad, CausalAttention) {
  CpuBackend be;
  const int B = 2, T = 5, C = 8, NH = 2;
  auto qkv = random_vector(B * T * 3 * C, 11);
  const auto r = random_vector(B * T * C, 12);
  auto objective = [&]() {
    Buffer out(be, B * T * C), att(be, B * NH * T * T);
    be.attention_forward(out.view(), att.view(), upload(be, qkv).view(), B, T, C, NH);
    return dot(download(be, out.view()), r);
  };
  const Buffer x = upload(be, qkv);
  Buffer out(be, B * T * C), att(be, B * NH * T * T), dqkv(be, B * T * 3 * C);
  be.attention_forward(out.view(), att.view(), x.view(), B, T, C, NH);
  be.attention_backward(dqkv.view(), upload(be, r).view(), x.view(), att.view(), B, T, C, NH);
  EXPECT_LT(rel_error(to_double(download(be, dqkv.view())), numeric_grad(qkv, objective)), kTolerance);
  // Probabilities: rows sum to one, zero above the diagonal.
  const auto p = download(be, att.view());
  for (int row = 0; row < B * NH * T; ++row) {
    const int t = row % T;
    double s = 0.0;
    for (int j = 0; j < T; ++j) {
      s += p[static_cast<std::size_t>(row) * T + j];
      if (j > t) {
        EXPECT_EQ(p[static_cast<std::size_t>(row) * T + j], 0.0f);
      }
    }
    EXPECT_NEAR(s, 1.0, 1e-6);
  }
}

TEST(LayerGrad, AttentionIsCausal) {
  CpuBackend be;
  const int B = 1, T = 4, C = 4, NH = 1;
  auto qkv = random_vector(B * T * 3 * C, 13);
  Buffer out1(be, T * C), out2(be, T * C), att(be, T * T);
  be.attention_forward(out1.view(), att.view(), upload(be, qkv).view(), B, T, C, NH);
  for (int c = 0; c < 3 * C; ++c) qkv[static_cast<std::size_t>(T - 1) * 3 * C + c] += 1.0f;  // change the last token
  be.attention_forward(out2.view(), att.view(), upload(be, qkv).view(), B, T, C, NH);
  const auto a = download(be, out1.view()), b = download(be, out2.view());
  for (int i = 0; i < (T - 1) * C; ++i) EXPECT_EQ(a[i], b[i]) << "earlier position " << i / C << " saw the future";
  EXPECT_NE(a[(T - 1) * C], b[(T - 1) * C]);
}

TEST(LayerGrad, EmbeddingWeights) {
  CpuBackend be;
  const int N = 6, T = 3, C = 4, V = 5, row0 = 1;  // row0 != 0: a sequence-parallel slice
  const std::vector<std::int32_t> tokens{0, 3, 3, 4, 1, 0};
  auto wte = random_vector(V * C, 14), wpe = random_vector(T * C, 15);
  const auto r = random_vector(N * C, 16);
  const Buffer tok = upload_i32(be, tokens);
  auto objective = [&]() {
    Buffer out(be, N * C);
    be.embedding_forward(out.view(), tok.view(), upload(be, wte).view(), upload(be, wpe).view(), N, T, C, row0);
    return dot(download(be, out.view()), r);
  };
  Buffer dwte = upload(be, std::vector<float>(V * C, 0.0f)), dwpe = upload(be, std::vector<float>(T * C, 0.0f));
  be.embedding_backward_weight(dwte.view(), dwpe.view(), upload(be, r).view(), tok.view(), N, T, C, row0);
  EXPECT_LT(rel_error(to_double(download(be, dwte.view())), numeric_grad(wte, objective)), kTolerance);
  EXPECT_LT(rel_error(to_double(download(be, dwpe.view())), numeric_grad(wpe, objective)), kTolerance);
  // Out-of-vocabulary tokens are an error, not a silent read past wte.
  Buffer out(be, N * C);
  const Buffer bad = upload_i32(be, {0, 1, 2, 3, 4, V});
  EXPECT_THROW(be.embedding_forward(out.view(), bad.view(), upload(be, wte).view(), upload(be, wpe).view(), N, T, C, 0),
               std::out_of_range);
}

TEST(LayerGrad, CrossEntropy) {
  CpuBackend be;
  const int N = 3, V = 7;
  const float scale = 0.25f;
  auto logits = random_vector(N * V, 17, 3.0f);
  const Buffer tg = upload_i32(be, {2, 0, 6});
  auto objective = [&]() {
    Buffer losses(be, N), probs(be, N * V);
    be.crossentropy_forward(losses.view(), probs.view(), upload(be, logits).view(), tg.view(), N, V);
    double s = 0.0;
    for (float l : download(be, losses.view())) s += scale * static_cast<double>(l);
    return s;
  };
  Buffer losses(be, N), probs(be, N * V), dlogits(be, N * V);
  be.crossentropy_forward(losses.view(), probs.view(), upload(be, logits).view(), tg.view(), N, V);
  be.crossentropy_backward(dlogits.view(), probs.view(), tg.view(), N, V, scale);
  EXPECT_LT(rel_error(to_double(download(be, dlogits.view())), numeric_grad(logits, objective)), kTolerance);
  // Uniform logits: every loss is ln V.
  Buffer zero = upload(be, std::vector<float>(N * V, 0.0f));
  be.crossentropy_forward(losses.view(), probs.view(), zero.view(), tg.view(), N, V);
  for (float l : download(be, losses.view())) EXPECT_NEAR(l, std::log(7.0f), 1e-6f);
}

TEST(LayerGrad, GemmTransposesAgainstNaive) {
  CpuBackend be;
  const int M = 3, N = 4, K = 5;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      const auto a = random_vector(M * K, 20 + ta), b = random_vector(K * N, 30 + tb), c0 = random_vector(M * N, 40);
      Buffer c = upload(be, c0);
      be.gemm(ta, tb, M, N, K, 2.0f, upload(be, a).view(), ta ? M : K, upload(be, b).view(), tb ? K : N, 0.5f, c.view(),
              N);
      const auto got = download(be, c.view());
      for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
          double s = 0.0;
          for (int k = 0; k < K; ++k) {
            const float av = ta ? a[k * M + i] : a[i * K + k];
            const float bv = tb ? b[j * K + k] : b[k * N + j];
            s += static_cast<double>(av) * bv;
          }
          EXPECT_NEAR(got[i * N + j], 2.0 * s + 0.5 * c0[i * N + j], 1e-5) << "trans " << ta << tb;
        }
      }
    }
  }
}

}  // namespace
}  // namespace zeropp::e2e
