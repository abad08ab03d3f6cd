#include "cost_model/analytic/criterion.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cost_model/analytic/collectives.hpp"
#include "cost_model/analytic/comm_volume.hpp"
#include "cost_model/analytic/params.hpp"
#include "cost_model/analytic/time_model.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/framework.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::analytic {

namespace {

void require_positive(long long value, const char* field) {
  if (value < 1) throw SpecError(field, fmt::format("{}={} must be >= 1", field, value));
}

// Seconds of one layer, one micro-batch, on one GPU (F + B + W, no recompute) and of TP's collectives for it.
struct LayerTimes {
  double compute = 0;
  double tp = 0;
};

LayerTimes layer_times(const ModelSpec& model, const ClusterSpec& cluster, int b, int tp, Dtype dtype,
                       const CriterionTpRule& rule) {
  Plan plan;
  plan.model = model;
  plan.cluster = cluster;
  plan.parallel.strategy = tp > 1 ? Strategy::three_d : Strategy::zeropp_b;
  plan.parallel.tp = tp;
  plan.parallel.micro_batch = b;
  plan.parallel.dtype = dtype;
  if (tp > 1) {
    plan.parallel.sequence_parallel = rule.sequence_parallel || rule.tp_comm_overlap;
    // The framework's own overlap (Megatron's userbuffers), where this GPU runs it (spec/framework.hpp).
    const TpCommOverlap kind = framework_tp_overlap(framework_of(plan.parallel));
    plan.parallel.tp_comm_overlap =
        rule.tp_comm_overlap && tp_overlap_unavailable(kind, cluster).empty() ? kind : TpCommOverlap::none;
  }
  // One chunk of one layer: action_costs gives per-layer seconds when the model has a single layer.
  plan.model.layers = 1;
  const ActionCosts a = action_costs(plan);
  return {a.f + a.b + a.w, a.tp_f + a.tp_b};
}

}  // namespace

CriterionInput criterion_input(const ModelSpec& model, int micro_batch, int unit) {
  return {model.hidden, model.seq_len, micro_batch, unit, static_cast<double>(params_per_layer(model))};
}

Criterion criterion(const CriterionInput& in) {
  require_positive(in.hidden, "model.hidden");
  require_positive(in.seq_len, "model.seq_len");
  require_positive(in.micro_batch, "parallel.micro_batch");
  require_positive(in.unit, "parallel.unit");
  if (!(in.layer_params >= 0)) throw SpecError("model", "the layer's parameter count must be >= 0");
  const double h = in.hidden, s = in.seq_len, b = in.micro_batch, U = in.unit;
  // P: the model's layer (whole parameters: an exact integer in a double up to 2^53), or the paper's 12h^2.
  const double P = in.layer_params > 0 ? in.layer_params : 12 * h * h;
  constexpr double e = 2;  // 16-bit elements
  Criterion c;
  c.layer_params = P;
  c.lhs = 2 * s * U * b;
  c.rhs = 3 * P / (4 * h);
  c.rhs_gpt = 9 * h;
  // 2sUb > 3P/(4h)  <=>  8hsbU > 3P, decided in integers (exact where the quotient is not).
  using Wide = long double;  // 8hsb <= 2^3 x 2^20 x limits: beyond 2^63 in the worst case, exact to 2^64 here
  const Wide eight_hsb = Wide(8) * in.hidden * in.seq_len * in.micro_batch;
  c.holds = eight_hsb * in.unit > Wide(3) * P;
  c.zeropp_bytes_per_layer = e * 3 * P / U;
  c.zeropp_per_w_bytes_per_layer = e * (2 * P / U + P);
  c.tp_bytes_per_layer = e * tp_elements_per_layer(1, in.seq_len, in.micro_batch, in.hidden);
  // Smallest integer U with 8hsbU > 3P: floor(3P / 8hsb) + 1.
  c.min_unit = static_cast<long long>(std::floor(Wide(3) * P / eight_hsb)) + 1;
  // Per-W mode: 2P/U + P < 8sbh  <=>  U > 2P / (8sbh - P), when 8sbh > P.
  const Wide denom = eight_hsb - Wide(P);
  if (denom > 0) c.min_unit_per_w = static_cast<long long>(std::floor(Wide(2) * P / denom)) + 1;
  return c;
}

CriterionTime criterion_time(const ModelSpec& model, const ClusterSpec& cluster, int micro_batch, int unit, Dtype dtype,
                             const CriterionTpRule& tp_rule, long long max_unit) {
  require_positive(micro_batch, "parallel.micro_batch");
  require_positive(unit, "parallel.unit");
  const int g = cluster.gpus_per_node;
  if (g < 2)
    throw SpecError("cluster.gpus_per_node",
                    fmt::format("cluster.gpus_per_node={}: the time-based criterion needs >= 2 GPUs per node", g));
  CriterionTime r;
  r.group = g;
  // Same g GPUs, same tokens: under TP every GPU takes part in g micro-batches for each micro-batch of work a
  // ZeroPP GPU does on its own, each with 1/g of the FLOPs.
  const LayerTimes tp_layer = layer_times(model, cluster, micro_batch, g, dtype, tp_rule);
  const LayerTimes own_layer = layer_times(model, cluster, micro_batch, 1, dtype, tp_rule);
  const double layer_bytes = element_bytes(dtype) * static_cast<double>(params_per_layer(model));
  const double comm = 2 * collective_time(cluster, Collective::all_gather, g, 1, layer_bytes) +
                      collective_time(cluster, Collective::reduce_scatter, g, 1, layer_bytes);
  r.zeropp_comm_s = comm;
  auto evaluate = [&](long long U, double& compute, double& tp_exposed, double& zeropp_exposed) {
    compute = static_cast<double>(U) * own_layer.compute;
    tp_exposed = static_cast<double>(U) * g * tp_layer.tp;
    zeropp_exposed = std::max(0.0, comm - compute);
  };
  evaluate(unit, r.compute_s, r.tp_exposed_s, r.zeropp_exposed_s);
  r.holds = r.zeropp_exposed_s < r.tp_exposed_s;
  // ZeroPP's exposure falls and TP's grows with U, so the first U that holds is the boundary.
  for (long long U = 1; U <= max_unit; ++U) {
    double compute, tp_exposed, zeropp_exposed;
    evaluate(U, compute, tp_exposed, zeropp_exposed);
    if (zeropp_exposed < tp_exposed) {
      r.min_unit = U;
      break;
    }
  }
  return r;
}

double unit_at_parity(const CriterionTime& at_one) {
  return at_one.zeropp_comm_s / (at_one.compute_s + at_one.tp_exposed_s);
}

}  // namespace zeropp::analytic
