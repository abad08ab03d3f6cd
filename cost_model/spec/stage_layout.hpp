#pragma once
// How a plan's L transformer layers are laid out over its pp*v virtual stages: Megatron-LM's pipeline split.
//
// Virtual stage vs = c*pp + r is chunk c of PP rank r. Layers are assigned in virtual-stage order (stage 0 holds
// the first layers, after the embedding; stage pp*v-1 the last ones, before the final norm and the LM head), as
// Megatron-Core's get_transformer_layer_offset does with and without interleaving. Three splits, in Megatron's
// terms (megatron/core/transformer/transformer_block.py get_num_layers_to_build, and the checks of
// transformer_config.py __post_init__):
//   even       L/(pp*v) layers per virtual stage. The default when pp*v divides L (Megatron's default).
//   accounted  --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split: the embedding
//              and the loss count as one layer each, so every PP rank holds (L+2)/pp "layers" ((L+2)/(pp*v) per
//              chunk) and the first virtual stage holds one transformer layer fewer (its place is the embedding's),
//              the last one fewer (the loss's). Megatron requires pp | L+2 and v | (L+2)/pp. The default when pp*v
//              does not divide L and this split exists: Llama 3.1 405B's 126 layers on pp = 16 give 7, 8 x 14, 7
//              (a lighter first and last stage, as Meta's 405B run used: Llama 3 paper, section 3.3.2).
//              A first or last virtual stage may then hold no transformer layer at all (only the embedding or
//              only the head), as Megatron allows (num_layers_to_build >= 0).
//   explicit   parallel.first_stage_layers / parallel.last_stage_layers (Megatron's
//              --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers): the first (last) PP rank
//              holds that many layers, split evenly over its v chunks; the ranks without a given count share the
//              rest evenly. Megatron's rules: each given count >= 1 and a multiple of v; the rest divides evenly
//              over the other ranks, their share >= 1 and a multiple of v; nothing left over when every rank's
//              count is given (pp = 2 with both).
// The same split serves every schedule (1F1B, interleaved, ZB, BFS, and ZeroPP's chunks).
#include <cstdint>
#include <string>
#include <string_view>

#include "cost_model/spec/model_spec.hpp"
#include "cost_model/spec/parallel_spec.hpp"

namespace zeropp {

enum class LayoutKind { even, accounted, explicit_counts };

// O(1) description of a split: every virtual stage of rank r holds chunk(r) layers, except that the first
// virtual stage holds first_cut fewer and the last one last_cut fewer.
struct StageLayout {
  LayoutKind kind = LayoutKind::even;
  int pp = 1, v = 1;
  int first_chunk = 0;   // layers per chunk of PP rank 0
  int middle_chunk = 0;  // layers per chunk of PP ranks 1..pp-2
  int last_chunk = 0;    // layers per chunk of PP rank pp-1 (= first_chunk when pp = 1)
  int first_cut = 0;     // the first virtual stage holds first_cut fewer (accounted: 1)
  int last_cut = 0;      // the last virtual stage holds last_cut fewer (accounted: 1)

  int stages() const { return pp * v; }
  // Layers of a chunk of PP rank r before the cuts: the most any of its chunks holds.
  int chunk_layers(int r) const { return r == 0 ? first_chunk : r == pp - 1 ? last_chunk : middle_chunk; }
  // Transformer layers of virtual stage vs (0 <= vs < pp*v). Inline, as rank_layers: the closed forms ask for
  // them in every plan evaluation.
  int stage_layers(int vs) const {
    return chunk_layers(vs % pp) - (vs == 0 ? first_cut : 0) - (vs == stages() - 1 ? last_cut : 0);
  }
  // Global index of the first layer of virtual stage vs (layers of the stages before it).
  int first_layer(int vs) const;
  // Layers of PP rank r (all its chunks).
  int rank_layers(int r) const { return v * chunk_layers(r) - (r == 0 ? first_cut : 0) - (r == pp - 1 ? last_cut : 0); }
  // Most layers of any virtual stage.
  int max_stage_layers() const;
  int total_layers() const;
  bool even() const { return kind == LayoutKind::even; }

  friend bool operator==(const StageLayout&, const StageLayout&) = default;
};

// L/(pp*v) per virtual stage; no check beyond pp, v >= 1 (callers that already know pp*v divides L).
inline StageLayout even_layout(int layers, int pp, int v) {
  StageLayout l;
  l.pp = pp > 1 ? pp : 1;
  l.v = v > 1 ? v : 1;
  l.first_chunk = l.middle_chunk = l.last_chunk = layers / (l.pp * l.v);
  return l;
}

// The split of a plan: even, accounted or explicit as above. Throws SpecError naming `field`.pp, `field`.v,
// `field`.first_stage_layers or `field`.last_stage_layers and the rule when the split does not exist.
// The even case is inline: every plan evaluation asks it several times (analytic model, costs, bounds).
StageLayout uneven_stage_layout(const ModelSpec& model, const ParallelSpec& parallel, std::string_view field);
inline StageLayout stage_layout(const ModelSpec& model, const ParallelSpec& parallel,
                                std::string_view field = "parallel") {
  if (parallel.first_stage_layers == 0 && parallel.last_stage_layers == 0 && parallel.pp >= 1 && parallel.v >= 1 &&
      model.layers % (parallel.pp * parallel.v) == 0)
    return even_layout(model.layers, parallel.pp, parallel.v);
  return uneven_stage_layout(model, parallel, field);
}

// The layers of every virtual stage in stage order, runs collapsed, after the kind of split: "even: 4 x 8",
// "embedding and loss counted: 7, 8 x 14, 7", "first/last stage layers: 6, 8 x 15".
std::string describe(const StageLayout&);

}  // namespace zeropp
