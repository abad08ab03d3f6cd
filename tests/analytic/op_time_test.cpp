// Operations priced from the GPU's operation table (op_time.hpp): tile and wave quantization with split-K, the HBM
// roofline, attention by sequence length; and H100 against H200, which differ only where their specs do.
#include "cost_model/analytic/op_time.hpp"

#include <gtest/gtest.h>

#include "cost_model/analytic/estimate.hpp"
#include "cost_model/analytic/time_model.hpp"
#include "cost_model/spec/error.hpp"
#include "estimate_fixtures.hpp"

namespace zeropp::analytic {
namespace {

// 100 TFLOP/s, 100 SMs, tiles of 256 x 128, MAMF 0.8 of peak, HBM 1 TB/s at 90%.
ClusterSpec table_cluster() {
  ClusterSpec c = test::round_cluster();
  c.memory_bandwidth = 1e12;
  c.gpu = GpuOps{};
  c.gpu->sm_count = {100, Provenance::nominal};
  c.gpu->matmul_efficiency = {0.8, Provenance::published};
  c.gpu->gemm_tile_rows = {256, Provenance::nominal};
  c.gpu->gemm_tile_cols = {128, Provenance::nominal};
  c.gpu->hbm_efficiency = {0.9, Provenance::published};
  return c;
}

TEST(OpTime, TileAndWaveQuantizationWithSplitK) {
  const ClusterSpec c = table_cluster();
  // 1024 x 1024 output: 4 x 8 = 32 tiles either way round, no tile padding; 32 tiles fill a third of 100 SMs, so
  // k = 4096 is split: 3 slices make 96 blocks, one wave of 100 (6 and 12 slices the same 96%).
  EXPECT_DOUBLE_EQ(gemm_utilization(c, 1024, 1024, 4096, 1), 0.96);
  // 1000 x 1000, k = 100 (too shallow to split): 4 x 8 = 32 tiles of 256 x 128 padded from 1000 x 1000, one wave of
  // 32 on 100 SMs: 1e6 / (1024 x 1024) x 0.32.
  EXPECT_NEAR(gemm_utilization(c, 1000, 1000, 100, 1), 1e6 / (1024.0 * 1024) * 0.32, 1e-12);
  // 4096 x 4096: 16 x 32 = 512 tiles, 6 waves of 100: 512 / 600.
  EXPECT_NEAR(gemm_utilization(c, 4096, 4096, 64, 1), 512.0 / 600, 1e-12);
  // No tiles in the table: no quantization.
  ClusterSpec bare = c;
  bare.gpu->gemm_tile_rows = bare.gpu->gemm_tile_cols = {};
  EXPECT_EQ(gemm_utilization(bare, 1000, 1000, 100, 1), 1);
}

TEST(OpTime, GemmTimeIsTheSlowerOfComputeAndMemory) {
  const ClusterSpec c = table_cluster();
  // 1024 x 1024 x 4096 bf16: compute 2 * 1024^2 * 4096 / (100e12 * 0.8 * 0.96); memory 2 (1024*4096 * 2 + 1024^2)
  // bytes at 0.9 TB/s is smaller: compute-bound.
  EXPECT_NEAR(gemm_time(c, Dtype::bf16, Gemm{1024, 1024, 4096, 1}), 2.0 * 1024 * 1024 * 4096 / (100e12 * 0.8 * 0.96),
              1e-15);
  // 4096 x 4096 x 64: compute 2 * 4096^2 * 64 / (80e12 * 512/600) = 31.5 us; memory 2 (4096*64 * 2 + 4096^2) bytes /
  // 0.9e12 = 38.4 us: memory-bound.
  EXPECT_NEAR(gemm_time(c, Dtype::bf16, Gemm{4096, 4096, 64, 1}), 2.0 * (4096.0 * 64 * 2 + 4096.0 * 4096) / 0.9e12,
              1e-15);
  EXPECT_NEAR(memory_time(c, 9e9), 0.01, 1e-15);
  // The epilogue's store exposed (gpu.gemm_epilogue_exposed 1): the larger of compute and the operand reads, plus
  // the whole output store. 4096 x 4096 x 64: max(31.5 us, 2 (4096*64 * 2) / 0.9e12 = 1.2 us) + 2 * 4096^2 / 0.9e12
  // = 37.3 us; 1024 x 1024 x 4096: its compute plus 2 * 1024^2 / 0.9e12. Half exposed: the other half of the store
  // joins the reads inside the max (1.2 + 18.6 us, below the 31.5 us compute), so compute + half the store.
  ClusterSpec epilogue = c;
  epilogue.gpu->gemm_epilogue_exposed = {1, Provenance::measured};
  const double store4096 = 2.0 * 4096 * 4096 / 0.9e12, reads4096 = 2.0 * 4096 * 64 * 2 / 0.9e12;
  EXPECT_NEAR(gemm_time(epilogue, Dtype::bf16, Gemm{4096, 4096, 64, 1}),
              2.0 * 4096 * 4096 * 64 / (80e12 * 512.0 / 600) + store4096, 1e-15);
  EXPECT_NEAR(gemm_time(epilogue, Dtype::bf16, Gemm{1024, 1024, 4096, 1}),
              2.0 * 1024 * 1024 * 4096 / (100e12 * 0.8 * 0.96) + 2.0 * 1024 * 1024 / 0.9e12, 1e-15);
  epilogue.gpu->gemm_epilogue_exposed = {0.5, Provenance::measured};
  ASSERT_LT(reads4096 + store4096 / 2, 2.0 * 4096 * 4096 * 64 / (80e12 * 512.0 / 600));
  EXPECT_NEAR(gemm_time(epilogue, Dtype::bf16, Gemm{4096, 4096, 64, 1}),
              2.0 * 4096 * 4096 * 64 / (80e12 * 512.0 / 600) + store4096 / 2, 1e-15);
  // A calibrated table for the dtype (measured on the machine) takes precedence over the operation table.
  ClusterSpec measured = c;
  measured.gemm_table[Dtype::bf16] = {{1, 0.5}};
  EXPECT_NEAR(gemm_time(measured, Dtype::bf16, Gemm{1024, 1024, 4096, 1}), 2.0 * 1024 * 1024 * 4096 / 50e12, 1e-15);
}

TEST(OpTime, AttentionRateBySequenceLengthAndKernel) {
  ClusterSpec c = table_cluster();                                // bf16 peak 100 TFLOP/s
  ModelSpec m = test::gpt(4, 1024, 8, 2048, 1000);                // head dim 128
  EXPECT_EQ(attention_rate(c, m, AttentionKernel::flash2), c.flash_attention_efficiency);  // no figures: the scalars
  EXPECT_EQ(attention_rate(c, m, AttentionKernel::cudnn), c.flash_attention_efficiency);
  c.gpu->attention[AttentionKernel::flash2] = {Provenance::published,
                                               {{128, 1024, true, 50}, {128, 16384, true, 70}},
                                               {{128, 1024, true, 40}, {128, 16384, true, 60}}};
  // 2048 is a quarter of the way from 1024 to 16384 in log2, causal (every model here is a decoder).
  EXPECT_NEAR(attention_rate(c, m, AttentionKernel::flash2).forward, 0.55, 1e-12);
  EXPECT_NEAR(attention_rate(c, m, AttentionKernel::flash2).backward, 0.45, 1e-12);
  // A kernel the table lacks is not priced from a guess.
  EXPECT_THROW(attention_rate(c, m, AttentionKernel::flash3), SpecError);
}

// Unfused attention on a profile with an operation table: the score GEMMs are priced by their roofline, which
// already reads their operands and writes their outputs, so the s x s traffic beside them is the softmax's and the
// dropout's alone. GPT layer h = 1024, 16 heads, s = 1024, b = 1, tp = 1 (bsh = 2^20 elements, scores 16 x 2^20):
//   forward   per token 38 bytes per element of h (norms 2 x 4, dropout-adds 2 x 7, gelu 16); per score softmax
//             read + write 4, dropout read + write + mask 5: 9 bytes (not 13: the QK^T write and the context
//             GEMM's read of the probabilities are the GEMMs' own);
//   backward  per token 46; per score dropout backward 5, softmax backward 6: 11 bytes (not 19: the dP write and
//             the three GEMM reads of dS and P are the GEMMs').
TEST(OpTime, UnfusedScoreTrafficCountedOnceBesideTheGemmRoofline) {
  const ClusterSpec c = table_cluster();
  ModelSpec m = test::gpt(4, 1024, 16, 1024, 8192);
  ParallelSpec p;
  p.strategy = Strategy::three_d;
  p.schedule = ScheduleKind::one_f_one_b;
  p.micro_batch = 1;
  p.micro_batches = 1;
  p.zero_stage = 0;
  p.kernel_efficiency = 1.0;  // the table's rates as they are
  const ActionCosts a = action_costs(test::plan_of(m, c, p));
  const LayerGemms g = layer_gemms(m, 1, 1);
  double fwd_gemms = gemm_time(c, Dtype::bf16, g.gemm[LayerGemms::scores]) +
                     gemm_time(c, Dtype::bf16, g.gemm[LayerGemms::context]);
  double dgrad_gemms = 2 * fwd_gemms;
  for (int i : {LayerGemms::qkv, LayerGemms::proj, LayerGemms::up, LayerGemms::down}) {
    const Gemm& x = g.gemm[i];
    fwd_gemms += gemm_time(c, Dtype::bf16, x);
    dgrad_gemms += gemm_time(c, Dtype::bf16, Gemm{x.m, x.k, x.n, x.count});
  }
  const double bsh = 1048576, scores = 16 * 1048576.0, hbm = 0.9e12;
  EXPECT_NEAR(a.f, 4 * (fwd_gemms + (38 * bsh + 9 * scores) / hbm), 1e-12 * a.f);
  EXPECT_NEAR(a.b, 4 * (dgrad_gemms + (46 * bsh + 11 * scores) / hbm), 1e-12 * a.b);
  // Without the table the GEMMs are a rate per FLOP, and the score kernels keep the GEMMs' traffic (13 and 19).
  ClusterSpec scalar = c;
  scalar.gpu.reset();
  const ActionCosts s = action_costs(test::plan_of(m, scalar, p));
  const double flops_fwd = g.weight_flops() + g.attention_flops();
  EXPECT_NEAR(s.f, 4 * (flops_fwd / 50e12 + (38 * bsh + 13 * scores) / 1e12), 1e-12 * s.f);
}

// The same plan on H100 and H200: the profiles' operation tables and links are the same (the H200 is the H100's die,
// "H200 is the same" in the MAMF table) and differ in HBM capacity, HBM bandwidth and the listed power limit. An
// H100 given the H200's HBM is priced exactly as the H200: nothing else tells them apart. (Before issue 19 the H100
// carried a fitted gemm_efficiency 0.578 and the H200 the 0.75 default: 1.22x for no physical reason.)
TEST(OpTime, H100AndH200DifferOnlyThroughTheirSpecs) {
  const ClusterSpec h100 = load_cluster("dgx-h100");
  const ClusterSpec h200 = load_cluster("dgx-h200");
  ClusterSpec like_h200 = h100;
  like_h200.name = h200.name;
  like_h200.memory_bytes = h200.memory_bytes;
  like_h200.memory_bandwidth = h200.memory_bandwidth;
  like_h200.gpu->power_limit_w = h200.gpu->power_limit_w;
  like_h200.provenance = h200.provenance;
  EXPECT_EQ(like_h200, h200) << "the H200 profile differs from the H100's in more than its HBM";

  ParallelSpec p;
  p.strategy = Strategy::three_d;
  p.tp = 8;
  p.pp = 2;
  p.dp = 4;
  p.v = 2;
  p.schedule = ScheduleKind::interleaved;
  p.micro_batch = 1;
  p.micro_batches = 16;
  p.sequence_parallel = true;
  p.tp_comm_overlap = TpCommOverlap::userbuffers;
  const ModelSpec model = load_model("llama2-70b");
  const double t100 = estimate(Plan{model, h100, p}).time_s.iteration;
  const double t200 = estimate(Plan{model, h200, p}).time_s.iteration;
  EXPECT_EQ(estimate(Plan{model, like_h200, p}).time_s.iteration, t200);
  // Only the memory-bound kernels gain from 4.8 against 3.35 TB/s: a few percent, not 1.22x.
  EXPECT_LT(t200, t100);
  EXPECT_GT(t200, 0.9 * t100);
}

}  // namespace
}  // namespace zeropp::analytic
