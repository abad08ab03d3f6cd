#include "e2e/model/layout.hpp"

#include <stdexcept>
#include <string>

#include "cost_model/spec/error.hpp"

namespace zeropp::e2e {

std::string_view param_kind_name(ParamKind k) {
  switch (k) {
    case ParamKind::wte:
      return "wte";
    case ParamKind::wpe:
      return "wpe";
    case ParamKind::ln1_w:
      return "ln1_w";
    case ParamKind::ln1_b:
      return "ln1_b";
    case ParamKind::qkv_w:
      return "qkv_w";
    case ParamKind::qkv_b:
      return "qkv_b";
    case ParamKind::attproj_w:
      return "attproj_w";
    case ParamKind::attproj_b:
      return "attproj_b";
    case ParamKind::ln2_w:
      return "ln2_w";
    case ParamKind::ln2_b:
      return "ln2_b";
    case ParamKind::fc_w:
      return "fc_w";
    case ParamKind::fc_b:
      return "fc_b";
    case ParamKind::fcproj_w:
      return "fcproj_w";
    case ParamKind::fcproj_b:
      return "fcproj_b";
    case ParamKind::lnf_w:
      return "lnf_w";
    case ParamKind::lnf_b:
      return "lnf_b";
    case ParamKind::lm_head:
      return "lm_head";
  }
  return "?";
}

ChunkSpec chunk_spec_for_stage(const GptConfig& g, int stage, int stages, int micro_batch, int loss_microbatches) {
  if (stages <= 0 || g.L % stages != 0) {
    throw SpecError("parallel.pp", "pp*v=" + std::to_string(stages) + " does not divide layers=" + std::to_string(g.L));
  }
  return chunk_spec_for_stage(g, even_layout(g.L, 1, stages), stage, micro_batch, loss_microbatches);
}

ChunkSpec chunk_spec_for_stage(const GptConfig& g, const StageLayout& layout, int stage, int micro_batch,
                               int loss_microbatches) {
  if (layout.total_layers() != g.L) {
    throw SpecError("parallel.pp", "the stage layout holds " + std::to_string(layout.total_layers()) +
                                       " layers, the model " + std::to_string(g.L));
  }
  const int stages = layout.stages();
  if (stage < 0 || stage >= stages) throw std::out_of_range("chunk_spec_for_stage: stage outside [0, stages)");
  ChunkSpec s;
  s.num_blocks = layout.stage_layers(stage);
  s.first_block = layout.first_layer(stage);
  s.has_embedding = stage == 0;
  s.has_head = stage == stages - 1;
  s.micro_batch = micro_batch;
  s.loss_microbatches = loss_microbatches;
  return s;
}

// Segment sizes of one block for TP size t (see layout.hpp for the order).
namespace {
struct BlockPart {
  ParamKind kind;
  std::int64_t numel;
  bool decay;
  bool sliced;
};
std::vector<BlockPart> block_parts(const GptConfig& g, int t) {
  const std::int64_t C = g.C, Cl = g.C / t, Ql = g.qkv_width() / t, Fl = g.F / t, Ul = g.up_width() / t;
  const bool bias = g.biases(), shift = !g.rmsnorm();
  std::vector<BlockPart> parts;
  auto add = [&](ParamKind kind, std::int64_t numel, bool decay, bool sliced, bool present = true) {
    if (present) parts.push_back({kind, numel, decay, sliced});
  };
  add(ParamKind::ln1_w, C, false, false);
  add(ParamKind::ln1_b, C, false, false, shift);
  add(ParamKind::qkv_w, Ql * C, true, true);
  add(ParamKind::qkv_b, Ql, false, true, bias);
  add(ParamKind::attproj_w, C * Cl, true, true);
  add(ParamKind::attproj_b, C, false, false, bias);
  add(ParamKind::ln2_w, C, false, false);
  add(ParamKind::ln2_b, C, false, false, shift);
  add(ParamKind::fc_w, Ul * C, true, true);
  add(ParamKind::fc_b, Ul, false, true, bias);
  add(ParamKind::fcproj_w, C * Fl, true, true);
  add(ParamKind::fcproj_b, C, false, false, bias);
  return parts;
}
}  // namespace

ChunkLayout::ChunkLayout(const GptConfig& g, const ChunkSpec& s, int tp_size) : cfg_(g), spec_(s), tp_(tp_size) {
  validate(g);
  // Megatron's split: each rank holds heads/tp query heads and kv_heads/tp key/value heads (no KV replication).
  if (tp_size < 1 || g.NH % tp_size != 0 || g.kv_heads() % tp_size != 0 || g.F % tp_size != 0) {
    throw SpecError("parallel.tp", "tp=" + std::to_string(tp_size) + " must divide heads=" + std::to_string(g.NH) +
                                       ", kv_heads=" + std::to_string(g.kv_heads()) +
                                       " and ffn_hidden=" + std::to_string(g.F) +
                                       " (the trainer splits KV heads as Megatron does and does not replicate them)");
  }
  if (s.num_blocks < 0 || s.first_block < 0 || s.first_block + s.num_blocks > g.L) {
    throw std::out_of_range("ChunkLayout: blocks outside [0, L)");
  }
  auto push = [&](std::string name, ParamKind kind, int layer, std::int64_t n, bool decay, bool sliced, bool copy) {
    segments_.push_back({std::move(name), kind, layer, numel_, n, decay, sliced, copy});
    numel_ += n;
  };
  const std::int64_t C = g.C;
  if (s.has_embedding) {
    push("wte", ParamKind::wte, -1, std::int64_t{g.V} * C, true, false, false);
    if (!g.rope) push("wpe", ParamKind::wpe, -1, std::int64_t{g.T} * C, true, false, false);
  } else if (s.has_head && g.tied) {
    push("wte", ParamKind::wte, -1, std::int64_t{g.V} * C, true, false, true);
  }
  first_block_offset_ = numel_;
  const auto parts = block_parts(g, tp_size);
  for (const auto& p : parts) block_numel_ += p.numel;
  for (int i = 0; i < s.num_blocks; ++i) {
    const int layer = s.first_block + i;
    for (const auto& p : parts) {
      push("h" + std::to_string(layer) + "." + std::string(param_kind_name(p.kind)), p.kind, layer, p.numel, p.decay,
           p.sliced, false);
    }
  }
  if (s.has_head) {
    push("lnf_w", ParamKind::lnf_w, -1, C, false, false, false);
    if (!g.rmsnorm()) push("lnf_b", ParamKind::lnf_b, -1, C, false, false, false);
    if (!g.tied) push("lm_head", ParamKind::lm_head, -1, std::int64_t{g.V} * C, true, false, false);
  }
}

const ParamSegment& ChunkLayout::segment(ParamKind kind, int layer) const {
  for (const auto& s : segments_) {
    if (s.kind == kind && s.layer == layer) return s;
  }
  throw std::out_of_range("ChunkLayout: no segment " + std::string(param_kind_name(kind)) + " of layer " +
                          std::to_string(layer));
}

const ParamSegment* ChunkLayout::find(const std::string& name) const {
  for (const auto& s : segments_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::int64_t ChunkLayout::block_offset(int local_block) const {
  if (local_block < 0 || local_block >= spec_.num_blocks) throw std::out_of_range("ChunkLayout::block_offset");
  return first_block_offset_ + local_block * block_numel_;
}

std::optional<ParamSegment> ChunkLayout::wte() const {
  if (!segments_.empty() && segments_.front().kind == ParamKind::wte) return segments_.front();
  return std::nullopt;
}

ParamSegment ChunkLayout::head_weight() const {
  if (!spec_.has_head) throw std::logic_error("ChunkLayout::head_weight on a chunk without the head");
  if (!cfg_.tied) return segment(ParamKind::lm_head);
  return *wte();
}

std::vector<std::pair<std::int64_t, std::int64_t>> ChunkLayout::decay_intervals(std::int64_t lo,
                                                                                std::int64_t hi) const {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (const auto& s : segments_) {
    if (!s.decay) continue;
    const std::int64_t a = std::max(lo, s.offset), b = std::min(hi, s.offset + s.numel);
    if (a >= b) continue;
    if (!out.empty() && out.back().second == a - lo) {
      out.back().second = b - lo;  // merge adjacent decayed segments
    } else {
      out.emplace_back(a - lo, b - lo);
    }
  }
  return out;
}

}  // namespace zeropp::e2e
