#include "cost_model/search/criterion_map.hpp"

#include <algorithm>

#include "cost_model/analytic/params.hpp"
#include "cost_model/spec/names.hpp"

namespace zeropp::search {
namespace {

// Hidden sizes of the map: 1k to 32k (the zoo's range), where a layer of head_dim 128 has a whole number of heads.
constexpr int kHidden[] = {1024, 2048, 3072, 4096, 5120, 6144, 8192, 10240, 12288, 16384, 20480, 24576, 32768};

int round_up(int x, int m) { return (x + m - 1) / m * m; }

// The model's layer scaled to hidden size h (see the header).
ModelSpec scaled_layer(const ModelSpec& m, int h, int g) {
  ModelSpec out = m;
  out.name = m.name + "-h" + std::to_string(h);
  out.layers = 1;
  const int d = m.head_dim();
  out.hidden = h;
  out.heads = round_up(std::max(1, h / d), g);
  out.hidden = out.heads * d;
  const int group = std::max(1, m.heads / m.kv_heads_or_heads());
  out.kv_heads = m.kv_heads > 0 ? round_up(std::max(1, out.heads / group), g) : 0;
  if (m.ffn_hidden > 0)
    out.ffn_hidden = round_up(static_cast<int>(static_cast<double>(m.ffn()) / m.hidden * out.hidden), g);
  return out;
}

double per_h2(const ModelSpec& m) {
  return static_cast<double>(analytic::params_per_layer(m)) / (static_cast<double>(m.hidden) * m.hidden);
}

}  // namespace

CriterionMap criterion_map(const ModelSpec& model, const ClusterSpec& cluster, int b, Dtype dtype,
                           const analytic::CriterionTpRule& rule) {
  CriterionMap map;
  map.model = model.name;
  map.cluster = cluster.name;
  map.seq_len = model.seq_len;
  map.micro_batch = b;
  map.tp_rule = rule;
  const int g = cluster.gpus_per_node;
  const double sb = static_cast<double>(model.seq_len) * b;
  for (int h : kHidden) {
    const ModelSpec layer = scaled_layer(model, h, std::max(1, g));
    if (!map.points.empty() && layer.hidden <= map.points.back().hidden) continue;
    const analytic::Criterion bytes = analytic::criterion(analytic::criterion_input(layer, b, 1));
    const analytic::CriterionTime t = analytic::criterion_time(layer, cluster, b, 1, dtype, rule);
    map.points.push_back({layer.hidden, per_h2(layer), bytes.rhs / 2, sb * analytic::unit_at_parity(t)});
  }
  map.hidden = model.hidden;
  map.layer_params_per_h2 = per_h2(model);
  map.byte_min_unit = analytic::criterion(analytic::criterion_input(model, b, 1)).min_unit;
  const analytic::CriterionTime own = analytic::criterion_time(model, cluster, b, 1, dtype, rule);
  map.time_min_unit = own.min_unit;
  map.time_parity_unit = analytic::unit_at_parity(own);
  return map;
}

nlohmann::json to_json(const CriterionMap& m) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : m.points)
    points.push_back({{"h", p.hidden},
                      {"layer_params_per_h2", p.layer_params_per_h2},
                      {"byte_tokens", p.byte_tokens},
                      {"time_tokens", p.time_tokens}});
  return {{"model", m.model},
          {"cluster", m.cluster},
          {"s", m.seq_len},
          {"b", m.micro_batch},
          {"tp_comm_overlap", m.tp_rule.tp_comm_overlap},
          {"sequence_parallel", m.tp_rule.sequence_parallel},
          {"points", points},
          {"h", m.hidden},
          {"layer_params_per_h2", m.layer_params_per_h2},
          {"byte_min_unit", m.byte_min_unit},
          {"time_min_unit", m.time_min_unit ? nlohmann::json(*m.time_min_unit) : nlohmann::json(nullptr)},
          {"time_parity_unit", m.time_parity_unit}};
}

}  // namespace zeropp::search
