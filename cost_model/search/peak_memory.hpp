#pragma once
// The simulated peak memory of a plan, broken down by part and placed in time: what `zeropp compare`, `report`
// and the memory figure show, so that the bars and the peak come from one executor (the simulator).
//
// The rank is the one whose peak is highest (the one that decides feasibility). Its static state (the
// simulator's ActionCosts::static_bytes) is split into parameters, gradients and optimizer states as
// analytic::memory_bytes(plan, rank) counts them (costs_from_plan takes it from there); the rest is what the
// simulator held at that instant (simulate::PeakMemory): activations (with recomputation's checkpoints), the one
// layer being recomputed, the buffers of deferred W passes, gathered ZeRO-3 parameters and unsharded gradients.
// The parts add up to the simulated peak exactly.
#include <string>

#include <nlohmann/json.hpp>

#include "cost_model/simulate/simulator.hpp"
#include "cost_model/spec/config.hpp"

namespace zeropp::search {

struct PeakBreakdown {
  int rank = 0;  // PP rank (of the simulated pipeline) with the highest peak
  double params = 0, grads = 0, optimizer = 0;
  double activations = 0, recompute = 0, w_buffers = 0, gathered_params = 0, grad_buffers = 0;
  double total = 0;       // the simulated peak
  double time_s = 0;      // when it is first reached
  double makespan_s = 0;  // the simulated iteration
  std::string action;     // the action whose start or end reached it ("3F5", "1UNSHARD"); empty: before any
  std::string when;       // "at the start of 3F5" / "at the end of 0B2" / "before the first action"
};

// `sim` must be simulate_plan(plan) (simulated_timing.hpp).
PeakBreakdown peak_breakdown(const Plan& plan, const simulate::SimResult& sim);

// {"rank", "time_s", "fraction_of_iteration", "when", "action", "bytes": {params, grads, optimizer, activations,
//  recompute, w_buffers, gathered_params, grad_buffers, total}}.
nlohmann::json to_json(const PeakBreakdown&);

}  // namespace zeropp::search
