#pragma once
// Matmul FLOPs of a transformer, split into forward (F), input-gradient backward (B) and weight-gradient
// backward (W). A multiply-add counts 2. Counts are for one micro-batch of b sequences, all tensor-parallel
// ranks together (divide by tp for one GPU).
//
// Per layer forward, q = kv_heads*head_dim, f = ffn hidden, n_up = 1 (gelu) or 2 (swiglu, gate + up):
//   weight matmuls  2bs*h*(h + 2q)  QKV
//                 + 2bs*h*h         output projection
//                 + 2bs*h*f*n_up    up (+ gate)
//                 + 2bs*f*h         down              = 24bsh^2 for MHA, gelu, f = 4h
//   attention core  2bs^2*h (Q K^T) + 2bs^2*h (scores x V) = 4bs^2h over the full s x s
// B repeats every weight matmul once (input gradient) and every attention-core matmul twice (both operands
// are activations): B = 24bsh^2 + 8bs^2h. W repeats every weight matmul once: W = 24bsh^2. F + B + W = 3F.
//
// THE FLOP CONVENTION (one for every table, JSON and report of this project):
//   - MFU counts model FLOPs, no recomputation, with the attention core as a causal decoder needs it: half of
//     the s x s products (AttentionCount::causal; every model here is a causal decoder). That is what the
//     kernels must execute at least, so MFU can never exceed the efficiency of the operations that run
//     (tests/analytic/flop_convention_test.cpp). `mfu_full_attention` beside it counts the full s x s, as PaLM
//     (Chowdhery et al. 2022, appendix B: 6N + 12LHQT per token), Megatron-LM (training.py,
//     num_floating_point_operations), torchtitan and llm-foundry count; published MFUs use that count, and the
//     two differ by the attention share, (s / 6h) / (1 + s / 6h) for GPT-3-like layers without the LM head.
//   - TFLOP/s per GPU counts what the kernels execute (executed_flops_per_iteration): the weight matmuls; the
//     attention core as its kernel runs it (unfused, Megatron-LM 2021-2022: two batched GEMMs over the full
//     s x s, twice each in B; FlashAttention: the causal half, and 2.5x the forward in B because it recomputes
//     S = Q K^T, Dao 2023 section 4.1); the LM head; and the recomputation the schedule runs (RECOMPUTE actions).
//   - Validation sets keep the count their source used (search/validation.hpp, PublishedFlops).
#include <array>

#include "cost_model/spec/config.hpp"
#include "cost_model/spec/model_spec.hpp"
#include "cost_model/spec/parallel_spec.hpp"

