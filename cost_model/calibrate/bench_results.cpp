#include "cost_model/calibrate/bench_results.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "cost_model/spec/error.hpp"
#include "cost_model/spec/json_reader.hpp"
#include "cost_model/spec/printable.hpp"

namespace zeropp::calibrate {
namespace {

// Keys of a Google Benchmark run that are not user counters.
const std::set<std::string>& standard_keys() {
  static const std::set<std::string> keys{"name",
                                          "family_index",
                                          "per_family_instance_index",
                                          "run_name",
                                          "run_type",
                                          "repetitions",
                                          "repetition_index",
                                          "threads",
                                          "iterations",
                                          "real_time",
                                          "cpu_time",
                                          "time_unit",
                                          "aggregate_name",
                                          "aggregate_unit",
                                          "error_occurred",
                                          "error_message",
                                          "big_o",
                                          "rms",
                                          "label",
                                          "complexity_n"};
  return keys;
}

double seconds_per_unit(const std::string& unit, const std::string& path) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1.0;
  throw SpecError(path, fmt::format("{}=\"{}\" must be one of ns, us, ms, s", path, unit));
}

// Google Benchmark appends run settings to the name ("/iterations:5/manual_time"); they are not arguments.
bool is_run_setting(const std::string& part) {
  return part == "manual_time" || part == "real_time" || part.starts_with("iterations:") ||
         part.starts_with("repeats:") || part.starts_with("threads:") || part.starts_with("min_time:") ||
         part.starts_with("min_warmup_time:");
}

const nlohmann::json& field(const nlohmann::json& run, const char* key, const std::string& path) {
  if (!run.contains(key)) throw SpecError(path + "." + key, fmt::format("{}.{} is required", path, key));
  return run.at(key);
}

std::string string_field(const nlohmann::json& run, const char* key, const std::string& path) {
  const auto& v = field(run, key, path);
  if (!v.is_string()) throw SpecError(path + "." + key, fmt::format("{}.{} must be a string", path, key));
  return v.get<std::string>();
}

double number_field(const nlohmann::json& run, const char* key, const std::string& path) {
  const auto& v = field(run, key, path);
  if (!v.is_number()) throw SpecError(path + "." + key, fmt::format("{}.{} must be a number", path, key));
  return v.get<double>();
}

void split_name(BenchResult& r) {
  std::stringstream in(r.name);
  std::string part;
  std::string kept;
  while (std::getline(in, part, '/')) {
    if (is_run_setting(part)) continue;
    kept += (kept.empty() ? "" : "/") + part;
    const auto colon = part.find(':');
    if (colon != std::string::npos) {
      r.args[part.substr(0, colon)] = part.substr(colon + 1);
    } else if (r.args.empty()) {
      r.parts.push_back(part);
    }
  }
  r.name = kept;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

double BenchResult::counter(const std::string& key) const {
  const auto it = counters.find(key);
  if (it == counters.end()) {
    const std::string path = source + ":" + name + "." + key;
    throw SpecError(path, fmt::format("{}: the benchmark reports no counter \"{}\"", source + ":" + name, key));
  }
  return it->second;
}

double BenchResult::counter_in(const std::string& key, const NumberRange& range) const {
  const double value = counter(key);
  if (!in_range(value, range)) {
    const std::string where = source + ":" + name;
    throw SpecError(where + "." + key,
                    fmt::format("{}: the counter {}={:g} {}", where, key, value, range_violation(value, range)));
  }
  return value;
}

void BenchResults::append(const BenchResults& other) {
  results.insert(results.end(), other.results.begin(), other.results.end());
  skipped.insert(skipped.end(), other.skipped.begin(), other.skipped.end());
  notes.insert(notes.end(), other.notes.begin(), other.notes.end());
}

BenchResults parse_bench_results(const nlohmann::json& document, const std::string& source) {
  if (!document.is_object() || !document.contains("benchmarks") || !document.at("benchmarks").is_array()) {
    throw SpecError(source + ".benchmarks",
                    fmt::format("{}: not Google Benchmark JSON output (no \"benchmarks\" array; write it with "
                                "--benchmark_out=FILE --benchmark_out_format=json)",
                                source));
  }
  BenchResults out;
  // zeropp-bench (microbench/main.cpp) names its backend in the context; other Google Benchmark files do not.
  if (const auto context = document.find("context"); context != document.end() && context->is_object()) {
    const auto backend = context->find("zeropp_backend");
    if (backend != context->end() && backend->is_string()) {
      const std::string name = backend->get<std::string>();
      if (name == "cuda" || name == "cpu") {
        out.device = name == "cuda" ? Device::gpu : Device::cpu;
        out.device_evidence = fmt::format("zeropp-bench results of the {} backend", name);
      }
    }
  }
  // Runs of one benchmark (repetitions) in order of first appearance.
  std::vector<BenchResult> firsts;
  std::map<std::string, std::vector<double>> times;
  const auto& runs = document.at("benchmarks");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string path = fmt::format("{}.benchmarks[{}]", source, i);
    const auto& run = runs[i];
    if (!run.is_object()) throw SpecError(path, fmt::format("{} must be an object", path));
    if (run.contains("run_type") && run.at("run_type") == "aggregate") continue;
    BenchResult r;
    r.source = source;
    r.name = string_field(run, run.contains("run_name") ? "run_name" : "name", path);
    check_printable(path + ".name", r.name);
    if (run.value("error_occurred", false)) {
      out.skipped.push_back(fmt::format("{}:{}: {}", source, r.name, printable(run.value("error_message", "error"))));
      continue;
    }
    const double t = number_field(run, "real_time", path) *
                     seconds_per_unit(string_field(run, "time_unit", path), path + ".time_unit");
    if (!(t > 0)) throw SpecError(path + ".real_time", fmt::format("{}.real_time must be > 0", path));
    check_number(path, "real_time", t, NumberRange{0, 1e9});  // seconds: finite, a typo is not a measurement
    for (const auto& [key, value] : run.items()) {
      if (standard_keys().count(key)) continue;
      if (!value.is_number()) {
        throw SpecError(path + "." + key, fmt::format("{}.{}: a user counter must be a number", path, key));
      }
      r.counters[key] = value.get<double>();
    }
    split_name(r);
    if (!times.count(r.name)) firsts.push_back(r);
    times[r.name].push_back(t);
  }
  // zeropp-bench's multi-node runs: the "inter" collectives ran on the whole world, nodes x ranks per node
  // (context zeropp_nodes, zeropp_ranks_per_node, -1 when uneven), which calibrate maps to the inter level
  // (calibrate/host_layout.hpp).
  std::optional<std::pair<double, double>> layout;
  if (const auto context = document.find("context"); context != document.end() && context->is_object()) {
    const auto nodes = context->find("zeropp_nodes"), per_node = context->find("zeropp_ranks_per_node");
    if (nodes != context->end() && per_node != context->end() && nodes->is_string() && per_node->is_string()) {
      const double n = std::atof(nodes->get<std::string>().c_str());
      const double r = std::atof(per_node->get<std::string>().c_str());
      if (n >= 1 && n <= limits::kGpus) layout = {n, r > 0 && r <= limits::kGpus ? r : 0};
    }
  }
  for (auto& r : firsts) {
    r.seconds = median(times[r.name]);
    if (layout && r.parts.size() > 2 && r.parts[2] == "inter") {
      r.counters["hosts"] = layout->first;
      r.counters["ranks_per_host"] = layout->second;
    }
    out.results.push_back(std::move(r));
  }
  return out;
}

BenchResults load_bench_results(const std::string& path) {
  nlohmann::json document;
  try {
    document = read_json_file(path, kBenchmarkJson);
  } catch (const SpecError& e) {
    throw SpecError(path, e.what());  // the file is the field: a command reads several
  }
  return parse_bench_results(document, path);
}

}  // namespace zeropp::calibrate
