// HuggingFace config.json -> ModelSpec (see hf_config.hpp). Defaults for absent keys are those of the
// transformers configuration classes (LlamaConfig, MistralConfig, Qwen2Config, Phi3Config, GPT2Config,
// GPTNeoXConfig), except for the shape, which must be stated: a class default (LlamaConfig's is Llama-1-7B) would
// silently stand in for a model the file does not describe.
#include "cost_model/spec/hf_config.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "cost_model/spec/config.hpp"
#include "cost_model/spec/diagnostics.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/json_fields.hpp"
#include "cost_model/spec/limits.hpp"

namespace zeropp {
namespace {

using nlohmann::json;

// The three layer layouts the model can express (hf_config.hpp).
enum class Layout { llama, gpt2, neox };

// The keys a layout states the shape with, and its transformers defaults.
struct LayoutKeys {
  std::string_view hidden, layers, heads, kv_heads, ffn, vocab, positions, activation;
  std::string_view default_activation;
  bool default_tied;
  // Keys with a rule of their own (checked below); they count as known.
  std::array<std::string_view, 5> checked;
};

constexpr LayoutKeys kLlamaKeys{"hidden_size",
                                "num_hidden_layers",
                                "num_attention_heads",
                                "num_key_value_heads",
                                "intermediate_size",
                                "vocab_size",
                                "max_position_embeddings",
                                "hidden_act",
                                "silu",
                                false,
                                {"head_dim", "attention_bias", "mlp_bias", "sliding_window", "use_sliding_window"}};
// GPT-2 has no kv-heads key; n_inner null or absent means 4h, the model's own default for a GELU MLP.
constexpr LayoutKeys kGpt2Keys{"n_embd",
                               "n_layer",
                               "n_head",
                               "",
                               "n_inner",
                               "vocab_size",
                               "n_positions",
                               "activation_function",
                               "gelu_new",
                               true,
                               {"add_cross_attention"}};
constexpr LayoutKeys kNeoxKeys{"hidden_size",
                               "num_hidden_layers",
                               "num_attention_heads",
                               "",
                               "intermediate_size",
                               "vocab_size",
                               "max_position_embeddings",
                               "hidden_act",
                               "gelu",
                               false,
                               {"use_parallel_residual", "attention_bias"}};

struct Family {
  std::string_view model_type;
  std::string_view architecture;  // the causal-LM class in "architectures"
  Layout layout;
  // Dropout probabilities the family's config class has, all with the same default.
  std::array<std::string_view, 3> dropouts;
  double default_dropout;
  // Whether the layer has dropout after the attention and MLP outputs too (GPT-2, GPT-NeoX, Phi-3), as the model's
  // dropout does, or on the attention probabilities alone (Llama, Mistral, Qwen2), which the model matches only
  // when it is 0.
  bool residual_dropout;
  // MistralConfig defaults to a 4096-token sliding window when the key is absent; the others to none (0).
  int default_sliding_window;
};

constexpr std::array<Family, 6> kFamilies{{
    {"llama", "LlamaForCausalLM", Layout::llama, {"attention_dropout"}, 0, false, 0},
    {"mistral", "MistralForCausalLM", Layout::llama, {"attention_dropout"}, 0, false, 4096},
    // Qwen2's Q, K and V projections carry biases (no key states them): h + 2 * kv_heads * head_dim parameters per
    // layer, 0.002% of Qwen2-7B's, which the Llama layout leaves out. Nothing else differs.
    {"qwen2", "Qwen2ForCausalLM", Layout::llama, {"attention_dropout"}, 0, false, 0},
    {"phi3", "Phi3ForCausalLM", Layout::llama, {"attention_dropout", "resid_pdrop", "embd_pdrop"}, 0, true, 0},
    {"gpt2", "GPT2LMHeadModel", Layout::gpt2, {"attn_pdrop", "resid_pdrop", "embd_pdrop"}, 0.1, true, 0},
    {"gpt_neox", "GPTNeoXForCausalLM", Layout::neox, {"attention_dropout", "hidden_dropout"}, 0, true, 0},
}};

const LayoutKeys& keys_of(Layout layout) {
  switch (layout) {
    case Layout::gpt2:
      return kGpt2Keys;
    case Layout::neox:
      return kNeoxKeys;
    case Layout::llama:
      break;
  }
  return kLlamaKeys;
}

// Keys that change nothing the model computes (parameters, FLOPs, bytes stored or moved): identity and
// bookkeeping, token ids, dtypes, numerical constants (norm epsilons, the rotary base, attention scaling), the
// rotary scaling and the share of each head that rotates (RoPE costs nothing in the model), and the settings of
// heads or generation that training a causal LM does not use.
constexpr std::array<std::string_view, 39> kHarmless{
    "_name_or_path",
    "architectures",
    "model_type",
    "transformers_version",
    "torch_dtype",
    "dtype",
    "auto_map",
    "tokenizer_class",
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    "initializer_range",
    "use_cache",
    "output_attentions",
    "output_hidden_states",
    "return_dict",
    "rms_norm_eps",
    "layer_norm_eps",
    "layer_norm_epsilon",
    "rope_theta",
    "rope_scaling",
    "rope_parameters",
    "rotary_pct",
    "rotary_emb_base",
    "partial_rotary_factor",
    "original_max_position_embeddings",
    "max_sequence_length",
    "pretraining_tp",
    "max_window_layers",
    "n_ctx",
    "scale_attn_weights",
    "scale_attn_by_inverse_layer_idx",
    "reorder_and_upcast_attn",
    "summary_type",
    "summary_use_proj",
    "summary_activation",
    "summary_proj_to_labels",
    "summary_first_dropout",
    "task_specific_params",
};

// Keys of features the model does not have, refused by name when present and not null.
struct Refused {
  std::string_view key;  // a key, or a prefix ending in '_'
  std::string_view why;
};
constexpr std::string_view kMoe = "mixture-of-experts layers are not modelled (dense transformers only)";
constexpr std::array<Refused, 12> kRefused{{
    {"num_local_experts", kMoe},
    {"num_experts", kMoe},
    {"num_experts_per_tok", kMoe},
    {"n_routed_experts", kMoe},
    {"n_shared_experts", kMoe},
    {"shared_expert_intermediate_size", kMoe},
    {"decoder_sparse_step", kMoe},
    {"output_router_logits", kMoe},
    {"norm_topk_prob", kMoe},
    {"moe_", kMoe},
    {"router_", kMoe},
    {"quantization_config", "quantized weights are not modelled (16-bit training only)"},
}};

// 1 / 2 / 4096 as JSON writes them: "1", "2", "4096"; strings quoted.
std::string shown(const json& v) { return detail::show(v); }

bool present(const json& j, std::string_view key) {
  const auto it = j.find(key);
  return it != j.end() && !it->is_null();
}

const Family& family_of(const json& j) {
  std::string supported;
  for (const Family& f : kFamilies) supported += (supported.empty() ? "" : ", ") + std::string(f.model_type);
  const Family* by_type = nullptr;
  // Null is no family name: refused like any other non-string (architectures alone names the family when
  // model_type is absent, not when it is null).
  if (j.contains("model_type") && j.at("model_type").is_null())
    throw SpecError("model_type", "model_type: expected a string (a HuggingFace family such as \"llama\"), got null");
  if (present(j, "model_type")) {
    const std::string type = detail::as_string(j.at("model_type"), "model_type");
    for (const Family& f : kFamilies)
      if (f.model_type == type) by_type = &f;
    if (by_type == nullptr)
      throw SpecError("model_type", fmt::format("model_type=\"{}\" is not a supported HuggingFace family "
                                                "(supported: {})",
                                                type, supported));
  }
  if (!present(j, "architectures")) {
    if (by_type == nullptr) throw SpecError("model_type", "model_type is required (or architectures)");
    return *by_type;
  }
  const json& list = j.at("architectures");
  detail::expect_array(list, "architectures");
  if (list.empty()) throw SpecError("architectures", "architectures is empty");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = fmt::format("architectures[{}]", i);
    const std::string name = detail::as_string(list[i], path);
    const Family* by_class = nullptr;
    for (const Family& f : kFamilies)
      if (f.architecture == name) by_class = &f;
    if (by_type != nullptr && by_class != by_type)
      throw SpecError(path, fmt::format("{}=\"{}\" is not the causal LM of model_type=\"{}\" ({})", path, name,
                                        by_type->model_type, by_type->architecture));
    if (by_class == nullptr) {
      std::string classes;
      for (const Family& f : kFamilies) classes += (classes.empty() ? "" : ", ") + std::string(f.architecture);
      throw SpecError(
          path, fmt::format("{}=\"{}\" is not a supported HuggingFace model (supported: {})", path, name, classes));
    }
    by_type = by_class;
  }
  return *by_type;
}

// Every key is mapped, harmless or refused; anything else is an error, since it may change the math.
void check_keys(const json& j, const Family& family) {
  const LayoutKeys& k = keys_of(family.layout);
  const std::array<std::string_view, 9> mapped{k.hidden, k.layers,    k.heads,      k.kv_heads,           k.ffn,
                                               k.vocab,  k.positions, k.activation, "tie_word_embeddings"};
  // Unused slots of the fixed-size lists are empty and match nothing.
  const auto listed = [](const auto& list, std::string_view key) {
    return !key.empty() && std::find(list.begin(), list.end(), key) != list.end();
  };
  for (const auto& item : j.items()) {
    const std::string& key = item.key();
    const auto refused = std::find_if(kRefused.begin(), kRefused.end(), [&](const Refused& r) {
      return r.key.ends_with('_') ? key.starts_with(r.key) : key == r.key;
    });
    // Null states the feature's absence (HuggingFace writes "none" as null): a dense model's "num_experts": null.
    if (refused != kRefused.end()) {
      if (item.value().is_null()) continue;
      throw SpecError(key, fmt::format("{}={}: {}", key, shown(item.value()), refused->why));
    }
    if (listed(mapped, key) || listed(k.checked, key) || listed(family.dropouts, key) || listed(kHarmless, key))
      continue;
    throw SpecError(key, fmt::format("{}: unknown key for a HuggingFace {} config (not known to leave the model's "
                                     "math unchanged, so it is not ignored)",
                                     key, family.model_type));
  }
}

int required_int(const json& j, std::string_view key, const Family& family, long long limit) {
  if (!present(j, key))
    throw SpecError(std::string(key), fmt::format("{} is required (HuggingFace {} config)", key, family.model_type));
  const long long v = detail::as_integer(j.at(key), std::string(key));
  if (v <= 0) throw SpecError(std::string(key), fmt::format("{}={} must be > 0", key, v));
  if (v > limit) throw SpecError(std::string(key), fmt::format("{}={} exceeds the limit {}", key, v, limit));
  return static_cast<int>(v);
}

bool boolean(const json& j, std::string_view key, bool fallback) {
  if (!present(j, key)) return fallback;
  if (!j.at(key).is_boolean())
    throw SpecError(std::string(key), fmt::format("{}: expected true or false, got {}", key, shown(j.at(key))));
  return j.at(key).get<bool>();
}

// A key whose only modelled value is `modelled`: any other is refused with `why`.
void require_boolean(const json& j, std::string_view key, bool fallback, bool modelled, std::string_view why) {
  if (boolean(j, key, fallback) != modelled)
    throw SpecError(std::string(key), fmt::format("{}={}: {}", key, modelled ? "false" : "true", why));
}

MlpKind mlp_of(const json& j, const Family& family) {
  const LayoutKeys& k = keys_of(family.layout);
  const std::string act = present(j, k.activation) ? detail::as_string(j.at(k.activation), std::string(k.activation))
                                                   : std::string(k.default_activation);
  if (family.layout == Layout::llama) {
    // The Llama layout's MLP is gated: silu makes it SwiGLU, the model's swiglu.
    if (act == "silu" || act == "swish") return MlpKind::swiglu;
    throw SpecError(std::string(k.activation),
                    fmt::format("{}=\"{}\": a gated MLP with this activation is not modelled (silu: SwiGLU only)",
                                k.activation, act));
  }
  // GPT-2 and GPT-NeoX: an ungated MLP; the GELU variants differ only in the elementwise formula.
  for (std::string_view gelu : {"gelu", "gelu_new", "gelu_fast", "gelu_pytorch_tanh"})
    if (act == gelu) return MlpKind::gelu;
  throw SpecError(std::string(k.activation),
                  fmt::format("{}=\"{}\": only a GELU MLP is modelled for {} (gelu, gelu_new, gelu_fast, "
                              "gelu_pytorch_tanh)",
                              k.activation, act, family.model_type));
}

// The model has dropout everywhere a GPT layer has it (attention probabilities, after the attention and MLP
// outputs, after the embedding) or nowhere; the family's probabilities must agree on which.
bool dropout_of(const json& j, const Family& family) {
  std::optional<bool> on;
  std::string first;
  for (std::string_view key : family.dropouts) {
    if (key.empty()) continue;
    const double p = present(j, key) ? detail::as_number(j.at(key), std::string(key)) : family.default_dropout;
    if (!(p >= 0 && p < 1)) throw SpecError(std::string(key), fmt::format("{}={} must be in [0, 1)", key, p));
    const std::string here = fmt::format("{}={}", key, p);
    if (on && *on != (p > 0))
      throw SpecError(std::string(key), fmt::format("{} with {}: dropout in some places and not in others is not "
                                                    "modelled (all or none)",
                                                    here, first));
    if (p > 0 && !family.residual_dropout)
      throw SpecError(std::string(key), fmt::format("{}: dropout on the attention probabilities alone is not modelled "
                                                    "(the model has dropout after the attention and MLP outputs "
                                                    "too, or none)",
                                                    here));
    on = p > 0;
    if (first.empty()) first = here;
  }
  return on.value_or(false);
}

// The Llama layout's own rules: no biases, heads of width h/a, attention over the whole sequence.
void check_llama_layout(const json& j, const Family& family, const ModelSpec& m) {
  constexpr std::string_view kNoBias = "biases in a SwiGLU model are not modelled (the Llama layout has none)";
  require_boolean(j, "attention_bias", false, false, kNoBias);
  require_boolean(j, "mlp_bias", false, false, kNoBias);
  if (present(j, "head_dim")) {
    const long long d = detail::as_integer(j.at("head_dim"), "head_dim");
    if (d != m.head_dim())
      throw SpecError("head_dim", fmt::format("head_dim={} differs from hidden_size/num_attention_heads={}: heads of "
                                              "another width than h/a are not modelled",
                                              d, m.head_dim()));
  }
  // A window is a number of tokens >= 1, or null for none; -1 or 0 are no HuggingFace convention, so they are
  // refused whether or not the window is used (as a wrong type is).
  long long window = family.default_sliding_window;
  if (j.contains("sliding_window") && !j.at("sliding_window").is_null()) {
    window = detail::as_integer(j.at("sliding_window"), "sliding_window");
    if (window < 1)
      throw SpecError("sliding_window", fmt::format("sliding_window={} must be a number of tokens >= 1 (or null: no "
                                                    "window)",
                                                    window));
  } else if (j.contains("sliding_window")) {
    window = 0;
  }
  // Qwen2 keeps a window size with the window switched off (use_sliding_window false).
  if (!boolean(j, "use_sliding_window", true)) return;
  if (window > 0 && window < m.seq_len)
    throw SpecError("sliding_window",
                    fmt::format("sliding_window={} is shorter than s={}: sliding-window attention is not modelled "
                                "(--seq {} or less attends within the window)",
                                window, m.seq_len, window));
}

// The rotary embedding's base, rotating share and frequency scaling (costless in the model; the trainer computes
// with them). Llama-layout configs state rope_theta, partial_rotary_factor and rope_scaling ({"rope_type" or
// "type": ...}, null for none), newer transformers versions all three inside rope_parameters (rope_type "default"
// meaning none); GPT-NeoX states rotary_emb_base and rotary_pct. Values equal to the defaults (10000, all
// dimensions, no scaling) are stored as the defaults, so a config that matches a zoo model equals it.
void rotary_of(const json& j, const Family& family, ModelSpec& m) {
  if (family.layout == Layout::gpt2) return;
  const bool neox = family.layout == Layout::neox;
  const json* params = present(j, "rope_parameters") ? &j.at("rope_parameters") : nullptr;
  if (params != nullptr) detail::expect_object(*params, "rope_parameters");
  const auto number = [&](std::string_view key, double fallback) {
    if (params != nullptr && present(*params, key))
      return detail::as_number(params->at(key), "rope_parameters." + std::string(key));
    return present(j, key) ? detail::as_number(j.at(key), std::string(key)) : fallback;
  };
  const double theta = number(neox ? "rotary_emb_base" : "rope_theta", 10000);
  const double fraction = number(neox ? "rotary_pct" : "partial_rotary_factor", 1);
  if (!(theta > 1 && theta <= 1e12))
    throw SpecError(neox ? "rotary_emb_base" : "rope_theta", fmt::format("rotary base {} must be in (1, 1e12]", theta));
  if (!(fraction > 0 && fraction <= 1))
    throw SpecError(neox ? "rotary_pct" : "partial_rotary_factor",
                    fmt::format("rotary share {} must be in (0, 1]", fraction));
  if (theta != 10000) m.rope_theta = theta;
  if (fraction != 1) m.rotary_fraction = fraction;
  const json* scaling = present(j, "rope_scaling") ? &j.at("rope_scaling") : params;
  if (scaling == nullptr) return;
  const std::string path = scaling == params ? "rope_parameters" : "rope_scaling";
  detail::expect_object(*scaling, path);
  for (std::string_view key : {"rope_type", "type"}) {
    if (!present(*scaling, key)) continue;
    const std::string type = detail::as_string(scaling->at(key), path + "." + std::string(key));
    if (type != "default") m.rope_scaling = type;
    return;
  }
  if (scaling != params) m.rope_scaling = "unnamed";  // a scaling object without a type still scales
}

}  // namespace

