#include "e2e/model/gpt_config.hpp"

#include <string>

#include <fmt/format.h>

#include "cost_model/analytic/params.hpp"
#include "cost_model/simulate/costs_from_plan.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/fp8.hpp"
#include "cost_model/spec/framework.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::e2e {

int GptConfig::rotary_dims() const {
  if (!rope) return 0;
  const int d = static_cast<int>(rotary_fraction * head_size());  // HuggingFace: int(head_dim * partial factor)
  return d - d % 2;
}

std::int64_t GptConfig::block_params() const {
  const std::int64_t c = C, f = F, qkv = qkv_width(), up = up_width();
  // norms: LayerNorm 2C each (weight, bias), RMSNorm C; qkv C*qkv (+ qkv); attproj C*C (+ C); up C*up (+ up);
  // down C*F (+ C).
  std::int64_t n = 2 * (rmsnorm() ? c : 2 * c) + c * qkv + c * c + c * up + c * f;
  if (biases()) n += qkv + c + up + c;
  return n;
}

std::int64_t GptConfig::embedding_params() const { return std::int64_t{V} * C + (rope ? 0 : std::int64_t{T} * C); }

std::int64_t GptConfig::total_params() const {
  return L * block_params() + embedding_params() + (rmsnorm() ? 1 : 2) * std::int64_t{C} +
         (tied ? 0 : std::int64_t{V} * C);
}

std::string describe(const GptConfig& g) {
  std::string d = g.llama ? "llama layers (RMSNorm, SwiGLU, no biases)" : "gpt layers (LayerNorm, GELU, biases)";
  d += g.kv_heads() == g.NH ? fmt::format(", {} heads", g.NH) : fmt::format(", GQA {}/{} heads", g.NH, g.kv_heads());
  if (g.rope) {
    d += fmt::format(", RoPE theta {}", g.rope_theta);
    if (g.rotary_dims() != g.head_size()) d += fmt::format(" on {} of {} dims", g.rotary_dims(), g.head_size());
  } else {
    d += ", learned positions";
  }
  d += g.flash ? ", flash attention" : ", unfused attention";
  d += g.tied ? ", tied head" : ", untied head";
  return d;
}

void validate(const GptConfig& g, const char* field) {
  const std::string f(field);
  auto positive = [&](int v, const char* name) {
    if (v <= 0) throw SpecError(f + "." + name, std::string(name) + "=" + std::to_string(v) + " must be > 0");
  };
  positive(g.L, "layers");
  positive(g.C, "hidden");
  positive(g.NH, "heads");
  positive(g.T, "seq_len");
  positive(g.V, "vocab");
  positive(g.F, "ffn_hidden");
  if (g.KVH < 0) throw SpecError(f + ".kv_heads", fmt::format("kv_heads={} must be >= 0", g.KVH));
  if (g.C % g.NH != 0) {
    throw SpecError(f + ".heads", "heads=" + std::to_string(g.NH) + " does not divide hidden=" + std::to_string(g.C));
  }
  if (g.NH % g.kv_heads() != 0)
    throw SpecError(f + ".kv_heads", fmt::format("kv_heads={} does not divide heads={}", g.kv_heads(), g.NH));
  if (g.rope && !(g.rope_theta > 1))
    throw SpecError(f + ".rope_theta", fmt::format("rope_theta={} must be > 1", g.rope_theta));
  if (g.rope && g.rotary_dims() < 2)
    throw SpecError(f + ".rotary_fraction",
                    fmt::format("rotary_fraction={} of a head of {} rotates {} dimensions: at least one pair must",
                                g.rotary_fraction, g.head_size(), g.rotary_dims()));
}

