// Reading Google Benchmark JSON: names, units, repetitions, aggregates, and clear errors for malformed input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cost_model/calibrate/bench_results.hpp"
#include "cost_model/spec/error.hpp"

namespace zeropp::calibrate {
namespace {

nlohmann::json run(const std::string& name, double time, const std::string& unit) {
  return {{"name", name + "/iterations:5/manual_time"},
          {"run_name", name + "/iterations:5/manual_time"},
          {"run_type", "iteration"},
          {"iterations", 5},
          {"real_time", time},
          {"cpu_time", time * 3},
          {"time_unit", unit},
          {"bytes", 1024.0},
          {"ranks", 2.0}};
}

TEST(BenchResults, SplitsNamesConvertsUnitsAndKeepsCounters) {
  const nlohmann::json doc = {{"context", {}}, {"benchmarks", {run("all_reduce/mpi/intra/bytes:1024", 12.5, "us")}}};
  const auto parsed = parse_bench_results(doc, "r.json");
  ASSERT_EQ(parsed.results.size(), 1u);
  const auto& r = parsed.results[0];
  EXPECT_EQ(r.name, "all_reduce/mpi/intra/bytes:1024");
  EXPECT_EQ(r.parts, (std::vector<std::string>{"all_reduce", "mpi", "intra"}));
  EXPECT_EQ(r.args.at("bytes"), "1024");
  EXPECT_DOUBLE_EQ(r.seconds, 12.5e-6);
  EXPECT_DOUBLE_EQ(r.counter("ranks"), 2.0);
  EXPECT_THROW(r.counter("flop"), SpecError);
}

TEST(BenchResults, RepetitionsCollapseToTheirMedianAndAggregatesAreIgnored) {
  nlohmann::json doc = {{"benchmarks", nlohmann::json::array()}};
  for (double t : {3.0, 1.0, 2.0}) doc["benchmarks"].push_back(run("gemm/eigen/fp32/qkv_F/h:64/tokens:64", t, "ms"));
  auto aggregate = run("gemm/eigen/fp32/qkv_F/h:64/tokens:64", 100.0, "ms");
  aggregate["run_type"] = "aggregate";
  aggregate["aggregate_name"] = "mean";
  doc["benchmarks"].push_back(aggregate);
  auto failed = run("all_gather/mpi/intra/bytes:64", 1.0, "us");
  failed["error_occurred"] = true;
  failed["error_message"] = "data check failed at element 3";
  doc["benchmarks"].push_back(failed);
  const auto parsed = parse_bench_results(doc, "r.json");
  ASSERT_EQ(parsed.results.size(), 1u);
  EXPECT_DOUBLE_EQ(parsed.results[0].seconds, 2e-3);
  ASSERT_EQ(parsed.skipped.size(), 1u);
  EXPECT_NE(parsed.skipped[0].find("data check failed at element 3"), std::string::npos);
}

TEST(BenchResults, TheDeviceIsZeroppBenchsBackend) {
  nlohmann::json doc = {{"context", {{"zeropp_backend", "cuda"}}}, {"benchmarks", nlohmann::json::array()}};
  EXPECT_EQ(parse_bench_results(doc, "r.json").device, Device::gpu);
  doc["context"]["zeropp_backend"] = "cpu";
  EXPECT_EQ(parse_bench_results(doc, "r.json").device, Device::cpu);
  EXPECT_EQ(parse_bench_results(doc, "r.json").device_evidence, "zeropp-bench results of the cpu backend");
  doc["context"].erase("zeropp_backend");  // another program's Google Benchmark output: unknown
  EXPECT_FALSE(parse_bench_results(doc, "r.json").device.has_value());
}

std::string field_of(const nlohmann::json& doc) {
  try {
    parse_bench_results(doc, "r.json");
  } catch (const SpecError& e) {
    return e.field();
  }
  return "(no error)";
}

TEST(BenchResults, MalformedDocumentsNameTheField) {
  EXPECT_EQ(field_of(nlohmann::json::array()), "r.json.benchmarks");
  EXPECT_EQ(field_of({{"benchmarks", 3}}), "r.json.benchmarks");
  auto no_time = run("x/bytes:1", 1, "us");
  no_time.erase("real_time");
  EXPECT_EQ(field_of({{"benchmarks", {no_time}}}), "r.json.benchmarks[0].real_time");
  EXPECT_EQ(field_of({{"benchmarks", {run("x/bytes:1", 1, "us"), run("y/bytes:1", 1, "hours")}}}),
            "r.json.benchmarks[1].time_unit");
  EXPECT_EQ(field_of({{"benchmarks", {run("x/bytes:1", -1, "us")}}}), "r.json.benchmarks[0].real_time");
  auto text_counter = run("x/bytes:1", 1, "us");
  text_counter["bytes"] = "many";
  EXPECT_EQ(field_of({{"benchmarks", {text_counter}}}), "r.json.benchmarks[0].bytes");
  // Names reach the terminal in the calibration table: a control character in one is refused.
  EXPECT_EQ(field_of({{"benchmarks", {run("all_gather/\x1b[2J/intra/bytes:1", 1, "us")}}}),
            "r.json.benchmarks[0].name");
  // A time that overflows to infinity is no measurement either.
  EXPECT_EQ(field_of({{"benchmarks", {run("x/bytes:1", 1e308, "s")}}}), "r.json.benchmarks[0].real_time");
}

TEST(BenchResults, UnreadableOrInvalidFilesAreClearErrors) {
  EXPECT_THROW(load_bench_results("/nonexistent/results.json"), SpecError);
  const auto path = std::filesystem::temp_directory_path() / "zeropp_calibrate_invalid.json";
  std::ofstream(path) << "{\"benchmarks\": [";
  try {
    load_bench_results(path.string());
    FAIL() << "truncated JSON must be rejected";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), path.string());
    EXPECT_NE(std::string(e.what()).find("invalid JSON"), std::string::npos);
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace zeropp::calibrate
