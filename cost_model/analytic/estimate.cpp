#include "cost_model/analytic/estimate.hpp"

#include <algorithm>

#include "cost_model/analytic/flops.hpp"

namespace zeropp::analytic {

Estimate estimate(const Plan& plan, const EstimateOptions& options) {
  if (options.validate) validate(plan);
  const ParallelSpec& par = plan.parallel;
  Estimate est;
  const PlanBasics basics = plan_basics(plan);  // once for the three forms below
  est.comm_bytes = comm_bytes(plan, basics);
  est.memory_bytes = memory_bytes(plan, basics);

  const ActionCosts costs = action_costs(plan, basics);
  est.time_s = options.pipeline ? options.pipeline(plan, costs) : closed_form_timing(plan, costs, basics);
  if (est.time_s.peak_memory) {
    // The executor tracked activations and buffers over time: its peak replaces the closed-form bound.
    est.memory_bytes.peak = *est.time_s.peak_memory;
  }

  const double world = par.world();
  const long long sequences = par.global_batch();
  const double t = est.time_s.iteration;
  est.throughput.tokens_per_s = static_cast<double>(sequences) * plan.model.seq_len / t;
  est.throughput.tflops_per_gpu = executed_flops_per_iteration(plan) / (t * world) / 1e12;
  const double peak_seconds = t * world * plan.cluster.peak(par.dtype);
  est.throughput.mfu = model_flops_per_iteration(plan.model, sequences, AttentionCount::causal) / peak_seconds;
  est.throughput.mfu_full_attention = model_flops_per_iteration(plan.model, sequences) / peak_seconds;

  est.over_by_bytes = std::max(0.0, est.memory_bytes.peak - plan.cluster.memory_bytes);
  est.feasible = est.over_by_bytes == 0;
  return est;
}

nlohmann::json to_json(const Estimate& e) {
  const auto& c = e.comm_bytes;
  const auto& m = e.memory_bytes;
  const auto& t = e.time_s;
  nlohmann::json comm = {{"tp", c.tp}, {"pp", c.pp}, {"dp", c.dp}, {"zero", c.zero}, {"total", c.total}};
  if (c.cp > 0) comm["cp"] = c.cp;  // only with context parallelism: plans without it read as before
  nlohmann::json j = {
      {"comm_bytes", comm},
      {"memory_bytes",
       {{"params", m.params},
        {"grads", m.grads},
        {"optimizer", m.optimizer},
        {"activations", m.activations},
        {"buffers", m.buffers},
        {"peak", m.peak}}},
      {"time_s",
       {{"compute", t.compute},
        {"comm_exposed", t.comm_exposed},
        {"bubble", t.bubble},
        {"iteration", t.iteration},
        {"exposed", {{"tp", t.tp_exposed}, {"pp", t.pp_exposed}, {"zero", t.zero_exposed}, {"dp", t.dp_exposed}}}}},
      {"throughput",
       {{"tokens_per_s", e.throughput.tokens_per_s},
        {"tflops_per_gpu", e.throughput.tflops_per_gpu},
        {"mfu", e.throughput.mfu},
        {"mfu_full_attention", e.throughput.mfu_full_attention}}},
      {"feasible", e.feasible},
      {"over_by_bytes", e.over_by_bytes},
  };
  return j;
}

}  // namespace zeropp::analytic
