#pragma once
// Iteration time in closed form: compute + exposed communication + pipeline bubble, with explicit overlap rules.
//
// Two layers, so that the schedule simulator (cost_model/simulate) can replace the second:
//   1. action_costs(plan): seconds of every action kind on one GPU (one chunk, one micro-batch), from the FLOPs,
//      the GEMM efficiency, the memory-bound kernels' bytes over HBM bandwidth and the alpha-beta collectives.
//      This is the cost table the simulator consumes.
//   2. closed_form_timing(plan, costs): the textbook combination of those costs for uniform stages.
//
// Compute of an action = sum over its GEMMs of FLOPs / (peak(dtype) * efficiency(GEMM)), efficiency from
// cluster.gemm_table (piecewise-linear in log FLOPs of one GEMM, clamped) when given, else
// cluster.gemm_efficiency; plus the memory-bound kernels (layer norms, softmax, dropout, activation, bias and
// residual adds; unfused attention as in Megatron-LM 2021) as bytes moved / cluster.memory_bandwidth.
// The attention core by ModelSpec::attention_kind: unfused, the Q K^T and scores x V GEMMs at the GEMM
// efficiency (twice each in B) plus the s x s softmax/dropout kernels; flash, one fused kernel each way at
// cluster.flash_attention_efficiency over the FLOPs it executes, as FlashAttention's authors count them: half
// the s x s products (causal mask), and 2.5x the forward's in B (it recomputes Q K^T). Selective recomputation
// reruns the unfused core before B; with flash it costs nothing (flash's B already includes it).
//
// Overlap rules (what sits on the critical path). Whatever overlaps compute slows it by the one contention rule
// (contention.hpp), charged to compute in the closed form as in the simulator:
//   - TP collectives are inside F/B/recompute, priced as the framework runs them (tp_overlap.hpp: exposed, or
//     overlapped with their GEMMs with what the overlap costs).
//   - PP p2p: Megatron's blocking exchange; every chunk boundary a micro-batch crosses costs one receive of the
//     activation and one of the gradient on the receiving rank: fully exposed.
//   - ZeRO-3 all-gathers are prefetched during the previous phase's compute (the U micro-batches of the previous
//     chunk for ZeroPP; the previous layer for pure ZeRO-3; the previous micro-batch's action for naive ZeRO-3
//     under PP): exposed is only what exceeds that compute, plus the first gather of the iteration in full.
//     Gradient reduce-scatters share the link with the next gather inside the same window; the last one of the
//     iteration is exposed. FSDP2 under PP gathers each chunk once (before its first forward: the first exposed,
//     the others under the chunk before's forward) and reduce-scatters it once (after its last backward: chunk 0's
//     exposed). HSDP without PP all-reduces every layer's shard across the replicas beside the next layers'
//     backward on its own stream, each micro-batch: what outlasts both is exposed.
//   - DP gradient sync (all-reduce, or the reduce-scatter of ZeRO-1/hybrid B) overlaps the rank's last
//     micro-batch backward; what exceeds it is exposed. Without overlap (options) it is fully exposed. The
//     parameter all-gather after a sharded optimizer step, the tied-embedding all-reduce between first and last
//     stage and the optimizer step itself are exposed, except Megatron's --overlap-param-gather (the all-gather
//     under the next forward).
// Bubble (uniform stages; F, B, W, per micro-batch per rank, including the exposed TP and p2p time):
//   gpipe, 1f1b (p-1)(F+B+W); interleaved, bfs (p-1)(F+B+W)/v; zb_h1 (p-1)(F+B-W); zb_h2 (p-1)(F+B-2W)
//   (both >= 0); zeropp ceil(B/U) (p-1)(F+B-W)/v: every unit fills and drains the pipeline, the deferred Ws
//   fill the drain as in ZB-H1.
// The slowest rank (the last, with the LM head, or the first) sets the steady state: ideal = B x its per
// micro-batch time; the bubble uses a middle rank's (layers only).
#include <optional>
#include <vector>

#include "cost_model/analytic/plan_basics.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/framework.hpp"

