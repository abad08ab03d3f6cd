// The search space, counted by hand on a tiny case: 8 GPUs in one node, a 4-layer model (pp in {1, 2, 4}),
// global batch 16, b in {1, 2} (max_micro_batch = 2), v <= 2, three recompute modes.
// Issue 13 grew the space (no default cut): ZeRO stage 0 and 1 for the strategies that allow both (3d,
// 1f1b_zero1, zero3_pp), sequence parallelism on (with and, where the GPU runs it, without tp_comm_overlap) and off
// when tp > 1, every U in 1..B for ZeroPP, tp and z any divisor of the node (here 8: the divisors are the powers of
// two, so tp and z are unchanged), and GPipe beside the other pipeline schedules. Issue 20 added the splits of the
// layers that matter (search/stage_splits.hpp): with L = 4 the only new one is pp = 2, v = 1 with
// first_stage_layers = 3, last_stage_layers = 1 (the balanced explicit split is the even 2, 2; pp = 2, v = 2 and
// pp = 4 have no other). So every (layout) with pp = 2 runs its v = 1 schedules (1f1b, zb_h1, zb_h2, gpipe, bfs
// v=1, or zeropp v=1) twice. The counts below are derived in their comments.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "cost_model/schedule/budget.hpp"
#include "cost_model/search/describe.hpp"
#include "cost_model/search/space.hpp"
#include "cost_model/spec/error.hpp"
#include "search_fixtures.hpp"

