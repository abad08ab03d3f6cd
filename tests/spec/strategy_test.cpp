// The strategy facts (cost_model/spec/strategy): each strategy's defaults, schedules, sharding and DP sync
// against the table in DESIGN.md sections 3-4, and the rules validate() applies because of them.
#include <gtest/gtest.h>

#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp {
namespace {

ParallelSpec spec(Strategy s, int tp, int z, int pp, int dp) {
  ParallelSpec p;
  p.strategy = s;
  p.tp = tp;
  p.z = z;
  p.pp = pp;
  p.dp = dp;
  p.zero_stage = traits(s).default_zero_stage;
  p.schedule = default_schedule(s, 1);
  p.micro_batches = 4;
  p.unit = 4;
  return p;
}

TEST(Strategy, DefaultsAndSchedules) {
  EXPECT_EQ(traits(Strategy::three_d).default_zero_stage, 1);  // Megatron's distributed optimizer
  EXPECT_EQ(traits(Strategy::pp_zero1).default_zero_stage, 1);
  EXPECT_EQ(traits(Strategy::zero3_pp).default_zero_stage, 1);
  EXPECT_EQ(traits(Strategy::zero3).default_zero_stage, 3);
  EXPECT_EQ(traits(Strategy::zeropp_a).default_zero_stage, 0);  // hybrid A: all-reduce across nodes
  EXPECT_EQ(traits(Strategy::zeropp_b).default_zero_stage, 1);  // hybrid B: ZeRO-1 across nodes
  EXPECT_EQ(default_schedule(Strategy::three_d, 1), ScheduleKind::one_f_one_b);
  EXPECT_EQ(default_schedule(Strategy::three_d, 2), ScheduleKind::interleaved);
  EXPECT_EQ(default_schedule(Strategy::zeropp_a, 1), ScheduleKind::zeropp);
  for (Strategy s : all_strategies())
    for (ScheduleKind k : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b, ScheduleKind::interleaved, ScheduleKind::bfs,
                           ScheduleKind::zb_h1, ScheduleKind::zb_h2, ScheduleKind::zeropp}) {
      const bool zeropp_strategy = s == Strategy::zeropp_a || s == Strategy::zeropp_b;
      EXPECT_EQ(runs_schedule(s, k), zeropp_strategy == (k == ScheduleKind::zeropp)) << to_string(s) << to_string(k);
    }
  EXPECT_EQ(all_strategies().size(), 6u);
}

TEST(Strategy, DataParallelPictureByHand) {
  // 3D with tp 2, pp 2, dp 4: the whole gradient reduce-scattered across the 4 replicas, states over 4.
  DataParallelSync d = data_parallel_sync(spec(Strategy::three_d, 2, 1, 2, 4));
  EXPECT_EQ(d.shard_group, 1);
  EXPECT_EQ(d.mode, DpSyncMode::reduce_scatter);
  EXPECT_EQ(d.replicas, 4);
  EXPECT_EQ(d.grad_shard, 1);
  EXPECT_EQ(d.optimizer_shards, 4);
  // Plain DP (stage 0): all-reduce, every replica keeps all optimizer states.
  ParallelSpec plain = spec(Strategy::pp_zero1, 1, 1, 2, 4);
  plain.zero_stage = 0;
  d = data_parallel_sync(plain);
  EXPECT_EQ(d.mode, DpSyncMode::all_reduce);
  EXPECT_EQ(d.optimizer_shards, 1);
  // One replica: nothing to synchronise.
  EXPECT_EQ(data_parallel_sync(spec(Strategy::pp_zero1, 1, 1, 4, 1)).mode, DpSyncMode::none);
  // Pure ZeRO-3 over z 8 x dp 2 = 16 GPUs: one shard group, no sync after the backward.
  d = data_parallel_sync(spec(Strategy::zero3, 1, 8, 1, 2));
  EXPECT_EQ(d.shard_group, 16);
  EXPECT_TRUE(d.shard_spans_dp);
  EXPECT_EQ(d.gather, ParamGather::per_micro_batch);
  EXPECT_EQ(d.mode, DpSyncMode::none);
  EXPECT_EQ(d.optimizer_shards, 16);
  // Hybrid A (z 8, dp 4): the 1/8 shard all-reduced across the 4 nodes; states over the z group only.
  d = data_parallel_sync(spec(Strategy::zeropp_a, 1, 8, 2, 4));
  EXPECT_EQ(d.shard_group, 8);
  EXPECT_EQ(d.gather, ParamGather::per_unit);
  EXPECT_EQ(d.mode, DpSyncMode::all_reduce);
  EXPECT_EQ(d.replicas, 4);
  EXPECT_EQ(d.grad_shard, 8);
  EXPECT_EQ(d.optimizer_shards, 8);
  // Hybrid B: reduce-scattered, states over all 32.
  d = data_parallel_sync(spec(Strategy::zeropp_b, 1, 8, 2, 4));
  EXPECT_EQ(d.mode, DpSyncMode::reduce_scatter);
  EXPECT_EQ(d.optimizer_shards, 32);
  // Naive ZeRO-3 under PP gathers per micro-batch.
  EXPECT_EQ(data_parallel_sync(spec(Strategy::zero3_pp, 1, 2, 2, 1)).gather, ParamGather::per_micro_batch);
}

