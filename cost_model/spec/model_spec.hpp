#pragma once
// ModelSpec: the transformer being trained. Symbols follow Megatron-LM: L layers, h hidden, a heads,
// s sequence length, V vocabulary. See DESIGN.md section 3.
#include <cstdint>
#include <string>

namespace zeropp {

enum class MlpKind { gelu, swiglu };

struct ModelSpec {
  std::string name;
  int layers = 0;           // L
  int hidden = 0;           // h
  int heads = 0;            // a
  int kv_heads = 0;         // GQA key/value heads; 0 means = heads (multi-head attention)
  int ffn_hidden = 0;       // 0 means the default: 4h for gelu, Llama's rounding of 8h/3 for swiglu
  int seq_len = 0;          // s
  int vocab = 0;            // V
  MlpKind mlp = MlpKind::gelu;
  bool tied_embedding = true;     // LM head shares the token embedding
  bool learned_positions = true;  // + s*h position embedding (GPT); false for rotary (Llama)

  int kv_heads_or_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  int head_dim() const { return hidden / heads; }
  int ffn() const;  // resolved ffn hidden size (applies the defaults above)

  friend bool operator==(const ModelSpec&, const ModelSpec&) = default;
};

}  // namespace zeropp
