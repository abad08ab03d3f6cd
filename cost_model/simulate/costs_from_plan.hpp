#pragma once
// The simulator's inputs for a Plan, from the analytic model: the schedule to generate, how to lower it
// (which ZeRO-3 gathers, DP sync), and the cost of every action (analytic::action_costs for seconds, the
// parameter and activation formulas for bytes).
#include "cost_model/schedule/generate.hpp"
#include "cost_model/simulate/costs.hpp"
#include "cost_model/spec/config.hpp"

namespace zeropp::simulate {

// parallel.schedule with p, v, B, U; split backward for the zero-bubble schedules and ZeroPP; recompute on
// unless parallel.recompute is none.
schedule::ScheduleConfig schedule_for(const Plan&);

// ZeRO-3 gathers by strategy: zeropp_a/zeropp_b per unit (gradients per parallel.grad_reduce), zero3_pp and
// zero3 per micro-batch (reduced after every W), the others none; DP_SYNC when the stage has data-parallel
// replicas outside the ZeRO-3 group.
schedule::LoweringOptions lowering_for(const Plan&);

// Per virtual stage: compute seconds (layers, + LM head on the last stage, TP collectives inside), p2p of one
// b*s*h activation, gather / reduce-scatter of the stage's parameters in the ZeRO-3 group, DP sync of its
// gradient shard; memory: activations (Korthikanti et al.) held until B, the W buffer (ZB-PP's M_W) until W,
// the gathered parameters and unsharded gradients of a sharded stage; per rank the model-state shards and the
// optimizer step (+ the parameter all-gather of a dp-sharded optimizer, the tied-embedding all-reduce).
ActionCosts costs_from_plan(const Plan&);

}  // namespace zeropp::simulate
