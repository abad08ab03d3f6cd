#include "cost_model/analytic/flops.hpp"

#include "cost_model/analytic/params.hpp"
#include "cost_model/spec/framework.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::analytic {

namespace {

// Tokens of one micro-batch: b*s.
double tokens(const ModelSpec& model, int b) { return static_cast<double>(b) * model.seq_len; }

double up_matrices(const ModelSpec& model) { return model.mlp == MlpKind::swiglu ? 2.0 : 1.0; }

}  // namespace

double layer_weight_matmul_flops(const ModelSpec& model, int b) {
  const double h = model.hidden;
  const double q = static_cast<double>(model.kv_heads_or_heads()) * model.head_dim();
  const double f = model.ffn();
  const double per_token = h * (h + 2 * q)               // QKV
                           + h * h                       // output projection
                           + up_matrices(model) * h * f  // up (+ gate)
                           + f * h;                      // down
  return 2.0 * tokens(model, b) * per_token;
}

double layer_attention_core_flops(const ModelSpec& model, int b, AttentionCount count) {
  // Q K^T: for every head an s x s x head_dim product; scores x V the same. Over all heads: 2 * 2*b*s*s*h.
  const double full = 4.0 * tokens(model, b) * model.seq_len * model.hidden;
  return count == AttentionCount::causal ? kCausalAttentionFraction * full : full;
}

PassFlops layer_flops(const ModelSpec& model, int b, AttentionCount count) {
  const double weight = layer_weight_matmul_flops(model, b);
  const double core = layer_attention_core_flops(model, b, count);
  return PassFlops{weight + core, weight + 2.0 * core, weight};
}

PassFlops layer_executed_flops(const ModelSpec& model, int b) {
  if (model.attention_kind() == AttentionKind::unfused) return layer_flops(model, b, AttentionCount::full);
  const double weight = layer_weight_matmul_flops(model, b);
  const double core = layer_attention_core_flops(model, b, AttentionCount::causal);
  return PassFlops{weight + core, weight + kFlashBackwardFactor * core, weight};
}

PassFlops lm_head_flops(const ModelSpec& model, int b) {
  const double fwd = 2.0 * tokens(model, b) * model.hidden * model.vocab;
  return PassFlops{fwd, fwd, fwd};
}

double recompute_flops_per_layer(const ModelSpec& model, int b, Recompute recompute) {
  switch (recompute) {
    case Recompute::none:
      return 0;
    case Recompute::selective:
      // FlashAttention already recomputes the scores inside its backward kernel (priced in its time, not
      // counted here: see flops.hpp); there is nothing left for selective recomputation to rebuild.
      return model.attention_kind() == AttentionKind::flash ? 0 : layer_attention_core_flops(model, b);
    case Recompute::full:
      return layer_flops(model, b).f;
  }
  return 0;
}

double recompute_executed_flops_per_layer(const ModelSpec& model, int b, Recompute recompute, Framework framework) {
  switch (recompute) {
    case Recompute::none:
      return 0;
    case Recompute::selective: {
      const SelectiveRecompute sel = selective_recompute(framework);
      const double core = layer_executed_flops(model, b).f - layer_weight_matmul_flops(model, b);
      return (sel.attention_core ? core : 0) + sel.weight_matmuls * layer_weight_matmul_flops(model, b);
    }
    case Recompute::full:
      return layer_executed_flops(model, b).f;
  }
  return 0;
}

double model_flops_per_iteration(const ModelSpec& model, long long sequences, AttentionCount count) {
  // Linear in b, so one sequence times the batch.
  const double per_sequence =
      model.layers * layer_flops(model, 1, count).total() + lm_head_flops(model, 1).total();
  return per_sequence * static_cast<double>(sequences);
}

double hardware_flops_per_iteration(const ModelSpec& model, long long sequences, Recompute recompute) {
  return model_flops_per_iteration(model, sequences) +
         static_cast<double>(sequences) * model.layers * recompute_flops_per_layer(model, 1, recompute);
}

double executed_flops_per_iteration(const Plan& plan) {
  const ParallelSpec& par = plan.parallel;
  const long long sequences = par.global_batch();
  double recomputed_layers = plan.model.layers;
  if (!recomputes_last_stage(par.schedule)) recomputed_layers -= stage_layout(plan.model, par).stage_layers(par.pp * par.v - 1);
  const double per_sequence =
      plan.model.layers * layer_executed_flops(plan.model, 1).total() + lm_head_flops(plan.model, 1).total();
  return static_cast<double>(sequences) *
         (per_sequence +
          recomputed_layers * recompute_executed_flops_per_layer(plan.model, 1, par.recompute, framework_of(par)));
}

double narayanan_flops_per_iteration(const ModelSpec& model, long long global_batch) {
  const double l = model.layers, h = model.hidden, s = model.seq_len, V = model.vocab;
  return 96.0 * static_cast<double>(global_batch) * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

double LayerGemms::weight_flops() const {
  return gemm[qkv].flops() + gemm[proj].flops() + gemm[up].flops() + gemm[down].flops();
}

double LayerGemms::attention_flops() const { return gemm[scores].flops() + gemm[context].flops(); }

LayerGemms layer_gemms(const ModelSpec& model, int b, int tp) {
  const double t = tp;
  const double rows = tokens(model, b);  // b*s token rows of the weight GEMMs
  const double h = model.hidden;
  const double q = static_cast<double>(model.kv_heads_or_heads()) * model.head_dim();
  const double f = model.ffn();
  const double s = model.seq_len;
  const double d = model.head_dim();
  LayerGemms g;
  // Megatron: QKV and up column-parallel (output split), proj and down row-parallel (input split).
  g.gemm[LayerGemms::qkv] = Gemm{rows, (h + 2 * q) / t, h, 1};
  g.gemm[LayerGemms::scores] = Gemm{s, s, d, static_cast<double>(b) * model.heads / t};
  g.gemm[LayerGemms::context] = Gemm{s, d, s, static_cast<double>(b) * model.heads / t};
  g.gemm[LayerGemms::proj] = Gemm{rows, h, h / t, 1};
  g.gemm[LayerGemms::up] = Gemm{rows, f / t, h, up_matrices(model)};
  g.gemm[LayerGemms::down] = Gemm{rows, h, f / t, 1};
  return g;
}

}  // namespace zeropp::analytic
