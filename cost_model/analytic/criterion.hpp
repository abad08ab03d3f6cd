#pragma once
// When does ZeroPP move fewer bytes than tensor parallelism? (ZeroPP paper, section 3; DESIGN.md section 4;
// the derivation step by step: docs/criterion.md.)
//
// Per transformer layer, per GPU, per micro-batch, in elements (16-bit: 2 bytes), ring factors omitted as in
// the paper. P = the layer's own parameter count (analytic/params.hpp: 2h^2 + 2hq attention with q = kv_heads *
// head_dim, 2hf (GELU) or 3hf (SwiGLU) MLP, biases and norms; the paper's GPT layer 12h^2):
//   ZeroPP gathers the layer's P parameters for forward and for backward and reduce-scatters their gradients
//   once per scheduling unit of U micro-batches:                     3 P / U   elements per micro-batch;
//   Megatron TP all-reduces the layer's b*s*h output twice forward (after attention, after the MLP) and twice
//   backward, each all-reduce moving 2x its buffer:                  8 s b h   elements per micro-batch
//   (the all-reduced tensors are h wide whatever the layer's inside: GQA and SwiGLU change P, not this).
//   ZeroPP moves less  <=>  3 P / U < 8 s b h  <=>  2 s U b > 3 P / (4 h)   (strict);
//   with the paper's P = 12 h^2 this is 72 h^2 / U < 16 s b h (bytes)  <=>  2 s U b > 9 h.
//   Llama-3 layers (GQA, SwiGLU with f = 3.5h, no biases): 70B P = 12.75 h^2 + 2h, 8B P = 13 h^2 + 2h, so their
//   boundaries lie at 9.56 h and 9.75 h.
// The authors' code reduce-scatters inside every W task instead: 2 P / U + P per micro-batch.
//
// Time-based answer (needs a cluster): the same GPUs (a node of g GPUs: tp = g, or z = g) processing the same
// tokens. TP's collectives are priced by the time model under the TP rule of the plan they stand for
// (CriterionTpRule: sequence parallelism and --tp-comm-overlap, which hides the part of each collective that its
// GEMM covers: analytic/time_model.hpp); ZeroPP's gathers and reduce-scatters overlap the compute of the U
// micro-batches that pass through the previous layer (prefetch), so only what exceeds that compute is exposed.
// The boundary is the smallest U at which ZeroPP's exposed time drops below TP's.
#include <optional>

#include "cost_model/spec/cluster_spec.hpp"
#include "cost_model/spec/model_spec.hpp"
#include "cost_model/spec/parallel_spec.hpp"

namespace zeropp::analytic {

struct CriterionInput {
  int hidden = 0;       // h
  int seq_len = 0;      // s
  int micro_batch = 1;  // b
  int unit = 1;         // U
  // P, the parameters of one layer (params_per_layer); 0: the paper's GPT layer, 12 h^2.
  double layer_params = 0;
};

// h, s and P of the model's own layer, with b and U.
CriterionInput criterion_input(const ModelSpec&, int micro_batch, int unit);

struct Criterion {
  double layer_params = 0;                  // P
  double lhs = 0;                           // 2 s U b
  double rhs = 0;                           // 3 P / (4 h): 9 h for P = 12 h^2
  double rhs_gpt = 0;                       // 9 h, the paper's form, for comparison
  bool holds = false;                       // lhs > rhs (strict: at equality both move the same bytes)
  double zeropp_bytes_per_layer = 0;        // 2 * 3 P / U        (per micro-batch, per-unit reduction)
  double zeropp_per_w_bytes_per_layer = 0;  // 2 * (2 P / U + P)  (reduction inside every W)
  double tp_bytes_per_layer = 0;            // 2 * 8 s b h        (per micro-batch)
  long long min_unit = 0;                   // smallest U with 2 s U b > 3 P / (4 h)
  // Smallest U for which the per-W mode moves less than TP; empty when no U does (P >= 8 s b h).
  std::optional<long long> min_unit_per_w;
};

// Throws SpecError for non-positive h, s, b or U, or a negative P.
Criterion criterion(const CriterionInput&);

// The TP side of the time-based answer: the TP communication rule of the 3D plan it is compared with.
struct CriterionTpRule {
  bool sequence_parallel = false;
  bool tp_comm_overlap = false;  // Megatron's --tp-comm-overlap (needs sequence_parallel)
};

// The time-based answer on a cluster. Group size g = cluster.gpus_per_node for both TP and ZeroPP's z.
struct CriterionTime {
  int group = 0;                      // g: tp = z = g
  double compute_s = 0;               // one layer, U micro-batches of work per GPU (F+B+W), seconds
  double tp_exposed_s = 0;            // TP all-reduces for the same tokens, all on the critical path
  double zeropp_comm_s = 0;           // 2 all-gathers + 1 reduce-scatter of the layer's parameters/gradients
  double zeropp_exposed_s = 0;        // what the prefetch window (compute_s) does not hide
  bool holds = false;                 // zeropp_exposed_s < tp_exposed_s
  std::optional<long long> min_unit;  // smallest U (<= max_unit) where it holds; empty if none
};

// The real-valued U at which ZeroPP's exposed time equals TP's, from criterion_time at U = 1: the continuous boundary
// the criterion maps draw (plots/criterion.py). criterion_time is linear in U: per U, compute c and TP's exposed time
// t grow by their U = 1 values while ZeroPP's gathers+reduce (comm) stay fixed, so max(0, comm - U c) = U t at
// U* = comm / (c + t), and the integer boundary min_unit is floor(U*) + 1.
double unit_at_parity(const CriterionTime& at_one);

// No recompute on either side (the paper's comparison); dtype sets element size and peak.
CriterionTime criterion_time(const ModelSpec&, const ClusterSpec&, int micro_batch, int unit, Dtype dtype = Dtype::bf16,
                             const CriterionTpRule& tp_rule = {}, long long max_unit = 1 << 16);

}  // namespace zeropp::analytic
