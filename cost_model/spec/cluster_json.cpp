// ClusterSpec <-> JSON, and the cluster's own rules. JSON units are those of spec sheets and nccl-tests
// (TFLOP/s, GiB, GB/s per GPU per direction, microseconds); inside everything is SI (see units.hpp).
#include <array>
#include <cmath>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "cost_model/spec/cluster_warnings.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/json_fields.hpp"
#include "cost_model/spec/limits.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/printable.hpp"
#include "cost_model/spec/units.hpp"

namespace zeropp {
namespace {

using detail::from_unit;
using detail::to_unit;

// Plausible ranges of the cluster's numbers, in the JSON units: a million times beyond today's hardware either
// way, so a typo in an exponent is refused before a product overflows to infinity (peak_tflops 1e308) or a
// quotient does (bandwidth_GBps 1e-300). Bandwidths and rates may also be 0 where that means unknown or unused.
constexpr NumberRange kPeakTflops{1e-6, 1e6, false};        // dense TFLOP/s per GPU (H100: ~1e3)
constexpr NumberRange kMemoryGib{0, 1 << 20};               // GiB per GPU
constexpr NumberRange kMemoryMib{0, 1 << 30};               // MiB per GPU (the same bytes)
constexpr NumberRange kBandwidthGBps{1e-6, 1e6, false};     // GB/s (HBM, links), when not 0
constexpr NumberRange kLatencyUs{0, 1e9, false};            // microseconds
constexpr NumberRange kOptimizerMparams{1e-6, 1e9, false};  // million parameters per second, when not 0
constexpr NumberRange kEfficiency{1e-6, 1, false};          // achieved / peak
constexpr NumberRange kBytes{0, 1e18};                      // collective buffer sizes
constexpr NumberRange kGemmFlops{0, 1e30};                  // 2*m*n*k of one GEMM

constexpr std::array<std::string_view, 2> kLinkLevels{"intra", "inter"};
constexpr std::array<std::string_view, 4> kCollectives{"all_reduce", "all_gather", "reduce_scatter", "send_recv"};

// JSON value -> SI. A value above its range (or NaN) is refused here, by the number the user wrote: converted
// first, 1e308 TFLOP/s would already be inf. The lower ends are validate()'s, with their own messages.
double to_si(const detail::Fields& f, std::string_view key, detail::Unit unit, const NumberRange& range) {
  const double value = f.number(key);
  if (!(value <= range.hi)) check_number(f.path(), key, value, range);
  return from_unit(value, unit);
}

LinkSpec link_from_json(const nlohmann::json& j, const std::string& path) {
  const detail::Fields f(j, path, {"bandwidth_GBps", "latency_us"});
  return {to_si(f, "bandwidth_GBps", detail::kGBps, kBandwidthGBps),
          from_unit(f.number("latency_us"), detail::kMicroseconds)};
}

nlohmann::json link_to_json(const LinkSpec& link) {
  return {{"bandwidth_GBps", to_unit(link.bandwidth, detail::kGBps)},
          {"latency_us", to_unit(link.latency, detail::kMicroseconds)}};
}

// "intra": {"all_reduce": {"latency_us": .., "bandwidth_GBps": .., "segments": [{"max_bytes": .., "latency_us":
// .., "bandwidth_GBps": ..}, ...] (optional, piecewise), "table_ranks": n, "table": [{"bytes": .., "time_us": ..},
// ...] (optional, measured)}, ...}, "inter": {...}
std::map<std::string, std::map<std::string, CollectiveFit>> collectives_from_json(const nlohmann::json& j,
                                                                                  const std::string& path) {
  const detail::Fields levels(j, path, {"intra", "inter"});
  std::map<std::string, std::map<std::string, CollectiveFit>> out;
  for (std::string_view level : kLinkLevels) {
    if (!levels.has(level)) continue;
    const detail::Fields names(levels.at(level), levels.path_of(level),
                               {"all_reduce", "all_gather", "reduce_scatter", "send_recv"});
    auto& fits = out[std::string(level)];
    for (std::string_view name : kCollectives) {
      if (!names.has(name)) continue;
      const std::string fit_path = names.path_of(name);
      const detail::Fields f(names.at(name), fit_path,
                             {"bandwidth_GBps", "latency_us", "segments", "table_ranks", "table"});
      CollectiveFit& fit = fits[std::string(name)];
      fit.bandwidth = to_si(f, "bandwidth_GBps", detail::kGBps, kBandwidthGBps);
      fit.latency = from_unit(f.number("latency_us"), detail::kMicroseconds);
      if (f.has("table")) {
        fit.table_ranks = f.integer("table_ranks");
        const std::string list_path = f.path_of("table");
        detail::expect_array(f.at("table"), list_path);
        for (std::size_t i = 0; i < f.at("table").size(); ++i) {
          const detail::Fields point(f.at("table")[i], fmt::format("{}[{}]", list_path, i), {"bytes", "time_us"});
          fit.table.push_back({point.number("bytes"), from_unit(point.number("time_us"), detail::kMicroseconds)});
        }
      } else if (f.has("table_ranks")) {
        throw SpecError(f.path_of("table_ranks"), fit_path + ".table_ranks without a table");
      }
      if (!f.has("segments")) continue;
      const std::string list_path = f.path_of("segments");
      detail::expect_array(f.at("segments"), list_path);
      for (std::size_t i = 0; i < f.at("segments").size(); ++i) {
        const detail::Fields seg(f.at("segments")[i], fmt::format("{}[{}]", list_path, i),
                                 {"max_bytes", "bandwidth_GBps", "latency_us"});
        fit.segments.push_back({seg.number("max_bytes"), from_unit(seg.number("latency_us"), detail::kMicroseconds),
                                to_si(seg, "bandwidth_GBps", detail::kGBps, kBandwidthGBps)});
      }
    }
  }
  return out;
}

// "bf16": [{"flops": 2*m*n*k, "efficiency": achieved/peak}, ...] in increasing flops.
std::map<Dtype, std::vector<GemmEfficiencyPoint>> gemm_table_from_json(const nlohmann::json& j,
                                                                       const std::string& path) {
  const detail::Fields dtypes(j, path, {"bf16", "fp16", "fp32"});
  std::map<Dtype, std::vector<GemmEfficiencyPoint>> out;
  for (const auto& item : j.items()) {
    const std::string list_path = dtypes.path_of(item.key());
    detail::expect_array(item.value(), list_path);
    auto& points = out[dtype_from_string(item.key(), list_path)];
    for (std::size_t i = 0; i < item.value().size(); ++i) {
      const detail::Fields p(item.value()[i], fmt::format("{}[{}]", list_path, i), {"flops", "efficiency"});
      points.push_back({p.number("flops"), p.number("efficiency")});
    }
  }
  return out;
}

// An SI value against a range in JSON units. The quick conversion decides; to_unit's exact (slower) one is only
// for the message, since validation runs once per candidate plan in a search.
void check_si(const std::string& prefix, std::string_view key, double si, detail::Unit unit, const NumberRange& range) {
  const double quick = unit.divide ? si * unit.per_unit : si / unit.per_unit;
  if (!in_range(quick, range)) check_number(prefix, key, to_unit(si, unit), range);
}

// why_used(): why the link must have a bandwidth, for the message (called only on that error: validate runs per
// plan evaluation, and formatting it ahead would cost more than the checks).
template <typename WhyUsed>
void check_link(const LinkSpec& link, const std::string& path, bool used, const WhyUsed& why_used) {
  const double gbps = to_unit(link.bandwidth, detail::kGBps);
  if (link.bandwidth < 0 || (used && link.bandwidth == 0))
    throw SpecError(path + ".bandwidth_GBps",
                    fmt::format("{}.bandwidth_GBps={} must be > 0{}", path, gbps, used ? why_used() : ""));
  if (link.latency < 0)
    throw SpecError(path + ".latency_us",
                    fmt::format("{}.latency_us={} must be >= 0", path, to_unit(link.latency, detail::kMicroseconds)));
  if (link.bandwidth != 0) check_si(path, "bandwidth_GBps", link.bandwidth, detail::kGBps, kBandwidthGBps);
  check_si(path, "latency_us", link.latency, detail::kMicroseconds, kLatencyUs);
}

bool is_one_of(std::string_view name, const auto& allowed) {
  for (std::string_view a : allowed)
    if (a == name) return true;
  return false;
}

// Memory per GPU: memory_gib, or memory_mib (nvidia-smi's memory.total as printed), exactly one of them.
double memory_from_json(const detail::Fields& f) {
  if (f.has("memory_gib") && f.has("memory_mib"))
    throw SpecError(f.path_of("memory_mib"), fmt::format("{} and {} give the same size: give one",
                                                         f.path_of("memory_gib"), f.path_of("memory_mib")));
  if (f.has("memory_mib")) {
    const double bytes = to_si(f, "memory_mib", detail::kMiB, kMemoryMib);
    if (!(bytes > 0))
      throw SpecError(f.path_of("memory_mib"),
                      fmt::format("{}={} must be > 0", f.path_of("memory_mib"), to_unit(bytes, detail::kMiB)));
    return bytes;
  }
  return to_si(f, "memory_gib", detail::kGiB, kMemoryGib);
}

// "provenance": {"gemm": "nominal" | "published" | "calibrated", "collectives": ..., each nominal when absent;
// optionally "base": NAME and "entries": {"collectives.intra.all_reduce": {"provenance": ..., "source": ...}}
// (what `zeropp calibrate` measured on top of the base: spec/provenance.hpp)}.
ClusterProvenance provenance_from_json(const nlohmann::json& j, const std::string& path) {
  const detail::Fields f(j, path, {"gemm", "collectives", "base", "entries"});
  ClusterProvenance p;
  if (f.has("gemm")) p.gemm = provenance_from_string(f.string("gemm"), f.path_of("gemm"));
  if (f.has("collectives")) p.collectives = provenance_from_string(f.string("collectives"), f.path_of("collectives"));
  if (f.has("base")) {
    p.base = f.string("base");
    check_printable(f.path_of("base"), p.base);
  }
  if (f.has("entries")) {
    const std::string entries_path = f.path_of("entries");
    if (!f.at("entries").is_object()) throw SpecError(entries_path, entries_path + " must be a JSON object");
    for (const auto& item : f.at("entries").items()) {
      const std::string entry_path = entries_path + "." + item.key();
      check_printable(entry_path, item.key());
      const detail::Fields e(item.value(), entry_path, {"provenance", "source"});
      EntryProvenance& entry = p.entries[item.key()];
      entry.provenance = provenance_from_string(e.string("provenance"), e.path_of("provenance"));
      entry.source = e.string("source", "");
      check_printable(e.path_of("source"), entry.source);
    }
  }
  return p;
}

}  // namespace

ClusterSpec cluster_from_json(const nlohmann::json& j, const std::string& field) {
  const detail::Fields f(
      j, field,
      {"name", "device", "nodes", "gpus_per_node", "peak_tflops", "memory_gib", "memory_mib", "memory_bandwidth_GBps",
       "optimizer_Mparams_per_s", "intra", "inter", "gemm_efficiency", "flash_attention_efficiency", "gpu",
       "comm_compute_contention", "collectives", "gemm_table", "provenance"});
  ClusterSpec c;
  c.name = f.string("name", "");
  if (f.has("device")) c.device = device_from_string(f.string("device"), f.path_of("device"));
  c.nodes = f.integer("nodes");
  c.gpus_per_node = f.integer("gpus_per_node");
  {
    // fp8 is a listed peak, not a training dtype (ClusterSpec::fp8_peak_flops).
    const detail::Fields peaks(f.at("peak_tflops"), f.path_of("peak_tflops"), {"bf16", "fp16", "fp32", "fp8"});
    for (const auto& item : f.at("peak_tflops").items()) {
      const double flops = to_si(peaks, item.key(), detail::kTflops, kPeakTflops);
      if (item.key() == "fp8")
        c.fp8_peak_flops = flops;
      else
        c.peak_flops[dtype_from_string(item.key(), peaks.path_of(item.key()))] = flops;
    }
  }
  c.memory_bytes = memory_from_json(f);
  // Absent: unknown.
  if (f.has("memory_bandwidth_GBps"))
    c.memory_bandwidth = to_si(f, "memory_bandwidth_GBps", detail::kGBps, kBandwidthGBps);
  if (f.has("optimizer_Mparams_per_s"))
    c.optimizer_rate = to_si(f, "optimizer_Mparams_per_s", detail::kMparams, kOptimizerMparams);
  // A link must be described when the cluster uses it: NVLink with more than one GPU per node, the network
  // with more than one node.
  if (f.has("intra") || c.gpus_per_node > 1) c.intra = link_from_json(f.at("intra"), f.path_of("intra"));
  if (f.has("inter") || c.nodes > 1) c.inter = link_from_json(f.at("inter"), f.path_of("inter"));
  c.gemm_efficiency = f.number("gemm_efficiency", c.gemm_efficiency);
  if (f.has("flash_attention_efficiency")) {
    const detail::Fields flash(f.at("flash_attention_efficiency"), f.path_of("flash_attention_efficiency"),
                               {"forward", "backward"});
    c.flash_attention_efficiency = {flash.number("forward"), flash.number("backward")};
  }
  // Moved into the operation table (one home per fact): say where, rather than "unknown key".
  if (f.has("comm_compute_contention"))
    throw SpecError(f.path_of("comm_compute_contention"),
                    fmt::format("{} is now {}.gpu.nccl_contention: {{\"value\": ..., \"provenance\": ...}}",
                                f.path_of("comm_compute_contention"), field));
  if (f.has("gpu")) c.gpu = gpu_ops_from_json(f.at("gpu"), f.path_of("gpu"));
  if (f.has("collectives")) c.collectives = collectives_from_json(f.at("collectives"), f.path_of("collectives"));
  if (f.has("gemm_table")) c.gemm_table = gemm_table_from_json(f.at("gemm_table"), f.path_of("gemm_table"));
  if (f.has("provenance")) c.provenance = provenance_from_json(f.at("provenance"), f.path_of("provenance"));
  validate(c, field);
  return c;
}

nlohmann::json to_json(const ClusterSpec& c) {
  nlohmann::json peaks = nlohmann::json::object();
  for (const auto& [dtype, flops] : c.peak_flops) peaks[to_string(dtype)] = to_unit(flops, detail::kTflops);
  if (c.fp8_peak_flops > 0) peaks["fp8"] = to_unit(c.fp8_peak_flops, detail::kTflops);
  nlohmann::json j = {
      {"name", c.name},
      {"nodes", c.nodes},
      {"gpus_per_node", c.gpus_per_node},
      {"peak_tflops", peaks},
      {"memory_bandwidth_GBps", to_unit(c.memory_bandwidth, detail::kGBps)},
      {"intra", link_to_json(c.intra)},
      {"inter", link_to_json(c.inter)},
      {"gemm_efficiency", c.gemm_efficiency},
      {"flash_attention_efficiency",
       {{"forward", c.flash_attention_efficiency.forward}, {"backward", c.flash_attention_efficiency.backward}}}};
  // A size that reads as a GB marketing figure (A100 80GB: exactly 80 GiB) is written in MiB, so reading the
  // profile back does not warn about it (cluster_warnings.hpp).
  const double gib = to_unit(c.memory_bytes, detail::kGiB);
  if (is_marketing_memory_gib(gib))
    j["memory_mib"] = to_unit(c.memory_bytes, detail::kMiB);
  else
    j["memory_gib"] = gib;
  j["provenance"] = {{"gemm", to_string(c.provenance.gemm)}, {"collectives", to_string(c.provenance.collectives)}};
  if (!c.provenance.base.empty()) j["provenance"]["base"] = c.provenance.base;
  for (const auto& [key, entry] : c.provenance.entries)
    j["provenance"]["entries"][key] = {{"provenance", to_string(entry.provenance)}, {"source", entry.source}};
  if (c.device != Device::gpu) j["device"] = to_string(c.device);  // absent = gpu: GPU profiles stay as they were
  if (c.gpu) j["gpu"] = to_json(*c.gpu);
  // Calibrated profiles only.
  if (c.optimizer_rate > 0) j["optimizer_Mparams_per_s"] = to_unit(c.optimizer_rate, detail::kMparams);
  if (!c.collectives.empty()) {
    nlohmann::json levels = nlohmann::json::object();
    for (const auto& [level, fits] : c.collectives) {
      levels[level] = nlohmann::json::object();
      for (const auto& [name, fit] : fits) {
        nlohmann::json out = link_to_json({fit.bandwidth, fit.latency});
        if (!fit.segments.empty()) {
          out["segments"] = nlohmann::json::array();
          for (const auto& seg : fit.segments) {
            nlohmann::json item = link_to_json({seg.bandwidth, seg.latency});
            item["max_bytes"] = seg.max_bytes;
            out["segments"].push_back(item);
          }
        }
        if (!fit.table.empty()) {
          out["table_ranks"] = fit.table_ranks;
          out["table"] = nlohmann::json::array();
          for (const auto& point : fit.table)
            out["table"].push_back(
                {{"bytes", point.bytes}, {"time_us", to_unit(point.seconds, detail::kMicroseconds)}});
        }
        levels[level][name] = out;
      }
    }
    j["collectives"] = levels;
  }
  if (!c.gemm_table.empty()) {
    nlohmann::json table = nlohmann::json::object();
    for (const auto& [dtype, points] : c.gemm_table) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& p : points) list.push_back({{"flops", p.flops}, {"efficiency", p.efficiency}});
      table[to_string(dtype)] = list;
    }
    j["gemm_table"] = table;
  }
  return j;
}

