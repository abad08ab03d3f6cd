// ZeRO-3 as each framework executes it (zero3_execution.hpp): the copies around the collectives, counted by hand
// from the frameworks' code paths, priced at the profile's HBM rate; DeepSpeed's per-module fetches and reduce
// buckets; Megatron and ZeroPP priced as one collective per unit, as before.
#include "cost_model/analytic/zero3_execution.hpp"

#include <gtest/gtest.h>

#include "cost_model/analytic/op_time.hpp"
#include "cost_model/analytic/params.hpp"
#include "cost_model/analytic/time_model.hpp"
#include "estimate_fixtures.hpp"

namespace zeropp::analytic {
namespace {

// 4 layers of h = 1024 on 8 GPUs of one node, pure ZeRO-3, bf16; HBM 1 TB/s (no operation table: efficiency 1).
Plan zero3_plan(Framework framework, int micro_batches = 1) {
  ClusterSpec c = test::round_cluster(1, 8);
  c.memory_bandwidth = 1e12;
  ParallelSpec p;
  p.strategy = Strategy::zero3;
  p.zero_stage = 3;
  p.z = 8;
  p.dp = 1;
  p.micro_batch = 1;
  p.micro_batches = micro_batches;
  p.framework = framework;
  return test::plan_of(test::gpt(4, 1024, 16, 1024, 50000), c, p);
}

constexpr double kP = 1e6;  // parameters of the unit
constexpr double kLayer = 1e6;

TEST(Zero3Execution, Fsdp2CopiesByHand) {
  const Plan plan = zero3_plan(Framework::fsdp2, 2);
  const Zero3CopyBytes b = zero3_copy_bytes(plan, kP, kLayer, 8);
  // bf16 gathered (e = 2), fp32 reduced (r = 4): copy-in (4 + 3e) / N, copy-out 2e, chunk_cat e + r, accumulation
  // (r + 8) / N on the second of the two micro-batches' reduce-scatters (the first assigns the shard): half of it
  // per reduce-scatter.
  EXPECT_DOUBLE_EQ(b.gather_copy_in, kP / 8 * 10);
  EXPECT_DOUBLE_EQ(b.copy_out, kP * 4);
  EXPECT_DOUBLE_EQ(b.reduce_copy_in, kP * 6);
  EXPECT_DOUBLE_EQ(b.reduce_side, kP / 8 * 12 / 2);
  EXPECT_EQ(b.collectives_per_layer, 1);
  // Seconds at 1 TB/s: the copy-out each forward, copy-out + chunk_cat each backward.
  const Zero3Seconds s = zero3_seconds(plan, Group{8, 1}, kP, kLayer);
  EXPECT_DOUBLE_EQ(s.forward_copies, 4e6 / 1e12);
  EXPECT_DOUBLE_EQ(s.backward_copies, 10e6 / 1e12);
  EXPECT_DOUBLE_EQ(s.gather, collective_time(plan.cluster, Collective::all_gather, 8, 1, 2 * kP) + 1.25e6 / 1e12);
  EXPECT_DOUBLE_EQ(s.reduce_scatter,
                   collective_time(plan.cluster, Collective::reduce_scatter, 8, 1, 4 * kP) + 0.75e6 / 1e12);
}

TEST(Zero3Execution, Fsdp1HasNoCopyOut) {
  const Zero3CopyBytes b = zero3_copy_bytes(zero3_plan(Framework::fsdp1), kP, kLayer, 8);
  EXPECT_EQ(b.copy_out, 0);
  EXPECT_EQ(b.reduce_copy_in, 0);
  EXPECT_DOUBLE_EQ(b.gather_copy_in, kP / 8 * 6);  // fp32 shard cast to bf16
  EXPECT_DOUBLE_EQ(b.reduce_side, kP * 6);         // bf16 gradient cast to fp32, no accumulation
}

TEST(Zero3Execution, DeepSpeedFetchesModulesAndReducesInBuckets) {
  const Plan plan = zero3_plan(Framework::deepspeed);
  // A 2e8-parameter layer: ceil(2e8 / 5e7) = 4 prefetch buckets, a GPT layer has 4 weight modules: 4 all-gathers.
  EXPECT_EQ(zero3_copy_bytes(plan, 2e8, 2e8, 8).collectives_per_layer, 4);
  // 1e9 per layer: 20 buckets, capped at the 4 modules; 1e7: one bucket.
  EXPECT_EQ(zero3_copy_bytes(plan, 1e9, 1e9, 8).collectives_per_layer, 4);
  EXPECT_EQ(zero3_copy_bytes(plan, 1e7, 1e7, 8).collectives_per_layer, 1);
  // A Llama layer has 7 weight modules.
  Plan llama = plan;
  llama.model = test::llama2_7b();
  EXPECT_EQ(zero3_copy_bytes(llama, 1e9, 1e9, 8).collectives_per_layer, 7);
  // Two layers of 2e8: 8 all-gathers of 5e7 parameters each; the gradients, 4e8 < 5e8, are 4/5 of one bucket's
  // reduce-scatter. Copies: copy-in 2e/N, bucket and flatten copies 4e per parameter, partition cast (e + 4)/N.
  const Zero3Seconds s = zero3_seconds(plan, Group{8, 1}, 4e8, 2e8);
  const ClusterSpec& c = plan.cluster;
  EXPECT_NEAR(s.gather, 8 * collective_time(c, Collective::all_gather, 8, 1, 2 * 5e7) + 4e8 / 8 * 4 / 1e12, 1e-15);
  EXPECT_NEAR(s.reduce_scatter,
              0.8 * collective_time(c, Collective::reduce_scatter, 8, 1, 2 * 5e8) + (4e8 * 8 + 4e8 / 8 * 6) / 1e12,
              1e-15);
  EXPECT_DOUBLE_EQ(s.forward_copies, 4e8 * 4 / 1e12);
  EXPECT_DOUBLE_EQ(s.backward_copies, 4e8 * 4 / 1e12);
}

// Megatron and ZeroPP: no copies, one collective per unit, as the time model priced them before.
TEST(Zero3Execution, OthersAreOneCollectivePerUnit) {
  for (const Framework f : {Framework::megatron, Framework::zeropp}) {
    const Plan plan = zero3_plan(f);
    const Zero3Seconds s = zero3_seconds(plan, Group{8, 1}, 4 * kP, kLayer);
    const FrameworkPrecision precision = framework_precision(plan.parallel);
    EXPECT_DOUBLE_EQ(s.gather, collective_time(plan.cluster, Collective::all_gather, 8, 1,
                                               element_bytes(precision.gather) * 4 * kP));
    EXPECT_DOUBLE_EQ(s.reduce_scatter, collective_time(plan.cluster, Collective::reduce_scatter, 8, 1,
                                                       element_bytes(precision.reduce) * 4 * kP));
    EXPECT_EQ(s.forward_copies, 0);
    EXPECT_EQ(s.backward_copies, 0);
  }
}

// The time model charges FSDP2's compute-stream copies to every forward and backward of pure ZeRO-3 and the
// per-layer collectives' latencies to the gathers: fsdp2 is slower than fsdp1 on the same plan by exactly them.
TEST(Zero3Execution, TimeModelChargesTheCopiesToComputeAndGathers) {
  const Plan fsdp2 = zero3_plan(Framework::fsdp2), fsdp1 = zero3_plan(Framework::fsdp1);
  const ActionCosts a2 = action_costs(fsdp2), a1 = action_costs(fsdp1);
  const double params = static_cast<double>(rank_params(fsdp2.model, 1, 1, 0, 1).total());
  // Both frameworks keep the same states and kernels: the forward differs by the copy-out (2e per parameter).
  EXPECT_NEAR(a2.f - a1.f, params * 4 / 1e12, 1e-15);
  EXPECT_NEAR(a2.b - a1.b, params * (4 + 6) / 1e12, 1e-15);
  EXPECT_GT(a2.gather, a1.gather);  // copy-in (4 + 3e)/N against (4 + e)/N
}

}  // namespace
}  // namespace zeropp::analytic
