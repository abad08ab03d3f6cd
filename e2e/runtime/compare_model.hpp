#pragma once
// `zeropp-train --compare-model`: the simulator (cost_model/simulate) runs the same program as the trainer,
// and its prediction is printed beside the measurement per action kind (mean seconds per action) and for the
// whole iteration, with the relative error (predicted - measured) / measured.
// Costs come from the measurement itself (each (action type, stage) costs its measured mean, so the comparison
// tests the simulator's composition of costs: dependencies, streams, bubbles) or from a given ActionCosts
// table (e.g. the analytic model's costs for the plan).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost_model/schedule/action.hpp"
#include "cost_model/simulate/costs.hpp"
#include "e2e/runtime/measured_trace.hpp"
#include "e2e/runtime/rank_layout.hpp"

namespace zeropp::e2e {

struct KindComparison {
  std::string kind;          // "F", "SEND_F", ...
  double actions = 0;        // per iteration, whole pipeline
  double measured_mean = 0;  // seconds per action
  double predicted_mean = 0;
};

struct ModelComparison {
  std::string costs;  // "measured" or the given table's name
  std::vector<KindComparison> kinds;
  double measured_iteration = 0;  // seconds
  double predicted_iteration = 0;
  double predicted_bubble = 0;  // fraction
  // Set when the ranks outnumber the cores (or GPUs) they ran on (oversubscription.hpp): the measured times then
  // include waiting for a core, which the model does not price, and the comparison is not meaningful.
  std::string oversubscribed;
};

// Measured per-(type, stage) means as a cost table (events with step >= first_step, all ranks).
simulate::ActionCosts measured_costs(const schedule::Program&, const RankLayout&,
                                     const std::vector<std::vector<ActionEvent>>& events, int first_step);

// `events[w]` are world rank w's events. `costs` = nullopt: measured_costs. measured_iteration in seconds.
ModelComparison compare_with_model(const schedule::Program&, const RankLayout&,
                                   const std::vector<std::vector<ActionEvent>>& events, int first_step,
                                   double measured_iteration, const std::optional<simulate::ActionCosts>& costs,
                                   const std::string& costs_name);

nlohmann::json to_json(const ModelComparison&);  // "oversubscribed" (bool) and, when true, "warning"
std::string oversubscription_warning(const ModelComparison&);
std::string format_table(const ModelComparison&);

}  // namespace zeropp::e2e
