// The config zoo on disk: where configs/ is, what it holds, and how a name or a path becomes a file.
#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/zoo_paths.hpp"
#include "zeropp/source_dir.hpp"

namespace zeropp {
namespace fs = std::filesystem;
namespace {

std::vector<std::string> json_stems(const std::string& kind) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(configs_dir() / kind, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || (s.size() > 5 && s.ends_with(".json"));
}

}  // namespace

fs::path configs_dir() {
  if (const char* env = std::getenv("ZEROPP_CONFIGS"); env != nullptr && *env != '\0') {
    std::error_code ec;
    if (!fs::is_directory(env, ec))
      throw SpecError("ZEROPP_CONFIGS", fmt::format("ZEROPP_CONFIGS={} is not a directory", env));
    return env;
  }
  // An installed or built binary finds the configs/ beside (or above) it: build/cost_model/zeropp -> ./configs.
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path dir = exe.parent_path(); !dir.empty(); dir = dir.parent_path()) {
      if (fs::is_directory(dir / "configs" / "models", ec)) return dir / "configs";
      if (dir == dir.root_path()) break;
    }
  }
  return fs::path(ZEROPP_SOURCE_DIR) / "configs";
}

std::vector<std::string> zoo_models() { return json_stems("models"); }
std::vector<std::string> zoo_clusters() { return json_stems("clusters"); }
std::vector<std::string> zoo_experiments() { return json_stems("experiments"); }
std::string default_experiment_name() { return "default"; }

namespace detail {

fs::path resolve_config(const std::string& kind, const std::string& field, const std::string& name_or_path,
                        const fs::path& base_dir) {
  // The error_code forms: a name the file system rejects (too long, say) is a file that is not there, not an
  // exception from the file system.
  std::error_code ec;
  // An inline object belongs inside a plan or experiment file (configs/README.md); on a command line it is not a
  // name, and saying "not in the zoo" would not tell what to do.
  if (name_or_path.find_first_not_of(" \t\r\n") != std::string::npos &&
      name_or_path[name_or_path.find_first_not_of(" \t\r\n")] == '{')
    throw SpecError(field, fmt::format("{}: an inline JSON object works inside a plan or experiment file; here give a "
                                       "zoo name or the path of a JSON file holding it",
                                       field));
  if (looks_like_path(name_or_path)) {
    fs::path path = name_or_path;
    if (path.is_relative() && !base_dir.empty() && fs::exists(base_dir / path, ec)) path = base_dir / path;
    if (!fs::is_regular_file(path, ec))
      throw SpecError(field, fmt::format("{}: file \"{}\" not found", field, name_or_path));
    return path;
  }
  const fs::path path = configs_dir() / kind / (name_or_path + ".json");
  if (!fs::is_regular_file(path, ec)) {
    std::string known;
    for (const auto& name : json_stems(kind)) known += (known.empty() ? "" : ", ") + name;
    throw SpecError(field, fmt::format("{}=\"{}\" is not in the zoo ({}); known: {}", field, name_or_path,
                                       (configs_dir() / kind).string(), known));
  }
  return path;
}

}  // namespace detail
}  // namespace zeropp