namespace zeropp::analytic {

struct PassFlops {
  double f = 0;  // forward
  double b = 0;  // backward, input gradient
  double w = 0;  // backward, weight gradient
  double total() const { return f + b + w; }
};

// The convention above in one paragraph, printed under every table that shows TFLOP/s per GPU or MFU.
inline constexpr const char* kFlopConventionNote =
    "TFLOP/s per GPU counts the FLOPs the kernels execute (recomputation included; FlashAttention: the causal "
    "half of s x s, its backward 2.5x its forward). MFU counts model FLOPs without recomputation, attention as a "
    "causal decoder needs it (half of s x s); MFU full counts the full s x s, as PaLM, Megatron-LM and torchtitan "
    "publish MFU.";

// Which attention-core products a count includes: the full s x s (PaLM, Megatron-LM, torchtitan count so) or the
// causal half (what a causal decoder needs and FlashAttention's causal kernel runs).
enum class AttentionCount { full, causal };

// The share of the s x s score products a causal mask keeps, as FlashAttention's authors count it (Dao 2023,
// Shah et al. 2024 section 4.1, and flops() in flash-attention's benchmarks/benchmark_flash_attention.py: the
// causal count is half the full one; the diagonal blocks it also computes are not counted).
inline constexpr double kCausalAttentionFraction = 0.5;
// FlashAttention's backward runs 5 matmuls to the forward's 2: it recomputes S = Q K^T from Q, K and the stored
// log-sum-exp (Dao 2023, section 4.1: backward FLOPs = 2.5x forward).
inline constexpr double kFlashBackwardFactor = 2.5;

// Forward FLOPs of the layer's weight matmuls (the 24bsh^2 part) and of its attention core (4bs^2h, or the causal
// half).
double layer_weight_matmul_flops(const ModelSpec& model, int b);
double layer_attention_core_flops(const ModelSpec& model, int b, AttentionCount count = AttentionCount::full);

// One transformer layer, one micro-batch of b sequences (model FLOPs: B counts each attention matmul twice).
PassFlops layer_flops(const ModelSpec& model, int b, AttentionCount count = AttentionCount::full);
// The same layer as its kernels execute it: the attention core full and twice in B when unfused, the causal half
// and 2.5x in B with FlashAttention (model.attention_kind()).
PassFlops layer_executed_flops(const ModelSpec& model, int b);

// LM head (logits = hidden x V): forward 2bshV; backward 4bshV split equally into B (2bshV) and W (2bshV).
// Tied or not, the matmul is the same. The embedding lookup has no matmul FLOPs.
PassFlops lm_head_flops(const ModelSpec& model, int b);

// Extra forward FLOPs per layer per micro-batch that recomputation adds before the backward, in the model count
// (full attention): none 0; selective (core attention only, Korthikanti et al. 2022) 4bs^2h with unfused
// attention and 0 with flash (its backward already rebuilds the core; it stores nothing selective could drop);
// full: the whole layer forward.
double recompute_flops_per_layer(const ModelSpec& model, int b, Recompute recompute);
// The same recomputation as the kernels execute it, for the plan's framework (selective: what the framework reruns,
// spec/framework.hpp selective_recompute, the attention core as it runs; full: the layer's executed forward).
double recompute_executed_flops_per_layer(const ModelSpec& model, int b, Recompute recompute, Framework framework);

// Model FLOPs of one iteration over `sequences` sequences (the global batch): L layers F+B+W plus the LM
// head, no recomputation. With AttentionCount::causal this is the numerator of MFU; with full, of
// mfu_full_attention (the published convention).
double model_flops_per_iteration(const ModelSpec& model, long long sequences,
                                 AttentionCount count = AttentionCount::full);
// Model FLOPs (full attention) plus the recomputation, in the same count (Narayanan et al.'s hardware FLOPs).
double hardware_flops_per_iteration(const ModelSpec& model, long long sequences, Recompute recompute);
// What a plan's kernels execute in one iteration (the numerator of TFLOP/s per GPU): every layer's executed F, B
// and W, the LM head, plus the recomputation of the stages that recompute (all of them, except the last virtual
// stage in the ZeroPP schedule: spec/strategy.hpp, recomputes_last_stage).
double executed_flops_per_iteration(const Plan& plan);

// Narayanan et al. 2021 (Megatron-LM, SC'21), eq. (3): 96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h)) for a global
// batch of B sequences. It assumes MHA, gelu, f = 4h and counts full recomputation (4 forward-equivalents per
// layer, 3 for the LM head). Used to reproduce their "TFLOP/s per GPU" in validation.
double narayanan_flops_per_iteration(const ModelSpec& model, long long global_batch);

// The forward GEMMs of one layer on one tensor-parallel rank, for shape-dependent efficiency lookups
// (ClusterSpec::gemm_table is keyed by the FLOPs of one GEMM, 2*m*n*k). `count` identical GEMMs run per
// micro-batch (batched attention: b*heads/tp). Backward runs each weight GEMM twice (B and W) and each
// attention GEMM twice (both in B), with the same FLOPs per GEMM.
struct Gemm {
  double m = 0, n = 0, k = 0;
  double count = 1;
  // Bytes the epilogue moves per output element: 0 for a fresh store of the GEMM's output dtype (every GEMM but a
  // weight gradient accumulated in place: wgrad_gemm). Read where a GEMM is priced by its traffic (op_time.hpp).
  double store_bytes = 0;
  double flops_each() const { return 2.0 * m * n * k; }
  double flops() const { return flops_each() * count; }
};
// The backward GEMMs of a weight GEMM g = X W (X: m x k activations, W: k x n): the input gradient dX = dY W^T
// (m x k, deep n) and the weight gradient dW = X^T dY (k x n, deep m, the tokens), whose epilogue moves
// `store_bytes` per element of dW (0: a fresh store; grad_accumulation.hpp says what each framework's moves).
inline Gemm dgrad_gemm(const Gemm& g) { return Gemm{g.m, g.k, g.n, g.count}; }
inline Gemm wgrad_gemm(const Gemm& g, double store_bytes = 0) { return Gemm{g.k, g.n, g.m, g.count, store_bytes}; }
struct LayerGemms {
  // qkv, attention scores (Q K^T), attention x V, output projection, up (+ gate for swiglu: count 2), down.
  enum Index { qkv = 0, scores = 1, context = 2, proj = 3, up = 4, down = 5 };
  std::array<Gemm, 6> gemm{};
  double weight_flops() const;     // qkv + proj + up + down
  double attention_flops() const;  // scores + context
};
LayerGemms layer_gemms(const ModelSpec& model, int b, int tp = 1);

}  // namespace zeropp::analytic
