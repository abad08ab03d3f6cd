#include "cost_model/analytic/run_cost.hpp"

#include <cmath>

#include <fmt/format.h>

#include "cost_model/spec/error.hpp"

namespace zeropp::analytic {

RunCost run_cost(const ModelSpec& model, const ParallelSpec& parallel, double iteration_seconds,
                 const RunCostOptions& options) {
  check_number("run", "tokens", options.tokens, kTokensRange);
  if (options.price_per_gpu_hour)
    check_number("run", "price_per_gpu_hour", *options.price_per_gpu_hour, kPricePerGpuHourRange);
  if (!(std::isfinite(iteration_seconds) && iteration_seconds > 0))
    throw SpecError("run.iteration_seconds",
                    fmt::format("run cost needs a positive iteration time, got {}", iteration_seconds));
  RunCost r;
  r.tokens = options.tokens;
  r.tokens_per_iteration = static_cast<double>(parallel.global_batch()) * model.seq_len;
  r.iterations = std::ceil(options.tokens / r.tokens_per_iteration);
  r.seconds = r.iterations * iteration_seconds;
  r.days = r.seconds / 86400.0;
  r.gpu_hours = r.seconds * parallel.world() / 3600.0;
  r.price_per_gpu_hour = options.price_per_gpu_hour;
  if (options.price_per_gpu_hour) r.cost = r.gpu_hours * *options.price_per_gpu_hour;
  return r;
}

nlohmann::json to_json(const RunCost& r) {
  nlohmann::json j = {{"tokens", r.tokens},       {"tokens_per_iteration", r.tokens_per_iteration},
                      {"iterations", r.iterations}, {"seconds", r.seconds},
                      {"days", r.days},           {"gpu_hours", r.gpu_hours}};
  if (r.price_per_gpu_hour) {
    j["price_per_gpu_hour"] = *r.price_per_gpu_hour;
    j["cost"] = *r.cost;
  }
  return j;
}

std::string grouped_number(double value) {
  if (!std::isfinite(value)) return "-";
  if (std::abs(value) < 100) return fmt::format("{:.2f}", value);
  const std::string digits = fmt::format("{:.0f}", std::abs(value));
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (value < 0 ? "-" : "") + out;
}

}  // namespace zeropp::analytic