namespace zeropp::search {
namespace {

SpaceOptions tiny_options(std::vector<Strategy> strategies = {}) {
  SpaceOptions o;
  o.strategies = std::move(strategies);
  o.max_v = 2;
  o.max_micro_batch = 2;
  return o;
}

std::int64_t count(Strategy s) { return count_plans(testing::tiny_experiment(), tiny_options({s})); }

// Schedules per pipeline depth (L = 4, v <= 2): pp = 1 -> 1f1b only (1); pp = 2 -> 1f1b, zb_h1, zb_h2, gpipe,
// interleaved v=2, bfs v=1, bfs v=2 (7; 6 before issue 13 added gpipe); pp = 4 -> 1f1b, zb_h1, zb_h2, gpipe,
// bfs v=1 (5; was 4). Every (layout) below has
// two micro-batch sizes (b = 1, 2 both divide 16 / pipelines), and the interleaving rule (pp | B) always holds.
TEST(SearchSpace, ThreeDByHand) {
  // (tp, pp): (1,1) (1,2) (1,4) (2,1) (2,2) (2,4) (4,1) (4,2) (8,1): schedules 1+7+5+1+7+5+1+7+1 = 35, of which
  // 22 with tp > 1. On the A100 (compute capability 8.0) Megatron's userbuffers overlap does not run, so they run
  // two ways (SP on, SP off): 13 + 2 x 22 = 57, x 2 ZeRO stages x 2 b x 3 recompute = 684 (180 before issue 13: no
  // gpipe, one ZeRO stage, SP always on, no TP overlap).
  // The 3, 1 split at pp = 2: 5 more schedules for tp = 1, 2, 4, i.e. 5 + 2 x 10 = 25 more, x 12 = 300.
  EXPECT_EQ(count(Strategy::three_d), 684 + 300);
  // On the H100 (9.0) three ways: SP on, SP on with userbuffers, SP off: 13 + 3 x 22 = 79 -> 948, and the
  // split: 5 + 3 x 10 = 35 more, x 12 = 420.
  Experiment h100 = testing::tiny_experiment();
  h100.cluster = load_cluster("dgx-h100");
  EXPECT_EQ(count_plans(h100, tiny_options({Strategy::three_d})), 948 + 420);
  int overlapped = 0;
  for_each_plan(h100, tiny_options({Strategy::three_d}), [&](const Plan& plan) {
    if (plan.parallel.tp_comm_overlap != TpCommOverlap::none) {
      EXPECT_EQ(plan.parallel.tp_comm_overlap, TpCommOverlap::userbuffers);
      ++overlapped;
    }
  });
  EXPECT_EQ(overlapped, (22 + 10) * 2 * 2 * 3);
}

TEST(SearchSpace, Zero3ByHand) {
  // One ZeRO-3 group of 8 (z = 8, dp = 1), b in {1, 2}, 3 recompute modes: 6. FSDP with TP (z = 1): tp in
  // {2, 4, 8}, dp = 8 / tp, SP on, on with torchtitan's async TP (FSDP2's overlap, which runs on the A100), off;
  // b in {1, 2}, 3 recompute modes: 3 x 18 = 54.
  // Issue 20, item 3: HSDP where dp has a divisor d < dp with a shard group z cp d >= 2: only tp = 2 (dp = 4,
  // d = 2): 18 more. FSDP2 under a pipeline (tp = 1 has none: z = 8 fills the node), schedules 1f1b, gpipe,
  // bfs v=1 (and the 3, 1 split of each at pp = 2), interleaved v=2 and bfs v=2 at pp = 2: 8 at pp = 2, 3 at
  // pp = 4; dp = 8 / (tp pp) leaves no HSDP divisor with a shard group of 2: tp = 2 pp = 2 (8 x 18 = 144),
  // tp = 2 pp = 4 (3 x 18 = 54), tp = 4 pp = 2 (144): 342.
  EXPECT_EQ(count(Strategy::zero3), 6 + 54 + 18 + 342);
  int hsdp = 0, pipelined = 0;
  for_each_plan(testing::tiny_experiment(), tiny_options({Strategy::zero3}), [&](const Plan& plan) {
    const ParallelSpec& p = plan.parallel;
    hsdp += p.dp_shard > 0;
    pipelined += p.pp > 1;
    if (p.dp_shard > 0) {
      EXPECT_EQ(p.tp, 2);
      EXPECT_EQ(p.dp_shard, 2);
    }
    if (p.pp > 1) {
      EXPECT_NE(p.schedule, ScheduleKind::zb_h1);
      EXPECT_NE(p.schedule, ScheduleKind::zb_h2);
    }
  });
  EXPECT_EQ(hsdp, 18);
  EXPECT_EQ(pipelined, 342);
}

TEST(SearchSpace, PpZero1ByHand) {
  // pp in {1, 2, 4}: schedules 1 + 7 + 5 = 13, x 2 b x 3 recompute = 78, x 2 ZeRO stages = 156 (66 before
  // issue 13: no gpipe, one ZeRO stage); the 3, 1 split: 5 more schedules, x 12 = 60.
  EXPECT_EQ(count(Strategy::pp_zero1), 156 + 60);
}

// Context parallelism (issue 20) with flash attention and min_cp_tokens = 16: the 128 tokens split by cp in
// {2, 4, 8} (128 divisible by 2 cp, 16 tokens or more each). 1f1b_zero1 with N/cp GPUs left: cp = 1 and 2 have
// pp in {1, 2, 4} (1 + 12 + 5 = 18 schedules and splits, as above), cp = 4 pp in {1, 2} (13), cp = 8 pp = 1 (1):
// 50 x 2 b x 2 ZeRO stages x 2 recompute modes (none, full: no selective under flash) = 400. Without flash, none.
// Each cp >= 2 also as DeepSpeed-Ulysses (cp divides 128 and the 8 heads at tp = 1): the 400 - 144 CP plans
// twice, 656.
TEST(SearchSpace, ContextParallelByHand) {
  Experiment ex = testing::tiny_experiment();
  ex.model.attention = AttentionKind::flash;
  SpaceOptions o = tiny_options({Strategy::pp_zero1});
  o.min_cp_tokens = 16;
  EXPECT_EQ(count_plans(ex, o), 400 + 256);
  int cp_plans = 0, ulysses = 0;
  for_each_plan(ex, o, [&](const Plan& p) {
    cp_plans += p.parallel.cp > 1;
    ulysses += p.parallel.cp_kind == CpKind::ulysses;
    EXPECT_EQ(p.parallel.world(), 8);
    if (p.parallel.cp == 1) {
      EXPECT_EQ(p.parallel.cp_kind, CpKind::ring);
    }
  });
  EXPECT_EQ(cp_plans, 2 * (400 - 144));
  EXPECT_EQ(ulysses, 400 - 144);
  // With 4 heads only cp = 2 and 4 divide them: Ulysses loses cp = 8 (pp = 1: 1 schedule x 2 b x 2 ZeRO stages
  // x 2 recompute modes = 8 plans).
  ex.model.heads = 4;
  EXPECT_EQ(count_plans(ex, o), 656 - 8);
  o.min_cp_tokens = 8192;  // the default: none for 128 tokens
  EXPECT_EQ(count_plans(ex, o), 144);
  ex.model.attention = AttentionKind::unfused;
  o.min_cp_tokens = 16;
  EXPECT_EQ(count_plans(ex, o), 216);
}

TEST(SearchSpace, Zero3PpByHand) {
  // (z, pp): (2,1) (2,2) (2,4) (4,1) (4,2) (8,1): schedules 1+7+5+1+7+1 = 22, x 2 b x 3 = 132, x 2 ZeRO
  // stages = 264 (114 before issue 13); the 3, 1 split for z = 2 and 4: 10 more schedules, x 12 = 120.
  EXPECT_EQ(count(Strategy::zero3_pp), 264 + 120);
}

TEST(SearchSpace, ZeroPPByHand) {
  // Units U in 1..B (B of them; before issue 13 the powers of two < B and B: 1, 2, 3, 4 for B = 1, 2, 4, 8).
  // pp=1 (8 pipelines): b=1 B=2, b=2 B=1 -> 3 units; v=1.
  // pp=2 (4 pipelines): b=1 B=4, b=2 B=2 -> 6; v in {1, 2} -> 12.
  // pp=4 (2 pipelines): b=1 B=8, b=2 B=4 -> 12; v=1.
  // z=2: 3+12+12; z=4 (pp 1, 2): 3+12; z=8 (pp 1): 3 -> 45 x 3 recompute = 135, for hybrid A and B alike.
  // The 3, 1 split at pp = 2, v = 1: 6 more units for z = 2 and for z = 4, x 3 recompute = 36.
  EXPECT_EQ(count(Strategy::zeropp_a), 135 + 36);
  EXPECT_EQ(count(Strategy::zeropp_b), 135 + 36);
}

// Under FlashAttention selective recomputation has nothing to drop (the plan would equal `none`: issue 21 saw it
// listed twice), so the space has two recompute modes there instead of three.
TEST(SearchSpace, SelectiveRecomputeOnlyWhereItDropsSomething) {
  Experiment ex = testing::tiny_experiment();
  ex.model.attention = AttentionKind::unfused;
  // 684: ThreeDByHand's count (issue 19: TP overlap only where the framework and GPU run it).
  EXPECT_EQ(count_plans(ex, tiny_options({Strategy::three_d})), 684 + 300);
  ex.model.attention = AttentionKind::flash;
  EXPECT_EQ(count_plans(ex, tiny_options({Strategy::three_d})), (684 + 300) / 3 * 2);
  for_each_plan(ex, tiny_options(), [](const Plan& p) { EXPECT_NE(p.parallel.recompute, Recompute::selective); });
}

TEST(SearchSpace, AllStrategiesAddUp) {
  EXPECT_EQ(count_plans(testing::tiny_experiment(), tiny_options()), 984 + 420 + 216 + 384 + 171 + 171);
}

TEST(SearchSpace, EveryPlanIsValidAndDistinct) {
  std::set<std::string> seen;
  for_each_plan(testing::tiny_experiment(), tiny_options(), [&](const Plan& plan) {
    EXPECT_NO_THROW(validate(plan));
    EXPECT_EQ(plan.parallel.world(), 8);
    EXPECT_EQ(plan.parallel.global_batch(), 16);
    EXPECT_TRUE(seen.insert(to_json(plan.parallel).dump()).second) << to_json(plan.parallel).dump();
  });
  EXPECT_EQ(seen.size(), 2346u);
}

TEST(SearchSpace, IntraNodeGroupsStayInOneNode) {
  // 16 GPUs on 8-GPU nodes: tp and z never exceed 8, and ZeRO-3's z is the node (z = 8, dp pp = 2, or with TP:
  // z = 1, dp = 16 / (tp pp)).
  Experiment ex = testing::tiny_experiment();
  ex.gpus = 16;
  ex.global_batch = 32;
  for_each_plan(ex, tiny_options(), [&](const Plan& plan) {
    EXPECT_LE(plan.parallel.tp, 8);
    EXPECT_LE(plan.parallel.z, 8);
    if (plan.parallel.strategy == Strategy::zero3 && plan.parallel.tp == 1) {
      EXPECT_EQ(plan.parallel.z, 8);
      EXPECT_EQ(plan.parallel.dp * plan.parallel.pp, 2);
    }
    if (plan.parallel.strategy == Strategy::zero3 && plan.parallel.tp > 1) {
      EXPECT_EQ(plan.parallel.z, 1);
      EXPECT_EQ(plan.parallel.dp * plan.parallel.tp * plan.parallel.pp, 16);
    }
  });
}

// Plans whose program could exceed the simulator's action budget are left out of the space, so search and
// compare never build one. 8 GPUs, global batch 2^22: z = 8, pp = 1 gives B = 2^19 (7.9M actions at most, kept);
// z = 4, pp = 2 gives B = 2^20 (31M at most, left out).
TEST(SearchSpace, PlansBeyondTheActionBudgetAreLeftOut) {
  Experiment ex = testing::tiny_experiment();
  ex.global_batch = 1LL << 22;
  SpaceOptions o = tiny_options({Strategy::zeropp_b});
  o.max_micro_batch = 1;
  bool kept_large = false;
  for_each_plan(ex, o, [&](const Plan& plan) {
    const ParallelSpec& p = plan.parallel;
    EXPECT_TRUE(schedule::within_action_budget(p.pp, p.v, p.micro_batches)) << describe_plan(p);
    EXPECT_FALSE(p.pp == 2 && p.micro_batches == 1 << 20) << describe_plan(p);
    kept_large = kept_large || (p.pp == 1 && p.micro_batches == 1 << 19);
  });
  EXPECT_TRUE(kept_large);
}

TEST(SearchSpace, BadOptionsNameTheField) {
  SpaceOptions o;
  o.max_v = -1;  // 0 means no cut since issue 13
  try {
    count_plans(testing::tiny_experiment(), o);
    FAIL() << "max_v = -1 accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "search.max_v");
  }
  // 2^30 once made the doubling b *= 2 overflow to 0 and the divisibility test divide by zero (SIGFPE).
  o = SpaceOptions{};
  o.max_micro_batch = 1 << 30;
  try {
    count_plans(testing::tiny_experiment(), o);
    FAIL() << "max_micro_batch = 2^30 accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "search.max_micro_batch");
    EXPECT_STREQ(e.what(), "search.max_micro_batch=1073741824 exceeds the limit 1048576");
  }
}

}  // namespace
}  // namespace zeropp::search

