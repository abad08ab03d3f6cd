#include "cost_model/cli/run_cost_args.hpp"

#include <iostream>

#include <fmt/format.h>

#include "cost_model/options/cli_checks.hpp"

namespace zeropp::cli {

void add_run_cost_options(CLI::App& sub, RunCostArgs& a) {
  CLI::Option* tokens = sub.add_option("--tokens", a.tokens,
                                       "Tokens to train on (e.g. 15e12): adds days of training, GPU-hours and, "
                                       "with --price-per-gpu-hour, the cost of the run")
                            ->check(cli_checks::number_in(analytic::kTokensRange));
  sub.add_option("--price-per-gpu-hour", a.price_per_gpu_hour, "Price of one GPU-hour, for the run's cost")
      ->check(cli_checks::number_in(analytic::kPricePerGpuHourRange))
      ->needs(tokens)
      ->each([&a](const std::string&) { a.priced = true; });
}

std::optional<analytic::RunCostOptions> run_cost_options(const RunCostArgs& a) {
  if (a.tokens <= 0) return std::nullopt;
  analytic::RunCostOptions o;
  o.tokens = a.tokens;
  if (a.priced) o.price_per_gpu_hour = a.price_per_gpu_hour;
  return o;
}

void print_run_costs(const std::vector<RunCostRow>& rows, const analytic::RunCostOptions& o) {
  std::cout << fmt::format("\nTraining run of {:.4g} tokens at each plan (steady state: no restarts or evaluation):\n",
                           o.tokens);
  std::cout << fmt::format("{:<11} {:>12} {:>9} {:>12}{}\n", "strategy", "iterations", "days", "GPU-hours",
                           o.price_per_gpu_hour ? fmt::format(" {:>14}", "cost") : "");
  for (const RunCostRow& r : rows) {
    if (!r.cost) {
      std::cout << fmt::format("{:<11} -\n", r.label);
      continue;
    }
    const analytic::RunCost& c = *r.cost;
    std::cout << fmt::format("{:<11} {:>12} {:>9.2f} {:>12}{}\n", r.label, analytic::grouped_number(c.iterations),
                             c.days, analytic::grouped_number(c.gpu_hours),
                             c.cost ? fmt::format(" {:>14}", analytic::grouped_number(*c.cost)) : "");
  }
  if (o.price_per_gpu_hour)
    std::cout << fmt::format("cost: GPU-hours x {:g} per GPU-hour.\n", *o.price_per_gpu_hour);
}

}  // namespace zeropp::cli
