#include "cost_model/search/simulated_estimate.hpp"

#include "cost_model/analytic/collectives.hpp"
#include "cost_model/schedule/budget.hpp"
#include "cost_model/search/simulated_timing.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::search {

bool simulatable(const Plan& plan) {
  return traits(plan.parallel.strategy).pipeline || data_parallel_sync(plan.parallel).layer_wise;
}

analytic::CommBytes simulated_comm_bytes(const Plan& plan, const simulate::SimResult& sim) {
  const analytic::Group zg = analytic::shard_group(plan.parallel);
  const double ring = zg.size > 1 ? static_cast<double>(zg.size - 1) / zg.size : 0.0;
  analytic::CommBytes busiest;
  for (int r = 0; r < static_cast<int>(sim.ranks.size()); ++r) {
    const analytic::CommBytes a = analytic::comm_bytes(plan, r);
    analytic::CommBytes c;
    c.tp = a.tp;
    c.dp = a.dp;
    c.cp = a.cp;  // inside F/B like TP: from the analytic model
    c.pp = sim.ranks[r].comm_bytes.pp;
    c.zero = sim.ranks[r].comm_bytes.zero * ring;
    c.total = c.tp + c.pp + c.dp + c.zero + c.cp;
    if (r == 0 || c.total > busiest.total) busiest = c;
  }
  return busiest;
}

SimulatedEstimate simulated_estimate(const Plan& plan, const analytic::EstimateOptions& options) {
  analytic::EstimateOptions closed = options;
  closed.pipeline = nullptr;
  const analytic::Estimate closed_form = analytic::estimate(plan, closed);
  analytic::EstimateOptions checked = options;
  checked.validate = false;
  return simulated_estimate(plan, closed_form, checked);
}

namespace {

SimulatedEstimate estimate_with(const Plan& plan, const analytic::Estimate& closed_form,
                                const analytic::EstimateOptions& options, const PreparedPlan* prepared) {
  SimulatedEstimate out;
  out.closed_form = closed_form;
  if (!simulatable(plan)) {
    out.estimate = closed_form;
    return out;
  }
  schedule::check_action_budget(plan.parallel);  // refused by name, before the program could exhaust memory
  const simulate::SimResult sim = simulate_plan(plan, prepared);
  analytic::EstimateOptions o = options;
  // The closed-form estimate validated the plan (or its caller vouched for it).
  o.validate = false;
  o.pipeline = [&sim](const Plan& p, const analytic::ActionCosts&) { return simulated_timing(p, sim); };
  out.estimate = analytic::estimate(plan, o);
  out.estimate.comm_bytes = simulated_comm_bytes(plan, sim);
  out.simulated = true;
  out.peak = peak_breakdown(plan, sim);
  return out;
}

}  // namespace

SimulatedEstimate simulated_estimate(const Plan& plan, const analytic::Estimate& closed_form,
                                     const analytic::EstimateOptions& options) {
  return estimate_with(plan, closed_form, options, nullptr);
}

SimulatedEstimate simulated_estimate(const Plan& plan, const analytic::EstimateOptions& options,
                                     const PreparedPlan& prepared) {
  analytic::EstimateOptions closed = options;
  closed.pipeline = nullptr;
  const analytic::Estimate closed_form = analytic::estimate(plan, closed);
  analytic::EstimateOptions checked = options;
  checked.validate = false;
  return estimate_with(plan, closed_form, checked, &prepared);
}

nlohmann::json to_json(const SimulatedEstimate& s) {
  nlohmann::json j = analytic::to_json(s.estimate);
  j["executor"] = s.simulated ? "simulator" : "closed_form";
  const analytic::Estimate& c = s.closed_form;
  const nlohmann::json full = analytic::to_json(c);
  j["closed_form"] = {
      {"time_s",
       {{"compute", c.time_s.compute},
        {"comm_exposed", c.time_s.comm_exposed},
        {"bubble", c.time_s.bubble},
        {"iteration", c.time_s.iteration}}},
      {"memory_bytes", {{"peak", c.memory_bytes.peak}}},
      {"comm_bytes", full["comm_bytes"]},
      {"throughput", full["throughput"]},
      {"feasible", c.feasible},
      {"over_by_bytes", c.over_by_bytes},
  };
  if (s.peak) j["peak_breakdown"] = to_json(*s.peak);
  return j;
}

}  // namespace zeropp::search
