// The ZeroPP-vs-TP criterion at and around its boundary, hand-computed.
#include "cost_model/analytic/criterion.hpp"

#include <gtest/gtest.h>

#include "cost_model/analytic/time_model.hpp"

#include "cost_model/spec/error.hpp"
#include "estimate_fixtures.hpp"

namespace zeropp::analytic {
namespace {

TEST(Criterion, ExactlyAtTheBoundaryDoesNotHold) {
  // h = 4096, s = 2048, b = 1, U = 9: 2 s U b = 36864 = 9 h.
  const Criterion c = criterion({4096, 2048, 1, 9});
  EXPECT_EQ(c.lhs, 36864);
  EXPECT_EQ(c.rhs, 36864);
  EXPECT_FALSE(c.holds);
  // Both move the same bytes there: 2 x 36 h^2 / 9 = 2 x 8 s b h = 134,217,728.
  EXPECT_DOUBLE_EQ(c.zeropp_bytes_per_layer, 134217728.0);
  EXPECT_DOUBLE_EQ(c.tp_bytes_per_layer, 134217728.0);
  EXPECT_EQ(c.min_unit, 10);
}

TEST(Criterion, OneMoreUnitHolds) {
  const Criterion c = criterion({4096, 2048, 1, 10});
  EXPECT_EQ(c.lhs, 40960);
  EXPECT_TRUE(c.holds);
  EXPECT_LT(c.zeropp_bytes_per_layer, c.tp_bytes_per_layer);
  EXPECT_DOUBLE_EQ(c.zeropp_bytes_per_layer, 2 * 36.0 * 4096 * 4096 / 10);
}

TEST(Criterion, MinUnitWhenTheBoundaryIsNotAnInteger) {
  // h = 5120, s = 2048, b = 1: 9h / (2sb) = 11.25 -> 12.
  EXPECT_EQ(criterion({5120, 2048, 1, 1}).min_unit, 12);
  EXPECT_FALSE(criterion({5120, 2048, 1, 11}).holds);
  EXPECT_TRUE(criterion({5120, 2048, 1, 12}).holds);
  // Large micro-batches make U = 1 enough: 2 * 2048 * 16 = 65536 > 9 * 5120.
  EXPECT_EQ(criterion({5120, 2048, 16, 1}).min_unit, 1);
}

TEST(Criterion, PerWReduction) {
  // 24h^2/U + 12h^2 < 8sbh needs 2sb > 3h. h = 4096, s = 2048, b = 1: 4096 < 12288, never.
  const Criterion never = criterion({4096, 2048, 1, 64});
  EXPECT_FALSE(never.min_unit_per_w.has_value());
  EXPECT_DOUBLE_EQ(never.zeropp_per_w_bytes_per_layer, 2 * (24.0 * 4096 * 4096 / 64 + 12.0 * 4096 * 4096));
  // b = 8: U > 6h / (2sb - 3h) = 24576 / 20480 = 1.2 -> 2. U = 1: 36h^2 = 603,979,776 > 8sbh = 536,870,912;
  // U = 2: 24h^2 = 402,653,184 < 536,870,912.
  const Criterion c = criterion({4096, 2048, 8, 1});
  ASSERT_TRUE(c.min_unit_per_w.has_value());
  EXPECT_EQ(*c.min_unit_per_w, 2);
  EXPECT_GT(c.zeropp_per_w_bytes_per_layer, c.tp_bytes_per_layer);
  EXPECT_LT(criterion({4096, 2048, 8, 2}).zeropp_per_w_bytes_per_layer, c.tp_bytes_per_layer);
}

TEST(Criterion, RejectsNonPositiveInput) {
  EXPECT_THROW(criterion({0, 2048, 1, 1}), SpecError);
  EXPECT_THROW(criterion({4096, 2048, 1, 0}), SpecError);
  EXPECT_THROW(criterion({4096, 2048, 0, 1}), SpecError);
}

TEST(CriterionTime, HandComputedExposures) {
  // h = 1024, a = 16, s = 1024, 8-GPU nodes at 100 GB/s and 1 us, 100 TFLOP/s at 0.5, no HBM term.
  const ModelSpec m = test::gpt(4, 1024, 16, 1024, 8192);
  const ClusterSpec c = test::round_cluster();
  const CriterionTime t = criterion_time(m, c, 1, 2);
  EXPECT_EQ(t.group, 8);
  // Compute of one layer (F + B + W = 3 x 24bsh^2 + 12 bs^2h at b = 1) for U = 2 micro-batches.
  const double flops = 3 * 25769803776.0 + 3 * 4294967296.0;
  EXPECT_NEAR(t.compute_s, 2 * flops / 50e12, 1e-15);
  // TP: 4 all-reduces of b s h * 2 = 2,097,152 bytes over 8 GPUs, for 8 x U micro-batch passes.
  const double ar = 2 * 7 * (1e-6 + 2097152.0 / (8 * 100e9));
  EXPECT_NEAR(t.tp_exposed_s, 2 * 8 * 4 * ar, 1e-12);
  // ZeroPP: 2 all-gathers + 1 reduce-scatter of (12h^2 + 13h) * 2 bytes over 8 GPUs.
  const double bytes = 2.0 * (12.0 * 1024 * 1024 + 13 * 1024);
  EXPECT_NEAR(t.zeropp_comm_s, 3 * 7 * (1e-6 + bytes / (8 * 100e9)), 1e-15);
  EXPECT_NEAR(t.zeropp_exposed_s, std::max(0.0, t.zeropp_comm_s - t.compute_s), 1e-15);
  EXPECT_EQ(t.holds, t.zeropp_exposed_s < t.tp_exposed_s);
}

TEST(CriterionTime, BoundaryIsTheFirstUnitThatHolds) {
  // A slow NVLink makes the boundary fall above U = 1.
  ClusterSpec c = test::round_cluster();
  c.intra = {5e9, 1e-6};
  const ModelSpec m = test::gpt(4, 8192, 64, 256, 8192);
  const CriterionTime t = criterion_time(m, c, 1, 1);
  ASSERT_TRUE(t.min_unit.has_value());
  EXPECT_GT(*t.min_unit, 1);
  EXPECT_TRUE(criterion_time(m, c, 1, static_cast<int>(*t.min_unit)).holds);
  EXPECT_FALSE(criterion_time(m, c, 1, static_cast<int>(*t.min_unit) - 1).holds);
}

// The model's own layer (criterion_input): Llama-3 70B (h 8192, 64 heads, 8 KV heads of 128, SwiGLU f = 28672, no
// biases, RMSNorm): P = 2h^2 + 2h(h/8) + 3h(3.5h) + 2h = 12.75 h^2 + 2h; 8B (h 4096, 32 heads, 8 KV heads, f = 14336):
// P = 2h^2 + 2h(h/4) + 3h(3.5h) + 2h = 13 h^2 + 2h. ZeroPP moves less when 2sUb > 3P/(4h).
TEST(Criterion, TheModelsOwnLayer) {
  const ModelSpec l70 = test::llama(80, 8192, 64, 8, 28672);
  const double h = 8192;
  const Criterion c = criterion(criterion_input(l70, 1, 1));
  EXPECT_DOUBLE_EQ(c.layer_params, 12.75 * h * h + 2 * h);
  EXPECT_DOUBLE_EQ(c.rhs, 3 * (12.75 * h * h + 2 * h) / (4 * h));  // 78337.5 against the paper's 9h = 73728
  EXPECT_DOUBLE_EQ(c.rhs_gpt, 9 * h);
  // s = 4096, b = 1: U > 78337.5 / 8192 = 9.56 -> 10 (the paper's 9h gives 9).
  EXPECT_EQ(c.min_unit, 10);
  EXPECT_FALSE(criterion(criterion_input(l70, 1, 9)).holds);
  EXPECT_TRUE(criterion(criterion_input(l70, 1, 10)).holds);
  EXPECT_EQ(criterion({8192, 4096, 1, 1}).min_unit, 10);  // 12h^2 alone: 73728 / 8192 = 9 exactly -> 10
  EXPECT_DOUBLE_EQ(c.zeropp_bytes_per_layer, 2 * 3 * c.layer_params);
  EXPECT_DOUBLE_EQ(c.zeropp_per_w_bytes_per_layer, 2 * (2 * c.layer_params + c.layer_params));
  EXPECT_DOUBLE_EQ(c.tp_bytes_per_layer, 2 * 8.0 * 4096 * 8192);
  const ModelSpec l8 = test::llama(32, 4096, 32, 8, 14336);
  EXPECT_DOUBLE_EQ(criterion(criterion_input(l8, 1, 1)).layer_params, 13.0 * 4096 * 4096 + 2 * 4096);
  // GPT's layer, 12h^2 + 13h: its biases and norms move the boundary by 9.75 tokens.
  const ModelSpec g = test::gpt(40, 5120, 40, 2048, 50257);
  EXPECT_DOUBLE_EQ(criterion(criterion_input(g, 1, 1)).rhs, 9.0 * 5120 + 9.75);
}

// The TP side of the time-based answer follows the plan it stands for: with --tp-comm-overlap the time model hides
// the part of TP's collectives that their GEMMs cover, so TP exposes no more than without it; ZeroPP's side is the
// same either way.
TEST(CriterionTime, TpRuleOfThePlanItIsComparedWith) {
  const ModelSpec m = test::gpt(4, 4096, 32, 2048, 8192);
  ClusterSpec c = test::round_cluster();
  // A GPU that runs Megatron's userbuffers (compute capability 9.0+, its SMs known: spec/framework.hpp).
  c.gpu = GpuOps{};
  c.gpu->sm_count = {132, Provenance::nominal};
  c.gpu->compute_capability = {9.0, Provenance::nominal};
  const CriterionTime plain = criterion_time(m, c, 1, 4, Dtype::bf16, {});
  const CriterionTime sp = criterion_time(m, c, 1, 4, Dtype::bf16, {.sequence_parallel = true});
  const CriterionTime overlapped =
      criterion_time(m, c, 1, 4, Dtype::bf16, {.sequence_parallel = true, .tp_comm_overlap = true});
  EXPECT_LT(overlapped.tp_exposed_s, sp.tp_exposed_s);
  EXPECT_DOUBLE_EQ(overlapped.zeropp_comm_s, plain.zeropp_comm_s);
  EXPECT_DOUBLE_EQ(overlapped.compute_s, plain.compute_s);
  // The same number the time model gives a one-layer 3D plan with that rule (tp_f + tp_b per micro-batch, g of them
  // per micro-batch of ZeroPP work, U of those).
  Plan p = test::plan_of(m, c, {});
  p.model.layers = 1;
  p.parallel.strategy = Strategy::three_d;
  p.parallel.tp = 8;
  p.parallel.sequence_parallel = true;
  p.parallel.tp_comm_overlap = TpCommOverlap::userbuffers;
  const ActionCosts a = action_costs(p);
  EXPECT_NEAR(overlapped.tp_exposed_s, 4 * 8 * (a.tp_f + a.tp_b), 1e-15);
}

}  // namespace
}  // namespace zeropp::analytic
