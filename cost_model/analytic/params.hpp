#pragma once
// Parameter counts of a transformer (GPT or Llama style) per layer, per pipeline stage and in total.
//
// Per layer, with q = kv_heads * head_dim (q = h for multi-head attention) and f = ffn hidden:
//   attention  2h^2 (Q and output projections) + 2hq (K and V)      [+ biases h + 2q (QKV) + h (output)]
//   MLP        gelu: 2hf (up, down)   swiglu: 3hf (gate, up, down) [+ biases f + h, gelu only]
//   norms      gelu: two LayerNorms, 2 x 2h (weight and bias)       swiglu: two RMSNorms, 2 x h
// Bias presence follows the MLP kind: GPT (gelu) has biases everywhere, Llama (swiglu) has none. For GPT with
// f = 4h this is the familiar 12h^2 + 13h.
// Outside the layers: word embedding V*h (+ s*h learned positions), the final norm (2h or h), and an LM head
// V*h only when the embedding is untied.
#include <algorithm>
#include <cstdint>

#include "cost_model/spec/model_spec.hpp"
#include "cost_model/spec/parallel_spec.hpp"
#include "cost_model/spec/stage_layout.hpp"

namespace zeropp::analytic {

// Bytes of one element of the given training dtype (bf16/fp16: 2, fp32: 4). Inline: every formula asks it.
[[noreturn]] void unknown_dtype();  // throws SpecError
inline int element_bytes(Dtype dtype) {
  switch (dtype) {
    case Dtype::bf16:
    case Dtype::fp16:
      return 2;
    case Dtype::fp32:
      return 4;
  }
  unknown_dtype();
}

// True for GPT-style layers (gelu MLP): linear biases and LayerNorm biases. False for Llama-style (swiglu).
bool has_biases(const ModelSpec& model);

struct LayerParams {
  std::int64_t attention = 0;  // QKV and output projections with their biases
  std::int64_t mlp = 0;        // up (and gate) and down projections with their biases
  std::int64_t norms = 0;      // the two pre-norms of the block
  std::int64_t total() const { return attention + mlp + norms; }
};

// One transformer layer, all tensor-parallel ranks together.
LayerParams layer_params(const ModelSpec& model);
std::int64_t params_per_layer(const ModelSpec& model);

// One layer as held by ONE tensor-parallel rank (Megatron column/row-parallel split): weight matrices and
// column-parallel biases (QKV, MLP up/gate) are divided by tp; row-parallel biases (output, down) and norms
// are replicated. tp must divide heads, kv heads and ffn (throws SpecError("parallel.tp", ...)).
LayerParams layer_params_per_tp_rank(const ModelSpec& model, int tp);

std::int64_t word_embedding_params(const ModelSpec& model);      // V*h
std::int64_t position_embedding_params(const ModelSpec& model);  // s*h when learned, else 0
std::int64_t embedding_params(const ModelSpec& model);           // word + position
std::int64_t final_norm_params(const ModelSpec& model);          // 2h (LayerNorm) or h (RMSNorm)
std::int64_t lm_head_params(const ModelSpec& model);             // V*h when untied, else 0 (shares the embedding)
// Unique parameters of the model: L layers + embedding + final norm + untied head. A tied head counts once.
std::int64_t total_params(const ModelSpec& model);

// Parameters held by one pipeline (virtual) stage. Layers are split evenly: L/(pp*v) per virtual stage.
// The first virtual stage (0) holds the embedding; the last (pp*v-1) holds the final norm and the LM head.
// Tied embedding: with pp > 1 the last stage sits on another rank than the embedding and holds its own copy
// of the word embedding for the LM head (Megatron keeps the two in sync with an all-reduce of their
// gradients), so `head` includes V*h there; with pp == 1 the head reuses the embedding and adds nothing.
// total_params() counts the tied matrix once; stage/rank counts include the copy because it costs memory.
struct StageParams {
  std::int64_t layers = 0;     // transformer layers on this stage
  std::int64_t embedding = 0;  // word (+ position) embedding, first virtual stage only
  std::int64_t head = 0;       // final norm + LM head (or the tied copy), last virtual stage only
  std::int64_t total() const { return layers + embedding + head; }
};

// L/(pp*v); throws SpecError("parallel.pp", ...) when pp*v does not divide the layers or is < 1.
int layers_per_virtual_stage(const ModelSpec& model, int pp, int v);

// Virtual stage vs in [0, pp*v), i.e. chunk c of PP rank r is vs = c*pp + r. With tp > 1 the counts are per
// tensor-parallel rank (layers via layer_params_per_tp_rank, word embedding and head vocabulary-parallel:
// /tp; position table and final norm replicated).
StageParams virtual_stage_params(const ModelSpec& model, int pp, int v, int virtual_stage, int tp = 1);
// Sum over the v chunks of PP rank r (0 <= r < pp).
StageParams rank_params(const ModelSpec& model, int pp, int v, int pp_rank, int tp = 1);
// The largest rank_params(...).total() over all PP ranks (the first or the last rank).
std::int64_t max_rank_params(const ModelSpec& model, int pp, int v, int tp = 1);

// A pipeline's parameter counts per TP rank under a split of the layers, worked out once: every rank's and
// stage's count is then a product and a sum (the closed forms ask for several ranks per plan evaluation).
struct PipelineParams {
  StageLayout layout;
  std::int64_t per_layer = 0;  // one transformer layer (layer_params_per_tp_rank)
  std::int64_t embedding = 0;  // the first virtual stage's word (+ position) embedding
  std::int64_t head = 0;       // the last virtual stage's final norm and LM head (or tied copy)
  StageParams stage(int virtual_stage) const;
  // Rank r holds virtual stages c*pp + r: stage 0 (the embedding) is chunk 0 of rank 0 and stage pp*v-1 (the
  // head) is chunk v-1 of rank pp-1. Same as summing stage() over the rank's chunks. Inline, as max_rank: the
  // closed forms ask for several ranks per plan evaluation.
  StageParams rank(int pp_rank) const {
    const int pp = layout.pp;
    if (pp_rank < 0 || pp_rank >= pp) rank_outside(pp_rank);
    StageParams sum;
    sum.layers = layout.rank_layers(pp_rank) * per_layer;
    if (pp_rank == 0) sum.embedding = embedding;
    if (pp_rank == pp - 1) sum.head = head;
    return sum;
  }
  std::int64_t max_rank() const {
    // The first rank adds the embedding, the last the head; the middle ranks hold only layers, all alike (rank 1
    // stands for them).
    const int p = layout.pp;
    std::int64_t most = rank(0).total();
    if (p > 1) most = std::max(most, rank(p - 1).total());
    if (p > 2) most = std::max(most, rank(1).total());
    return most;
  }

