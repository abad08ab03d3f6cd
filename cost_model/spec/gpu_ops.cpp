#include "cost_model/spec/gpu_ops.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>
#include <tuple>
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
constexpr std::array<EntryRule, 10> kEntries{{
    {"sm_count", &GpuOps::sm_count, {1, 1e5, false}},
    {"compute_capability", &GpuOps::compute_capability, {1, 100, false}},
    {"nccl_contention", &GpuOps::nccl_contention, kFraction},
    {"matmul_efficiency", &GpuOps::matmul_efficiency, kFraction},
    {"fp8_matmul_efficiency", &GpuOps::fp8_matmul_efficiency, kFraction},
    {"gemm_tile_rows", &GpuOps::gemm_tile_rows, {1, 4096, false}},
    {"gemm_tile_cols", &GpuOps::gemm_tile_cols, {1, 4096, false}},
    {"gemm_epilogue_exposed", &GpuOps::gemm_epilogue_exposed, kFraction},
    {"hbm_efficiency", &GpuOps::hbm_efficiency, kFraction},
    {"power_limit_w", &GpuOps::power_limit_w, {1, 1e6, false}},
}};

constexpr NumberRange kHeadDim{1, 4096, false};
constexpr NumberRange kSeqLen{1, 1e9, false};
constexpr NumberRange kTflops{1e-3, 1e5, false};

OpEntry entry_from_json(const nlohmann::json& j, const std::string& path) {
  const detail::Fields f(j, path, {"value", "provenance"});
  OpEntry e;
  e.value = f.number("value");
  e.provenance = provenance_from_string(f.string("provenance"), f.path_of("provenance"));
  return e;
}

// A point without its own "provenance" has its table's (`table`).
std::vector<AttentionPoint> attention_points_from_json(const nlohmann::json& j, const std::string& list,
                                                       Provenance table) {
  detail::expect_array(j, list);
  std::vector<AttentionPoint> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const detail::Fields p(j[i], fmt::format("{}[{}]", list, i),
                           {"head_dim", "seq_len", "causal", "tflops", "provenance"});
    const Provenance own =
        p.has("provenance") ? provenance_from_string(p.string("provenance"), p.path_of("provenance")) : table;
    out.push_back({p.number("head_dim"), p.number("seq_len"), p.boolean("causal"), p.number("tflops"), own});
  }
  return out;
}

AttentionTable attention_table_from_json(const nlohmann::json& j, const std::string& path) {
  const detail::Fields f(j, path, {"provenance", "forward", "backward"});
  AttentionTable t;
  t.provenance = provenance_from_string(f.string("provenance"), f.path_of("provenance"));
  t.forward = attention_points_from_json(f.at("forward"), f.path_of("forward"), t.provenance);
  t.backward = attention_points_from_json(f.at("backward"), f.path_of("backward"), t.provenance);
  return t;
}

// "attention": {"flash2": {...}, ...}: the fused kernels only (unfused has no table: its GEMMs are GEMMs).
std::map<AttentionKernel, AttentionTable> attention_from_json(const nlohmann::json& j, const std::string& path) {
  const detail::Fields f(j, path, {"flash2", "flash3", "cudnn"});
  std::map<AttentionKernel, AttentionTable> out;
  for (const AttentionKernel k : {AttentionKernel::flash2, AttentionKernel::flash3, AttentionKernel::cudnn}) {
    const std::string name = to_string(k);
    if (f.has(name)) out[k] = attention_table_from_json(f.at(name), f.path_of(name));
  }
  return out;
}

// A point's provenance is written where it differs from its table's (`table`).
nlohmann::json to_json(const std::vector<AttentionPoint>& points, Provenance table) {
  nlohmann::json out = nlohmann::json::array();
  for (const AttentionPoint& p : points) {
    nlohmann::json point = {
        {"head_dim", p.head_dim}, {"seq_len", p.seq_len}, {"causal", p.causal}, {"tflops", p.tflops}};
    if (p.provenance != table) point["provenance"] = to_string(p.provenance);
    out.push_back(point);
  }
  return out;
}

