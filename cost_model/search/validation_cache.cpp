#include "cost_model/search/validation_cache.hpp"

#include <cstdint>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "cost_model/spec/atomic_file.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/json_reader.hpp"

namespace zeropp::search {
namespace {

namespace fs = std::filesystem;

// FNV-1a, 64 bits (Fowler, Noll, Vo; the offset basis and prime of the published 64-bit variant).
std::uint64_t fnv1a(std::string_view text, std::uint64_t hash = 14695981039346656037ULL) {
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

fs::path set_file(const std::string& set) {
  std::error_code ec;
  if (fs::is_regular_file(set, ec)) return set;
  return configs_dir() / "validation" / (set + ".json");
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string input_key(const fs::path& file, const ValidationReport& report) {
  std::uint64_t h = fnv1a(read_bytes(file));
  h = fnv1a(to_json(load_cluster(report.cluster)).dump(), h);
  for (const ValidationRow& row : report.rows) h = fnv1a(fmt::format("{}={:.9g};", row.name, row.predicted_tflops), h);
  return fmt::format("{:016x}", h);
}

nlohmann::json loo_json(const ValidationReport& r, const std::string& key) {
  nlohmann::json rows = nlohmann::json::array();
  for (const ValidationRow& row : r.rows)
    rows.push_back({{"name", row.name},
                    {"loo_gemm_efficiency", row.loo_efficiency},
                    {"loo_predicted_tflops_per_gpu", row.loo_predicted_tflops},
                    {"loo_error", row.loo_error}});
  return {{"key", key},
          {"source", r.source},
          {"cluster", r.cluster},
          {"profile_gemm_efficiency", r.profile_efficiency},
          {"fit", {{"gemm_efficiency", r.fit.value}, {"mean_abs_error", r.fit.mean_abs_error}}},
          {"loo", {{"mean_abs_error", r.loo_mean_abs_error}, {"max_abs_error", r.loo_max_abs_error}}},
          {"rows", rows}};
}

// The cached leave-one-out part into `r` when the file holds `key` for the same rows; false otherwise.
bool fill_from(const nlohmann::json& j, const std::string& key, ValidationReport& r) {
  if (!j.is_object() || j.value("key", "") != key || !j.contains("rows") || j["rows"].size() != r.rows.size())
    return false;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const auto& c = j["rows"][i];
    if (c.value("name", "") != r.rows[i].name) return false;
    r.rows[i].loo_efficiency = c.at("loo_gemm_efficiency").get<double>();
    r.rows[i].loo_predicted_tflops = c.at("loo_predicted_tflops_per_gpu").get<double>();
    r.rows[i].loo_error = c.at("loo_error").get<double>();
  }
  r.profile_efficiency = j.at("profile_gemm_efficiency").get<double>();
  r.fit.value = j.at("fit").at("gemm_efficiency").get<double>();
  r.fit.mean_abs_error = j.at("fit").at("mean_abs_error").get<double>();
  r.loo_mean_abs_error = j.at("loo").at("mean_abs_error").get<double>();
  r.loo_max_abs_error = j.at("loo").at("max_abs_error").get<double>();
  r.cross_validated = true;
  return true;
}

}  // namespace

bool same_gpu(const ClusterSpec& a, const ClusterSpec& b) {
  if (a.device != b.device || a.memory_bytes != b.memory_bytes) return false;
  bool shared = false;
  for (const auto& [dtype, peak] : a.peak_flops) {
    const auto other = b.peak_flops.find(dtype);
    if (other == b.peak_flops.end()) continue;
    if (other->second != peak) return false;
    shared = true;
  }
  return shared;
}

std::vector<std::string> validation_sets_for(const ClusterSpec& cluster) {
  std::vector<std::string> out;
  for (const std::string& set : validation_sets()) {
    const nlohmann::json j = read_json_file(set_file(set));
    if (j.contains("cluster") && j["cluster"].is_string() &&
        same_gpu(load_cluster(j["cluster"].get<std::string>()), cluster))
      out.push_back(set);
  }
  return out;
}

namespace {

// The cache file as the reader would type it from the working directory: relative when it lies below it, so a
// report committed to the repository names results/validation-cache/..., not the checkout's absolute path.
std::string shown_path(const fs::path& file) {
  std::error_code ec;
  const fs::path here = fs::current_path(ec);
  if (ec) return file.generic_string();
  const fs::path rel = fs::weakly_canonical(file, ec).lexically_relative(fs::weakly_canonical(here, ec));
  if (ec || rel.empty() || *rel.begin() == "..") return file.generic_string();
  return rel.generic_string();
}

}  // namespace

CachedValidation cross_validated(const std::string& set, const fs::path& cache_dir, bool refresh) {
  CachedValidation out;
  out.name = set;
  out.report = load_validation(set);
  run_validation(out.report);
  out.key = input_key(set_file(set), out.report);
  const fs::path file = cache_dir.empty() ? fs::path() : cache_dir / (fs::path(set).stem().string() + ".json");
  std::error_code ec;
  if (!file.empty() && !refresh && fs::is_regular_file(file, ec)) {
    try {
      if (fill_from(read_json_file(file), out.key, out.report)) {
        out.from_cache = true;
        out.note = fmt::format("leave-one-out errors from {} (input hash {})", shown_path(file), out.key);
        return out;
      }
      out.note = "cache stale (the set, its profile or the model's predictions changed): recomputed; ";
    } catch (const SpecError&) {
      out.note = "cache unreadable: recomputed; ";
    } catch (const nlohmann::json::exception&) {
      out.note = "cache unreadable: recomputed; ";
    }
  }
  run_cross_validation(out.report);
  if (file.empty()) return out;
  try {
    // Output::cache: the file read above (stale) is replaced by the fresh one, which a result may never do.
    write_file_atomically(file, loo_json(out.report, out.key).dump(2) + "\n", "validation cache", ParentDirs::create,
                          Output::cache);
    out.note += fmt::format("leave-one-out run and cached in {} (input hash {})", shown_path(file), out.key);
  } catch (const SpecError& e) {
    out.note += fmt::format("leave-one-out run; not cached ({})", e.what());
  }
  return out;
}

}  // namespace zeropp::search
