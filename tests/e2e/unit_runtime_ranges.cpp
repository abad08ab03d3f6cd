// Rank layout and the ZeRO shard / ZeRO-1 piece ranges of a chunk (e2e/runtime), checked against hand-worked
// cases. The plan -> program mapping is cost_model/schedule/plan_program (tests/schedule/plan_program_test.cpp).
#include <set>
#include <stdexcept>

#include <gtest/gtest.h>

#include "cost_model/analytic/collectives.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/names.hpp"
#include "e2e/runtime/chunk_state.hpp"
#include "e2e/runtime/fault.hpp"
#include "e2e/runtime/rank_layout.hpp"

namespace zeropp::e2e {
namespace {

// The rank grid's order (cost_model/spec/rank_grid.hpp, Megatron-Core's tp-cp-dp-pp): the inner dimension
// fastest, then data parallelism, pipeline outermost.
TEST(RankLayout, InnerDimensionFastestThenDataThenPipeline) {
  const RankLayout l(1, 2, 2, 2);  // z=2, pp=2, dp=2: 8 ranks
  ASSERT_EQ(l.world(), 8);
  // Hand table: rank = (pp_rank * dp + dp_index) * z + z_index.
  const RankCoords c5 = l.coords(5);  // 5 = (1*2 + 0)*2 + 1
  EXPECT_EQ(c5.z, 1);
  EXPECT_EQ(c5.pp, 1);
  EXPECT_EQ(c5.dp, 0);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(l.world_rank(l.coords(r)), r);
  // Pipelines: dp * z + z_index; ranks 0 and 4 (pp 0 and 1, z 0, dp 0) form pipeline 0.
  EXPECT_EQ(l.pipelines(), 4);
  EXPECT_EQ(l.pipeline(l.coords(0)), 0);
  EXPECT_EQ(l.pipeline(l.coords(4)), 0);
  EXPECT_EQ(l.pipeline(c5), 1);
  // Groups: z group of rank 5 = {4, 5}; its pp group = {1, 5} (4 ranks apart); its dp group = {5, 7}.
  std::set<int> z, pp, dp;
  for (int r = 0; r < 8; ++r) {
    const RankCoords c = l.coords(r);
    if (l.z_color(c) == l.z_color(c5)) z.insert(r);
    if (l.pp_color(c) == l.pp_color(c5)) pp.insert(r);
    if (l.dp_color(c) == l.dp_color(c5)) dp.insert(r);
  }
  EXPECT_EQ(z, (std::set<int>{4, 5}));
  EXPECT_EQ(pp, (std::set<int>{1, 5}));
  EXPECT_EQ(dp, (std::set<int>{5, 7}));
}

// CP sits between TP and the data-parallel dimensions: tp=2 cp=2 pp=2 dp=1, rank = tp_i + 2*(cp_i + 2*pp_i).
TEST(RankLayout, ContextParallelRanksNextToTensorParallelOnes) {
  const RankLayout l(2, 1, 2, 1, 2);
  ASSERT_EQ(l.world(), 8);
  const RankCoords c = l.coords(7);
  EXPECT_EQ(c.tp, 1);
  EXPECT_EQ(c.cp, 1);
  EXPECT_EQ(c.pp, 1);
  std::set<int> cp, pp;
  for (int r = 0; r < 8; ++r) {
    if (l.cp_color(l.coords(r)) == l.cp_color(c)) cp.insert(r);
    if (l.pp_color(l.coords(r)) == l.pp_color(c)) pp.insert(r);
  }
  EXPECT_EQ(cp, (std::set<int>{5, 7}));
  EXPECT_EQ(pp, (std::set<int>{3, 7}));
  EXPECT_EQ(l.pipelines(), 1);
}

TEST(RankLayout, TensorParallelRanksShareAPipeline) {
  const RankLayout l(2, 1, 2, 1);
  EXPECT_EQ(l.pipelines(), 1);
  EXPECT_EQ(l.pipeline(l.coords(1)), 0);
  EXPECT_THROW(RankLayout(2, 0, 1, 1), std::invalid_argument);
}

// FSDP + TP as torchtitan's mesh ["dp_shard", "tp"]: zero3 tp 2, dp 4 (8 ranks). TP pairs {0,1}, {2,3}, ...; each TP
// rank's slice sharded over the 4 ranks of its TP rank: {0,2,4,6} and {1,3,5,7}; no replicas.
TEST(RankLayout, FsdpWithTensorParallelismShardsEachTpRankOverItsDpRanks) {
  ParallelSpec p;
  p.strategy = Strategy::zero3;
  p.tp = 2;
  p.dp = 4;
  const RankLayout l = RankLayout::for_plan(p);
  EXPECT_EQ(l.tp(), 2);
  EXPECT_EQ(l.z(), 4);
  EXPECT_EQ(l.dp(), 1);
  EXPECT_EQ(l.pipelines(), 4);
  const RankCoords c = l.coords(5);
  EXPECT_EQ(c.tp, 1);
  EXPECT_EQ(c.z, 2);
  EXPECT_EQ(l.pipeline(c), 2);
  std::set<int> tp, z;
  for (int r = 0; r < 8; ++r) {
    if (l.tp_color(l.coords(r)) == l.tp_color(c)) tp.insert(r);
    if (l.z_color(l.coords(r)) == l.z_color(c)) z.insert(r);
  }
  EXPECT_EQ(tp, (std::set<int>{4, 5}));
  EXPECT_EQ(z, (std::set<int>{1, 3, 5, 7}));
}

TEST(ChunkRanges, ShardsAndPiecesCoverTheChunkOnce) {
  // N = 10 elements, z = 3: S = 4, shards [0,4) [4,8) [8,10) (the last one short, padded to 4).
  const ChunkRanges last = ChunkRanges::make(10, true, 3, 2, 1, 0, false);
  EXPECT_EQ(last.shard, 4);
  EXPECT_EQ(last.local_base, 8);
  EXPECT_EQ(last.local, 2);
  EXPECT_EQ(last.chunk_lo(), 8);
  EXPECT_EQ(last.chunk_hi(), 10);
  // ZeRO-1 over dp = 3 of a shard of S = 4: D = 2, pieces [0,2) [2,4) [4,6) of the padded local copy; the
  // third piece lies in padding, the second is cut at L.
  const ChunkRanges p1 = ChunkRanges::make(10, true, 3, 2, 3, 1, true);
  EXPECT_EQ(p1.piece, 2);
  EXPECT_EQ(p1.local_padded, 6);
  EXPECT_EQ(p1.opt_lo, 2);
  EXPECT_EQ(p1.opt_hi, 2);  // local = 2: nothing real in [2, 4)
  // Every element of every chunk size is owned exactly once over (z, dp).
  for (int n : {1, 7, 10, 33}) {
    for (int z : {1, 2, 3}) {
      for (int dp : {1, 2, 4}) {
        std::vector<int> owners(static_cast<std::size_t>(n), 0);
        for (int zi = 0; zi < z; ++zi)
          for (int di = 0; di < dp; ++di) {
            const ChunkRanges r = ChunkRanges::make(n, z > 1, z, zi, dp, di, true);
            for (std::int64_t e = r.chunk_lo(); e < r.chunk_hi(); ++e) ++owners[static_cast<std::size_t>(e)];
          }
        for (int e = 0; e < n; ++e) EXPECT_EQ(owners[e], 1) << "n=" << n << " z=" << z << " dp=" << dp << " e=" << e;
      }
    }
  }
  // All-reduce DP sync: every dp rank owns the whole local copy.
  const ChunkRanges ar = ChunkRanges::make(10, false, 1, 0, 4, 3, false);
  EXPECT_EQ(ar.opt_lo, 0);
  EXPECT_EQ(ar.opt_hi, 10);
}

// Pure ZeRO-3 shards over every data-parallel GPU: its z*dp GPUs are one inner group in the runtime's layout,
// with the same world rank -> pipeline numbering as the plan's own layout.
TEST(RankLayout, PureZero3FoldsDpIntoItsShardGroup) {
  ParallelSpec p;
  p.strategy = Strategy::zero3;
  p.schedule = ScheduleKind::one_f_one_b;
  p.zero_stage = 3;
  p.z = 2;
  p.dp = 3;
  const RankLayout folded = RankLayout::for_plan(p);
  EXPECT_EQ(folded.z(), 6);
  EXPECT_EQ(folded.dp(), 1);
  const RankLayout plain(p);
  for (int r = 0; r < 6; ++r) EXPECT_EQ(folded.pipeline(folded.coords(r)), plain.pipeline(plain.coords(r))) << r;
  p.strategy = Strategy::zeropp_b;  // the hybrids keep z and dp apart
  p.schedule = ScheduleKind::zeropp;
  p.zero_stage = 1;
  EXPECT_EQ(RankLayout::for_plan(p).z(), 2);
  EXPECT_EQ(RankLayout::for_plan(p).dp(), 3);
}

// CP ranks hold the same parameters: with z = 2, cp = 2, dp = 2 (rank = cp_i + 2*(z_i + 2*dp_i)) the hybrids
// sync gradients over dp x cp and shard over z; pure ZeRO-3 shards over z x cp (x dp) and syncs nothing across.
TEST(RankLayout, ContextParallelRanksJoinTheSyncOrTheShardGroup) {
  ParallelSpec p;
  p.strategy = Strategy::zeropp_b;
  p.schedule = ScheduleKind::zeropp;
  p.zero_stage = 1;
  p.z = 2;
  p.cp = 2;
  p.dp = 2;
  auto members = [](const RankLayout& l, int r, bool shard) {
    std::set<int> out;
    for (int q = 0; q < l.world(); ++q) {
      const RankCoords a = l.coords(q), b = l.coords(r);
      if (shard ? l.shard_color(a) == l.shard_color(b) : l.dp_color(a) == l.dp_color(b)) out.insert(q);
    }
    return out;
  };
  const RankLayout hybrid = RankLayout::for_plan(p);
  ASSERT_EQ(hybrid.world(), 8);
  EXPECT_EQ(members(hybrid, 0, false), (std::set<int>{0, 1, 4, 5}));  // dp x cp
  EXPECT_EQ(members(hybrid, 0, true), (std::set<int>{0, 2}));         // z
  EXPECT_EQ(hybrid.sync_size(), 4);
  EXPECT_EQ(hybrid.sync_index(hybrid.coords(5)), 3);  // dp 1, cp 1: cp inner
  p.strategy = Strategy::zero3;
  p.schedule = ScheduleKind::one_f_one_b;
  p.zero_stage = 3;
  const RankLayout fsdp = RankLayout::for_plan(p);
  EXPECT_EQ(members(fsdp, 0, true), (std::set<int>{0, 1, 2, 3, 4, 5, 6, 7}));  // z x cp x dp
  EXPECT_EQ(members(fsdp, 0, false), (std::set<int>{0}));
  EXPECT_EQ(fsdp.shard_size(), 8);
  EXPECT_EQ(fsdp.pipelines(), 4);  // cp ranks share their pipeline's micro-batches
  EXPECT_EQ(fsdp.pipeline(fsdp.coords(0)), fsdp.pipeline(fsdp.coords(1)));
}

// The trainer's groups are the cost model's: for every plan shape the trainer runs, the ranks a communicator split
// by the layout's colors holds are the members of the analytic group's grid dimensions (analytic/collectives.hpp).
std::vector<int> split_members(const RankLayout& l, int rank, int (RankLayout::*color)(const RankCoords&) const) {
  std::vector<int> out;
  for (int r = 0; r < l.world(); ++r)
    if ((l.*color)(l.coords(r)) == (l.*color)(l.coords(rank))) out.push_back(r);
  return out;
}

TEST(RankLayout, TrainerGroupsAreTheAnalyticGroups) {
  struct Shape {
    Strategy strategy;
    int tp, z, pp, dp;
  };
  const Shape shapes[] = {
      {Strategy::three_d, 2, 1, 2, 2},  {Strategy::three_d, 4, 1, 2, 1},  {Strategy::pp_zero1, 1, 1, 4, 2},
      {Strategy::zeropp_b, 1, 2, 2, 2}, {Strategy::zeropp_a, 1, 4, 2, 1}, {Strategy::zero3_pp, 1, 2, 2, 2},
      {Strategy::zero3, 1, 2, 1, 3},    {Strategy::zero3, 1, 1, 1, 4},    {Strategy::zero3, 2, 1, 1, 4}};
  for (const Shape& s : shapes) {
    ParallelSpec p;
    p.strategy = s.strategy;
    p.tp = s.tp;
    p.z = s.z;
    p.pp = s.pp;
    p.dp = s.dp;
    const RankLayout l = RankLayout::for_plan(p);
    const RankGrid grid = RankGrid::of(p);
    ASSERT_EQ(l.world(), p.world());
    for (int r = 0; r < l.world(); ++r) {
      EXPECT_EQ(split_members(l, r, &RankLayout::pp_color), grid.members(kGridPp, r));
      EXPECT_EQ(split_members(l, r, &RankLayout::tp_color), grid.members(kGridTp, r));
      if (analytic::shard_mask(p) != 0) {
        EXPECT_EQ(split_members(l, r, &RankLayout::z_color), grid.members(analytic::shard_mask(p), r))
            << to_string(s.strategy) << " rank " << r;
      }
      if (analytic::dp_sync_mask(p) != 0) {
        EXPECT_EQ(split_members(l, r, &RankLayout::dp_color), grid.members(analytic::dp_sync_mask(p), r))
            << to_string(s.strategy) << " rank " << r;
      }
      // The analytic (size, stride) view is the split group's: its size, and its members that many strides apart
      // when they are one dimension.
      const std::vector<int> pp = split_members(l, r, &RankLayout::pp_color);
      const analytic::Group g = analytic::pp_group(p);
      ASSERT_EQ(static_cast<int>(pp.size()), g.size);
      for (std::size_t i = 1; i < pp.size(); ++i) EXPECT_EQ(pp[i] - pp[i - 1], g.stride);
    }
  }
}

// With CP the trainer's shard and gradient sync groups are the cost model's (analytic::shard_mask, dp_sync_mask):
// CP ranks in the sync group of the replicated and z-sharded strategies, in the shard group of pure ZeRO-3.
TEST(RankLayout, ContextParallelGroupsAreTheAnalyticGroups) {
  struct Shape {
    Strategy strategy;
    int tp, z, pp, dp, cp, dp_shard;
  };
  const Shape shapes[] = {{Strategy::three_d, 2, 1, 2, 1, 2, 0},  {Strategy::pp_zero1, 1, 1, 2, 2, 2, 0},
                          {Strategy::zeropp_b, 1, 2, 2, 1, 2, 0}, {Strategy::zero3_pp, 1, 2, 1, 2, 2, 0},
                          {Strategy::zero3, 1, 2, 1, 2, 2, 0},    {Strategy::zero3, 1, 1, 1, 4, 2, 2}};
  for (const Shape& s : shapes) {
    ParallelSpec p;
    p.strategy = s.strategy;
    p.tp = s.tp;
    p.z = s.z;
    p.pp = s.pp;
    p.dp = s.dp;
    p.cp = s.cp;
    p.dp_shard = s.dp_shard;
    if (s.strategy == Strategy::zero3) p.framework = Framework::fsdp2;
    const RankLayout l = RankLayout::for_plan(p);
    const RankGrid grid = RankGrid::of(p);
    ASSERT_EQ(l.world(), p.world());
    for (int r = 0; r < l.world(); ++r) {
      EXPECT_EQ(split_members(l, r, &RankLayout::cp_color), grid.members(kGridCp, r));
      if (analytic::shard_mask(p) != 0) {
        EXPECT_EQ(split_members(l, r, &RankLayout::shard_color), grid.members(analytic::shard_mask(p), r))
            << to_string(s.strategy) << " rank " << r;
      }
      if (analytic::dp_sync_mask(p) != 0) {
        EXPECT_EQ(split_members(l, r, &RankLayout::dp_color), grid.members(analytic::dp_sync_mask(p), r))
            << to_string(s.strategy) << " rank " << r;
      }
    }
  }
}

TEST(FaultInjection, ParsesKindRankStep) {
  const FaultInjection f = FaultInjection::parse("nan@3:2");
  EXPECT_EQ(f.kind, FaultInjection::Kind::nan);
  EXPECT_EQ(f.rank, 3);
  EXPECT_EQ(f.step, 2);
  EXPECT_EQ(FaultInjection::parse("throw@1").step, 0);
  for (const char* bad : {"nan", "boom@1", "nan@x", "nan@1:y", "nan@-1"})
    EXPECT_THROW(FaultInjection::parse(bad), SpecError) << bad;
}

}  // namespace
}  // namespace zeropp::e2e
