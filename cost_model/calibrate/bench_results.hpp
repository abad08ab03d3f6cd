#pragma once
// Google Benchmark JSON results (`--benchmark_out=FILE`, the default JSON format) as calibration input.
// Each benchmark run becomes one BenchResult: its name split into the parts zeropp-bench encodes
// (microbench/suites.hpp: "all_reduce/mpi/intra/bytes:1024"), the time per iteration in seconds, and the
// user counters. Repetitions of one benchmark collapse to their median; Google Benchmark's own aggregates
// (mean, median, stddev) are ignored, since the medians are recomputed from the runs.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost_model/spec/cluster_spec.hpp"
#include "cost_model/spec/limits.hpp"

namespace zeropp::calibrate {

struct BenchResult {
  std::string name;                         // run name without Google Benchmark's suffixes
  std::vector<std::string> parts;           // name parts before the first "key:value" argument
  std::map<std::string, std::string> args;  // "bytes" -> "1024", "h" -> "512"
  double seconds = 0;                       // real (or manual) time per iteration, median over repetitions
  std::map<std::string, double> counters;   // user counters ("bytes", "ranks", "flop", ...)
  std::string source;                       // the file it came from

  // The counter `key`; throws SpecError("<source>:<name>.<key>") when the benchmark did not report it.
  double counter(const std::string& key) const;
  // The counter `key` when it lies in `range`; a size of -4 bytes, a NaN or an overflowed count is refused the
  // same way, naming the file, the benchmark and the counter (never skipped in silence).
  double counter_in(const std::string& key, const NumberRange& range) const;
};

struct BenchResults {
  std::vector<BenchResult> results;
  std::vector<std::string> skipped;  // "<source>:<name>: <error message>" for runs that reported an error
  std::vector<std::string> notes;    // what a reader left out or could not check, for the calibration notes
  // The kind of device the results were measured on, where the file says (zeropp-bench's context
  // "zeropp_backend", nccl-tests: always GPUs), and the words that say it, for messages.
  std::optional<Device> device;
  std::string device_evidence;
  // nccl-tests output that neither names nor shows its collective: it was read as NcclTestsOptions::collective.
  bool collective_from_option = false;

  // Appends another file's results (zeropp calibrate reads several); the device is each file's own.
  void append(const BenchResults& other);
};

// Parses one Google Benchmark JSON document; its device is zeropp-bench's context "zeropp_backend" ("cuda": gpu,
// "cpu": cpu), unknown without it. Throws SpecError naming "<source>.benchmarks[i].<field>" for a
// missing or mistyped field, an unknown time unit, a time that is not positive and finite, or a name with a
// control character (names are printed in the calibration table).
BenchResults parse_bench_results(const nlohmann::json& document, const std::string& source);
// Reads and parses a file; unreadable files and invalid JSON throw SpecError naming the file.
BenchResults load_bench_results(const std::string& path);

}  // namespace zeropp::calibrate
