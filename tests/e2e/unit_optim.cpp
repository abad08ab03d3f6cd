// AdamW against hand-computed steps, weight decay on 2-D weights only, flat sub-ranges, global-norm clipping.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "e2e/backend/cpu_backend.hpp"
#include "e2e/data/token_batch.hpp"
#include "e2e/model/reference.hpp"
#include "e2e/optim/adamw.hpp"
#include "tests/e2e/unit_test_util.hpp"

namespace zeropp::e2e {
namespace {

using testing::download;
using testing::upload;

GptConfig tiny() {
  GptConfig g;
  g.L = 1;
  g.C = 4;
  g.NH = 2;
  g.T = 2;
  g.V = 3;
  g.F = 16;
  return g;
}

TEST(AdamW, DecayIntervalsFollowTheLayout) {
  const GptConfig g = tiny();
  const ChunkLayout layout(g, chunk_spec_for_stage(g, 0, 1, 1, 1));
  // [wte 12][wpe 8] then block 0: ln1_w 4, ln1_b 4, qkv_w 48 ...: decayed [0, 20), then qkv_w from 28.
  const auto all = layout.decay_intervals(0, layout.numel());
  ASSERT_GE(all.size(), 2u);
  EXPECT_EQ(all[0], (std::pair<std::int64_t, std::int64_t>{0, 20}));
  EXPECT_EQ(all[1].first, 28);
  EXPECT_EQ(all[1].second, 28 + 48);
  // A sub-range [18, 30): 2 decayed (wpe's tail), 8 not (ln1), 2 decayed (qkv_w's head); relative offsets.
  const auto part = layout.decay_intervals(18, 30);
  ASSERT_EQ(part.size(), 2u);
  EXPECT_EQ(part[0], (std::pair<std::int64_t, std::int64_t>{0, 2}));
  EXPECT_EQ(part[1], (std::pair<std::int64_t, std::int64_t>{10, 12}));
}

TEST(AdamW, TwoStepsByHand) {
  CpuBackend be;
  const GptConfig g = tiny();
  const ChunkLayout layout(g, chunk_spec_for_stage(g, 0, 1, 1, 1));
  AdamWConfig cfg;
  cfg.lr = 0.1f;
  cfg.beta1 = 0.9f;
  cfg.beta2 = 0.95f;
  cfg.eps = 1e-8f;
  cfg.weight_decay = 0.1f;
  AdamW opt(be, cfg, layout, 18, 30);  // elements 0,1 and 10,11 decayed; 2..9 not
  Buffer p = upload(be, std::vector<float>(12, 1.0f));
  Buffer gr = upload(be, std::vector<float>(12, 0.5f));
  opt.step(p.view(), gr.view(), 1, 1.0f);
  // t=1: m = 0.05, v = 0.0125, mhat = 0.5, vhat = 0.25, update 0.5/(0.5+eps) = 1.
  // decayed: 1 - 0.1 * (1 + 0.1 * 1) = 0.89; not decayed: 1 - 0.1 = 0.9.
  auto after1 = download(be, p.view());
  EXPECT_NEAR(after1[0], 0.89f, 1e-6f);
  EXPECT_NEAR(after1[5], 0.9f, 1e-6f);
  EXPECT_NEAR(after1[11], 0.89f, 1e-6f);
  // t=2 with g = -0.5: m = 0.045 - 0.05 = -0.005, v = 0.011875 + 0.0125 = 0.024375,
  // mhat = -0.005/0.19, vhat = 0.024375/0.0975 = 0.25, update = -0.0263158/0.5 = -0.0526316.
  // not decayed: 0.9 + 0.1 * 0.0526316 = 0.9052632.
  be.copy_from_host(gr.view(), std::vector<float>(12, -0.5f).data());
  opt.step(p.view(), gr.view(), 2, 1.0f);
  auto after2 = download(be, p.view());
  EXPECT_NEAR(after2[5], 0.9052632f, 1e-6f);
  // decayed: 0.89 - 0.1 * (-0.0526316 + 0.1 * 0.89) = 0.89 - 0.1 * 0.0363684 = 0.8863632.
  EXPECT_NEAR(after2[0], 0.8863632f, 1e-6f);
}

TEST(AdamW, GradScaleEqualsScaledGradients) {
  CpuBackend be;
  const GptConfig g = tiny();
  const ChunkLayout layout(g, chunk_spec_for_stage(g, 0, 1, 1, 1));
  const auto grads = testing::random_vector(static_cast<std::size_t>(layout.numel()), 3);
  std::vector<float> half(grads);
  for (auto& x : half) x *= 0.5f;
  AdamW a(be, {}, layout, 0, layout.numel()), b(be, {}, layout, 0, layout.numel());
  Buffer pa = upload(be, std::vector<float>(grads.size(), 0.3f)),
         pb = upload(be, std::vector<float>(grads.size(), 0.3f));
  a.step(pa.view(), upload(be, grads).view(), 1, 0.5f);
  b.step(pb.view(), upload(be, half).view(), 1, 1.0f);
  EXPECT_EQ(download(be, pa.view()), download(be, pb.view()));
}

TEST(AdamW, RejectsBadRanges) {
  CpuBackend be;
  const GptConfig g = tiny();
  const ChunkLayout layout(g, chunk_spec_for_stage(g, 0, 1, 1, 1));
  EXPECT_THROW(AdamW(be, {}, layout, 0, layout.numel() + 1), std::out_of_range);
  AdamW opt(be, {}, layout, 0, 4);
  Buffer p(be, 5), gr(be, 5);
  EXPECT_THROW(opt.step(p.view(), gr.view(), 1, 1.0f), std::invalid_argument);
  Buffer p4(be, 4), g4(be, 4);
  EXPECT_THROW(opt.step(p4.view(), g4.view(), 0, 1.0f), std::invalid_argument);
}

TEST(Clip, ScaleFromGlobalNorm) {
  EXPECT_FLOAT_EQ(clip_scale(16.0, 1.0f), static_cast<float>(1.0 / (4.0 + 1e-6)));  // norm 4 -> 1/4
  EXPECT_EQ(clip_scale(0.25, 1.0f), 1.0f);                                          // norm 0.5 < 1
  EXPECT_EQ(clip_scale(1e6, 0.0f), 1.0f);                                           // disabled
  EXPECT_THROW(clip_scale(std::numeric_limits<double>::quiet_NaN(), 1.0f), std::runtime_error);
  EXPECT_THROW(clip_scale(std::numeric_limits<double>::infinity(), 1.0f), std::runtime_error);
}

TEST(Clip, ReferenceStepClipsToMaxNorm) {
  // Clipping at a tiny max norm equals an unclipped step on gradients scaled to that norm.
  CpuBackend be;
  GptConfig g = tiny();
  g.V = 8;
  const SyntheticData data(g.V, 2);
  ReferenceConfig rc;
  rc.model = g;
  rc.optim.grad_clip = 1e-3f;
  ReferenceTrainer t(be, rc, data);
  const auto before = t.host_parameters();
  const StepResult r = t.step();
  EXPECT_GT(r.grad_norm, 1e-3);
  EXPECT_NEAR(r.clip_scale, 1e-3 / r.grad_norm, 1e-9);
  // The trainer's step equals AdamW fed the unclipped gradients with grad_scale = clip_scale, and the first
  // moment holds (1 - beta1) * scale * g.
  const auto grads = t.host_gradients();
  AdamW probe(be, rc.optim, t.model().layout(), 0, t.model().layout().numel());
  Buffer p = upload(be, before);
  probe.step(p.view(), upload(be, grads).view(), 1, r.clip_scale);
  EXPECT_EQ(download(be, p.view()), t.host_parameters());
  const auto m = download(be, probe.m());
  for (std::size_t i = 0; i < m.size(); i += 97) {
    EXPECT_NEAR(m[i], (1.0f - rc.optim.beta1) * r.clip_scale * grads[i], 1e-12);
  }
}

// The global norm sums the squares of many parameter segments in one call (Backend::total_sum_squares; the CUDA
// backend waits for the device once instead of once per segment). It must equal the loop of per-part sums bit for
// bit, so the trainer's runs stay exact against the single-rank reference: with zero-length parts, with no parts,
// and as Chunk::grad_sum_squares uses it (every segment but a tied copy; TP rank 0 counts the replicated ones).
// The CUDA backend's own version is checked against its per-part loop in tests/e2e/cuda_backend_test.cpp.
TEST(Clip, ManyPartSumOfSquaresEqualsThePerPartLoopBitForBit) {
  CpuBackend be;
  const auto host = testing::random_vector(1000, 7);
  const Buffer x = upload(be, host);
  const Tensor v = x.view();
  const std::vector<Tensor> parts{v.slice(0, 3), v.slice(3, 0), v.slice(3, 500), v.slice(503, 0), v.slice(503, 497)};
  double loop = 0.0;
  for (const Tensor& p : parts) loop += be.sum_squares(p);
  EXPECT_EQ(be.total_sum_squares(parts), loop);
  double whole = 0.0;
  for (float e : host) whole += double(e) * e;
  EXPECT_NEAR(be.total_sum_squares(parts), whole, 1e-12 * whole) << "the parts cover every element once";
  EXPECT_EQ(be.total_sum_squares({}), 0.0);
  EXPECT_EQ(be.total_sum_squares(std::vector<Tensor>{v.slice(10, 0), v.slice(20, 0)}), 0.0);

  GptConfig g = tiny();
  g.V = 8;
  const SyntheticData data(g.V, 2);
  ReferenceConfig rc;
  rc.model = g;
  ReferenceTrainer t(be, rc, data);
  t.step();
  const Chunk& model = t.model();
  double segments = 0.0;
  for (const ParamSegment& seg : model.layout().segments())
    if (!seg.tied_copy) segments += be.sum_squares(model.gradients().slice(seg.offset, seg.numel));
  EXPECT_GT(segments, 0.0);
  EXPECT_EQ(model.grad_sum_squares(), segments);
}

}  // namespace
}  // namespace zeropp::e2e
