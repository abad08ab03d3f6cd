// Issue 13, point 3: the search is exact. Its bounds hold for every plan (bounds.hpp), and the pruned search
// returns, plan for plan, what simulating every plan returns: the top plans, the best of every strategy and of
// every (strategy, schedule) pair, and where nothing fits, the closest plan.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cost_model/search/bounds.hpp"
#include "cost_model/search/compare.hpp"
#include "cost_model/search/describe.hpp"
#include "cost_model/search/peak_memory.hpp"
#include "cost_model/search/plans_csv.hpp"
#include "cost_model/search/search.hpp"
#include "cost_model/search/simulated_estimate.hpp"
#include "cost_model/search/simulated_timing.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/strategy.hpp"
#include "search_fixtures.hpp"

namespace zeropp::search {
namespace {

// GPU memory of the FSDP/HSDP case: chosen so that some of its plans fit and some do not.
constexpr double kFsdpCaseMemory = 0.25 * (1 << 30);

SpaceOptions small_space() {
  SpaceOptions o;
  o.max_v = 2;
  return o;
}

// Every plan of the tiny space (all six strategies, ZeRO-3 layer by layer included): time bound <= simulated
// iteration, memory bound <= simulated peak.
TEST(Bounds, BelowTheSimulationForEveryPlan) {
  int plans = 0;
  for_each_plan(testing::tiny_experiment(), small_space(), [&](const Plan& plan) {
    ++plans;
    const PlanBounds b = lower_bounds(plan);
    const analytic::Estimate e = simulated_estimate(plan).estimate;
    EXPECT_GT(b.time_s, 0) << describe_plan(plan.parallel);
    EXPECT_LE(b.time_s, e.time_s.iteration) << describe_plan(plan.parallel);
    EXPECT_GT(b.memory_bytes, 0) << describe_plan(plan.parallel);
    EXPECT_LE(b.memory_bytes, e.memory_bytes.peak) << describe_plan(plan.parallel);
    const double schedule_time = schedule_time_bound(plan);
    EXPECT_GE(schedule_time, b.time_s * (1 - 1e-12)) << describe_plan(plan.parallel);
    EXPECT_LE(schedule_time, e.time_s.iteration) << describe_plan(plan.parallel);
    const double walk = memory_walk_bound(plan);
    EXPECT_GE(walk, b.memory_bytes) << describe_plan(plan.parallel);
    EXPECT_LE(walk, e.memory_bytes.peak) << describe_plan(plan.parallel);
    if (has_lowered_memory_bound(plan)) {
      const double lowered = lowered_memory_bound(prepare_plan(plan));
      EXPECT_GE(lowered, walk * (1 - 1e-12)) << describe_plan(plan.parallel);
      EXPECT_LE(lowered, e.memory_bytes.peak) << describe_plan(plan.parallel);
    }
    // Without ZeRO-3 every memory change is a compute action's: the walk is the simulated peak.
    if (!shards_with_zero3(plan.parallel.strategy)) {
      EXPECT_NEAR(walk, e.memory_bytes.peak, 1e-8 * e.memory_bytes.peak) << describe_plan(plan.parallel);
    }
  });
  EXPECT_GT(plans, 1000);
}

// The memory walks against the simulated peak where buffers move most: ZeroPP with its gradients reduced per unit
// and per W, ragged units, chunks and recomputation, uneven splits, on a 6-layer model.
TEST(Bounds, MemoryWalksBelowTheSimulationForZeroPP) {
  Plan plan{testing::tiny_model(), load_cluster("dgx-a100-80gb"), {}};
  plan.model.layers = 6;
  ParallelSpec& p = plan.parallel;
  int checked = 0;
  for (Strategy s : {Strategy::zeropp_a, Strategy::zeropp_b, Strategy::zero3_pp})
    for (int pp : {2, 4})
      for (int v : {1, 2})
        for (GradReduce g : {GradReduce::per_unit, GradReduce::per_w})
          for (Recompute rc : {Recompute::none, Recompute::full})
            for (int U : {1, 2, 3, 5}) {
              p = {};
              p.strategy = s;
              p.zero_stage = traits(s).default_zero_stage;
              p.z = 2;
              p.pp = pp;
              p.v = v;
              p.schedule = is_zeropp(s) ? ScheduleKind::zeropp : (v > 1 ? ScheduleKind::bfs : ScheduleKind::zb_h1);
              p.micro_batches = 5;
              p.unit = is_zeropp(s) ? U : 5;
              p.grad_reduce = g;
              p.recompute = rc;
              if (pp == 2 && v == 1 && U == 5) p.first_stage_layers = 4;  // 4, 2
              try {
                validate(plan);
              } catch (const SpecError&) {
                continue;
              }
              ++checked;
              const analytic::Estimate e = simulated_estimate(plan).estimate;
              const double peak = e.memory_bytes.peak;
              EXPECT_LE(schedule_time_bound(plan), e.time_s.iteration) << describe_plan(p);
              const double walk = memory_walk_bound(plan);
              EXPECT_LE(walk, peak) << describe_plan(p);
              const double lowered = lowered_memory_bound(prepare_plan(plan));
              EXPECT_GE(lowered, walk * (1 - 1e-12)) << describe_plan(p);
              EXPECT_LE(lowered, peak) << describe_plan(p);
            }
  EXPECT_GT(checked, 100);  // 144 valid of the grid
}

// The bound is not vacuous: with no communication to hide (one pipeline stage, pure compute), it is close to the
// simulated time. 3d tp=1 pp=1 on the tiny model: one rank, F + BW per micro-batch and the optimizer step.
TEST(Bounds, TightWithoutCommunication) {
  Plan plan{testing::tiny_model(), load_cluster("dgx-a100-80gb"), {}};
  ParallelSpec& p = plan.parallel;
  p.strategy = Strategy::pp_zero1;
  p.zero_stage = 0;
  p.schedule = ScheduleKind::one_f_one_b;
  p.micro_batches = 4;
  const double t = simulated_estimate(plan).estimate.time_s.iteration;
  EXPECT_LE(lower_bounds(plan).time_s, t);
  EXPECT_GT(lower_bounds(plan).time_s, 0.9 * t);
}

void expect_same(const std::optional<Candidate>& a, const std::optional<Candidate>& b, const std::string& what) {
  ASSERT_EQ(a.has_value(), b.has_value()) << what;
  if (!a) return;
  EXPECT_EQ(a->parallel, b->parallel) << what << ": " << describe_plan(a->parallel) << " vs "
                                      << describe_plan(b->parallel);
  EXPECT_EQ(a->estimate.time_s.iteration, b->estimate.time_s.iteration) << what;
  EXPECT_EQ(a->estimate.memory_bytes.peak, b->estimate.memory_bytes.peak) << what;
}

void expect_same(const InfeasibleReport& a, const InfeasibleReport& b, const std::string& what) {
  expect_same(a.any ? std::optional<Candidate>(a.plan) : std::nullopt,
              b.any ? std::optional<Candidate>(b.plan) : std::nullopt, what + " closest");
}

void expect_pruned_equals_brute_force(const Experiment& ex, const SpaceOptions& space, int top) {
  SearchOptions o;
  o.space = space;
  o.top = top;
  // compare's rows as families (3d without and with CP, FSDP + TP, ...): their best and closest are exact too.
  const std::vector<CompareRowSpec> rows = compare_row_specs();
  o.families.assign(rows.begin(), rows.end());
  const SearchResult pruned = run_search(ex, o);
  o.exhaustive = true;
  const SearchResult brute = run_search(ex, o);
  EXPECT_EQ(brute.counts.simulated, brute.counts.enumerated - brute.counts.rejected);
  EXPECT_LT(pruned.counts.simulated, brute.counts.simulated) << ex.name << ": the bounds pruned nothing";
  ASSERT_EQ(pruned.ranked.size(), brute.ranked.size()) << ex.name;
  for (std::size_t i = 0; i < pruned.ranked.size(); ++i)
    expect_same(pruned.ranked[i], brute.ranked[i], ex.name + " rank " + std::to_string(i + 1));
  ASSERT_EQ(pruned.strategies.size(), brute.strategies.size());
  for (std::size_t k = 0; k < pruned.strategies.size(); ++k) {
    const StrategySummary& a = pruned.strategies[k];
    const StrategySummary& b = brute.strategies[k];
    const std::string name = ex.name + " " + std::string(to_string(a.strategy));
    expect_same(a.best, b.best, name);
    expect_same(a.closest, b.closest, name);
    ASSERT_EQ(a.schedules.size(), b.schedules.size()) << name;
    for (std::size_t s = 0; s < a.schedules.size(); ++s) {
      const std::string pair = name + " on " + std::string(to_string(a.schedules[s].schedule));
      expect_same(a.schedules[s].group.best, b.schedules[s].group.best, pair);
      expect_same(a.schedules[s].group.closest, b.schedules[s].group.closest, pair);
    }
  }
  ASSERT_EQ(pruned.families.size(), rows.size());
  ASSERT_EQ(brute.families.size(), rows.size());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const std::string name = ex.name + " row " + rows[k].name;
    EXPECT_EQ(pruned.families[k].group.enumerated, brute.families[k].group.enumerated) << name;
    expect_same(pruned.families[k].group.best, brute.families[k].group.best, name);
    expect_same(pruned.families[k].group.closest, brute.families[k].group.closest, name);
  }
  expect_same(pruned.closest_infeasible, brute.closest_infeasible, ex.name);
}

// A plan of the space is valid and every bound of the search lies below its simulation.
void expect_valid_and_bounded(const Plan& plan) {
  const ParallelSpec& p = plan.parallel;
  EXPECT_NO_THROW(validate(plan)) << describe_plan(p);
  const PlanBounds b = lower_bounds(plan);
  const analytic::Estimate e = simulated_estimate(plan).estimate;
  EXPECT_LE(b.time_s, e.time_s.iteration) << describe_plan(p);
  EXPECT_LE(b.memory_bytes, e.memory_bytes.peak) << describe_plan(p);
  EXPECT_LE(schedule_time_bound(plan), e.time_s.iteration) << describe_plan(p);
  EXPECT_LE(memory_walk_bound(plan), e.memory_bytes.peak) << describe_plan(p);
  if (has_lowered_memory_bound(plan)) {
    EXPECT_LE(lowered_memory_bound(prepare_plan(plan)), e.memory_bytes.peak) << describe_plan(p);
  }
}

// Memory decides some plans of `ex` (some fit, some do not) and the pruned search equals brute force.
void expect_memory_decides_and_exact(const Experiment& ex, const SpaceOptions& space) {
  SearchOptions o;
  o.space = space;
  const SearchResult r = run_search(ex, o);
  EXPECT_GT(r.counts.feasible, 0);
  EXPECT_GT(r.counts.over_memory, 0);
  expect_pruned_equals_brute_force(ex, space, 10);
}

// The plans of `ex` that `checked` selects are valid and their bounds lie below their simulation; memory decides some
// plans; and the pruned search equals brute force. Returns how many plans were checked.
template <typename Select>
int expect_bounds_and_exact(const Experiment& ex, const SpaceOptions& space, const Select& checked) {
  int plans = 0;
  for_each_plan(ex, space, [&](const Plan& plan) {
    if (!checked(plan)) return;
    ++plans;
    expect_valid_and_bounded(plan);
  });
  expect_memory_decides_and_exact(ex, space);
  return plans;
}

TEST(ExactSearch, TinyCaseEqualsBruteForce) {
  expect_pruned_equals_brute_force(testing::tiny_experiment(), small_space(), 10);
}

// Memory matters: a 1.3B model on 16 GPUs with some plans over memory, top 25.
TEST(ExactSearch, Gpt3_1_3bEqualsBruteForce) {
  SpaceOptions space;
  space.max_v = 2;
  space.max_micro_batch = 4;
  expect_pruned_equals_brute_force(testing::experiment("gpt3-1.3b", 16, 64), space, 25);
}

// The case over the whole space (no cut): GPT-3 13B on 64 A100, global batch 256, 17 k plans.
TEST(ExactSearch, Gpt3_13bOn64A100EqualsBruteForce) {
  expect_pruned_equals_brute_force(testing::experiment("gpt3-13b", 64, 256), SpaceOptions{}, 10);
}

// Issue 20: layers that do not divide the pipeline (uneven splits: Megatron's with the embedding and the loss
// counted, explicit first/last stage layers), 5 layers on 8 GPUs with 16 GB GPUs so that memory decides too.
TEST(ExactSearch, UnevenSplitsEqualBruteForce) {
  Experiment ex = testing::tiny_experiment();
  ex.name = "tiny-5-layers";
  ex.model.layers = 5;
  ex.model.hidden = 1024;
  ex.model.seq_len = 1024;
  ex.cluster.memory_bytes = 0.75 * (1 << 30);
  SpaceOptions space;
  space.max_v = 3;
  space.max_micro_batch = 2;
  bool uneven = false;
  for_each_plan(ex, space, [&](const Plan& plan) {
    uneven = uneven || plan.parallel.first_stage_layers > 0 || plan.model.layers % plan.parallel.pp != 0;
  });
  EXPECT_TRUE(uneven);
  expect_memory_decides_and_exact(ex, space);
}

// Issue 20: context parallelism in the space (min_cp_tokens lowered so that the tiny model's 128 tokens split up
// to cp = 8), flash attention, memory tight: the bounds hold for every CP plan and the pruned search is exact.
TEST(ExactSearch, ContextParallelEqualsBruteForce) {
  Experiment ex = testing::tiny_experiment();
  ex.name = "tiny-cp";
  ex.model.attention = AttentionKind::flash;
  ex.model.hidden = 1024;
  ex.model.seq_len = 1024;
  ex.cluster.memory_bytes = 0.5 * (1 << 30);
  SpaceOptions space;
  space.max_v = 2;
  space.max_micro_batch = 2;
  space.min_cp_tokens = 128;
  int ulysses_plans = 0;
  const auto cp_plans = [&](const Plan& plan) {
    ulysses_plans += plan.parallel.cp > 1 && plan.parallel.cp_kind == CpKind::ulysses;
    return plan.parallel.cp > 1;
  };
  EXPECT_GT(expect_bounds_and_exact(ex, space, cp_plans), 100);
  EXPECT_GT(ulysses_plans, 50);  // Ulysses where cp divides a TP rank's 8 / tp heads
}

// Issue 20 item 4: FP8 training (spec/fp8.hpp) on H100, every plan in FP8 with its framework's recipe (TE for
// Megatron, DeepSpeed and ZeroPP; torchao for FSDP2): the bounds hold for every plan and the pruned search is exact.
TEST(ExactSearch, Fp8EqualsBruteForce) {
  Experiment ex = testing::tiny_experiment();
  ex.name = "tiny-fp8";
  ex.cluster = load_cluster("dgx-h100");
  ex.model.attention = AttentionKind::flash;
  ex.model.hidden = 1024;
  ex.model.seq_len = 1024;
  ex.cluster.memory_bytes = 0.75 * (1 << 30);
  ex.fp8 = true;
  SpaceOptions space;
  space.max_v = 2;
  space.max_micro_batch = 2;
  int all_gather_both_ways = 0;
  const auto every_plan_in_fp8 = [&](const Plan& plan) {
    EXPECT_TRUE(plan.parallel.fp8) << describe_plan(plan.parallel);
    // FSDP2's FP8 all-gather (torchao tensorwise, ZeRO-3): the search tries it on and off.
    if (plan.parallel.fp8_all_gather) {
      ++all_gather_both_ways;
      ParallelSpec off = plan.parallel;
      off.fp8_all_gather = false;
      EXPECT_NO_THROW(validate(Plan{plan.model, plan.cluster, off})) << describe_plan(off);
    }
    return true;
  };
  EXPECT_GT(expect_bounds_and_exact(ex, space, every_plan_in_fp8), 100);
  EXPECT_GT(all_gather_both_ways, 50);
}

// Issue 20, item 3: FSDP2 under a pipeline (with and without TP) and HSDP over four nodes, memory tight: the bounds
// hold for every such plan and the pruned search is exact, row by row (hsdp, fsdp_pp, fsdp_tp_pp).
TEST(ExactSearch, FsdpUnderPipelineAndHsdpEqualBruteForce) {
  Experiment ex = testing::tiny_experiment();
  ex.name = "tiny-fsdp-4-nodes";
  ex.model.hidden = 1024;
  ex.model.seq_len = 1024;
  ex.gpus = 32;
  ex.global_batch = 64;
  ex.cluster.memory_bytes = kFsdpCaseMemory;
  SpaceOptions space;
  space.strategies = {Strategy::three_d, Strategy::zero3};
  space.max_v = 2;
  space.max_micro_batch = 2;
  int hsdp = 0, pipelined = 0;
  const auto fsdp_pp_or_hsdp = [&](const Plan& plan) {
    const ParallelSpec& p = plan.parallel;
    if (p.strategy != Strategy::zero3 || (p.dp_shard == 0 && p.pp == 1)) return false;
    hsdp += p.dp_shard > 0;
    pipelined += p.pp > 1;
    return true;
  };
  expect_bounds_and_exact(ex, space, fsdp_pp_or_hsdp);
  EXPECT_GT(hsdp, 50);
  EXPECT_GT(pipelined, 50);
}

// Issue 20 item 5: GPT-3 175B on 64 A100, ZeroPP only, global batch 32. The gathers of a unit run ahead of its
// forwards (no gathered-buffer limit), so a plan's peak comes with many stages gathered at once, and with units of
// one micro-batch its time is mostly pipeline fill and drain, once per unit: lowered_memory_bound and lower_bounds
// see both (bounds.hpp). Every bound lies below the simulation, the pruned search equals brute force, and no plan
// it simulates ends over memory (main at 04246e3 simulated 67 plans here, 47 of them over memory).
TEST(ExactSearch, ZeroPPGathersAheadAndUnitsEqualBruteForce) {
  const Experiment ex = testing::experiment("gpt3-175b", 64, 32);
  SpaceOptions space;
  space.strategies = {Strategy::zeropp_a, Strategy::zeropp_b};
  int small_units = 0;
  const auto zeropp_plans = [&](const Plan& plan) {
    if (plan.parallel.unit == 1 && plan.parallel.micro_batches >= 8) {
      ++small_units;
      // Not vacuous: the units bound is within 10% of the compute-only schedule's makespan.
      EXPECT_GT(lower_bounds(plan).time_s, 0.9 * schedule_time_bound(plan)) << describe_plan(plan.parallel);
    }
    return true;
  };
  EXPECT_GT(expect_bounds_and_exact(ex, space, zeropp_plans), 3000);
  EXPECT_GT(small_units, 50);
  SearchOptions o;
  o.space = space;
  const SearchResult r = run_search(ex, o);
  EXPECT_EQ(r.counts.over_memory, r.counts.over_memory_bound) << "a plan was simulated that ends over memory";
}

// The peak the lowered walk finds where the gathers ran ahead: a ZeroPP plan whose simulated peak holds many stages'
// gathered parameters at once (the walk of held stages alone would count one), and the bound reaches it.
TEST(Bounds, LoweredWalkCountsTheGathersThatRanAhead) {
  Plan plan{load_model("gpt3-175b"), load_cluster("dgx-a100-80gb"), {}};
  ParallelSpec& p = plan.parallel;
  p.strategy = Strategy::zeropp_a;
  p.zero_stage = 0;
  p.z = 8;
  p.pp = 8;
  p.v = 12;
  p.schedule = ScheduleKind::zeropp;
  p.micro_batches = 16;
  p.unit = 1;
  p.recompute = Recompute::selective;
  validate(plan);
  const PreparedPlan prepared = prepare_plan(plan);
  const simulate::SimResult sim = simulate_plan(plan);
  const PeakBreakdown peak = peak_breakdown(plan, sim);
  double stage = 0;
  for (const simulate::StageCost& c : prepared.costs.stages) stage = std::max(stage, c.gathered_param_bytes);
  EXPECT_GT(peak.gathered_params, 4 * stage);
  const double bound = lowered_memory_bound(prepared);
  EXPECT_LE(bound, peak.total);
  EXPECT_GT(bound, memory_walk_bound(plan) + 4 * stage);
  EXPECT_NEAR(bound, peak.total, 1e-6 * peak.total);
}

// Nothing fits anywhere: every strategy's closest plan is exact.
TEST(ExactSearch, NothingFitsEqualsBruteForce) {
  SpaceOptions space;
  space.max_v = 2;
  space.max_micro_batch = 2;
  expect_pruned_equals_brute_force(testing::experiment("gpt3-175b", 8, 8), space, 5);
}

}  // namespace
}  // namespace zeropp::search

