#include "cost_model/analytic/params.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cost_model/spec/error.hpp"

namespace zeropp::analytic {

void unknown_dtype() { throw SpecError("parallel.dtype", "unknown dtype"); }

bool has_biases(const ModelSpec& model) { return model.mlp == MlpKind::gelu; }

namespace {

// Width of the K (or V) projection: kv_heads * head_dim (= h for multi-head attention).
std::int64_t kv_width(const ModelSpec& model) {
  return static_cast<std::int64_t>(model.kv_heads_or_heads()) * model.head_dim();
}

// Weights of one norm: LayerNorm has a scale and a shift, RMSNorm a scale only.
std::int64_t norm_params(const ModelSpec& model) {
  return (has_biases(model) ? 2 : 1) * static_cast<std::int64_t>(model.hidden);
}

int up_matrices(const ModelSpec& model) { return model.mlp == MlpKind::swiglu ? 2 : 1; }

// One TP rank's slice of the vocabulary-parallel word embedding: ceil(V/tp) rows (the last rank's slice is
// padded, as Megatron pads the vocabulary).
std::int64_t word_embedding_slice(const ModelSpec& model, int tp) {
  return static_cast<std::int64_t>((model.vocab + tp - 1) / tp) * model.hidden;
}

}  // namespace

LayerParams layer_params(const ModelSpec& model) { return layer_params_per_tp_rank(model, 1); }

std::int64_t params_per_layer(const ModelSpec& model) { return layer_params(model).total(); }

LayerParams layer_params_per_tp_rank(const ModelSpec& model, int tp) {
  if (tp < 1 || model.heads % tp != 0 || model.kv_heads_or_heads() % tp != 0 || model.ffn() % tp != 0) {
    throw SpecError("parallel.tp",
                    fmt::format("parallel.tp={} must be >= 1 and divide model.heads={}, the kv heads ({}) and "
                                "the ffn hidden size ({})",
                                tp, model.heads, model.kv_heads_or_heads(), model.ffn()));
  }
  const std::int64_t h = model.hidden;
  const std::int64_t q = kv_width(model);
  const std::int64_t f = model.ffn();
  const bool bias = has_biases(model);
  LayerParams p;
  // Column-parallel QKV (h -> h + 2q) and row-parallel output projection (h -> h).
  p.attention = (h * (h + 2 * q) + h * h) / tp;
  if (bias) p.attention += (h + 2 * q) / tp + h;
  // Column-parallel up (and gate) h -> f, row-parallel down f -> h.
  p.mlp = (up_matrices(model) * h * f + f * h) / tp;
  if (bias) p.mlp += up_matrices(model) * f / tp + h;
  p.norms = 2 * norm_params(model);
  return p;
}

std::int64_t word_embedding_params(const ModelSpec& model) {
  return static_cast<std::int64_t>(model.vocab) * model.hidden;
}

std::int64_t position_embedding_params(const ModelSpec& model) {
  return model.learned_positions ? static_cast<std::int64_t>(model.seq_len) * model.hidden : 0;
}

std::int64_t embedding_params(const ModelSpec& model) {
  return word_embedding_params(model) + position_embedding_params(model);
}

std::int64_t final_norm_params(const ModelSpec& model) { return norm_params(model); }

std::int64_t lm_head_params(const ModelSpec& model) { return model.tied_embedding ? 0 : word_embedding_params(model); }

std::int64_t total_params(const ModelSpec& model) {
  return model.layers * params_per_layer(model) + embedding_params(model) + final_norm_params(model) +
         lm_head_params(model);
}

int layers_per_virtual_stage(const ModelSpec& model, int pp, int v) {
  if (pp < 1 || v < 1 || model.layers % (pp * v) != 0) {
    throw SpecError("parallel.pp", fmt::format("parallel.pp={} x parallel.v={} must be >= 1 and divide model.layers={}",
                                               pp, v, model.layers));
  }
  return model.layers / (pp * v);
}

std::int64_t first_stage_embedding_params(const ModelSpec& model, int tp) {
  return word_embedding_slice(model, tp) + position_embedding_params(model);
}

std::int64_t last_stage_head_params(const ModelSpec& model, int pp, int tp) {
  const bool tied_copy = model.tied_embedding && pp > 1;
  return final_norm_params(model) + (!model.tied_embedding || tied_copy ? word_embedding_slice(model, tp) : 0);
}

StageParams virtual_stage_params(const ModelSpec& model, int pp, int v, int virtual_stage, int tp) {
  layers_per_virtual_stage(model, pp, v);  // the even split exists
  return virtual_stage_params(model, even_layout(model.layers, pp, v), virtual_stage, tp);
}

StageParams rank_params(const ModelSpec& model, int pp, int v, int pp_rank, int tp) {
  layers_per_virtual_stage(model, pp, v);
  return rank_params(model, even_layout(model.layers, pp, v), pp_rank, tp);
}

std::int64_t max_rank_params(const ModelSpec& model, int pp, int v, int tp) {
  layers_per_virtual_stage(model, pp, v);
  return max_rank_params(model, even_layout(model.layers, pp, v), tp);
}

StageParams PipelineParams::stage(int virtual_stage) const {
  const int stages = layout.stages();
  if (virtual_stage < 0 || virtual_stage >= stages) {
    throw SpecError("parallel.pp", fmt::format("virtual stage {} is outside [0, pp*v = {})", virtual_stage, stages));
  }
  StageParams s;
  s.layers = layout.stage_layers(virtual_stage) * per_layer;
  if (virtual_stage == 0) s.embedding = embedding;
  if (virtual_stage == stages - 1) s.head = head;
  return s;
}

void PipelineParams::rank_outside(int pp_rank) const {
  throw SpecError("parallel.pp", fmt::format("PP rank {} is outside [0, pp = {})", pp_rank, layout.pp));
}

StageParams virtual_stage_params(const ModelSpec& model, const StageLayout& layout, int virtual_stage, int tp) {
  return pipeline_params(model, layout, tp).stage(virtual_stage);
}

StageParams rank_params(const ModelSpec& model, const StageLayout& layout, int pp_rank, int tp) {
  return pipeline_params(model, layout, tp).rank(pp_rank);
}

std::int64_t max_rank_params(const ModelSpec& model, const StageLayout& layout, int tp) {
  return pipeline_params(model, layout, tp).max_rank();
}

}  // namespace zeropp::analytic
