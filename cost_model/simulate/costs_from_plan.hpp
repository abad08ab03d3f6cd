#pragma once
// The simulator's inputs for a Plan, from the analytic model: the cost of every action of the program
// schedule::build_plan_program (cost_model/schedule/plan_program.hpp) makes for it (analytic::action_costs for seconds,
// the parameter and activation formulas for bytes).
#include "cost_model/analytic/time_model.hpp"
#include "cost_model/simulate/costs.hpp"
#include "cost_model/spec/config.hpp"

namespace zeropp::simulate {

// Per virtual stage: compute seconds (layers, + LM head on the last stage, TP collectives inside), p2p of one
// b*s*h activation, gather / reduce-scatter of the stage's parameters in the ZeRO-3 group, DP sync of its
// gradient shard; memory: activations (analytic/memory.hpp: Korthikanti et al. for unfused GPT layers, stored
// tensors per operation for flash and other layers) held until B, the W buffer (ZB-PP's M_W) until W,
// the gathered parameters and unsharded gradients of a sharded stage; per rank the model-state shards and the
// optimizer step (+ the parameter all-gather of a dp-sharded optimizer, the tied-embedding all-reduce).
ActionCosts costs_from_plan(const Plan&);

// Communication seconds PP rank `rank` runs after its optimizer step, on the compute stream (part of its OPT_STEP):
// the exposed part of the dp-sharded optimizer's parameter all-gather, and on the end ranks of a pipeline the
// tied embedding's gradient all-reduce.
double after_step_seconds(const Plan& plan, const analytic::ActionCosts& a, int rank);

}  // namespace zeropp::simulate
