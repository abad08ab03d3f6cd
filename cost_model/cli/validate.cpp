// `zeropp validate`: predicted vs published throughput for the runs of a validation set (default: Narayanan et al.
// 2021, Table 1), on one cluster profile for every row, with the error per row, the mean absolute error and the max.
//   zeropp validate [--set narayanan2021] [--check] [--format json]
//   zeropp validate --fit-framework megatron|fsdp2 [--format json]
// Always printed, side by side: the prediction with the profile as given, and the leave-one-out prediction (the
// fitted scalar, the framework's kernel_efficiency on a profile with an operation table, else the profile's
// gemm_efficiency, replaced by one value fitted on the OTHER rows; see search/validation.hpp). The fitted value on
// all rows is printed too. --fit-framework fits one kernel_efficiency on every set whose rows follow that framework
// and predicts each set with the value fitted on the others (that is how framework.hpp's values were set).
// --check exits 1 when the leave-one-out mean absolute error exceeds --max-mean or a leave-one-out row error
// exceeds --max-row (the predictive figures, not the in-sample ones).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cost_model/cli/command.hpp"
#include "cost_model/options/cli_checks.hpp"
#include "cost_model/search/validation.hpp"
#include "cost_model/spec/framework.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::cli {
namespace {

// --max-mean, --max-row: relative errors, 0 (exact) up to 10 (1000%).
constexpr NumberRange kRelativeError{0, 10, false};

struct ValidateArgs {
  std::string set = "narayanan2021";
  std::string fit_framework;
  bool check = false;
  double max_mean = 0.05;
  double max_row = 0.10;
  Format format = Format::table;
};

// The sets whose rows follow `framework` (fsdp1 and fsdp2 together: one kernel_efficiency, framework.hpp), fitted
// together, each predicted with the value fitted on the others.
int run_framework_fit(const ValidateArgs& args) {
  const Framework framework = framework_from_string(args.fit_framework, "--fit-framework");
  std::vector<search::ValidationReport> sets;
  std::vector<std::string> names;
  for (const std::string& name : search::validation_sets()) {
    search::ValidationReport set = search::load_validation(name);
    const Framework own = framework_of(set.rows.front().plan.parallel);
    if (is_fsdp(framework) ? !is_fsdp(own) : own != framework) continue;
    sets.push_back(std::move(set));
    names.push_back(name);
  }
  const search::FrameworkFit fit = search::fit_framework(sets);
  if (args.format == Format::json) {
    nlohmann::json loso = nlohmann::json::array();
    for (std::size_t i = 0; i < fit.leave_one_set_out.size(); ++i) {
      const auto& t = fit.leave_one_set_out[i];
      loso.push_back({{"set", names[i]},
                      {"kernel_efficiency_fitted_on_others", t.value},
                      {"mean_abs_error", t.mean_abs_error},
                      {"max_abs_error", t.max_abs_error}});
    }
    std::cout << nlohmann::json{{"schema", kSchemaVersion},
                                {"command", "validate"},
                                {"framework", to_string(framework)},
                                {"sets", names},
                                {"fit",
                                 {{"kernel_efficiency", fit.all.value}, {"mean_abs_error", fit.all.mean_abs_error}}},
                                {"leave_one_set_out", loso}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << fmt::format(
      "framework {}: one kernel_efficiency fitted on {} sets together: {:.4f} (in-sample mean "
      "|error| {:.1f}%)\n\n{:<22} {:>12} {:>10} {:>10}\n",
      to_string(framework), sets.size(), fit.all.value, 100 * fit.all.mean_abs_error, "set", "fit (others)", "mean err",
      "max err");
  for (std::size_t i = 0; i < fit.leave_one_set_out.size(); ++i) {
    const auto& t = fit.leave_one_set_out[i];
    std::cout << fmt::format("{:<22} {:>12.4f} {:>9.1f}% {:>9.1f}%\n", names[i], t.value, 100 * t.mean_abs_error,
                             100 * t.max_abs_error);
  }
  std::cout << "\nEach set predicted with the value fitted on the other sets (leave-one-set-out).\n";
  return 0;
}

int run(const ValidateArgs& args) {
  if (!args.fit_framework.empty()) return run_framework_fit(args);
  search::ValidationReport report = search::load_validation(args.set);
  search::run_validation(report);
  search::run_cross_validation(report);
  const bool within = report.loo_mean_abs_error <= args.max_mean && report.loo_max_abs_error <= args.max_row;
  if (args.format == Format::json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : report.rows) {
      const ParallelSpec& p = r.plan.parallel;
      rows.push_back({{"name", r.name},
                      {"gpus", p.world()},
                      {"tp", p.tp},
                      {"pp", p.pp},
                      {"dp", p.dp},
                      {"v", p.v},
                      {"micro_batch", p.micro_batch},
                      {"micro_batches", p.micro_batches},
                      {"published_tflops_per_gpu", r.published_tflops},
                      {"predicted_tflops_per_gpu", r.predicted_tflops},
                      {"error", r.error},
                      {"loo_value", r.loo_efficiency},
                      {"loo_predicted_tflops_per_gpu", r.loo_predicted_tflops},
                      {"loo_error", r.loo_error}});
    }
    nlohmann::json j = {
        {"schema", kSchemaVersion},
        {"command", "validate"},
        {"set", args.set},
        {"source", report.source},
        {"cluster", report.cluster},
        {"rows", rows},
        {"fitted", report.fitted},
        {"profile_value", report.profile_efficiency},
        {"mean_abs_error", report.mean_abs_error},
        {"max_abs_error", report.max_abs_error},
        {"fit", {{report.fitted, report.fit.value}, {"mean_abs_error", report.fit.mean_abs_error}}},
        {"loo", {{"mean_abs_error", report.loo_mean_abs_error}, {"max_abs_error", report.loo_max_abs_error}}},
        {"target", {{"max_mean", args.max_mean}, {"max_row", args.max_row}, {"applies_to", "loo"}}},
        {"within_target", within}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << fmt::format("{}\ncluster profile: {} (one profile for every row)\n\n", report.source, report.cluster);
    std::cout << fmt::format("{:<8} {:>5} {:>3} {:>3} {:>4} {:>2} {:>3} {:>5} {:>10} {:>10} {:>8} {:>8} {:>10} {:>8}\n",
                             "model", "GPUs", "tp", "pp", "dp", "v", "b", "B", "published", "profile", "error",
                             "LOO fit", "LOO pred", "LOO err");
    for (const auto& r : report.rows) {
      const ParallelSpec& p = r.plan.parallel;
      std::cout << fmt::format(
          "{:<8} {:>5} {:>3} {:>3} {:>4} {:>2} {:>3} {:>5} {:>10.1f} {:>10.1f} {:>7.1f}% {:>8.4f} {:>10.1f} "
          "{:>7.1f}%\n",
          r.name, p.world(), p.tp, p.pp, p.dp, p.v, p.micro_batch, p.micro_batches, r.published_tflops,
          r.predicted_tflops, 100 * r.error, r.loo_efficiency, r.loo_predicted_tflops, 100 * r.loo_error);
    }
    switch (report.flops) {
      case search::PublishedFlops::model:
        std::cout << "\nTFLOP/s per GPU as the set counts it: model FLOPs (MFU x peak, no recomputation, full "
                     "attention).\n";
        break;
      case search::PublishedFlops::tokens:
        std::cout << "\nTokens per second per GPU, as published.\n";
        break;
      case search::PublishedFlops::narayanan2021:
        std::cout << "\nTFLOP/s per GPU as the paper counts it (recomputation included).\n";
        break;
    }
    std::cout << fmt::format(
        "as given ({} {:.4f}):       mean |error| {:.1f}%, max |error| {:.1f}%\n"
        "one {} fitted on all rows:         {:.4f} (in-sample mean |error| {:.1f}%)\n"
        "leave-one-out (row k predicted with the value fitted on the other rows): mean |error| {:.1f}% "
        "(target <= {:.0f}%), max |error| {:.1f}% (target <= {:.0f}%): {}\n",
        report.fitted, report.profile_efficiency, 100 * report.mean_abs_error, 100 * report.max_abs_error,
        report.fitted, report.fit.value, 100 * report.fit.mean_abs_error, 100 * report.loo_mean_abs_error,
        100 * args.max_mean, 100 * report.loo_max_abs_error, 100 * args.max_row,
        within ? "within target" : "OUTSIDE target");
  }
  return args.check && !within ? 1 : 0;
}

const bool registered = register_command({
    "validate",
    "Predicted vs published throughput of a validation set on one cluster profile, with the one fitted scalar "
    "and its leave-one-out errors",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<ValidateArgs>();
      sub.add_option("--set", a->set, "Validation set: name under configs/validation or JSON file");
      sub.add_option("--fit-framework", a->fit_framework,
                     "megatron | deepspeed | fsdp2 | zeropp | fsdp1: fit one kernel_efficiency on every set of that "
                     "framework (fsdp1 and fsdp2 together) and predict each set with the value fitted on the others");
      sub.add_flag("--check", a->check, "Exit 1 when the leave-one-out errors exceed the targets");
      sub.add_option("--max-mean", a->max_mean, "Target for the leave-one-out mean absolute error (default 0.05)")
          ->check(cli_checks::number_in(kRelativeError));
      sub.add_option("--max-row", a->max_row, "Target for the largest leave-one-out row error (default 0.10)")
          ->check(cli_checks::number_in(kRelativeError));
      add_format_option(sub, a->format);
      return [a] { return run(*a); };
    },
});

}  // namespace
}  // namespace zeropp::cli
