// `zeropp calibrate RESULTS... --base CLUSTER -o PROFILE.json`: fits a cluster profile from zeropp-bench results
// (Google Benchmark JSON) and nccl-tests output (all_reduce_perf, ...: calibrate/nccl_tests.hpp), told apart by
// their first character, on top of a base cluster (a zoo name or a file) of the kind of device they measured;
// prints the fit quality and the held-out predictions, and writes the profile when every held-out size is
// predicted within the tolerance.
#include <chrono>
#include <filesystem>
#include <iostream>

#include <sstream>

#include <fmt/format.h>

#include "cost_model/calibrate/calibrate.hpp"
#include "cost_model/calibrate/results_file.hpp"
#include "cost_model/cli/command.hpp"
#include "cost_model/options/cli_checks.hpp"
#include "cost_model/spec/atomic_file.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/printable.hpp"

namespace zeropp::cli {
namespace {

// --min-bytes, --max-bytes: buffer sizes up to an exabyte (the bound of a profile's table sizes).
constexpr NumberRange kBufferBytes{0, 1e18, false};

struct CalibrateArgs {
  std::vector<std::string> results;
  std::string base;
  std::string output;
  std::string name;
  double tolerance = 0.10;
  double min_bytes = 0;
  double max_bytes = 1e300;
  bool allow_poor_fit = false;
  std::string collective;  // nccl-tests output that does not name its program
  std::string link;        // nccl-tests: "intra" or "inter" instead of the device lines' hosts
  bool skip_unreadable_rows = false;  // nccl-tests: leave out rows that cannot be read, with a note
  Format format = Format::table;
};

void print_table(const calibrate::Calibration& c, double tolerance) {
  std::cout << fmt::format("{:<22} {:>6} {:>8} {:>8} {:>8} {:>9} {:>9}  {}\n", "fit", "points", "held-out", "fit rms",
                           "fit max", "held mean", "held max", "parameters");
  for (const auto& f : c.fits) {
    std::cout << fmt::format("{:<22} {:>6} {:>8} {:>7.1f}% {:>7.1f}% {:>8.1f}% {:>8.1f}%{} {}\n", f.what, f.points,
                             f.held_out, 100 * f.fit_rms_error, 100 * f.fit_max_error, 100 * f.held_out_mean_error,
                             100 * f.held_out_max_error, f.held_out_max_error > tolerance ? "!" : " ", f.parameters);
  }
  std::cout << fmt::format("\nheld-out sizes (fit without them), tolerance {:.0f}%:\n", 100 * tolerance);
  std::cout << fmt::format("{:<58} {:>12} {:>12} {:>7}\n", "benchmark", "measured us", "predicted us", "error");
  for (const auto& p : c.held_out) {
    std::cout << fmt::format("{:<58} {:>12.4g} {:>12.4g} {:>6.1f}%{}\n", p.label, p.measured * 1e6, p.predicted * 1e6,
                             100 * p.error(), p.error() > tolerance ? " !" : "");
  }
  for (const auto& note : c.notes) std::cout << "note: " << note << "\n";
}

nlohmann::json report_json(const calibrate::Calibration& c, const CalibrateArgs& args, bool passed) {
  nlohmann::json fits = nlohmann::json::array();
  for (const auto& f : c.fits) {
    fits.push_back({{"fit", f.what},
                    {"points", f.points},
                    {"held_out", f.held_out},
                    {"fit_rms_error", f.fit_rms_error},
                    {"fit_max_error", f.fit_max_error},
                    {"held_out_mean_error", f.held_out_mean_error},
                    {"held_out_max_error", f.held_out_max_error},
                    {"parameters", f.parameters}});
  }
  nlohmann::json held = nlohmann::json::array();
  for (const auto& p : c.held_out) {
    held.push_back({{"fit", p.what},
                    {"benchmark", p.label},
                    {"measured_s", p.measured},
                    {"predicted_s", p.predicted},
                    {"error", p.error()}});
  }
  return {{"schema", kSchemaVersion},
          {"command", "calibrate"},
          {"results", args.results},
          {"base", args.base},
          {"tolerance", args.tolerance},
          {"passed", passed},
          {"fits", fits},
          {"held_out", held},
          {"notes", c.notes},
          {"warnings", c.warnings},
          {"profile", to_json(c.profile)}};
}

void write_profile(const calibrate::Calibration& c, const CalibrateArgs& args) {
  std::ostringstream out;
  // Provenance in comments (the loader accepts // comments and rejects unknown keys).
  out << "// Calibrated by `zeropp calibrate` from";
  // printable(): a newline in a file name must not end the comment and inject JSON.
  for (const auto& r : args.results) out << " " << printable(std::filesystem::path(r).filename().string());
  out << " on the base cluster " << printable(args.base);
  if (args.min_bytes > 0 || args.max_bytes < 1e300) {
    out << fmt::format(" (collectives fitted on {:.0f} .. {:.0f} bytes)", args.min_bytes, args.max_bytes);
  }
  out << ".\n";
  for (const auto& w : c.warnings) out << "// warning: " << w << ".\n";
  out << fmt::format("// Worst held-out relative error {:.1f}% (tolerance {:.0f}%). Fits:\n",
                     100 * c.worst_held_out_error(), 100 * args.tolerance);
  for (const auto& f : c.fits) {
    out << fmt::format("//   {}: {} (held-out max {:.1f}%)\n", f.what, f.parameters, 100 * f.held_out_max_error);
  }
  out << to_json(c.profile).dump(2) << "\n";
  write_file_atomically(args.output, out.str(), "-o", ParentDirs::must_exist);
}

int run(const CalibrateArgs& args) {
  if (args.min_bytes > args.max_bytes)
    throw SpecError("--min-bytes", fmt::format("--min-bytes={:g} exceeds --max-bytes={:g}: no size is left to fit",
                                               args.min_bytes, args.max_bytes));
  if (!args.output.empty()) check_output_folder(args.output, "-o");
  calibrate::NcclTestsOptions nccl_tests;
  nccl_tests.link = args.link;
  nccl_tests.skip_unreadable_rows = args.skip_unreadable_rows;
  if (!args.collective.empty()) {
    nccl_tests.collective = analytic::collective_from_name(args.collective);
    if (!nccl_tests.collective)
      throw SpecError("--collective", fmt::format("--collective=\"{}\" must be one of all_reduce, all_gather, "
                                                  "reduce_scatter, send_recv",
                                                  printable(args.collective)));
  }
  if (!args.link.empty() && args.link != "intra" && args.link != "inter")
    throw SpecError("--link", fmt::format("--link=\"{}\" must be one of intra, inter", printable(args.link)));
  const ClusterSpec base = load_cluster(args.base);
  calibrate::BenchResults all;
  bool collective_used = false;
  for (const auto& path : args.results) {
    const auto one = calibrate::load_results(path, nccl_tests);
    calibrate::check_device(one, path, base);
    collective_used = collective_used || one.collective_from_option;
    all.append(one);
  }
  // --collective is for the nccl-tests files that neither name nor show their collective. When no file needed it,
  // it is a statement about the files given, and one that names or shows another collective refutes it: read
  // again as such, so the error names that file's line (it was once ignored without a word).
  if (nccl_tests.collective && !collective_used) {
    calibrate::NcclTestsOptions claimed = nccl_tests;
    claimed.check_collective = true;
    for (const auto& path : args.results) calibrate::load_results(path, claimed);
  }
  // The inputs are read by now: -o naming one of them (a result or --base) is refused before the fit.
  if (!args.output.empty()) check_output_path(args.output, "-o");
  const auto calibration =
      calibrate::calibrate(all, base, {.name = args.name, .min_bytes = args.min_bytes, .max_bytes = args.max_bytes});
  validate(calibration.profile, "profile");
  for (const auto& w : calibration.warnings) std::cerr << "zeropp: warning: " << w << "\n";
  const bool passed = calibration.worst_held_out_error() <= args.tolerance;
  if (args.format == Format::json) {
    std::cout << report_json(calibration, args, passed).dump(2) << "\n";
  } else {
    print_table(calibration, args.tolerance);
  }
  if (!passed && !args.allow_poor_fit) {
    std::cerr << fmt::format(
        "zeropp: error: held-out error {:.1f}% exceeds the tolerance {:.0f}%; profile not "
        "written (--allow-poor-fit writes it anyway)\n",
        100 * calibration.worst_held_out_error(), 100 * args.tolerance);
    return 1;
  }
  if (!args.output.empty()) {
    write_profile(calibration, args);
    if (args.format == Format::table) std::cout << "wrote " << printable(args.output) << "\n";
  }
  return 0;
}

const bool registered = register_command({
    "calibrate",
    "Fit a cluster profile (collective alpha-beta, GEMM efficiency) from zeropp-bench JSON or nccl-tests output",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<CalibrateArgs>();
      sub.add_option("results", args->results,
                     "zeropp-bench JSON (--benchmark_out) or nccl-tests output (all_reduce_perf, all_gather_perf, "
                     "reduce_scatter_perf, sendrecv_perf)")
          ->required()
          ->check(CLI::ExistingFile);
      sub.add_option("--base", args->base, "Base cluster (zoo name or JSON file): peaks, memory, topology")->required();
      sub.add_option("-o,--output", args->output, "Write the calibrated profile (cluster JSON) here")
          ->check(cli_checks::output_path());
      sub.add_option("--name", args->name, "Name of the profile (default: <base>-calibrated)");
      sub.add_option("--tolerance", args->tolerance, "Largest accepted held-out relative error (default 0.10)")
          ->check(cli_checks::number_in({0, 10}));
      sub.add_option("--min-bytes", args->min_bytes, "Fit collectives from this buffer size S up (default: all)")
          ->check(cli_checks::number_in(kBufferBytes));
      sub.add_option("--max-bytes", args->max_bytes, "Fit collectives up to this buffer size S (default: all)")
          ->check(cli_checks::number_in(kBufferBytes));
      sub.add_flag("--allow-poor-fit", args->allow_poor_fit,
                   "Write the profile even when held-out errors exceed "
                   "the tolerance");
      sub.add_option(
          "--collective", args->collective,
          "all_reduce | all_gather | reduce_scatter | send_recv: the program behind nccl-tests output that "
          "does not name it (before nccl-tests 2.16.7); when no file needs it, one that names or shows another "
          "collective is refused");
      sub.add_option("--link", args->link,
                     "intra | inter: the link level of nccl-tests output (default: intra when its GPUs are on one "
                     "host, inter when on several)");
      sub.add_flag("--skip-unreadable-rows", args->skip_unreadable_rows,
                   "nccl-tests output: leave out table rows that cannot be read (a size of -8, nan, a row of too many "
                   "fields, ...) with a note that counts them, instead of refusing the file");
      add_format_option(sub, args->format);
      return [args] { return run(*args); };
    },
});

}  // namespace
}  // namespace zeropp::cli
