// Rules that tie the specs together: a plan's parallel split against its model and cluster, and an experiment's
// GPU count against its cluster.
#include <fmt/format.h>

#include "cost_model/spec/attention_kernel.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/context_parallel.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/fp8.hpp"
#include "cost_model/spec/framework.hpp"
#include "cost_model/spec/limits.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/printable.hpp"
#include "cost_model/spec/stage_layout.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp {
namespace {

void check_divides(const std::string& divisor_name, int divisor, const std::string& field, const std::string& what,
                   long long value) {
  if (value % divisor != 0)
    throw SpecError(field, fmt::format("{}={} does not divide {}={}", divisor_name, divisor, what, value));
}

void check_dtype(Dtype dtype, const std::string& field, const ClusterSpec& cluster) {
  if (!cluster.peak_flops.contains(dtype))
    throw SpecError(field, fmt::format("{}={} has no peak in the cluster: cluster.peak_tflops.{} is not given", field,
                                       to_string(dtype), to_string(dtype)));
}

// GPUs are used a node at a time, or a part of one node: 12 GPUs on 8-GPU nodes is not a layout we model.
// `label` names the count in messages: "experiment.gpus" or "parallel: world tp*z*pp*dp".
void check_gpu_count(const std::string& field, const std::string& label, int gpus, const ClusterSpec& cluster) {
  if (gpus > cluster.world())
    throw SpecError(field, fmt::format("{}={} exceeds the cluster's {} GPUs (cluster.nodes={} x "
                                       "cluster.gpus_per_node={})",
                                       label, gpus, cluster.world(), cluster.nodes, cluster.gpus_per_node));
  if (gpus % cluster.gpus_per_node != 0 && cluster.gpus_per_node % gpus != 0)
    throw SpecError(field, fmt::format("{}={} must be a multiple or a divisor of cluster.gpus_per_node={} "
                                       "(whole nodes, or part of one node)",
                                       label, gpus, cluster.gpus_per_node));
}

}  // namespace

void validate(const Plan& plan) {
  const ModelSpec& m = plan.model;
  const ClusterSpec& c = plan.cluster;
  const ParallelSpec& p = plan.parallel;
  validate(m);
  validate(c);
  validate(p);
  check_dtype(p.dtype, "parallel.dtype", c);
  validate_fp8(p, c, "parallel");  // FP8 recipe, framework and the GPU's FP8 rate (spec/fp8.hpp)

  // Megatron's tensor-parallel split: heads, key/value groups and the MLP columns divide evenly over tp.
  check_divides("parallel.tp", p.tp, "parallel.tp", "model.heads", m.heads);
  if (m.kv_heads > 0) check_divides("parallel.tp", p.tp, "parallel.tp", "model.kv_heads", m.kv_heads);
  if (m.ffn() % p.tp != 0)
    throw SpecError("parallel.tp", fmt::format("parallel.tp={} does not divide the MLP's hidden size {} "
                                               "(model.ffn_hidden)",
                                               p.tp, m.ffn()));
  // The layers split over the virtual stages: evenly, with the embedding and loss counted (Megatron's default for
  // layers that do not divide), or as parallel.first/last_stage_layers say (spec/stage_layout.hpp).
  stage_layout(m, p);
  // Context parallelism's own rules (spec/context_parallel.hpp).
  validate_context_parallel(m, p);

  // The intra-node dimension (tp or z; at most one is > 1) must divide a node. tp is innermost in rank order; z sits
  // outside cp (spec/rank_grid.hpp, Megatron's tp-cp-dp-pp), so with CP its z*cp ranks leave the node when they
  // exceed it, and the ZeRO-3 group is priced on the network then (analytic::zero_group).
  const bool tp_inner = p.tp > 1;
  const int inner = tp_inner ? p.tp : p.z;
  if (c.gpus_per_node % inner != 0)
    throw SpecError(tp_inner ? "parallel.tp" : "parallel.z",
                    fmt::format("{}={} does not divide cluster.gpus_per_node={}: the {} group must sit inside one "
                                "node",
                                tp_inner ? "parallel.tp" : "parallel.z", inner, c.gpus_per_node,
                                tp_inner ? "tensor-parallel" : "ZeRO-3"));
  check_gpu_count("parallel", p.cp > 1 ? "parallel: world tp*z*cp*pp*dp" : "parallel: world tp*z*pp*dp", p.world(),
                  c);
  const std::string why = tp_overlap_unavailable(p.tp_comm_overlap, c);
  if (!why.empty())
    throw SpecError("parallel.tp_comm_overlap", fmt::format("parallel.tp_comm_overlap={} cannot run on cluster {}: {}",
                                                            to_string(p.tp_comm_overlap), c.name, why));
  const AttentionKernel kernel = attention_kernel_of(plan);
  if (const std::string no = attention_kernel_unavailable(kernel, m, c); !no.empty())
    throw SpecError("parallel.attention_kernel",
                    fmt::format("parallel.attention_kernel={}{} cannot run on cluster {}: {}", to_string(kernel),
                                p.attention_kernel ? "" : fmt::format(" (framework {}'s default)",
                                                                      to_string(framework_of(p))),
                                c.name, no));
}

void validate(const Experiment& e) {
  check_printable("experiment.name", e.name);  // tables and reports print it
  validate(e.model);
  validate(e.cluster);
  if (e.gpus < 1) throw SpecError("experiment.gpus", fmt::format("experiment.gpus={} must be >= 1", e.gpus));
  check_gpu_count("experiment.gpus", "experiment.gpus", e.gpus, e.cluster);
  if (e.global_batch < 1)
    throw SpecError("experiment.global_batch", fmt::format("experiment.global_batch={} must be >= 1", e.global_batch));
  check_at_most("experiment", "global_batch", e.global_batch, limits::kGlobalBatch);
  check_dtype(e.dtype, "experiment.dtype", e.cluster);
  // FP8: the cluster's FP8 rate, and the recipe against the experiment's framework when it names one (the search
  // checks it against each strategy it prices: search/space.cpp).
  ParallelSpec fp8;
  const bool megatron_runs = !e.fp8_recipe || fp8_recipe_unavailable(Framework::megatron, *e.fp8_recipe).empty();
  fp8.framework = e.framework.value_or(megatron_runs ? Framework::megatron : Framework::fsdp2);
  fp8.dtype = e.dtype;
  fp8.fp8 = e.fp8;
  fp8.fp8_recipe = e.fp8_recipe;
  validate_fp8(fp8, e.cluster, "experiment");
  if (e.attention_kernel)
    if (const std::string no = attention_kernel_unavailable(*e.attention_kernel, e.model, e.cluster); !no.empty())
      throw SpecError("experiment.attention_kernel",
                      fmt::format("experiment.attention_kernel={} cannot run on cluster {}: {}",
                                  to_string(*e.attention_kernel), e.cluster.name, no));
  for (std::size_t i = 0; i < e.strategies.size(); ++i)
    for (std::size_t k = 0; k < i; ++k)
      if (e.strategies[i] == e.strategies[k])
        throw SpecError(fmt::format("experiment.strategies[{}]", i),
                        fmt::format("experiment.strategies[{}]=\"{}\" is already listed at [{}]", i,
                                    to_string(e.strategies[i]), k));
}

}  // namespace zeropp
