#include "cost_model/analytic/memory.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "cost_model/analytic/fp8_cost.hpp"
#include "cost_model/analytic/params.hpp"
#include "cost_model/spec/context_parallel.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::analytic {

namespace {

constexpr double kMaskBytes = 1;       // a dropout mask element
constexpr double kLogSumExpBytes = 4;  // FlashAttention's softmax statistic, fp32 per head and token

// Elements (or bytes per element-byte) of the tensors a layer stores for backward, per token, split into
// what tensor parallelism replicates without SP and what it always splits; plus the attention core's own
// stored tensors per token and head. All in bytes for element size e.
struct StoredPerToken {
  double replicated = 0;         // norm inputs, norm outputs (QKV / MLP inputs), masks after row-parallel layers
  double split = 0;              // Q, K, V, projection input (= the attention output), MLP intermediates
  double core = 0;               // per token per head: unfused, s x (softmax output, its dropout mask and output);
                                 // flash, the fp32 log-sum-exp
  bool core_recomputed = false;  // selective recompute drops `core` (unfused only: flash has nothing to drop)
};

// Bytes per element of the output-projection input kept for backward: e; with FP8 inputs (x < e) FlashAttention
// still keeps its bf16 output (`out`) and TransformerEngine adds its FP8 copy, unfused attention keeps the FP8 one.
double proj_input_bytes(const ModelSpec& model, double e, double x) {
  if (x == e) return e;
  return model.attention_kind() == AttentionKind::flash ? e + x : x;
}

// x: bytes of an element of a linear layer's input saved for its backward (e, or 1 when TransformerEngine saves
// the FP8 copy: fp8_cost.hpp).
StoredPerToken stored_per_token(const ModelSpec& model, double e, double x) {
  const double h = model.hidden;
  const double q = static_cast<double>(model.kv_heads_or_heads()) * model.head_dim();
  const double f = model.ffn();
  const bool dropout = model.has_dropout();
  StoredPerToken st;
  st.replicated = 2 * e * h                            // inputs of the two norms
                  + x * h                              // QKV input (first norm's output)
                  + x * h;                             // MLP input (second norm's output)
  if (dropout) st.replicated += 2 * kMaskBytes * h;    // masks after the attention and MLP outputs
  st.split = e * (h + q)                               // Q and K, the inputs of Q K^T
             + e * q                                   // V
             + proj_input_bytes(model, e, x) * h;      // output-projection input
  st.split += model.mlp == MlpKind::gelu ? e * f + x * f       // GeLU input, down-projection input
                                         : 2 * e * f + x * f;  // gate output, up output, down-projection input
  if (model.attention_kind() == AttentionKind::flash) {
    // FlashAttention saves Q, K, V, its output (the projection input above) and the log-sum-exp of every
    // softmax row (flash_attn_interface.py: save_for_backward(q, k, v, out, softmax_lse, rng_state)); its
    // backward recomputes the scores, and attention dropout is regenerated from the RNG state, not stored.
    st.core = kLogSumExpBytes;
  } else {
    st.core = static_cast<double>(model.seq_len) * (dropout ? e + kMaskBytes + e  // softmax output, mask, output
                                                            : e);                 // softmax output
    st.core_recomputed = true;
  }
  return st;
}

// Bytes of a saved linear-layer input element.
double linear_input_bytes(const ActivationOptions& o, double e) { return o.fp8_inputs ? 1 : e; }

void check_options(const ActivationOptions& o) {
  if (o.b < 1) throw SpecError("parallel.micro_batch", fmt::format("parallel.micro_batch={} must be >= 1", o.b));
  if (o.tp < 1) throw SpecError("parallel.tp", fmt::format("parallel.tp={} must be >= 1", o.tp));
}

}  // namespace

ModelStateBytes model_state_bytes_per_param(const FrameworkPrecision& p) {
  // Adam's fp32 momentum and variance, and an fp32 master copy unless the parameters held are fp32 already.
  const double optimizer = 4 + 4 + (p.master_copy ? 4 : 0);
  return {static_cast<double>(element_bytes(p.params)), static_cast<double>(element_bytes(p.grads)), optimizer};
}

ModelStateBytes zero_model_states(double psi, int zero_stage, int n, const ModelStateBytes& per_param) {
  if (n < 1) throw SpecError("parallel.dp", fmt::format("data-parallel size {} must be >= 1", n));
  ModelStateBytes m{per_param.params * psi, per_param.grads * psi, per_param.optimizer * psi};
  switch (zero_stage) {
    case 3:
      m.params /= n;
      [[fallthrough]];
    case 2:
      m.grads /= n;
      [[fallthrough]];
    case 1:
      m.optimizer /= n;
      [[fallthrough]];
    case 0:
      return m;
    default:
      throw SpecError("parallel.zero_stage", fmt::format("parallel.zero_stage={} must be 0, 1, 2 or 3", zero_stage));
  }
}