 private:
  [[noreturn]] void rank_outside(int pp_rank) const;  // throws SpecError
};
// The first virtual stage's embedding (vocabulary-parallel word embedding split over tp, replicated positions) and
// the last one's final norm and LM head (an untied head always; a tied one needs its own copy when the embedding
// is on another rank, pp > 1), per TP rank.
std::int64_t first_stage_embedding_params(const ModelSpec& model, int tp);
std::int64_t last_stage_head_params(const ModelSpec& model, int pp, int tp);
// Inline: the caller has just built `layout` (stage_layout, inline), and an out-of-line copy of it reads back
// 16 bytes at a time what was stored 4 at a time (a store-forwarding stall per call).
inline PipelineParams pipeline_params(const ModelSpec& model, const StageLayout& layout, int tp = 1) {
  PipelineParams p;
  p.layout = layout;
  p.per_layer = layer_params_per_tp_rank(model, tp).total();
  p.embedding = first_stage_embedding_params(model, tp);
  p.head = last_stage_head_params(model, layout.pp, tp);
  return p;
}

// The same under any split of the layers (even, Megatron's accounted or explicit first/last stage layers:
// spec/stage_layout.hpp); the (pp, v) forms above are these with the even split.
StageParams virtual_stage_params(const ModelSpec& model, const StageLayout& layout, int virtual_stage, int tp = 1);
StageParams rank_params(const ModelSpec& model, const StageLayout& layout, int pp_rank, int tp = 1);
// The largest over all PP ranks (the first, the last, or a middle one when the ends are lighter).
std::int64_t max_rank_params(const ModelSpec& model, const StageLayout& layout, int tp = 1);

}  // namespace zeropp::analytic
