// The attention kernel of a plan (spec/attention_kernel.hpp): each framework's default on each GPU, the refusals,
// the names; and the operation table's per-kernel figures (spec/gpu_ops.hpp) looked up against the papers' numbers
// as the profiles hold them, the log2 interpolation, the nearest head dimension and the causal backward rule.
#include "cost_model/spec/attention_kernel.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "cost_model/spec/error.hpp"
#include "cost_model/spec/names.hpp"
#include "tests/spec/expect_spec_error.hpp"

namespace zeropp {
namespace {

// A decoder with a fused attention kernel (no dropout) and one with Megatron's unfused core (GPT with dropout).
ModelSpec flash_model() {
  ModelSpec m = load_model("llama3-8b");
  EXPECT_EQ(m.attention_kind(), AttentionKind::flash);
  return m;
}
ModelSpec unfused_model() {
  ModelSpec m = load_model("gpt3-1.3b");
  EXPECT_EQ(m.attention_kind(), AttentionKind::unfused);
  return m;
}

const AttentionTable& table(const ClusterSpec& c, AttentionKernel k) { return c.gpu->attention.at(k); }

TEST(AttentionKernel, DefaultsFollowWhatEachFrameworkPicksOnEachGpu) {
  const ClusterSpec a100 = load_cluster("dgx-a100-80gb"), h100 = load_cluster("dgx-h100");
  const ClusterSpec b200 = load_cluster("dgx-b200");
  const ModelSpec m = flash_model();
  // TransformerEngine: cuDNN's FusedAttention from compute capability 9.0, FlashAttention-2 below.
  for (const Framework f : {Framework::megatron, Framework::deepspeed, Framework::zeropp}) {
    EXPECT_EQ(default_attention_kernel(f, m, h100), AttentionKernel::cudnn) << to_string(f);
    EXPECT_EQ(default_attention_kernel(f, m, b200), AttentionKernel::cudnn) << to_string(f);
    EXPECT_EQ(default_attention_kernel(f, m, a100), AttentionKernel::flash2) << to_string(f);
  }
  // PyTorch SDPA's flash backend (torchtitan) and llm-foundry's flash-attn 2: FlashAttention-2 everywhere.
  for (const Framework f : {Framework::fsdp1, Framework::fsdp2}) {
    EXPECT_EQ(default_attention_kernel(f, m, h100), AttentionKernel::flash2) << to_string(f);
    EXPECT_EQ(default_attention_kernel(f, m, a100), AttentionKernel::flash2) << to_string(f);
  }
  // A model whose attention is unfused runs unfused whatever the framework.
  EXPECT_EQ(default_attention_kernel(Framework::megatron, unfused_model(), h100), AttentionKernel::unfused);
  EXPECT_EQ(default_attention_kernel(Framework::fsdp2, unfused_model(), a100), AttentionKernel::unfused);
  // No compute capability stated: below 9.0.
  ClusterSpec bare = h100;
  bare.gpu->compute_capability = {};
  EXPECT_EQ(default_attention_kernel(Framework::megatron, m, bare), AttentionKernel::flash2);
  // A plan's own kernel wins over the default.
  Plan plan{m, h100, {}};
  plan.parallel.strategy = Strategy::three_d;
  EXPECT_EQ(attention_kernel_of(plan), AttentionKernel::cudnn);
  plan.parallel.attention_kernel = AttentionKernel::flash3;
  EXPECT_EQ(attention_kernel_of(plan), AttentionKernel::flash3);
}

TEST(AttentionKernel, RefusesWhatTheGpuCannotRunOrTheProfileHasNoFiguresFor) {
  const ClusterSpec a100 = load_cluster("dgx-a100-80gb"), h100 = load_cluster("dgx-h100");
  const ModelSpec m = flash_model();
  for (const AttentionKernel k : {AttentionKernel::flash2, AttentionKernel::flash3, AttentionKernel::cudnn})
    EXPECT_EQ(attention_kernel_unavailable(k, m, h100), "") << to_string(k);
  EXPECT_EQ(attention_kernel_unavailable(AttentionKernel::flash2, m, a100), "");
  EXPECT_EQ(attention_kernel_unavailable(AttentionKernel::flash3, m, a100),
            "FlashAttention-3 runs on Hopper only (compute capability 9.0), this GPU is 8");
  EXPECT_EQ(attention_kernel_unavailable(AttentionKernel::cudnn, m, a100),
            "the profile publishes no cudnn figures (gpu.attention lists flash2)");
  EXPECT_EQ(attention_kernel_unavailable(AttentionKernel::unfused, m, h100),
            "model llama3-8b runs attention flash (model.attention)");
  EXPECT_EQ(attention_kernel_unavailable(AttentionKernel::flash2, unfused_model(), h100),
            "model gpt3-1.3b runs attention unfused (model.attention)");
  EXPECT_EQ(attention_kernel_unavailable(AttentionKernel::unfused, unfused_model(), a100), "");
  ClusterSpec volta = h100;
  volta.gpu->compute_capability = {7.0, Provenance::nominal};
  EXPECT_EQ(attention_kernel_unavailable(AttentionKernel::cudnn, m, volta),
            "cudnn needs compute capability 8.0 or newer, this GPU is 7");
  // Blackwell has no FlashAttention-3 (and no table: the profile's scalar prices the other kernels).
  EXPECT_NE(attention_kernel_unavailable(AttentionKernel::flash3, m, load_cluster("dgx-b200")), "");
  EXPECT_EQ(attention_kernel_unavailable(AttentionKernel::flash2, m, load_cluster("dgx-b200")), "");
  // Through a plan: one line naming the field, the kernel and why.
  Plan plan{m, a100, {}};
  plan.parallel.strategy = Strategy::zero3;
  plan.parallel.schedule = ScheduleKind::one_f_one_b;
  plan.parallel.zero_stage = 3;
  plan.parallel.z = 8;
  plan.parallel.attention_kernel = AttentionKernel::flash3;
  EXPECT_SPEC_ERROR(validate(plan), "parallel.attention_kernel",
                    "parallel.attention_kernel=flash3 cannot run on cluster dgx-a100-80gb: FlashAttention-3 runs on "
                    "Hopper only (compute capability 9.0), this GPU is 8");
  EXPECT_SPEC_ERROR(attention_kernel_from_string("flash4", "parallel.attention_kernel"), "parallel.attention_kernel",
                    "parallel.attention_kernel=\"flash4\" must be one of flash2, flash3, cudnn, unfused");
}

TEST(AttentionKernel, NamesRoundTripThroughThePlanFile) {
  for (const AttentionKernel k :
       {AttentionKernel::flash2, AttentionKernel::flash3, AttentionKernel::cudnn, AttentionKernel::unfused})
    EXPECT_EQ(attention_kernel_from_string(to_string(k), "k"), k);
  ParallelSpec p;
  p.strategy = Strategy::zero3;
  p.schedule = ScheduleKind::one_f_one_b;
  p.zero_stage = 3;
  p.z = 8;
  EXPECT_FALSE(to_json(p).contains("attention_kernel"));  // absent stays absent: the default depends on the GPU
  p.attention_kernel = AttentionKernel::cudnn;
  EXPECT_EQ(to_json(p)["attention_kernel"], "cudnn");
  EXPECT_EQ(parallel_from_json(to_json(p), "parallel"), p);
}

// The H100 profile's published figures are the FlashAttention-3 paper's bars (Shah et al. 2024, Figs. 5-6, TFLOP/s),
// read back at the listed shapes exactly; the points measured on the H100 (causal, head dim 128, 2048 and 8192
// tokens, flash2 and cudnn) say so, and are checked against the measurement in tests/analytic/measured_h100_test.cpp.
TEST(AttentionTable, H100EntriesAreThePapersFigures) {
  const ClusterSpec h100 = load_cluster("dgx-h100");
  const AttentionTable& fa3 = table(h100, AttentionKernel::flash3);
  const AttentionTable& fa2 = table(h100, AttentionKernel::flash2);
  const AttentionTable& cudnn = table(h100, AttentionKernel::cudnn);
  EXPECT_EQ(fa3.provenance, Provenance::published);
  // Fig. 5, forward, head dim 128: with the causal mask and without.
  EXPECT_EQ(attention_tflops(fa3.forward, 128, 2048, true), 521);
  EXPECT_EQ(attention_tflops(fa3.forward, 128, 16384, false), 648);
  EXPECT_EQ(attention_tflops(fa2.forward, 128, 4096, true), 319);
  EXPECT_EQ(attention_tflops(cudnn.forward, 128, 16384, true), 539);
  for (const AttentionPoint& p : cudnn.forward)
    EXPECT_EQ(p.provenance, p.causal && p.head_dim == 128 && (p.seq_len == 2048 || p.seq_len == 8192)
                                ? Provenance::measured
                                : Provenance::published);
  EXPECT_EQ(attention_tflops(cudnn.forward, 64, 512, false), 335);
  EXPECT_EQ(attention_tflops(fa3.forward, 256, 16384, false), 756);
  // Fig. 6, backward without the mask, head dim 64 and 128.
  EXPECT_EQ(attention_tflops(fa3.backward, 128, 4096, false), 542);
  EXPECT_EQ(attention_tflops(cudnn.backward, 128, 2048, false), 465);
  EXPECT_EQ(attention_tflops(fa2.backward, 64, 16384, false), 291);
  // The A100's FlashAttention-2 figures: 230 TFLOP/s forward at 16k (Dao 2023), 50% of 312 at 512.
  const ClusterSpec a100_cluster = load_cluster("dgx-a100-80gb");
  const AttentionTable& a100 = table(a100_cluster, AttentionKernel::flash2);
  EXPECT_EQ(attention_tflops(a100.forward, 128, 16384, false), 230);
  EXPECT_EQ(attention_tflops(a100.forward, 128, 512, false), 156);
  // The H200 holds the H100 die's tables.
  EXPECT_EQ(load_cluster("dgx-h200").gpu->attention, h100.gpu->attention);
}

TEST(AttentionTable, InterpolatesInLog2OfTheLengthAtTheNearestHeadDim) {
  const ClusterSpec h100 = load_cluster("dgx-h100"), a100_cluster = load_cluster("dgx-a100-80gb");
  const AttentionTable& fa3 = table(h100, AttentionKernel::flash3);
  // 3072 lies log2(1.5) = 0.585 of the way from 2048 (521) to 4096 (579), causal head dim 128.
  const double x = std::log2(3072.0 / 2048);
  EXPECT_NEAR(attention_tflops(fa3.forward, 128, 3072, true), 521 + x * (579 - 521), 1e-9);
  // Clamped at the ends: below 512 the first figure, above 16k the last.
  EXPECT_EQ(attention_tflops(fa3.forward, 128, 128, true), 292);
  EXPECT_EQ(attention_tflops(fa3.forward, 128, 131072, true), 616);
  // Head dim 96 is nearer 128 than 64 in log2 (0.415 against 0.585); 80 nearer 64; a tie (90.5 = sqrt(64*128))
  // cannot be hit by an integer head dim, and 256 sits beyond the last.
  EXPECT_EQ(attention_tflops(fa3.forward, 96, 2048, true), 521);
  EXPECT_EQ(attention_tflops(fa3.forward, 80, 2048, true), 371);
  EXPECT_EQ(attention_tflops(fa3.forward, 512, 2048, true), 537);
  // Without causal points the other mask's serve (the A100 table lists none with the mask).
  const AttentionTable& a100 = table(a100_cluster, AttentionKernel::flash2);
  EXPECT_EQ(attention_tflops(a100.forward, 128, 16384, true), 230);
}

TEST(AttentionTable, CausalBackwardScalesTheUnmaskedOneByTheForwardsMaskCost) {
  const ClusterSpec h100 = load_cluster("dgx-h100");
  const AttentionTable& fa3 = table(h100, AttentionKernel::flash3);
  // Head dim 128, 2048 tokens: forward 521 causal, 625 without; backward 501 without (no causal figure published).
  const FlashEfficiency causal = attention_efficiency(fa3, 989, 128, 2048, true);
  EXPECT_NEAR(causal.forward, 521.0 / 989, 1e-12);
  EXPECT_NEAR(causal.backward, 501.0 * (521.0 / 625) / 989, 1e-12);
  const FlashEfficiency plain = attention_efficiency(fa3, 989, 128, 2048, false);
  EXPECT_NEAR(plain.forward, 625.0 / 989, 1e-12);
  EXPECT_NEAR(plain.backward, 501.0 / 989, 1e-12);
  // The A100 table has no causal points at all: nothing to scale by, the unmasked figures serve.
  const FlashEfficiency a100 =
      attention_efficiency(table(load_cluster("dgx-a100-80gb"), AttentionKernel::flash2), 312, 128, 512, true);
  EXPECT_NEAR(a100.forward, 156.0 / 312, 1e-12);
  EXPECT_NEAR(a100.backward, 156.0 / 312, 1e-12);
}

}  // namespace
}  // namespace zeropp