void validate_points(const std::vector<AttentionPoint>& pts, const std::string& list) {
  if (pts.empty()) throw SpecError(list, fmt::format("{}: at least one point", list));
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", list, i);
    check_number(at, "head_dim", pts[i].head_dim, kHeadDim);
    check_number(at, "seq_len", pts[i].seq_len, kSeqLen);
    check_number(at, "tflops", pts[i].tflops, kTflops);
    const auto key = [](const AttentionPoint& p) { return std::tuple{p.causal, p.head_dim, p.seq_len}; };
    if (i > 0 && !(key(pts[i - 1]) < key(pts[i])))
      throw SpecError(at, fmt::format("{}: points must be in increasing (causal, head_dim, seq_len), each once", at));
  }
}

// The points of `pts` with mask `causal`, else (none listed) all of them.
std::vector<AttentionPoint> with_mask(const std::vector<AttentionPoint>& pts, bool causal) {
  std::vector<AttentionPoint> out;
  for (const AttentionPoint& p : pts)
    if (p.causal == causal) out.push_back(p);
  return out.empty() ? pts : out;
}

bool lists_mask(const std::vector<AttentionPoint>& pts, bool causal) {
  return std::any_of(pts.begin(), pts.end(), [&](const AttentionPoint& p) { return p.causal == causal; });
}

}  // namespace

GpuOps gpu_ops_from_json(const nlohmann::json& j, const std::string& field) {
  const detail::Fields f(
      j, field,
      {"sm_count", "compute_capability", "nccl_contention", "matmul_efficiency", "fp8_matmul_efficiency",
       "gemm_tile_rows", "gemm_tile_cols", "gemm_epilogue_exposed", "hbm_efficiency", "power_limit_w", "attention"});
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
  if (!ops.attention.empty()) {
    nlohmann::json attention = nlohmann::json::object();
    for (const auto& [kernel, t] : ops.attention)
      attention[to_string(kernel)] = {{"provenance", to_string(t.provenance)},
                                      {"forward", to_json(t.forward, t.provenance)},
                                      {"backward", to_json(t.backward, t.provenance)}};
    j["attention"] = attention;
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
  for (const auto& [kernel, t] : ops.attention) {
    const std::string at = fmt::format("{}.attention.{}", field, to_string(kernel));
    validate_points(t.forward, at + ".forward");
    validate_points(t.backward, at + ".backward");
  }
}

double attention_tflops(const std::vector<AttentionPoint>& points, double head_dim, double seq_len, bool causal) {
  const std::vector<AttentionPoint> pts = with_mask(points, causal);
  // The listed head dimension nearest to the model's in log2 (points are in increasing head_dim: a tie keeps the
  // smaller).
  double best = pts.front().head_dim;
  for (const AttentionPoint& p : pts)
    if (std::abs(std::log2(p.head_dim / head_dim)) < std::abs(std::log2(best / head_dim))) best = p.head_dim;
  std::vector<const AttentionPoint*> row;
  for (const AttentionPoint& p : pts)
    if (p.head_dim == best) row.push_back(&p);
  if (seq_len <= row.front()->seq_len) return row.front()->tflops;
  if (seq_len >= row.back()->seq_len) return row.back()->tflops;
  std::size_t hi = 1;
  while (row[hi]->seq_len < seq_len) ++hi;
  const AttentionPoint& a = *row[hi - 1];
  const AttentionPoint& b = *row[hi];
  const double x = (std::log2(seq_len) - std::log2(a.seq_len)) / (std::log2(b.seq_len) - std::log2(a.seq_len));
  return a.tflops + x * (b.tflops - a.tflops);
}

FlashEfficiency attention_efficiency(const AttentionTable& t, double peak_tflops, double head_dim, double seq_len,
                                     bool causal) {
  const double fwd = attention_tflops(t.forward, head_dim, seq_len, causal);
  double bwd = attention_tflops(t.backward, head_dim, seq_len, causal);
  if (causal && !lists_mask(t.backward, true) && lists_mask(t.forward, true) && lists_mask(t.forward, false))
    bwd *= fwd / attention_tflops(t.forward, head_dim, seq_len, false);
  return {fwd / peak_tflops, bwd / peak_tflops};
}

}  // namespace zeropp
