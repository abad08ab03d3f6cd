#include "e2e/runtime/plan_program.hpp"

#include <fmt/format.h>

#include "cost_model/simulate/costs_from_plan.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/names.hpp"

namespace zeropp::e2e {

PlanProgram build_plan_program(const Plan& plan) {
  const ParallelSpec& p = plan.parallel;
  PlanProgram out;
  const bool zeropp = p.strategy == Strategy::zeropp_a || p.strategy == Strategy::zeropp_b;
  const bool naive_zero3 = p.strategy == Strategy::zero3 || p.strategy == Strategy::zero3_pp;
  if (zeropp && p.schedule != ScheduleKind::zeropp)
    throw SpecError("parallel.schedule", fmt::format("strategy {} runs the zeropp schedule, not {}",
                                                     to_string(p.strategy), to_string(p.schedule)));
  if (!zeropp && p.schedule == ScheduleKind::zeropp)
    throw SpecError("parallel.schedule",
                    fmt::format("the zeropp schedule needs strategy zeropp_a or zeropp_b, not {}", to_string(p.strategy)));
  if (p.strategy == Strategy::zero3 && p.pp != 1)
    throw SpecError("parallel.pp", fmt::format("strategy zero3 is pure data parallelism: pp={} must be 1", p.pp));
  if ((zeropp || naive_zero3) && p.tp != 1)
    throw SpecError("parallel.tp", fmt::format("strategy {} shards over z, not tp: tp={} must be 1", to_string(p.strategy), p.tp));
  if (!(zeropp || naive_zero3) && p.z != 1)
    throw SpecError("parallel.z", fmt::format("strategy {} has no ZeRO-3 group: z={} must be 1", to_string(p.strategy), p.z));

  out.schedule = simulate::schedule_for(plan);
  out.lowering = simulate::lowering_for(plan);
  const schedule::LoweringOptions& lo = out.lowering;
  out.sharded = lo.shard != schedule::ShardPolicy::none;

  if (p.strategy == Strategy::zeropp_a) out.dp_mode = DpSyncMode::all_reduce;
  else if (p.strategy == Strategy::zeropp_b) out.dp_mode = DpSyncMode::reduce_scatter;
  else out.dp_mode = p.zero_stage == 0 ? DpSyncMode::all_reduce : DpSyncMode::reduce_scatter;

  out.program = schedule::lower(schedule::generate(out.schedule), lo);
  return out;
}

}  // namespace zeropp::e2e