namespace zeropp::search {
namespace {

// --csv: one row per enumerated plan, in enumeration order, with its fate; the evaluated ones carry their
// simulated time, and the ranked winner is among them with the same numbers.
TEST(PlansCsv, EveryPlanWithItsFate) {
  SearchOptions o;
  o.space = small_space();
  o.keep_all = true;
  const SearchResult r = run_search(testing::tiny_experiment(), o);
  const std::string csv = plans_csv(r);
  std::vector<std::string> lines;
  for (std::size_t at = 0, next; at < csv.size(); at = next + 1) {
    next = csv.find('\n', at);
    lines.push_back(csv.substr(at, next - at));
  }
  ASSERT_EQ(static_cast<std::int64_t>(lines.size()), r.counts.enumerated + 1);
  EXPECT_EQ(lines[0].rfind("index,strategy,tp,z,cp,cp_kind,pp,dp,", 0), 0u);
  std::int64_t simulated = 0, pruned = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].rfind(std::to_string(i - 1) + ",", 0), 0u) << lines[i];
    simulated += lines[i].find(",simulated,") != std::string::npos;
    pruned += lines[i].find(",pruned_by_time,") != std::string::npos;
  }
  EXPECT_EQ(simulated, r.counts.simulated);
  EXPECT_EQ(pruned, r.counts.pruned);
  const Candidate& best = r.ranked.front();
  const std::string& row = lines[best.index + 1];
  // cp and cp_kind follow tp and z ("-": no CP group).
  const ParallelSpec& p = best.parallel;
  EXPECT_EQ(row.rfind(fmt::format("{},{},{},{},{},{},{},{},", best.index, to_string(p.strategy), p.tp, p.z, p.cp,
                                  p.cp > 1 ? to_string(p.cp_kind) : "-", p.pp, p.dp),
                      0),
            0u)
      << row;
  EXPECT_NE(row.find(fmt::format(",simulator,{:.9g},", best.estimate.time_s.iteration)), std::string::npos) << row;
}

}  // namespace
}  // namespace zeropp::search
