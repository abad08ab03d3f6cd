#include "cost_model/cli/plot_runner.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "cost_model/spec/config.hpp"

extern char** environ;

namespace zeropp::cli {
namespace {

namespace fs = std::filesystem;

std::string python() {
  for (const char* name : {"ZEROPP_PYTHON", "PYTHON"})
    if (const char* v = std::getenv(name); v && *v) return v;
  return "/usr/bin/python3";
}

// Runs argv with stdout and stderr into `log`; the exit status, or -1 when it could not start.
int spawn(const std::vector<std::string>& argv, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string tail_of(const fs::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

}  // namespace

PlotRun run_plot_script(const std::string& script, const std::vector<std::string>& args) {
  const fs::path plots = (configs_dir() / ".." / "plots").lexically_normal();
  const fs::path path = plots / script;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    return {false, fmt::format("no plot script {} (the repository's plots/ folder beside configs/)", path.string())};
  const std::string py = python();
  const fs::path log = fs::temp_directory_path(ec) / fmt::format("zeropp-plot-{}.log", ::getpid());
  if (spawn({py, "-c", "import matplotlib"}, log) != 0) {
    fs::remove(log, ec);
    return {false, fmt::format("{} cannot import matplotlib: install Debian's python3-matplotlib (scripts/deps.sh) "
                               "or set ZEROPP_PYTHON to an interpreter that has it",
                               py)};
  }
  std::vector<std::string> argv = {py, path.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  const int rc = spawn(argv, log);
  const std::string last = rc == 0 ? "" : tail_of(log);
  fs::remove(log, ec);
  if (rc != 0) return {false, fmt::format("{} {} failed (exit {}): {}", py, script, rc, last)};
  return {true, ""};
}

}  // namespace zeropp::cli
