// `zeropp compare`: the strategies side by side for one experiment, each with its best layout (tp, pp, dp, z, v),
// micro-batch b, unit U and recompute within memory, and its speedup over 3D parallelism.
//   zeropp compare --experiment default
//   zeropp compare --model gpt3-13b --cluster dgx-a100-80gb --gpus 64 --global-batch 256
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cost_model/analytic/strategies.hpp"
#include "cost_model/cli/command.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/names.hpp"

namespace zeropp::cli {
namespace {

struct CompareArgs {
  std::string experiment, model, cluster, dtype;
  int gpus = 0;
  long long global_batch = 0;
  std::vector<std::string> strategies;
  Format format = Format::table;
};

Experiment build_experiment(const CompareArgs& a) {
  const bool direct = !a.model.empty() || !a.cluster.empty() || a.gpus > 0 || a.global_batch > 0;
  Experiment ex;
  if (!a.experiment.empty() || !direct) {
    if (direct) throw SpecError("experiment", "--experiment gives model, cluster, GPUs and batch; do not combine them");
    ex = load_experiment(a.experiment.empty() ? default_experiment_name() : a.experiment);
  } else {
    if (a.model.empty() || a.cluster.empty() || a.gpus <= 0 || a.global_batch <= 0)
      throw SpecError("experiment", "give --experiment NAME|FILE, or all of --model, --cluster, --gpus, --global-batch");
    ex.name = "command line";
    ex.model = load_model(a.model);
    ex.cluster = load_cluster(a.cluster);
    ex.gpus = a.gpus;
    ex.global_batch = a.global_batch;
    if (!a.dtype.empty()) ex.dtype = dtype_from_string(a.dtype, "experiment.dtype");
  }
  if (!a.strategies.empty()) {
    ex.strategies.clear();
    for (const auto& s : a.strategies) ex.strategies.push_back(strategy_from_string(s, "strategies"));
  }
  validate(ex);
  return ex;
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Iteration time of the 3D row when it was compared and fits; 0 otherwise.
double three_d_time(const std::vector<analytic::StrategyChoice>& rows) {
  for (const auto& r : rows)
    if (r.strategy == Strategy::three_d && r.found && r.estimate.feasible) return r.estimate.time_s.iteration;
  return 0;
}

void print_table(const Experiment& ex, const std::vector<analytic::StrategyChoice>& rows) {
  std::cout << fmt::format("{}: {} on {} GPUs of {}, global batch {} x {} tokens, {}\n\n", ex.name, ex.model.name,
                           ex.gpus, ex.cluster.name, ex.global_batch, ex.model.seq_len, to_string(ex.dtype));
  std::cout << fmt::format("{:<11} {:>3} {:>3} {:>4} {:>2} {:>2} {:>3} {:>5} {:>5} {:>9} {:>9} {:>8} {:>6} {:>9} "
                           "{:>9} {:>8}\n",
                           "strategy", "tp", "pp", "dp", "z", "v", "b", "B", "U", "recompute", "iter s", "TFLOP/s",
                           "MFU", "peak GiB", "sent GB", "vs 3D");
  const double base = three_d_time(rows);
  for (const auto& r : rows) {
    if (!r.found) {
      std::cout << fmt::format("{:<11} {}\n", to_string(r.strategy), r.note);
      continue;
    }
    const ParallelSpec& p = r.plan.parallel;
    const auto& e = r.estimate;
    std::string vs = "-";
    if (e.feasible && base > 0) vs = fmt::format("{:.2f}x", base / e.time_s.iteration);
    std::cout << fmt::format("{:<11} {:>3} {:>3} {:>4} {:>2} {:>2} {:>3} {:>5} {:>5} {:>9} {:>9.3f} {:>8.1f} {:>5.1f}% "
                             "{:>9.1f} {:>9.2f} {:>8}{}\n",
                             to_string(r.strategy), p.tp, p.pp, p.dp, p.z, p.v, p.micro_batch, p.micro_batches,
                             p.unit, to_string(p.recompute), e.time_s.iteration, e.throughput.tflops_per_gpu,
                             100 * e.throughput.mfu, e.memory_bytes.peak / kGiB, e.comm_bytes.total / 1e9, vs,
                             e.feasible ? "" : fmt::format("  does not fit: over by {:.1f} GiB", e.over_by_bytes / kGiB));
  }
  std::cout << "\nTFLOP/s per GPU counts executed FLOPs (incl. recompute); MFU counts model FLOPs only. "
               "sent GB: bytes sent per GPU per iteration (GB = 1e9).\n";
}

nlohmann::json rows_json(const std::vector<analytic::StrategyChoice>& rows) {
  const double base = three_d_time(rows);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json j = {{"strategy", to_string(r.strategy)}, {"found", r.found}, {"evaluated", r.evaluated}};
    if (!r.found) {
      j["note"] = r.note;
    } else {
      j["parallel"] = to_json(r.plan.parallel);
      j["estimate"] = analytic::to_json(r.estimate);
      j["feasible"] = r.estimate.feasible;
      j["speedup_vs_3d"] = (r.estimate.feasible && base > 0) ? nlohmann::json(base / r.estimate.time_s.iteration)
                                                             : nlohmann::json(nullptr);
    }
    out.push_back(j);
  }
  return out;
}

int run(const CompareArgs& args) {
  const Experiment ex = build_experiment(args);
  const auto rows = analytic::compare_strategies(ex);
  if (args.format == Format::json) {
    nlohmann::json j = {{"schema", kSchemaVersion},
                        {"command", "compare"},
                        {"experiment",
                         {{"name", ex.name},
                          {"model", ex.model.name},
                          {"cluster", ex.cluster.name},
                          {"gpus", ex.gpus},
                          {"global_batch", ex.global_batch},
                          {"dtype", to_string(ex.dtype)}}},
                        {"strategies", rows_json(rows)}};
    std::cout << j.dump(2) << "\n";
  } else {
    print_table(ex, rows);
  }
  return 0;
}

const bool registered = register_command({
    "compare",
    "Compare the strategies (3D, ZeRO-3, 1F1B+ZeRO-1, ZeroPP A/B) for one experiment, each at its best plan",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<CompareArgs>();
      sub.add_option("--experiment", a->experiment, "Experiment: name under configs/experiments or JSON file "
                                                    "(default: the default experiment)");
      sub.add_option("--model", a->model, "Model: zoo name or JSON file");
      sub.add_option("--cluster", a->cluster, "Cluster: zoo name or JSON file");
      sub.add_option("--gpus", a->gpus, "Number of GPUs")->check(CLI::PositiveNumber);
      sub.add_option("--global-batch", a->global_batch, "Sequences per iteration")->check(CLI::PositiveNumber);
      sub.add_option("--dtype", a->dtype, "bf16 | fp16 | fp32 (default bf16)");
      sub.add_option("--strategies", a->strategies, "Strategies to compare (default: all)")->delimiter(',');
      add_format_option(sub, a->format);
      return [a] { return run(*a); };
    },
});

}  // namespace
}  // namespace zeropp::cli
