#pragma once
// Where every parameter lives in a chunk's one flat buffer.
//
// A chunk (virtual stage) is a contiguous range of blocks, plus the embedding on the first stage and the final
// norm + LM head on the last. Its parameters (and, with the same offsets, its gradients) form ONE contiguous
// buffer, so ZeRO-3 shards / all-gathers / reduce-scatters a chunk as a flat array and ZeRO-1 runs AdamW on a flat
// range of it. Order inside a chunk (segments in [] exist only where the model has them: biases and LayerNorm
// shifts in a GPT layer, the position table with learned positions; gpt_config.hpp):
//   [wte V*C] [wpe T*C]                (first stage only)
//   [wte V*C  -- tied copy]            (last stage only, tied head, when it is not also the first)
//   block first_block .. first_block+num_blocks-1, each:
//     ln1_w C, [ln1_b C], qkv_w Ql*C, [qkv_b Ql], attproj_w C*Cl, [attproj_b C],
//     ln2_w C, [ln2_b C], fc_w Ul*C, [fc_b Ul], fcproj_w C*Fl, [fcproj_b C]
//   with, under TP t: Cl = C/t query columns, Ql = Cl + 2 KVl (KVl = KVH*hs/t key or value columns), Fl = F/t,
//   Ul = Fl (GELU) or 2 Fl (SwiGLU: this rank's gate rows, then its up rows)
//   [lnf_w C] [lnf_b C]                (last stage only)
//   [lm_head V*C]                      (last stage only, untied head)
// So wte starts at offset 0 in the first chunk and in a tied last chunk.
//
// Tied embedding under PP (Megatron's method): the last stage keeps its own copy of wte, initialised
// identically. Before clipping, the runtime all-reduces (sums) the wte gradient between the first and the last
// stage (both then hold the full gradient; both apply the same AdamW step, so the copies stay equal). For the
// global gradient norm the copy must be counted once: Chunk::grad_sum_squares excludes it. With a single stage
// (first == last) there is no copy: the head uses the embedding's wte and both gradients accumulate into it. An
// untied head is a parameter of its own (lm_head), and nothing is synchronised.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cost_model/spec/stage_layout.hpp"
#include "e2e/model/gpt_config.hpp"
#include "e2e/model/tensor_parallel.hpp"

namespace zeropp::e2e {

// clang-format off
enum class ParamKind : std::uint8_t {
  wte, wpe,                                            // embedding (first stage; wte also the last stage's copy)
  ln1_w, ln1_b, qkv_w, qkv_b, attproj_w, attproj_b,    // block, attention half
  ln2_w, ln2_b, fc_w, fc_b, fcproj_w, fcproj_b,        // block, MLP half
  lnf_w, lnf_b,                                        // final layer norm (last stage)
  lm_head,                                             // untied LM head (last stage)
};
// clang-format on
std::string_view param_kind_name(ParamKind);  // "wte", "qkv_w", ...

struct ParamSegment {
  std::string name;  // "wte", "wpe", "h3.qkv_w" (block index is global), "lnf_w"
  ParamKind kind = ParamKind::wte;
  int layer = -1;           // global block index; -1 outside blocks
  std::int64_t offset = 0;  // into the chunk's flat buffer (elements)
  std::int64_t numel = 0;   // elements this rank holds (TP slice for sliced kinds)
  bool decay = false;       // AdamW weight decay applies (2-D weights: wte, wpe, *_w of linears)
  bool tp_sliced = false;   // differs between TP ranks (qkv, attproj_w, fc, fcproj_w)
  bool tied_copy = false;   // the last stage's copy of wte
};

// What a chunk contains and how it runs.
struct ChunkSpec {
  int first_block = 0;
  int num_blocks = 0;
  bool has_embedding = false;  // first stage
  bool has_head = false;       // last stage: final norm, LM head, cross-entropy
  int micro_batch = 1;         // b (sequences per micro-batch)
  // The loss is the mean over every token of the iteration: the last chunk's backward scales the gradient by
  // 1 / (loss_microbatches * b * T). Set loss_microbatches to the global number of micro-batches per iteration
  // (B * z * dp) so that every plan optimises the same objective as the single-rank reference.
  int loss_microbatches = 1;
};

// Stage `stage` of `stages` equal stages (L % stages == 0, else SpecError "parallel.pp").
ChunkSpec chunk_spec_for_stage(const GptConfig&, int stage, int stages, int micro_batch, int loss_microbatches);
// Virtual stage `stage` of a plan's split of the layers (even, Megatron's with the embedding and loss counted, or
// first/last stage layers: cost_model/spec/stage_layout.hpp). The split must cover exactly the model's L layers
// (else SpecError "parallel.pp").
ChunkSpec chunk_spec_for_stage(const GptConfig&, const StageLayout&, int stage, int micro_batch, int loss_microbatches);

class ChunkLayout {
 public:
  ChunkLayout(const GptConfig&, const ChunkSpec&, int tp_size = 1);

  const GptConfig& config() const { return cfg_; }
  const ChunkSpec& spec() const { return spec_; }
  int tp_size() const { return tp_; }
  std::int64_t numel() const { return numel_; }
  const std::vector<ParamSegment>& segments() const { return segments_; }

  const ParamSegment& segment(ParamKind kind, int layer = -1) const;  // throws std::out_of_range
  const ParamSegment* find(const std::string& name) const;            // nullptr when absent
  std::int64_t block_offset(int local_block) const;                   // start of block first_block + local_block
  std::int64_t block_numel() const { return block_numel_; }

  // The wte segment this chunk holds (the embedding's or the head's copy), if any.
  std::optional<ParamSegment> wte() const;
  // The LM head's weight [V, C] on a chunk with the head: lm_head when untied, else wte (its copy, or the
  // embedding's own on a single stage).
  ParamSegment head_weight() const;
  // Intervals [lo, hi) (relative to `lo_range`) inside [lo_range, hi_range) that get weight decay.
  std::vector<std::pair<std::int64_t, std::int64_t>> decay_intervals(std::int64_t lo_range,
                                                                     std::int64_t hi_range) const;

 private:
  GptConfig cfg_;
  ChunkSpec spec_;
  int tp_ = 1;
  std::int64_t numel_ = 0;
  std::int64_t block_numel_ = 0;
  std::int64_t first_block_offset_ = 0;
  std::vector<ParamSegment> segments_;
};

// Deterministic GPT-2 initialisation of a chunk's flat parameters (host memory, layout.numel() floats):
// weights normal(0, 0.02) (the untied head too), residual projections (attproj_w, fcproj_w) normal(0,
// 0.02/sqrt(2L)), biases 0, norm weights 1. Every element's value is a function of (seed, kind, layer, its index in the
// UNSLICED tensor) only (counter-based RNG), so any split into stages, TP slices or ZeRO shards sees the same numbers
// as the single-rank model; the last stage's wte copy equals the first stage's wte.
void init_parameters(const ChunkLayout&, int tp_rank, std::uint64_t seed, float* host_params);

// Copies the TP slice of one unsliced tensor (`full`, as in a tp_size = 1 layout) into `local` for TP rank
// `tp_rank` of `tp_size`, for segment kind `kind`. Lets tests compare TP runs against the reference.
void slice_for_tp(const GptConfig&, ParamKind kind, int tp_size, int tp_rank, const float* full, float* local);

}  // namespace zeropp::e2e
