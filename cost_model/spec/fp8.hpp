#pragma once
// FP8 training: which recipe a plan runs, which framework can run it, and what each recipe does that the cost model
// prices (analytic/fp8_cost.hpp). One home for these facts.
//
// What runs in FP8 (every recipe): the four weight GEMMs of each transformer layer (QKV, attention output
// projection, MLP up/gate, MLP down), forward (fprop), input gradient (dgrad) and weight gradient (wgrad). Hybrid
// format: E4M3 for activations and weights, E5M2 for gradients (TransformerEngine's Format.HYBRID, Megatron's
// --fp8-format hybrid; torchao's float8 training uses e4m3 forward and e5m2 for gradients likewise). What stays in
// the plan's dtype (bf16): the attention core (softmax(QK^T)V: FlashAttention / cuDNN attention), norms, the
// embedding and the LM head (Megatron's output layer is not a TransformerEngine module; torchtitan's float8
// converter skips "output" by default), the optimizer and the master weights. Hopper's FP8 tensor cores run E4M3 x
// E5M2 at the same rate as E4M3 x E4M3, so one FP8 GEMM rate serves all three GEMMs (gpu.fp8_matmul_efficiency).
//
// Scaling, per tensor role (input X, weight W, output gradient dY of each linear layer):
//   te_delayed          TransformerEngine DelayedScaling (transformer_engine/common/recipe: amax_history_len 1024,
//                       amax_compute_algo "max"): the scale comes from the amax history of earlier steps, so the
//                       cast kernel records the new amax while it casts (no separate amax pass). TE casts X and dY
//                       once, writing the FP8 tensor and its FP8 transpose (cast_transpose: Hopper's FP8 GEMM takes
//                       only the TN layout, cuBLASLt documentation), and saves the FP8 transpose of X for wgrad.
//                       Under Megatron the FP8 weight and its transpose are cached over the micro-batches of a step
//                       (TELinear's is_first_microbatch); other frameworks pass none and cast at every forward.
//   te_current          TransformerEngine Float8CurrentScaling (Megatron --fp8-recipe tensorwise, NeMo's "FP8-CS"):
//                       as te_delayed but the scale is this tensor's own amax: one amax reduction pass (read) before
//                       each cast; no amax history.
//   torchao_tensorwise  torchao Float8Linear, dynamic tensorwise scaling (torchao/float8/float8_linear.py,
//                       matmul_with_hp_or_float8_args): saves the high-precision X and W for backward and casts each
//                       operand of each of the three GEMMs on its own (hp_tensor_to_float8_dynamic: an amax
//                       reduction, then the scaled cast): six casts per layer and micro-batch, no caching. With
//                       FSDP2 and enable_fsdp_float8_all_gather the weight shard is cast before the all-gather,
//                       which then moves one byte per linear-weight element.
//   torchao_rowwise     the same with rowwise (axiswise) scales; no FP8 all-gather (torchao supports it for
//                       tensorwise only).
// Counted in eager form: torch.compile's fusion of the amax with the cast (torchtitan) and TE's fusion of the cast
// into LayerNorm (LayerNormLinear) are not modelled, so the cast traffic is an upper bound for those.
//
// Which framework runs which recipe:
//   megatron   te_delayed (default: Megatron-LM's --fp8-recipe default "delayed"), te_current
//   fsdp2      torchao_tensorwise (default: torchtitan's float8 converter), torchao_rowwise, te_delayed, te_current
//   fsdp1      te_delayed (default), te_current: Composer's FSDP with TransformerEngine layers, as llm-foundry's
//              amp_fp8 runs it; torchao refused (its float8 recipes and FP8 all-gather are documented for FSDP2)
//   deepspeed, zeropp   te_delayed (default), te_current: an assumption, as framework.hpp assumes they run
//              Megatron's kind of fused kernels; torchao is refused (their layers are not torch.nn.Linear swapped by
//              torchao's converter in any code we know).
#include <optional>
#include <string>

#include "cost_model/spec/cluster_spec.hpp"
#include "cost_model/spec/parallel_spec.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp {

// TransformerEngine's DelayedScaling default amax_history_len (transformer_engine/common/recipe/__init__.py).
inline constexpr int kTeAmaxHistoryLen = 1024;

inline Fp8Recipe default_fp8_recipe(Framework framework) {
  return framework == Framework::fsdp2 ? Fp8Recipe::torchao_tensorwise : Fp8Recipe::te_delayed;
}
// Why `framework` cannot run `recipe` ("" when it can).
std::string fp8_recipe_unavailable(Framework framework, Fp8Recipe recipe);
// The recipe a plan trains with: none without FP8, else its own or its framework's default. Inline: the closed
// form asks it several times per plan, and an out-of-line std::optional<enum> return goes through memory (a
// one-byte store read back as eight: a store-forwarding stall on every call).
inline std::optional<Fp8Recipe> fp8_recipe_of(const ParallelSpec& p) {
  if (!p.fp8) return std::nullopt;
  return p.fp8_recipe.value_or(default_fp8_recipe(framework_of(p)));
}

// What the cost model prices per recipe (analytic/fp8_cost.hpp).
struct Fp8RecipeTraits {
  bool transformer_engine = false;  // TE: cast + transpose of X and dY, FP8 copy of X saved for backward
  bool amax_pass = false;           // a separate amax reduction (read) before each cast (current / dynamic scaling)
  bool amax_history = false;        // delayed scaling: amax_history_len fp32 values per FP8 tensor
};
Fp8RecipeTraits fp8_traits(Fp8Recipe recipe);

// A dtype as files and the command line give it: "fp8" is bf16 with FP8 linear layers; other names as
// dtype_from_string. Throws SpecError(field) for an unknown name.
struct TrainingDtype {
  Dtype dtype = Dtype::bf16;
  bool fp8 = false;
};
TrainingDtype training_dtype_from_string(const std::string& name, const std::string& field);
// "fp8" for an FP8 plan, else the dtype's name.
std::string dtype_label(Dtype dtype, bool fp8);

// The plan's FP8 settings against its framework and cluster; throws SpecError naming the field and the rule:
// fp8_recipe or fp8_all_gather without FP8, a recipe the framework cannot run, a cluster without an FP8 peak or
// without a published FP8 GEMM rate (gpu.fp8_matmul_efficiency), fp8_all_gather outside FSDP2 + ZeRO-3 + tensorwise.
void validate_fp8(const ParallelSpec& p, const ClusterSpec& cluster, const std::string& field = "parallel");

}  // namespace zeropp
