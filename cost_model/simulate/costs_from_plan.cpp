#include "cost_model/simulate/costs_from_plan.hpp"

#include <optional>

#include "cost_model/analytic/collectives.hpp"
#include "cost_model/analytic/contention.hpp"
#include "cost_model/analytic/fp8_cost.hpp"
#include "cost_model/analytic/memory.hpp"
#include "cost_model/analytic/params.hpp"
#include "cost_model/analytic/stage_balance.hpp"
#include "cost_model/analytic/time_model.hpp"
#include "cost_model/analytic/zero3_execution.hpp"
#include "cost_model/simulate/per_layer.hpp"
#include "cost_model/spec/context_parallel.hpp"
#include "cost_model/spec/framework.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::simulate {

ActionCosts costs_from_plan(const Plan& plan) {
  const ModelSpec& m = plan.model;
  const ParallelSpec& par = plan.parallel;
  const ClusterSpec& c = plan.cluster;
  const analytic::ActionCosts a = analytic::action_costs(plan);
  const int p = par.pp, v = par.v, t = par.tp, S = p * v;
  const double e = analytic::element_bytes(par.dtype);
  // a's per-chunk seconds are for a.layers_per_chunk layers (the largest virtual stage); each stage scales them
  // by its own layers (all the same with an even split).
  const StageLayout layout = stage_layout(m, par);
  const analytic::PipelineParams params = analytic::pipeline_params(m, layout, t);

  analytic::ActivationOptions act;
  act.b = par.micro_batch;
  act.tp = t;
  act.sequence_parallel = par.sequence_parallel;
  act.dtype = par.dtype;
  act.fp8_inputs = analytic::fp8_saves_fp8_inputs(par);
  act.recompute = Recompute::none;
  // Activations and messages of a CP rank's s/cp tokens (spec/context_parallel.hpp).
  std::optional<ModelSpec> cp_copy;
  const ModelSpec& local = cp_rank_model(m, par.cp, cp_copy);
  const analytic::SplitActivation full = analytic::split_activation_bytes_per_layer(local, act);
  const double first_extra = analytic::first_stage_extra_activation_bytes(local, act);
  const double last_extra = analytic::last_stage_extra_activation_bytes(local, act);
  act.recompute = par.recompute;
  const double kept = analytic::activation_bytes_per_layer(local, act);

  const DataParallelSync dps = data_parallel_sync(par);
  // Parameters travel and are gathered in the compute dtype; gradients are reduced (and wait unsharded for
  // their reduce-scatter) in the framework's reduce dtype.
  const FrameworkPrecision precision = framework_precision(par);
  const double param_bytes = analytic::element_bytes(precision.gather);
  // On the wire and as held while gathered, with FP8 (analytic/fp8_cost.hpp); param_bytes without.
  const double wire_bytes = analytic::gather_wire_bytes_per_param(plan, param_bytes);
  const double held_bytes = analytic::held_bytes_per_gathered_param(plan, param_bytes);
  const double grad_bytes = analytic::element_bytes(precision.reduce);
  const bool is_sharded = dps.shard_group > 1;
  const double layer_params = static_cast<double>(analytic::layer_params_per_tp_rank(m, t).total());
  const analytic::Group zg = analytic::shard_group(par);
  const analytic::Group dg = analytic::dp_sync_group(par);
  const bool dp_reduce_scatter = dps.mode == DpSyncMode::reduce_scatter;
  const double message = e * par.micro_batch * static_cast<double>(local.seq_len) * m.hidden / t;  // b*s*h / t

  ActionCosts costs;
  costs.stages.resize(S);
  for (int vs = 0; vs < S; ++vs) {
    StageCost& s = costs.stages[vs];
    const bool first = vs == 0, last = vs == S - 1;
    const int layers = layout.stage_layers(vs);
    const double k = analytic::stage_share(layout, vs, a.layers_per_chunk);
    s.f = k * (a.f + a.tp_f) + (first ? a.embed_tp_f : 0) + (last ? a.head_f + a.head_tp_f : 0);
    s.b = k * (a.b + a.tp_b) + (last ? a.head_b + a.head_tp_b : 0);
    s.w = k * a.w + (last ? a.head_w : 0);
    s.bw = s.b + s.w;
    s.recompute = k * (a.recompute + a.tp_recompute);
    s.send_f = {a.p2p, message};
    s.send_b = {a.p2p, message};

    const double stage_params = static_cast<double>(params.stage(vs).total());
    if (is_sharded) {
      const double gathered = wire_bytes * stage_params, grads = grad_bytes * stage_params;
      // As the framework executes them (analytic/zero3_execution.hpp, as the closed form): copies on the compute
      // stream are in a.f / a.b where the unit is gathered per micro-batch, else they follow the gather / precede
      // the reduce-scatter.
      const analytic::Zero3Seconds z3 = analytic::zero3_seconds(plan, zg, stage_params, layer_params);
      const bool per_unit = dps.gather == ParamGather::per_unit || dps.gather == ParamGather::per_iteration;
      s.unshard = {z3.gather + (per_unit ? z3.forward_copies : 0), gathered};
      s.reduce_grad = {z3.reduce_scatter + (per_unit ? z3.backward_copies - z3.forward_copies : 0), grads};
      s.gathered_param_bytes = held_bytes * stage_params;
      s.grad_buffer_bytes = grads;
    }
    if (dg.size > 1) {
      const double bytes = grad_bytes * stage_params / dps.grad_shard;
      const auto kind = dp_reduce_scatter ? analytic::Collective::reduce_scatter : analytic::Collective::all_reduce;
      s.dp_sync = {analytic::collective_time(c, kind, dg.size, dg.stride, bytes), bytes};
      s.dp_sync_buckets = dp_sync_buckets(par, vs, stage_params, layers);
    }

    const double extra = (first ? first_extra : 0) + (last ? last_extra : 0);
    const double lc = layers;
    s.activation_bytes = lc * full.until_b + extra;
    s.checkpoint_bytes = lc * kept + extra;
    // One layer at a time. With flash attention selective recomputation keeps everything in this memory model
    // (kept = until_b); its RECOMPUTE still costs what the framework reruns (analytic::action_costs).
    s.recompute_bytes = full.until_b - kept;
    s.w_buffer_bytes = lc * full.until_w;
  }

  // Naive ZeRO-3 under PP gathers a stage before every F and B: one gathered stage in use and the next one
  // prefetched, as FSDP's and DeepSpeed's prefetch depth of one unit (per_layer.hpp, kDefaultPrefetch; DeepSpeed
  // also caps what is live: stage3_max_live_parameters). Without the cap the simulator would start every gather
  // of the warm-up at once and hold them all, which neither framework does.
  if (dps.gather == ParamGather::per_micro_batch && !dps.shard_spans_dp) costs.gathered_limit = 1 + kDefaultPrefetch;
  costs.contention = analytic::contention_share(c, analytic::CommKernel::nccl);
  costs.static_bytes.resize(p);
  costs.opt_step.resize(p);
  const std::vector<analytic::MemoryBytes> memory = analytic::memory_bytes_by_rank(plan);
  for (int rank = 0; rank < p; ++rank) {
    const analytic::MemoryBytes& mem = memory[rank];
    costs.static_bytes[rank] = mem.params + mem.grads + mem.optimizer;
    // The dp-sharded optimizer all-gathers the updated parameter shard; the end ranks all-reduce the tied
    // embedding's gradient copies.
    double bytes = 0;
    if (dg.size > 1 && dp_reduce_scatter) {
      bytes = param_bytes * static_cast<double>(params.rank(rank).total()) / dps.grad_shard;
    }
    costs.opt_step[rank] = {a.opt_step + after_step_seconds(plan, a, rank), bytes};
  }
  return costs;
}

double after_step_seconds(const Plan& plan, const analytic::ActionCosts& a, int rank) {
  const int p = plan.parallel.pp;
  const bool embedding_end = p > 1 && (rank == 0 || rank == p - 1);
  return a.dp_after_step + (embedding_end ? a.embedding_sync : 0);
}

}  // namespace zeropp::simulate
