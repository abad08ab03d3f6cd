#include "cost_model/analytic/time_model.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "cost_model/analytic/collectives.hpp"
#include "cost_model/analytic/comm_volume.hpp"
#include "cost_model/analytic/contention.hpp"
#include "cost_model/analytic/flops.hpp"
#include "cost_model/analytic/fp8_cost.hpp"
#include "cost_model/analytic/grad_accumulation.hpp"
#include "cost_model/analytic/op_time.hpp"
#include "cost_model/analytic/params.hpp"
#include "cost_model/analytic/stage_balance.hpp"
#include "cost_model/spec/context_parallel.hpp"
#include "cost_model/analytic/tp_overlap.hpp"
#include "cost_model/analytic/zero3_execution.hpp"
#include "cost_model/spec/attention_kernel.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/framework.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::analytic {

namespace {

constexpr double kMaskBytes = 1;  // a dropout mask element

// Kernel traffic of one layer split by what it scales with: per token (norms, residual adds, activation) and the
// s x s attention tensor. Forward and backward are counted kernel by kernel (bytes read + written):
//   norm           forward read x, write y: 2e per element;  backward read x and dy, write dx: 3e
//   bias-dropout-add (GPT)  forward read output and residual, write sum and mask: 3e + 1;
//                  backward read dy and mask, write dx: 2e + 1 (Llama has no dropout: a plain add, no backward kernel)
//   activation     gelu forward read, write f: 2e; backward read x and dy, write dx: 3e;
//                  swiglu forward read gate and up, write: 3e; backward read gate, up, dy, write both grads: 5e
//   attention, per score (s x s per head), unfused only (flash keeps the scores on chip; its kernel time, priced
//   at flash_attention_efficiency, covers its softmax and dropout)
//     forward      QK^T writes e, softmax reads and writes 2e, dropout reads, writes and stores a mask 2e + 1,
//                  the context GEMM reads e: 6e + 1 (no dropout: 4e)
//     backward     dP written by a GEMM e, dropout backward 2e + 1, softmax backward reads y and dy and writes 3e,
//                  dQ and dK GEMMs read dS 2e, dV's GEMM reads P e: 9e + 1 (no dropout: 7e)
//     of which the score GEMMs' own operands and outputs (forward 2e, backward 4e): where the profile prices a
//     GEMM by its roofline (op_time.hpp, gemm_traffic_priced), that traffic is already in the GEMM's time, and
//     action_costs leaves it out here so that it is counted once.
struct KernelBytes {
  double tokens_fwd = 0, attention_fwd = 0;
  double tokens_bwd = 0, attention_bwd = 0;
  double attention_gemm_fwd = 0, attention_gemm_bwd = 0;  // the GEMMs' share of attention_fwd / attention_bwd
};

KernelBytes layer_kernel_bytes(const ModelSpec& model, int b, int tp, bool sp, Dtype dtype) {
  const double e = element_bytes(dtype);
  const double t = tp;
  const double bs = static_cast<double>(b) * model.seq_len;
  const double h = model.hidden, f = model.ffn();
  const bool dropout = model.has_dropout();
  const bool gelu = model.mlp == MlpKind::gelu;
  // Replicated over TP without SP: the two norms and the two residual adds. Split over TP: the activation.
  const double rep_fwd = 2 * (2 * e * h) + (dropout ? 2 * (3 * e * h + kMaskBytes * h) : 2 * (3 * e * h));
  const double rep_bwd = 2 * (3 * e * h) + (dropout ? 2 * (2 * e * h + kMaskBytes * h) : 0);
  const double split_fwd = gelu ? 2 * e * f : 3 * e * f;
  const double split_bwd = gelu ? 3 * e * f : 5 * e * f;
  const double rep_share = sp ? t : 1.0;
  KernelBytes k;
  k.tokens_fwd = bs * (rep_fwd / rep_share + split_fwd / t);
  k.tokens_bwd = bs * (rep_bwd / rep_share + split_bwd / t);
  if (model.attention_kind() == AttentionKind::flash) return k;
  const double scores = bs * model.seq_len * (static_cast<double>(model.heads) / t);
  k.attention_fwd = scores * (dropout ? 6 * e + kMaskBytes : 4 * e);
  k.attention_bwd = scores * (dropout ? 9 * e + kMaskBytes : 7 * e);
  k.attention_gemm_fwd = scores * 2 * e;
  k.attention_gemm_bwd = scores * 4 * e;
  return k;
}

// Bytes one layer's bias and norm-weight gradient reductions move where the framework runs them in passes of their
// own (framework.hpp, weight_reductions), one micro-batch on one GPU: each biased linear's output gradient read
// once (e per element: the column-parallel QKV and up projections' n/t columns on every token; the row-parallel
// output and down projections' biases are added after the reduce-scatter with sequence parallelism, on the GPU's
// s/t tokens, else on all of them, replicated), and each norm's dy and x read again (2e per element, its tokens
// split over TP with sequence parallelism). Llama-style layers have no biases (params.hpp, has_biases).
double weight_reduction_bytes(const ModelSpec& model, const LayerGemms& g, int tp, bool sp, Dtype dtype,
                              const WeightReductions& where) {
  const double e = element_bytes(dtype);
  const double rep_share = sp ? tp : 1.0;
  double bytes = 0;
  if (!where.bias_in_wgrad_gemm && has_biases(model)) {
    const auto outputs = [&g](LayerGemms::Index i) { return g.gemm[i].m * g.gemm[i].n * g.gemm[i].count; };
    bytes += e * (outputs(LayerGemms::qkv) + outputs(LayerGemms::up) +
                  (outputs(LayerGemms::proj) + outputs(LayerGemms::down)) / rep_share);
  }
  if (!where.norm_in_backward_kernel) bytes += 2 * (2 * e) * g.gemm[LayerGemms::qkv].m * model.hidden / rep_share;
  return bytes;
}

// A weight GEMM X W (X: m x k activations, W: k x n) three ways: forward m x n deep k; input gradient
// dX = dY W^T, m x k deep n; weight gradient dW = X^T dY, k x n deep m (the tokens), its epilogue moving
// `wgrad_store` bytes per element (flops.hpp, wgrad_gemm; grad_accumulation.hpp).
struct PassSeconds {
  double forward = 0, dgrad = 0, wgrad = 0;
};
template <typename GemmSeconds>
PassSeconds pass_seconds(const GemmSeconds& seconds, const Gemm& g, double wgrad_store) {
  return {seconds(g), seconds(dgrad_gemm(g)), seconds(wgrad_gemm(g, wgrad_store))};
}
using WeightGemmSeconds = PassSeconds;
template <typename GemmSeconds>
WeightGemmSeconds weight_gemm_seconds(const GemmSeconds& seconds, const LayerGemms& g, double wgrad_store) {
  WeightGemmSeconds out;
  for (int i : {LayerGemms::qkv, LayerGemms::proj, LayerGemms::up, LayerGemms::down}) {
    const PassSeconds p = pass_seconds(seconds, g.gemm[i], wgrad_store);
    out.forward += p.forward;
    out.dgrad += p.dgrad;
    out.wgrad += p.wgrad;
  }
  return out;
}

// The matmul time of the attention core of one layer on one GPU, forward and input-gradient backward (it has
// no weights, no W). Unfused: the memory-bound score kernels come on top (KernelBytes::attention_*).
struct AttentionCoreSeconds {
  double f = 0, b = 0;
};

template <typename GemmSeconds>
AttentionCoreSeconds attention_core_seconds(const Plan& plan, const LayerGemms& g, double peak, double sustain,
                                            const GemmSeconds& gemm_seconds) {
  if (plan.model.attention_kind() == AttentionKind::flash) {
    // One fused kernel each way, at its own measured rate (op_time.hpp: by head dimension and sequence length),
    // on the FLOPs it executes as its authors count them (flops.hpp: the causal half; 2.5x in B).
    const double fwd_flops = kCausalAttentionFraction * g.attention_flops();
    const FlashEfficiency rate = attention_rate(plan.cluster, plan.model, attention_kernel_of(plan));
    return {fwd_flops / (peak * rate.forward * sustain),
            kFlashBackwardFactor * fwd_flops / (peak * rate.backward * sustain)};
  }
  // Unfused (Megatron-LM 2021-2022): two batched cuBLAS GEMMs over the full s x s, each run twice in the backward
  // (both operands are activations).
  const double gemms = gemm_seconds(g.gemm[LayerGemms::scores]) + gemm_seconds(g.gemm[LayerGemms::context]);
  return {gemms, 2 * gemms};
}

// Exposed seconds of one layer's context-parallel exchanges, forward and backward (spec/context_parallel.hpp),
// on one CP rank that holds `local` (its s/cp tokens); core: its attention kernel seconds (all cp blocks).
struct CpSeconds {
  double f = 0, b = 0;
};

CpSeconds cp_layer_seconds(const Plan& plan, const ModelSpec& local, const AttentionCoreSeconds& core) {
  const ParallelSpec& par = plan.parallel;
  if (par.cp <= 1) return {};
  const ClusterSpec& c = plan.cluster;
  const Group g = cp_group(par);
  const double e = element_bytes(par.dtype), cp = par.cp;
  const double tokens = static_cast<double>(par.micro_batch) * local.seq_len;
  const double kv_width = static_cast<double>(local.kv_heads_or_heads()) * local.head_dim() / par.tp;
  const double kv = 2 * tokens * kv_width * e;  // K and V of the rank's two chunks
  if (par.cp_kind == CpKind::ring) {
    // cp attention steps per pass, each on one key/value block while the next block travels (Transformer
    // Engine's AttnFuncWithCPAndKVP2P): cp-1 transfers, each hidden under one step's kernel. The backward sends
    // the key/values with their accumulated gradients (twice the bytes) and returns the last dKV after its final
    // step, exposed.
    const double send = collective_time(c, Collective::send_recv, g.size, g.stride, kv);
    const double send_with_grads = collective_time(c, Collective::send_recv, g.size, g.stride, 2 * kv);
    return {(cp - 1) * std::max(0.0, send - core.f / cp),
            (cp - 1) * std::max(0.0, send_with_grads - core.b / cp) + send};
  }
  // Ulysses: Q, K, V to the head split before the kernel, the output back after it; the backward moves their
  // gradients the same way. Each rank keeps 1/cp of every buffer and sends the rest: priced as that share sent
  // point to point (the profiles fit no all-to-all). Not overlapped (DeepSpeed's DistributedAttention).
  const double qkv = tokens * (static_cast<double>(local.hidden) / par.tp + 2 * kv_width) * e;
  const double out = tokens * static_cast<double>(local.hidden) / par.tp * e;
  const double share = (cp - 1) / cp;
  const double pass = collective_time(c, Collective::send_recv, g.size, g.stride, share * qkv) +
                      collective_time(c, Collective::send_recv, g.size, g.stride, share * out);
  return {pass, pass};
}

// A GEMM's seconds at the rate the framework's kernels sustain (action_costs).
struct SustainedGemmSeconds {
  const GemmPricer& pricer;
  double sustain = 1;
  double operator()(const Gemm& x) const { return pricer.seconds(x) / sustain; }
};

}  // namespace

