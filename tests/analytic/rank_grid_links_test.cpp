// The link model's view of a grid group (size, stride: analytic/collectives.hpp) against its member lists
// (spec/rank_grid.hpp), counted rank by rank: whether a group leaves its node, and how many of its GPUs share a
// node (the NICs it crosses nodes through).
#include <algorithm>
#include <map>

#include <gtest/gtest.h>

#include "cost_model/analytic/collectives.hpp"
#include "cost_model/spec/rank_grid.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::analytic {
namespace {

struct Exact {
  bool crosses = false;
  int per_node = 0;  // the most members of one group in one node
};

Exact count(const RankGrid& grid, GridMask mask, int gpus_per_node) {
  Exact e;
  for (const std::vector<int>& members : grid.groups(mask)) {
    std::map<int, int> nodes;
    for (int r : members) ++nodes[r / gpus_per_node];
    e.crosses = e.crosses || nodes.size() > 1;
    for (const auto& [node, n] : nodes) e.per_node = std::max(e.per_node, n);
  }
  return e;
}

// Every power-of-two grid up to 256 ranks, every group the cost model prices, on nodes of 2, 4 and 8 GPUs.
TEST(RankGridLinks, SizeAndStrideAnswerAsTheMemberLists) {
  const std::vector<GridMask> masks = {
      kGridTp, kGridCp, kGridZ, kGridPp, kGridDp, kGridSpecDp, kGridDataParallel, kGridCp | kGridZ | kGridDpShard};
  const int sizes[] = {1, 2, 4};
  int checked = 0;
  for (int g : {2, 4, 8})
    for (int tp : sizes)
      for (int cp : sizes)
        for (int z : sizes)
          for (int dps : sizes)
            for (int dp : sizes)
              for (int pp : sizes) {
                const RankGrid grid(tp, cp, z, dps, dp, pp);
                if (grid.world() > 256) continue;
                ClusterSpec c;
                c.gpus_per_node = g;
                c.nodes = std::max(1, grid.world() / g);
                for (GridMask mask : masks) {
                  const Group gr = grid.group(mask);
                  const Exact e = count(grid, mask, g);
                  ASSERT_EQ(group_crosses_nodes(c, gr.size, gr.stride), e.crosses && c.nodes > 1)
                      << "g=" << g << " grid " << tp << cp << z << dps << dp << pp << " mask " << mask;
                  if (c.nodes > 1) {
                    ASSERT_EQ(members_per_node(c, gr.size, gr.stride), e.per_node)
                        << "g=" << g << " grid " << tp << cp << z << dps << dp << pp << " mask " << mask;
                  }
                  ++checked;
                }
              }
  EXPECT_GT(checked, 10000);
}

// The one group over dimensions that are not adjacent: ZeroPP's shard synchronised across dp and CP, the z group
// between them (the other groups are one dimension or adjacent ones). Its block answers exactly while the group's
// inner part (tp*cp*z, one dp copy) fits a node or the dp dimension is within one; where the z group itself leaves
// the node the per-node count is an estimate (the block spreads the members evenly).
TEST(RankGridLinks, ShardSyncAcrossDpAndCpSkipsTheZGroup) {
  const int sizes[] = {1, 2, 4};
  for (int g : {4, 8})
    for (int cp : sizes)
      for (int z : sizes)
        for (int dp : sizes)
          for (int pp : {1, 2}) {
            const RankGrid grid(1, cp, z, 1, dp, pp);
            ClusterSpec c;
            c.gpus_per_node = g;
            c.nodes = std::max(1, grid.world() / g);
            if (c.nodes == 1) continue;
            const GridMask mask = kGridCp | kGridSpecDp;
            const Group gr = grid.group(mask);
            const Exact e = count(grid, mask, g);
            EXPECT_EQ(group_crosses_nodes(c, gr.size, gr.stride), e.crosses) << g << cp << z << dp << pp;
            if (cp * z <= g) {
              EXPECT_EQ(members_per_node(c, gr.size, gr.stride), e.per_node) << g << cp << z << dp << pp;
            }
          }
}

// The analytic groups are grid groups of the plan's own grid: sizes as spec/strategy.hpp's data-parallel picture.
TEST(RankGridLinks, PlanGroupsHaveTheStrategysSizes) {
  ParallelSpec p;
  p.strategy = Strategy::zeropp_b;
  p.z = 4;
  p.cp = 2;
  p.dp = 4;
  p.pp = 2;
  const DataParallelSync d = data_parallel_sync(p);
  EXPECT_EQ(shard_group(p).size, d.shard_group);
  EXPECT_EQ(dp_sync_group(p).size, d.replicas);
  EXPECT_EQ(RankGrid::of(p).members(dp_sync_mask(p), 0), (std::vector<int>{0, 1, 8, 9, 16, 17, 24, 25}));
  p = ParallelSpec{};
  p.strategy = Strategy::zero3;
  p.framework = Framework::fsdp2;
  p.z = 2;
  p.cp = 2;
  p.dp = 8;
  p.dp_shard = 2;
  const DataParallelSync h = data_parallel_sync(p);
  EXPECT_EQ(shard_group(p).size, h.shard_group);  // z*cp*dp_shard = 8 consecutive ranks
  EXPECT_EQ(shard_group(p).stride, 1);
  EXPECT_EQ(dp_sync_group(p).size, h.replicas);  // 4 replicas, a shard group apart
  EXPECT_EQ(dp_sync_group(p).stride, 8);
}

// What the order moved, by hand, on 8-GPU nodes. torchtitan 3-D with HSDP (tp 4, pp 2, dp 8, dp_shard 4): the grid
// is tp 4 (stride 1), dp_shard 4 (stride 4), replicas 2 (stride 16), pp 2 (stride 32). The shard group is 4 GPUs 4
// apart: 2 in each node, so its gathers cross nodes through 2 NICs (under the old order, pp inside dp, they were
// tp*pp = 8 apart: 1 NIC); the two pipeline ranks are 32 apart, a node apart as before (they were 4 apart, in
// one node).
TEST(RankGridLinks, OrderMovesFsdpTpPpHsdpGroupsByHand) {
  ClusterSpec c;
  c.gpus_per_node = 8;
  c.nodes = 8;
  ParallelSpec p;
  p.strategy = Strategy::zero3;
  p.framework = Framework::fsdp2;
  p.tp = 4;
  p.pp = 2;
  p.dp = 8;
  p.dp_shard = 4;
  const Group shard = shard_group(p);
  EXPECT_EQ(shard.size, 4);
  EXPECT_EQ(shard.stride, 4);
  EXPECT_TRUE(group_crosses_nodes(c, shard.size, shard.stride));
  EXPECT_EQ(members_per_node(c, shard.size, shard.stride), 2);
  const Group pp = pp_group(p);
  EXPECT_EQ(pp.stride, 32);
  EXPECT_TRUE(group_crosses_nodes(c, pp.size, pp.stride));
  EXPECT_EQ(members_per_node(c, pp.size, pp.stride), 1);
  const Group sync = dp_sync_group(p);
  EXPECT_EQ(sync.size, 2);
  EXPECT_EQ(sync.stride, 16);
  // ZeroPP with z 4 of 8 GPUs, pp 8, dp 16 (512 GPUs): dp copies of a z group 4 apart (2 per node: 2 NICs, was 1
  // at stride 32), pipeline ranks 64 apart (one per node; under the old order 4 apart, 2 per node).
  ParallelSpec z;
  z.strategy = Strategy::zeropp_b;
  z.z = 4;
  z.pp = 8;
  z.dp = 16;
  c.nodes = 64;
  const Group dp = dp_sync_group(z);
  EXPECT_EQ(dp.size, 16);
  EXPECT_EQ(dp.stride, 4);
  EXPECT_EQ(members_per_node(c, dp.size, dp.stride), 2);
  EXPECT_EQ(pp_group(z).stride, 64);
  EXPECT_EQ(members_per_node(c, pp_group(z).size, pp_group(z).stride), 1);
  EXPECT_EQ(embedding_group(z).stride, 7 * 64);
}

}  // namespace
}  // namespace zeropp::analytic
