// ModelSpec <-> JSON, and the model's own rules. Key names: see the mapping at the top of config.cpp.
#include <fmt/format.h>

#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/json_fields.hpp"
#include "cost_model/spec/limits.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/printable.hpp"

namespace zeropp {

ModelSpec model_from_json(const nlohmann::json& j, const std::string& field) {
  const detail::Fields f(
      j, field,
      {"name", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "seq_len", "vocab", "mlp", "attention", "dropout",
       "tied_embedding", "learned_positions", "rope_theta", "rotary_fraction", "rope_scaling"});
  ModelSpec m;
  m.name = f.string("name", "");
  m.layers = f.integer("layers");
  m.hidden = f.integer("hidden");
  m.heads = f.integer("heads");
  m.kv_heads = f.integer("kv_heads", 0);
  m.ffn_hidden = f.integer("ffn_hidden", 0);
  m.seq_len = f.integer("seq_len");
  m.vocab = f.integer("vocab");
  if (f.has("mlp")) m.mlp = mlp_from_string(f.string("mlp"), f.path_of("mlp"));
  if (f.has("attention")) m.attention = attention_from_string(f.string("attention"), f.path_of("attention"));
  if (f.has("dropout")) m.dropout = f.boolean("dropout");
  m.tied_embedding = f.boolean("tied_embedding", true);
  m.learned_positions = f.boolean("learned_positions", true);
  m.rope_theta = f.number("rope_theta", 0);
  m.rotary_fraction = f.number("rotary_fraction", 0);
  m.rope_scaling = f.string("rope_scaling", "");
  validate(m, field);
  return m;
}

nlohmann::json to_json(const ModelSpec& m) {
  nlohmann::json j = {{"name", m.name},
                      {"layers", m.layers},
                      {"hidden", m.hidden},
                      {"heads", m.heads},
                      {"seq_len", m.seq_len},
                      {"vocab", m.vocab},
                      {"mlp", to_string(m.mlp)},
                      {"tied_embedding", m.tied_embedding},
                      {"learned_positions", m.learned_positions}};
  // 0 (absent) means "the default" for these; leaving them out keeps the default visible as a default.
  if (m.kv_heads != 0) j["kv_heads"] = m.kv_heads;
  if (m.ffn_hidden != 0) j["ffn_hidden"] = m.ffn_hidden;
  if (m.attention) j["attention"] = to_string(*m.attention);
  if (m.dropout) j["dropout"] = *m.dropout;
  if (m.rope_theta != 0) j["rope_theta"] = m.rope_theta;
  if (m.rotary_fraction != 0) j["rotary_fraction"] = m.rotary_fraction;
  if (!m.rope_scaling.empty()) j["rope_scaling"] = m.rope_scaling;
  return j;
}

void validate(const ModelSpec& m, const std::string& field) {
  check_printable(field + ".name", m.name);  // tables print it
  // Positive and within the limits (limits.hpp) that keep parameter and byte counts exact.
  const auto positive = [&](const char* key, int value, long long limit) {
    if (value <= 0) throw SpecError(field + "." + key, fmt::format("{}.{}={} must be > 0", field, key, value));
    check_at_most(field, key, value, limit);
  };
  positive("layers", m.layers, limits::kLayers);
  positive("hidden", m.hidden, limits::kHidden);
  positive("heads", m.heads, limits::kHidden);  // heads divide hidden (below)
  positive("seq_len", m.seq_len, limits::kSeqLen);
  positive("vocab", m.vocab, limits::kVocab);
  if (m.kv_heads < 0)
    throw SpecError(field + ".kv_heads",
                    fmt::format("{}.kv_heads={} must be >= 0 (0 or absent: kv_heads = heads)", field, m.kv_heads));
  if (m.ffn_hidden < 0)
    throw SpecError(
        field + ".ffn_hidden",
        fmt::format("{}.ffn_hidden={} must be >= 0 (0 or absent: the default for model.mlp)", field, m.ffn_hidden));
  check_at_most(field, "ffn_hidden", m.ffn_hidden, limits::kFfnHidden);
  if (m.hidden % m.heads != 0)
    throw SpecError(field + ".heads",
                    fmt::format("{0}.heads={1} does not divide {0}.hidden={2}", field, m.heads, m.hidden));
  if (m.kv_heads > 0 && m.heads % m.kv_heads != 0)
    throw SpecError(field + ".kv_heads",
                    fmt::format("{0}.kv_heads={1} does not divide {0}.heads={2}", field, m.kv_heads, m.heads));
  // Rotary settings: 0 or absent means the default; a stated value must be one a rotary embedding can have.
  if (!(m.rope_theta == 0 || (m.rope_theta > 1 && m.rope_theta <= 1e12)))
    throw SpecError(field + ".rope_theta",
                    fmt::format("{}.rope_theta={} must be in (1, 1e12] (0 or absent: 10000)", field, m.rope_theta));
  if (!(m.rotary_fraction == 0 || (m.rotary_fraction > 0 && m.rotary_fraction <= 1)))
    throw SpecError(field + ".rotary_fraction",
                    fmt::format("{}.rotary_fraction={} must be in (0, 1] (0 or absent: 1)", field, m.rotary_fraction));
  check_printable(field + ".rope_scaling", m.rope_scaling);
  if (m.learned_positions && (m.rope_theta != 0 || m.rotary_fraction != 0 || !m.rope_scaling.empty()))
    throw SpecError(field + ".learned_positions",
                    fmt::format("{0}.rope_theta, {0}.rotary_fraction and {0}.rope_scaling describe rotary positions: "
                                "they need {0}.learned_positions=false",
                                field));
}

}  // namespace zeropp
