#pragma once
// The criterion map of one model on one cluster (`zeropp criterion --map`, the report's criterion figure): over
// hidden sizes h, the tokens per scheduling unit s*U*b at which ZeroPP and TP move the same bytes (the byte
// boundary of the model's own layer, 3P/(8h) with P its parameters: analytic/criterion.hpp) and at which they
// expose the same time on the cluster (the real U* of criterion_time, times s*b), and the model itself: its h,
// the byte boundary's smallest U and the time-based one.
//
// The layers along h are the model's family: its head dimension, its ratio of query to key/value heads, its MLP
// kind and ffn/h ratio, its s and b, scaled to each h (heads = h / head_dim; key/value heads no fewer than the
// node's GPUs, since TP over the node must split them: a GQA family keeps fewer at small h only through that
// floor; ffn rounded to a multiple of the node's GPUs). One layer each, timed with the TP rule given.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost_model/analytic/criterion.hpp"
#include "cost_model/spec/cluster_spec.hpp"
#include "cost_model/spec/model_spec.hpp"

namespace zeropp::search {

struct CriterionMapPoint {
  int hidden = 0;
  double layer_params_per_h2 = 0;  // P / h^2 of the scaled layer
  double byte_tokens = 0;          // s*U*b where ZeroPP's bytes equal TP's: 3P / (8h)
  double time_tokens = 0;          // s*U*b where their exposed times are equal on the cluster: s*b*U*
};

struct CriterionMap {
  std::string model, cluster;
  int seq_len = 0, micro_batch = 1;
  analytic::CriterionTpRule tp_rule;
  std::vector<CriterionMapPoint> points;  // increasing h
  // The model itself at its own h.
  int hidden = 0;
  double layer_params_per_h2 = 0;
  long long byte_min_unit = 0;
  std::optional<long long> time_min_unit;
  double time_parity_unit = 0;
};

// Throws SpecError when the cluster has fewer than 2 GPUs per node (no TP group to compare with).
CriterionMap criterion_map(const ModelSpec&, const ClusterSpec&, int micro_batch, Dtype,
                           const analytic::CriterionTpRule&);

nlohmann::json to_json(const CriterionMap&);

}  // namespace zeropp::search