// The model half of the trainer's list (gpt_config.hpp): every ModelSpec fact is computed or refused here.
GptConfig gpt_config_from(const ModelSpec& m) {
  if (m.has_dropout())
    throw SpecError("model.dropout",
                    "the trainer implements no dropout: state \"dropout\": false in the model (the "
                    "cost model then prices the same layer the trainer runs)");
  if (!m.rope_scaling.empty())
    throw SpecError(
        "model.rope_scaling",
        fmt::format("rope_scaling=\"{}\": the trainer implements unscaled rotary frequencies only", m.rope_scaling));
  GptConfig g;
  g.L = m.layers;
  g.C = m.hidden;
  g.NH = m.heads;
  g.KVH = m.kv_heads_or_heads() == m.heads ? 0 : m.kv_heads;
  g.T = m.seq_len;
  g.V = m.vocab;
  g.F = m.ffn();
  // The model side ties the layer style to the MLP kind (biases and the norm follow it: params.hpp).
  g.llama = !analytic::has_biases(m);
  g.tied = m.tied_embedding;
  g.rope = !m.learned_positions;
  g.rope_theta = m.rope_theta_or_default();
  g.rotary_fraction = m.rotary_fraction_or_default();
  g.flash = m.attention_kind() == AttentionKind::flash;
  validate(g);
  return g;
}

ModelSpec to_model_spec(const GptConfig& g) {
  ModelSpec m;
  m.name = "gpt";
  m.layers = g.L;
  m.hidden = g.C;
  m.heads = g.NH;
  m.kv_heads = g.KVH == g.NH ? 0 : g.KVH;
  m.ffn_hidden = g.F;
  m.seq_len = g.T;
  m.vocab = g.V;
  m.mlp = g.swiglu() ? MlpKind::swiglu : MlpKind::gelu;
  m.tied_embedding = g.tied;
  m.learned_positions = !g.rope;
  if (g.rope && g.rope_theta != 10000) m.rope_theta = g.rope_theta;
  if (g.rope && g.rotary_fraction != 1) m.rotary_fraction = g.rotary_fraction;
  m.attention = g.flash ? AttentionKind::flash : AttentionKind::unfused;
  m.dropout = false;
  return m;
}

