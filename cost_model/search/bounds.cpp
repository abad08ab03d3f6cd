#include "cost_model/search/bounds.hpp"

#include <algorithm>

#include "cost_model/schedule/generate.hpp"
#include "cost_model/schedule/plan_program.hpp"
#include "cost_model/simulate/costs_from_plan.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::search {

PlanBounds lower_bounds(const Plan& plan) {
  const ParallelSpec& par = plan.parallel;
  const simulate::ActionCosts costs = simulate::costs_from_plan(plan);
  const int p = par.pp, S = costs.stage_count();
  const bool recompute = par.recompute != Recompute::none;
  const bool last_recomputes = recomputes_last_stage(par.schedule);
  PlanBounds out;
  double head = 0;  // f of the stages below rank r: the forward chain of micro-batch 0 before rank r can start
  for (int r = 0; r < p; ++r) {
    double per_microbatch = 0;
    for (int s = r; s < S; s += p) {
      const simulate::StageCost& c = costs.stages[s];
      per_microbatch += c.f + std::min(c.bw, c.b + c.w);
      if (recompute && (last_recomputes || s != S - 1)) per_microbatch += c.recompute;
    }
    const double opt = r < static_cast<int>(costs.opt_step.size()) ? costs.opt_step[r].seconds : 0;
    out.time_s = std::max(out.time_s, head + per_microbatch * par.micro_batches + opt);
    if (r < static_cast<int>(costs.static_bytes.size()))
      out.memory_bytes = std::max(out.memory_bytes, costs.static_bytes[r]);
    head += costs.stages[r].f;
  }
  out.time_s *= 1 - kRounding;
  out.memory_bytes *= 1 - kRounding;
  return out;
}

double warmup_memory_bound(const Plan& plan) {
  const simulate::ActionCosts costs = simulate::costs_from_plan(plan);
  const schedule::Program program = schedule::generate(schedule::schedule_for(plan));
  const bool recompute = plan.parallel.recompute != Recompute::none;
  double out = 0;
  for (int r = 0; r < static_cast<int>(program.ranks.size()); ++r) {
    double live = r < static_cast<int>(costs.static_bytes.size()) ? costs.static_bytes[r] : 0;
    for (const schedule::Action& a : program.ranks[r]) {
      if (a.type == schedule::ActionType::B || a.type == schedule::ActionType::BW) break;
      if (a.type != schedule::ActionType::F) continue;
      const simulate::StageCost& c = costs.stages[a.stage];
      // Recomputed micro-batches keep their checkpoint (the last stage of some schedules is not recomputed).
      live += recompute ? std::min(c.checkpoint_bytes, c.activation_bytes) : c.activation_bytes;
    }
    out = std::max(out, live);
  }
  return out * (1 - kRounding);
}

}  // namespace zeropp::search
