#include "cost_model/calibrate/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "cost_model/analytic/time_model.hpp"
#include "cost_model/calibrate/alpha_beta_fit.hpp"
#include "cost_model/calibrate/gemm_fit.hpp"
#include "cost_model/calibrate/host_layout.hpp"
#include "cost_model/calibrate/layer_fit.hpp"
#include "cost_model/calibrate/optimizer_fit.hpp"
#include "cost_model/calibrate/piecewise_fit.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/limits.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/provenance.hpp"

namespace zeropp::calibrate {
namespace {

using analytic::Collective;

// What a benchmark result may report: the bounds of a profile (cluster_json.cpp) and of a model (limits.hpp).
constexpr NumberRange kBytes{0, 1e18};                                             // collective buffer, bytes
constexpr NumberRange kRanks{1, static_cast<double>(limits::kGpus), false};        // GPUs in the collective
constexpr NumberRange kFlops{0, 1e30};                                             // 2*m*n*k of one GEMM
constexpr NumberRange kParams{0, 1e15};                                            // parameters of an optimizer step
constexpr NumberRange kLayerSize{1, static_cast<double>(limits::kSeqLen), false};  // h, a, s, b of a layer

struct Series {
  Collective c;
  std::vector<CollectiveSample> samples;
  std::vector<std::string> labels;
  std::set<std::string> sources;  // file names, for the profile's provenance
  std::optional<HostLayout> layout;
};

// "a.txt, b.json": the file names of a fit's results (the provenance of the entry it replaces).
std::string source_list(const std::set<std::string>& sources) {
  std::string out;
  for (const auto& s : sources) out += (out.empty() ? "" : ", ") + std::filesystem::path(s).filename().string();
  return out;
}

// The entry `key` of the profile was measured from `sources`: it replaces the base's, value and provenance.
void mark_calibrated(Calibration& out, const std::string& key, std::string source) {
  out.profile.provenance.entries[key] = {Provenance::calibrated, std::move(source)};
}

// The host layout of a collective result: the counters "hosts" and "ranks_per_host" that nccl-tests output and
// zeropp-bench's multi-node runs carry (0 ranks per host: uneven); unknown without them.
HostLayout host_layout_of(const BenchResult& r) {
  const auto hosts = r.counters.find("hosts"), per_host = r.counters.find("ranks_per_host");
  if (hosts == r.counters.end() || per_host == r.counters.end()) return {.known = false};
  return {static_cast<int>(hosts->second), static_cast<int>(per_host->second), true};
}

struct ErrorStats {
  double rms = 0, max = 0, mean = 0;
};

ErrorStats stats(const std::vector<double>& errors) {
  ErrorStats s;
  if (errors.empty()) return s;
  for (double e : errors) {
    s.rms += e * e;
    s.mean += e;
    s.max = std::max(s.max, e);
  }
  s.rms = std::sqrt(s.rms / static_cast<double>(errors.size()));
  s.mean /= static_cast<double>(errors.size());
  return s;
}

double relative_error(double predicted, double measured) { return std::abs(predicted - measured) / measured; }

// One row of the fit table: the final fit's errors over its points, the held-out errors of the fit made without
// them, and the fitted values for people.
FitReport fit_report(std::string what, std::size_t points, const std::vector<double>& fit_errors,
                     const std::vector<double>& held_errors, std::string parameters) {
  const ErrorStats fit = stats(fit_errors), held = stats(held_errors);
  FitReport report;
  report.what = std::move(what);
  report.points = points;
  report.held_out = held_errors.size();
  report.fit_rms_error = fit.rms;
  report.fit_max_error = fit.max;
  report.held_out_max_error = held.max;
  report.held_out_mean_error = held.mean;
  report.parameters = std::move(parameters);
  return report;
}

// Sorts a series by size (then group size), keeping each label with its sample.
void sort_series(Series& series) {
  std::vector<std::size_t> order(series.samples.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto key = [&](std::size_t i) { return std::make_tuple(series.samples[i].bytes, series.samples[i].ranks); };
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return key(a) < key(b); });
  Series sorted{series.c, {}, {}, series.sources, series.layout};
  for (auto i : order) {
    sorted.samples.push_back(series.samples[i]);
    sorted.labels.push_back(series.labels[i]);
  }
  series = std::move(sorted);
}

// The measured times as the fit's table (CollectiveFit::table), when every sample ran on the same number of
// ranks; the time model interpolates it for groups of that size.
CollectiveFit with_table(CollectiveFit fit, const std::vector<CollectiveSample>& samples) {
  if (samples.empty()) return fit;
  for (const auto& s : samples)
    if (s.ranks != samples.front().ranks) return fit;
  fit.table_ranks = samples.front().ranks;
  for (const auto& s : samples) {
    if (!fit.table.empty() && s.bytes <= fit.table.back().bytes) continue;  // sorted; a repeated size once
    fit.table.push_back({s.bytes, s.seconds});
  }
  return fit;
}

void fit_collective_series(const std::string& level, Series& series, Calibration& out) {
  const std::string what = level + "/" + analytic::collective_name(series.c);
  const std::string field = "collectives." + level + "." + analytic::collective_name(series.c);
  sort_series(series);
  const auto mask = held_out_mask(series.samples.size());
  std::vector<CollectiveSample> train;
  for (std::size_t i = 0; i < series.samples.size(); ++i)
    if (!mask[i]) train.push_back(series.samples[i]);

  std::vector<double> held_errors;
  if (train.size() < series.samples.size()) {
    const CollectiveFit partial = with_table(fit_piecewise(series.c, train, field), train);
    for (std::size_t i = 0; i < series.samples.size(); ++i) {
      if (!mask[i]) continue;
      const double predicted = predict_piecewise(series.c, partial, series.samples[i]);
      out.held_out.push_back({what, series.labels[i], series.samples[i].seconds, predicted});
      held_errors.push_back(out.held_out.back().error());
    }
  }
  const auto full = fit_alpha_beta(series.c, series.samples, field);
  // The fit columns score the lines (what other group sizes use): the table reproduces its own points exactly.
  const CollectiveFit lines = fit_piecewise(series.c, series.samples, field);
  const CollectiveFit fit = with_table(lines, series.samples);
  std::vector<double> errors;
  for (const auto& s : series.samples)
    errors.push_back(relative_error(predict_piecewise(series.c, lines, s), s.seconds));
  // A ring over several hosts with more than one rank on each: its busbw is each host's network traffic, not one
  // GPU's (host_layout.hpp). The fit above scores the run as measured; the entry holds the per-GPU figure.
  std::string sources = source_list(series.sources);
  InterMapping mapping;
  if (level == "inter" && series.layout && series.c != Collective::send_recv) {
    double intra_busbw = out.profile.intra.bandwidth;
    if (const auto intra = out.profile.collectives.find("intra"); intra != out.profile.collectives.end())
      if (const auto own = intra->second.find(analytic::collective_name(series.c)); own != intra->second.end())
        intra_busbw = own->second.bandwidth;
    mapping = map_inter_run(what, field, sources, *series.layout, full.fit.bandwidth, intra_busbw,
                            out.profile.inter.bandwidth);
  }
  CollectiveFit entry = mapping.keep_table ? fit : lines;
  entry.bandwidth /= mapping.divisor;
  for (auto& seg : entry.segments) seg.bandwidth /= mapping.divisor;
  std::string parameters =
      fmt::format("alpha {:.3g} us/step, busbw {:.4g} GB/s", full.fit.latency * 1e6, full.fit.bandwidth / 1e9);
  for (const auto& seg : fit.segments) {
    parameters += fmt::format("; <= {:.3g} B: alpha {:.3g} us, busbw {:.4g} GB/s", seg.max_bytes, seg.latency * 1e6,
                              seg.bandwidth / 1e9);
  }
  if (!entry.table.empty()) {
    parameters +=
        fmt::format("; table of {} sizes for {} ranks (used for that group size)", fit.table.size(), fit.table_ranks);
  }
  if (mapping.divisor != 1) {
    parameters +=
        fmt::format("; per GPU {:.4g} GB/s (busbw / {:g} GPUs per host)", entry.bandwidth / 1e9, mapping.divisor);
    sources += fmt::format(", derived: busbw / {:g} GPUs per host", mapping.divisor);
    out.notes.push_back(mapping.note);
  }
  if (full.latency_clamped) out.notes.push_back(what + ": fitted latency was negative; fitted with latency 0");
  out.fits.push_back(fit_report(what, series.samples.size(), errors, held_errors, std::move(parameters)));
  out.profile.collectives[level][analytic::collective_name(series.c)] = entry;
  mark_calibrated(out, collective_entry(level, analytic::collective_name(series.c)), sources);
  if (series.c == Collective::send_recv) {
    LinkSpec& link = level == "intra" ? out.profile.intra : out.profile.inter;
    link = LinkSpec{full.fit.bandwidth, full.fit.latency};
    mark_calibrated(out, level, sources + " (the send_recv line)");
  }
}

// Held-out GEMM sizes: whole size groups, every third in increasing total FLOPs, never the first or last.
std::set<std::string> held_out_groups(const std::vector<GemmSample>& samples) {
  std::map<std::string, double> total;
  for (const auto& s : samples) total[s.group] += s.flop;
  std::vector<std::pair<double, std::string>> order;
  for (const auto& [group, flop] : total) order.emplace_back(flop, group);
  std::sort(order.begin(), order.end());
  const auto mask = held_out_mask(order.size());
  std::set<std::string> held;
  for (std::size_t i = 0; i < order.size(); ++i)
    if (mask[i]) held.insert(order[i].second);
  return held;
}

// A CPU profile's peak comes from the OS and a short FMA loop (zeropp-bench --zeropp_cpu_profile); a core can
// run a GEMM faster than that (a guest OS shows the base clock, the core runs at boost). Then the fastest GEMM is
// the better bound on the peak: raise it, and say so. A GPU's peak is a spec-sheet figure: a GEMM above it is a
// unit error, which fit_gemm_table reports naming the field.
void raise_cpu_peak_to_fastest_gemm(Dtype dtype, const std::vector<GemmSample>& samples, Calibration& out) {
  if (out.profile.device != Device::cpu) return;
  const double stated = out.profile.peak(dtype);
  const GemmSample* fastest = nullptr;
  for (const auto& s : samples) {
    if (!(s.flop > 0) || !(s.seconds > 0)) continue;  // fit_gemm_table rejects them, naming the sample
    if (!fastest || s.flop / s.seconds > fastest->flop / fastest->seconds) fastest = &s;
  }
  if (!fastest || !(fastest->flop / fastest->seconds > stated)) return;
  const double raised = fastest->flop / fastest->seconds;
  out.profile.peak_flops[dtype] = raised;
  mark_calibrated(out, "peak_tflops." + to_string(dtype), "raised to " + fastest->name);
  out.warnings.push_back(
      fmt::format("cluster.peak_tflops.{} raised from {:.4g} to {:.4g} TFLOP/s: {} ran faster "
                  "than the stated peak of this CPU profile",
                  to_string(dtype), stated / 1e12, raised / 1e12, fastest->name));
}

void fit_gemm_series(Dtype dtype, std::vector<GemmSample>& samples, const std::string& sources, Calibration& out) {
  const std::string what = "gemm/" + to_string(dtype);
  const std::string field = "gemm_table." + to_string(dtype);
  const std::string peak_field = "cluster.peak_tflops." + to_string(dtype);
  raise_cpu_peak_to_fastest_gemm(dtype, samples, out);
  const double peak = out.profile.peak(dtype);
  const std::set<std::string> held = held_out_groups(samples);
  std::vector<GemmSample> train;
  for (const auto& s : samples)
    if (!held.count(s.group)) train.push_back(s);

  // Predictions go through the time model's own lookup, so the check scores what the model will compute.
  auto predict = [&](const std::vector<GemmEfficiencyPoint>& table, const GemmSample& s) {
    ClusterSpec probe = out.profile;
    probe.gemm_table[dtype] = table;
    return s.flop / (peak * analytic::gemm_efficiency(probe, dtype, s.flop));
  };
  std::vector<double> held_errors;
  if (!held.empty()) {
    const auto partial = fit_gemm_table(train, peak, field, peak_field);
    // One score per held-out (group, pass): sums of measured and predicted times of its GEMMs.
    std::map<std::pair<std::string, std::string>, std::pair<double, double>> sums;
    for (const auto& s : samples) {
      if (!held.count(s.group)) continue;
      auto& [measured, predicted] = sums[{s.group, s.pass}];
      measured += s.seconds;
      predicted += predict(partial, s);
    }
    for (const auto& [key, times] : sums) {
      out.held_out.push_back({what, key.first + " " + key.second, times.first, times.second});
      held_errors.push_back(out.held_out.back().error());
    }
  }
  const auto table = fit_gemm_table(samples, peak, field, peak_field);
  std::vector<double> errors;
  for (const auto& s : samples) errors.push_back(relative_error(predict(table, s), s.seconds));
  out.fits.push_back(fit_report(
      what, samples.size(), errors, held_errors,
      fmt::format("{} points, efficiency {:.3f} at {:.3g} FLOP .. {:.3f} at {:.3g} FLOP", table.size(),
                  table.front().efficiency, table.front().flops, table.back().efficiency, table.back().flops)));
  out.profile.gemm_table[dtype] = table;
  mark_calibrated(out, gemm_table_entry(dtype), sources);
}

// "qkv_F" -> "F"; shapes without a pass suffix are their own pass.
std::string pass_of(const std::string& shape) {
  const auto underscore = shape.rfind('_');
  if (underscore != std::string::npos && underscore + 2 == shape.size()) {
    const char p = shape.back();
    if (p == 'F' || p == 'B' || p == 'W') return std::string(1, p);
  }
  if (shape.starts_with("attn_score") || shape.starts_with("attn_context")) return "attention";
  return shape;
}

std::string group_of(const BenchResult& r) {
  std::string group;
  for (const auto& [key, value] : r.args) group += (group.empty() ? "" : "/") + key + ":" + value;
  return group.empty() ? r.name : group;
}

// Layer passes: the in-layer GEMM rate and the memory bandwidth of the time model's memory-bound kernels
// (layer_fit.hpp), on top of the GEMM table. Held out: whole layer shapes (every third by size, never the first
// or the last), scored per pass.
void fit_layer_series(Dtype dtype, const std::vector<LayerSample>& samples, const std::string& sources,
                      Calibration& out) {
  const std::string what = "layer/" + to_string(dtype);
  const std::string field = "memory_bandwidth";
  std::map<std::string, double> size;
  for (const auto& s : samples) size[s.group()] = static_cast<double>(s.h) * s.h * s.s * s.b;
  std::vector<std::pair<double, std::string>> order;
  for (const auto& [group, n] : size) order.emplace_back(n, group);
  std::sort(order.begin(), order.end());
  const auto mask = held_out_mask(order.size());
  std::set<std::string> held;
  for (std::size_t i = 0; i < order.size(); ++i)
    if (mask[i]) held.insert(order[i].second);

  std::vector<double> held_errors;
  if (!held.empty()) {
    std::vector<LayerSample> train;
    for (const auto& s : samples)
      if (!held.count(s.group())) train.push_back(s);
    const ClusterSpec partial = apply_layer_fit(out.profile, dtype, fit_layer_passes(train, out.profile, dtype, field));
    for (const auto& s : samples) {
      if (!held.count(s.group())) continue;
      out.held_out.push_back({what, s.name, s.seconds, predict_layer_seconds(s, partial, dtype)});
      held_errors.push_back(out.held_out.back().error());
    }
  }
  const LayerFit fit = fit_layer_passes(samples, out.profile, dtype, field);
  if (fit.clamped) out.notes.push_back(what + ": the GEMMs alone exceed the measured passes; memory_bandwidth 0");
  if (fit.bandwidth_capped)
    out.notes.push_back(what + ": the fitted memory bandwidth exceeded the base profile's; held at the base's, GEMM "
                               "scale refitted alone");
  out.profile = apply_layer_fit(out.profile, dtype, fit);
  mark_calibrated(out, "memory_bandwidth", sources);
  // The in-layer GEMM rate scales the entry this dtype's GEMMs use (apply_layer_fit).
  const std::string gemm = used_gemm_entry(out.profile, dtype);
  mark_calibrated(out, gemm,
                  out.profile.provenance.entries.count(gemm)
                      ? out.profile.provenance.entries.at(gemm).source + " x the layer fit of " + sources
                      : "the base's x the layer fit of " + sources);
  std::vector<double> errors;
  std::map<std::string, std::vector<double>> by_pass;
  for (const auto& s : samples) {
    errors.push_back(relative_error(predict_layer_seconds(s, out.profile, dtype), s.seconds));
    by_pass[s.pass].push_back(errors.back());
  }
  std::string parameters = fmt::format(
      "GEMM table x {:.3f} in the layer, memory-bound kernels at {:.3g} GB/s; max "
      "error per pass:",
      fit.gemm_scale, fit.bandwidth / 1e9);
  for (const auto& [pass, errs] : by_pass) parameters += fmt::format(" {} {:.1f}%", pass, 100 * stats(errs).max);
  out.fits.push_back(fit_report(what, samples.size(), errors, held_errors, std::move(parameters)));
}

// The optimizer step: one rate (optimizer_fit.hpp). Held out: every third size, never the first or the last.
void fit_optimizer_series(std::vector<std::pair<OptimizerSample, std::string>> series, const std::string& sources,
                          Calibration& out) {
  const std::string what = "optimizer";
  const std::string field = "optimizer_Mparams_per_s";
  std::sort(series.begin(), series.end(), [](const auto& a, const auto& b) { return a.first.params < b.first.params; });
  const auto mask = held_out_mask(series.size());
  std::vector<OptimizerSample> all, train;
  for (std::size_t i = 0; i < series.size(); ++i) {
    all.push_back(series[i].first);
    if (!mask[i]) train.push_back(series[i].first);
  }
  std::vector<double> held_errors;
  if (train.size() < all.size()) {
    const double partial = fit_optimizer_rate(train, field);
    for (std::size_t i = 0; i < series.size(); ++i) {
      if (!mask[i]) continue;
      out.held_out.push_back({what, series[i].second, all[i].seconds, all[i].params / partial});
      held_errors.push_back(out.held_out.back().error());
    }
  }
  const double rate = fit_optimizer_rate(all, field);
  out.profile.optimizer_rate = rate;
  mark_calibrated(out, "optimizer_rate", sources);
  std::vector<double> errors;
  for (const auto& s : all) errors.push_back(relative_error(s.params / rate, s.seconds));
  out.fits.push_back(
      fit_report(what, all.size(), errors, held_errors,
                 fmt::format("{:.4g} Mparams/s per GPU ({:.3g} ns per parameter)", rate / 1e6, 1e9 / rate)));
}

// The number of a name argument "<key>:<text>" (zeropp-bench's "bytes:1024", "h:512"), within `range`.
double arg_number(const BenchResult& r, const std::string& key, const std::string& where, const NumberRange& range) {
  const auto it = r.args.find(key);
  if (it == r.args.end()) throw SpecError(where + "." + key, where + ": expected .../" + key + ":N in the name");
  const std::string& text = it->second;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size())
    throw SpecError(where + "." + key, fmt::format("{}: {}:{} is not a number", where, key, text));
  if (!in_range(value, range))
    throw SpecError(where + "." + key, fmt::format("{}: {}:{} {}", where, key, text, range_violation(value, range)));
  return value;
}

