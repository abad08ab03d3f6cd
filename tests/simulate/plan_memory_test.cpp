// Simulated peak memory of a Plan (costs_from_plan) against the analytic model's memory (analytic/memory):
// equal where the closed form is exact (1F1B with a fused backward holds p - r whole activations at its peak,
// next to the model states); for ZeroPP the simulator is the authority and is checked against a lower bound.
#include <gtest/gtest.h>

#include <algorithm>

#include "cost_model/analytic/memory.hpp"
#include "cost_model/schedule/generate.hpp"
#include "cost_model/schedule/plan_program.hpp"
#include "cost_model/simulate/costs_from_plan.hpp"
#include "cost_model/simulate/simulator.hpp"
#include "cost_model/spec/config.hpp"

namespace zeropp::simulate {
namespace {

Plan plan_of(Strategy strategy, ScheduleKind schedule, int z, int v, int B, int U) {
  Plan plan;
  plan.model = load_model("gpt3-1.3b");
  plan.cluster = load_cluster("dgx-a100-80gb");
  ParallelSpec& par = plan.parallel;
  par.strategy = strategy;
  par.schedule = schedule;
  par.pp = 4;
  par.z = z;
  par.dp = 2;
  par.v = v;
  par.zero_stage = 1;
  par.micro_batch = 1;
  par.micro_batches = B;
  par.unit = U;
  return plan;
}

SimResult simulate_plan(const Plan& plan) {
  const schedule::Program program = schedule::program_for(plan);
  return simulate(program, costs_from_plan(plan));
}

TEST(PlanMemory, OneFOneBPeakEqualsTheClosedForm) {
  const Plan plan = plan_of(Strategy::pp_zero1, ScheduleKind::one_f_one_b, 1, 1, 8, 1);
  const SimResult r = simulate_plan(plan);
  for (int rank = 0; rank < plan.parallel.pp; ++rank) {
    const analytic::MemoryBytes a = analytic::memory_bytes(plan, rank);
    EXPECT_NEAR(r.ranks[rank].peak_memory_bytes, a.peak, 1e-9 * a.peak) << "rank " << rank;
    EXPECT_EQ(r.ranks[rank].peak_activation_microbatches, plan.parallel.pp - rank);
  }
}

// Flash attention recomputes its scores in its own backward, so selective recomputation has nothing to do:
// the RECOMPUTE actions cost no time and rebuild no bytes, and the simulated run matches the one without.
// With FlashAttention selective recomputation stores what no recomputation stores (the kernel keeps no s x s
// tensor) but still costs what the framework reruns: Megatron's checkpointed core attention reruns the attention
// kernel's forward before its backward (spec/framework.hpp, selective_recompute).
TEST(PlanMemory, FlashSelectiveRecomputeSavesNoMemoryButCostsTime) {
  Plan plan = plan_of(Strategy::pp_zero1, ScheduleKind::one_f_one_b, 1, 1, 8, 1);
  plan.model = load_model("llama2-7b");
  ASSERT_EQ(plan.model.attention_kind(), AttentionKind::flash);
  const SimResult none = simulate_plan(plan);
  plan.parallel.recompute = Recompute::selective;
  const ActionCosts costs = costs_from_plan(plan);
  for (const StageCost& s : costs.stages) {
    EXPECT_GT(s.recompute, 0);
    EXPECT_LT(s.recompute, 0.2 * s.f);  // the attention forward, not the layer
    EXPECT_EQ(s.recompute_bytes, 0);
    EXPECT_EQ(s.checkpoint_bytes, s.activation_bytes);
  }
  const SimResult selective = simulate_plan(plan);
  EXPECT_GT(selective.makespan, none.makespan);
  for (int rank = 0; rank < plan.parallel.pp; ++rank)
    EXPECT_DOUBLE_EQ(selective.ranks[rank].peak_memory_bytes, none.ranks[rank].peak_memory_bytes);
  // Unfused, selective recomputation costs time and saves memory.
  plan.model.attention = AttentionKind::unfused;
  plan.parallel.recompute = Recompute::none;
  const SimResult unfused_none = simulate_plan(plan);
  plan.parallel.recompute = Recompute::selective;
  const SimResult unfused_selective = simulate_plan(plan);
  EXPECT_GT(unfused_selective.makespan, unfused_none.makespan);
  EXPECT_LT(unfused_selective.ranks[0].peak_memory_bytes, unfused_none.ranks[0].peak_memory_bytes);
}

// ZeroPP: when a rank holds its most micro-batches (the closed form of DESIGN.md section 5, checked in
// closed_forms_test), it runs a forward, so that chunk is gathered: the peak is at least the model states, one
// gathered chunk and that many activations. (analytic::memory_bytes is not an upper bound here: it counts the
// in-flight sets at M_B but not the M_W buffers of the deferred Ws, which the last ranks hold up to U of.)
TEST(PlanMemory, ZeroPPPeakHoldsStatesGatheredChunkAndInFlightActivations) {
  for (int v : {1, 2}) {
    const Plan plan = plan_of(Strategy::zeropp_b, ScheduleKind::zeropp, 8, v, 16, 4);
    const SimResult r = simulate_plan(plan);
    const ActionCosts costs = costs_from_plan(plan);
    const int p = plan.parallel.pp, U = plan.parallel.unit;
    for (int rank : {1, 2}) {  // middle ranks: every chunk holds layers only
      const int in_flight = std::min(2 * (p - 1 - rank) + (v - 1) * U + 1, U * v);
      EXPECT_EQ(r.ranks[rank].peak_activation_microbatches, in_flight);
      const StageCost& s = costs.stages[rank];
      EXPECT_GE(r.ranks[rank].peak_memory_bytes,
                costs.static_bytes[rank] + s.gathered_param_bytes + in_flight * s.activation_bytes)
          << "v=" << v << " rank " << rank;
      // The model states are the closed form's.
      const analytic::MemoryBytes a = analytic::memory_bytes(plan, rank);
      EXPECT_NEAR(costs.static_bytes[rank], a.params + a.grads + a.optimizer, 1e-9 * a.peak);
    }
  }
}

}  // namespace
}  // namespace zeropp::simulate
