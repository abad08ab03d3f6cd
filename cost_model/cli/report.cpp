// `zeropp report`: the study report of one experiment as Markdown (verdict and comparison table, criterion,
// timeline of the best ZeroPP plan, model vs measurement, figures): cost_model/search/study_report.hpp.
//   zeropp report                                   default experiment -> results/report.md
//   zeropp report --experiment llama2-70b-h100 -o /tmp/r.md      (figures in /tmp/r-figures/)
// The file is written whole or not at all (temporary file, then rename). On the terminal: a short summary, or
// with --format json the report's data (schema 1). Without -o the file is <results>/report.md for the default
// experiment and <results>/report-<name>.md for another (an experiment file: its file name).
// Figures are drawn for this experiment into <report stem>-figures/ beside the report (study_figures.hpp), with
// plots/study_figures.py when matplotlib is there (--no-figures: none). The validation sets are those of the
// experiment's GPU; their leave-one-out errors come from <results>/validation-cache/ when its input hash matches
// (validation_cache.hpp), else they are run once and cached (--revalidate: always).
#include <cctype>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cost_model/cli/command.hpp"
#include "cost_model/cli/experiment_args.hpp"
#include "cost_model/cli/plot_runner.hpp"
#include "cost_model/cli/run_cost_args.hpp"
#include "cost_model/options/cli_checks.hpp"
#include "cost_model/search/describe.hpp"
#include "cost_model/search/study_figures.hpp"
#include "cost_model/search/study_report.hpp"
#include "cost_model/spec/atomic_file.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/printable.hpp"

