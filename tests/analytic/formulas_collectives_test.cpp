// Alpha-beta ring times, link choice and nccl-tests bus-bandwidth factors, on hand-computed cases.
#include <gtest/gtest.h>

#include "cost_model/analytic/collectives.hpp"
#include "cost_model/spec/error.hpp"

namespace zeropp::analytic {
namespace {

ClusterSpec four_nodes_of_eight() {
  ClusterSpec c;
  c.name = "test";
  c.nodes = 4;
  c.gpus_per_node = 8;
  c.intra = LinkSpec{100e9, 5e-6};  // 100 GB/s, 5 us
  c.inter = LinkSpec{25e9, 20e-6};  // 25 GB/s, 20 us
  return c;
}

TEST(FormulasCollectives, BusBandwidthFactors) {
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::all_reduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::all_gather, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::reduce_scatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::send_recv, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::all_reduce, 1), 0.0);
  EXPECT_THROW(busbw_factor(Collective::all_reduce, 0), SpecError);
  EXPECT_STREQ(collective_name(Collective::reduce_scatter), "reduce_scatter");
}

TEST(FormulasCollectives, RingTimesByHand) {
  const LinkSpec link{1e11, 5e-6};
  // n = 8, M = 1 GB: one step moves M/n = 125 MB in 1.25 ms, plus 5 us.
  EXPECT_NEAR(all_reduce_time(8, 1e9, link), 14 * 1.255e-3, 1e-12);
  EXPECT_NEAR(all_gather_time(8, 1e9, link), 7 * 1.255e-3, 1e-12);
  EXPECT_NEAR(reduce_scatter_time(8, 1e9, link), 7 * 1.255e-3, 1e-12);
  EXPECT_NEAR(p2p_time(1e9, link), 5e-6 + 1e-2, 1e-12);
  EXPECT_EQ(all_reduce_time(1, 1e9, link), 0);
  EXPECT_EQ(all_gather_time(8, 0, link), 0);
  EXPECT_THROW(all_reduce_time(8, 1e9, LinkSpec{0, 1e-6}), SpecError);
}

TEST(FormulasCollectives, GroupsInsideANodeUseNvlinkOthersTheNic) {
  const ClusterSpec c = four_nodes_of_eight();
  EXPECT_EQ(&link_for_group(c, 8, 1), &c.intra);  // a full node
  EXPECT_EQ(&link_for_group(c, 2, 4), &c.intra);  // ranks 0 and 4
  EXPECT_EQ(&link_for_group(c, 2, 8), &c.inter);  // ranks 0 and 8: neighbouring nodes
  EXPECT_EQ(&link_for_group(c, 16, 1), &c.inter);
  EXPECT_EQ(&link_for_group(c, 1, 64), &c.intra);  // nothing to cross
  EXPECT_STREQ(link_level(c, 4, 8), "inter");
  ClusterSpec one = c;
  one.nodes = 1;
  EXPECT_EQ(&link_for_group(one, 2, 8), &one.intra);
  EXPECT_THROW(link_for_group(c, 0, 1), SpecError);
}

TEST(FormulasCollectives, CollectiveTimePicksTheLinkAndTheCalibratedFit) {
  ClusterSpec c = four_nodes_of_eight();
  // 4 nodes all-reduce 400 MB over the NIC: 6 * (20 us + 100 MB / 25 GB/s).
  EXPECT_NEAR(collective_time(c, Collective::all_reduce, 4, 8, 4e8), 6 * (20e-6 + 4e-3), 1e-12);
  EXPECT_NEAR(collective_time(c, Collective::all_gather, 8, 1, 8e8), 7 * (5e-6 + 1e-3), 1e-12);
  // A calibrated inter-node all-reduce: latency 30 us per step, bus bandwidth 40 GB/s.
  c.collectives["inter"]["all_reduce"] = CollectiveFit{30e-6, 40e9, {}, {}};
  EXPECT_NEAR(collective_time(c, Collective::all_reduce, 4, 8, 4e8), 6 * 30e-6 + 4e8 * 1.5 / 40e9, 1e-12);
  c.collectives["intra"]["all_gather"] = CollectiveFit{2e-6, 200e9, {}, {}};
  EXPECT_NEAR(collective_time(c, Collective::all_gather, 8, 1, 8e8), 7 * 2e-6 + 8e8 * 0.875 / 200e9, 1e-12);
  // Other collectives and levels keep the alpha-beta link.
  EXPECT_NEAR(collective_time(c, Collective::all_gather, 4, 8, 4e8), 3 * (20e-6 + 4e-3), 1e-12);
  EXPECT_NEAR(collective_time(c, Collective::send_recv, 2, 4, 1e8), 5e-6 + 1e-3, 1e-12);
}