double gemm_efficiency(const ClusterSpec& cluster, Dtype dtype, double flops) {
  const auto it = cluster.gemm_table.find(dtype);
  if (it == cluster.gemm_table.end() || it->second.empty()) return cluster.gemm_efficiency;
  return table_gemm_efficiency(it->second, flops);
}

double table_gemm_efficiency(const std::vector<GemmEfficiencyPoint>& pts, double flops) {
  if (flops <= pts.front().flops) return pts.front().efficiency;
  if (flops >= pts.back().flops) return pts.back().efficiency;
  // Points are in increasing flops (validated): interpolate linearly in log(flops).
  const auto hi = std::upper_bound(pts.begin(), pts.end(), flops,
                                   [](double x, const GemmEfficiencyPoint& p) { return x < p.flops; });
  const auto lo = hi - 1;
  const double x = std::log(flops), x0 = std::log(lo->flops), x1 = std::log(hi->flops);
  return lo->efficiency + (hi->efficiency - lo->efficiency) * (x - x0) / (x1 - x0);
}

double efficiency_ceiling(const ClusterSpec& cluster, Dtype dtype) {
  double best = cluster.gemm_efficiency;
  const auto it = cluster.gemm_table.find(dtype);
  if (it != cluster.gemm_table.end() && !it->second.empty()) {
    best = 0;
    for (const GemmEfficiencyPoint& p : it->second) best = std::max(best, p.efficiency);
  } else if (cluster.gpu && cluster.gpu->matmul_efficiency.known()) {
    best = cluster.gpu->matmul_efficiency.value;  // utilization <= 1, and the HBM roofline only slows
  }
  best = std::max({best, cluster.flash_attention_efficiency.forward, cluster.flash_attention_efficiency.backward});
  const auto peak = cluster.peak_flops.find(Dtype::bf16);
  if (cluster.gpu && peak != cluster.peak_flops.end())
    for (const auto& [kernel, t] : cluster.gpu->attention)
      for (const auto* list : {&t.forward, &t.backward})
        for (const AttentionPoint& p : *list) best = std::max(best, p.tflops * 1e12 / peak->second);
  return best;
}

