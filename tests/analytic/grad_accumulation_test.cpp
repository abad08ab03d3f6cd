// Weight-gradient accumulation as each framework executes it (grad_accumulation.hpp): the bytes per weight element
// counted by hand from the frameworks' code paths for a small plan of each, and the seconds they add, through the
// GEMM epilogue (roofline path) and through separate kernels (any path with an HBM rate).
#include "cost_model/analytic/grad_accumulation.hpp"

#include <gtest/gtest.h>

#include "cost_model/analytic/op_time.hpp"
#include "cost_model/analytic/params.hpp"
#include "cost_model/analytic/time_model.hpp"
#include "cost_model/analytic/zero3_execution.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"
#include "estimate_fixtures.hpp"

namespace zeropp::analytic {
namespace {

ParallelSpec spec(Strategy strategy, Framework framework, int micro_batches) {
  ParallelSpec p;
  p.strategy = strategy;
  p.schedule = ScheduleKind::one_f_one_b;
  p.zero_stage = strategy == Strategy::zero3 ? 3 : 1;
  p.micro_batches = micro_batches;
  p.unit = micro_batches;
  p.framework = framework;
  return p;
}

ParallelSpec zeropp_spec(int z, int micro_batches, int unit, GradReduce reduce) {
  ParallelSpec p = spec(Strategy::zeropp_b, Framework::zeropp, micro_batches);
  p.schedule = ScheduleKind::zeropp;
  p.z = z;
  p.unit = unit;
  p.grad_reduce = reduce;
  return p;
}

// bf16 (e = 2), Megatron's fp32 main_grad (g = 4), 4 micro-batches: TransformerEngine stores 4 bytes on the first
// (beta = 0), reads and writes 8 on the others: (4 + 3 x 8) / 4 = 7. The output layer (Megatron's own
// ColumnParallelLinear) accumulates on every micro-batch: 8. The buffer is zeroed once per iteration: 4.
TEST(GradAccumulation, MegatronAccumulatesInTheEpilogue) {
  const GradAccumulation a = grad_accumulation(spec(Strategy::pp_zero1, Framework::megatron, 4));
  EXPECT_DOUBLE_EQ(a.layer_store, 7);
  EXPECT_DOUBLE_EQ(a.head_store, 8);
  EXPECT_DOUBLE_EQ(a.kernel, 0);
  EXPECT_DOUBLE_EQ(a.reset, 4);
  // One micro-batch: the store alone, 4.
  EXPECT_DOUBLE_EQ(grad_accumulation(spec(Strategy::pp_zero1, Framework::megatron, 1)).layer_store, 4);
}

// Megatron-LM of 2021 (no fusion), fp16 with fp16 main_grad (g = 2): a fresh 2-byte store, then the DDP hook's
// main_grad.add_(grad) on every micro-batch: read 2 + read 2 + write 2 = 6; the zeroed buffer, 2.
TEST(GradAccumulation, MegatronWithoutFusionAddsInTheDdpHook) {
  ParallelSpec p = spec(Strategy::three_d, Framework::megatron, 4);
  p.dtype = Dtype::fp16;
  p.grad_accumulation_fusion = false;
  const GradAccumulation a = grad_accumulation(p);
  EXPECT_DOUBLE_EQ(a.layer_store, 2);
  EXPECT_DOUBLE_EQ(a.head_store, 2);
  EXPECT_DOUBLE_EQ(a.kernel, 6);
  EXPECT_DOUBLE_EQ(a.reset, 2);
}

// DeepSpeed ZeRO-1, bf16 gradients: autograd steals the first micro-batch's gradient and adds the 3 others in place
// (read 2 + 2, write 2): 3 x 6 / 4 = 4.5. With fp32 accumulation (grad_accum: cast 2 + 4 on the first; cast 2 + 4
// and add 12 after): (6 + 3 x 18) / 4 = 15.
TEST(GradAccumulation, DeepSpeedAccumulatesThroughAutograd) {
  ParallelSpec p = spec(Strategy::three_d, Framework::deepspeed, 4);
  GradAccumulation a = grad_accumulation(p);
  EXPECT_DOUBLE_EQ(a.layer_store, 2);
  EXPECT_DOUBLE_EQ(a.kernel, 4.5);
  EXPECT_DOUBLE_EQ(a.reset, 0);
  p.reduce_dtype = Dtype::fp32;
  a = grad_accumulation(p);
  EXPECT_DOUBLE_EQ(a.kernel, 15);
  // One micro-batch: nothing added into bf16; the fp32 accumulator still takes its cast (6).
  EXPECT_DOUBLE_EQ(grad_accumulation(spec(Strategy::three_d, Framework::deepspeed, 1)).kernel, 0);
  p.micro_batches = p.unit = 1;
  EXPECT_DOUBLE_EQ(grad_accumulation(p).kernel, 6);
}

// ZeroPP, z = 8, 8 micro-batches in units of 4: two reductions. Unsharded, 6 of the 8 micro-batches add (6 bytes
// each): 4.5; the second reduction adds into the shard (6 bytes over 1/8 of the elements) once: 6/8/8. Reduced after
// every W (per_w): 7 additions into the shard: 7 x 6/8/8. Without a ZeRO-3 group (z = 1) the gradient accumulates
// over the whole iteration: 7 x 6/8.
TEST(GradAccumulation, ZeroPPUnitsAndShards) {
  EXPECT_EQ(grad_reductions(zeropp_spec(8, 8, 4, GradReduce::per_unit)).count, 2);
  EXPECT_DOUBLE_EQ(grad_accumulation(zeropp_spec(8, 8, 4, GradReduce::per_unit)).kernel, 4.5 + 6.0 / 64);
  EXPECT_DOUBLE_EQ(grad_accumulation(zeropp_spec(8, 8, 4, GradReduce::per_w)).kernel, 7 * 6.0 / 64);
  EXPECT_DOUBLE_EQ(grad_accumulation(zeropp_spec(1, 8, 4, GradReduce::per_unit)).kernel, 7 * 6.0 / 8);
  // Ragged units: 7 micro-batches in units of 3 are 3 reductions, 4 unsharded additions and 2 into the shard.
  EXPECT_DOUBLE_EQ(grad_accumulation(zeropp_spec(8, 7, 3, GradReduce::per_unit)).kernel,
                   (4 * 6.0 + 2 * 6.0 / 8) / 7);
}

// FSDP without PP reduce-scatters every micro-batch: nothing accumulates unsharded (the shard's additions are the
// reduce-scatter stream's, zero3_execution.hpp). FSDP2 under PP keeps an fp32 unsharded gradient: the first cast
// (2 + 4), the 3 later micro-batches added in one kernel (2 + 4 + 4): (6 + 30) / 4 = 9.
TEST(GradAccumulation, FsdpAccumulatesUnshardedOnlyUnderPP) {
  ParallelSpec p = spec(Strategy::zero3, Framework::fsdp1, 4);
  p.z = 8;
  EXPECT_EQ(grad_reductions(p).count, 4);
  EXPECT_DOUBLE_EQ(grad_accumulation(p).kernel, 0);
  EXPECT_DOUBLE_EQ(grad_accumulation(p).layer_store, 2);
  p.framework = Framework::fsdp2;
  EXPECT_DOUBLE_EQ(grad_accumulation(p).kernel, 0);
  p.pp = 2;
  EXPECT_EQ(grad_reductions(p).count, 1);
  EXPECT_DOUBLE_EQ(grad_accumulation(p).kernel, 9);
}

// The shard additions of the ZeRO-3 frameworks on their reduce-scatter streams: R - 1 of R reductions add. FSDP2
// without PP, 4 micro-batches: 3/4 of (4 + 4 + 4) per shard element; under PP the one reduction adds nothing.
TEST(GradAccumulation, ShardAdditionsOnTheReduceScatterStream) {
  ClusterSpec c = test::round_cluster(1, 8);
  ParallelSpec p = spec(Strategy::zero3, Framework::fsdp2, 4);
  p.z = 8;
  p.dp = 1;
  const Plan plan = test::plan_of(test::gpt(4, 1024, 16, 1024, 50000), c, p);
  EXPECT_DOUBLE_EQ(zero3_copy_bytes(plan, 8e6, 1e6, 8).reduce_side, 0.75 * 1e6 * 12);
  Plan pipelined = plan;
  pipelined.parallel.pp = 2;
  EXPECT_DOUBLE_EQ(zero3_copy_bytes(pipelined, 8e6, 1e6, 8).reduce_side, 0);
}

// The epilogue path (op_time.hpp): a compute-bound weight gradient 1024 x 1024, 2048 deep, at 100 TFLOP/s (no
// tiles), HBM 1 TB/s. With the store exposed the fp32 read and write (8 bytes) cost 6 bytes per element more than
// the bf16 store: 6 x 1024^2 / 1e12 s; with the store under the main loop (exposed 0, as on the A100) nothing.
TEST(GradAccumulation, EpilogueBytesExposedOnlyWhereTheStoreIs) {
  ClusterSpec c = test::round_cluster();
  c.memory_bandwidth = 1e12;
  c.gpu = GpuOps{};
  c.gpu->matmul_efficiency = {1, Provenance::nominal};
  const Gemm x{2048, 1024, 1024, 1};  // X (2048 tokens x 1024) W (1024 x 1024)
  const double compute = 2.0 * 1024 * 1024 * 2048 / 100e12;
  EXPECT_NEAR(gemm_time(c, Dtype::bf16, wgrad_gemm(x, 8)), compute, 1e-15);  // reads 8.4 us + store 8.4 us < 43 us
  c.gpu->gemm_epilogue_exposed = {1, Provenance::measured};
  EXPECT_NEAR(gemm_time(c, Dtype::bf16, wgrad_gemm(x)), compute + 2 * 1024.0 * 1024 / 1e12, 1e-15);
  EXPECT_NEAR(gemm_time(c, Dtype::bf16, wgrad_gemm(x, 8)) - gemm_time(c, Dtype::bf16, wgrad_gemm(x)),
              6 * 1024.0 * 1024 / 1e12, 1e-15);
}

// The separate-kernel path through action_costs: a GPT layer of h = 1024 (12 h^2 = 12582912 weight elements, tp 1),
// DeepSpeed bf16 on 4 micro-batches against 1: 4.5 bytes per element per micro-batch more in each layer's W, at
// 1 TB/s; the LM head's 1024 x 50000 weights the same. Without an operation table (round cluster) the GEMMs are
// priced per FLOP, so the difference is the kernels alone.
TEST(GradAccumulation, SeparateKernelsAddToW) {
  ClusterSpec c = test::round_cluster(1, 8);
  c.memory_bandwidth = 1e12;
  const ModelSpec model = test::gpt(2, 1024, 16, 1024, 50000);
  const ActionCosts four = action_costs(test::plan_of(model, c, spec(Strategy::three_d, Framework::deepspeed, 4)));
  const ActionCosts one = action_costs(test::plan_of(model, c, spec(Strategy::three_d, Framework::deepspeed, 1)));
  EXPECT_NEAR(four.w - one.w, 2 * 4.5 * 12582912 / 1e12, 1e-15);
  EXPECT_NEAR(four.head_w - one.head_w, 4.5 * 1024.0 * 50000 / 1e12, 1e-15);
  EXPECT_DOUBLE_EQ(four.f, one.f);
  EXPECT_DOUBLE_EQ(four.b, one.b);
  // Megatron on the same flat-rate profile: the epilogue is inside the GEMM's per-FLOP price (no traffic priced), no
  // kernel; the zeroed fp32 buffer (4 bytes per parameter) is in the step.
  const ActionCosts m4 = action_costs(test::plan_of(model, c, spec(Strategy::three_d, Framework::megatron, 4)));
  const ActionCosts m1 = action_costs(test::plan_of(model, c, spec(Strategy::three_d, Framework::megatron, 1)));
  EXPECT_DOUBLE_EQ(m4.w, m1.w);
  ParallelSpec unfused = spec(Strategy::three_d, Framework::megatron, 4);
  unfused.grad_accumulation_fusion = false;
  const ActionCosts mu = action_costs(test::plan_of(model, c, unfused));
  EXPECT_NEAR(mu.w - m4.w, 2 * (2 + 8) * 12582912 / 1e12, 1e-15);  // the hook's add: read 2 + 4, write 4
  const double psi = static_cast<double>(rank_params(model, 1, 1, 0, 1).total());
  const ActionCosts d4 = four;
  // The gradient norm reads fp32 against bf16 gradients (4 vs 2), Adam 30 vs 28 bytes, and Megatron resets its buffer.
  EXPECT_NEAR(m4.opt_step - d4.opt_step, (4 - 2) * psi / 1e12 + (30 - 28) * psi / 1e12 + 4 * psi / 1e12, 1e-12);
}

TEST(GradAccumulation, FusionIsMegatronsOption) {
  const nlohmann::json deepspeed = {{"strategy", "3d"}, {"framework", "deepspeed"}, {"grad_accumulation_fusion", true}};
  EXPECT_THROW(parallel_from_json(deepspeed, "parallel"), SpecError);
  // false is what every other framework does: accepted and kept as the default.
  nlohmann::json fsdp = {{"strategy", "zero3"}, {"z", 8}, {"zero_stage", 3}, {"grad_accumulation_fusion", false}};
  EXPECT_FALSE(parallel_from_json(fsdp, "parallel").grad_accumulation_fusion.has_value());
  // Megatron's off switch round-trips through to_json; its default is not written.
  const nlohmann::json megatron = {{"strategy", "3d"}, {"grad_accumulation_fusion", false}};
  const ParallelSpec off = parallel_from_json(megatron, "parallel");
  EXPECT_FALSE(grad_accumulation_fusion(off));
  EXPECT_EQ(parallel_from_json(to_json(off), "parallel"), off);
  EXPECT_FALSE(to_json(parallel_from_json({{"strategy", "3d"}}, "parallel")).contains("grad_accumulation_fusion"));
  EXPECT_TRUE(grad_accumulation_fusion(parallel_from_json({{"strategy", "3d"}}, "parallel")));
}

}  // namespace
}  // namespace zeropp::analytic
