// validate(const Plan&): the rules that need the model, the cluster and the split together.
#include <gtest/gtest.h>

#include "cost_model/spec/config.hpp"
#include "tests/spec/expect_spec_error.hpp"

namespace zeropp {
namespace {

Plan base_plan() {
  Plan plan;
  plan.model.name = "m";
  plan.model.layers = 32;
  plan.model.hidden = 4096;
  plan.model.heads = 32;
  plan.model.seq_len = 2048;
  plan.model.vocab = 51200;
  plan.cluster.name = "c";
  plan.cluster.nodes = 8;
  plan.cluster.gpus_per_node = 8;
  plan.cluster.peak_flops = {{Dtype::bf16, 312e12}};
  plan.cluster.memory_bytes = 80.0 * (1 << 30);
  plan.cluster.intra = {300e9, 3.4e-6};
  plan.cluster.inter = {25e9, 14e-6};
  plan.parallel.strategy = Strategy::zeropp_b;
  plan.parallel.z = 8;
  plan.parallel.pp = 4;
  plan.parallel.dp = 2;
  plan.parallel.micro_batches = 8;
  plan.parallel.unit = 4;
  return plan;
}

TEST(Plan, ValidPlanPasses) {
  EXPECT_NO_THROW(validate(base_plan()));
  Plan p = base_plan();
  p.parallel = {};
  p.parallel.strategy = Strategy::three_d;
  p.parallel.schedule = ScheduleKind::interleaved;
  p.parallel.tp = 8;
  p.parallel.pp = 2;
  p.parallel.v = 4;
  p.parallel.dp = 4;
  EXPECT_NO_THROW(validate(p));
}

// Layers that do not divide take Megatron's split with the embedding and the loss counted as layers when it
// exists, or the first/last stage layers the plan gives (spec/stage_layout.hpp; its own tests).
TEST(Plan, PipelineStagesMustSplitTheLayers) {
  Plan p = base_plan();
  p.parallel.pp = 3;
  p.parallel.dp = 1;
  EXPECT_SPEC_ERROR(validate(p), "parallel.pp",
                    "parallel.pp=3 does not divide model.layers=32 (nor model.layers+2=34 with the embedding and the "
                    "loss counted as layers): set parallel.first_stage_layers and/or parallel.last_stage_layers");
  p.parallel.first_stage_layers = 10;
  EXPECT_NO_THROW(validate(p));  // 10, 11, 11
  p.parallel.first_stage_layers = 9;
  EXPECT_SPEC_ERROR(validate(p), "parallel.first_stage_layers",
                    "parallel.first_stage_layers=9 leaves 23 layers, which the other 2 pipeline stage(s) cannot "
                    "share evenly");
  p = base_plan();
  p.parallel.v = 3;
  EXPECT_SPEC_ERROR(validate(p), "parallel.v",
                    "parallel.pp*parallel.v=4*3=12 does not divide model.layers=32 (nor model.layers+2=34 with the "
                    "embedding and the loss counted as layers): set parallel.first_stage_layers and/or "
                    "parallel.last_stage_layers");
  p = base_plan();
  p.parallel.pp = 2;
  p.parallel.dp = 4;
  p.model.layers = 30;  // 30 = 2 x 15: even
  EXPECT_NO_THROW(validate(p));
  p.model.layers = 31;  // 33 is odd: refused
  EXPECT_THROW(validate(p), SpecError);
  p.model.layers = 30;
  p.parallel.pp = 4;
  p.parallel.dp = 2;  // 30 + 2 = 32 = 4 x 8: 7, 8, 8, 7
  EXPECT_NO_THROW(validate(p));
}

TEST(Plan, TensorParallelMustDivideHeadsAndMlp) {
  Plan p = base_plan();
  p.parallel = {};
  p.parallel.strategy = Strategy::three_d;
  p.parallel.schedule = ScheduleKind::one_f_one_b;
  p.parallel.tp = 8;
  p.model.heads = 4;
  p.model.hidden = 4096;
  EXPECT_SPEC_ERROR(validate(p), "parallel.tp", "parallel.tp=8 does not divide model.heads=4");
  p.model.heads = 32;
  p.model.kv_heads = 4;
  EXPECT_SPEC_ERROR(validate(p), "parallel.tp", "parallel.tp=8 does not divide model.kv_heads=4");
  p.model.kv_heads = 0;
  p.model.ffn_hidden = 11004;
  EXPECT_SPEC_ERROR(validate(p), "parallel.tp",
                    "parallel.tp=8 does not divide the MLP's hidden size 11004 (model.ffn_hidden)");
}

TEST(Plan, WorldMustFitTheCluster) {
  Plan p = base_plan();
  p.parallel.dp = 3;  // 8*4*3 = 96 GPUs on a 64-GPU cluster
  EXPECT_SPEC_ERROR(validate(p), "parallel",
                    "parallel: world tp*z*pp*dp=96 exceeds the cluster's 64 GPUs (cluster.nodes=8 x "
                    "cluster.gpus_per_node=8)");
  p = base_plan();
  p.parallel.z = 4;
  p.parallel.pp = 3;
  p.parallel.dp = 1;
  p.model.layers = 36;  // world 12: one and a half nodes
  EXPECT_SPEC_ERROR(validate(p), "parallel",
                    "parallel: world tp*z*pp*dp=12 must be a multiple or a divisor of cluster.gpus_per_node=8 "
                    "(whole nodes, or part of one node)");
  p = base_plan();
  p.parallel.dp = 1;  // 32 of 64 GPUs: fine, a plan may use part of the cluster
  EXPECT_NO_THROW(validate(p));
}

TEST(Plan, IntraNodeGroupMustFitANode) {
  Plan p = base_plan();
  p.parallel.z = 16;
  p.parallel.pp = 2;
  p.parallel.dp = 1;
  EXPECT_SPEC_ERROR(validate(p), "parallel.z",
                    "parallel.z=16 does not divide cluster.gpus_per_node=8: the ZeRO-3 group must sit inside one "
                    "node");
  p = base_plan();
  p.parallel = {};
  p.parallel.strategy = Strategy::three_d;
  p.parallel.schedule = ScheduleKind::one_f_one_b;
  p.parallel.tp = 16;
  p.model.heads = 32;
  EXPECT_SPEC_ERROR(validate(p), "parallel.tp",
                    "parallel.tp=16 does not divide cluster.gpus_per_node=8: the tensor-parallel group must sit "
                    "inside one node");
}

TEST(Plan, DtypeNeedsAPeak) {
  Plan p = base_plan();
  p.parallel.dtype = Dtype::fp32;
  EXPECT_SPEC_ERROR(validate(p), "parallel.dtype",
                    "parallel.dtype=fp32 has no peak in the cluster: cluster.peak_tflops.fp32 is not given");
}

TEST(Plan, EachSpecIsValidatedToo) {
  Plan p = base_plan();
  p.cluster.intra.bandwidth = -1e9;
  EXPECT_SPEC_ERROR(validate(p), "cluster.intra.bandwidth_GBps",
                    "cluster.intra.bandwidth_GBps=-1 must be > 0 (cluster.gpus_per_node=8)");
  p = base_plan();
  p.parallel.tp = 2;
  EXPECT_SPEC_ERROR(validate(p), "parallel.z", "parallel.tp=2 and parallel.z=8: tp and z are never both > 1");
}

}  // namespace
}  // namespace zeropp