ModelStateBytes zero_model_states(double psi, int zero_stage, int n, Dtype dtype) {
  const FrameworkPrecision paper = framework_precision(Framework::deepspeed, dtype);
  return zero_model_states(psi, zero_stage, n, model_state_bytes_per_param(paper));
}

ModelStateBytes zeropp_model_states(double psi_stage, int z, int d, bool hybrid_b, const ModelStateBytes& per_param) {
  if (z < 1) throw SpecError("parallel.z", fmt::format("parallel.z={} must be >= 1", z));
  if (d < 1) throw SpecError("parallel.dp", fmt::format("parallel.dp={} must be >= 1", d));
  // ZeRO-3 inside the node; across nodes the shard is replicated (A) or its optimizer states split (B).
  ModelStateBytes m = zero_model_states(psi_stage, 3, z, per_param);
  if (hybrid_b) m.optimizer /= d;
  return m;
}

ModelStateBytes zeropp_model_states(double psi_stage, int z, int d, bool hybrid_b, Dtype dtype) {
  return zeropp_model_states(psi_stage, z, d, hybrid_b,
                             model_state_bytes_per_param(framework_precision(Framework::zeropp, dtype)));
}

double activation_bytes_per_layer(const ModelSpec& model, const ActivationOptions& o) {
  check_options(o);
  const double e = element_bytes(o.dtype);
  const double t = o.tp;
  const double sb = static_cast<double>(model.seq_len) * o.b;
  const bool sp = o.sequence_parallel && o.tp > 1;
  if (o.recompute == Recompute::full) return sb * e * model.hidden / (sp ? t : 1.0);
  const StoredPerToken st = stored_per_token(model, e, linear_input_bytes(o, e));
  double per_token = st.replicated / (sp ? t : 1.0) + st.split / t;
  if (o.recompute == Recompute::none || !st.core_recomputed) per_token += st.core * model.heads / t;
  return sb * per_token;
}

SplitActivation split_activation_bytes_per_layer(const ModelSpec& model, const ActivationOptions& o) {
  check_options(o);
  const double e = element_bytes(o.dtype);
  const double t = o.tp;
  const double sb = static_cast<double>(model.seq_len) * o.b;
  const bool sp = o.sequence_parallel && o.tp > 1;
  const double h = model.hidden;
  const double q = static_cast<double>(model.kv_heads_or_heads()) * model.head_dim();
  const double f = model.ffn();
  const double n_up = model.mlp == MlpKind::swiglu ? 2 : 1;
  // Each weight matmul's W needs its input and its output gradient. Without SP, TP replicates the inputs of
  // the column-parallel layers (QKV, up) and the output gradients of the row-parallel ones (proj, down).
  // In bytes: the inputs at x (FP8 with TransformerEngine), the output gradients at e.
  const double x = linear_input_bytes(o, e);
  const double replicated = x * h       // QKV input
                            + e * h     // projection output gradient
                            + x * h     // up (and gate) input, shared
                            + e * h;    // down output gradient
  const double split = e * (h + 2 * q)  // QKV output gradient
                       + x * h          // projection input (its FP8 copy, or the bf16 one)
                       + e * n_up * f   // up (and gate) output gradients
                       + x * f;         // down input
  SplitActivation a;
  a.until_b = activation_bytes_per_layer(model, o);
  a.until_w = sb * (replicated / (sp ? t : 1.0) + split / t);
  return a;
}

double first_stage_extra_activation_bytes(const ModelSpec& model, const ActivationOptions& o) {
  check_options(o);
  if (!model.has_dropout()) return 0;
  const bool sp = o.sequence_parallel && o.tp > 1;
  return kMaskBytes * model.seq_len * o.b * static_cast<double>(model.hidden) / (sp ? o.tp : 1);
}

double last_stage_extra_activation_bytes(const ModelSpec& model, const ActivationOptions& o) {
  check_options(o);
  const double e = element_bytes(o.dtype);
  const bool sp = o.sequence_parallel && o.tp > 1;
  const double sb = static_cast<double>(model.seq_len) * o.b;
  const double norm_and_head_inputs = 2 * e * sb * model.hidden / (sp ? o.tp : 1);
  const double fp32_logits = 4.0 * sb * model.vocab / o.tp;
  return norm_and_head_inputs + fp32_logits;
}

