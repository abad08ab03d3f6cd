// FP8 training (spec/fp8.hpp, analytic/fp8_cost.hpp) against hand derivations: the FP8 GEMM's compute and memory
// roofline, the cast kernels' bytes per recipe, which GEMMs the time model prices in FP8 and which stay bf16, the
// activations TransformerEngine saves in FP8, the state it keeps, the FP8 all-gather's bytes, and the refusals.
#include "cost_model/analytic/fp8_cost.hpp"

#include <gtest/gtest.h>

#include "../spec/expect_spec_error.hpp"
#include "cost_model/analytic/comm_volume.hpp"
#include "cost_model/analytic/memory.hpp"
#include "cost_model/analytic/op_time.hpp"
#include "cost_model/analytic/params.hpp"
#include "cost_model/analytic/time_model.hpp"
#include "cost_model/spec/framework.hpp"
#include "cost_model/spec/strategy.hpp"
#include "estimate_fixtures.hpp"

namespace zeropp::analytic {
namespace {

// 100 TFLOP/s bf16 and 200 FP8, 100 SMs, tiles of 256 x 128, bf16 MAMF 0.8, FP8 0.7, HBM 1 TB/s at 90%.
ClusterSpec fp8_cluster() {
  ClusterSpec c = test::round_cluster();
  c.memory_bandwidth = 1e12;
  c.fp8_peak_flops = 200e12;
  c.gpu = GpuOps{};
  c.gpu->sm_count = {100, Provenance::nominal};
  c.gpu->matmul_efficiency = {0.8, Provenance::published};
  c.gpu->fp8_matmul_efficiency = {0.7, Provenance::published};
  c.gpu->gemm_tile_rows = {256, Provenance::nominal};
  c.gpu->gemm_tile_cols = {128, Provenance::nominal};
  c.gpu->hbm_efficiency = {0.9, Provenance::published};
  return c;
}

// GPT layer, h = 1024, 16 heads, s = 128, flash attention.
ModelSpec small_gpt() {
  ModelSpec m = test::gpt(4, 1024, 16, 128, 1024);
  m.attention = AttentionKind::flash;
  return m;
}

Plan fp8_plan(Strategy strategy, std::optional<Fp8Recipe> recipe = {}) {
  ParallelSpec p;
  p.strategy = strategy;
  p.zero_stage = traits(strategy).default_zero_stage;
  p.schedule = default_schedule(strategy, 1);
  p.micro_batches = 4;
  p.unit = 4;
  if (shards_with_zero3(strategy)) p.z = 8;
  p.fp8 = true;
  p.fp8_recipe = recipe;
  return test::plan_of(small_gpt(), fp8_cluster(), p);
}

TEST(Fp8Cost, GemmIsTheSlowerOfFp8ComputeAndOneByteOperands) {
  const ClusterSpec c = fp8_cluster();
  // 1024 x 1024 x 4096: one wave of 96 split-K blocks on 100 SMs (op_time_test), compute-bound.
  EXPECT_NEAR(fp8_gemm_time(c, Gemm{1024, 1024, 4096, 1}), 2.0 * 1024 * 1024 * 4096 / (200e12 * 0.7 * 0.96), 1e-15);
  // 4096 x 4096 x 64: compute 2 4096^2 64 / (140e12 x 512/600) = 18 us; operands at 1 byte, the bf16 output at 2:
  // (4096 x 64 x 2) + 2 x 4096^2 bytes / 0.9e12 = 37.9 us: memory-bound.
  EXPECT_NEAR(fp8_gemm_time(c, Gemm{4096, 4096, 64, 1}), (4096.0 * 64 * 2 + 2.0 * 4096 * 4096) / 0.9e12, 1e-15);
  // Against bf16 on the same shape, compute-bound: (200 x 0.7) / (100 x 0.8) = 1.75x faster.
  EXPECT_NEAR(gemm_time(c, Dtype::bf16, Gemm{1024, 1024, 4096, 1}) / fp8_gemm_time(c, Gemm{1024, 1024, 4096, 1}),
              1.75, 1e-12);
}

TEST(Fp8Cost, CastBytesPerRecipe) {
  const double h = 1024, s = 128, e = 2;
  const LayerGemms g = layer_gemms(small_gpt(), 1, 1);
  // The four linear inputs (h, h, h, 4h wide), output gradients (3h, h, 4h, h) and weights (12 h^2).
  const double x = s * (3 * h + 4 * h), dy = s * (3 * h + h + 4 * h + h), w = 12 * h * h;
  EXPECT_DOUBLE_EQ(linear_weight_elements(g), w);
  // TE delayed under Megatron: cast + transpose, e + 2 per element, the weights once per step of B = 4.
  Fp8CastBytes c = fp8_layer_cast_bytes(fp8_plan(Strategy::three_d), g);
  EXPECT_DOUBLE_EQ(c.forward, (e + 2) * x + (e + 2) * w / 4);
  EXPECT_DOUBLE_EQ(c.backward, (e + 2) * dy);
  // TE current scaling: one amax read more per element.
  c = fp8_layer_cast_bytes(fp8_plan(Strategy::three_d, Fp8Recipe::te_current), g);
  EXPECT_DOUBLE_EQ(c.forward, (2 * e + 2) * x + (2 * e + 2) * w / 4);
  EXPECT_DOUBLE_EQ(c.backward, (2 * e + 2) * dy);
  // ZeroPP (TE without is_first_microbatch) casts its weights at every forward, whatever its unit.
  c = fp8_layer_cast_bytes(fp8_plan(Strategy::zeropp_b), g);
  EXPECT_DOUBLE_EQ(c.forward, (e + 2) * (x + w));
  // torchao tensorwise (FSDP2's default): six casts of 2e + 1: X, W forward; dY twice, X and W again backward.
  c = fp8_layer_cast_bytes(fp8_plan(Strategy::zero3), g);
  EXPECT_DOUBLE_EQ(c.forward, (2 * e + 1) * (x + w));
  EXPECT_DOUBLE_EQ(c.backward, (2 * e + 1) * (2 * dy + x + w));
  // With the FP8 all-gather the weight casts run on the shard (z = 8).
  Plan gathered = fp8_plan(Strategy::zero3);
  gathered.parallel.fp8_all_gather = true;
  c = fp8_layer_cast_bytes(gathered, g);
  EXPECT_DOUBLE_EQ(c.forward, (2 * e + 1) * (x + w / 8));
  // TE under FSDP2 (llm-foundry) casts the weights every micro-batch.
  c = fp8_layer_cast_bytes(fp8_plan(Strategy::zero3, Fp8Recipe::te_delayed), g);
  EXPECT_DOUBLE_EQ(c.forward, (e + 2) * (x + w));
  // Not FP8: nothing.
  Plan bf16 = fp8_plan(Strategy::three_d);
  bf16.parallel.fp8 = false;
  EXPECT_EQ(fp8_layer_cast_bytes(bf16, g).forward, 0);
}

// The FLOP split: the four weight GEMMs (each three ways) move to the FP8 rate, plus the casts; the attention core,
// the LM head and the memory-bound kernels keep their bf16 prices.
TEST(Fp8Cost, OnlyTheWeightGemmsRunInFp8) {
  const Plan fp8 = fp8_plan(Strategy::three_d);
  Plan bf16 = fp8;
  bf16.parallel.fp8 = false;
  const ActionCosts a8 = action_costs(fp8), a16 = action_costs(bf16);
  const LayerGemms g = layer_gemms(fp8.model, 1, 1);
  const ClusterSpec& c = fp8.cluster;
  const double sustain = kernel_efficiency(fp8.parallel);
  double df = 0, db = 0, dw = 0;
  for (int i : {LayerGemms::qkv, LayerGemms::proj, LayerGemms::up, LayerGemms::down}) {
    const Gemm& x = g.gemm[i];
    // The weight gradient accumulates into Megatron's fp32 main_grad in the epilogue, in either precision: stored
    // (4 bytes) on the first of the 4 micro-batches, read and written (8) on the others, 7 on average
    // (grad_accumulation.hpp).
    const Gemm dgrad{x.m, x.k, x.n, x.count}, wgrad{x.k, x.n, x.m, x.count, 7};
    df += (fp8_gemm_time(c, x) - gemm_time(c, Dtype::bf16, x)) / sustain;
    db += (fp8_gemm_time(c, dgrad) - gemm_time(c, Dtype::bf16, dgrad)) / sustain;
    dw += (fp8_gemm_time(c, wgrad) - gemm_time(c, Dtype::bf16, wgrad)) / sustain;
  }
  const Fp8CastBytes casts = fp8_layer_cast_bytes(fp8, g);
  const double L = a8.layers_per_chunk;
  EXPECT_NEAR(a8.f - a16.f, L * (df + memory_time(c, casts.forward)), 1e-12 * a16.f);
  EXPECT_NEAR(a8.b - a16.b, L * (db + memory_time(c, casts.backward)), 1e-12 * a16.b);
  EXPECT_NEAR(a8.w - a16.w, L * dw, 1e-12 * a16.w);
  EXPECT_LT(df, 0);
  EXPECT_DOUBLE_EQ(a8.head_f, a16.head_f);  // LM head in bf16
  EXPECT_DOUBLE_EQ(a8.head_b, a16.head_b);
  EXPECT_DOUBLE_EQ(a8.head_w, a16.head_w);
}

// TE saves the FP8 transpose of each linear input: per token, the QKV and MLP inputs (h each) and the down input
// (4h) at 1 byte instead of 2, and the projection input gains a 1-byte copy beside FlashAttention's bf16 output:
// -h - h + h - 4h = -5h bytes per token (t = 1); unfused attention keeps only the FP8 copy of the projection input,
// -h instead of +h: -7h.
TEST(Fp8Cost, TransformerEngineSavesFp8Inputs) {
  const ModelSpec m = small_gpt();
  const double sb = 128, h = 1024;
  ActivationOptions bf16;
  ActivationOptions fp8 = bf16;
  fp8.fp8_inputs = true;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(m, fp8) - activation_bytes_per_layer(m, bf16), -5 * h * sb);
  ModelSpec unfused = m;
  unfused.attention = AttentionKind::unfused;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(unfused, fp8) - activation_bytes_per_layer(unfused, bf16), -7 * h * sb);
  // What W needs (split backward): the four inputs at 1 byte: -(h + h + h + 4h).
  EXPECT_DOUBLE_EQ(split_activation_bytes_per_layer(m, fp8).until_w - split_activation_bytes_per_layer(m, bf16).until_w,
                   -7 * h * sb);
  EXPECT_TRUE(fp8_saves_fp8_inputs(fp8_plan(Strategy::three_d).parallel));
  EXPECT_FALSE(fp8_saves_fp8_inputs(fp8_plan(Strategy::zero3).parallel));  // torchao saves bf16
}

