// estimate(): JSON keys, throughput identities, infeasible plans as results, and the simulator seam.
#include "cost_model/analytic/estimate.hpp"

#include <gtest/gtest.h>

#include "cost_model/analytic/flops.hpp"
#include "cost_model/spec/error.hpp"
#include "estimate_fixtures.hpp"

namespace zeropp::analytic {
namespace {

using test::gpt;
using test::plan_of;
using test::round_cluster;

Plan zeropp_plan() {
  ParallelSpec p;
  p.strategy = Strategy::zeropp_b;
  p.schedule = ScheduleKind::zeropp;
  p.zero_stage = 1;
  p.z = 8;
  p.pp = 2;
  p.dp = 2;
  p.v = 2;
  p.micro_batch = 1;
  p.micro_batches = 16;
  p.unit = 4;
  // GPT-3 13B shape (Brown et al. 2020): 40 layers, h 5120, 40 heads.
  return plan_of(gpt(40, 5120, 40, 2048, 50257), round_cluster(), p);
}

TEST(Estimate, JsonHasEveryRequiredKey) {
  const nlohmann::json j = to_json(estimate(zeropp_plan()));
  for (const char* k : {"tp", "pp", "dp", "zero", "total"}) EXPECT_TRUE(j.at("comm_bytes").contains(k)) << k;
  for (const char* k : {"params", "grads", "optimizer", "activations", "buffers", "peak"})
    EXPECT_TRUE(j.at("memory_bytes").contains(k)) << k;
  for (const char* k : {"compute", "comm_exposed", "bubble", "iteration"}) EXPECT_TRUE(j.at("time_s").contains(k)) << k;
  for (const char* k : {"tokens_per_s", "tflops_per_gpu", "mfu"}) EXPECT_TRUE(j.at("throughput").contains(k)) << k;
  EXPECT_TRUE(j.at("feasible").is_boolean());
  EXPECT_TRUE(j.at("over_by_bytes").is_number());
}

TEST(Estimate, ThroughputFollowsFromIterationTime) {
  const Plan plan = zeropp_plan();
  const Estimate e = estimate(plan);
  const double t = e.time_s.iteration;
  EXPECT_DOUBLE_EQ(t, e.time_s.compute + e.time_s.comm_exposed + e.time_s.bubble);
  EXPECT_DOUBLE_EQ(e.time_s.comm_exposed,
                   e.time_s.tp_exposed + e.time_s.pp_exposed + e.time_s.zero_exposed + e.time_s.dp_exposed);
  // 1 x 16 x 8 x 2 = 256 sequences of 2048 tokens over 32 GPUs.
  EXPECT_DOUBLE_EQ(e.throughput.tokens_per_s, 256.0 * 2048 / t);
  // MFU counts causal attention (half of s x s), mfu_full_attention the full s x s; the plan's GPT layer runs
  // unfused attention over the full s x s and recomputes nothing, so it executes the full count.
  const double model_flops = model_flops_per_iteration(plan.model, 256);
  ASSERT_EQ(plan.model.attention_kind(), AttentionKind::unfused);
  EXPECT_DOUBLE_EQ(e.throughput.mfu,
                   model_flops_per_iteration(plan.model, 256, AttentionCount::causal) / (t * 32 * 100e12));
  EXPECT_DOUBLE_EQ(e.throughput.mfu_full_attention, model_flops / (t * 32 * 100e12));
  EXPECT_DOUBLE_EQ(e.throughput.tflops_per_gpu, model_flops / (t * 32) / 1e12);
  EXPECT_GT(e.time_s.bubble, 0);
  EXPECT_GT(e.time_s.zero_exposed, 0);  // at least the first gather
  EXPECT_EQ(e.time_s.tp_exposed, 0);    // TP-free
}

TEST(Estimate, InfeasiblePlanIsAResultWithTheExcess) {
  // GPT-3 175B on one pipeline stage of 8 GPUs with plain DP model states cannot fit in 80 GiB.
  ParallelSpec p;
  p.strategy = Strategy::three_d;
  p.schedule = ScheduleKind::one_f_one_b;
  p.tp = 8;
  p.zero_stage = 0;
  const Plan plan = plan_of(test::gpt3_175b(), round_cluster(), p);
  const Estimate e = estimate(plan);
  EXPECT_FALSE(e.feasible);
  EXPECT_DOUBLE_EQ(e.over_by_bytes, e.memory_bytes.peak - 80.0 * (1ull << 30));
  EXPECT_GT(e.over_by_bytes, 200e9);  // 16 bytes x 175e9 / 8 = 350 GB of model states alone
  const nlohmann::json j = to_json(e);
  EXPECT_FALSE(j.at("feasible").get<bool>());
  EXPECT_GT(j.at("over_by_bytes").get<double>(), 0);
}

TEST(Estimate, FeasiblePlanHasNoExcess) {
  Plan plan = zeropp_plan();
  plan.parallel.recompute = Recompute::selective;  // 7 in-flight chunk micro-batches of 10 layers at 34sbh each
  const Estimate e = estimate(plan);
  EXPECT_TRUE(e.feasible);
  EXPECT_EQ(e.over_by_bytes, 0);
  EXPECT_LE(e.memory_bytes.peak, 80.0 * (1ull << 30));
}

// TFLOP/s per GPU counts what the schedule executes: the ZeroPP schedule does not recompute its last virtual
// stage (40 layers / (pp 2 x v 2) = 10 of the 40), so 30 layers' forwards are added, not 40. A Megatron
// schedule (1F1B) recomputes every layer: hardware_flops_per_iteration's full count.
TEST(Estimate, RecomputeCountsInExecutedFlopsNotInMfu) {
  Plan plan = zeropp_plan();
  plan.parallel.recompute = Recompute::full;
  const Estimate e = estimate(plan);
  const double t = e.time_s.iteration;
  const double skipped = 256.0 * 10 * layer_flops(plan.model, 1).f;
  EXPECT_DOUBLE_EQ(e.throughput.tflops_per_gpu,
                   (hardware_flops_per_iteration(plan.model, 256, Recompute::full) - skipped) / (t * 32) / 1e12);
  EXPECT_LT(e.throughput.mfu * 100e12 / 1e12, e.throughput.tflops_per_gpu);
  plan.parallel.strategy = Strategy::pp_zero1;
  plan.parallel.schedule = ScheduleKind::interleaved;
  plan.parallel.z = 1;
  plan.parallel.dp = 16;
  plan.parallel.micro_batches = 16;
  const Estimate m = estimate(plan);
  EXPECT_DOUBLE_EQ(m.throughput.tflops_per_gpu,
                   hardware_flops_per_iteration(plan.model, 256, Recompute::full) / (m.time_s.iteration * 32) / 1e12);
}

TEST(Estimate, PipelineModelReplacesTheClosedForms) {
  EstimateOptions options;
  options.pipeline = [](const Plan&, const ActionCosts& costs) {
    PipelineTiming t;
    t.compute = costs.f;  // anything derived from the cost table
    t.bubble = 1;
    t.iteration = t.compute + t.bubble;
    t.peak_memory = 1e9;
    return t;
  };
  const Plan plan = zeropp_plan();
  const Estimate e = estimate(plan, options);
  EXPECT_DOUBLE_EQ(e.time_s.compute, action_costs(plan).f);
  EXPECT_DOUBLE_EQ(e.time_s.iteration, action_costs(plan).f + 1);
  EXPECT_DOUBLE_EQ(e.memory_bytes.peak, 1e9);
  EXPECT_TRUE(e.feasible);
}

TEST(Estimate, InvalidPlanIsAnError) {
  Plan plan = zeropp_plan();
  plan.parallel.pp = 9;  // splits neither 40 layers nor 40 + 2 (the embedding and the loss counted)
  EXPECT_THROW(estimate(plan), SpecError);
}

}  // namespace
}  // namespace zeropp::analytic
