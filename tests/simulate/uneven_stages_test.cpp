// Uneven pipeline stages (issue 20): the closed forms (parameters, memory, communication, time) and the simulator's
// per-stage costs follow the split of the layers (spec/stage_layout.hpp), and agree with each other where the
// closed form is exact.
#include <gtest/gtest.h>

#include "cost_model/analytic/comm_volume.hpp"
#include "cost_model/analytic/memory.hpp"
#include "cost_model/analytic/params.hpp"
#include "cost_model/analytic/stage_balance.hpp"
#include "cost_model/analytic/time_model.hpp"
#include "cost_model/schedule/plan_program.hpp"
#include "cost_model/search/simulated_timing.hpp"
#include "cost_model/simulate/costs_from_plan.hpp"
#include "cost_model/simulate/simulator.hpp"
#include "cost_model/spec/config.hpp"

namespace zeropp::simulate {
namespace {

// GPT-3 1.3B (24 layers) on 1F1B + ZeRO-1, fused backward, no TP: the closed forms are exact here.
Plan one_f_one_b(int pp, int first, int last) {
  Plan plan;
  plan.model = load_model("gpt3-1.3b");
  plan.cluster = load_cluster("dgx-a100-80gb");
  ParallelSpec& p = plan.parallel;
  p.strategy = Strategy::pp_zero1;
  p.schedule = ScheduleKind::one_f_one_b;
  p.zero_stage = 0;
  p.pp = pp;
  p.first_stage_layers = first;
  p.last_stage_layers = last;
  p.micro_batches = 8;
  validate(plan);
  return plan;
}

TEST(UnevenStages, ParametersFollowTheSplit) {
  const Plan plan = one_f_one_b(4, 3, 3);  // 3, 9, 9, 3
  const std::int64_t layer = analytic::params_per_layer(plan.model);
  const StageLayout layout = stage_layout(plan.model, plan.parallel);
  std::int64_t sum = 0;
  for (int r = 0; r < 4; ++r) {
    const analytic::StageParams s = analytic::rank_params(plan.model, layout, r);
    EXPECT_EQ(s.layers, layout.rank_layers(r) * layer) << r;
    sum += s.total();
  }
  // Every parameter once, plus the tied embedding's copy on the last stage.
  EXPECT_EQ(sum, analytic::total_params(plan.model) + analytic::word_embedding_params(plan.model));
  EXPECT_EQ(analytic::max_rank_params(plan.model, layout), analytic::rank_params(plan.model, layout, 1).total());
}

TEST(UnevenStages, StageCostsScaleWithTheirLayers) {
  const Plan even = one_f_one_b(4, 0, 0);  // 6 x 4
  const Plan uneven = one_f_one_b(4, 3, 3);
  const ActionCosts a = costs_from_plan(even), b = costs_from_plan(uneven);
  // The middle stages: 9 layers against 6, compute and activations alike.
  EXPECT_NEAR(b.stages[1].f, 1.5 * a.stages[1].f, 1e-12 * a.stages[1].f);
  EXPECT_NEAR(b.stages[2].bw, 1.5 * a.stages[2].bw, 1e-12 * a.stages[2].bw);
  EXPECT_NEAR(b.stages[1].activation_bytes, 1.5 * a.stages[1].activation_bytes, 1.0);
  // The first stage: 3 layers against 6, plus the same embedding extras.
  const double first_extra = a.stages[0].activation_bytes - a.stages[1].activation_bytes;
  EXPECT_NEAR(b.stages[0].activation_bytes - first_extra, 0.5 * a.stages[1].activation_bytes, 1.0);
  EXPECT_GT(b.static_bytes[1], a.static_bytes[1]);
  EXPECT_LT(b.static_bytes[3], a.static_bytes[3]);
}

// 1F1B with a fused backward: rank r holds p - r micro-batches at its peak, each of its own layers' activations,
// next to its model states; the closed form says the same rank by rank, whatever the split.
TEST(UnevenStages, SimulatedPeakEqualsTheClosedFormOnEveryRank) {
  for (const auto& [first, last] : {std::pair{3, 3}, std::pair{9, 3}, std::pair{3, 9}}) {
    const Plan plan = one_f_one_b(4, first, last);
    const SimResult r = simulate(schedule::program_for(plan), costs_from_plan(plan));
    double closed_peak = 0;
    for (int rank = 0; rank < 4; ++rank) {
      const analytic::MemoryBytes m = analytic::memory_bytes(plan, rank);
      EXPECT_NEAR(r.ranks[rank].peak_memory_bytes, m.peak, 1e-9 * m.peak) << first << "/" << last << " rank " << rank;
      closed_peak = std::max(closed_peak, m.peak);
    }
    EXPECT_NEAR(analytic::memory_bytes(plan).peak, closed_peak, 1e-9 * closed_peak);
  }
}

// The closed form's compute is the slowest rank's, now a middle one (9 layers against 3 + the head): the
// simulator's busiest rank does the same compute.
TEST(UnevenStages, ClosedFormComputeIsTheBusiestRanks) {
  Plan plan = one_f_one_b(4, 3, 3);
  // Without the compute slowdown beside NCCL kernels (issue 19's contention, which the closed form's compute leaves
  // out), so that both executors count the same compute.
  if (plan.cluster.gpu) plan.cluster.gpu->nccl_contention.value = 0;
  const analytic::ActionCosts a = analytic::action_costs(plan);
  EXPECT_EQ(a.layers_per_chunk, 9);
  const analytic::PipelineTiming closed = analytic::closed_form_timing(plan, a);
  const analytic::PipelineTiming simulated = search::simulated_timing(plan);
  EXPECT_NEAR(closed.compute, simulated.compute, 1e-9 * closed.compute);
  const analytic::RankShares k = analytic::rank_shares(stage_layout(plan.model, plan.parallel), 9);
  EXPECT_DOUBLE_EQ(k.first, 3.0 / 9);
  EXPECT_DOUBLE_EQ(k.middle, 1.0);
  EXPECT_DOUBLE_EQ(k.others(1), (3.0 / 9 + 1.0 + 3.0 / 9) / 3);
  // The bubble runs through the other ranks: lighter than with four ranks of the middle one's work.
  const Plan even = one_f_one_b(4, 0, 0);
  EXPECT_LT(closed.bubble / 9, analytic::closed_form_timing(even, analytic::action_costs(even)).bubble / 6);
}

// Communication: the TP and p2p bytes of a rank follow its layers; the heaviest rank sends the most.
TEST(UnevenStages, CommunicationFollowsTheSplit) {
  Plan plan = one_f_one_b(4, 3, 3);
  plan.parallel.dp = 2;  // gradients all-reduced across two replicas: bytes in proportion to the rank's parameters
  validate(plan);
  const analytic::CommBytes middle = analytic::comm_bytes(plan, 1), first = analytic::comm_bytes(plan, 0);
  const StageLayout layout = stage_layout(plan.model, plan.parallel);
  const double psi_first = static_cast<double>(analytic::rank_params(plan.model, layout, 0).total());
  const double psi_middle = static_cast<double>(analytic::rank_params(plan.model, layout, 1).total());
  // The same bytes per parameter held on every rank; the first rank also all-reduces the tied embedding's
  // gradient with the last (comm_volume.cpp), so it sends more per parameter.
  EXPECT_GT(psi_middle, psi_first);
  EXPECT_GT(middle.dp, 0);
  EXPECT_DOUBLE_EQ(analytic::comm_bytes(plan, 2).dp, middle.dp);
  EXPECT_GT(first.dp / psi_first, middle.dp / psi_middle);
  EXPECT_GT(middle.pp, 0);
  EXPECT_EQ(middle.pp, 2 * first.pp);  // two boundaries against one
}

}  // namespace
}  // namespace zeropp::simulate