void apply_model_override(ModelSpec& m, const std::string& item) {
  const auto eq = item.find('=');
  const std::string key = item.substr(0, eq);
  int* field = key == "layers"       ? &m.layers
               : key == "hidden"     ? &m.hidden
               : key == "heads"      ? &m.heads
               : key == "kv_heads"   ? &m.kv_heads
               : key == "ffn_hidden" ? &m.ffn_hidden
               : key == "seq_len"    ? &m.seq_len
               : key == "vocab"      ? &m.vocab
                                     : nullptr;
  if (eq == std::string::npos || field == nullptr)
    throw SpecError("--model-override", fmt::format("'{}' must be KEY=VALUE with KEY one of layers, hidden, heads, "
                                                    "kv_heads, ffn_hidden, seq_len, vocab",
                                                    item));
  const std::string value = item.substr(eq + 1);
  std::size_t used = 0;
  long long v = -1;
  try {
    v = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const bool zero_ok = key == "kv_heads" || key == "ffn_hidden";
  if (used == 0 || used != value.size() || v < (zero_ok ? 0 : 1) || v > (1 << 24))
    throw SpecError("--model-override",
                    fmt::format("{}: '{}' must be an integer in [{}, 16777216]", key, value, zero_ok ? 0 : 1));
  *field = static_cast<int>(v);
  if (key == "kv_heads" && m.kv_heads == m.heads) m.kv_heads = 0;  // stored as "= heads", as the loaders do
}

// ---------------------------------------------------------------- the plan half

namespace {

// What the trainer keeps and moves per parameter: the backend's compute dtype for the parameters the layers read
// (gathered and all-gathered in it), fp32 master weights when that is 16-bit, fp32 gradient buffers reduced in
// fp32 (e2e/runtime/chunk_state.hpp). That is Megatron-LM's bf16 convention, and fp32 training everywhere.
FrameworkPrecision trainer_precision(bool compute_f32) {
  FrameworkPrecision t;
  t.params = t.gather = compute_f32 ? Dtype::fp32 : Dtype::bf16;
  t.grads = t.reduce = Dtype::fp32;
  t.master_copy = !compute_f32;
  return t;
}

std::string describe(const FrameworkPrecision& p) {
  return fmt::format("parameters {}{}, gradients {} reduced in {}", to_string(p.params),
                     p.master_copy ? " with an fp32 master copy" : "", to_string(p.grads), to_string(p.reduce));
}

}  // namespace

Fp8Training fp8_training_of(const ParallelSpec& p) {
  Fp8Training t;
  t.enabled = p.fp8;
  return t;
}

void check_plan_runs(const Plan& plan, bool compute_f32) {
  // FP8 (e2e/model/fp8.hpp): the cpu backend emulates the FP8 linear layers of current per-tensor scaling and runs
  // everything else in fp32, its compute dtype, where the plan says bf16; so the precision rules below read an FP8
  // plan as fp32 on cpu.
  ParallelSpec fp = plan.parallel;
  if (fp.fp8) {
    if (!compute_f32)
      throw SpecError("parallel.dtype", "parallel.dtype=fp8: the cuda backend runs bf16 GEMMs only; the cpu backend "
                                        "emulates FP8 (run --backend cpu)");
    const Fp8Recipe recipe = *fp8_recipe_of(fp);
    if (recipe != Fp8Recipe::te_current && recipe != Fp8Recipe::torchao_tensorwise)
      throw SpecError("parallel.fp8_recipe",
                      fmt::format("parallel.fp8_recipe={}: the trainer emulates current per-tensor scaling only "
                                  "(state te_current or torchao_tensorwise)",
                                  to_string(recipe)));
    if (fp.fp8_all_gather)
      throw SpecError("parallel.fp8_all_gather", "parallel.fp8_all_gather=true: the trainer all-gathers fp32 "
                                                 "weights and quantizes after the gather (state false)");
    if (fp.cp > 1)
      throw SpecError("parallel.cp", fmt::format("parallel.cp={} with dtype fp8: the trainer reduces FP8 amaxes over "
                                                 "the TP group only, not the CP ring (state cp 1)",
                                                 fp.cp));
    fp.fp8 = false;
    fp.fp8_recipe.reset();
    fp.dtype = Dtype::fp32;
  }
  const ParallelSpec& p = fp;
  const Dtype computed = compute_f32 ? Dtype::fp32 : Dtype::bf16;
  if (p.dtype != computed)
    throw SpecError("parallel.dtype",
                    fmt::format("parallel.dtype={}: the {} backend computes in {} (state \"dtype\": \"{}\"{})",
                                to_string(p.dtype), compute_f32 ? "cpu" : "cuda", to_string(computed),
                                to_string(computed), compute_f32 ? ", or run --backend cuda for bf16" : ""));
  const FrameworkPrecision want = framework_precision(p), have = trainer_precision(compute_f32);
  if (want.params != have.params || want.grads != have.grads || want.master_copy != have.master_copy ||
      want.reduce != have.reduce || want.gather != have.gather) {
    const bool reduce_stated = p.reduce_dtype.has_value();
    throw SpecError(
        reduce_stated ? "parallel.reduce_dtype" : "parallel.framework",
        fmt::format("parallel.framework={}{} keeps {}; the trainer keeps {} (use framework megatron, or "
                    "reduce_dtype fp32 where the framework allows it)",
                    to_string(framework_of(p)), reduce_stated ? " with reduce_dtype " + to_string(*p.reduce_dtype) : "",
                    describe(want), describe(have)));
  }
  if (p.recompute == Recompute::selective)
    throw SpecError("parallel.recompute",
                    "parallel.recompute=selective: the trainer recomputes whole chunks (full) or nothing (none); "
                    "flash attention already recomputes its scores in the backward");
  if (p.tp_comm_overlap != TpCommOverlap::none)
    throw SpecError("parallel.tp_comm_overlap",
                    "parallel.tp_comm_overlap=" + to_string(p.tp_comm_overlap) +
                        ": the trainer runs each tensor-parallel collective before or after its GEMM, never under it "
                        "(state none)");
  // FSDP + TP (zero3 with tp > 1, torchtitan's 2-D) runs: each TP rank's slice of a chunk is ZeRO-3-sharded over the
  // shard group of its TP rank (the rank grid's z and dp_shard dimensions at that tp coordinate).
  // FSDP under a pipeline (zero3 with pp > 1, torchtitan's 3-D with and without TP) runs the program the cost model
  // prices (schedule/plan_program.hpp, ShardPolicy::per_iteration): each chunk gathered before its first use and
  // freed after its last, one reduce-scatter after its last W, and under HSDP one DP_SYNC after that.
  // HSDP (dp_shard < dp) runs: the shard group is the rank layout's inner group (z*dp_shard ranks of the rank grid)
  // and the program's DP_SYNC all-reduces the accumulated gradient shard across the dp/dp_shard replicas once after
  // the last W. FSDP2 all-reduces each micro-batch's shard instead (spec/strategy.hpp, as the simulator prices it):
  // the same sums in another order, so the trained parameters agree up to rounding.
  // Context parallelism: Megatron's ring attention with load-balanced causal chunks (e2e/model/ring_attention.hpp)
  // or DeepSpeed-Ulysses (ulysses_attention.hpp); the plan's own rules (flash attention, 2*cp chunks of the
  // sequence, cp dividing a TP rank's heads) are validate_context_parallel's.
  if (p.cp > 1 && !compute_f32)
    throw SpecError("parallel.cp", fmt::format("parallel.cp={}: the cuda backend has no context-parallel (ring) "
                                               "attention kernel nor Ulysses all-to-all; the cpu backend runs them "
                                               "(state cp 1 on cuda)",
                                               p.cp));
  if (p.cp > 1 && p.sequence_parallel && p.tp > 1 &&
      (std::int64_t{p.micro_batch} * (plan.model.seq_len / p.cp)) % p.tp != 0)
    throw SpecError("parallel.sequence_parallel",
                    fmt::format("parallel.sequence_parallel with cp={}: micro_batch*seq_len/cp = {} rows are not "
                                "divisible by tp={}",
                                p.cp, std::int64_t{p.micro_batch} * (plan.model.seq_len / p.cp), p.tp));
  // Backend::linear_backward_weight accumulates every micro-batch's weight gradient into the fp32 gradients in the
  // GEMM (beta = 1), as Megatron's --gradient-accumulation-fusion does.
  if (p.grad_accumulation_fusion && !*p.grad_accumulation_fusion)
    throw SpecError("parallel.grad_accumulation_fusion",
                    "parallel.grad_accumulation_fusion=false: the trainer's weight-gradient GEMMs always accumulate "
                    "into its fp32 gradients (beta = 1), as Megatron's fused accumulation does (state true)");
  // Backend::linear_backward_weight sums the bias gradients and the norms' weight gradients in column-sum kernels of
  // their own, as Megatron's local layers do (spec/framework.hpp, weight_reductions); state_execution says so.
  if (p.transformer_impl == TransformerImpl::transformer_engine)
    throw SpecError("parallel.transformer_impl",
                    "parallel.transformer_impl=transformer_engine: the trainer reduces the bias and norm-weight "
                    "gradients in kernels of their own, as Megatron's local layers do (state local)");
  if (p.overlap_param_gather)
    throw SpecError("parallel.overlap_param_gather",
                    "parallel.overlap_param_gather=true: the trainer all-gathers the updated parameters inside the "
                    "optimizer step, not under the next forward (state false)");
  // The cost model overlaps the DP gradient sync with the backward only when it cuts it into buckets (framework.hpp,
  // dp_sync_buckets); the trainer runs each stage's sync as one collective after its last W, which is what one
  // bucket means. So overlap_grad_reduce runs as priced unless the simulator's inputs give a stage several buckets.
  if (p.overlap_grad_reduce) {
    const simulate::ActionCosts costs = simulate::costs_from_plan(plan);
    for (int vs = 0; vs < costs.stage_count(); ++vs)
      if (const int n = costs.stages[static_cast<std::size_t>(vs)].dp_sync_buckets; n > 1)
        throw SpecError("parallel.overlap_grad_reduce",
                        fmt::format("parallel.overlap_grad_reduce=true: the cost model overlaps stage {}'s gradient "
                                    "sync with its backward in {} buckets ({}); the trainer syncs once after the "
                                    "backward (state false)",
                                    vs, n, to_string(framework_of(p))));
  }
}

void state_execution(Plan& plan) {
  ParallelSpec& p = plan.parallel;
  if (framework_of(p) == Framework::megatron && !p.transformer_impl) p.transformer_impl = TransformerImpl::local;
}

const std::vector<KeySupport>& key_support() {
  static const std::vector<KeySupport> list{
      {"model.name", "a label"},
      {"model.layers", "executed"},
      {"model.hidden", "executed"},
      {"model.heads", "executed"},
      {"model.kv_heads", "executed: grouped-query attention; tp must divide it (Megatron's split, no KV replication)"},
      {"model.ffn_hidden", "executed"},
      {"model.seq_len", "executed"},
      {"model.vocab", "executed"},
      {"model.mlp", "executed: gelu (GPT layer: LayerNorm, biases) or swiglu (Llama layer: RMSNorm, no biases)"},
      {"model.attention", "executed: unfused (stores the s x s softmax) or flash (tiled, stores the log-sum-exp)"},
      {"model.dropout", "refused when true: the trainer has no dropout"},
      {"model.tied_embedding", "executed"},
      {"model.learned_positions", "executed: a learned table, or rotary positions (false)"},
      {"model.rope_theta", "executed"},
      {"model.rotary_fraction", "executed"},
      {"model.rope_scaling", "refused when set: unscaled rotary frequencies only"},
      {"parallel.strategy", "executed (the program: cost_model/schedule/plan_program)"},
      {"parallel.tp", "executed: Megatron column/row-parallel split of heads, KV heads and ffn"},
      {"parallel.pp", "executed (with zero3: FSDP under a pipeline, each chunk gathered once per iteration)"},
      {"parallel.dp", "executed"},
      {"parallel.z", "executed"},
      {"parallel.zero_stage", "executed (DP all-reduce, or reduce-scatter with a sharded optimizer)"},
      {"parallel.v", "executed"},
      {"parallel.schedule", "executed (zero-bubble schedules with zero3 and pp > 1 refused by the plan's rules)"},
      {"parallel.micro_batch", "executed"},
      {"parallel.micro_batches", "executed"},
      {"parallel.unit", "executed"},
      {"parallel.allow_ragged_units", "executed"},
      {"parallel.recompute", "executed: none or full; refused: selective"},
      {"parallel.sequence_parallel", "executed"},
      {"parallel.dtype", "executed: fp32 on the cpu backend, bf16 on cuda, fp8 on cpu (FP8 linear layers emulated, "
                         "e2e/model/fp8.hpp; the rest fp32); refused otherwise"},
      {"parallel.grad_reduce", "executed"},
      {"parallel.overlap_grad_reduce", "executed where the cost model prices one bucket per stage; refused otherwise"},
      {"parallel.tp_comm_overlap", "refused unless none"},
      {"parallel.kernel_efficiency", "a cost-model figure (the framework's kernels' share of the GPU's rates, "
                                     "spec/framework.hpp): the trainer runs its own kernels"},
      {"parallel.overlap_param_gather", "refused when true"},
      {"parallel.grad_accumulation_fusion", "executed: the weight-gradient GEMMs accumulate into the fp32 gradients "
                                            "(beta = 1); refused when false"},
      {"parallel.transformer_impl", "executed as local: the bias and norm-weight gradients in column-sum kernels of "
                                    "their own (a Megatron plan without the key is run and priced as local); refused: "
                                    "transformer_engine"},
      {"parallel.first_stage_layers", "executed: the first pipeline rank's layers (uneven stages)"},
      {"parallel.last_stage_layers", "executed: the last pipeline rank's layers (uneven stages)"},
      {"parallel.cp", "executed on the cpu backend: Megatron's ring attention with load-balanced causal chunks "
                      "(e2e/model/ring_attention.hpp) or Ulysses, the CP ranks in the gradient sync group (zero3: in "
                      "the shard group); refused on cuda"},
      {"parallel.cp_kind", "executed: ring or ulysses (e2e/model/ulysses_attention.hpp)"},
      {"parallel.dp_shard", "executed (plain FSDP when it is dp, HSDP when smaller)"},
      {"parallel.framework",
       "executed where its precision is the trainer's (fp32 master and gradients); refused "
       "otherwise"},
      {"parallel.reduce_dtype", "executed: fp32; refused otherwise"},
      {"parallel.fp8_recipe", "executed on cpu: te_current and torchao_tensorwise (E4M3 forward, E5M2 gradients, "
                              "the whole tensor's amax, reduced over TP); refused: te_delayed, torchao_rowwise"},
      {"parallel.fp8_all_gather", "refused when true: the trainer gathers fp32 weights and quantizes after the gather "
                                  "(the same values, not the same bytes)"},
  };
  return list;
}

}  // namespace zeropp::e2e
