#include "cost_model/spec/gpu_ops.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "cost_model/spec/error.hpp"
#include "cost_model/spec/json_fields.hpp"
#include "cost_model/spec/limits.hpp"
#include "cost_model/spec/names.hpp"

namespace zeropp {
namespace {

// An entry's name, its member and the range a value must lie in (a typo guard: the real values are far inside).
struct EntryRule {
  std::string_view name;
  OpEntry GpuOps::*member;
  NumberRange range;
};

constexpr NumberRange kFraction{1e-6, 1, false};
constexpr std::array<EntryRule, 9> kEntries{{
    {"sm_count", &GpuOps::sm_count, {1, 1e5, false}},
    {"compute_capability", &GpuOps::compute_capability, {1, 100, false}},
    {"nccl_contention", &GpuOps::nccl_contention, kFraction},
    {"matmul_efficiency", &GpuOps::matmul_efficiency, kFraction},
    {"fp8_matmul_efficiency", &GpuOps::fp8_matmul_efficiency, kFraction},
    {"gemm_tile_rows", &GpuOps::gemm_tile_rows, {1, 4096, false}},
    {"gemm_tile_cols", &GpuOps::gemm_tile_cols, {1, 4096, false}},
    {"hbm_efficiency", &GpuOps::hbm_efficiency, kFraction},
    {"power_limit_w", &GpuOps::power_limit_w, {1, 1e6, false}},
}};

constexpr NumberRange kHeadDim{1, 4096, false};
constexpr NumberRange kSeqLen{1, 1e9, false};

OpEntry entry_from_json(const nlohmann::json& j, const std::string& path) {
  const detail::Fields f(j, path, {"value", "provenance"});
  OpEntry e;
  e.value = f.number("value");
  e.provenance = provenance_from_string(f.string("provenance"), f.path_of("provenance"));
  return e;
}

AttentionTable attention_from_json(const nlohmann::json& j, const std::string& path) {
  const detail::Fields f(j, path, {"provenance", "points"});
  AttentionTable t;
  t.provenance = provenance_from_string(f.string("provenance"), f.path_of("provenance"));
  const std::string list = f.path_of("points");
  detail::expect_array(f.at("points"), list);
  for (std::size_t i = 0; i < f.at("points").size(); ++i) {
    const detail::Fields p(f.at("points")[i], fmt::format("{}[{}]", list, i),
                           {"head_dim", "seq_len", "forward", "backward"});
    t.points.push_back({p.number("head_dim"), p.number("seq_len"), p.number("forward"), p.number("backward")});
  }
  return t;
}

}  // namespace

GpuOps gpu_ops_from_json(const nlohmann::json& j, const std::string& field) {
  const detail::Fields f(j, field,
                         {"sm_count", "compute_capability", "nccl_contention", "matmul_efficiency",
                          "fp8_matmul_efficiency", "gemm_tile_rows", "gemm_tile_cols", "hbm_efficiency",
                          "power_limit_w", "attention"});
  GpuOps ops;
  for (const EntryRule& rule : kEntries)
    if (f.has(rule.name)) ops.*rule.member = entry_from_json(f.at(rule.name), f.path_of(rule.name));
  if (f.has("attention")) ops.attention = attention_from_json(f.at("attention"), f.path_of("attention"));
  validate(ops, field);
  return ops;
}

nlohmann::json to_json(const GpuOps& ops) {
  nlohmann::json j = nlohmann::json::object();
  for (const EntryRule& rule : kEntries) {
    const OpEntry& e = ops.*rule.member;
    if (e.known()) j[std::string(rule.name)] = {{"value", e.value}, {"provenance", to_string(e.provenance)}};
  }
  if (!ops.attention.points.empty()) {
    nlohmann::json points = nlohmann::json::array();
    for (const AttentionPoint& p : ops.attention.points)
      points.push_back(
          {{"head_dim", p.head_dim}, {"seq_len", p.seq_len}, {"forward", p.forward}, {"backward", p.backward}});
    j["attention"] = {{"provenance", to_string(ops.attention.provenance)}, {"points", points}};
  }
  return j;
}

void validate(const GpuOps& ops, const std::string& field) {
  for (const EntryRule& rule : kEntries) {
    const OpEntry& e = ops.*rule.member;
    const std::string path = fmt::format("{}.{}", field, rule.name);
    if (e.value == 0) continue;  // unknown
    check_number(path, "value", e.value, rule.range);
  }
  // Tiles come in pairs: one side alone is no tile.
  if (ops.gemm_tile_rows.known() != ops.gemm_tile_cols.known())
    throw SpecError(field + (ops.gemm_tile_rows.known() ? ".gemm_tile_cols" : ".gemm_tile_rows"),
                    fmt::format("{0}.gemm_tile_rows and {0}.gemm_tile_cols are given together or not at all", field));
  const auto& pts = ops.attention.points;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const std::string at = fmt::format("{}.attention.points[{}]", field, i);
    check_number(at, "head_dim", pts[i].head_dim, kHeadDim);
    check_number(at, "seq_len", pts[i].seq_len, kSeqLen);
    check_number(at, "forward", pts[i].forward, kFraction);
    check_number(at, "backward", pts[i].backward, kFraction);
    if (i > 0 && !(std::pair{pts[i - 1].head_dim, pts[i - 1].seq_len} < std::pair{pts[i].head_dim, pts[i].seq_len}))
      throw SpecError(at, fmt::format("{}: points must be in increasing (head_dim, seq_len), each pair once", at));
  }
}

FlashEfficiency attention_efficiency(const AttentionTable& table, double head_dim, double seq_len) {
  const auto& pts = table.points;
  // The listed head dimension nearest to the model's (in log2: 96 sits between 64 and 128).
  double best = pts.front().head_dim;
  for (const AttentionPoint& p : pts)
    if (std::abs(std::log2(p.head_dim / head_dim)) < std::abs(std::log2(best / head_dim))) best = p.head_dim;
  std::vector<const AttentionPoint*> row;
  for (const AttentionPoint& p : pts)
    if (p.head_dim == best) row.push_back(&p);
  if (seq_len <= row.front()->seq_len) return {row.front()->forward, row.front()->backward};
  if (seq_len >= row.back()->seq_len) return {row.back()->forward, row.back()->backward};
  std::size_t hi = 1;
  while (row[hi]->seq_len < seq_len) ++hi;
  const AttentionPoint& a = *row[hi - 1];
  const AttentionPoint& b = *row[hi];
  const double x = (std::log2(seq_len) - std::log2(a.seq_len)) / (std::log2(b.seq_len) - std::log2(a.seq_len));
  return {a.forward + x * (b.forward - a.forward), a.backward + x * (b.backward - a.backward)};
}

}  // namespace zeropp