// TE keeps amax histories (delayed: 1024 fp32 values) and scales (2 fp32) for 5 FP8 tensors of each of 4 linears per
// layer, and, without ZeRO-3, the FP8 weights and their transposes (2 bytes per weight element) all step.
TEST(Fp8Cost, StateBytes) {
  const double h = 1024, layers = 4;
  EXPECT_DOUBLE_EQ(fp8_state_bytes(fp8_plan(Strategy::three_d), layers),
                   layers * 4 * 5 * 4 * (1024 + 2) + layers * 2 * 12 * h * h);
  EXPECT_DOUBLE_EQ(fp8_state_bytes(fp8_plan(Strategy::three_d, Fp8Recipe::te_current), layers),
                   layers * 4 * 5 * 4 * 2 + layers * 2 * 12 * h * h);
  // Under ZeRO-3 the FP8 copies live with the gathered chunk (held_bytes_per_gathered_param), not all step.
  EXPECT_DOUBLE_EQ(fp8_state_bytes(fp8_plan(Strategy::zeropp_b), layers), layers * 4 * 5 * 4 * (1024 + 2));
  EXPECT_EQ(fp8_state_bytes(fp8_plan(Strategy::zero3), layers), 0);  // torchao keeps nothing
  // The memory model adds it to the parameters held.
  Plan bf16 = fp8_plan(Strategy::three_d);
  bf16.parallel.fp8 = false;
  EXPECT_DOUBLE_EQ(memory_bytes(fp8_plan(Strategy::three_d)).params - memory_bytes(bf16).params,
                   fp8_state_bytes(fp8_plan(Strategy::three_d), layers));
}

