#pragma once
// What the closed forms of one plan (comm_volume, memory, time_model) each ask first, worked out once per plan
// evaluation: estimate() builds it and hands it to comm_bytes, memory_bytes and action_costs, whose one-argument
// forms build their own. A plain cache of values the plan determines: each form computes the same numbers from it.
#include "cost_model/analytic/params.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/framework.hpp"
#include "cost_model/spec/stage_layout.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::analytic {

struct PlanBasics {
  PipelineParams params;         // the split of the layers (params.layout) and the parameter counts per TP rank
  DataParallelSync sync;         // data_parallel_sync(parallel)
  FrameworkPrecision precision;  // framework_precision(parallel)
};

inline PlanBasics plan_basics(const Plan& plan) {
  const ParallelSpec& par = plan.parallel;
  return {pipeline_params(plan.model, stage_layout(plan.model, par), par.tp), data_parallel_sync(par),
          framework_precision(par)};
}

}  // namespace zeropp::analytic
