#include "cost_model/schedule/plan_program.hpp"

namespace zeropp::schedule {

ScheduleConfig schedule_for(const Plan& plan) {
  const ParallelSpec& par = plan.parallel;
  ScheduleConfig cfg;
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

LoweringOptions lowering_for(const Plan& plan) {
  const ParallelSpec& par = plan.parallel;
  const DataParallelSync d = data_parallel_sync(par);
  LoweringOptions opts;
  if (d.shard_group > 1) {
    switch (d.gather) {
      case ParamGather::per_unit:
        opts.shard = ShardPolicy::per_unit;
        opts.grad_reduce = par.grad_reduce;
        break;
      case ParamGather::per_iteration:
        // FSDP2 under PP: a unit is the whole iteration (the schedule's unit is 0), so one REDUCE_GRAD per stage.
        opts.shard = ShardPolicy::per_iteration;
        opts.grad_reduce = GradReduce::per_unit;
        break;
      default:
        opts.shard = ShardPolicy::per_microbatch;
        opts.grad_reduce = GradReduce::per_w;
        break;
    }
  }
  opts.dp_sync = d.mode != DpSyncMode::none;
  opts.dp_sync_overlap = par.overlap_grad_reduce;
  return opts;
}

Program program_for(const Plan& plan) {
  LoweringOptions lowering = lowering_for(plan);
  lowering.check_input = false;  // generate()'s own output (LoweringOptions::check_input)
  return lower(generate(schedule_for(plan)), lowering);
}

PlanProgram build_plan_program(const Plan& plan) {
  validate(plan.parallel);
  PlanProgram out;
  out.schedule = schedule_for(plan);
  out.lowering = lowering_for(plan);
  out.data_parallel = data_parallel_sync(plan.parallel);
  out.layout = stage_layout(plan.model, plan.parallel);
  out.program = lower(generate(out.schedule), out.lowering);
  return out;
}

}  // namespace zeropp::schedule
