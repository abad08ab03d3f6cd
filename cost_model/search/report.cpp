#include "cost_model/search/report.hpp"

#include <algorithm>

#include "cost_model/search/describe.hpp"
#include "cost_model/spec/names.hpp"

namespace zeropp::search {
namespace {

nlohmann::json infeasible_json(const InfeasibleReport& r) {
  if (!r.any) return nullptr;
  return {{"plan", to_json(r.plan)}, {"reason", r.reason}};
}

}  // namespace

nlohmann::json to_json(const Candidate& c) {
  const auto& t = c.estimate.time_s;
  const auto& th = c.estimate.throughput;
  return {
      {"strategy", to_string(c.parallel.strategy)},
      {"plan", describe_plan(c.parallel)},
      {"parallel", zeropp::to_json(c.parallel)},
      {"simulated", c.simulated},
      {"closed_form_iteration_s", c.closed_form_iteration},
      {"bounds", {{"time_s", c.bounds.time_s}, {"memory_bytes", c.bounds.memory_bytes}}},
      {"time_s",
       {{"iteration", t.iteration},
        {"compute", t.compute},
        {"comm_exposed", t.comm_exposed},
        {"bubble", t.bubble},
        {"exposed", {{"tp", t.tp_exposed}, {"pp", t.pp_exposed}, {"zero", t.zero_exposed}, {"dp", t.dp_exposed}}}}},
      {"peak_memory_bytes", c.estimate.memory_bytes.peak},
      {"throughput",
       {{"tokens_per_s", th.tokens_per_s},
        {"tflops_per_gpu", th.tflops_per_gpu},
        {"mfu", th.mfu},
        {"mfu_full_attention", th.mfu_full_attention}}},
  };
}

nlohmann::json to_json(const SearchResult& r, int top) {
  const SearchCounts& n = r.counts;
  nlohmann::json out = {
      {"ranked_by", r.ranked_by},
      {"pruning_rule", r.pruning_rule},
      {"tie_rule", r.tie_rule},
      {"counts",
       {{"enumerated", n.enumerated},
        {"rejected", n.rejected},
        {"over_memory_bound", n.over_memory_bound},
        {"simulated", n.simulated},
        {"pruned", n.pruned},
        {"over_memory", n.over_memory},
        {"feasible", n.feasible}}},
  };
  nlohmann::json list = nlohmann::json::array();
  const int shown = std::min<int>(std::max(top, 0), static_cast<int>(r.ranked.size()));
  for (int i = 0; i < shown; ++i) {
    nlohmann::json j = to_json(r.ranked[i]);
    j["rank"] = i + 1;
    list.push_back(std::move(j));
  }
  out["top"] = std::move(list);

  nlohmann::json strategies = nlohmann::json::array();
  for (const StrategySummary& s : r.strategies) {
    nlohmann::json schedules = nlohmann::json::array();
    for (const ScheduleSummary& g : s.schedules)
      schedules.push_back({{"schedule", to_string(g.schedule)},
                           {"enumerated", g.group.enumerated},
                           {"simulated", g.group.simulated},
                           {"feasible", g.group.feasible},
                           {"best", g.group.best ? to_json(*g.group.best) : nlohmann::json(nullptr)},
                           {"closest_infeasible", infeasible_json(g.group.closest)}});
    strategies.push_back({{"strategy", to_string(s.strategy)},
                          {"enumerated", s.enumerated},
                          {"simulated", s.simulated},
                          {"feasible", s.feasible},
                          {"best", s.best ? to_json(*s.best) : nlohmann::json(nullptr)},
                          {"closest_infeasible", infeasible_json(s.closest)},
                          {"note", s.note},
                          {"schedules", std::move(schedules)}});
  }
  out["strategies"] = std::move(strategies);

  const Explanation e = explain(r);
  nlohmann::json versus = nlohmann::json::array();
  for (const Versus& v : e.versus) {
    nlohmann::json parts = nlohmann::json::object();
    for (const TimeShare& d : v.deltas) parts[d.name] = d.seconds;
    versus.push_back({{"label", v.label},
                      {"delta_by_part_s", std::move(parts)},
                      {"peak_memory_delta_bytes", v.peak_delta_bytes},
                      {"plan", describe_plan(v.other.parallel)},
                      {"delta_s", v.delta_s},
                      {"slowdown", v.slowdown},
                      {"main_difference", v.main_difference}});
  }
  out["why"] = {{"dominant", e.any ? nlohmann::json(e.dominant) : nlohmann::json(nullptr)},
                {"versus", std::move(versus)},
                {"missing", e.missing}};
  out["fastest_infeasible"] = infeasible_json(r.fastest_infeasible);
  out["closest_infeasible"] = infeasible_json(r.closest_infeasible);
  return out;
}

}  // namespace zeropp::search
