// The data-parallel gradient sync cut into buckets that leave as the last backward produces them
// (StageCost::dp_sync_buckets, framework.hpp dp_sync_buckets): timelines derived by hand.
#include <gtest/gtest.h>

#include "cost_model/schedule/action.hpp"
#include "cost_model/simulate/costs.hpp"
#include "cost_model/simulate/simulator.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/framework.hpp"

namespace zeropp::simulate {
namespace {

// One rank, two micro-batches: F0 [0,1] F1 [1,2] BW0 [2,6] BW1 [6,10]; the sync (6 s) follows BW1.
// One bucket: DP_SYNC [10,16], OPT_STEP (0 s) at 16.
// Four buckets: the first is ready a quarter into BW1, at 7; the stream runs 6 s from there, [7,13], and the
// last bucket (1.5 s) cannot leave before BW1 ends at 10: 11.5 < 13, so the sync ends at 13 (3 s exposed).
// With a 2-second sync the last bucket decides: start 7, 7 + 2 = 9 < 10 + 0.5, end 10.5.
TEST(BucketedDpSync, OverlapsTheLastBackwardByHand) {
  const auto program = schedule::parse_program("0F0 0F1 0BW0 0BW1 0DP_SYNC 0OPT_STEP\n", 1, 1, 2);
  ActionCosts costs = ActionCosts::uniform(1, 1, 1, 4, 0);
  costs.stages[0].dp_sync.seconds = 6;
  const SimResult one = simulate(program, costs);
  EXPECT_DOUBLE_EQ(one.start[4], 10);
  EXPECT_DOUBLE_EQ(one.makespan, 16);

  costs.stages[0].dp_sync_buckets = 4;
  const SimResult four = simulate(program, costs);
  EXPECT_DOUBLE_EQ(four.start[4], 7);
  EXPECT_DOUBLE_EQ(four.end[4], 13);
  EXPECT_DOUBLE_EQ(four.makespan, 13);

  costs.stages[0].dp_sync.seconds = 2;
  const SimResult short_sync = simulate(program, costs);
  EXPECT_DOUBLE_EQ(short_sync.start[4], 7);
  EXPECT_DOUBLE_EQ(short_sync.end[4], 10.5);
}

// A sync that follows a ZeRO-3 reduce-scatter streams nothing: it waits for the collective.
TEST(BucketedDpSync, AfterAReduceScatterItWaits) {
  const auto program = schedule::parse_program("0F0 0BW0 0REDUCE_GRAD 0DP_SYNC 0OPT_STEP\n", 1, 1, 1);
  ActionCosts costs = ActionCosts::uniform(1, 1, 1, 4, 0);
  costs.stages[0].reduce_grad.seconds = 1;
  costs.stages[0].dp_sync.seconds = 2;
  costs.stages[0].dp_sync_buckets = 8;
  const SimResult r = simulate(program, costs);
  EXPECT_DOUBLE_EQ(r.start[3], 6);  // BW [1,5], REDUCE_GRAD [5,6]
  EXPECT_DOUBLE_EQ(r.makespan, 8);
}

TEST(BucketedDpSync, ZeroBucketsAreRefused) {
  const auto program = schedule::parse_program("0F0 0BW0 0DP_SYNC\n", 1, 1, 1);
  ActionCosts costs = ActionCosts::uniform(1, 1, 1, 1, 0);
  costs.stages[0].dp_sync_buckets = 0;
  EXPECT_THROW(simulate(program, costs), SpecError);
}

// The frameworks' bucket counts, by hand.
TEST(BucketedDpSync, BucketsPerFramework) {
  ParallelSpec p;
  p.strategy = Strategy::three_d;
  p.dp = 48;
  p.overlap_grad_reduce = true;
  // Megatron: buckets of max(40M, 1M x 48) = 48M parameters, on virtual stage 0 only: 400M -> 9 buckets.
  EXPECT_EQ(dp_sync_buckets(p, 0, 400e6, 12), 9);
  EXPECT_EQ(dp_sync_buckets(p, 1, 400e6, 12), 1);
  p.dp = 8;  // 40M floor: 400M -> 10
  EXPECT_EQ(dp_sync_buckets(p, 0, 400e6, 12), 10);
  EXPECT_EQ(dp_sync_buckets(p, 0, 1e6, 12), 1);  // smaller than one bucket
  p.framework = Framework::deepspeed;             // reduce_bucket_size 5e8: 1.2e9 -> 3
  EXPECT_EQ(dp_sync_buckets(p, 1, 1.2e9, 12), 3);
  p.framework = Framework::fsdp2;  // one per layer
  EXPECT_EQ(dp_sync_buckets(p, 1, 1.2e9, 12), 12);
  p.framework = Framework::zeropp;  // follows the ZeRO-3 reduce-scatter
  EXPECT_EQ(dp_sync_buckets(p, 0, 1.2e9, 12), 1);
  p.framework = Framework::megatron;
  p.overlap_grad_reduce = false;  // one sync after the backward, whatever the framework
  EXPECT_EQ(dp_sync_buckets(p, 0, 400e6, 12), 1);
}

}  // namespace
}  // namespace zeropp::simulate