int in_flight_chunk_microbatches(ScheduleKind kind, int p, int v, int r, int B, int U) {
  if (p < 1) throw SpecError("parallel.pp", fmt::format("parallel.pp={} must be >= 1", p));
  if (v < 1) throw SpecError("parallel.v", fmt::format("parallel.v={} must be >= 1", v));
  if (B < 1) throw SpecError("parallel.micro_batches", fmt::format("parallel.micro_batches={} must be >= 1", B));
  if (U < 1) throw SpecError("parallel.unit", fmt::format("parallel.unit={} must be >= 1", U));
  if (r < 0 || r >= p) throw SpecError("parallel.pp", fmt::format("PP rank {} is outside [0, pp = {})", r, p));
  switch (kind) {
    case ScheduleKind::gpipe:
      return B * v;
    case ScheduleKind::one_f_one_b:
      return std::min(p - r, B) * v;
    case ScheduleKind::interleaved:
      return std::min((v - 1) * p + 2 * (p - 1 - r) + 1, B * v);
    case ScheduleKind::bfs:
      return B * v;
    case ScheduleKind::zb_h1:
      return std::min(p, B) * v;
    case ScheduleKind::zb_h2:
      return std::min(2 * p - 1, B) * v;
    case ScheduleKind::zeropp: {
      const int u = std::min(U, B);
      return std::min(2 * (p - 1 - r) + (v - 1) * u + 1, u * v);
    }
  }
  return B * v;
}

namespace {

ModelStateBytes plan_model_states(const ParallelSpec& par, const DataParallelSync& sync,
                                  const ModelStateBytes& per_param, double psi) {
  const int replicas = par.z * par.dp * par.cp;  // CP ranks hold copies too (strategy.hpp)
  if (sync.gather == ParamGather::none) return zero_model_states(psi, par.zero_stage, replicas, per_param);
  // zero3: ZeRO-3 over its shard group (every data-parallel GPU, or HSDP's z*cp*dp_shard).
  if (sync.shard_spans_dp) return zero_model_states(psi, 3, sync.shard_group, per_param);
  // ZeRO-3 in the z group; the optimizer states also split across dp (and cp) with ZeRO-1 (hybrid B).
  return zeropp_model_states(psi, par.z, par.dp * par.cp, par.zero_stage >= 1, per_param);
}

// Gathered parameters (in the compute dtype) and unsharded gradients awaiting their reduce-scatter (in the
// reduce dtype: FSDP2 casts its bf16 gradients to fp32 for the reduce-scatter) of the ZeRO-3 strategies.
double plan_buffers(const Plan& plan, const DataParallelSync& sync, const FrameworkPrecision& precision,
                    std::int64_t per_layer, const StageParams& rank) {
  const ParallelSpec& par = plan.parallel;
  // Gathered parameters as held (FP8 all-gather, TE's FP8 copies: fp8_cost.hpp).
  const double param_bytes = held_bytes_per_gathered_param(plan, element_bytes(precision.gather));
  const double grad_bytes = element_bytes(precision.reduce);
  const double psi = static_cast<double>(rank.total());
  const double chunk = psi / par.v;
  if (sync.gather == ParamGather::none) return 0;  // the full gradient buffer is the model state's `grads`
  if (sync.layer_wise) {
    // Pure ZeRO-3: layer-by-layer gather with one layer prefetched; the embedding is the largest unit when
    // V > 12h.
    const double unit = static_cast<double>(std::max<std::int64_t>(per_layer, std::max(rank.embedding, rank.head)));
    return 2 * param_bytes * unit + grad_bytes * unit;
  }
  // FSDP2 under PP: every chunk of the rank stays gathered through the iteration and accumulates its gradients
  // unsharded until the one reduce-scatter after its last backward (strategy.hpp).
  if (sync.gather == ParamGather::per_iteration) return param_bytes * psi + grad_bytes * psi;
  if (sync.gather == ParamGather::per_unit) {
    // ZeroPP: one chunk gathered at a time; per-unit reduction keeps every chunk's full gradient until the
    // unit's reduce-scatter, per-W reduction only the chunk being reduced.
    return param_bytes * chunk + grad_bytes * (par.grad_reduce == GradReduce::per_unit ? psi : chunk);
  }
  // Naive ZeRO-3 under PP: one chunk's parameters and gradients at a time.
  return param_bytes * chunk + grad_bytes * chunk;
}

}  // namespace