// FSDP2's FP8 all-gather moves the linear weights at 1 byte: e (1 - f) + f per parameter, f = 12h^2 over the
// layer's parameters (weights, biases 9h, two LayerNorms 4h); TE's copies add 2f while gathered.
TEST(Fp8Cost, Fp8AllGatherBytes) {
  const double h = 1024;
  const double f = 12 * h * h / (12 * h * h + 9 * h + 4 * h);
  Plan plan = fp8_plan(Strategy::zero3);
  EXPECT_DOUBLE_EQ(gather_wire_bytes_per_param(plan, 2), 2);
  plan.parallel.fp8_all_gather = true;
  EXPECT_DOUBLE_EQ(gather_wire_bytes_per_param(plan, 2), 2 * (1 - f) + f);
  EXPECT_DOUBLE_EQ(held_bytes_per_gathered_param(plan, 2), 2 * (1 - f) + f);
  EXPECT_DOUBLE_EQ(held_bytes_per_gathered_param(fp8_plan(Strategy::zeropp_b), 2), 2 + 2 * f);
  // The ZeRO traffic of comm_volume follows: the gathers' share of zero bytes shrinks by that factor.
  Plan off = plan;
  off.parallel.fp8_all_gather = false;
  const double B = 4, rs = 4;  // fsdp2 reduces in fp32
  const double ratio = (2 * B * (2 * (1 - f) + f) + B * rs) / (2 * B * 2 + B * rs);
  EXPECT_NEAR(comm_bytes(plan).zero / comm_bytes(off).zero, ratio, 1e-12);
}

