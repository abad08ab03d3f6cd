#include "e2e/runtime/compare_model.hpp"

#include <array>
#include <map>

#include <fmt/format.h>

#include "cost_model/simulate/simulator.hpp"

namespace zeropp::e2e {
namespace {

using schedule::ActionType;
constexpr int kTypes = static_cast<int>(ActionType::OPT_STEP) + 1;

struct Mean {
  double sum = 0;
  double n = 0;
  double value() const { return n > 0 ? sum / n : 0.0; }
  void add(double x) {
    sum += x;
    n += 1;
  }
};

double relative_error(double predicted, double measured) {
  return measured > 0 ? (predicted - measured) / measured : 0.0;
}

}  // namespace

simulate::ActionCosts measured_costs(const schedule::Program& program, const RankLayout& layout,
                                     const std::vector<std::vector<ActionEvent>>& events, int first_step) {
  const int stages = program.stages();
  std::vector<std::array<Mean, kTypes>> per_stage(static_cast<std::size_t>(stages));
  std::vector<Mean> opt(static_cast<std::size_t>(program.pp));  // seconds of OPT_STEP per step and rank
  std::map<std::pair<int, int>, double> opt_per_rank_step;      // (world rank, step) -> summed OPT_STEP seconds
  for (std::size_t w = 0; w < events.size(); ++w) {
    for (const ActionEvent& e : events[w]) {
      if (e.step < first_step) continue;
      const double d = e.end - e.start;
      if (e.action.type == ActionType::OPT_STEP) {
        opt_per_rank_step[{static_cast<int>(w), e.step}] += d;
        continue;
      }
      if (e.action.stage >= 0 && e.action.stage < stages)
        per_stage[static_cast<std::size_t>(e.action.stage)][static_cast<int>(e.action.type)].add(d);
    }
  }
  for (const auto& [key, seconds] : opt_per_rank_step)
    opt[static_cast<std::size_t>(layout.coords(key.first).pp)].add(seconds);

  simulate::ActionCosts costs = simulate::ActionCosts::uniform(program.pp, program.v, 0, 0, 0, 0);
  for (int s = 0; s < stages; ++s) {
    const auto& m = per_stage[static_cast<std::size_t>(s)];
    auto mean = [&](ActionType t) { return m[static_cast<int>(t)].value(); };
    simulate::StageCost& c = costs.stages[static_cast<std::size_t>(s)];
    c.f = mean(ActionType::F);
    c.b = mean(ActionType::B);
    c.w = mean(ActionType::W);
    c.bw = mean(ActionType::BW);
    c.recompute = mean(ActionType::RECOMPUTE);
    c.send_f.seconds = mean(ActionType::SEND_F);
    c.send_b.seconds = mean(ActionType::SEND_B);
    c.unshard.seconds = mean(ActionType::UNSHARD);
    c.reduce_grad.seconds = mean(ActionType::REDUCE_GRAD);
    c.dp_sync.seconds = mean(ActionType::DP_SYNC);
    c.activation_bytes = 0;
  }
  for (int r = 0; r < program.pp; ++r) costs.opt_step[static_cast<std::size_t>(r)].seconds = opt[r].value();
  return costs;
}

ModelComparison compare_with_model(const schedule::Program& program, const RankLayout& layout,
                                   const std::vector<std::vector<ActionEvent>>& events, int first_step,
                                   double measured_iteration, const std::optional<simulate::ActionCosts>& costs,
                                   const std::string& costs_name) {
  ModelComparison out;
  out.costs = costs ? costs_name : "measured";
  const simulate::ActionCosts table = costs ? *costs : measured_costs(program, layout, events, first_step);
  const simulate::SimResult sim = simulate::simulate(program, table);
  out.measured_iteration = measured_iteration;
  out.predicted_iteration = sim.makespan;
  out.predicted_bubble = sim.bubble_fraction();

  std::array<Mean, kTypes> measured{}, predicted{};
  std::array<double, kTypes> measured_count{};
  int steps = 0;
  for (const auto& rank_events : events)
    for (const ActionEvent& e : rank_events) {
      steps = std::max(steps, e.step + 1);
      if (e.step < first_step) continue;
      measured[static_cast<int>(e.action.type)].add(e.end - e.start);
      measured_count[static_cast<int>(e.action.type)] += 1;
    }
  for (int r = 0; r < program.pp; ++r)
    for (std::size_t i = 0; i < program.ranks[r].size(); ++i) {
      const std::size_t id = sim.id(r, static_cast<int>(i));
      predicted[static_cast<int>(program.ranks[r][i].type)].add(sim.end[id] - sim.start[id]);
    }
  // Measured counts cover every pipeline (z * dp of them, each run by its tp x cp ranks) and every step after the
  // warm-up.
  const double per_iteration =
      static_cast<double>(std::max(1, steps - first_step)) * layout.pipelines() * layout.tp() * layout.cp();
  for (int t = 0; t < kTypes; ++t) {
    if (predicted[t].n == 0 && measured[t].n == 0) continue;
    KindComparison k;
    k.kind = std::string(schedule::name(static_cast<ActionType>(t)));
    k.actions = measured_count[t] / per_iteration;
    k.measured_mean = measured[t].value();
    k.predicted_mean = predicted[t].value();
    out.kinds.push_back(k);
  }
  return out;
}

nlohmann::json to_json(const ModelComparison& c) {
  nlohmann::json kinds = nlohmann::json::array();
  for (const KindComparison& k : c.kinds)
    kinds.push_back({{"kind", k.kind},
                     {"actions_per_iteration", k.actions},
                     {"measured_mean_s", k.measured_mean},
                     {"predicted_mean_s", k.predicted_mean},
                     {"relative_error", relative_error(k.predicted_mean, k.measured_mean)}});
  nlohmann::json j = {{"costs", c.costs},
                      {"kinds", kinds},
                      {"measured_iteration_s", c.measured_iteration},
                      {"predicted_iteration_s", c.predicted_iteration},
                      {"iteration_relative_error", relative_error(c.predicted_iteration, c.measured_iteration)},
                      {"predicted_bubble_fraction", c.predicted_bubble},
                      {"oversubscribed", !c.oversubscribed.empty()}};
  if (!c.oversubscribed.empty()) j["warning"] = oversubscription_warning(c);
  return j;
}

std::string oversubscription_warning(const ModelComparison& c) {
  return fmt::format(
      "{}: the measured times include waiting for a core (or GPU) that the model does not price, so "
      "this comparison is not meaningful; run with at most one rank per core (GPU)",
      c.oversubscribed);
}

std::string format_table(const ModelComparison& c) {
  std::string out = fmt::format("model comparison (simulator with {} costs), mean per action:\n", c.costs);
  if (!c.oversubscribed.empty()) out += "  WARNING: " + oversubscription_warning(c) + "\n";
  out += fmt::format("  {:<12} {:>10} {:>14} {:>14} {:>9}\n", "action", "per iter", "measured ms", "predicted ms",
                     "error");
  for (const KindComparison& k : c.kinds)
    out += fmt::format("  {:<12} {:>10.1f} {:>14.4f} {:>14.4f} {:>8.1f}%\n", k.kind, k.actions, k.measured_mean * 1e3,
                       k.predicted_mean * 1e3, 100.0 * relative_error(k.predicted_mean, k.measured_mean));
  out += fmt::format("  {:<12} {:>10} {:>14.4f} {:>14.4f} {:>8.1f}%   (predicted bubble {:.1f}%)\n", "iteration", "",
                     c.measured_iteration * 1e3, c.predicted_iteration * 1e3,
                     100.0 * relative_error(c.predicted_iteration, c.measured_iteration), 100.0 * c.predicted_bubble);
  return out;
}

}  // namespace zeropp::e2e
