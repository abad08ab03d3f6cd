#include "cost_model/simulate/costs_from_plan.hpp"

#include "cost_model/analytic/collectives.hpp"
#include "cost_model/analytic/memory.hpp"
#include "cost_model/analytic/params.hpp"
#include "cost_model/analytic/time_model.hpp"

namespace zeropp::simulate {

namespace {

bool is_zeropp(Strategy s) { return s == Strategy::zeropp_a || s == Strategy::zeropp_b; }

// Whether the stage's parameters live sharded in a ZeRO-3 group (gathered for use), and that group.
bool sharded(const ParallelSpec& par) {
  if (par.strategy == Strategy::zero3) return par.z * par.dp > 1;
  return (is_zeropp(par.strategy) || par.strategy == Strategy::zero3_pp) && par.z > 1;
}
analytic::Group shard_group(const ParallelSpec& par) {
  return par.strategy == Strategy::zero3 ? analytic::data_parallel_group(par) : analytic::zero_group(par);
}

// The replicas a stage's gradient (shard) is synchronised across after the backward, and how many ways the
// stage's parameters are split before that.
struct DpSync {
  analytic::Group group;
  double shard = 1;
  bool reduce_scatter = false;  // a dp-sharded optimizer (ZeRO-1/2, hybrid B): reduce-scatter + all-gather
};
DpSync dp_sync_of(const ParallelSpec& par) {
  switch (par.strategy) {
    case Strategy::three_d:
    case Strategy::pp_zero1: return {analytic::data_parallel_group(par), 1, par.zero_stage >= 1};
    case Strategy::zeropp_a:
    case Strategy::zeropp_b:
    case Strategy::zero3_pp:
      return {analytic::dp_group(par), static_cast<double>(par.z),
              par.strategy == Strategy::zeropp_b || (par.strategy == Strategy::zero3_pp && par.zero_stage > 0)};
    case Strategy::zero3: break;  // reduce-scattered in the ZeRO-3 group after every W
  }
  return {};
}

}  // namespace

schedule::ScheduleConfig schedule_for(const Plan& plan) {
  const ParallelSpec& par = plan.parallel;
  schedule::ScheduleConfig cfg;
  cfg.kind = par.schedule;
  cfg.pp = par.pp;
  cfg.v = par.v;
  cfg.microbatches = par.micro_batches;
  cfg.unit = par.schedule == ScheduleKind::zeropp ? par.unit : 0;
  cfg.split_backward = par.schedule == ScheduleKind::zb_h1 || par.schedule == ScheduleKind::zb_h2 ||
                       par.schedule == ScheduleKind::zeropp;
  cfg.recompute = par.recompute != Recompute::none;
  return cfg;
}

schedule::LoweringOptions lowering_for(const Plan& plan) {
  const ParallelSpec& par = plan.parallel;
  schedule::LoweringOptions opts;
  if (sharded(par)) {
    const bool per_unit = is_zeropp(par.strategy);
    opts.shard = per_unit ? schedule::ShardPolicy::per_unit : schedule::ShardPolicy::per_microbatch;
    opts.grad_reduce = per_unit ? par.grad_reduce : GradReduce::per_w;
  }
  opts.dp_sync = dp_sync_of(par).group.size > 1;
  return opts;
}

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

  const bool is_sharded = sharded(par);
  const analytic::Group zg = shard_group(par);
  const DpSync dp = dp_sync_of(par);
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

    const double params = e * static_cast<double>(analytic::virtual_stage_params(m, p, v, vs, t).total());
    if (is_sharded) {
      s.unshard = {analytic::collective_time(c, analytic::Collective::all_gather, zg.size, zg.stride, params), params};
      s.reduce_grad = {analytic::collective_time(c, analytic::Collective::reduce_scatter, zg.size, zg.stride, params),
                       params};
      s.gathered_param_bytes = params;
      s.grad_buffer_bytes = params;
    }
    if (dp.group.size > 1) {
      const double bytes = params / dp.shard;
      const auto kind = dp.reduce_scatter ? analytic::Collective::reduce_scatter : analytic::Collective::all_reduce;
      s.dp_sync = {analytic::collective_time(c, kind, dp.group.size, dp.group.stride, bytes), bytes};
    }

    const double extra = (first ? first_extra : 0) + (last ? last_extra : 0);
    s.activation_bytes = lc * full.until_b + extra;
    s.checkpoint_bytes = lc * kept + extra;
    s.w_buffer_bytes = lc * full.until_w;
  }

  costs.static_bytes.resize(p);
  costs.opt_step.resize(p);
  for (int r = 0; r < p; ++r) {
    const analytic::MemoryBytes mem = analytic::memory_bytes(plan, r);
    costs.static_bytes[r] = mem.params + mem.grads + mem.optimizer;
    // The dp-sharded optimizer all-gathers the updated parameter shard; the end ranks all-reduce the tied
    // embedding's gradient copies.
    double bytes = 0;
    if (dp.group.size > 1 && dp.reduce_scatter) {
      bytes = e * static_cast<double>(analytic::rank_params(m, p, v, r, t).total()) / dp.shard;
    }
    const bool embedding_end = p > 1 && (r == 0 || r == p - 1);
    costs.opt_step[r] = {a.opt_step + a.dp_after_step + (embedding_end ? a.embedding_sync : 0), bytes};
  }
  return costs;
}

}  // namespace zeropp::simulate
