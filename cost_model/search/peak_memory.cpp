#include "cost_model/search/peak_memory.hpp"

#include "cost_model/analytic/memory.hpp"
#include "cost_model/schedule/action.hpp"

namespace zeropp::search {

PeakBreakdown peak_breakdown(const Plan& plan, const simulate::SimResult& sim) {
  PeakBreakdown out;
  for (int r = 1; r < static_cast<int>(sim.ranks.size()); ++r)
    if (sim.ranks[r].peak_memory_bytes > sim.ranks[out.rank].peak_memory_bytes) out.rank = r;
  const simulate::RankSummary& rank = sim.ranks[out.rank];
  const simulate::PeakMemory& peak = rank.peak;
  const auto part = [&](simulate::MemoryPart p) { return peak.bytes[static_cast<int>(p)]; };
  // The static state split as the closed form counts it, scaled to the simulator's own static bytes (the same
  // number today: costs_from_plan sums these three), so the parts add up to the simulated peak exactly.
  const analytic::MemoryBytes closed = analytic::memory_bytes(plan, out.rank);
  const double closed_static = closed.params + closed.grads + closed.optimizer;
  const double scale = closed_static > 0 ? part(simulate::MemoryPart::static_state) / closed_static : 0;
  out.params = closed.params * scale;
  out.grads = closed.grads * scale;
  out.optimizer = closed.optimizer * scale;
  out.activations = part(simulate::MemoryPart::activations);
  out.recompute = part(simulate::MemoryPart::recompute);
  out.w_buffers = part(simulate::MemoryPart::w_buffers);
  out.gathered_params = part(simulate::MemoryPart::gathered_params);
  out.grad_buffers = part(simulate::MemoryPart::grad_buffers);
  out.total = rank.peak_memory_bytes;
  out.time_s = peak.time;
  out.makespan_s = sim.makespan;
  if (peak.action_index >= 0) {
    out.action = schedule::to_string(peak.action);
    out.when = (peak.at_start ? "at the start of " : "at the end of ") + out.action;
  } else {
    out.when = "before the first action (static state only)";
  }
  return out;
}

nlohmann::json to_json(const PeakBreakdown& p) {
  return {{"rank", p.rank},
          {"time_s", p.time_s},
          {"fraction_of_iteration", p.makespan_s > 0 ? p.time_s / p.makespan_s : 0.0},
          {"when", p.when},
          {"action", p.action},
          {"bytes",
           {{"params", p.params},
            {"grads", p.grads},
            {"optimizer", p.optimizer},
            {"activations", p.activations},
            {"recompute", p.recompute},
            {"w_buffers", p.w_buffers},
            {"gathered_params", p.gathered_params},
            {"grad_buffers", p.grad_buffers},
            {"total", p.total}}}};
}

}  // namespace zeropp::search
