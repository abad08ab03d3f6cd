#include "cost_model/spec/provenance.hpp"

#include <array>
#include <set>

#include <fmt/format.h>

#include "cost_model/spec/names.hpp"

namespace zeropp {
namespace {

constexpr std::array<std::string_view, 4> kCollectives{"all_reduce", "all_gather", "reduce_scatter", "send_recv"};

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

// The levels the cluster's groups can use: intra with more than one GPU per node, inter with more than one node.
std::vector<std::string_view> used_levels(const ClusterSpec& c) {
  std::vector<std::string_view> out;
  if (c.gpus_per_node > 1) out.push_back("intra");
  if (c.nodes > 1) out.push_back("inter");
  return out;
}

std::string join(const std::set<Provenance>& kinds) {
  std::string out;
  // Strongest first: measured, calibrated, published, nominal.
  for (Provenance p : {Provenance::measured, Provenance::calibrated, Provenance::published, Provenance::nominal})
    if (kinds.count(p)) out += (out.empty() ? "" : "+") + to_string(p);
  return out.empty() ? "-" : out;
}

}  // namespace

std::string collective_entry(std::string_view level, std::string_view collective) {
  return fmt::format("collectives.{}.{}", level, collective);
}

std::string gemm_table_entry(Dtype d) { return "gemm_table." + to_string(d); }

Provenance provenance_of(const ClusterSpec& c, const std::string& entry) {
  if (const auto it = c.provenance.entries.find(entry); it != c.provenance.entries.end()) return it->second.provenance;
  if (entry == "intra" || entry == "inter" || starts_with(entry, "collectives.")) return c.provenance.collectives;
  if (starts_with(entry, "gemm")) return c.provenance.gemm;
  return Provenance::nominal;
}

std::string provenance_text(const ClusterSpec& c, const std::string& entry) {
  if (const auto it = c.provenance.entries.find(entry); it != c.provenance.entries.end())
    return it->second.source.empty() ? to_string(it->second.provenance)
                                     : fmt::format("{} ({})", to_string(it->second.provenance), it->second.source);
  const std::string kind = to_string(provenance_of(c, entry));
  return c.provenance.base.empty() ? kind : fmt::format("{} (base {})", kind, c.provenance.base);
}

std::string used_collective_entry(const ClusterSpec& c, std::string_view level, std::string_view collective) {
  if (const auto lv = c.collectives.find(std::string(level)); lv != c.collectives.end())
    if (lv->second.count(std::string(collective))) return collective_entry(level, collective);
  return std::string(level);
}

std::string used_gemm_entry(const ClusterSpec& c, Dtype d) {
  const auto it = c.gemm_table.find(d);
  return it != c.gemm_table.end() && !it->second.empty() ? gemm_table_entry(d) : "gemm_efficiency";
}

std::string provenance_summary(const ClusterSpec& c, std::string_view group) {
  std::set<Provenance> kinds;
  if (group == "gemm") {
    for (const auto& [dtype, peak] : c.peak_flops) kinds.insert(provenance_of(c, used_gemm_entry(c, dtype)));
  } else {
    for (std::string_view level : used_levels(c))
      for (std::string_view op : kCollectives) kinds.insert(provenance_of(c, used_collective_entry(c, level, op)));
  }
  return join(kinds);
}

std::string nominal_warning(const ClusterSpec& c, Dtype dtype) {
  std::vector<std::string> parts;
  const std::string gemm = used_gemm_entry(c, dtype);
  if (provenance_of(c, gemm) == Provenance::nominal) {
    parts.push_back(gemm == "gemm_efficiency"
                        ? fmt::format("its {} GEMM times are the spec-sheet peak x gemm_efficiency {:g}, an assumption "
                                      "fitted to no measurement",
                                      to_string(dtype), c.gemm_efficiency)
                        : fmt::format("its {} GEMM table is nominal", to_string(dtype)));
  }
  std::set<std::string> links;
  for (std::string_view level : used_levels(c))
    for (std::string_view op : kCollectives)
      if (provenance_of(c, used_collective_entry(c, level, op)) == Provenance::nominal)
        links.insert(std::string(level));
  if (!links.empty()) {
    std::string which;
    for (const auto& l : links) which += (which.empty() ? "" : " and ") + l;
    parts.push_back(fmt::format("its {} collectives run at nominal link rates", which));
  }
  if (parts.empty()) return {};
  std::string what;
  for (std::size_t i = 0; i < parts.size(); ++i) what += (i ? "; " : "") + parts[i];
  return fmt::format(
      "cluster \"{}\" is NOMINAL: {}. Its times are not comparable with those of a fitted or calibrated profile; "
      "measure it (zeropp calibrate, docs/multi-node.md) before trusting a ranking across profiles",
      c.name, what);
}

}  // namespace zeropp
