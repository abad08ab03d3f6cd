#include <limits>

#include <gtest/gtest.h>

#include "cost_model/spec/config.hpp"
#include "cost_model/spec/limits.hpp"
#include "tests/spec/expect_spec_error.hpp"

namespace zeropp {
namespace {

using nlohmann::json;

json zeropp_plan() {
  return {{"strategy", "zeropp_b"}, {"z", 8},   {"pp", 4}, {"dp", 2}, {"v", 2}, {"micro_batch", 1},
          {"micro_batches", 16},    {"unit", 4}};
}

TEST(ParallelSpec, ParsesAndDerivesCounts) {
  const ParallelSpec p = parallel_from_json(zeropp_plan());
  EXPECT_EQ(p.world(), 64);
  EXPECT_EQ(p.pipelines(), 16);
  EXPECT_EQ(p.global_batch(), 1 * 16 * 8 * 2);
  EXPECT_EQ(p.schedule, ScheduleKind::zeropp);
  EXPECT_EQ(p.zero_stage, 1);
  EXPECT_EQ(p.dtype, Dtype::bf16);
  EXPECT_EQ(p.grad_reduce, GradReduce::per_unit);
}

// Absent keys take what the strategy implies, so a plan never contradicts its own strategy by default.
TEST(ParallelSpec, StrategyImpliesZeroStageAndSchedule) {
  const auto parse = [](json j) { return parallel_from_json(j); };
  EXPECT_EQ(parse({{"strategy", "zeropp_a"}}).zero_stage, 0);
  EXPECT_EQ(parse({{"strategy", "zeropp_a"}}).schedule, ScheduleKind::zeropp);
  EXPECT_EQ(parse({{"strategy", "zero3"}}).zero_stage, 3);
  EXPECT_EQ(parse({{"strategy", "3d"}, {"tp", 8}}).schedule, ScheduleKind::one_f_one_b);
  EXPECT_EQ(parse({{"strategy", "3d"}, {"tp", 8}, {"v", 2}}).schedule, ScheduleKind::interleaved);
  EXPECT_EQ(parse({{"strategy", "1f1b_zero1"}}).zero_stage, 1);
  // An absent unit is the whole iteration.
  EXPECT_EQ(parse({{"strategy", "zeropp_b"}, {"micro_batches", 12}}).unit, 12);
}

TEST(ParallelSpec, RoundTrips) {
  json j = zeropp_plan();
  j["recompute"] = "selective";
  j["grad_reduce"] = "per_w";
  j["dtype"] = "fp16";
  j["allow_ragged_units"] = false;
  const ParallelSpec p = parallel_from_json(j);
  EXPECT_EQ(parallel_from_json(to_json(p)), p);
  const ParallelSpec d = parallel_from_json({{"strategy", "3d"}, {"tp", 4}, {"sequence_parallel", true}});
  EXPECT_EQ(parallel_from_json(to_json(d)), d);
}

// tp_comm_overlap: true names the framework's own overlap, a string names one; what a framework does not run, an
// unknown kind and an overlap without SP are refused by name.
TEST(ParallelSpec, TpCommOverlapKinds) {
  const json base = {{"strategy", "3d"}, {"tp", 8}, {"sequence_parallel", true}};
  json j = base;
  j["tp_comm_overlap"] = true;
  EXPECT_EQ(parallel_from_json(j).tp_comm_overlap, TpCommOverlap::userbuffers);
  EXPECT_EQ(parallel_from_json(to_json(parallel_from_json(j))), parallel_from_json(j));
  j["framework"] = "fsdp2";
  EXPECT_EQ(parallel_from_json(j).tp_comm_overlap, TpCommOverlap::async_tp);
  j["tp_comm_overlap"] = "async_tp";
  EXPECT_EQ(parallel_from_json(j).tp_comm_overlap, TpCommOverlap::async_tp);
  j["tp_comm_overlap"] = false;
  EXPECT_EQ(parallel_from_json(j).tp_comm_overlap, TpCommOverlap::none);
  j = base;
  j["tp_comm_overlap"] = "flux";
  EXPECT_SPEC_ERROR(parallel_from_json(j), "parallel.tp_comm_overlap",
                    "parallel.tp_comm_overlap=\"flux\" must be one of none, userbuffers, async_tp");
  j["tp_comm_overlap"] = "async_tp";
  EXPECT_SPEC_ERROR(parallel_from_json(j), "parallel.tp_comm_overlap",
                    "parallel.tp_comm_overlap=async_tp: framework megatron runs userbuffers");
  j["tp_comm_overlap"] = true;
  j["framework"] = "deepspeed";
  EXPECT_SPEC_ERROR(parallel_from_json(j), "parallel.tp_comm_overlap",
                    "parallel.tp_comm_overlap=true: framework deepspeed has no TP communication overlap");
  j = base;
  j["sequence_parallel"] = false;
  j["tp_comm_overlap"] = "userbuffers";
  EXPECT_SPEC_ERROR(parallel_from_json(j), "parallel.tp_comm_overlap",
                    "parallel.tp_comm_overlap=userbuffers needs parallel.tp > 1 and parallel.sequence_parallel=true "
                    "(it overlaps the sequence-parallel all-gathers and reduce-scatters)");
}

// kernel_efficiency: the framework's fitted value unless the plan gives its own, in (0, 1], written as in effect.
TEST(ParallelSpec, KernelEfficiency) {
  json j = {{"strategy", "3d"}, {"tp", 2}};
  EXPECT_FALSE(parallel_from_json(j).kernel_efficiency.has_value());
  j["kernel_efficiency"] = 0.5;
  const ParallelSpec p = parallel_from_json(j);
  EXPECT_EQ(p.kernel_efficiency, 0.5);
  EXPECT_EQ(parallel_from_json(to_json(p)), p);
  j["kernel_efficiency"] = 1.5;
  EXPECT_SPEC_ERROR(parallel_from_json(j), "parallel.kernel_efficiency",
                    "parallel.kernel_efficiency=1.5 must be in (0, 1]");
}

TEST(ParallelSpec, StrategyIsRequired) {
  EXPECT_SPEC_ERROR(parallel_from_json(json::object()), "parallel.strategy", "parallel.strategy is required");
}

TEST(ParallelSpec, RejectsUnknownKeyAndEnumValues) {
  json j = zeropp_plan();
  j["chunks"] = 2;
  EXPECT_SPEC_ERROR(parallel_from_json(j), "parallel.chunks",
                    "parallel.chunks: unknown key (allowed: strategy, tp, pp, dp, z, zero_stage, v, schedule, "
                    "micro_batch, micro_batches, unit, allow_ragged_units, recompute, sequence_parallel, dtype, "
                    "grad_reduce, overlap_grad_reduce, tp_comm_overlap, overlap_param_gather, framework, reduce_dtype, "
                    "kernel_efficiency, first_stage_layers, last_stage_layers, cp, cp_kind, fp8_recipe, fp8_all_gather, "
                    "dp_shard, attention_kernel, grad_accumulation_fusion, transformer_impl)");
  j = zeropp_plan();
  j["recompute"] = "partial";
  EXPECT_SPEC_ERROR(parallel_from_json(j), "parallel.recompute",
                    "parallel.recompute=\"partial\" must be one of none, selective, full");
  j = zeropp_plan();
  j["grad_reduce"] = "per_step";
  EXPECT_SPEC_ERROR(parallel_from_json(j), "parallel.grad_reduce",
                    "parallel.grad_reduce=\"per_step\" must be one of per_unit, per_w");
}

TEST(ParallelSpec, TpAndZNeverBothAboveOne) {
  EXPECT_SPEC_ERROR(parallel_from_json({{"strategy", "3d"}, {"tp", 2}, {"z", 8}}), "parallel.z",
                    "parallel.tp=2 and parallel.z=8: tp and z are never both > 1");
}

TEST(ParallelSpec, RaggedUnitsOnlyWhenAllowed) {
  json j = zeropp_plan();
  j["micro_batches"] = 10;
  EXPECT_EQ(parallel_from_json(j).unit, 4);  // allowed by default: units of 4, 4, 2
  j["allow_ragged_units"] = false;
  EXPECT_SPEC_ERROR(parallel_from_json(j), "parallel.micro_batches",
                    "parallel.micro_batches=10 is not a multiple of parallel.unit=4 "
                    "(parallel.allow_ragged_units=false)");
  j = zeropp_plan();
  j["unit"] = 32;
  EXPECT_SPEC_ERROR(parallel_from_json(j), "parallel.unit", "parallel.unit=32 exceeds parallel.micro_batches=16");
}

TEST(ParallelSpec, RejectsNonPositiveSizes) {
  json j = zeropp_plan();
  j["pp"] = 0;
  EXPECT_SPEC_ERROR(parallel_from_json(j), "parallel.pp", "parallel.pp=0 must be >= 1");
  j = zeropp_plan();
  j["micro_batch"] = -1;
  EXPECT_SPEC_ERROR(parallel_from_json(j), "parallel.micro_batch", "parallel.micro_batch=-1 must be >= 1");
  j = zeropp_plan();
  j["zero_stage"] = 4;
  EXPECT_SPEC_ERROR(parallel_from_json(j), "parallel.zero_stage", "parallel.zero_stage=4 must be 0, 1, 2 or 3");
}

TEST(ParallelSpec, ChunksNeedAMultiChunkSchedule) {
  EXPECT_SPEC_ERROR(parallel_from_json({{"strategy", "1f1b_zero1"}, {"pp", 4}, {"v", 2}, {"schedule", "zb_h1"}}),
                    "parallel.v",
                    "parallel.v=2 needs a schedule with several chunks per rank (interleaved, bfs, zeropp), not "
                    "parallel.schedule=zb_h1");
}

TEST(ParallelSpec, PlansMustMatchTheirStrategy) {
  EXPECT_SPEC_ERROR(parallel_from_json({{"strategy", "zeropp_a"}, {"tp", 2}}), "parallel.tp",
                    "parallel.tp=2 is not allowed with parallel.strategy=zeropp_a: ZeRO-3 under PP is TP-free "
                    "(tp must be 1)");
  EXPECT_SPEC_ERROR(parallel_from_json({{"strategy", "zeropp_a"}, {"zero_stage", 1}}), "parallel.zero_stage",
                    "parallel.zero_stage=1 is not allowed with parallel.strategy=zeropp_a: hybrid A all-reduces "
                    "gradients across dp (zero_stage 0)");
  EXPECT_SPEC_ERROR(parallel_from_json({{"strategy", "zeropp_b"}, {"zero_stage", 0}}), "parallel.zero_stage",
                    "parallel.zero_stage=0 is not allowed with parallel.strategy=zeropp_b: hybrid B uses ZeRO-1 "
                    "across dp (zero_stage 1)");
  // FSDP under a pipeline is FSDP2's (torchtitan's 3-D), not DeepSpeed's; HSDP too.
  EXPECT_NO_THROW(parallel_from_json({{"strategy", "zero3"}, {"pp", 2}}));
  EXPECT_SPEC_ERROR(parallel_from_json({{"strategy", "zero3"}, {"pp", 2}, {"framework", "deepspeed"}}), "parallel.pp",
                    "parallel.pp=2 with parallel.strategy=zero3 needs parallel.framework=fsdp2 (FSDP under a pipeline "
                    "is torchtitan's; parallel.framework=deepspeed is not: ZeRO-3 under PP in DeepSpeed's manner is "
                    "strategy zero3_pp)");
  EXPECT_SPEC_ERROR(parallel_from_json({{"strategy", "zero3"}, {"z", 8}, {"dp", 4}, {"dp_shard", 0}}),
                    "parallel.dp_shard", "parallel.dp_shard=0 must be >= 1");
  EXPECT_SPEC_ERROR(parallel_from_json({{"strategy", "3d"}, {"dp", 4}, {"dp_shard", 2}}), "parallel.dp_shard",
                    "parallel.dp_shard=2 is not allowed with parallel.strategy=3d: HSDP (a shard group over part of "
                    "dp) is FSDP2's, strategy zero3");
  EXPECT_EQ(parallel_from_json({{"strategy", "zero3"}, {"z", 8}, {"dp", 4}, {"dp_shard", 2}}).dp_shard, 2);
  EXPECT_SPEC_ERROR(parallel_from_json({{"strategy", "3d"}, {"z", 8}}), "parallel.z",
                    "parallel.z=8 is not allowed with parallel.strategy=3d: 3D has no ZeRO-3 group (z must be 1)");
  EXPECT_SPEC_ERROR(parallel_from_json({{"strategy", "1f1b_zero1"}, {"zero_stage", 2}}), "parallel.zero_stage",
                    "parallel.zero_stage=2 is not allowed with parallel.strategy=1f1b_zero1: pipeline parallelism "
                    "takes ZeRO stage 0 or 1");
}

TEST(ParallelSpec, WorldAndBatchNeverWrap) {
  // dp = 2^31-1 once printed "-4 GPUs"; pp = 3, dp = 1431655766 wrapped to a world of 2 and passed the trainer.
  json j = {{"strategy", "1f1b_zero1"}, {"pp", 4}, {"dp", std::numeric_limits<int>::max()}};
  EXPECT_SPEC_ERROR(parallel_from_json(j), "parallel",
                    "parallel: world tp*z*pp*dp=1*1*4*2147483647 exceeds the limit of 16777216 GPUs");
  j = {{"strategy", "1f1b_zero1"}, {"pp", 3}, {"dp", 1431655766}};
  EXPECT_SPEC_ERROR(parallel_from_json(j), "parallel",
                    "parallel: world tp*z*pp*dp=1*1*3*1431655766 exceeds the limit of 16777216 GPUs");
  j = {{"strategy", "zeropp_b"}, {"z", 8}, {"dp", 1024}, {"micro_batch", 1 << 20}, {"micro_batches", 1 << 10}};
  EXPECT_SPEC_ERROR(parallel_from_json(j), "parallel",
                    "parallel: global batch micro_batch*micro_batches*z*dp=1048576*1024*8*1024 exceeds the limit "
                    "of 4294967296 sequences");
  j = {{"strategy", "zeropp_b"}, {"v", 1 << 17}};
  EXPECT_SPEC_ERROR(parallel_from_json(j), "parallel.v", "parallel.v=131072 exceeds the limit 65536");
}

}  // namespace
}  // namespace zeropp
