#pragma once
// Finding config files: zoo names vs paths, and reading them (internal to cost_model/spec).
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace zeropp::detail {

// `kind` is the zoo sub-directory ("models", "clusters", "experiments"); `field` names the value in errors.
// A string ending in ".json" or holding a '/' is a path (relative: against base_dir first when it is given and
// the file exists there, else the working directory); anything else is a zoo name.
std::filesystem::path resolve_config(const std::string& kind, const std::string& field,
                                     const std::string& name_or_path, const std::filesystem::path& base_dir);

// Reads and parses a JSON file (comments allowed); errors name the file.
nlohmann::json read_json_file(const std::filesystem::path& path);

}  // namespace zeropp::detail
