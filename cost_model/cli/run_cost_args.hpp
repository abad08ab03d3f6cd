#pragma once
// `--tokens N [--price-per-gpu-hour P]`: what the whole training run costs (analytic/run_cost.hpp), added to the
// tables, JSON and report of estimate, compare, search and report.
#include <optional>
#include <string>
#include <vector>

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

// One row of a run-cost table: a label (the strategy) and the run's cost at its plan (none: no plan fits).
struct RunCostRow {
  std::string label;
  std::optional<analytic::RunCost> cost;
};

// The table compare and search print under their own with --tokens: iterations, days, GPU-hours (and cost).
void print_run_costs(const std::vector<RunCostRow>& rows, const analytic::RunCostOptions& options);

}  // namespace zeropp::cli
