#pragma once
// `--tokens N [--price-per-gpu-hour P]`: what the whole training run costs (analytic/run_cost.hpp), added to the
// tables, JSON and report of estimate, compare, search and report.
#include <optional>

#include <CLI/CLI.hpp>

#include "cost_model/analytic/run_cost.hpp"

namespace zeropp::cli {

struct RunCostArgs {
  double tokens = 0;
  double price_per_gpu_hour = 0;
  bool priced = false;
};

void add_run_cost_options(CLI::App& sub, RunCostArgs& args);

// The options, or nothing when --tokens was not given.
std::optional<analytic::RunCostOptions> run_cost_options(const RunCostArgs& args);

}  // namespace zeropp::cli
