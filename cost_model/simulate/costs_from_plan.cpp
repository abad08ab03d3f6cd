#include "cost_model/simulate/costs_from_plan.hpp"

#include "cost_model/analytic/collectives.hpp"
#include "cost_model/analytic/contention.hpp"
#include "cost_model/analytic/memory.hpp"
#include "cost_model/analytic/params.hpp"
#include "cost_model/analytic/time_model.hpp"
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
  const double lc = analytic::layers_per_virtual_stage(m, p, v);

  analytic::ActivationOptions act;
  act.b = par.micro_batch;
  act.tp = t;
  act.sequence_parallel = par.sequence_parallel;
  act.dtype = par.dtype;
  act.recompute = Recompute::none;
  const analytic::SplitActivation full = analytic::split_activation_bytes_per_layer(m, act);
  const double first_extra = analytic::first_stage_extra_activation_bytes(m, act);
  const double last_extra = analytic::last_stage_extra_activation_bytes(m, act);
  act.recompute = par.recompute;
  const double kept = analytic::activation_bytes_per_layer(m, act);

  const DataParallelSync dps = data_parallel_sync(par);
  // Parameters travel and are gathered in the compute dtype; gradients are reduced (and wait unsharded for
  // their reduce-scatter) in the framework's reduce dtype.
  const FrameworkPrecision precision = framework_precision(par);
  const double param_bytes = analytic::element_bytes(precision.gather);
  const double grad_bytes = analytic::element_bytes(precision.reduce);
  const bool is_sharded = dps.shard_group > 1;
  const analytic::Group zg = analytic::shard_group(par);
  const analytic::Group dg = analytic::dp_sync_group(par);
  const bool dp_reduce_scatter = dps.mode == DpSyncMode::reduce_scatter;
  const double message = e * par.micro_batch * static_cast<double>(m.seq_len) * m.hidden / t;  // b*s*h / t

  ActionCosts costs;
  costs.stages.resize(S);
  for (int vs = 0; vs < S; ++vs) {
    StageCost& s = costs.stages[vs];
    const bool first = vs == 0, last = vs == S - 1;
    s.f = a.f + a.tp_f + (first ? a.embed_tp_f : 0) + (last ? a.head_f + a.head_tp_f : 0);
    s.b = a.b + a.tp_b + (last ? a.head_b + a.head_tp_b : 0);
    s.w = a.w + (last ? a.head_w : 0);
    s.bw = s.b + s.w;
    s.recompute = a.recompute + a.tp_recompute;
    s.send_f = {a.p2p, message};
    s.send_b = {a.p2p, message};

    const double params = static_cast<double>(analytic::virtual_stage_params(m, p, v, vs, t).total());
    if (is_sharded) {
      const double gathered = param_bytes * params, grads = grad_bytes * params;
      s.unshard = {analytic::collective_time(c, analytic::Collective::all_gather, zg.size, zg.stride, gathered),
                   gathered};
      s.reduce_grad = {analytic::collective_time(c, analytic::Collective::reduce_scatter, zg.size, zg.stride, grads),
                       grads};
      s.gathered_param_bytes = gathered;
      s.grad_buffer_bytes = grads;
    }
    if (dg.size > 1) {
      const double bytes = grad_bytes * params / dps.grad_shard;
      const auto kind = dp_reduce_scatter ? analytic::Collective::reduce_scatter : analytic::Collective::all_reduce;
      s.dp_sync = {analytic::collective_time(c, kind, dg.size, dg.stride, bytes), bytes};
      s.dp_sync_buckets = dp_sync_buckets(par, vs, params, static_cast<int>(lc));
    }

    const double extra = (first ? first_extra : 0) + (last ? last_extra : 0);
    s.activation_bytes = lc * full.until_b + extra;
    s.checkpoint_bytes = lc * kept + extra;
    // One layer at a time. With flash attention selective recomputation keeps everything in this memory model
    // (kept = until_b); its RECOMPUTE still costs what the framework reruns (analytic::action_costs).
    s.recompute_bytes = full.until_b - kept;
    s.w_buffer_bytes = lc * full.until_w;
  }

  costs.contention = analytic::contention_share(c, analytic::CommKernel::nccl);
  costs.static_bytes.resize(p);
  costs.opt_step.resize(p);
  for (int rank = 0; rank < p; ++rank) {
    const analytic::MemoryBytes mem = analytic::memory_bytes(plan, rank);
    costs.static_bytes[rank] = mem.params + mem.grads + mem.optimizer;
    // The dp-sharded optimizer all-gathers the updated parameter shard; the end ranks all-reduce the tied
    // embedding's gradient copies.
    double bytes = 0;
    if (dg.size > 1 && dp_reduce_scatter) {
      bytes = param_bytes * static_cast<double>(analytic::rank_params(m, p, v, rank, t).total()) / dps.grad_shard;
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