bool is_hf_config(const json& j) { return j.is_object() && (j.contains("model_type") || j.contains("architectures")); }

ModelSpec model_from_hf_json(const json& j, const std::string& name, const std::string& source, int seq_len) {
  detail::expect_object(j, "model");
  const Family& family = family_of(j);
  check_keys(j, family);
  const LayoutKeys& k = keys_of(family.layout);
  ModelSpec m;
  m.name = name;
  m.layers = required_int(j, k.layers, family, limits::kLayers);
  m.hidden = required_int(j, k.hidden, family, limits::kHidden);
  m.heads = required_int(j, k.heads, family, limits::kHidden);
  if (m.hidden % m.heads != 0)
    throw SpecError(std::string(k.heads),
                    fmt::format("{}={} does not divide {}={}", k.heads, m.heads, k.hidden, m.hidden));
  // Multi-head attention when absent (HuggingFace's default); stored as 0, the model's "= heads".
  if (!k.kv_heads.empty() && present(j, k.kv_heads)) {
    const int kv = required_int(j, k.kv_heads, family, limits::kHidden);
    if (m.heads % kv != 0)
      throw SpecError(std::string(k.kv_heads),
                      fmt::format("{}={} does not divide {}={}", k.kv_heads, kv, k.heads, m.heads));
    m.kv_heads = kv == m.heads ? 0 : kv;
  }
  if (family.layout != Layout::gpt2 || present(j, k.ffn))
    m.ffn_hidden = required_int(j, k.ffn, family, limits::kFfnHidden);
  m.vocab = required_int(j, k.vocab, family, limits::kVocab);
  const int max_positions = required_int(j, k.positions, family, limits::kSeqLen);
  m.mlp = mlp_of(j, family);
  m.tied_embedding = boolean(j, "tie_word_embeddings", k.default_tied);
  m.learned_positions = family.layout == Layout::gpt2;
  // Stated only where it differs from the MLP kind's default, so a config that matches a zoo model equals it.
  if (const bool dropout = dropout_of(j, family); dropout != m.has_dropout()) m.dropout = dropout;
  m.seq_len = seq_len > 0 ? seq_len : max_positions;
  // A learned position table has max_positions rows whatever s is, while the model sizes it s x h.
  if (m.learned_positions && m.seq_len != max_positions)
    throw SpecError(std::string(k.positions),
                    fmt::format("{}={}: the learned position table is modelled as s x h, so s must equal it (got "
                                "--seq {})",
                                k.positions, max_positions, m.seq_len));
  rotary_of(j, family, m);
  switch (family.layout) {
    case Layout::llama:
      check_llama_layout(j, family, m);
      break;
    case Layout::gpt2:
      require_boolean(j, "add_cross_attention", false, false, "cross-attention layers are not modelled");
      break;
    case Layout::neox:
      // GPT-NeoX's parallel residual, x + attn(ln1(x)) + mlp(ln2(x)), adds the two branches before one
      // tensor-parallel all-reduce where the model has two per layer, and stores one block input fewer: it changes
      // the communication the model computes, so it is refused rather than approximated.
      require_boolean(j, "use_parallel_residual", true, false,
                      "the parallel attention+MLP residual is not modelled (it shares one tensor-parallel "
                      "all-reduce between the branches)");
      require_boolean(j, "attention_bias", true, true, "a GELU model without attention biases is not modelled");
      break;
  }
  validate(m, "model");
  // Learned positions fix s (above); rotary ones leave it open.
  if (seq_len <= 0 && !m.learned_positions)
    note(
        fmt::format("{}: s = {} = {} (a HuggingFace config gives the longest sequence, not the training length; "
                    "--seq S sets s)",
                    source, k.positions, m.seq_len));
  return m;
}

}  // namespace zeropp