namespace zeropp::analytic {

// GEMM efficiency for one GEMM of `flops` FLOPs (2*m*n*k) on `cluster` in `dtype`.
double gemm_efficiency(const ClusterSpec& cluster, Dtype dtype, double flops);
// The same from a calibrated table (non-empty, increasing flops): linear in log(flops) between its points.
double table_gemm_efficiency(const std::vector<GemmEfficiencyPoint>& points, double flops);

// The highest fraction of the dense peak any compute operation of the time model reaches on `cluster` in `dtype`
// (the best GEMM, the attention kernel each way). Every operation is priced at or below it, so executed FLOPs over
// (iteration time x GPUs x peak) cannot exceed it, nor can MFU (tests/analytic/flop_convention_test.cpp).
double efficiency_ceiling(const ClusterSpec& cluster, Dtype dtype);

// Bytes the memory-bound kernels of one layer move (read + write) for one micro-batch, on one GPU: norms,
// bias-dropout-residual adds (replicated over TP unless sequence_parallel), activation function and, with unfused
// attention, the s x s attention tensor (QK^T output, softmax, dropout, read by the context GEMM; split over TP;
// flash keeps it on chip). Counted kernel by kernel in time_model.cpp. All backward kernels belong to B; W is
// the weight GEMMs and the framework's weight-gradient accumulation (grad_accumulation.hpp: in the GEMMs' epilogue
// or in kernels of its own).
double layer_forward_kernel_bytes(const ModelSpec& model, int b, int tp, bool sequence_parallel, Dtype dtype);
double layer_backward_kernel_bytes(const ModelSpec& model, int b, int tp, bool sequence_parallel, Dtype dtype);
// Adam step bytes per parameter whose optimizer state the GPU holds, at the framework's precision: read the
// gradient (its element size), read and write fp32 momentum and variance (4 x 4), then either read and write
// the fp32 master and write the 16-bit parameter (8 + 2), or, when the parameters held are the master (fp32
// training, FSDP2's fp32 shards), read and write them. Megatron bf16: 4 + 16 + 10 = 30; DeepSpeed bf16 28.
double adam_bytes_per_param(const FrameworkPrecision& precision);

// Seconds of each action kind on one GPU. Per chunk (one virtual stage's layers) and per micro-batch unless
// stated. The simulator uses the same table.
struct ActionCosts {
  int layers_per_chunk = 1;
  // Compute (GEMMs + memory-bound kernels) of a regular chunk.
  double f = 0, b = 0, w = 0, recompute = 0;
  // TP collectives inside those actions (critical path).
  double tp_f = 0, tp_b = 0, tp_recompute = 0;
  // Of which the context-parallel exchanges (spec/context_parallel.hpp): what the ring's KV passes or Ulysses'
  // all-to-alls leave exposed. Counted in tp_f/tp_b (and tp_recompute): the intra-layer communication.
  double cp_f = 0, cp_b = 0;
  // Extra compute of the last virtual stage (final norm, LM head, cross-entropy) and its TP collectives; the
  // first virtual stage's vocabulary-parallel embedding all-reduce (the lookup itself is negligible).
  double head_f = 0, head_b = 0, head_w = 0;
  double head_tp_f = 0, head_tp_b = 0;
  double embed_tp_f = 0;
  double p2p = 0;             // one activation (or gradient) transfer between neighbouring stages
  double gather = 0;          // ZeRO-3 all-gather of one chunk's parameters (pure ZeRO-3: of all layers)
  double reduce_scatter = 0;  // ZeRO-3 reduce-scatter of one chunk's gradients
  double dp_sync = 0;         // gradient sync across data parallel (overlappable with the last backward)
  double dp_after_step = 0;   // parameter all-gather after a dp-sharded optimizer step (exposed)
  double embedding_sync = 0;  // tied embedding gradient all-reduce, first and last stage (exposed)
  double opt_step = 0;        // optimizer step (exposed)
};

ActionCosts action_costs(const Plan& plan);
// The same with the plan's basics already worked out (plan_basics(plan): estimate's).
ActionCosts action_costs(const Plan& plan, const PlanBasics& basics);

// What a schedule executor reports: the closed form below, or the simulator.
struct PipelineTiming {
  double compute = 0;       // the slowest rank's busy compute time, incl. the optimizer step
  double comm_exposed = 0;  // communication on the critical path (tp + pp + zero + dp below)
  double bubble = 0;        // idle time of pipeline fill and drain
  double iteration = 0;     // compute + comm_exposed + bubble
  // Exposed communication by category.
  double tp_exposed = 0, pp_exposed = 0, zero_exposed = 0, dp_exposed = 0;
  // Peak bytes per GPU when the executor tracks memory over time (the simulator); empty for closed forms.
  std::optional<double> peak_memory;
};

// The DP gradient sync overlaps the last backward only when parallel.overlap_grad_reduce.
PipelineTiming closed_form_timing(const Plan& plan, const ActionCosts& costs);
// The same with the plan's basics already worked out (plan_basics(plan): estimate's).
PipelineTiming closed_form_timing(const Plan& plan, const ActionCosts& costs, const PlanBasics& basics);

// Closed-form bubble of a schedule for per-micro-batch, per-rank costs F, B, W (seconds).
double bubble_time(ScheduleKind kind, int p, int v, int B, int U, double F, double Bx, double W);

}  // namespace zeropp::analytic
