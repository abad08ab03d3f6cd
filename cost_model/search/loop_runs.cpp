#include "cost_model/search/loop_runs.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "cost_model/search/describe.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/json_reader.hpp"

namespace zeropp::search {
namespace {

// The plan's one-line description, or the plan file's name when the embedded plan does not parse (a result
// written by an older trainer).
std::string plan_text(const nlohmann::json& run) {
  if (run.contains("plan") && run["plan"].is_object() && run["plan"].contains("parallel")) {
    try {
      return describe_plan(parallel_from_json(run["plan"]["parallel"]));
    } catch (const SpecError&) {
    }
  }
  return run.value("plan_file", std::string("?"));
}

}  // namespace

std::vector<LoopRun> load_loop_runs(const std::filesystem::path& dir) {
  std::vector<LoopRun> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return out;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    nlohmann::json run;
    try {
      run = read_json_file(path);  // trainer results are small: a large benchmark file is skipped unread
    } catch (const SpecError&) {
      continue;
    }
    if (!run.is_object() || run.value("kind", std::string()) != "zeropp-train") continue;
    if (!run.contains("model_comparison") || !run["model_comparison"].is_object()) continue;
    const nlohmann::json& mc = run["model_comparison"];
    if (!mc.contains("measured_iteration_s") || !mc["measured_iteration_s"].is_number() ||
        !mc.contains("predicted_iteration_s") || !mc["predicted_iteration_s"].is_number())
      continue;
    LoopRun r;
    r.file = path.filename().string();
    r.plan = plan_text(run);
    r.backend = run.value("backend", std::string("?"));
    r.world = run.value("world", 0);
    r.costs = mc.value("costs", std::string("?"));
    // The trainer writes "analytic (plan's cluster)"; the run's plan names that cluster (results of different GPUs
    // sit side by side in the report: dgx-h100's prediction beside dgx-h200's).
    const nlohmann::json* plan = run.contains("plan") && run["plan"].is_object() ? &run["plan"] : nullptr;
    if (r.costs == "analytic (plan's cluster)" && plan && plan->contains("cluster") && (*plan)["cluster"].is_object() &&
        (*plan)["cluster"].contains("name") && (*plan)["cluster"]["name"].is_string())
      r.costs = "analytic (" + (*plan)["cluster"]["name"].get<std::string>() + ")";
    r.measured_s = mc["measured_iteration_s"].get<double>();
    r.predicted_s = mc["predicted_iteration_s"].get<double>();
    r.error = r.measured_s > 0 ? (r.predicted_s - r.measured_s) / r.measured_s : 0;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace zeropp::search
