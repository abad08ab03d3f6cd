// `zeropp`: the analytic model, the schedule simulator and the plan search behind one CLI.
// Errors in input print one line naming the field and the rule, and exit with code 2.
#include <algorithm>
#include <cctype>
#include <iostream>
#include <memory>

#include "cost_model/cli/command.hpp"
#include "cost_model/options/cli_checks.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/input_files.hpp"
#include "cost_model/spec/printable.hpp"
#include "zeropp/version.hpp"

namespace zeropp::cli {

static std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}

bool register_command(Command command) {
  registry().push_back(std::move(command));
  return true;
}

const std::vector<Command>& commands() { return registry(); }

void add_format_option(CLI::App& sub, Format& format) {
  // A plain transform (not CLI11's CheckedTransformer, whose help reads "ENUM:value in {json->1,table->0} OR
  // {1,0}" and which also takes the enum's numbers): the help says "table|json", the error names the option.
  sub.add_option("--format", format, "Output format: table (default) or json")
      ->transform(CLI::Validator(
          [](std::string& value) -> std::string {
            std::string lower;
            for (char c : value) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            if (lower == "table" || lower == "json") {
              value = std::to_string(static_cast<int>(lower == "json" ? Format::json : Format::table));
              return {};
            }
            return "must be table or json";
          },
          ""))
      ->option_text("table|json");
}

}  // namespace zeropp::cli

int main(int argc, char** argv) {
  using namespace zeropp;
  CLI::App app{"zeropp: should you drop tensor parallelism for ZeroPP? Analytic model, schedule simulator, search."};
  app.set_version_flag("--version", version_line("zeropp"));
  app.require_subcommand(1);
  auto sorted = cli::commands();
  std::sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) { return a.name < b.name; });
  std::function<int()> action;
  for (const auto& command : sorted) {
    CLI::App* sub = app.add_subcommand(command.name, command.description);
    auto run = command.setup(*sub);
    sub->callback([&action, run] { action = run; });
  }
  // A first word that is no command: name it (CLI11 says only "A subcommand is required").
  const auto is_command = [&](const char* word) {
    return std::any_of(sorted.begin(), sorted.end(), [&](const auto& c) { return c.name == word; });
  };
  if (argc > 1 && argv[1][0] != '-' && !is_command(argv[1])) {
    std::string names;
    for (const auto& command : sorted) names += (names.empty() ? "" : ", ") + command.name;
    std::cerr << "zeropp: error: unknown command \"" << printable(argv[1]) << "\" (commands: " << names
              << ") (see --help)\n";
    return 2;
  }
  if (const int code = cli_checks::parse(app, argc, argv, "zeropp"); code >= 0) return code;
  // Messages quote names, keys and paths from the user's files: printable() keeps each one line and inert.
  try {
    const InputFiles inputs;  // what the command reads, so that no output of it replaces one (atomic_file.hpp)
    return action ? action() : 0;
  } catch (const std::exception& e) {
    std::cerr << "zeropp: error: " << printable(e.what()) << "\n";
    return 2;
  }
}
