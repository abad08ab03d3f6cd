// Chrome trace JSON and the ASCII grid of a small run whose timeline is known by hand.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cost_model/schedule/action.hpp"
#include "cost_model/simulate/ascii_grid.hpp"
#include "cost_model/simulate/costs.hpp"
#include "cost_model/simulate/simulator.hpp"
#include "cost_model/simulate/trace.hpp"

namespace zeropp::simulate {
namespace {

// 1F1B, p=2, B=2, F=1, BW=1: rank 0 F0 [0,1] F1 [1,2] BW0 [3,4] BW1 [5,6]; rank 1 F0 [1,2] BW0 [2,3] F1 [3,4]
// BW1 [4,5].
const char* const kProgram = "0F0 0F1 0BW0 0BW1\n1F0 1BW0 1F1 1BW1\n";

SimResult run(const schedule::Program& program, bool timeline = false) {
  SimOptions options;
  options.memory_timeline = timeline;
  return simulate(program, ActionCosts::uniform(2, 1, 1, 0.5, 0.5), options);
}

TEST(AsciiGrid, ClassicOneFOneBPicture) {
  const auto program = schedule::parse_program(kProgram, 2, 1, 2);
  const std::string grid = ascii_grid(program, run(program));
  EXPECT_EQ(grid,
            "rank 0 |F0 F1 .  B0 .  B1|\n"
            "rank 1 |.  F0 B0 F1 B1 . |\n");
}

TEST(AsciiGrid, WideRunsAreCompressedToTheWidth) {
  std::string text0, text1;
  for (int m = 0; m < 200; ++m) text0 += "0F" + std::to_string(m) + " ";
  for (int m = 0; m < 200; ++m) text0 += "0BW" + std::to_string(m) + " ";
  const auto program = schedule::parse_program(text0 + "\n", 1, 1, 200);
  GridOptions options;
  options.max_width = 80;
  const std::string grid = ascii_grid(program, simulate(program, ActionCosts::uniform(1, 1, 1, 1, 1)), options);
  EXPECT_LE(grid.find('\n'), 80u);
  EXPECT_EQ(grid.substr(0, 9), "rank 0 |F");  // forwards first, then backwards
  EXPECT_NE(grid.find("B1"), std::string::npos);
  // 400 unit actions in ~17 cells: most are hidden, and the grid says so.
  EXPECT_NE(grid.find("some actions are hidden"), std::string::npos);
}

TEST(AsciiGrid, AnUnsqueezedGridHidesNothingAndSaysNothing) {
  const auto program = schedule::parse_program(kProgram, 2, 1, 2);
  EXPECT_EQ(ascii_grid(program, run(program)).find("hidden"), std::string::npos);
}

TEST(ChromeTrace, EventsCarryIrNamesRanksStreamsAndTimes) {
  const auto program = schedule::parse_program(kProgram, 2, 1, 2);
  const SimResult result = run(program, /*timeline=*/true);
  const auto json = nlohmann::json::parse(chrome_trace_json(program, result));
  int complete = 0, counters = 0;
  bool found = false;
  for (const auto& e : json.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "C") ++counters;
    if (ph != "X") continue;
    ++complete;
    if (e.at("name") == "1BW0") {
      found = true;
      EXPECT_EQ(e.at("pid"), 1);
      EXPECT_EQ(e.at("tid"), 0);  // compute stream
      EXPECT_DOUBLE_EQ(e.at("ts").get<double>(), 2e6);
      EXPECT_DOUBLE_EQ(e.at("dur").get<double>(), 1e6);
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(complete, 8);
  EXPECT_GT(counters, 0);
}

TEST(ChromeTrace, WrittenAtomically) {
  const auto dir = std::filesystem::temp_directory_path() / ("zeropp_trace_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto program = schedule::parse_program(kProgram, 2, 1, 2);
  const SimResult result = run(program);
  const auto path = dir / "trace.json";
  write_chrome_trace(path, program, result);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), chrome_trace_json(program, result));
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1);  // no temporary left behind
  EXPECT_ANY_THROW(write_chrome_trace(dir / "missing" / "trace.json", program, result));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zeropp::simulate
