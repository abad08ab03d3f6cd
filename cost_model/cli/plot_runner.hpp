#pragma once
// Runs one of the repository's plot scripts (plots/*.py) with Debian's matplotlib, for the commands that draw
// figures (`zeropp report`, `zeropp criterion --map`). The interpreter is $ZEROPP_PYTHON, else $PYTHON, else
// /usr/bin/python3 (which has python3-matplotlib: scripts/deps.sh); the scripts are plots/ beside configs/.
// Arguments go to the interpreter as they are (no shell), output to our stderr only on failure.
#include <string>
#include <vector>

namespace zeropp::cli {

struct PlotRun {
  bool drawn = false;
  std::string message;  // why not, with what to do; empty when drawn
};

// `script` is a file name under plots/ ("study_figures.py").
PlotRun run_plot_script(const std::string& script, const std::vector<std::string>& args);

}  // namespace zeropp::cli
