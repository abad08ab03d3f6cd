#pragma once
// From a Plan to the per-rank programs the runtime walks and to what its ZeRO actions mean.
// The schedule and lowering options are the simulator's own (cost_model/simulate/costs_from_plan.hpp:
// schedule_for, lowering_for), generated and lowered by cost_model/schedule, so the trainer and the simulator
// execute the same action lists for a plan. Per strategy:
//   pp_zero1, three_d  the spec's schedule (1f1b, interleaved, gpipe, ...); parameters replicated in the
//                      pipeline; DP_SYNC reduce-scatters over dp (zero_stage >= 1) or all-reduces (0).
//   zeropp_a/_b        the zeropp schedule with unit U; UNSHARD/RESHARD per unit in the z group; REDUCE_GRAD per
//                      unit or per W (spec.grad_reduce); DP_SYNC all-reduces the shard over dp (A) or
//                      reduce-scatters it, with a parameter all-gather after the step (B).
//   zero3_pp, zero3    the spec's schedule; UNSHARD/RESHARD around every micro-batch's F and B, REDUCE_GRAD
//                      after every W (naive ZeRO-3); zero3 has pp = 1.
#include "cost_model/schedule/generate.hpp"
#include "cost_model/spec/config.hpp"

namespace zeropp::e2e {

enum class DpSyncMode {
  all_reduce,      // every dp rank keeps the whole (shard of the) gradient and optimizer state
  reduce_scatter,  // ZeRO-1 across dp: reduce-scatter, step on 1/dp, all-gather the parameters
};

struct PlanProgram {
  schedule::Program program;
  schedule::ScheduleConfig schedule;
  schedule::LoweringOptions lowering;
  bool sharded = false;  // parameters sharded over the z group (UNSHARD/RESHARD/REDUCE_GRAD present)
  DpSyncMode dp_mode = DpSyncMode::all_reduce;
};

// Throws SpecError("parallel.<field>") for a combination the runtime does not execute, std::invalid_argument
// (from the generator) for an impossible schedule shape.
PlanProgram build_plan_program(const Plan&);

}  // namespace zeropp::e2e