namespace zeropp::cli {
namespace {

struct ReportArgs {
  ExperimentArgs source;
  std::string output, results;
  std::vector<std::string> validation_sets;  // empty: the GPU's; "none": no validation section
  bool revalidate = false, no_figures = false;
  int width = 150;
  RunCostArgs run_cost;
  Format format = Format::table;
};

// The repository's results/ beside the configs/ the zoo is read from.
std::filesystem::path default_results_dir() { return (configs_dir() / ".." / "results").lexically_normal(); }

std::string file_stem(const std::string& name) {
  std::string out;
  for (char c : name)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '-';
  return out;
}

void print_summary(const search::StudyReport& r, const std::filesystem::path& path) {
  const Experiment& ex = r.experiment;
  std::cout << fmt::format("{}: {} on {} GPUs of {}, global batch {} (model output)\n", ex.name, ex.model.name, ex.gpus,
                           ex.cluster.name, ex.global_batch);
  if (!r.nominal_warning.empty()) std::cout << "  WARNING: " << r.nominal_warning << "\n";
  const auto line = [&](const char* label, int i) {
    if (i < 0) return;
    const auto& e = r.rows[i].estimate.estimate;
    std::cout << fmt::format("  {:<22} {:<11} {:.3f} s, {:.1f} TFLOP/s/GPU, peak {:.1f} GiB\n", label,
                             r.rows[i].spec.name, e.time_s.iteration, e.throughput.tflops_per_gpu,
                             e.memory_bytes.peak / (1024.0 * 1024 * 1024));
  };
  if (r.winner < 0) std::cout << "  no strategy fits in memory\n";
  line("fastest", r.winner);
  line("best ZeroPP", r.best_zeropp);
  line("3D", r.three_d);
  line("best pipeline baseline", r.best_pp);
  line("best other row", r.best_rival);  // FSDP + TP and the CP rows included
  line("best ZeroPP with CP", r.best_zeropp_cp);
  line("best other row with CP", r.best_rival_cp);
  if (r.best_zeropp >= 0 && r.three_d >= 0)
    std::cout << fmt::format("  ZeroPP vs 3D {:.2f}x", search::speedup(r, r.best_zeropp, r.three_d));
  if (r.best_zeropp >= 0 && r.best_pp >= 0)
    std::cout << fmt::format(", vs best pipeline baseline {:.2f}x", search::speedup(r, r.best_zeropp, r.best_pp));
  if (r.best_zeropp >= 0 && r.best_rival >= 0)
    std::cout << fmt::format(", vs best other row {:.2f}x", search::speedup(r, r.best_zeropp, r.best_rival));
  if (r.best_zeropp_cp >= 0 && r.best_rival_cp >= 0)
    std::cout << fmt::format("; with CP on both sides {:.2f}x", search::speedup(r, r.best_zeropp_cp, r.best_rival_cp));
  std::cout << "\n";
  if (r.have_criterion)
    std::cout << fmt::format("  criterion at b={} U={}: 2sUb = {:.0f} vs 3P/(4h) = {:.0f} ({}); time-based on {}: {}\n",
                             r.criterion_b, r.criterion_unit, r.criterion.lhs, r.criterion.rhs,
                             r.criterion.holds ? "holds" : "does not hold", ex.cluster.name,
                             r.criterion_time.holds ? "ZeroPP exposes less" : "TP exposes less");
  for (const search::CachedValidation& v : r.validations)
    std::cout << fmt::format("  validation {} ({} published runs{}): leave-one-out mean |error| {:.1f}%, max {:.1f}%\n",
                             v.name, v.report.rows.size(), v.from_cache ? ", cached" : "",
                             100 * v.report.loo_mean_abs_error, 100 * v.report.loo_max_abs_error);
  if (r.band.present && r.best_zeropp >= 0 && r.three_d >= 0) {
    const double x = search::speedup(r, r.best_zeropp, r.three_d);
    const auto [lo, hi] = search::ratio_band(x, r.band.typical);
    std::cout << fmt::format("  error band of ZeroPP vs 3D at the typical error {:.1f}%: {:.2f}x to {:.2f}x\n",
                             100 * r.band.typical, lo, hi);
  } else if (!r.band.present) {
    std::cout << "  no error band: no published validation set for this GPU\n";
  }
  for (const auto& run : r.loop)
    std::cout << fmt::format("  trainer {} ({}, {} ranks): measured {:.3f} s, predicted {:.3f} s ({:+.1f}%)\n",
                             run.file, run.backend, run.world, run.measured_s, run.predicted_s, 100 * run.error);
  std::cout << fmt::format("  figures linked: {}{}\nreport written to {}\n", r.figures.size(),
                           r.figures.empty() ? " (" + r.figures_note + ")" : "", printable(path.string()));
}

// The figures of this experiment, into <report stem>-figures/ (search/study_figures.hpp), drawn by
// plots/study_figures.py; report.figures lists what was drawn, report.figures_note says how or why not.
void draw_figures(search::StudyReport& report, const std::filesystem::path& output, bool skip) {
  if (skip) {
    report.figures_note = "No figures: --no-figures.";
    return;
  }
  const std::filesystem::path dir = search::figure_dir_for(output);
  search::write_figure_data(report, dir);
  const PlotRun run = run_plot_script("study_figures.py", {"--data", dir.string(), "--out", dir.string()});
  report.figures = search::drawn_figures(report, dir, output);
  report.figures_note =
      run.drawn ? fmt::format(
                      "Drawn for this experiment into `{}/` by plots/study_figures.py from the data files there "
                      "(model output unless a caption says otherwise).",
                      dir.filename().generic_string())
                : fmt::format(
                      "Not drawn: {}. The data are in `{}/`; draw them with `python3 plots/study_figures.py "
                      "--data {} --out {}`.",
                      run.message, dir.filename().generic_string(), dir.generic_string(), dir.generic_string());
}

int run(const ReportArgs& args) {
  if (!args.output.empty()) check_output_folder(args.output, "-o");  // before the work, not after
  const Experiment ex = load_experiment_args(args.source, default_experiment_name());
  if (!args.output.empty()) check_output_path(args.output, "-o");  // the inputs are read by now
  search::StudyOptions options;
  options.results_dir = args.results.empty() ? default_results_dir() : std::filesystem::path(args.results);
  options.output_path = !args.output.empty() ? std::filesystem::path(args.output)
                        : ex.name == default_experiment_name()
                            ? options.results_dir / "report.md"
                            : options.results_dir / ("report-" + file_stem(ex.name) + ".md");
  options.validation_cache = options.results_dir / "validation-cache";
  options.revalidate = args.revalidate;
  for (const auto& s : args.validation_sets) {
    if (s == "none") {
      options.auto_validation_sets = false;
    } else {
      options.validation_sets.push_back(s);
    }
  }
  options.grid_width = args.width;
  options.run_cost = run_cost_options(args.run_cost);
  const ExperimentArgs& e = args.source;
  const std::string flags =
      (e.dtype.empty() ? "" : " --dtype " + e.dtype) + (e.seq > 0 ? " --seq " + std::to_string(e.seq) : "");
  options.command =
      !e.model.empty()
          ? fmt::format("zeropp report --model {} --cluster {} --gpus {} --global-batch {}{}", e.model, e.cluster,
                        e.gpus, e.global_batch, flags)
          : fmt::format("zeropp report --experiment {}{}", e.experiment.empty() ? ex.name : e.experiment, flags);
  warn_if_nominal(ex);
  search::StudyReport report = search::build_study_report(ex, options);
  draw_figures(report, options.output_path, args.no_figures);
  // A folder the user named must exist (a typo must not create one); the default results folder is created.
  write_file_atomically(options.output_path, search::to_markdown(report), "-o",
                        args.output.empty() ? ParentDirs::create : ParentDirs::must_exist);
  if (args.format == Format::json) {
    nlohmann::json j = search::to_json(report);
    j["schema"] = kSchemaVersion;
    j["command"] = "report";
    j["output"] = options.output_path.generic_string();
    std::cout << j.dump(2) << "\n";
  } else {
    print_summary(report, options.output_path);
  }
  return 0;
}

const bool registered = register_command({
    "report",
    "Write the study report of one experiment (verdict, comparison table, criterion, timeline, model vs "
    "measurement, figures) as Markdown",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<ReportArgs>();
      add_experiment_options(sub, a->source);
      sub.add_option("-o,--output", a->output,
                     "Markdown file (default <results>/report.md, or report-<name>.md for another experiment)")
          ->check(cli_checks::output_path());
      sub.add_option("--results", a->results,
                     "Folder with loop/ and validation-cache/ (default: the repository's results/)");
      sub.add_option("--validation-set", a->validation_sets,
                     "Validation set(s) for the model-vs-published section and the error band (default: the sets of "
                     "the experiment's GPU; none: no such section)");
      sub.add_flag("--revalidate", a->revalidate,
                   "Run the leave-one-out fits even when <results>/validation-cache holds them for the same inputs");
      sub.add_flag("--no-figures", a->no_figures, "Draw no figures (default: into <report stem>-figures/)");
      sub.add_option("--width", a->width, "Timeline grid width in characters (default 150)")
          ->check(cli_checks::integer_in(20, 1000));
      add_run_cost_options(sub, a->run_cost);
      add_format_option(sub, a->format);
      return [a] { return run(*a); };
    },
});

}  // namespace
}  // namespace zeropp::cli