// validate(ParallelSpec) refuses a split exactly when it contradicts the strategy's row in the table: tp only for
// 3d and zero3 (FSDP2 + TP, its default framework), z only for the ZeRO-3 strategies, pp > 1 for all (zero3 not on
// the zero-bubble schedules), the ZeRO stages each allows, and the schedule.
TEST(Strategy, ValidateRefusesExactlyWhatTheTableForbids) {
  int accepted = 0, refused = 0;
  for (Strategy s : all_strategies())
    for (int tp : {1, 2})
      for (int z : {1, 2})
        for (int pp : {1, 2})
          for (int stage : {0, 1, 2, 3})
            for (ScheduleKind k : {ScheduleKind::one_f_one_b, ScheduleKind::zb_h1, ScheduleKind::zeropp}) {
              if (tp > 1 && z > 1) continue;  // a rule of its own (one intra-node dimension)
              ParallelSpec p = spec(s, tp, z, pp, 1);
              p.zero_stage = stage;
              p.schedule = k;
              const bool zeropp = s == Strategy::zeropp_a || s == Strategy::zeropp_b;
              bool ok = true;
              if (tp > 1 && s != Strategy::three_d && s != Strategy::zero3) ok = false;
              if (z > 1 && (s == Strategy::three_d || s == Strategy::pp_zero1)) ok = false;
              // zero3 under a pipeline is FSDP2's (its default framework) on gpipe, 1f1b, interleaved or bfs.
              if (pp > 1 && s == Strategy::zero3 && k == ScheduleKind::zb_h1) ok = false;
              if (s == Strategy::zero3 && stage != 3) ok = false;
              if (s == Strategy::zeropp_a && stage != 0) ok = false;
              if (s == Strategy::zeropp_b && stage != 1) ok = false;
              if (!zeropp && s != Strategy::zero3 && stage > 1) ok = false;
              if (zeropp != (k == ScheduleKind::zeropp)) ok = false;
              bool threw = false;
              try {
                validate(p);
              } catch (const SpecError&) {
                threw = true;
              }
              EXPECT_EQ(threw, !ok) << to_string(s) << " tp=" << tp << " z=" << z << " pp=" << pp << " stage=" << stage
                                    << " " << to_string(k);
              (threw ? refused : accepted) += 1;
            }
  EXPECT_GT(accepted, 10);
  EXPECT_GT(refused, 100);
}

// FSDP with TP (torchtitan's 2-D): zero3 with tp shards each TP rank's parameters over the dp GPUs of its TP rank;
// only framework fsdp2 does it (one line otherwise).
TEST(Strategy, FsdpWithTensorParallelism) {
  ParallelSpec p = spec(Strategy::zero3, 4, 1, 1, 8);
  p.zero_stage = 3;
  EXPECT_NO_THROW(validate(p));
  const DataParallelSync d = data_parallel_sync(p);
  EXPECT_EQ(d.shard_group, 8);
  EXPECT_TRUE(d.shard_spans_dp);
  EXPECT_EQ(d.optimizer_shards, 8);
  p.framework = Framework::deepspeed;
  try {
    validate(p);
    ADD_FAILURE() << "framework deepspeed with tp accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()),
              "parallel.tp=4 with parallel.strategy=zero3 needs parallel.framework=fsdp2 (FSDP with TP is "
              "torchtitan's 2-D parallelism; parallel.framework=deepspeed is not)");
  }
}

}  // namespace
}  // namespace zeropp
