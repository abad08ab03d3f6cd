#pragma once
// What a whole training run costs with a plan: `--tokens N` (e.g. 15e12) turns an iteration time into days of
// training, GPU-hours and, with a price per GPU-hour, money.
//
//   iterations = ceil(tokens / (global batch x s))     whole iterations: the last one runs whole
//   seconds    = iterations x iteration time           steady state: no start-up, checkpoints, evaluation
//   days       = seconds / 86400
//   GPU-hours  = seconds x GPUs / 3600                 every GPU of the plan, busy or in a bubble
//   cost       = GPU-hours x price per GPU-hour        (when a price is given; in the price's currency)
// Failures, restarts and the time lost to them are not in it: a real run's wall clock is longer.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cost_model/spec/config.hpp"
#include "cost_model/spec/limits.hpp"

namespace zeropp::analytic {

struct RunCostOptions {
  double tokens = 0;                         // tokens to train on; 0: no run cost
  std::optional<double> price_per_gpu_hour;  // currency units per GPU-hour
};

struct RunCost {
  double tokens = 0;
  double tokens_per_iteration = 0;
  double iterations = 0;
  double seconds = 0;
  double days = 0;
  double gpu_hours = 0;
  std::optional<double> price_per_gpu_hour;
  std::optional<double> cost;
};

// Ranges of the two inputs (the CLI's checks and the library's agree).
inline constexpr NumberRange kTokensRange{1, 1e18, false};
inline constexpr NumberRange kPricePerGpuHourRange{0, 1e6, false};

// Throws SpecError("tokens" / "price_per_gpu_hour") for a value out of range, or for an iteration time that is not
// positive and finite.
RunCost run_cost(const ModelSpec& model, const ParallelSpec& parallel, double iteration_seconds,
                 const RunCostOptions& options);
inline RunCost run_cost(const Plan& plan, double iteration_seconds, const RunCostOptions& options) {
  return run_cost(plan.model, plan.parallel, iteration_seconds, options);
}

nlohmann::json to_json(const RunCost&);

// A count or an amount of money for people: whole units with thousands separators ("9,632,000"), two decimals
// below 100 ("12.50"); never an exponent. The currency is the price's, so none is printed.
std::string grouped_number(double value);

}  // namespace zeropp::analytic
