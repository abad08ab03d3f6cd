#include "cost_model/cli/run_cost_args.hpp"

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

}  // namespace zeropp::cli
