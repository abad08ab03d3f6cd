// Time model: hand-derived action costs, bubbles and overlap rules (numbers written out, not recomputed with the
// library's own formulas).
#include "cost_model/analytic/time_model.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "cost_model/analytic/params.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/framework.hpp"
#include "estimate_fixtures.hpp"

namespace zeropp::analytic {
namespace {

using test::gpt;
using test::plan_of;
using test::round_cluster;

// h = 1024, a = 16, s = 1024, V = 8192, 4 layers: b s h = 1024^2 b.
ModelSpec small_gpt() { return gpt(4, 1024, 16, 1024, 8192); }

ParallelSpec single(int b) {
  ParallelSpec p;
  p.strategy = Strategy::three_d;
  p.schedule = ScheduleKind::one_f_one_b;
  p.micro_batch = b;
  p.micro_batches = 1;
  p.zero_stage = 0;
  return p;
}

TEST(GemmEfficiency, ScalarWithoutTable) {
  const ClusterSpec c = round_cluster();
  EXPECT_DOUBLE_EQ(gemm_efficiency(c, Dtype::bf16, 1e9), 0.5);
}

TEST(GemmEfficiency, TableInterpolatesInLogFlopsAndClamps) {
  ClusterSpec c = round_cluster();
  c.gemm_table[Dtype::bf16] = {{1e9, 0.5}, {1e12, 0.8}};
  EXPECT_DOUBLE_EQ(gemm_efficiency(c, Dtype::bf16, 1e8), 0.5);
  EXPECT_DOUBLE_EQ(gemm_efficiency(c, Dtype::bf16, 1e13), 0.8);
  // 10^10.5 is half way in log between 1e9 and 1e12.
  EXPECT_NEAR(gemm_efficiency(c, Dtype::bf16, std::pow(10.0, 10.5)), 0.65, 1e-12);
  EXPECT_NEAR(gemm_efficiency(c, Dtype::bf16, 1e10), 0.6, 1e-12);
  // Another dtype without a table falls back to the scalar.
  EXPECT_DOUBLE_EQ(gemm_efficiency(c, Dtype::fp16, 1e10), 0.5);
}

TEST(KernelBytes, HandCountedGptLayer) {
  const ModelSpec m = small_gpt();
  // b=1: b s h = 1,048,576. Replicated 22 bytes per element of bsh (two norms 2x4, two residual adds 2x(6+1)),
  // activation 16 (read + write 4h at 2 bytes), attention 13 bytes per score (a s^2 b = 16,777,216).
  EXPECT_DOUBLE_EQ(layer_forward_kernel_bytes(m, 1, 1, false, Dtype::bf16), 38.0 * 1048576 + 13.0 * 16777216);
  // tp = 2 without SP: replicated stays, the activation and the scores halve.
  EXPECT_DOUBLE_EQ(layer_forward_kernel_bytes(m, 1, 2, false, Dtype::bf16),
                   22.0 * 1048576 + 8.0 * 1048576 + 6.5 * 16777216);
  // With SP everything halves.
  EXPECT_DOUBLE_EQ(layer_forward_kernel_bytes(m, 1, 2, true, Dtype::bf16), 19.0 * 1048576 + 6.5 * 16777216);
  // Backward: norms 2 x 6, dropout-adds 2 x 5, gelu 3 x 2 x 4 = 24 per element of bsh; 19 bytes per score.
  EXPECT_DOUBLE_EQ(layer_backward_kernel_bytes(m, 1, 1, false, Dtype::bf16), 46.0 * 1048576 + 19.0 * 16777216);
}

TEST(KernelBytes, LlamaLayerHasNoDropout) {
  // swiglu, f = 2816 for h = 1024 (no dropout): forward norms 8 + adds 12 per element of bsh, activation 3 x 2 x f;
  // scores 4 x 2 = 8 bytes. Backward norms 12, no add kernels, activation 5 x 2 x f; scores 7 x 2 = 14.
  ModelSpec m = test::llama(4, 1024, 16, 16, 2816);
  m.seq_len = 1024;
  m.attention = AttentionKind::unfused;  // Llama's default is flash (next test)
  const double bsh = 1048576, scores = 16777216, bsf = 1024.0 * 2816;
  EXPECT_DOUBLE_EQ(layer_forward_kernel_bytes(m, 1, 1, false, Dtype::bf16), 20 * bsh + 6 * bsf + 8 * scores);
  EXPECT_DOUBLE_EQ(layer_backward_kernel_bytes(m, 1, 1, false, Dtype::bf16), 12 * bsh + 10 * bsf + 14 * scores);
}

TEST(KernelBytes, FlashKeepsTheScoresOnChip) {
  // The same Llama layer with flash (its default): the per-token kernels only, no s x s traffic.
  ModelSpec m = test::llama(4, 1024, 16, 16, 2816);
  m.seq_len = 1024;
  const double bsh = 1048576, bsf = 1024.0 * 2816;
  EXPECT_DOUBLE_EQ(layer_forward_kernel_bytes(m, 1, 1, false, Dtype::bf16), 20 * bsh + 6 * bsf);
  EXPECT_DOUBLE_EQ(layer_backward_kernel_bytes(m, 1, 1, false, Dtype::bf16), 12 * bsh + 10 * bsf);
}

TEST(ActionCosts, ComputeFromFlopsAndEfficiency) {
  const Plan plan = plan_of(small_gpt(), round_cluster(), single(2));
  const ActionCosts a = action_costs(plan);
  // b=2: weight matmuls 24 b s h^2 = 51,539,607,552 FLOPs, attention core 4 b s^2 h = 8,589,934,592 per layer;
  // 4 layers in the chunk, at 100e12 * 0.5 FLOP/s.
  const double weight = 51539607552.0, core = 8589934592.0, rate = 50e12;
  EXPECT_EQ(a.layers_per_chunk, 4);
  EXPECT_NEAR(a.f, 4 * (weight + core) / rate, 1e-15);
  EXPECT_NEAR(a.b, 4 * (weight + 2 * core) / rate, 1e-15);
  EXPECT_NEAR(a.w, 4 * weight / rate, 1e-15);
  EXPECT_EQ(a.recompute, 0);
  // LM head 2 b s h V = 34,359,738,368 FLOPs each for F, B and W.
  EXPECT_NEAR(a.head_f, 34359738368.0 / rate, 1e-15);
  EXPECT_NEAR(a.head_w, 34359738368.0 / rate, 1e-15);
  EXPECT_EQ(a.tp_f, 0);
  EXPECT_EQ(a.p2p, 0);
}

TEST(ActionCosts, MemoryBoundKernelsWhenHbmIsKnown) {
  ClusterSpec c = round_cluster();
  c.memory_bandwidth = 1e12;
  ParallelSpec p = single(1);
  p.recompute = Recompute::full;
  const ActionCosts a = action_costs(plan_of(small_gpt(), c, p));
  const double weight = 25769803776.0, core = 4294967296.0, rate = 50e12;  // b = 1
  const double fwd_kernels = (38.0 * 1048576 + 13.0 * 16777216) / 1e12;    // per layer
  const double bwd_kernels = (46.0 * 1048576 + 19.0 * 16777216) / 1e12;
  EXPECT_NEAR(a.f, 4 * ((weight + core) / rate + fwd_kernels), 1e-15);
  EXPECT_NEAR(a.b, 4 * ((weight + 2 * core) / rate + bwd_kernels), 1e-15);
  EXPECT_NEAR(a.w, 4 * weight / rate, 1e-15);
  EXPECT_NEAR(a.recompute, a.f, 1e-15);  // full recompute repeats the forward
  // Adam: 30 bytes per parameter (bf16, Megatron's fp32 gradients) of the optimizer shard; plain DP holds every
  // parameter.
  EXPECT_DOUBLE_EQ(adam_bytes_per_param(framework_precision(p)), 30);
}

// Flash attention at its own rate: Llama layer h = 1024, 16 heads (MHA), f = 2816, s = 1024, b = 1.
//   weight matmuls 2 b s (4h^2 + 3hf) = 2 * 1024 * 12,845,056 = 26,306,674,688 FLOPs per layer, at 50 TFLOP/s;
//   attention core 4 b s^2 h = 4,294,967,296, of which the causal kernel runs half, 2,147,483,648, forward at
//   0.8 x 100 TFLOP/s, and 2.5x that backward (it recomputes Q K^T) at 0.4 x 100 TFLOP/s. No HBM term.
TEST(ActionCosts, FlashAttentionAtItsOwnEfficiency) {
  ModelSpec m = test::llama(4, 1024, 16, 16, 2816);
  m.seq_len = 1024;
  ClusterSpec c = round_cluster();
  c.flash_attention_efficiency = {0.8, 0.4};
  ParallelSpec p = single(1);
  const double weight = 26306674688.0, flash = 2147483648.0;
  const ActionCosts a = action_costs(plan_of(m, c, p));
  EXPECT_NEAR(a.f, 4 * (weight / 50e12 + flash / 80e12), 1e-15);
  EXPECT_NEAR(a.b, 4 * (weight / 50e12 + 2.5 * flash / 40e12), 1e-15);
  EXPECT_NEAR(a.w, 4 * weight / 50e12, 1e-15);
  // Selective recomputation as each framework defines it (framework.hpp): Megatron reruns the attention kernel's
  // forward; torchtitan's op policy half the weight matmuls and the memory-bound kernels (none here: no HBM term),
  // not the attention kernel.
  p.recompute = Recompute::selective;
  const ActionCosts selective = action_costs(plan_of(m, c, p));
  EXPECT_NEAR(selective.recompute, 4 * flash / 80e12, 1e-15);
  EXPECT_EQ(selective.b, a.b);
  p.framework = Framework::fsdp2;
  EXPECT_NEAR(action_costs(plan_of(m, c, p)).recompute, 4 * 0.5 * weight / 50e12, 1e-15);
  p.framework.reset();
  p.recompute = Recompute::full;
  EXPECT_NEAR(action_costs(plan_of(m, c, p)).recompute, a.f, 1e-15);
  // Unfused, the same layer prices the core as two GEMMs at the GEMM efficiency over the full s x s (twice in
  // B), and selective recomputation reruns them.
  m.attention = AttentionKind::unfused;
  p.recompute = Recompute::selective;
  const ActionCosts unfused = action_costs(plan_of(m, c, p));
  EXPECT_NEAR(unfused.f, 4 * (weight + 2 * flash) / 50e12, 1e-15);
  EXPECT_NEAR(unfused.b, 4 * (weight + 4 * flash) / 50e12, 1e-15);
  EXPECT_NEAR(unfused.recompute, 4 * 2 * flash / 50e12, 1e-15);
}

TEST(ActionCosts, OptimizerStepIsTheGradientNormThenTheSlowerOfMemoryBoundAndTheCalibratedRate) {
  // One GPU holds all 4 (12 h^2 + 13 h) + V h + s h + 2 h = 59,824,128 parameters (h = 1024, V = 8192,
  // s = 1024, final layer norm 2h).
  const double psi = 4 * (12.0 * 1048576 + 13 * 1024) + 8192.0 * 1024 + 1024.0 * 1024 + 2 * 1024;
  ClusterSpec c = round_cluster();
  c.memory_bandwidth = 1e12;
  // Megatron reads its fp32 gradients once for the gradient norm before either (4 bytes per parameter), and then
  // zeroes its fp32 gradient buffer for the next iteration (zero_grad_buffer: 4 bytes per parameter,
  // grad_accumulation.hpp), after either.
  const double norm = 4 * psi / 1e12;
  const double reset = 4 * psi / 1e12;
  const ParallelSpec p = single(1);
  EXPECT_NEAR(action_costs(plan_of(small_gpt(), c, p)).opt_step, norm + 30 * psi / 1e12 + reset, 1e-12);
  c.optimizer_rate = 1e9;  // 1 ns per parameter: slower than 30 bytes at 1 TB/s (0.03 ns)
  EXPECT_NEAR(action_costs(plan_of(small_gpt(), c, p)).opt_step, norm + psi / 1e9 + reset, 1e-12);
  c.optimizer_rate = 1e15;  // faster than memory: the memory-bound time stands
  EXPECT_NEAR(action_costs(plan_of(small_gpt(), c, p)).opt_step, norm + 30 * psi / 1e12 + reset, 1e-12);
}

TEST(ActionCosts, TensorParallelAllReducesOnNvlink) {
  ParallelSpec p = single(2);
  p.tp = 2;
  p.recompute = Recompute::full;
  const ActionCosts a = action_costs(plan_of(small_gpt(), round_cluster(), p));
  // M = b s h * 2 bytes = 4,194,304; ring all-reduce over 2 GPUs: 2(n-1)(alpha + M/(n beta)).
  const double ar = 2 * 1 * (1e-6 + 4194304.0 / (2 * 100e9));
  EXPECT_NEAR(a.tp_f, 4 * 2 * ar, 1e-15);  // two per layer, 4 layers
  EXPECT_NEAR(a.tp_b, 4 * 2 * ar, 1e-15);
  EXPECT_NEAR(a.tp_recompute, 4 * 2 * ar, 1e-15);
  EXPECT_NEAR(a.head_tp_b, ar, 1e-15);
  EXPECT_NEAR(a.embed_tp_f, ar, 1e-15);
  // With SP: all-gather + reduce-scatter, each (n-1)(alpha + M/(n beta)): the same total in the ring model.
  p.sequence_parallel = true;
  const ActionCosts sp = action_costs(plan_of(small_gpt(), round_cluster(), p));
  EXPECT_NEAR(sp.tp_f, a.tp_f, 1e-15);
}

TEST(ActionCosts, PipelineP2pPicksTheLink) {
  ParallelSpec p = single(1);
  p.pp = 2;
  const ActionCosts inside = action_costs(plan_of(small_gpt(), round_cluster(), p));
  // b s h * 2 bytes = 2,097,152 over NVLink (both stages in one node).
  EXPECT_NEAR(inside.p2p, 1e-6 + 2097152.0 / 100e9, 1e-15);
  // ZeroPP with z = 8: the two stages sit on different nodes and talk over the network.
  p.strategy = Strategy::zeropp_b;
  p.schedule = ScheduleKind::zeropp;
  p.zero_stage = 1;
  p.z = 8;
  const ActionCosts across = action_costs(plan_of(small_gpt(), round_cluster(), p));
  EXPECT_NEAR(across.p2p, 10e-6 + 2097152.0 / 10e9, 1e-15);
  // One chunk = 2 layers of 12h^2 + 13h parameters, 2 bytes each, all-gathered over 8 GPUs in the node.
  const double chunk_bytes = 2.0 * 2 * (12.0 * 1024 * 1024 + 13 * 1024);
  EXPECT_NEAR(across.gather, 7 * (1e-6 + chunk_bytes / (8 * 100e9)), 1e-15);
  EXPECT_NEAR(across.reduce_scatter, across.gather, 1e-15);
}

TEST(Bubble, ClosedFormsPerSchedule) {
  // p = 4, v = 2, B = 8, F = 1, B = 2, W = 1 (per micro-batch per rank).
  EXPECT_DOUBLE_EQ(bubble_time(ScheduleKind::gpipe, 4, 1, 8, 1, 1, 2, 1), 12);
  EXPECT_DOUBLE_EQ(bubble_time(ScheduleKind::one_f_one_b, 4, 1, 8, 1, 1, 2, 1), 12);
  EXPECT_DOUBLE_EQ(bubble_time(ScheduleKind::interleaved, 4, 2, 8, 1, 1, 2, 1), 6);
  EXPECT_DOUBLE_EQ(bubble_time(ScheduleKind::zb_h1, 4, 1, 8, 1, 1, 2, 1), 6);
  EXPECT_DOUBLE_EQ(bubble_time(ScheduleKind::zb_h2, 4, 1, 8, 1, 1, 2, 1), 3);
  EXPECT_DOUBLE_EQ(bubble_time(ScheduleKind::zb_h2, 4, 1, 8, 1, 1, 1, 1), 0);  // clamped at 0
  // ZeroPP: ceil(8/4) = 2 units, each (p-1)(F+B-W)/v = 3*2/2.
  EXPECT_DOUBLE_EQ(bubble_time(ScheduleKind::zeropp, 4, 2, 8, 4, 1, 2, 1), 6);
  EXPECT_DOUBLE_EQ(bubble_time(ScheduleKind::zeropp, 4, 2, 8, 3, 1, 2, 1), 9);  // ragged: 3 units
  EXPECT_DOUBLE_EQ(bubble_time(ScheduleKind::one_f_one_b, 1, 1, 8, 1, 1, 2, 1), 0);
}

// A 2-layer model of about 26M parameters fits in one Megatron bucket (at least 40M parameters): the sync starts
// when the backward is over.
TEST(ClosedForm, DataParallelSyncInOneBucketFollowsTheBackward) {
  ParallelSpec p = single(1);
  p.dp = 2;
  p.micro_batches = 3;
  const Plan plan = plan_of(gpt(2, 1024, 16, 1024, 1024), round_cluster(), p);
  ASSERT_EQ(dp_sync_buckets(p, 0, static_cast<double>(virtual_stage_params(plan.model, 1, 1, 0).total()), 2), 1);
  ActionCosts a;
  a.f = 1;
  a.b = 2;
  a.w = 1;
  a.dp_sync = 5;
  a.dp_after_step = 0.5;
  a.embedding_sync = 0.25;
  const PipelineTiming t = closed_form_timing(plan, a);
  EXPECT_DOUBLE_EQ(t.compute, 12);       // 3 micro-batches x (1 + 2 + 1)
  EXPECT_DOUBLE_EQ(t.dp_exposed, 5.75);  // all of the sync, + 0.5 + 0.25 exposed
  EXPECT_DOUBLE_EQ(t.bubble, 0);
  EXPECT_DOUBLE_EQ(t.iteration, 17.75);
  Plan no_overlap = plan;
  no_overlap.parallel.overlap_grad_reduce = false;
  EXPECT_DOUBLE_EQ(closed_form_timing(no_overlap, a).dp_exposed, 5.75);
}

// A stage of many buckets: all but the first bucket's share of the last backward hides the sync, and the last
// bucket always follows it: exposed = max(sync / n, sync - (b + w) (1 - 1/n)).
TEST(ClosedForm, DataParallelSyncInBucketsOverlapsTheLastBackward) {
  ParallelSpec p = single(1);
  p.dp = 2;
  p.micro_batches = 3;
  const Plan plan = plan_of(gpt(8, 4096, 32, 1024, 8192), round_cluster(), p);  // about 1.6 B parameters
  const double n =
      dp_sync_buckets(p, 0, static_cast<double>(virtual_stage_params(plan.model, 1, 1, 0).total()), 8);
  ASSERT_GT(n, 30);  // 40M-parameter buckets
  ActionCosts a;
  a.f = 1;
  a.b = 2;
  a.w = 1;
  a.dp_sync = 5;
  a.layers_per_chunk = 8;
  EXPECT_DOUBLE_EQ(closed_form_timing(plan, a).dp_exposed, 5 - 3 * (1 - 1 / n));
  a.dp_sync = 2;  // fits in the window: only the last bucket shows
  EXPECT_DOUBLE_EQ(closed_form_timing(plan, a).dp_exposed, 2 / n);
  Plan no_overlap = plan;
  no_overlap.parallel.overlap_grad_reduce = false;
  EXPECT_DOUBLE_EQ(closed_form_timing(no_overlap, a).dp_exposed, 2);
}

TEST(ClosedForm, ZeroPPGathersPrefetchedExceptTheFirst) {
  ParallelSpec p;
  p.strategy = Strategy::zeropp_b;
  p.schedule = ScheduleKind::zeropp;
  p.zero_stage = 1;
  p.z = 8;
  p.pp = 2;
  p.micro_batches = 4;
  p.unit = 2;
  const Plan plan = plan_of(small_gpt(), round_cluster(), p);
  ActionCosts a;
  a.f = 1;
  a.b = 1;
  a.w = 1;
  a.gather = 3;
  a.reduce_scatter = 1;
  const PipelineTiming t = closed_form_timing(plan, a);
  // 2 units x 1 chunk = 2 forward and 2 backward phases of U = 2 micro-batches. The first gather (3) and the
  // last reduce-scatter (1) are exposed; the second forward phase's gather exceeds the window 2 x 1 by 1; the
  // backward phases hide gather + reduce-scatter (4) behind 2 x (1 + 1).
  EXPECT_DOUBLE_EQ(t.zero_exposed, 5);
  EXPECT_DOUBLE_EQ(t.bubble, 2);  // 2 units x (p-1)(F+B-W)/v = 2 x 1
  EXPECT_DOUBLE_EQ(t.compute, 12);
  EXPECT_DOUBLE_EQ(t.iteration, 19);
  // Per-W reduction: U reduce-scatters share each backward window: 3 + 2 x 1 - 4 = 1 more per phase.
  Plan per_w = plan;
  per_w.parallel.grad_reduce = GradReduce::per_w;
  EXPECT_DOUBLE_EQ(closed_form_timing(per_w, a).zero_exposed, 7);
}

TEST(ClosedForm, SlowestRankCarriesTheHead) {
  ParallelSpec p = single(1);
  p.pp = 4;
  p.micro_batches = 8;
  const Plan plan = plan_of(small_gpt(), round_cluster(), p);
  ActionCosts a;
  a.f = 1;
  a.b = 1;
  a.w = 1;
  a.head_f = 0.5;
  const PipelineTiming t = closed_form_timing(plan, a);
  EXPECT_DOUBLE_EQ(t.compute, 8 * 3.5);
  EXPECT_DOUBLE_EQ(t.bubble, 3 * 3);  // middle ranks' F+B+W
}

}  // namespace
}  // namespace zeropp::analytic