// A group that crosses nodes with k of its GPUs in each node spreads over their k NICs (one NCCL ring per NIC):
// the per-GPU inter-node rate times k, up to the NVLink rate; one GPU per node keeps the per-GPU rate.
TEST(FormulasCollectives, CrossingGroupsUseEveryNicOfTheirNodes) {
  ClusterSpec c = four_nodes_of_eight();
  EXPECT_EQ(members_per_node(c, 32, 1), 8);
  EXPECT_EQ(members_per_node(c, 16, 2), 4);
  EXPECT_EQ(members_per_node(c, 4, 8), 1);
  EXPECT_EQ(members_per_node(c, 8, 1), 8);  // inside a node: the group itself
  // 32 GPUs, 8 per node: 4 x 25 GB/s = 100 GB/s, the NVLink rate: all-gather of 3.2 GB, 31 steps of 20 us + M/(n beta).
  EXPECT_NEAR(collective_time(c, Collective::all_gather, 32, 1, 3.2e9), 31 * (20e-6 + 3.2e9 / 32 / 100e9), 1e-12);
  // 16 GPUs two apart (4 per node): 4 NICs = 100 GB/s.
  EXPECT_NEAR(collective_time(c, Collective::reduce_scatter, 16, 2, 1.6e9), 15 * (20e-6 + 1.6e9 / 16 / 100e9), 1e-12);
  // 8 GPUs 4 apart (2 per node): 50 GB/s.
  EXPECT_NEAR(collective_time(c, Collective::all_gather, 8, 4, 8e8), 7 * (20e-6 + 8e8 / 8 / 50e9), 1e-12);
  // A per-NIC fit scales the same way; a measured table for the exact group is used as measured.
  c.collectives["inter"]["all_gather"] = CollectiveFit{20e-6, 20e9, {}, {}};
  EXPECT_NEAR(collective_time(c, Collective::all_gather, 8, 4, 8e8), 7 * (20e-6 + 8e8 / 8 / 40e9), 1e-12);
}

// The rank grid's order (spec/rank_grid.hpp, Megatron-Core's tp-cp-dp-pp): z innermost, dp, pp outermost.
TEST(FormulasCollectives, PlanGroupsFollowTheRankOrder) {
  ParallelSpec p;
  p.tp = 1;
  p.z = 8;
  p.pp = 4;
  p.dp = 2;
  EXPECT_EQ(zero_group(p).size, 8);
  EXPECT_EQ(zero_group(p).stride, 1);
  EXPECT_EQ(dp_group(p).stride, 8);   // one z group apart
  EXPECT_EQ(pp_group(p).stride, 16);  // a pipeline stage holds z*dp = 16 ranks
  EXPECT_EQ(data_parallel_group(p).size, 16);
  EXPECT_EQ(data_parallel_group(p).stride, 1);  // z and dp adjacent: 16 consecutive ranks
  ClusterSpec c = four_nodes_of_eight();
  c.nodes = 8;
  EXPECT_FALSE(group_crosses_nodes(c, zero_group(p).size, zero_group(p).stride));
  EXPECT_TRUE(group_crosses_nodes(c, pp_group(p).size, pp_group(p).stride));
  EXPECT_TRUE(group_crosses_nodes(c, data_parallel_group(p).size, data_parallel_group(p).stride));
  p.dp = 1;
  EXPECT_EQ(data_parallel_group(p).stride, 1);  // just the z group: inside the node
  EXPECT_FALSE(group_crosses_nodes(c, data_parallel_group(p).size, data_parallel_group(p).stride));
  // 3D: tp 4 inside half a node, then dp 4 (ranks 4 apart: 16 ranks, two nodes), pp 2 outermost (16 apart). Under
  // the old order (pp inside dp) the two pipeline ranks shared a node; Megatron puts the dp groups there instead.
  ParallelSpec q;
  q.tp = 4;
  q.pp = 2;
  q.dp = 4;
  EXPECT_EQ(pp_group(q).stride, 16);
  EXPECT_TRUE(group_crosses_nodes(c, pp_group(q).size, pp_group(q).stride));
  EXPECT_EQ(dp_group(q).stride, 4);
  EXPECT_TRUE(group_crosses_nodes(c, dp_group(q).size, dp_group(q).stride));
  EXPECT_EQ(data_parallel_group(q).stride, 4);
  // dp 2 fits the node beside tp 4; the pipeline ranks are a node apart.
  q.dp = 2;
  EXPECT_FALSE(group_crosses_nodes(c, dp_group(q).size, dp_group(q).stride));
  EXPECT_TRUE(group_crosses_nodes(c, pp_group(q).size, pp_group(q).stride));
  EXPECT_EQ(embedding_group(q).size, 2);
  EXPECT_EQ(embedding_group(q).stride, 8);
}

}  // namespace
}  // namespace zeropp::analytic
