#pragma once
// Sub-command registry for the `zeropp` CLI. Each cli/<name>.cpp defines one command and registers it with a
// static `const bool registered = zeropp::cli::register_command({...});`, so adding a command edits no other file.
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace zeropp::cli {

enum class Format { table, json };

struct Command {
  std::string name;
  std::string description;
  // Adds the sub-command's options to `sub` and returns the action to run once parsing succeeded.
  std::function<std::function<int()>(CLI::App& sub)> setup;
};

bool register_command(Command);
const std::vector<Command>& commands();

// Adds `--format table|json` bound to `format`.
void add_format_option(CLI::App& sub, Format& format);

// JSON outputs carry this schema version (bumped on any incompatible change).
inline constexpr int kSchemaVersion = 1;

}  // namespace zeropp::cli
