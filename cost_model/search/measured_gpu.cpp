#include "cost_model/search/measured_gpu.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include <nlohmann/json.hpp>

#include "cost_model/spec/error.hpp"
#include "cost_model/spec/json_reader.hpp"

namespace zeropp::search {
namespace {

std::optional<nlohmann::json> read_object(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  try {
    nlohmann::json j = read_json_file(path);
    if (j.is_object()) return j;
  } catch (const SpecError&) {
  }
  return std::nullopt;
}

double number(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

std::string text(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

// summary.json's "trainer" and "torch_step" entries (scripts/device/summarize.py) as rows.
std::vector<MeasuredStep> steps_of(const nlohmann::json& summary) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  std::vector<MeasuredStep> out;
  const std::array<std::pair<const char*, const char*>, 2> trainers{
      {{"trainer", "zeropp-train (materialised softmax(QK^T)V)"}, {"trainer_flash", "zeropp-train (its flash attention)"}}};
  for (const auto& [key, who] : trainers) {
    if (!summary.contains(key) || !summary[key].is_object()) continue;
    const nlohmann::json& t = summary[key];
    if (number(t, "iteration_seconds") > 0)
      out.push_back({who, number(t, "iteration_seconds"), number(t, "tokens_per_second"), number(t, "mfu"),
                     number(t, "peak_memory_bytes") / kGiB});
  }
  if (summary.contains("torch_step") && summary["torch_step"].is_object()) {
    const std::array<std::pair<const char*, const char*>, 3> modes{
        {{"eager", "PyTorch eager (SDPA attention)"},
         {"compile", "PyTorch torch.compile (SDPA attention)"},
         {"eager_math", "PyTorch eager, materialised softmax(QK^T)V as zeropp-train"}}};
    for (const auto& [key, who] : modes) {
      if (!summary["torch_step"].contains(key) || !summary["torch_step"][key].is_object()) continue;
      const nlohmann::json& m = summary["torch_step"][key];
      if (number(m, "step_seconds") > 0)
        out.push_back({who, number(m, "step_seconds"), number(m, "tokens_per_second"), number(m, "mfu"),
                       number(m, "peak_memory_bytes") / kGiB});
    }
  }
  return out;
}

}  // namespace

std::vector<MeasuredGpu> load_measured_gpus(const std::filesystem::path& dir) {
  std::vector<MeasuredGpu> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return out;
  std::vector<std::filesystem::path> folders;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.is_directory()) folders.push_back(entry.path());
  std::sort(folders.begin(), folders.end());
  for (const auto& folder : folders) {
    const std::optional<nlohmann::json> machine = read_object(folder / "machine.json");
    const std::optional<nlohmann::json> summary = read_object(folder / "summary.json");
    if (!machine || !summary) continue;
    MeasuredGpu g;
    g.folder = folder.filename().string();
    if (machine->contains("gpu") && (*machine)["gpu"].is_object()) {
      const nlohmann::json& row = (*machine)["gpu"];
      g.gpu = text(row, "name");
      g.driver = text(row, "driver_version");
      g.power_limit = text(row, "power.limit [W]");
    }
    g.trainer = load_loop_runs(folder);
    g.steps = steps_of(*summary);
    if (number(*summary, "mfu_zeropp_over_torch_eager") > 0)
      g.mfu_over_torch_eager = number(*summary, "mfu_zeropp_over_torch_eager");
    if (number(*summary, "mfu_zeropp_flash_over_torch_eager") > 0)
      g.flash_mfu_over_torch_eager = number(*summary, "mfu_zeropp_flash_over_torch_eager");
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace zeropp::search
