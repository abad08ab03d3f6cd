// Issue 3, point 6: `zeropp estimate` on the simulator (search/simulated_estimate), against the closed forms
// where they must agree, against a simulation run here, and against the analytic communication volumes.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "cost_model/analytic/comm_volume.hpp"
#include "cost_model/analytic/time_model.hpp"
#include "cost_model/schedule/plan_program.hpp"
#include "cost_model/search/simulated_estimate.hpp"
#include "cost_model/search/simulated_timing.hpp"
#include "cost_model/simulate/costs_from_plan.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/names.hpp"
#include "search_fixtures.hpp"

namespace zeropp::search {
namespace {

// Communication that costs nothing next to compute: the case where the closed form's bubble and the simulated one
// must agree. Links at the fastest a cluster may state (1e6 GB/s, cluster_json.cpp) and no latency, GPUs 1000x
// slower than A100s, so the exposed communication stays far below 1e-6 of the iteration.
// Schedule-level checks: free links, no operation table (every GEMM at the one gemm_efficiency, so a stage's F, B
// and W keep the 1:1:1 FLOP ratio instead of each shape's own rate), no contention.
ClusterSpec free_comm(ClusterSpec c) {
  c.gpu.reset();
  c.intra.bandwidth = c.inter.bandwidth = 1e15;
  c.intra.latency = c.inter.latency = 0;
  c.collectives.clear();
  for (auto& [dtype, flops] : c.peak_flops) flops /= 1000;
  return c;
}

// 1F1B + ZeRO-1 on the tiny model, pp = 4 (one layer per stage), dp = 2, b = 1. A vocabulary of 8 makes the LM
// head 2*b*s*h*V FLOPs, 0.3% of a layer's 24*b*s*h^2, so the stages are uniform to that.
Plan uniform_1f1b(int B) {
  Plan plan;
  plan.model = testing::tiny_model();
  plan.model.vocab = 8;
  plan.cluster = free_comm(load_cluster("dgx-a100-80gb"));
  plan.cluster.memory_bandwidth = 0;  // no memory-bound kernels: every stage is its GEMMs
  ParallelSpec& p = plan.parallel;
  p.strategy = Strategy::pp_zero1;
  p.schedule = ScheduleKind::one_f_one_b;
  p.pp = 4;
  p.dp = 2;
  p.zero_stage = 1;
  p.micro_batch = 1;
  p.micro_batches = B;
  p.recompute = Recompute::none;
  return plan;
}

// GPT-3 1.3B on 64 A100s: pp = 4, z = 8 (a node per stage), dp = 2, b = 1, B = 16; U = 4 for ZeroPP.
Plan gpt_plan(Strategy strategy, int v) {
  Plan plan;
  plan.model = load_model("gpt3-1.3b");
  plan.cluster = load_cluster("dgx-a100-80gb");
  ParallelSpec& p = plan.parallel;
  p.strategy = strategy;
  const bool zeropp = strategy != Strategy::zero3_pp;
  p.schedule = zeropp ? ScheduleKind::zeropp : ScheduleKind::one_f_one_b;
  p.zero_stage = strategy == Strategy::zeropp_a ? 0 : 1;
  p.pp = 4;
  p.z = 8;
  p.dp = 2;
  p.v = v;
  p.micro_batch = 1;
  p.micro_batches = 16;
  p.unit = zeropp ? 4 : 1;
  return plan;
}

TEST(SimulatedEstimate, UniformOneFOneBBubbleMatchesClosedForm) {
  for (int B : {4, 8, 16}) {
    const Plan plan = uniform_1f1b(B);
    const SimulatedEstimate s = simulated_estimate(plan);
    ASSERT_TRUE(s.simulated);
    // (p - 1)(F + B + W) of one stage, written from the action costs, not from the closed-form code.
    const analytic::ActionCosts a = analytic::action_costs(plan);
    const double hand = (plan.parallel.pp - 1) * (a.f + a.b + a.w);
    EXPECT_NEAR(s.estimate.time_s.bubble, hand, 1e-2 * hand) << "B=" << B;
    EXPECT_NEAR(s.closed_form.time_s.bubble, hand, 1e-2 * hand) << "B=" << B;
    EXPECT_NEAR(s.estimate.time_s.iteration, s.closed_form.time_s.iteration, 1e-2 * s.closed_form.time_s.iteration);
    EXPECT_NEAR(s.estimate.time_s.compute, s.closed_form.time_s.compute, 1e-2 * s.closed_form.time_s.compute);
    EXPECT_LT(s.estimate.time_s.comm_exposed, 1e-6 * s.estimate.time_s.iteration);
  }
}

// The same agreement for an FP8 plan (spec/fp8.hpp): on an H100 profile with free links and no contention, its
// FP8 weight GEMMs, cast kernels and bf16 attention give F, B and W of other ratios than 1:1:1, and the simulated
// bubble is still the closed form's (p-1)(F+B+W), the iteration the closed form's.
TEST(SimulatedEstimate, Fp8UniformOneFOneBMatchesClosedForm) {
  for (Fp8Recipe recipe : {Fp8Recipe::te_delayed, Fp8Recipe::te_current}) {
    Plan plan = uniform_1f1b(8);
    ClusterSpec c = load_cluster("dgx-h100");
    c.intra.bandwidth = c.inter.bandwidth = 1e15;
    c.intra.latency = c.inter.latency = 0;
    c.collectives.clear();
    c.gpu->nccl_contention = {};
    plan.cluster = c;
    plan.parallel.fp8 = true;
    plan.parallel.fp8_recipe = recipe;
    validate(plan);
    const SimulatedEstimate s = simulated_estimate(plan);
    ASSERT_TRUE(s.simulated);
    const analytic::ActionCosts a = analytic::action_costs(plan);
    const double hand = (plan.parallel.pp - 1) * (a.f + a.b + a.w);
    EXPECT_NEAR(s.estimate.time_s.bubble, hand, 1e-2 * hand) << to_string(recipe);
    EXPECT_NEAR(s.closed_form.time_s.bubble, hand, 1e-2 * hand) << to_string(recipe);
    EXPECT_NEAR(s.estimate.time_s.iteration, s.closed_form.time_s.iteration, 1e-2 * s.closed_form.time_s.iteration);
    EXPECT_NEAR(s.estimate.time_s.compute, s.closed_form.time_s.compute, 1e-2 * s.closed_form.time_s.compute);
    // FP8 is faster than bf16 on the same plan.
    Plan bf16 = plan;
    bf16.parallel.fp8 = false;
    bf16.parallel.fp8_recipe.reset();
    EXPECT_LT(s.estimate.time_s.iteration, simulated_estimate(bf16).estimate.time_s.iteration);
  }
}

// Where they must not agree: ZB-H1 removes most of 1F1B's bubble in the simulator, and the simulated bubble is
// the closed form's (p-1)(F+B-W) for uniform stages.
TEST(SimulatedEstimate, ZeroBubbleH1BubbleIsSmaller) {
  Plan plan = uniform_1f1b(8);
  plan.parallel.schedule = ScheduleKind::zb_h1;
  const SimulatedEstimate zb = simulated_estimate(plan);
  const SimulatedEstimate one = simulated_estimate(uniform_1f1b(8));
  const analytic::ActionCosts a = analytic::action_costs(plan);
  const double hand = (plan.parallel.pp - 1) * (a.f + a.b - a.w);
  EXPECT_NEAR(zb.estimate.time_s.bubble, hand, 1e-2 * hand);
  EXPECT_LT(zb.estimate.time_s.bubble, 0.9 * one.estimate.time_s.bubble);
}

// The timing, peak and feasibility are the simulation's: compared with one run here, on a ZeroPP plan whose
// simulated peak differs from the closed-form bound.
TEST(SimulatedEstimate, PeakAndFeasibilityFromSimulation) {
  Plan plan = gpt_plan(Strategy::zeropp_b, 2);
  const simulate::SimResult sim = simulate_plan(plan);
  double peak = 0;
  for (const auto& r : sim.ranks) peak = std::max(peak, r.peak_memory_bytes);
  const SimulatedEstimate s = simulated_estimate(plan);
  EXPECT_DOUBLE_EQ(s.estimate.memory_bytes.peak, peak);
  EXPECT_DOUBLE_EQ(s.estimate.time_s.iteration, sim.makespan);
  EXPECT_NE(s.estimate.memory_bytes.peak, s.closed_form.memory_bytes.peak);

  // Memory set just under the simulated peak: infeasible by the simulator, over by what it says.
  plan.cluster.memory_bytes = peak - 1000;
  const SimulatedEstimate tight = simulated_estimate(plan);
  EXPECT_FALSE(tight.estimate.feasible);
  EXPECT_DOUBLE_EQ(tight.estimate.over_by_bytes, 1000);
  plan.cluster.memory_bytes = peak;
  EXPECT_TRUE(simulated_estimate(plan).estimate.feasible);
}

// Bytes sent per GPU: the simulator's pp and zero bytes (ring factor applied) are the analytic model's for
// ZeroPP in per-unit mode (which counts the shared last-chunk gather as the schedule runs it), and for naive
// ZeRO-3 under PP.
TEST(SimulatedEstimate, CommBytesMatchAnalyticModel) {
  for (Strategy strategy : {Strategy::zeropp_a, Strategy::zeropp_b, Strategy::zero3_pp}) {
    for (int v : {1, 2}) {
      if (strategy == Strategy::zero3_pp && v > 1) continue;
      const Plan plan = gpt_plan(strategy, v);
      const SimulatedEstimate s = simulated_estimate(plan);
      ASSERT_TRUE(s.simulated);
      const analytic::CommBytes a = analytic::comm_bytes(plan);
      const analytic::CommBytes& c = s.estimate.comm_bytes;
      const std::string what = std::string(to_string(strategy)) + " v=" + std::to_string(v);
      EXPECT_GT(c.zero, 0) << what;
      EXPECT_NEAR(c.zero, a.zero, 1e-9 * a.zero) << what;
      EXPECT_NEAR(c.pp, a.pp, 1e-9 * a.pp) << what;
      EXPECT_DOUBLE_EQ(c.dp, a.dp) << what;
      EXPECT_DOUBLE_EQ(c.tp, a.tp) << what;
      EXPECT_NEAR(c.total, a.total, 1e-9 * a.total) << what;
    }
  }
}

// Pure ZeRO-3 of GPT-3 1.3B over 8 * dp A100s, 4 micro-batches of 1.
Plan zero3_plan(int dp) {
  Plan plan;
  plan.model = load_model("gpt3-1.3b");
  plan.cluster = load_cluster("dgx-a100-80gb");
  ParallelSpec& p = plan.parallel;
  p.strategy = Strategy::zero3;
  p.schedule = ScheduleKind::one_f_one_b;
  p.zero_stage = 3;
  p.z = 8;
  p.dp = dp;
  p.micro_batch = 1;
  p.micro_batches = 4;
  return plan;
}

// Pure ZeRO-3 is simulated, layer by layer (simulate/per_layer.hpp), with the closed form beside it: the same
// compute and the same ZeRO-3 bytes (2 gathers and 1 reduce-scatter of every layer per micro-batch, in the group of
// all 16 GPUs), and a peak that holds 2 gathered layers where the stage-level program holds the whole model twice.
TEST(SimulatedEstimate, PureZeroThreeIsSimulatedLayerByLayer) {
  Plan plan = zero3_plan(2);
  // Without contention the two executors charge the same compute; with it, each its own estimate of the overlap
  // (the simulator the overlap it times, the closed form its prefetch rule): within 2% of each other.
  {
    const SimulatedEstimate contended = simulated_estimate(plan);
    EXPECT_NEAR(contended.estimate.time_s.compute, contended.closed_form.time_s.compute,
                0.02 * contended.closed_form.time_s.compute);
  }
  plan.cluster.gpu->nccl_contention = {};
  const SimulatedEstimate s = simulated_estimate(plan);
  EXPECT_TRUE(s.simulated);
  EXPECT_EQ(to_json(s)["executor"], "simulator");
  EXPECT_NEAR(s.estimate.time_s.compute, s.closed_form.time_s.compute, 1e-9 * s.closed_form.time_s.compute);
  EXPECT_NEAR(s.estimate.comm_bytes.zero, s.closed_form.comm_bytes.zero, 1e-9 * s.closed_form.comm_bytes.zero);
  EXPECT_GT(s.estimate.time_s.zero_exposed, 0);
  const simulate::SimResult stage_level =
      simulate::simulate(schedule::program_for(plan), simulate::costs_from_plan(plan));
  const double layer = simulate::costs_from_plan(plan).stages[0].gathered_param_bytes / plan.model.layers;
  // The stage-level program holds two whole-model buffers at once (the backward's gather prefetched during the
  // forward), the per-layer one at most two layers.
  EXPECT_GE(stage_level.ranks[0].peak_memory_bytes - s.estimate.memory_bytes.peak, (2 * plan.model.layers - 2) * layer);
}

// The GPU's NCCL contention (gpu.nccl_contention) reaches the simulator and the closed form alike: pure ZeRO-3
// overlaps its gathers with compute, so compute grows, by at most the contention factor (only the overlapped part
// slows), in both executors.
TEST(SimulatedEstimate, ContentionSlowsOverlappedCompute) {
  Plan plan = zero3_plan(1);
  plan.cluster.gpu.reset();
  const SimulatedEstimate free = simulated_estimate(plan);
  plan.cluster.gpu = GpuOps{};
  plan.cluster.gpu->nccl_contention = {0.189, Provenance::published};
  const SimulatedEstimate slowed = simulated_estimate(plan);
  for (auto [s, f] : {std::pair{slowed.estimate, free.estimate}, std::pair{slowed.closed_form, free.closed_form}}) {
    EXPECT_GT(s.time_s.compute, f.time_s.compute);
    EXPECT_LE(s.time_s.compute, 1.189 * f.time_s.compute);
  }
}

// The keys issue 2 requires, plus the closed-form cross-check.
TEST(SimulatedEstimate, JsonKeys) {
  const nlohmann::json j = to_json(simulated_estimate(uniform_1f1b(8)));
  for (const char* k : {"tp", "pp", "dp", "zero", "total"}) EXPECT_TRUE(j["comm_bytes"].contains(k)) << k;
  for (const char* k : {"params", "grads", "optimizer", "activations", "buffers", "peak"})
    EXPECT_TRUE(j["memory_bytes"].contains(k)) << k;
  for (const char* k : {"compute", "comm_exposed", "bubble", "iteration"}) {
    EXPECT_TRUE(j["time_s"].contains(k)) << k;
    EXPECT_TRUE(j["closed_form"]["time_s"].contains(k)) << k;
  }
  for (const char* k : {"tokens_per_s", "tflops_per_gpu", "mfu"}) EXPECT_TRUE(j["throughput"].contains(k)) << k;
  EXPECT_TRUE(j["closed_form"]["memory_bytes"].contains("peak"));
  EXPECT_EQ(j["executor"], "simulator");
  EXPECT_TRUE(j.contains("feasible"));
  EXPECT_TRUE(j.contains("over_by_bytes"));
}

// Bad input is still a SpecError naming the field.
TEST(SimulatedEstimate, ValidatesThePlan) {
  Plan plan = uniform_1f1b(8);
  plan.parallel.pp = 5;
  try {
    simulated_estimate(plan);
    FAIL() << "pp = 5 splits neither 4 layers nor 4 + 2";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "parallel.pp");
  }
}

}  // namespace
}  // namespace zeropp::search
