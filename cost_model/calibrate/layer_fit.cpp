#include "cost_model/calibrate/layer_fit.hpp"

#include <algorithm>

#include "cost_model/analytic/time_model.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"

namespace zeropp::calibrate {
namespace {

Plan one_layer_plan(const LayerSample& s, const ClusterSpec& cluster, Dtype dtype) {
  Plan plan;
  plan.model.name = "layer";
  plan.model.layers = 1;
  plan.model.hidden = s.h;
  plan.model.heads = s.a;
  plan.model.seq_len = s.s;
  plan.model.vocab = 64;  // the head is priced separately (head_f ...); a layer's costs do not read V
  // The block zeropp-bench times (microbench/layer_bench.cpp): the trainer's GPT layer as GptConfig builds it, with
  // the materialised softmax(QK^T)V and no dropout (the trainer has none). Left to the model's defaults, a GELU
  // layer would be priced with dropout masks the block never writes.
  plan.model.dropout = false;
  plan.model.attention = AttentionKind::unfused;
  plan.cluster = cluster;
  plan.parallel.strategy = Strategy::pp_zero1;
  plan.parallel.schedule = ScheduleKind::one_f_one_b;
  plan.parallel.micro_batch = s.b;
  plan.parallel.micro_batches = 1;
  plan.parallel.dtype = dtype;
  return plan;
}

// Kernel bytes of one pass: the time model's memory-bound seconds at 1 byte/s.
double kernel_bytes(const LayerSample& s, const ClusterSpec& cluster, Dtype dtype) {
  ClusterSpec unit = cluster;
  unit.memory_bandwidth = 1;
  ClusterSpec none = cluster;
  none.memory_bandwidth = 0;
  return predict_layer_seconds(s, unit, dtype) - predict_layer_seconds(s, none, dtype);
}

}  // namespace

std::string LayerSample::group() const {
  return "h:" + std::to_string(h) + "/a:" + std::to_string(a) + "/s:" + std::to_string(s) + "/b:" + std::to_string(b);
}

double predict_layer_seconds(const LayerSample& s, const ClusterSpec& cluster, Dtype dtype) {
  const analytic::ActionCosts c = analytic::action_costs(one_layer_plan(s, cluster, dtype));
  if (s.pass == "F") return c.f;
  if (s.pass == "B") return c.b;
  if (s.pass == "W") return c.w;
  throw SpecError(s.name + ".pass", s.name + ": layer pass must be F, B or W, not '" + s.pass + "'");
}

ClusterSpec apply_layer_fit(const ClusterSpec& cluster, Dtype dtype, const LayerFit& fit) {
  ClusterSpec out = cluster;
  // The entry this dtype's GEMMs use (its table, else the scalar): the fit measured this dtype only.
  const auto it = out.gemm_table.find(dtype);
  if (it != out.gemm_table.end() && !it->second.empty()) {
    for (auto& p : it->second) p.efficiency = std::min(1.0, p.efficiency * fit.gemm_scale);
  } else {
    out.gemm_efficiency = std::min(1.0, out.gemm_efficiency * fit.gemm_scale);
  }
  out.memory_bandwidth = fit.bandwidth;
  return out;
}

LayerFit fit_layer_passes(const std::vector<LayerSample>& samples, const ClusterSpec& cluster, Dtype dtype,
                          const std::string& field) {
  // Minimise sum ((g u + k x - t) / t)^2: the 2x2 normal equations in (u, x), rows scaled by 1/t.
  double gg = 0, gk = 0, kk = 0, gt = 0, kt = 0;
  bool has_fb = false, has_w = false;
  ClusterSpec none = cluster;
  none.memory_bandwidth = 0;
  for (const auto& s : samples) {
    if (s.seconds <= 0 || s.h <= 0 || s.a <= 0 || s.s <= 0 || s.b <= 0) {
      throw SpecError(field, s.name + ": layer samples need positive h, a, s, b and time");
    }
    const double g = predict_layer_seconds(s, none, dtype) / s.seconds;
    const double k = kernel_bytes(s, cluster, dtype) / s.seconds;
    gg += g * g, gk += g * k, kk += k * k, gt += g, kt += k;
    has_w = has_w || s.pass == "W";
    has_fb = has_fb || s.pass != "W";
  }
  if (!has_fb || !has_w) throw SpecError(field, "the layer fit needs F or B passes and W passes");
  LayerFit fit;
  const double det = gg * kk - gk * gk;
  const double u = (gt * kk - kt * gk) / det;
  double x = (gg * kt - gk * gt) / det;
  if (det > 0 && x > 0 && u > 0) {
    // No kernel streams faster than the memory: a fitted bandwidth above the base profile's (its datasheet or
    // measured peak) says the model counts more bytes than the block's kernels move, or that its GEMMs run faster
    // in the layer than alone. Then the bandwidth is the base's and u alone is refitted (the one-variable least
    // squares of the same objective).
    if (cluster.memory_bandwidth > 0 && 1 / x > cluster.memory_bandwidth) {
      x = 1 / cluster.memory_bandwidth;
      double num = 0, den = 0;
      for (const auto& s : samples) {
        const double g = predict_layer_seconds(s, none, dtype) / s.seconds;
        const double k = kernel_bytes(s, cluster, dtype) / s.seconds;
        num += g * (1 - k * x);
        den += g * g;
      }
      fit.bandwidth_capped = true;
      fit.gemm_scale = den / num;
      fit.bandwidth = cluster.memory_bandwidth;
      if (num > 0) return fit;
      fit.bandwidth_capped = false;  // the kernels alone at the base's bandwidth exceed the passes: fall through
    } else {
      fit.gemm_scale = 1 / u;
      fit.bandwidth = 1 / x;
      return fit;
    }
  }
  // No positive kernel time: the GEMMs alone, t = g u.
  fit.clamped = true;
  fit.gemm_scale = gg / gt;
  return fit;
}

}  // namespace zeropp::calibrate