namespace {

// The rank-independent activation terms of a plan, worked out once.
struct PlanActivations {
  PipelineParams params;   // the split of the layers and the parameter counts per TP rank
  DataParallelSync sync;   // data_parallel_sync(parallel)
  FrameworkPrecision precision;
  ModelStateBytes per_param;  // model-state bytes of one parameter
  double bytes_per_layer = 0;  // activations of one layer, one micro-batch
  double rebuilt = 0;      // with recomputation: the one layer rebuilt at a time during a backward
  double first_extra = 0;  // per micro-batch on the first virtual stage
  double last_extra = 0;   // per micro-batch on the last virtual stage
};

PlanActivations plan_activations(const Plan& plan, const PlanBasics& basics) {
  const ParallelSpec& par = plan.parallel;
  const ActivationOptions opt{par.micro_batch, par.tp,    par.sequence_parallel, par.recompute,
                              par.dtype,       fp8_saves_fp8_inputs(par)};
  PlanActivations a;
  a.params = basics.params;
  a.sync = basics.sync;
  a.precision = basics.precision;
  a.per_param = model_state_bytes_per_param(a.precision);
  // A CP rank stores the activations of its s/cp tokens (flash attention: no s x s term to keep whole; the ring's
  // KV blocks in flight live only inside the attention kernel's step and are not counted).
  std::optional<ModelSpec> cp_copy;
  const ModelSpec& local = cp_rank_model(plan.model, par.cp, cp_copy);
  a.bytes_per_layer = activation_bytes_per_layer(local, opt);
  const double kept = a.bytes_per_layer;
  if (par.recompute != Recompute::none) {
    ActivationOptions all = opt;
    all.recompute = Recompute::none;
    a.rebuilt = activation_bytes_per_layer(local, all) - kept;
  }
  a.first_extra = first_stage_extra_activation_bytes(local, opt);
  a.last_extra = last_stage_extra_activation_bytes(local, opt);
  return a;
}

MemoryBytes rank_memory(const Plan& plan, const PlanActivations& act, int pp_rank) {
  const ParallelSpec& par = plan.parallel;
  const int p = par.pp, v = par.v;
  const StageParams rank = act.params.rank(pp_rank);

  MemoryBytes mem;
  const ModelStateBytes states = plan_model_states(par, act.sync, act.per_param, static_cast<double>(rank.total()));
  mem.params = states.params + fp8_state_bytes(plan, act.params.layout.rank_layers(pp_rank));
  mem.grads = states.grads;
  mem.optimizer = states.optimizer;

  const int in_flight = in_flight_chunk_microbatches(par.schedule, p, v, pp_rank, par.micro_batches, par.unit);
  // A chunk micro-batch of this rank: its chunks' layers (the most, when a cut makes one lighter) x bytes per layer.
  const double per_chunk = act.params.layout.chunk_layers(pp_rank) * act.bytes_per_layer;
  mem.activations = in_flight * per_chunk + act.rebuilt;
  // The first and the last chunk hold their extras for their share of the in-flight sets.
  const double per_chunk_in_flight = static_cast<double>((in_flight + v - 1) / v);
  if (pp_rank == 0) mem.activations += per_chunk_in_flight * act.first_extra;
  if (pp_rank == p - 1) mem.activations += per_chunk_in_flight * act.last_extra;

  mem.buffers = plan_buffers(plan, act.sync, act.precision, act.params.per_layer, rank);
  mem.peak = mem.params + mem.grads + mem.optimizer + mem.activations + mem.buffers;
  return mem;
}

}  // namespace

MemoryBytes memory_bytes(const Plan& plan, int pp_rank) {
  return rank_memory(plan, plan_activations(plan, plan_basics(plan)), pp_rank);
}

std::vector<MemoryBytes> memory_bytes_by_rank(const Plan& plan) {
  const PlanActivations act = plan_activations(plan, plan_basics(plan));
  std::vector<MemoryBytes> out;
  out.reserve(static_cast<std::size_t>(plan.parallel.pp));
  for (int r = 0; r < plan.parallel.pp; ++r) out.push_back(rank_memory(plan, act, r));
  return out;
}

MemoryBytes memory_bytes(const Plan& plan) { return memory_bytes(plan, plan_basics(plan)); }

MemoryBytes memory_bytes(const Plan& plan, const PlanBasics& basics) {
  // Activations fall with the rank (or stay level), the embedding sits on the first rank and the head on the
  // last: the peak is on the first or the last rank, or, when the split makes the ends lighter, on the second
  // (the middle ranks hold the same layers and the second holds the most in flight of them).
  const PlanActivations act = plan_activations(plan, basics);
  MemoryBytes most = rank_memory(plan, act, 0);
  if (plan.parallel.pp == 1) return most;
  const MemoryBytes last = rank_memory(plan, act, plan.parallel.pp - 1);
  if (last.peak > most.peak) most = last;
  if (!act.params.layout.even() && plan.parallel.pp > 2) {
    const MemoryBytes second = rank_memory(plan, act, 1);
    if (second.peak > most.peak) most = second;
  }
  return most;
}

}  // namespace zeropp::analytic
