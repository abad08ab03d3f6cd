// The rank grid (cost_model/spec/rank_grid.hpp) against the groups the frameworks build, written out by hand from
// their code and docstrings: Megatron-Core's RankGenerator (order "tp-cp-ep-dp-pp"), InternEvo's process-group
// initializers (the ZeroPP authors' code) and torchtitan's HSDP mesh.
#include <set>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "cost_model/spec/rank_grid.hpp"

namespace zeropp {
namespace {

using Groups = std::vector<std::vector<int>>;

// Megatron-Core parallel_state.py, initialize_model_parallel's docstring: 16 GPUs, tp 2, pp 4 (so dp 2).
TEST(RankGrid, MegatronDocstringTp2Pp4) {
  const RankGrid g(2, 1, 1, 1, 2, 4);
  EXPECT_EQ(g.groups(kGridDp), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}}));
  EXPECT_EQ(g.groups(kGridTp), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}}));
  EXPECT_EQ(g.groups(kGridPp), (Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}}));
}

// 16 ranks, tp 2, cp 1, dp 4, pp 2 under "tp-cp-ep-dp-pp": rank = tp_i + 2*dp_i + 8*pp_i (by hand from
// generate_masked_orthogonal_rank_groups' equation (1)).
TEST(RankGrid, MegatronOrderTp2Dp4Pp2) {
  const RankGrid g(2, 1, 1, 1, 4, 2);
  EXPECT_EQ(g.groups(kGridTp), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}}));
  EXPECT_EQ(g.groups(kGridDp), (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}, {8, 10, 12, 14}, {9, 11, 13, 15}}));
  EXPECT_EQ(g.groups(kGridPp), (Groups{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}}));
  // Rank 13: tp 1, dp 2, pp 1.
  const GridCoords c = g.coords(13);
  EXPECT_EQ(c[GridDim::tp], 1);
  EXPECT_EQ(c[GridDim::dp], 2);
  EXPECT_EQ(c[GridDim::pp], 1);
  EXPECT_EQ(g.rank(c), 13);
  EXPECT_EQ(g.members(kGridDp, 13), (std::vector<int>{9, 11, 13, 15}));
  EXPECT_EQ(g.index(kGridDp, 13), 2);
  EXPECT_EQ(g.color(kGridDp, 13), 3);  // the fourth dp group
  // The link model's view: dp 4 ranks 2 apart, pp 2 ranks 8 apart.
  EXPECT_EQ(g.group(kGridDp).size, 4);
  EXPECT_EQ(g.group(kGridDp).stride, 2);
  EXPECT_EQ(g.group(kGridPp).stride, 8);
}

// With context parallelism, tp 2 cp 2 dp 2 pp 2: rank = tp_i + 2*cp_i + 4*dp_i + 8*pp_i. Megatron's cp group,
// dp group, and its data-parallel group with CP (token "dp-cp").
TEST(RankGrid, MegatronOrderWithContextParallelism) {
  const RankGrid g(2, 2, 1, 1, 2, 2);
  EXPECT_EQ(g.groups(kGridCp), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}}));
  EXPECT_EQ(g.groups(kGridDp), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}, {8, 12}, {9, 13}, {10, 14}, {11, 15}}));
  EXPECT_EQ(g.groups(kGridCp | kGridDp), (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}, {8, 10, 12, 14}, {9, 11, 13, 15}}));
  EXPECT_EQ(g.group(kGridCp | kGridDp).stride, 2);
}

// InternEvo's Initializer_Zero1 docstring (process_group_initializer.py): n=16 tp/sp=2 pp=2 dp=4 zero1=2. Its zero1
// group (ZeRO-3-sharded under zero1.fsdp) is z consecutive data-parallel ranks: the grid's z inside dp.
TEST(RankGrid, InternEvoZeroGroupInsideDataParallelism) {
  const RankGrid g(2, 1, 2, 1, 2, 2);  // tp 2, z 2, dp 4 / z = 2, pp 2
  EXPECT_EQ(g.groups(kGridTp), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}}));
  EXPECT_EQ(g.groups(kGridZ | kGridDp), (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}, {8, 10, 12, 14}, {9, 11, 13, 15}}));
  EXPECT_EQ(g.groups(kGridPp), (Groups{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}}));
  EXPECT_EQ(g.groups(kGridZ), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}}));
  // Initializer_Zero3_dp's "(0, 4), (1, 5) ... hold the same parameters" across the zero1 groups, pp = 1 part.
  EXPECT_EQ(g.members(kGridDp, 1), (std::vector<int>{1, 5}));
}

// torchtitan's HSDP mesh ["dp_replicate", "dp_shard", "tp"] (row-major): a zero3 plan with tp 2, dp 4, dp_shard 2
// shards over [0, 2], replicates across [0, 4].
TEST(RankGrid, TorchtitanHsdpShardInsideReplicate) {
  ParallelSpec p;
  p.strategy = Strategy::zero3;
  p.framework = Framework::fsdp2;
  p.tp = 2;
  p.dp = 4;
  p.dp_shard = 2;
  const RankGrid g = RankGrid::of(p);
  EXPECT_EQ(g.size(GridDim::dp_shard), 2);
  EXPECT_EQ(g.size(GridDim::dp), 2);
  EXPECT_EQ(g.groups(kGridZ | kGridDpShard), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(g.groups(kGridDp), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(g.groups(kGridSpecDp), (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  // Other strategies keep the whole dp dimension as replicas.
  p.strategy = Strategy::three_d;
  p.dp_shard = 0;
  EXPECT_EQ(RankGrid::of(p).size(GridDim::dp_shard), 1);
  EXPECT_EQ(RankGrid::of(p).size(GridDim::dp), 4);
}

// Every rank in exactly one group of every mask; color and index are a bijection onto (group, position).
TEST(RankGrid, GroupsPartitionTheWorld) {
  const RankGrid g(2, 3, 2, 2, 3, 2);
  for (GridMask mask = 0; mask < (1u << kGridDims); ++mask) {
    const Groups all = g.groups(mask);
    ASSERT_EQ(static_cast<int>(all.size()) * g.size(mask), g.world()) << mask;
    std::set<int> seen;
    for (std::size_t k = 0; k < all.size(); ++k) {
      ASSERT_EQ(static_cast<int>(all[k].size()), g.size(mask));
      for (std::size_t i = 0; i < all[k].size(); ++i) {
        const int r = all[k][i];
        EXPECT_TRUE(seen.insert(r).second) << "rank " << r << " twice, mask " << mask;
        EXPECT_EQ(g.color(mask, r), static_cast<int>(k));
        EXPECT_EQ(g.index(mask, r), static_cast<int>(i));
        EXPECT_EQ(g.members(mask, r), all[k]);
        if (i > 0) { EXPECT_LT(all[k][i - 1], r); }  // ascending, as RankGenerator's
      }
    }
  }
  for (int r = 0; r < g.world(); ++r) EXPECT_EQ(g.rank(g.coords(r)), r);
}

TEST(RankGrid, BadSizesAndRanksAreRefused) {
  EXPECT_THROW(RankGrid(0, 1, 1, 1, 1, 1), std::invalid_argument);
  const RankGrid g(2, 1, 1, 1, 2, 1);
  EXPECT_THROW((void)g.coords(4), std::out_of_range);
  EXPECT_THROW((void)g.coords(-1), std::out_of_range);
  GridCoords c;
  c[GridDim::tp] = 2;
  EXPECT_THROW((void)g.rank(c), std::out_of_range);
}

}  // namespace
}  // namespace zeropp
