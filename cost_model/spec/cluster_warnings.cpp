#include "cost_model/spec/cluster_warnings.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include <fmt/format.h>

#include "cost_model/spec/units.hpp"

namespace zeropp {
namespace {

// NVLink 5 (Blackwell): 18 links, 1.8 TB/s per GPU both directions together, 900 GB/s each way.
constexpr double kFastestLinkGBps = 900;
constexpr std::array<double, 4> kNicGbps{100, 200, 400, 800};
constexpr std::array<double, 4> kMarketingGB{80, 141, 180, 192};

bool one_of(double value, const auto& list) { return std::find(list.begin(), list.end(), value) != list.end(); }

// NVLink generations sold by their bidirectional rate, and the fastest GPU (dense bf16 TFLOP/s) of each: a profile
// whose intra rate equals that figure on such a GPU states both directions together. NVLink 3 (A100, 312 TFLOP/s):
// 600 GB/s = 300 each way; NVLink 4 (H100, H200, 989): 900 GB/s = 450 each way. (NVLink 5's 900 GB/s per direction
// goes with B200-class GPUs, 2250 TFLOP/s and more, and does not warn.)
struct Bidirectional {
  double gbps;
  const char* generation;
  double max_bf16_tflops;
};
constexpr std::array<Bidirectional, 2> kBidirectional{
    {{600, "NVLink 3 (A100)", 400}, {900, "NVLink 4 (H100, H200)", 1200}}};

}  // namespace

bool is_marketing_memory_gib(double gib) { return one_of(gib, kMarketingGB); }

std::vector<std::string> cluster_warnings(const nlohmann::json& c, const std::string& field) {
  // A number at j[key], or nothing (the key absent: a link the cluster does not use).
  const auto number = [](const nlohmann::json& j, const char* key) -> std::optional<double> {
    if (!j.is_object() || !j.contains(key) || !j.at(key).is_number()) return std::nullopt;
    return j.at(key).get<double>();
  };
  const auto link_rate = [&](const char* level) {
    return c.contains(level) ? number(c.at(level), "bandwidth_GBps") : std::nullopt;
  };
  std::vector<std::string> out;
  if (const auto intra = link_rate("intra"); intra && *intra > kFastestLinkGBps)
    out.push_back(
        fmt::format("{}.intra.bandwidth_GBps={:g} is above {:g} GB/s, the fastest GPU link's rate per "
                    "direction (NVLink 5): it looks bidirectional or in Gb/s (the key is GB/s per GPU per "
                    "direction)",
                    field, *intra, kFastestLinkGBps));
  const auto bf16 = c.contains("peak_tflops") ? number(c.at("peak_tflops"), "bf16") : std::nullopt;
  if (const auto intra = link_rate("intra"); intra && bf16)
    for (const Bidirectional& b : kBidirectional)
      if (*intra == b.gbps && *bf16 <= b.max_bf16_tflops)
        out.push_back(
            fmt::format("{}.intra.bandwidth_GBps={:g} is {}'s bidirectional figure for a GPU of {:g} "
                        "TFLOP/s bf16: the key is GB/s per GPU per direction, {:g} there",
                        field, *intra, b.generation, *bf16, b.gbps / 2));
  if (const auto inter = link_rate("inter"); inter && one_of(*inter, kNicGbps))
    out.push_back(
        fmt::format("{}.inter.bandwidth_GBps={:g} equals a NIC rate in Gb/s: it looks like Gb/s; {:g} Gb/s "
                    "= {:g} GB/s (the key is GB/s per GPU per direction)",
                    field, *inter, *inter, *inter / 8));
  if (const auto gib = number(c, "memory_gib"); gib && is_marketing_memory_gib(*gib))
    out.push_back(
        fmt::format("{}.memory_gib={:g} equals the marketing figure \"{:g} GB\": {:g} GB of 1e9 bytes is "
                    "{:.1f} GiB, and GPUs report other sizes (H100 80GB: 79.65 GiB); give nvidia-smi's "
                    "memory.total as memory_mib (H100 80GB: 81559)",
                    field, *gib, *gib, *gib, *gib * 1e9 / detail::kGiB.per_unit));
  return out;
}

}  // namespace zeropp
