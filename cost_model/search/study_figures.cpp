#include "cost_model/search/study_figures.hpp"

#include <fmt/format.h>

#include "cost_model/schedule/plan_program.hpp"
#include "cost_model/search/describe.hpp"
#include "cost_model/search/simulated_timing.hpp"
#include "cost_model/simulate/trace.hpp"
#include "cost_model/spec/atomic_file.hpp"
#include "cost_model/spec/names.hpp"

namespace zeropp::search {
namespace {

namespace fs = std::filesystem;

void write_json(const fs::path& path, const nlohmann::json& j) {
  write_file_atomically(path, j.dump(1) + "\n", "figures", ParentDirs::create);
}

nlohmann::json memory_data(const StudyReport& r) {
  const Experiment& ex = r.experiment;
  nlohmann::json rows = nlohmann::json::array();
  for (const CompareRow& row : r.rows) {
    if (!row.found || !row.estimate.peak) continue;
    rows.push_back({{"row", row.spec.name},
                    {"plan", describe_plan(row.plan.parallel)},
                    {"feasible", row.estimate.estimate.feasible},
                    {"peak_breakdown", to_json(*row.estimate.peak)}});
  }
  return {{"experiment",
           {{"name", ex.name},
            {"model", ex.model.name},
            {"cluster", ex.cluster.name},
            {"gpus", ex.gpus},
            {"global_batch", ex.global_batch}}},
          {"memory_bytes", ex.cluster.memory_bytes},
          {"rows", rows}};
}

nlohmann::json validation_data(const CachedValidation& c) {
  const ValidationReport& v = c.report;
  nlohmann::json rows = nlohmann::json::array();
  for (const ValidationRow& row : v.rows)
    rows.push_back({{"name", row.name},
                    {"published_tflops_per_gpu", row.published_tflops},
                    {"predicted_tflops_per_gpu", row.predicted_tflops},
                    {"error", row.error},
                    {"loo_predicted_tflops_per_gpu", row.loo_predicted_tflops},
                    {"loo_error", row.loo_error}});
  return {{"set", fs::path(c.name).stem().string()},
          {"source", v.source},
          {"cluster", v.cluster},
          {"rows", rows},
          {"mean_abs_error", v.mean_abs_error},
          {"max_abs_error", v.max_abs_error},
          {"loo", {{"mean_abs_error", v.loo_mean_abs_error}, {"max_abs_error", v.loo_max_abs_error}}}};
}

struct Caption {
  const char* name;
  const char* text;
};

const Caption kCaptions[] = {
    {"memory_breakdown",
     "memory per GPU of every strategy's chosen plan at its simulated peak, by part (parameters, gradients, "
     "optimizer states, activations, recompute, deferred-W buffers, gathered ZeRO-3 parameters, unsharded "
     "gradients), on the rank where it is highest, with when it occurs; the bars add up to the peak of the table "
     "(model output: the schedule simulator, the same run as the table)"},
    {"schedule_gantt",
     "the best ZeroPP plan's simulated iteration, one row per pipeline rank: compute, and below it the streams "
     "with the ZeRO-3 all-gathers (UNSHARD) and gradient reduce-scatters (REDUCE) inside the node, the p2p "
     "transfers and the DP sync (model output)"},
    {"criterion_map",
     "where ZeroPP moves fewer bytes than TP (the byte boundary of this model's own layer) and where it exposes "
     "less time on this cluster, over hidden sizes of the model's layer family, with the model marked (model "
     "output, `zeropp criterion --map`)"},
    {"validation",
     "predicted vs published TFLOP/s per GPU for the validation sets of this GPU, with the leave-one-out errors "
     "(published: the set's source; predicted: the model on the set's profile)"},
};

}  // namespace

fs::path figure_dir_for(const fs::path& report_path) {
  fs::path dir = report_path.parent_path();
  return dir / (report_path.stem().string() + "-figures");
}

void write_figure_data(const StudyReport& r, const fs::path& dir) {
  nlohmann::json manifest = {{"experiment", r.experiment.name}};
  write_json(dir / "memory.json", memory_data(r));
  manifest["memory"] = "memory.json";
  if (r.best_zeropp >= 0) {
    const CompareRow& row = r.rows[r.best_zeropp];
    const schedule::Program program = schedule::program_for(row.plan);
    simulate::write_chrome_trace(dir / "gantt-trace.json", program, simulate_plan(row.plan));
    manifest["gantt"] = {{"trace", "gantt-trace.json"},
                         {"title", fmt::format("simulated: {} ({:.3f} s)", describe_plan(row.plan.parallel),
                                               row.estimate.estimate.time_s.iteration)}};
  }
  if (r.criterion_map) {
    write_json(dir / "criterion_map.json", to_json(*r.criterion_map));
    manifest["criterion_map"] = "criterion_map.json";
  }
  manifest["validation"] = nlohmann::json::array();
  for (const CachedValidation& c : r.validations) {
    const std::string file = "validation-" + fs::path(c.name).stem().string() + ".json";
    write_json(dir / file, validation_data(c));
    manifest["validation"].push_back(file);
  }
  write_json(dir / "figures.json", manifest);
}

std::vector<StudyFigure> drawn_figures(const StudyReport&, const fs::path& dir, const fs::path& report_path) {
  std::vector<StudyFigure> out;
  fs::path base = report_path.parent_path();
  if (base.empty()) base = ".";
  std::error_code ec;
  for (const Caption& c : kCaptions) {
    const fs::path png = dir / (std::string(c.name) + ".png");
    if (!fs::is_regular_file(png, ec)) continue;
    const fs::path rel = fs::weakly_canonical(png, ec).lexically_relative(fs::weakly_canonical(base, ec));
    out.push_back({c.name, c.text, (rel.empty() ? png : rel).generic_string()});
  }
  return out;
}

}  // namespace zeropp::search
