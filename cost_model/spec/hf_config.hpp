#pragma once
// HuggingFace config.json files as models. Wherever a model is expected (a zoo name, a path, an inline object),
// a HuggingFace config works too; it is recognised by its "model_type" or "architectures" key, which our own
// model format never has.
//
// Families (model_type, or the class in architectures): llama (Llama 1 to 3.x), mistral, qwen2, phi3 (the
// Llama layout: SwiGLU MLP, RMSNorm, rotary positions, no biases); gpt2 (GELU MLP, LayerNorm, learned positions,
// biases); gpt_neox (GELU MLP, LayerNorm, rotary positions, biases). The norm, the biases and the position kind
// are what the model derives from the MLP kind and learned_positions (params.hpp), so the family fixes them.
//
// Every key of the file is accounted for: mapped to the model, known to leave the model's math unchanged (token
// ids, dtypes, the rotary base and scaling, norm epsilons, ...; an explicit list), or refused with a one-line
// error naming it: mixture-of-experts keys, a sliding attention window shorter than s, biases or a head width
// the layout does not have, a parallel residual, quantized weights, and any key not known to be harmless.
#include <string>

#include <nlohmann/json.hpp>

#include "cost_model/spec/model_spec.hpp"

namespace zeropp {

// True when `j` is an object with "model_type" or "architectures": a HuggingFace config, not our format.
bool is_hf_config(const nlohmann::json& j);

// Maps a HuggingFace config to a ModelSpec named `name`. seq_len > 0 is the training sequence length s (--seq);
// 0 takes max_position_embeddings (n_positions for GPT-2), which is the longest sequence the model accepts, not
// necessarily the one it is trained at, so a note says so, naming `source` (the file). Throws SpecError(key,
// "<key>...: <rule>") naming the HuggingFace key; callers reading a file prefix the file name.
ModelSpec model_from_hf_json(const nlohmann::json& j, const std::string& name, const std::string& source, int seq_len);

}  // namespace zeropp
