#pragma once
// ModelSpec: the transformer being trained. Symbols follow Megatron-LM: L layers, h hidden, a heads,
// s sequence length, V vocabulary. See DESIGN.md section 3.
#include <cstdint>
#include <optional>
#include <string>

namespace zeropp {

enum class MlpKind { gelu, swiglu };

// How the attention core (softmax(QK^T)V) runs. unfused: Megatron-LM 2021-2022, the s x s scores and softmax
// written to memory and stored for backward (Korthikanti et al. 2022). flash: FlashAttention (Dao et al. 2022,
// 2023; Shah et al. 2024), one fused kernel that stores no s x s tensor and recomputes the scores in its backward.
enum class AttentionKind { flash, unfused };

struct ModelSpec {
  std::string name;
  int layers = 0;      // L
  int hidden = 0;      // h
  int heads = 0;       // a
  int kv_heads = 0;    // GQA key/value heads; 0 means = heads (multi-head attention)
  int ffn_hidden = 0;  // 0 means the default: 4h for gelu, Llama's rounding of 8h/3 for swiglu
  int seq_len = 0;     // s
  int vocab = 0;       // V
  MlpKind mlp = MlpKind::gelu;
  bool tied_embedding = true;              // LM head shares the token embedding
  bool learned_positions = true;           // + s*h position embedding (GPT); false for rotary (Llama)
  std::optional<AttentionKind> attention;  // absent: the default below (attention_kind)
  std::optional<bool> dropout;             // absent: the default below (has_dropout)
  // Rotary positions (learned_positions false; Su et al. 2021, "RoFormer"). They cost nothing in the model (no
  // parameters, FLOPs or bytes it counts), but the trainer computes with them (e2e/model/gpt_config.hpp).
  double rope_theta = 0;       // the rotary base; 0: 10000 (RoFormer's and HuggingFace's default)
  double rotary_fraction = 0;  // the share of each head's dimensions that rotates; 0: 1 (all of them)
  std::string rope_scaling;    // a frequency scaling, HuggingFace's rope_scaling type ("llama3", ...); empty: none

  int kv_heads_or_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  double rope_theta_or_default() const { return rope_theta > 0 ? rope_theta : 10000.0; }
  double rotary_fraction_or_default() const { return rotary_fraction > 0 ? rotary_fraction : 1.0; }
  int head_dim() const { return hidden / heads; }
  // Resolved ffn hidden size (applies the defaults above). Inline, as attention_kind: the closed form asks them
  // in every formula of a plan evaluation. An explicit ffn_hidden always wins. Otherwise GPT's 4h for a GELU MLP,
  // and for SwiGLU the rule of Meta's reference code (llama/model.py, FeedForward): 2/3 of 4h, so the three SwiGLU
  // matrices hold as many parameters as two 4h ones, truncated to an integer and rounded up to a multiple of 256
  // (Llama-2-7B: 4096 -> 11008). Llama-2-70B also scales by ffn_dim_multiplier=1.3 and rounds to 4096 (-> 28672),
  // so its config states it.
  int ffn() const {
    if (ffn_hidden > 0) return ffn_hidden;
    const long long four_h = 4LL * hidden;
    if (mlp == MlpKind::gelu) return static_cast<int>(four_h);
    constexpr long long kMultipleOf = 256;
    const long long two_thirds = 2 * four_h / 3;
    return static_cast<int>((two_thirds + kMultipleOf - 1) / kMultipleOf * kMultipleOf);
  }
  // Dropout (attention probabilities, after the attention and MLP outputs, after the embedding): as stated, else
  // it follows the MLP kind as the biases do: GPT (gelu) has it, Llama (swiglu) has none. Stated for a GELU model
  // trained without dropout (Pythia / GPT-NeoX: HuggingFace configs with hidden_dropout 0).
  bool has_dropout() const { return dropout ? *dropout : mlp == MlpKind::gelu; }
  // The attention kernel: as stated, else unfused for a model with dropout (the GPT-3-era layers Megatron ran
  // unfused) and flash for one without (Llama-style layers, trained with FlashAttention).
  AttentionKind attention_kind() const {
    if (attention) return *attention;
    return has_dropout() ? AttentionKind::unfused : AttentionKind::flash;
  }

  friend bool operator==(const ModelSpec&, const ModelSpec&) = default;
};

}  // namespace zeropp