namespace zeropp::search {
namespace {

// Issue 13: no default cut hides a plan. Calculon's optimal execution for GPT-3 13B on 64 A100 with batch 256
// (tp 1, pp 8, dp 8, v 5: interleaved) was outside the old space (max_v = 4); every v with pp v | L is in now,
// with every b dividing the batch and every U up to B, and z any divisor of the node.
TEST(SearchSpace, HoldsCalculonsWinnerAndEveryUnit) {
  const Experiment ex = testing::experiment("gpt3-13b", 64, 256);
  bool calculon = false, ragged_unit = false, v_beyond_4 = false;
  for_each_plan(ex, SpaceOptions{}, [&](const Plan& plan) {
    const ParallelSpec& p = plan.parallel;
    calculon = calculon || (p.strategy == Strategy::three_d && p.tp == 1 && p.pp == 8 && p.dp == 8 && p.v == 5 &&
                            p.schedule == ScheduleKind::interleaved);
    ragged_unit = ragged_unit || (p.schedule == ScheduleKind::zeropp && p.micro_batches % p.unit != 0);
    v_beyond_4 = v_beyond_4 || p.v == 20;
  });
  EXPECT_TRUE(calculon);
  EXPECT_TRUE(ragged_unit);
  EXPECT_TRUE(v_beyond_4);
  // z any divisor of a 6-GPU node (not only powers of two): 2, 3, 6.
  Experiment six = testing::tiny_experiment();
  six.cluster.gpus_per_node = 6;
  six.cluster.nodes = 1;
  six.gpus = 6;
  six.global_batch = 12;
  six.model.heads = 6;
  six.model.hidden = 384;
  std::set<int> zs;
  SpaceOptions o;
  o.strategies = {Strategy::zeropp_b};
  for_each_plan(six, o, [&](const Plan& plan) { zs.insert(plan.parallel.z); });
  EXPECT_EQ(zs, (std::set<int>{2, 3, 6}));
}

}  // namespace
}  // namespace zeropp::search
