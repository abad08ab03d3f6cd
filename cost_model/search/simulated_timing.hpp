#pragma once
// A plan's iteration time from the schedule simulator, in the analytic model's PipelineTiming form, so that
// analytic::estimate (throughput, memory feasibility) can run on simulated time through
// EstimateOptions::pipeline.
//
// The program is schedule::program_for(plan) (cost_model/schedule/plan_program.hpp), costed by
// simulate::costs_from_plan(plan). The iteration is the makespan; its split is the one of the busiest rank
// (largest compute-stream time), so that compute + comm_exposed + bubble = iteration:
//   tp_exposed   the TP collectives inside that rank's F/B/RECOMPUTE actions (always on the critical path),
//                counted from analytic::action_costs;
//   compute      its compute-stream time minus tp_exposed;
//   pp/zero/dp   the time a p2p / intra-node (ZeRO-3) / inter-node (DP) stream is busy while the compute
//                stream idles; when two of them are exposed at the same instant that instant is split evenly
//                between them, so the three add up to the simulator's exposed_comm;
//   bubble       makespan - compute-stream time - exposed_comm (nothing runs).
// peak_memory is the highest per-rank peak the simulator tracked.
#include "cost_model/analytic/time_model.hpp"
#include "cost_model/schedule/action.hpp"
#include "cost_model/simulate/costs.hpp"
#include "cost_model/simulate/simulator.hpp"
#include "cost_model/spec/config.hpp"

namespace zeropp::search {

// What a simulation of the plan runs: its lowered program (schedule::program_for) and its cost table
// (simulate::costs_from_plan), built once when a caller looks at them before simulating (search/bounds.hpp).
struct PreparedPlan {
  schedule::Program program;
  simulate::ActionCosts costs;
};
PreparedPlan prepare_plan(const Plan& plan);
// The same with the cost table at hand (it must be simulate::costs_from_plan(plan)).
PreparedPlan prepare_plan(const Plan& plan, const simulate::ActionCosts& costs);

// The plan's lowered program run once with costs_from_plan(plan) (`prepared`, when given, is prepare_plan(plan)).
simulate::SimResult simulate_plan(const Plan& plan, const PreparedPlan* prepared = nullptr);

analytic::PipelineTiming simulated_timing(const Plan& plan);
// The same split of a simulation already run: `sim` must be simulate_plan(plan).
analytic::PipelineTiming simulated_timing(const Plan& plan, const simulate::SimResult& sim);

}  // namespace zeropp::search
