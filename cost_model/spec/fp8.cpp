#include "cost_model/spec/fp8.hpp"

#include <fmt/format.h>

#include "cost_model/spec/error.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp {

std::string fp8_recipe_unavailable(Framework framework, Fp8Recipe recipe) {
  const bool torchao = recipe == Fp8Recipe::torchao_tensorwise || recipe == Fp8Recipe::torchao_rowwise;
  if (torchao && framework != Framework::fsdp2)
    return fmt::format("torchao's float8 training swaps torch.nn.Linear modules (torchtitan, FSDP2); framework {} "
                       "trains with TransformerEngine layers (te_delayed or te_current)",
                       to_string(framework));
  return "";
}

Fp8RecipeTraits fp8_traits(Fp8Recipe recipe) {
  switch (recipe) {
    case Fp8Recipe::te_delayed:
      return {true, false, true};
    case Fp8Recipe::te_current:
      return {true, true, false};
    case Fp8Recipe::torchao_tensorwise:
    case Fp8Recipe::torchao_rowwise:
      return {false, true, false};
  }
  return {};
}

TrainingDtype training_dtype_from_string(const std::string& name, const std::string& field) {
  if (name == "fp8") return {Dtype::bf16, true};
  try {
    return {dtype_from_string(name, field), false};
  } catch (const SpecError&) {
    throw SpecError(field, fmt::format("{}=\"{}\" must be one of bf16, fp16, fp32, fp8", field, name));
  }
}

std::string dtype_label(Dtype dtype, bool fp8) { return fp8 ? "fp8" : to_string(dtype); }

void validate_fp8(const ParallelSpec& p, const ClusterSpec& cluster, const std::string& field) {
  if (!p.fp8) {
    if (p.fp8_recipe)
      throw SpecError(field + ".fp8_recipe", fmt::format("{0}.fp8_recipe={1} needs {0}.dtype=fp8", field,
                                                          to_string(*p.fp8_recipe)));
    if (p.fp8_all_gather)
      throw SpecError(field + ".fp8_all_gather", fmt::format("{0}.fp8_all_gather needs {0}.dtype=fp8", field));
    return;
  }
  if (p.dtype != Dtype::bf16)
    throw SpecError(field + ".dtype",
                    fmt::format("{}.dtype: FP8 training keeps bf16 outside its linear layers", field));
  const Fp8Recipe recipe = *fp8_recipe_of(p);
  const Framework framework = framework_of(p);
  if (const std::string why = fp8_recipe_unavailable(framework, recipe); !why.empty())
    throw SpecError(field + ".fp8_recipe", fmt::format("{}.fp8_recipe={} cannot run with {}.framework={}: {}", field,
                                                        to_string(recipe), field, to_string(framework), why));
  if (cluster.fp8_peak_flops <= 0)
    throw SpecError(field + ".dtype", fmt::format("{}.dtype=fp8 has no peak in cluster {}: cluster.peak_tflops.fp8 is "
                                                  "not given (the GPU has no FP8 tensor cores)",
                                                  field, cluster.name));
  if (!cluster.gpu || !cluster.gpu->fp8_matmul_efficiency.known())
    throw SpecError(field + ".dtype",
                    fmt::format("{}.dtype=fp8 cannot be priced on cluster {}: its gpu.fp8_matmul_efficiency (a "
                                "published FP8 GEMM rate) is not given",
                                field, cluster.name));
  if (p.fp8_all_gather) {
    if (recipe != Fp8Recipe::torchao_tensorwise)
      throw SpecError(field + ".fp8_all_gather",
                      fmt::format("{}.fp8_all_gather needs fp8_recipe torchao_tensorwise (torchao's "
                                  "enable_fsdp_float8_all_gather), not {}",
                                  field, to_string(recipe)));
    if (data_parallel_sync(p).shard_group <= 1)
      throw SpecError(field + ".fp8_all_gather",
                      fmt::format("{}.fp8_all_gather needs ZeRO-3 sharded parameters (strategy {} with z={} gathers "
                                  "none)",
                                  field, to_string(p.strategy), p.z));
  }
}

}  // namespace zeropp
