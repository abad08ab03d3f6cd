#pragma once
// One plan estimated on the schedule simulator, with the closed forms beside it as a cross-check: what
// `zeropp estimate` and `zeropp compare` report.
//
// Simulated (every strategy): the iteration time and its split into compute, exposed
// communication and bubble (simulated_timing.hpp), the peak memory (highest per-rank peak the simulator
// tracked; it decides feasibility), and the communication bytes of the categories the schedule decides:
//   pp    the SEND_F / SEND_B bytes of the rank's simulated actions;
//   zero  its UNSHARD / REDUCE_GRAD bytes times the ring factor (z-1)/z, i.e. bytes sent per GPU (the simulator
//         counts full buffers);
//   tp    from the analytic model (TP collectives sit inside F/B, the simulator does not split them out);
//   cp    the same for context parallelism's exchanges (present only with cp > 1);
//   dp    from the analytic model (once per iteration, the same whatever the schedule).
// The rank reported is the one with the largest total, as analytic::comm_bytes(plan) does.
// The memory breakdown (params, grads, optimizer, activations, buffers) of `estimate` stays the closed form's;
// the peak is the simulator's, and `peak` breaks that simulated peak down by part and says when it occurs
// (peak_memory.hpp): the figure draws that one.
//
// Pure ZeRO-3 (zero3, pp = 1) is simulated layer by layer (simulate/per_layer.hpp: one layer gathered ahead,
// freed after use, gathered again for the backward, reduce-scattered per layer), its zero bytes with the ring
// factor of its shard group (every data-parallel GPU).
#include <optional>

#include <nlohmann/json.hpp>

#include "cost_model/analytic/comm_volume.hpp"
#include "cost_model/analytic/estimate.hpp"
#include "cost_model/search/peak_memory.hpp"
#include "cost_model/search/simulated_timing.hpp"
#include "cost_model/simulate/simulator.hpp"
#include "cost_model/spec/config.hpp"

namespace zeropp::search {

struct SimulatedEstimate {
  analytic::Estimate estimate;     // the simulator's where `simulated`, else the closed form
  analytic::Estimate closed_form;  // the closed forms, for comparison
  bool simulated = false;
  std::optional<PeakBreakdown> peak;  // the simulated peak by part and when, where `simulated`
};

// Whether the simulator models the plan: pipelines, and pure ZeRO-3 layer by layer (every strategy today).
bool simulatable(const Plan& plan);

// Bytes sent per GPU per iteration from a simulation of `plan` (see above).
analytic::CommBytes simulated_comm_bytes(const Plan& plan, const simulate::SimResult& sim);

// Validates the plan unless options.validate is false; options.pipeline is ignored (the simulator is the
// pipeline model), options.time applies to the closed form only. closed_form = analytic::estimate(plan, options).
SimulatedEstimate simulated_estimate(const Plan& plan, const analytic::EstimateOptions& options = {});
// The same when the closed-form estimate is already at hand (compare estimates every layout in closed form and
// simulates only the promising ones).
SimulatedEstimate simulated_estimate(const Plan& plan, const analytic::Estimate& closed_form,
                                     const analytic::EstimateOptions& options = {});
// The same simulating `prepared` (prepare_plan(plan), when the caller built it already: simulated_timing.hpp).
SimulatedEstimate simulated_estimate(const Plan& plan, const analytic::EstimateOptions& options,
                                     const PreparedPlan& prepared);

// analytic::to_json(estimate) plus "executor": "simulator" | "closed_form" and
// "closed_form": {time_s: {compute, comm_exposed, bubble, iteration}, memory_bytes: {peak},
//                 comm_bytes: {tp, pp, dp, zero, total},
//                 throughput: {tokens_per_s, tflops_per_gpu, mfu, mfu_full_attention}, feasible, over_by_bytes},
// "peak_breakdown": peak_memory.hpp's to_json (simulated plans only).
nlohmann::json to_json(const SimulatedEstimate&);

}  // namespace zeropp::search