namespace zeropp::analytic {
namespace {

// Megatron's --overlap-param-gather: the all-gather after the dp-sharded step runs under the next iteration's
// first forward through the rank's chunks (v chunks of f + tp_f each).
TEST(ActionCosts, OverlapParamGatherHidesUnderTheFirstForward) {
  ParallelSpec p = single(1);
  p.zero_stage = 1;
  p.dp = 4;
  p.micro_batches = 4;
  Plan plan = plan_of(small_gpt(), test::round_cluster(), p);
  const ActionCosts plain = action_costs(plan);
  ASSERT_GT(plain.dp_after_step, 0);
  plan.parallel.overlap_param_gather = true;
  const ActionCosts hidden = action_costs(plan);
  EXPECT_DOUBLE_EQ(hidden.dp_after_step, std::max(0.0, plain.dp_after_step - (plain.f + plain.tp_f)));
  EXPECT_LT(hidden.dp_after_step, plain.dp_after_step);
}

// Both flags are refused where Megatron refuses them: TP overlap without SP, param-gather overlap without a
// distributed optimizer.
TEST(ParallelFlags, OverlapsNeedWhatMegatronNeeds) {
  ParallelSpec p = single(1);
  p.tp = 2;
  p.tp_comm_overlap = TpCommOverlap::userbuffers;
  EXPECT_THROW(validate(p), SpecError);
  p.sequence_parallel = true;
  EXPECT_NO_THROW(validate(p));
  p.overlap_param_gather = true;  // zero_stage 0
  EXPECT_THROW(validate(p), SpecError);
  p.zero_stage = 1;
  EXPECT_NO_THROW(validate(p));
}

}  // namespace
}  // namespace zeropp::analytic
