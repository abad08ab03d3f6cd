// The ZeroPP-vs-TP criterion at and around its boundary, hand-computed.
#include "cost_model/analytic/criterion.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace zeropp::analytic
