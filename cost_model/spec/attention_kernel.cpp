#include "cost_model/spec/attention_kernel.hpp"

#include <fmt/format.h>

#include "cost_model/spec/names.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp {
namespace {

// The profile's compute capability; 0 when it does not say.
double compute_capability(const ClusterSpec& cluster) {
  return cluster.gpu && cluster.gpu->compute_capability.known() ? cluster.gpu->compute_capability.value : 0;
}

}  // namespace

AttentionKernel default_attention_kernel(Framework framework, const ModelSpec& model, const ClusterSpec& cluster) {
  if (model.attention_kind() == AttentionKind::unfused) return AttentionKernel::unfused;
  switch (framework) {
    case Framework::megatron:
    case Framework::deepspeed:
    case Framework::zeropp:
      return compute_capability(cluster) >= 9.0 ? AttentionKernel::cudnn : AttentionKernel::flash2;
    case Framework::fsdp2:
    case Framework::fsdp1:
      return AttentionKernel::flash2;
  }
  return AttentionKernel::flash2;
}

AttentionKernel attention_kernel_of(const Plan& plan) {
  return plan.parallel.attention_kernel.value_or(
      default_attention_kernel(framework_of(plan.parallel), plan.model, plan.cluster));
}

std::string attention_kernel_unavailable(AttentionKernel kernel, const ModelSpec& model, const ClusterSpec& cluster) {
  const bool unfused_model = model.attention_kind() == AttentionKind::unfused;
  if ((kernel == AttentionKernel::unfused) != unfused_model)
    return fmt::format("model {} runs attention {} (model.attention)", model.name, to_string(model.attention_kind()));
  if (kernel == AttentionKernel::unfused) return "";
  if (cluster.device == Device::cpu) return "a CPU profile runs no GPU attention kernel";
  const double cc = compute_capability(cluster);
  if (kernel == AttentionKernel::flash3 && cc != 9.0)
    return cc == 0 ? "FlashAttention-3 runs on Hopper only (compute capability 9.0) and the profile states none "
                     "(gpu.compute_capability)"
                   : fmt::format("FlashAttention-3 runs on Hopper only (compute capability 9.0), this GPU is {}", cc);
  if (cc != 0 && cc < 8.0)
    return fmt::format("{} needs compute capability 8.0 or newer, this GPU is {}", to_string(kernel), cc);
  if (cluster.gpu && !cluster.gpu->attention.empty() && !cluster.gpu->attention.contains(kernel)) {
    std::string listed;
    for (const auto& [k, table] : cluster.gpu->attention) listed += (listed.empty() ? "" : ", ") + to_string(k);
    return fmt::format("the profile publishes no {} figures (gpu.attention lists {})", to_string(kernel), listed);
  }
  return "";
}

}  // namespace zeropp