// A layer benchmark's h, a, s or b: a whole number within the model limits.
int int_arg(const BenchResult& r, const std::string& key, const std::string& where) {
  const double value = arg_number(r, key, where, kLayerSize);
  if (value != std::floor(value))
    throw SpecError(where + "." + key, fmt::format("{}: {}:{} is not a whole number", where, key, value));
  return static_cast<int>(value);
}

}  // namespace

double HeldOutPoint::error() const { return relative_error(predicted, measured); }

double Calibration::worst_held_out_error() const {
  double worst = 0;
  for (const auto& f : fits) worst = std::max(worst, f.held_out_max_error);
  return worst;
}

std::vector<bool> held_out_mask(std::size_t n) {
  std::vector<bool> mask(n, false);
  for (std::size_t i = 1; i + 1 < n; i += 3) mask[i] = true;
  return mask;
}

Calibration calibrate(const BenchResults& results, const ClusterSpec& base, const CalibrateOptions& options) {
  // What is measured replaces its entry of the base, value and provenance; every other entry keeps the base's
  // (ClusterProvenance::entries records which is which).
  Calibration out;
  out.profile = base;
  out.profile.name = options.name.empty() ? base.name + "-calibrated" : options.name;
  if (out.profile.provenance.base.empty()) out.profile.provenance.base = base.name;
  for (const auto& s : results.skipped) out.notes.push_back("skipped (benchmark error): " + s);
  out.notes.insert(out.notes.end(), results.notes.begin(), results.notes.end());

  std::map<std::string, std::map<Collective, Series>> collectives;  // level -> collective -> samples
  std::map<Dtype, std::vector<GemmSample>> gemms;
  std::map<Dtype, std::vector<LayerSample>> layers;
  std::vector<std::pair<OptimizerSample, std::string>> optimizer;
  std::map<std::string, std::set<std::string>> sources;  // "gemm/bf16", "layer/fp32", "optimizer" -> files
  for (const auto& r : results.results) {
    const std::string where = r.source + ":" + r.name;
    if (r.parts.empty()) {
      out.notes.push_back("ignored (unnamed): " + where);
      continue;
    }
    if (r.parts[0] == "gemm") {
      if (r.parts.size() < 3) throw SpecError(where, where + ": expected gemm/<backend>/<dtype>/<shape>");
      const Dtype dtype = dtype_from_string(r.parts[2], where + ".dtype");
      const std::string shape = r.parts.size() > 3 ? r.parts[3] : r.parts.back();
      gemms[dtype].push_back({r.name, group_of(r), pass_of(shape), r.counter_in("flop", kFlops), r.seconds});
      sources["gemm/" + to_string(dtype)].insert(r.source);
      continue;
    }
    if (r.parts[0] == "layer") {
      if (r.parts.size() < 4)
        throw SpecError(where, where + ": expected layer/<backend>/<dtype>/<F|B|W>/h:../a:../s:../b:..");
      const Dtype dtype = dtype_from_string(r.parts[2], where + ".dtype");
      layers[dtype].push_back({r.name, r.parts[3], int_arg(r, "h", where), int_arg(r, "a", where),
                               int_arg(r, "s", where), int_arg(r, "b", where), r.seconds});
      sources["layer/" + to_string(dtype)].insert(r.source);
      continue;
    }
    if (r.parts[0] == "optimizer") {
      const double params = arg_number(r, "params", where, kParams);
      optimizer.push_back({{params, r.seconds}, r.name});
      sources["optimizer"].insert(r.source);
      continue;
    }
    const auto c = analytic::collective_from_name(r.parts[0]);
    if (!c) {
      out.notes.push_back("ignored (not a GEMM or collective): " + where);
      continue;
    }
    if (r.parts.size() < 3 || (r.parts[2] != "intra" && r.parts[2] != "inter")) {
      throw SpecError(where + ".level", where + ": expected <collective>/<backend>/<intra|inter>/bytes:S");
    }
    // A size outside the fitted window is left out on purpose; an impossible one (-4 bytes) is an error.
    const double bytes = r.counter_in("bytes", kBytes);
    if (bytes < options.min_bytes || bytes > options.max_bytes) continue;
    Series& series = collectives[r.parts[2]][*c];
    series.c = *c;
    series.samples.push_back({bytes, static_cast<int>(std::lround(r.counter_in("ranks", kRanks))), r.seconds});
    series.labels.push_back(r.name);
    series.sources.insert(r.source);
    // One host layout per fit: runs with different layouts measure different rings (host_layout.hpp).
    const HostLayout layout = host_layout_of(r);
    if (series.layout && *series.layout != layout) {
      throw SpecError(where, fmt::format("{}: {}/{} mixes runs over different hosts (here {} hosts of {} ranks, before "
                                         "{} of {}): give each link level and collective one kind of run",
                                         where, r.parts[2], r.parts[0], layout.hosts, layout.ranks_per_host,
                                         series.layout->hosts, series.layout->ranks_per_host));
    }
    series.layout = layout;
  }
  if (collectives.empty() && gemms.empty() && layers.empty() && optimizer.empty()) {
    throw SpecError("results",
                    "no GEMM, layer, optimizer or collective results to calibrate from (zeropp-bench names them "
                    "gemm/... and <collective>/<backend>/<level>/...)");
  }
  // intra first: a multi-host inter run is judged against the intra figure of its collective (host_layout.hpp).
  for (const char* level : {"intra", "inter"})
    if (const auto it = collectives.find(level); it != collectives.end())
      for (auto& [c, series] : it->second) fit_collective_series(level, series, out);
  // A measured GEMM table replaces the base's figures for its dtype only: gemm_efficiency, which the other dtypes
  // use, stays the base's.
  for (auto& [dtype, samples] : gemms)
    fit_gemm_series(dtype, samples, source_list(sources["gemm/" + to_string(dtype)]), out);
  // After the GEMM table: the layer fit prices the passes' GEMMs with it.
  for (auto& [dtype, samples] : layers)
    fit_layer_series(dtype, samples, source_list(sources["layer/" + to_string(dtype)]), out);
  if (!optimizer.empty()) fit_optimizer_series(std::move(optimizer), source_list(sources["optimizer"]), out);
  return out;
}

}  // namespace zeropp::calibrate