void validate(const ClusterSpec& c, const std::string& field) {
  check_printable(field + ".name", c.name);  // tables print it
  if (c.nodes <= 0) throw SpecError(field + ".nodes", fmt::format("{}.nodes={} must be > 0", field, c.nodes));
  if (c.gpus_per_node <= 0)
    throw SpecError(field + ".gpus_per_node", fmt::format("{}.gpus_per_node={} must be > 0", field, c.gpus_per_node));
  bounded_product({c.nodes, c.gpus_per_node}, limits::kGpus, field, "world nodes*gpus_per_node", "GPUs");
  if (c.peak_flops.empty())
    throw SpecError(field + ".peak_tflops",
                    fmt::format("{}.peak_tflops must give at least one of bf16, fp16, fp32", field));
  for (const auto& [dtype, flops] : c.peak_flops)
    if (!(flops > 0)) {
      const std::string path = field + ".peak_tflops." + to_string(dtype);
      throw SpecError(path, fmt::format("{}={} must be > 0", path, to_unit(flops, detail::kTflops)));
    }
  for (const auto& [dtype, flops] : c.peak_flops)
    check_si(field + ".peak_tflops", to_string(dtype), flops, detail::kTflops, kPeakTflops);
  if (c.fp8_peak_flops < 0 || std::isnan(c.fp8_peak_flops))
    throw SpecError(field + ".peak_tflops.fp8",
                    fmt::format("{}.peak_tflops.fp8={} must be >= 0 (0 or absent: not stated)", field,
                                to_unit(c.fp8_peak_flops, detail::kTflops)));
  if (c.fp8_peak_flops != 0) check_si(field + ".peak_tflops", "fp8", c.fp8_peak_flops, detail::kTflops, kPeakTflops);
  if (!(c.memory_bytes > 0))
    throw SpecError(field + ".memory_gib",
                    fmt::format("{}.memory_gib={} must be > 0", field, to_unit(c.memory_bytes, detail::kGiB)));
  check_si(field, "memory_gib", c.memory_bytes, detail::kGiB, kMemoryGib);
  if (c.memory_bandwidth < 0)
    throw SpecError(field + ".memory_bandwidth_GBps",
                    fmt::format("{}.memory_bandwidth_GBps={} must be >= 0 (0 or absent: unknown)", field,
                                to_unit(c.memory_bandwidth, detail::kGBps)));
  if (c.memory_bandwidth != 0)
    check_si(field, "memory_bandwidth_GBps", c.memory_bandwidth, detail::kGBps, kBandwidthGBps);
  if (c.optimizer_rate < 0)
    throw SpecError(field + ".optimizer_Mparams_per_s",
                    fmt::format("{}.optimizer_Mparams_per_s={} must be >= 0 (0 or absent: unknown)", field,
                                c.optimizer_rate / 1e6));
  if (c.optimizer_rate != 0)
    check_si(field, "optimizer_Mparams_per_s", c.optimizer_rate, detail::kMparams, kOptimizerMparams);
  check_link(c.intra, field + ".intra", c.gpus_per_node > 1,
             [&] { return fmt::format(" ({}.gpus_per_node={})", field, c.gpus_per_node); });
  check_link(c.inter, field + ".inter", c.nodes > 1, [&] { return fmt::format(" ({}.nodes={})", field, c.nodes); });
  if (!(c.gemm_efficiency > 0 && c.gemm_efficiency <= 1))
    throw SpecError(field + ".gemm_efficiency",
                    fmt::format("{}.gemm_efficiency={} must be in (0, 1]", field, c.gemm_efficiency));
  check_number(field, "gemm_efficiency", c.gemm_efficiency, kEfficiency);
  for (const auto& [pass, value] : {std::pair{"forward", c.flash_attention_efficiency.forward},
                                    std::pair{"backward", c.flash_attention_efficiency.backward}}) {
    if (!(value > 0 && value <= 1)) {
      const std::string path = fmt::format("{}.flash_attention_efficiency.{}", field, pass);
      throw SpecError(path, fmt::format("{}={} must be in (0, 1]", path, value));
    }
  }
  if (c.gpu) {
    validate(*c.gpu, field + ".gpu");
    // An attention figure above the 16-bit dense peak is a typo or another dtype's figure (they are bf16/fp16).
    const auto peak = c.peak_flops.find(Dtype::bf16);
    for (const auto& [kernel, t] : c.gpu->attention)
      for (const auto* list : {&t.forward, &t.backward})
        for (std::size_t i = 0; i < list->size(); ++i)
          if (peak != c.peak_flops.end() && (*list)[i].tflops * 1e12 > peak->second) {
            const std::string at = fmt::format("{}.gpu.attention.{}.{}[{}].tflops", field, to_string(kernel),
                                               list == &t.forward ? "forward" : "backward", i);
            throw SpecError(at, fmt::format("{}={} exceeds {}.peak_tflops.bf16={}", at, (*list)[i].tflops, field,
                                            peak->second / 1e12));
          }
  }
  for (const auto& [level, fits] : c.collectives) {
    const std::string level_path = field + ".collectives." + level;
    if (!is_one_of(level, kLinkLevels))
      throw SpecError(level_path, fmt::format("{}: the link level must be intra or inter", level_path));
    for (const auto& [name, fit] : fits) {
      const std::string path = level_path + "." + name;
      if (!is_one_of(name, kCollectives))
        throw SpecError(path, fmt::format("{}: the collective must be one of all_reduce, all_gather, "
                                          "reduce_scatter, send_recv",
                                          path));
      check_link({fit.bandwidth, fit.latency}, path, true, [] { return std::string(); });
      for (std::size_t i = 0; i < fit.segments.size(); ++i) {
        const std::string at = fmt::format("{}.segments[{}]", path, i);
        check_link({fit.segments[i].bandwidth, fit.segments[i].latency}, at, true, [] { return std::string(); });
        const double lower = i == 0 ? 0 : fit.segments[i - 1].max_bytes;
        if (!(fit.segments[i].max_bytes > lower))
          throw SpecError(at + ".max_bytes", fmt::format("{}.max_bytes={} must be greater than {} (segments in "
                                                         "increasing max_bytes, above 0)",
                                                         at, fit.segments[i].max_bytes, lower));
        check_number(at, "max_bytes", fit.segments[i].max_bytes, kBytes);
      }
      if (!fit.table.empty() && fit.table_ranks < 2)
        throw SpecError(
            path + ".table_ranks",
            fmt::format("{}.table_ranks={} must be >= 2 (the group the table was measured on)", path, fit.table_ranks));
      check_at_most(path, "table_ranks", fit.table_ranks, limits::kGpus);
      for (std::size_t i = 0; i < fit.table.size(); ++i) {
        const std::string at = fmt::format("{}.table[{}]", path, i);
        const double lower = i == 0 ? 0 : fit.table[i - 1].bytes;
        if (!(fit.table[i].bytes > lower))
          throw SpecError(at + ".bytes", fmt::format("{}.bytes={} must be greater than {} (points in increasing "
                                                     "bytes, above 0)",
                                                     at, fit.table[i].bytes, lower));
        check_number(at, "bytes", fit.table[i].bytes, kBytes);
        if (!(fit.table[i].seconds > 0))
          throw SpecError(at + ".time_us", fmt::format("{}.time_us={} must be > 0", at,
                                                       to_unit(fit.table[i].seconds, detail::kMicroseconds)));
        check_si(at, "time_us", fit.table[i].seconds, detail::kMicroseconds, kLatencyUs);
      }
    }
  }
  for (const auto& [dtype, points] : c.gemm_table) {
    const std::string path = field + ".gemm_table." + to_string(dtype);
    if (points.empty()) throw SpecError(path, fmt::format("{} is empty", path));
    for (std::size_t i = 0; i < points.size(); ++i) {
      const std::string at = fmt::format("{}[{}]", path, i);
      if (!(points[i].flops > 0))
        throw SpecError(at + ".flops", fmt::format("{}.flops={} must be > 0", at, points[i].flops));
      check_number(at, "flops", points[i].flops, kGemmFlops);
      if (i > 0 && !(points[i].flops > points[i - 1].flops))
        throw SpecError(at + ".flops", fmt::format("{}.flops={} must be greater than {}[{}].flops={} (points in "
                                                   "increasing flops)",
                                                   at, points[i].flops, path, i - 1, points[i - 1].flops));
      if (!(points[i].efficiency > 0 && points[i].efficiency <= 1))
        throw SpecError(at + ".efficiency",
                        fmt::format("{}.efficiency={} must be in (0, 1]", at, points[i].efficiency));
      check_number(at, "efficiency", points[i].efficiency, kEfficiency);
    }
  }
}

}  // namespace zeropp