double layer_forward_kernel_bytes(const ModelSpec& model, int b, int tp, bool sequence_parallel, Dtype dtype) {
  const KernelBytes k = layer_kernel_bytes(model, b, tp, sequence_parallel, dtype);
  return k.tokens_fwd + k.attention_fwd;
}

double layer_backward_kernel_bytes(const ModelSpec& model, int b, int tp, bool sequence_parallel, Dtype dtype) {
  const KernelBytes k = layer_kernel_bytes(model, b, tp, sequence_parallel, dtype);
  return k.tokens_bwd + k.attention_bwd;
}

double adam_bytes_per_param(const FrameworkPrecision& precision) {
  const double moments = 2 * (4 + 4);
  const double params =
      precision.master_copy ? 2 * 4 + element_bytes(precision.params) : 2 * element_bytes(precision.params);
  return element_bytes(precision.grads) + moments + params;
}

ActionCosts action_costs(const Plan& plan) { return action_costs(plan, plan_basics(plan)); }

ActionCosts action_costs(const Plan& plan, const PlanBasics& basics) {
  const ModelSpec& m = plan.model;
  const ClusterSpec& c = plan.cluster;
  const ParallelSpec& par = plan.parallel;
  const int b = par.micro_batch, t = par.tp;
  const double e = element_bytes(par.dtype);
  const double peak = c.peak(par.dtype);
  // Profiles with an operation table price each operation at the GPU's achievable rate; the framework's kernels
  // sustain a share of it over a training step (framework.hpp, kernel_efficiency). Without a table the profile's
  // gemm_efficiency carries everything, as before.
  const double sustain = c.gpu && c.gpu->matmul_efficiency.known() ? kernel_efficiency(par) : 1.0;
  // gemm_time and memory_time with the cluster's lookups done once for the plan (op_time.hpp).
  const GemmPricer pricer(c, par.dtype);
  auto mem_seconds = [&pricer](double bytes) { return pricer.memory_seconds(bytes); };
  const SustainedGemmSeconds gemm_seconds{pricer, sustain};
  // The weight GEMMs of the layers: in FP8 for an FP8 plan (fp8_cost.hpp), else as every GEMM. Two captures,
  // 16 bytes: std::function (tp_layer_seconds) keeps it in place (libstdc++ does up to 16 bytes) instead of
  // allocating once per plan evaluation.
  auto weight_seconds = [&gemm_seconds, &plan](const Gemm& x) {
    return plan.parallel.fp8 ? fp8_gemm_time(plan.cluster, x) / gemm_seconds.sustain : gemm_seconds(x);
  };

  ActionCosts a;
  // Per chunk: the largest virtual stage of the split (all of them when it is even); costs_from_plan scales
  // each stage by its own layers, closed_form_timing each rank by its own (stage_balance.hpp).
  const StageLayout& layout = basics.params.layout;
  const int lc = layout.max_stage_layers();
  a.layers_per_chunk = lc;

  // One layer, one micro-batch, one GPU. With context parallelism the GPU holds s/cp tokens of each sequence
  // (`local`) and computes 1/cp of the causal attention: cp times the attention of an s/cp sequence.
  std::optional<ModelSpec> cp_copy;
  const ModelSpec& local = cp_rank_model(m, par.cp, cp_copy);
  const LayerGemms g = layer_gemms(local, b, t);
  // How the framework accumulates the weight gradients over the micro-batches (grad_accumulation.hpp): in the wgrad
  // GEMM's epilogue, or in kernels of their own, part of the W action.
  const GradAccumulation accumulation = grad_accumulation(par, basics.sync, basics.precision);
  // Each weight GEMM three ways, each at its own shape (op_time.hpp): forward, input gradient, weight gradient.
  const WeightGemmSeconds weights = weight_gemm_seconds(weight_seconds, g, accumulation.layer_store);
  const Fp8CastBytes casts = fp8_layer_cast_bytes(plan, g);  // none without FP8
  KernelBytes k = layer_kernel_bytes(local, b, t, par.sequence_parallel, par.dtype);
  if (gemm_traffic_priced(c, par.dtype)) {  // the score GEMMs' own traffic is in their time already
    k.attention_fwd -= k.attention_gemm_fwd;
    k.attention_bwd -= k.attention_gemm_bwd;
  }
  AttentionCoreSeconds core = attention_core_seconds(plan, g, peak, sustain, gemm_seconds);
  core.f *= par.cp;  // flash only (validate_context_parallel): no s x s score kernels to scale
  core.b *= par.cp;
  const double layer_f = weights.forward + core.f + mem_seconds(k.tokens_fwd + k.attention_fwd + casts.forward);
  const double layer_b = weights.dgrad + core.b + mem_seconds(k.tokens_bwd + k.attention_bwd + casts.backward);
  const WeightReductions reductions_where = weight_reductions(par);
  const double reduction_bytes =
      weight_reduction_bytes(local, g, t, par.sequence_parallel, par.dtype, reductions_where);
  const double layer_w =
      weights.wgrad + mem_seconds(accumulation.kernel * linear_weight_elements(g) + reduction_bytes);
  double layer_rc = 0;
  if (par.recompute == Recompute::full) layer_rc = layer_f;
  if (par.recompute == Recompute::selective) {
    // What the framework's selective recomputation reruns (framework.hpp).
    const SelectiveRecompute sel = selective_recompute(framework_of(par));
    if (sel.attention_core) layer_rc += core.f + mem_seconds(k.attention_fwd);
    layer_rc += sel.weight_matmuls * weights.forward;
    if (sel.memory_bound) layer_rc += mem_seconds(k.tokens_fwd);
  }

  const double act_bytes = static_cast<double>(b) * local.seq_len * m.hidden * e;  // b*s*h (s/cp), full buffer
  a.f = lc * layer_f;
  a.b = lc * layer_b;
  a.w = lc * layer_w;
  a.recompute = lc * layer_rc;
  // TP communication as the framework runs it, with what its overlap costs (tp_overlap.hpp), on s/cp tokens.
  const TpLayerSeconds tp = tp_layer_seconds(plan, local, g, weight_seconds, accumulation.layer_store);
  a.tp_f = lc * tp.forward;
  a.tp_b = lc * tp.backward;
  const CpSeconds cps = cp_layer_seconds(plan, local, core);
  a.cp_f = lc * cps.f;
  a.cp_b = lc * cps.b;
  a.tp_f += a.cp_f;
  a.tp_b += a.cp_b;
  a.tp_recompute = par.recompute == Recompute::full ? a.tp_f : 0;

  // LM head: logits GEMM over the vocabulary shard; final norm (forward 2e, backward 3e per element) and the
  // cross-entropy's kernels as the framework runs them (framework.hpp, cross_entropy_bytes_per_logit).
  const Gemm head{static_cast<double>(b) * local.seq_len, static_cast<double>(m.vocab) / t,
                  static_cast<double>(m.hidden), 1};
  const PassSeconds head_gemm = pass_seconds(gemm_seconds, head, accumulation.head_store);
  const double tokens = static_cast<double>(b) * local.seq_len;
  const double norm_share = par.sequence_parallel ? t : 1;
  const double logits = static_cast<double>(m.vocab) / t;
  const CrossEntropyBytes ce = cross_entropy_bytes_per_logit(framework_of(par), e);
  a.head_f = head_gemm.forward + mem_seconds(tokens * (2 * e * m.hidden / norm_share + ce.forward * logits));
  a.head_b = head_gemm.dgrad + mem_seconds(tokens * (3 * e * m.hidden / norm_share + ce.backward * logits));
  // The final norm's weight gradient, where the framework reduces it in a pass of its own (2e per element).
  const double final_norm_w = reductions_where.norm_in_backward_kernel ? 0 : 2 * e * tokens * m.hidden / norm_share;
  a.head_w = head_gemm.wgrad + mem_seconds(accumulation.kernel * head.k * head.n + final_norm_w);
  if (t > 1) {
    const Group tg = tp_group(par);
    // SP gathers the final norm's output before the head; the head's input gradient is all-reduced
    // (reduce-scattered with SP). The vocabulary-parallel embedding all-reduces (reduce-scatters) its output.
    const Collective back = par.sequence_parallel ? Collective::reduce_scatter : Collective::all_reduce;
    a.head_tp_f = par.sequence_parallel ? collective_time(c, Collective::all_gather, tg.size, tg.stride, act_bytes) : 0;
    a.head_tp_b = collective_time(c, back, tg.size, tg.stride, act_bytes);
    a.embed_tp_f = collective_time(c, back, tg.size, tg.stride, act_bytes);
  }

  if (par.pp > 1) {
    const Group pg = pp_group(par);
    // Megatron's scatter-gather: each TP rank sends 1/t of the activation, then the receivers all-gather it
    // over NVLink (with SP the activation stays split and needs no gather).
    a.p2p = collective_time(c, Collective::send_recv, pg.size, pg.stride, act_bytes / t);
    if (t > 1 && !par.sequence_parallel) {
      const Group tg = tp_group(par);
      a.p2p += collective_time(c, Collective::all_gather, tg.size, tg.stride, act_bytes);
    }
  }

  // ZeRO-3 gathers (parameters in the compute dtype) and reduce-scatters (gradients in the framework's reduce
  // dtype).
  const DataParallelSync& sync = basics.sync;
  const FrameworkPrecision& precision = basics.precision;
  const GradReductions reductions = grad_reductions(par, sync);  // how often the ZeRO-3 shards are added into
  const double param_bytes = element_bytes(precision.gather), grad_bytes = element_bytes(precision.reduce);
  // As the framework executes them (zero3_execution.hpp): the collectives with their side-stream copies, and the
  // copies on the compute stream charged to the forward and backward that wait for them.
  const PipelineParams& pipeline = basics.params;
  const double layer_params = static_cast<double>(pipeline.per_layer);
  if (sync.layer_wise) {
    const Group sg = shard_group(par, sync);
    const double params = static_cast<double>(rank_params(m, 1, 1, 0, t).total());
    const Zero3Seconds z3 = zero3_seconds(plan, sg, params, layer_params, precision, reductions);
    a.gather = z3.gather;
    a.reduce_scatter = z3.reduce_scatter;
    a.f += z3.forward_copies;
    a.b += z3.backward_copies;
  } else if (sync.shard_spans_dp && sync.shard_group > 1) {
    // FSDP2 under PP: a regular chunk's layers in zero3's shard group, once per iteration: the copy-out follows the
    // gather, the reduction's copy-in precedes the reduce-scatter (as ZeroPP's per-unit gathers below).
    const Group sg = shard_group(par, sync);
    const double params = static_cast<double>(lc) * layer_params;
    const Zero3Seconds z3 = zero3_seconds(plan, sg, params, layer_params, precision, reductions);
    a.gather = z3.gather + z3.forward_copies;
    a.reduce_scatter = z3.reduce_scatter + z3.backward_copies - z3.forward_copies;
  } else if (par.z > 1 && sync.gather != ParamGather::none) {
    const Group zg = zero_group(par);
    // A regular chunk: its layers (the embedding and head of the end stages are not counted here).
    const double params = static_cast<double>(lc) * layer_params;
    const Zero3Seconds z3 = zero3_seconds(plan, zg, params, layer_params, precision, reductions);
    a.gather = z3.gather;
    a.reduce_scatter = z3.reduce_scatter;
    if (sync.gather == ParamGather::per_micro_batch) {
      a.f += z3.forward_copies;
      a.b += z3.backward_copies;
    } else {
      // Gathered once per unit, not per micro-batch: the copy-out follows each gather, the reduction's copy-in
      // precedes each reduce-scatter.
      a.gather += z3.forward_copies;
      a.reduce_scatter += z3.backward_copies - z3.forward_copies;
    }
  }

  // Data-parallel gradient sync of the largest PP rank's parameters (per GPU shard for ZeroPP).
  const double psi = static_cast<double>(pipeline.max_rank());
  // (Pure ZeRO-3 has none: its gradients are reduce-scattered per micro-batch in the ZeRO-3 group.)
  const Group dg = dp_sync_group(par, sync);
  const double dp_params = psi / sync.grad_shard;
  const bool sharded_dp = sync.mode == DpSyncMode::reduce_scatter;
  if (dg.size > 1) {
    if (sharded_dp) {
      a.dp_sync = collective_time(c, Collective::reduce_scatter, dg.size, dg.stride, grad_bytes * dp_params);
      a.dp_after_step = collective_time(c, Collective::all_gather, dg.size, dg.stride, param_bytes * dp_params);
      // Megatron's --overlap-param-gather: the all-gather runs, bucket by bucket, under the next iteration's first
      // forward through the rank's chunks; only what outlasts it stays exposed.
      // The hidden part pays the contention of every overlapped NCCL kernel (contention.hpp).
      if (par.overlap_param_gather) {
        const double under = par.v * (a.f + a.tp_f);
        a.dp_after_step = std::max(0.0, a.dp_after_step - under) +
                          contention_seconds(c, CommKernel::nccl, std::min(a.dp_after_step, under));
      }
    } else {
      a.dp_sync = collective_time(c, Collective::all_reduce, dg.size, dg.stride, grad_bytes * dp_params);
    }
  }
  if (par.pp > 1 && m.tied_embedding) {
    // The first and the last stage hold copies of the word embedding and all-reduce their gradients.
    const double bytes = grad_bytes * static_cast<double>(word_embedding_params(m)) / t / sync.shard_group;
    const Group eg = embedding_group(par);
    a.embedding_sync = collective_time(c, Collective::all_reduce, eg.size, eg.stride, bytes);
  }
  // The step first reads the gradients it updates with once more for the global gradient norm, which every framework
  // takes each step: Megatron clips at --clip-grad 1.0 by default (megatron/training/arguments.py;
  // core/optimizer/clip_grads.py, get_grad_norm_fp32: multi_tensor_l2norm over the main grads the rank's optimizer
  // holds), torchtitan at training.max_norm 1.0 (torchtitan/config/configs.py; clip_grad_norm_ over the sharded
  // gradients), DeepSpeed ZeRO takes the norm in every step (runtime/zero/stage_1_and_2.py, scaled_global_norm), and
  // the trainer too (e2e/optim/adamw.hpp). Then it streams its states once (memory-bound), unless the profile
  // measured a slower update rate (calibrate/optimizer_fit.hpp: the update alone); then the gradient buffer the rank
  // holds (its shard under ZeRO-3) is reset for the next iteration where the framework zeroes it
  // (grad_accumulation.hpp).
  const double opt_params = psi / sync.optimizer_shards;
  a.opt_step = mem_seconds(element_bytes(precision.grads) * opt_params) +
               std::max(mem_seconds(adam_bytes_per_param(precision) * opt_params),
                        c.optimizer_rate > 0 ? opt_params / c.optimizer_rate : 0.0) +
               mem_seconds(accumulation.reset * psi / sync.shard_group);
  return a;
}

