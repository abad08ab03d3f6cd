// `zeropp clusters [NAME|PATH ...]`: the cluster zoo (or the given clusters) as a table or JSON. Given clusters
// are followed by what the model uses of each: peaks, memory, and per link level and collective the bandwidth
// and latency (a fit from `collectives`, or the raw link), so a unit mix-up shows before it skews a prediction.
// Units are labelled: TFLOP/s dense per GPU, GiB = 2^30 bytes, GB/s = 1e9 bytes/s per GPU per direction.
#include <algorithm>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cost_model/analytic/collectives.hpp"
#include "cost_model/cli/command.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/provenance.hpp"

namespace zeropp::cli {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr double kMiB = 1024.0 * 1024;

std::string peak_or_dash(const ClusterSpec& c, Dtype d) {
  const auto it = c.peak_flops.find(d);
  return it == c.peak_flops.end() ? "-" : fmt::format("{:g}", it->second / 1e12);
}

std::string fp8_or_dash(const ClusterSpec& c) {
  return c.fp8_peak_flops > 0 ? fmt::format("{:g}", c.fp8_peak_flops / 1e12) : "-";
}

// "published/nominal": where the collective and the GEMM figures the model uses come from (spec/provenance.hpp);
// "calibrated+published/..." where calibration replaced some entries of its base and kept the others.
std::string provenance_column(const ClusterSpec& c) {
  return provenance_summary(c, "collectives") + "/" + provenance_summary(c, "gemm");
}

void print_table(const std::vector<ClusterSpec>& clusters) {
  constexpr std::string_view row =
      "{:<16} {:>5} {:>9} {:>5} {:>10} {:>10} {:>10} {:>8} {:>8} {:>10} {:>9} {:>10} {:>9} {:>9}  {}\n";
  std::cout << fmt::format(row, "cluster", "nodes", "gpus/node", "GPUs", "bf16 TF/s", "fp16 TF/s", "fp32 TF/s",
                           "mem GiB", "HBM GB/s", "intra GB/s", "intra us", "inter GB/s", "inter us", "fp8 TF/s",
                           "collectives/gemm");
  for (const ClusterSpec& c : clusters)
    std::cout << fmt::format(fmt::runtime(row), c.name, c.nodes, c.gpus_per_node, c.world(),
                             peak_or_dash(c, Dtype::bf16), peak_or_dash(c, Dtype::fp16), peak_or_dash(c, Dtype::fp32),
                             fmt::format("{:.1f}", c.memory_bytes / kGiB),
                             c.memory_bandwidth > 0 ? fmt::format("{:g}", c.memory_bandwidth / 1e9) : "-",
                             fmt::format("{:g}", c.intra.bandwidth / 1e9), fmt::format("{:g}", c.intra.latency * 1e6),
                             fmt::format("{:g}", c.inter.bandwidth / 1e9), fmt::format("{:g}", c.inter.latency * 1e6),
                             fp8_or_dash(c), provenance_column(c));
}

// "450 GB/s  3.4 us  link": what a collective on one link level runs at. The choice is analytic::collective_time's:
// the profile's `collectives` entry for that level and collective when there is one (with its piecewise segments
// and measured table, when present), else the raw link in the ring formula. "-" for a level the cluster does not
// use.
std::string resolved(const ClusterSpec& c, const char* level, analytic::Collective op) {
  const LinkSpec& link = std::string_view(level) == "intra" ? c.intra : c.inter;
  const bool used = std::string_view(level) == "intra" ? c.gpus_per_node > 1 : c.nodes > 1;
  if (const auto lv = c.collectives.find(level); lv != c.collectives.end()) {
    if (const auto fit = lv->second.find(analytic::collective_name(op)); fit != lv->second.end()) {
      const CollectiveFit& f = fit->second;
      std::string how = "collectives";
      if (!f.segments.empty()) how += fmt::format(", {} size segments", f.segments.size());
      if (!f.table.empty()) how += fmt::format(", {}-size table for {} GPUs", f.table.size(), f.table_ranks);
      return fmt::format("{:>8.4g} GB/s {:>7.3g} us  {}", f.bandwidth / 1e9, f.latency * 1e6, how);
    }
  }
  if (!used) return "-";
  return fmt::format("{:>8.4g} GB/s {:>7.3g} us  link", link.bandwidth / 1e9, link.latency * 1e6);
}

constexpr analytic::Collective kCollectives[] = {analytic::Collective::all_reduce, analytic::Collective::all_gather,
                                                 analytic::Collective::reduce_scatter, analytic::Collective::send_recv};

// Where each figure the model uses comes from, entry by entry: what calibration measured (and from which files)
// beside what it kept of its base.
void print_provenance(const ClusterSpec& c) {
  std::cout << fmt::format("  {:<14} where each figure the model uses comes from{}\n", "provenance",
                           c.provenance.base.empty() ? ""
                                                     : fmt::format(" (calibrated on the base {}: what was not measured "
                                                                   "keeps the base's value and provenance)",
                                                                   c.provenance.base));
  std::vector<std::string> entries;
  for (const auto& [dtype, peak] : c.peak_flops) entries.push_back(used_gemm_entry(c, dtype));
  for (const char* level : {"intra", "inter"}) {
    if (std::string_view(level) == "intra" ? c.gpus_per_node == 1 : c.nodes == 1) continue;
    for (const auto op : kCollectives)
      entries.push_back(used_collective_entry(c, level, analytic::collective_name(op)));
  }
  entries.push_back("memory_bandwidth");
  if (c.optimizer_rate > 0) entries.push_back("optimizer_rate");
  for (const auto& [key, entry] : c.provenance.entries)
    if (key.starts_with("peak_tflops.")) entries.push_back(key);
  std::vector<std::string> seen;
  for (const auto& e : entries) {
    if (std::find(seen.begin(), seen.end(), e) != seen.end()) continue;
    seen.push_back(e);
    std::cout << fmt::format("    {:<34} {}\n", e, provenance_text(c, e));
  }
}

void print_resolved(const ClusterSpec& c) {
  std::string peaks;
  for (const auto& [dtype, flops] : c.peak_flops)
    peaks += fmt::format("{}{} {:g}", peaks.empty() ? "" : ", ", to_string(dtype), flops / 1e12);
  // FP8 trains the linear layers of --dtype fp8 plans where the table has a published FP8 GEMM rate (spec/fp8.hpp).
  if (c.fp8_peak_flops > 0)
    peaks += fmt::format(", fp8 {:g} ({})", c.fp8_peak_flops / 1e12,
                         c.gpu && c.gpu->fp8_matmul_efficiency.known()
                             ? fmt::format("FP8 GEMMs at {:g} of it", c.gpu->fp8_matmul_efficiency.value)
                             : std::string("listed only: no published FP8 GEMM rate"));
  const double mib = c.memory_bytes / kMiB;
  // With an operation table the GPU's matmul efficiency (by shape) replaces gemm_efficiency (analytic/op_time.hpp).
  std::string gemm = c.gpu && c.gpu->matmul_efficiency.known()
                         ? fmt::format("matmul efficiency {:g} by shape (operation table), x the framework's "
                                       "kernel_efficiency",
                                       c.gpu->matmul_efficiency.value)
                         : fmt::format("efficiency {:g}", c.gemm_efficiency);
  for (const auto& [dtype, points] : c.gemm_table)
    gemm += fmt::format("; {} table of {} sizes, {:.3g} to {:.3g}", to_string(dtype), points.size(),
                        points.front().efficiency, points.back().efficiency);
  std::cout << fmt::format("\n{}: what the model uses, per GPU (bandwidths per direction)\n", c.name);
  std::cout << fmt::format("  {:<14} {} node{} x {} GPUs = {} ({}); intra = inside a node, inter = across nodes\n",
                           "GPUs", c.nodes, c.nodes == 1 ? "" : "s", c.gpus_per_node, c.world(), to_string(c.device));
  std::cout << fmt::format("  {:<14} {} TFLOP/s dense\n", "peak", peaks);
  std::cout << fmt::format(
      "  {:<14} {:.4g} GiB{}, memory bandwidth {}\n", "memory", c.memory_bytes / kGiB,
      mib == static_cast<double>(static_cast<long long>(mib)) ? fmt::format(" = {:.0f} MiB", mib) : "",
      c.memory_bandwidth > 0 ? fmt::format("{:g} GB/s", c.memory_bandwidth / 1e9) : "unknown");
  std::cout << fmt::format("  {:<14} {} ({})\n", "GEMM", gemm, provenance_summary(c, "gemm"));
  std::cout << fmt::format("  {:<14} {} (bus bandwidth, latency per step; {})\n", "collectives", "intra | inter",
                           provenance_summary(c, "collectives"));
  for (const auto op : kCollectives)
    std::cout << fmt::format("    {:<14} {:<52} | {}\n", analytic::collective_name(op), resolved(c, "intra", op),
                             resolved(c, "inter", op));
  print_provenance(c);
}

void print_json(const std::vector<ClusterSpec>& clusters) {
  nlohmann::json list = nlohmann::json::array();
  for (const ClusterSpec& c : clusters) list.push_back(to_json(c));
  std::cout << nlohmann::json{{"schema", kSchemaVersion}, {"command", "clusters"}, {"clusters", list}}.dump(2) << "\n";
}

const bool registered = register_command({
    "clusters",
    "List the cluster zoo (configs/clusters), or the given zoo names or JSON files with what the model uses of them",
    [](CLI::App& sub) -> std::function<int()> {
      auto names = std::make_shared<std::vector<std::string>>();
      auto format = std::make_shared<Format>(Format::table);
      sub.add_option("clusters", *names, "Zoo names or paths to cluster JSON files (default: the whole zoo)");
      add_format_option(sub, *format);
      return [names, format] {
        std::vector<ClusterSpec> clusters;
        for (const auto& name : names->empty() ? zoo_clusters() : *names) clusters.push_back(load_cluster(name));
        if (*format == Format::json) {
          print_json(clusters);
          return 0;
        }
        print_table(clusters);
        if (!names->empty())
          for (const ClusterSpec& c : clusters) print_resolved(c);
        return 0;
      };
    },
});

}  // namespace
}  // namespace zeropp::cli