TEST(Fp8Cost, Refusals) {
  Plan plan = fp8_plan(Strategy::three_d);
  const ClusterSpec a100 = [] {
    ClusterSpec c = fp8_cluster();
    c.name = "a100";
    c.fp8_peak_flops = 0;
    return c;
  }();
  EXPECT_SPEC_ERROR(validate_fp8(plan.parallel, a100), "parallel.dtype",
                    "parallel.dtype=fp8 has no peak in cluster a100: cluster.peak_tflops.fp8 is not given (the GPU has "
                    "no FP8 tensor cores)");
  ClusterSpec no_rate = fp8_cluster();
  no_rate.gpu->fp8_matmul_efficiency = {};
  EXPECT_SPEC_ERROR(validate_fp8(plan.parallel, no_rate), "parallel.dtype",
                    "parallel.dtype=fp8 cannot be priced on cluster round: its gpu.fp8_matmul_efficiency (a published "
                    "FP8 GEMM rate) is not given");
  plan.parallel.fp8_recipe = Fp8Recipe::torchao_tensorwise;
  EXPECT_SPEC_ERROR(validate_fp8(plan.parallel, plan.cluster), "parallel.fp8_recipe",
                    "parallel.fp8_recipe=torchao_tensorwise cannot run with parallel.framework=megatron: torchao's "
                    "float8 training swaps torch.nn.Linear modules (torchtitan, FSDP2); framework megatron trains with "
                    "TransformerEngine layers (te_delayed or te_current)");
  ParallelSpec bf16 = plan.parallel;
  bf16.fp8 = false;
  EXPECT_SPEC_ERROR(validate_fp8(bf16, plan.cluster), "parallel.fp8_recipe",
                    "parallel.fp8_recipe=torchao_tensorwise needs parallel.dtype=fp8");
  Plan te = fp8_plan(Strategy::zero3, Fp8Recipe::te_delayed);
  te.parallel.fp8_all_gather = true;
  EXPECT_SPEC_ERROR(validate_fp8(te.parallel, te.cluster), "parallel.fp8_all_gather",
                    "parallel.fp8_all_gather needs fp8_recipe torchao_tensorwise (torchao's "
                    "enable_fsdp_float8_all_gather), not te_delayed");
  Plan megatron = fp8_plan(Strategy::three_d);
  megatron.parallel.fp8_all_gather = true;
  EXPECT_THROW(validate_fp8(megatron.parallel, megatron.cluster), SpecError);
  EXPECT_NO_THROW(validate_fp8(fp8_plan(Strategy::zero3).parallel, fp8_cluster()));
}

}  // namespace
}  // namespace zeropp::analytic