double bubble_time(ScheduleKind kind, int p, int v, int B, int U, double F, double Bx, double W) {
  if (p < 1 || v < 1 || B < 1 || U < 0)
    throw SpecError("parallel", fmt::format("bubble_time: p={}, v={}, B={}, U={} must be >= 1", p, v, B, U));
  const double fill = p - 1;
  switch (kind) {
    case ScheduleKind::gpipe:
    case ScheduleKind::one_f_one_b:
      return fill * (F + Bx + W);
    case ScheduleKind::interleaved:
    case ScheduleKind::bfs:
      return fill * (F + Bx + W) / v;
    case ScheduleKind::zb_h1:
      return std::max(0.0, fill * (F + Bx - W));
    case ScheduleKind::zb_h2:
      return std::max(0.0, fill * (F + Bx - 2 * W));
    case ScheduleKind::zeropp:
      return unit_count(B, U > 0 ? std::min(U, B) : B) * std::max(0.0, fill * (F + Bx - W)) / v;
  }
  return 0;
}

PipelineTiming closed_form_timing(const Plan& plan, const ActionCosts& a) {
  return closed_form_timing(plan, a, plan_basics(plan));
}

PipelineTiming closed_form_timing(const Plan& plan, const ActionCosts& a, const PlanBasics& basics) {
  const ParallelSpec& par = plan.parallel;
  const int p = par.pp, v = par.v, m = par.micro_batches;
  const int U = std::min(par.unit > 0 ? par.unit : m, m);
  const double p2p_f = p > 1 ? a.p2p : 0, p2p_b = p > 1 ? a.p2p : 0;

  // One micro-batch through one rank's v chunks.
  const double compute_regular = v * (a.f + a.b + a.w + a.recompute);
  const double tp_regular = v * (a.tp_f + a.tp_b + a.tp_recompute);
  const double pp_regular = v * (p2p_f + p2p_b);
  // The end ranks: the last holds the head, the first the embedding (the same rank when p == 1). Each rank's
  // layers scale its share of the regular work (1 everywhere with an even split: stage_balance.hpp).
  const RankShares k = rank_shares(basics.params.layout, a.layers_per_chunk);
  const double last_compute = k.last * compute_regular + a.head_f + a.head_b + a.head_w;
  const double last_tp = k.last * tp_regular + a.head_tp_f + a.head_tp_b + (p == 1 ? a.embed_tp_f : 0);
  const double first_tp = k.first * tp_regular + a.embed_tp_f;
  double slow_compute = last_compute, slow_tp = last_tp;
  int slowest = p - 1;
  if (p > 1 && k.first * compute_regular + first_tp > last_compute + last_tp) {
    slow_compute = k.first * compute_regular;
    slow_tp = first_tp;
    slowest = 0;
  }
  if (p > 2 && k.middle * (compute_regular + tp_regular) > slow_compute + slow_tp) {
    slow_compute = k.middle * compute_regular;
    slow_tp = k.middle * tp_regular;
    slowest = 1;
  }
  const double others = k.others(slowest);  // the fill and drain run through the other ranks

  PipelineTiming r;
  r.compute = m * slow_compute + a.opt_step;
  r.tp_exposed = m * slow_tp;
  r.pp_exposed = m * pp_regular;

  const double F = v * (others * (a.f + a.tp_f) + p2p_f);
  const double Bx = v * (others * (a.b + a.recompute + a.tp_b + a.tp_recompute) + p2p_b);
  const double W = v * (others * a.w);
  r.bubble = p > 1 ? bubble_time(par.schedule, p, v, m, U, F, Bx, W) : 0;

  // ZeRO-3 exposure under the prefetch rule; what is hidden slows the compute it runs beside (contention.hpp),
  // charged as compute as the simulator charges it.
  const auto hidden = [&](double comm, double compute) {
    return contention_seconds(plan.cluster, CommKernel::nccl, std::min(comm, compute));
  };
  double layer_wise_sync = -1;  // HSDP without PP: the per-micro-batch all-reduces' exposed seconds
  if (a.gather > 0 || a.reduce_scatter > 0) {
    const double fwd = a.f + a.tp_f, bwd = a.b + a.recompute + a.w + a.tp_b + a.tp_recompute;
    const DataParallelSync& sync = basics.sync;
    if (sync.layer_wise) {
      // Layer by layer, every micro-batch: gather layer l+1 during layer l's forward; gather layer l-1 and
      // reduce-scatter layer l+1 during layer l's backward. HSDP all-reduces layer l+2's shard beside them on its
      // own stream (FSDP2's all-reduce stream): what outlasts both the backward and the ZeRO-3 stream is exposed,
      // and the compute is slowed while either runs (the longer of the two).
      const double L = a.layers_per_chunk;
      const double g = a.gather / L, rs = a.reduce_scatter / L, fl = fwd / L, bl = bwd / L;
      const double ar = sync.sync_every_micro_batch ? a.dp_sync / L : 0;
      r.zero_exposed = g + rs + m * L * (std::max(0.0, g - fl) + std::max(0.0, g + rs - bl));
      r.compute += m * L * (hidden(g, fl) + hidden(std::max(g + rs, ar), bl));
      if (ar > 0) layer_wise_sync = ar + m * L * std::max(0.0, ar - std::max(bl, g + rs));
    } else if (sync.gather == ParamGather::per_iteration) {
      // FSDP2 under PP: each chunk gathered before its first forward (the first exposed, the next ones under the
      // forward of the chunk before) and reduce-scattered after its last backward (the last one, chunk 0's, exposed;
      // the others under the backward of the chunks after them).
      r.zero_exposed = a.gather + a.reduce_scatter +
                       (v - 1) * (std::max(0.0, a.gather - fwd) + std::max(0.0, a.reduce_scatter - bwd));
      r.compute += (v - 1) * (hidden(a.gather, fwd) + hidden(a.reduce_scatter, bwd));
    } else if (sync.gather == ParamGather::per_micro_batch) {
      // Gather before every F and B of a chunk, reduce-scatter after its W; prefetched during the previous one.
      const double n = static_cast<double>(m) * v;
      r.zero_exposed = a.gather + a.reduce_scatter +
                       n * (std::max(0.0, a.gather - fwd) + std::max(0.0, a.gather + a.reduce_scatter - bwd));
      r.compute += n * (hidden(a.gather, fwd) + hidden(a.gather + a.reduce_scatter, bwd));
    } else {
      // ZeroPP: per unit, one forward phase and one backward phase per chunk, each U micro-batches long.
      const double units = unit_count(m, U);
      const double rs_in_phase = par.grad_reduce == GradReduce::per_w ? U * a.reduce_scatter : a.reduce_scatter;
      const double phases = units * v;
      r.zero_exposed = a.gather + a.reduce_scatter + (phases - 1) * std::max(0.0, a.gather - U * fwd) +
                       phases * std::max(0.0, a.gather + rs_in_phase - U * bwd);
      r.compute += (phases - 1) * hidden(a.gather, U * fwd) + phases * hidden(a.gather + rs_in_phase, U * bwd);
    }
  }

  // Data-parallel sync of the rank's v chunks, each launched after the chunk's last backward (v-1..0 in the last
  // micro-batch), in n buckets on the chunk that finishes last (framework.hpp, dp_sync_buckets): all of it may
  // overlap the later chunks' backward and all but the first bucket's share of the last chunk's; the last
  // bucket always follows the backward.
  double sync_exposed = a.dp_sync;
  if (layer_wise_sync >= 0) {
    sync_exposed = layer_wise_sync;
  } else if (par.overlap_grad_reduce && a.dp_sync > 0) {
    const double chunk_backward = a.b + a.recompute + a.w;
    const double n = dp_sync_buckets(par, 0, static_cast<double>(basics.params.stage(0).total()), a.layers_per_chunk);
    sync_exposed = std::max(a.dp_sync / (v * n), a.dp_sync - chunk_backward * (v - 1.0 / n));
    r.compute += hidden(a.dp_sync - sync_exposed, chunk_backward * v);
  }
  r.dp_exposed = sync_exposed + a.dp_after_step + a.embedding_sync;

  r.comm_exposed = r.tp_exposed + r.pp_exposed + r.zero_exposed + r.dp_exposed;
  r.iteration = r.compute + r.comm_exposed + r.bubble;
  return r;
}

}  // namespace zeropp::analytic
