#include <limits>

#include <gtest/gtest.h>

#include "cost_model/spec/config.hpp"
#include "cost_model/spec/limits.hpp"
#include "tests/spec/expect_spec_error.hpp"

namespace zeropp {
namespace {

using nlohmann::json;

json gpt_like() {
  return {{"name", "m"}, {"layers", 32}, {"hidden", 4096}, {"heads", 32}, {"seq_len", 2048}, {"vocab", 51200}};
}

ModelSpec shape(int hidden, MlpKind mlp) {
  ModelSpec m;
  m.hidden = hidden;
  m.mlp = mlp;
  return m;
}

TEST(ModelSpec, FfnDefaultIsFourHForGelu) { EXPECT_EQ(shape(4096, MlpKind::gelu).ffn(), 16384); }

// Llama's rule, by hand: 7B: 2*16384/3 = 10922 -> ceil(10922/256) = 43 -> 11008; 13B: 2*20480/3 = 13653 -> 54 ->
// 13824. These are the published intermediate sizes (HF config.json).
TEST(ModelSpec, FfnSwigluRuleGivesLlama2Sizes) {
  EXPECT_EQ(shape(4096, MlpKind::swiglu).ffn(), 11008);
  EXPECT_EQ(shape(5120, MlpKind::swiglu).ffn(), 13824);
  // 70B: 2*32768/3 = 21845 -> 86*256 = 22016, not the published 28672 (ffn_dim_multiplier=1.3, multiple_of=4096
  // in Meta's code), which is why configs/models/llama2-70b.json states ffn_hidden.
  EXPECT_EQ(shape(8192, MlpKind::swiglu).ffn(), 22016);
}

TEST(ModelSpec, ExplicitFfnWins) {
  ModelSpec m = shape(8192, MlpKind::swiglu);
  m.ffn_hidden = 28672;
  EXPECT_EQ(m.ffn(), 28672);
  m.mlp = MlpKind::gelu;
  EXPECT_EQ(m.ffn(), 28672);
}

TEST(ModelSpec, ParsesWithDefaults) {
  const ModelSpec m = model_from_json(gpt_like());
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.kv_heads, 0);
  EXPECT_EQ(m.kv_heads_or_heads(), 32);
  EXPECT_EQ(m.head_dim(), 128);
  EXPECT_EQ(m.mlp, MlpKind::gelu);
  EXPECT_TRUE(m.tied_embedding);
  EXPECT_TRUE(m.learned_positions);
}

TEST(ModelSpec, RoundTrips) {
  json j = gpt_like();
  j["kv_heads"] = 8;
  j["ffn_hidden"] = 14336;
  j["mlp"] = "swiglu";
  j["tied_embedding"] = false;
  j["learned_positions"] = false;
  const ModelSpec m = model_from_json(j);
  EXPECT_EQ(model_from_json(to_json(m)), m);
  const ModelSpec d = model_from_json(gpt_like());
  EXPECT_EQ(model_from_json(to_json(d)), d);
  EXPECT_FALSE(to_json(d).contains("kv_heads"));  // defaults stay defaults
}

TEST(ModelSpec, RejectsUnknownKey) {
  json j = gpt_like();
  j["hiden"] = 4096;
  EXPECT_SPEC_ERROR(model_from_json(j), "model.hiden",
                    "model.hiden: unknown key (allowed: name, layers, hidden, heads, kv_heads, ffn_hidden, seq_len, "
                    "vocab, mlp, attention, dropout, tied_embedding, learned_positions, rope_theta, rotary_fraction, "
                    "rope_scaling)");
}

// The rotary keys: defaults stay defaults, stated values round-trip, impossible ones and rotary keys on a model
// with learned positions are refused naming the key.
TEST(ModelSpec, RotaryKeys) {
  json j = gpt_like();
  j["learned_positions"] = false;
  j["rope_theta"] = 500000;
  j["rotary_fraction"] = 0.25;
  j["rope_scaling"] = "llama3";
  const ModelSpec m = model_from_json(j);
  EXPECT_EQ(m.rope_theta_or_default(), 500000);
  EXPECT_EQ(m.rotary_fraction_or_default(), 0.25);
  EXPECT_EQ(model_from_json(to_json(m)), m);
  EXPECT_FALSE(to_json(model_from_json(gpt_like())).contains("rope_theta"));
  json bad = j;
  bad["rope_theta"] = 0.5;
  EXPECT_THROW(model_from_json(bad), SpecError);
  bad = j;
  bad["rotary_fraction"] = 1.5;
  EXPECT_THROW(model_from_json(bad), SpecError);
  bad = j;
  bad["learned_positions"] = true;
  try {
    model_from_json(bad);
    ADD_FAILURE() << "rotary keys accepted with learned positions";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "model.learned_positions");
  }
}

TEST(ModelSpec, RejectsMissingKey) {
  json j = gpt_like();
  j.erase("vocab");
  EXPECT_SPEC_ERROR(model_from_json(j), "model.vocab", "model.vocab is required");
}

TEST(ModelSpec, RejectsWrongTypes) {
  json j = gpt_like();
  j["layers"] = "32";
  EXPECT_SPEC_ERROR(model_from_json(j), "model.layers", "model.layers: expected an integer, got string \"32\"");
  j = gpt_like();
  j["hidden"] = 4096.5;
  EXPECT_SPEC_ERROR(model_from_json(j), "model.hidden", "model.hidden: expected an integer, got number 4096.5");
  j = gpt_like();
  j["tied_embedding"] = 1;
  EXPECT_SPEC_ERROR(model_from_json(j), "model.tied_embedding",
                    "model.tied_embedding: expected true or false, got number 1");
  EXPECT_SPEC_ERROR(model_from_json(json::array()), "model", "model: expected an object, got array []");
  j = gpt_like();
  j["layers"] = 4294967296LL;
  EXPECT_SPEC_ERROR(model_from_json(j), "model.layers", "model.layers=4294967296 does not fit in a 32-bit integer");
}

TEST(ModelSpec, RejectsUnknownMlp) {
  json j = gpt_like();
  j["mlp"] = "relu";
  EXPECT_SPEC_ERROR(model_from_json(j), "model.mlp", "model.mlp=\"relu\" must be one of gelu, swiglu");
}

// The attention kernel defaults from dropout (which follows the MLP kind): GPT-3-era layers unfused, Llama-style
// layers flash; a stated value wins and is written back, the default is not.
TEST(ModelSpec, AttentionDefaultsFromDropoutAndRoundTrips) {
  json j = gpt_like();
  const ModelSpec gpt = model_from_json(j);
  EXPECT_TRUE(gpt.has_dropout());
  EXPECT_EQ(gpt.attention_kind(), AttentionKind::unfused);
  EXPECT_FALSE(to_json(gpt).contains("attention"));
  j["mlp"] = "swiglu";
  const ModelSpec llama = model_from_json(j);
  EXPECT_FALSE(llama.has_dropout());
  EXPECT_EQ(llama.attention_kind(), AttentionKind::flash);
  j = gpt_like();
  j["attention"] = "flash";
  const ModelSpec gpt_flash = model_from_json(j);
  EXPECT_EQ(gpt_flash.attention_kind(), AttentionKind::flash);
  EXPECT_EQ(to_json(gpt_flash)["attention"], "flash");
  EXPECT_EQ(model_from_json(to_json(gpt_flash)), gpt_flash);
}

TEST(ModelSpec, RejectsUnknownAttention) {
  json j = gpt_like();
  j["attention"] = "fused";
  EXPECT_SPEC_ERROR(model_from_json(j), "model.attention", "model.attention=\"fused\" must be one of flash, unfused");
  j["attention"] = 1;
  EXPECT_SPEC_ERROR(model_from_json(j), "model.attention", "model.attention: expected a string, got number 1");
}

// The zoo: the GPT-3 and Megatron-LM models of the 2020-2022 papers (and GPT-2) come out unfused, Llama and Qwen2
// flash.
TEST(ModelSpec, ZooAttentionKinds) {
  for (const std::string& name : zoo_models()) {
    const bool llama = name.rfind("llama", 0) == 0 || name.rfind("qwen", 0) == 0;
    EXPECT_EQ(load_model(name).attention_kind(), llama ? AttentionKind::flash : AttentionKind::unfused) << name;
  }
}

// Dropout as stated, else by the MLP kind; a GELU model without dropout uses FlashAttention by default.
TEST(ModelSpec, DropoutStatedOrByMlp) {
  json j = gpt_like();
  EXPECT_TRUE(model_from_json(j).has_dropout());
  j["dropout"] = false;
  const ModelSpec m = model_from_json(j);
  EXPECT_FALSE(m.has_dropout());
  EXPECT_EQ(m.attention_kind(), AttentionKind::flash);
  EXPECT_EQ(model_from_json(to_json(m)), m);
  EXPECT_FALSE(to_json(model_from_json(gpt_like())).contains("dropout"));  // absent stays absent
  j["dropout"] = "no";
  EXPECT_SPEC_ERROR(model_from_json(j), "model.dropout", "model.dropout: expected true or false, got string \"no\"");
}

TEST(ModelSpec, RejectsImpossibleShapes) {
  json j = gpt_like();
  j["heads"] = 7;
  EXPECT_SPEC_ERROR(model_from_json(j), "model.heads", "model.heads=7 does not divide model.hidden=4096");
  j = gpt_like();
  j["kv_heads"] = 3;
  EXPECT_SPEC_ERROR(model_from_json(j), "model.kv_heads", "model.kv_heads=3 does not divide model.heads=32");
  j = gpt_like();
  j["layers"] = 0;
  EXPECT_SPEC_ERROR(model_from_json(j), "model.layers", "model.layers=0 must be > 0");
  j = gpt_like();
  j["seq_len"] = -2048;
  EXPECT_SPEC_ERROR(model_from_json(j), "model.seq_len", "model.seq_len=-2048 must be > 0");
  j = gpt_like();
  j["ffn_hidden"] = -1;
  EXPECT_SPEC_ERROR(model_from_json(j), "model.ffn_hidden",
                    "model.ffn_hidden=-1 must be >= 0 (0 or absent: the default for model.mlp)");
}

TEST(ModelSpec, FieldPrefixIsUsedInErrors) {
  json j = gpt_like();
  j["heads"] = 5;
  EXPECT_SPEC_ERROR(model_from_json(j, "experiment.model"), "experiment.model.heads",
                    "experiment.model.heads=5 does not divide experiment.model.hidden=4096");
}

// Sizes beyond limits.hpp are refused by name: vocab 2^31-1 once gave negative memory and "feasible", hidden 1e9
// a negative ffn_hidden.
TEST(ModelSpec, SizesAreBounded) {
  json j = gpt_like();
  j["vocab"] = std::numeric_limits<int>::max();
  EXPECT_SPEC_ERROR(model_from_json(j), "model.vocab", "model.vocab=2147483647 exceeds the limit 16777216");
  j = gpt_like();
  j["hidden"] = 1000000000;
  j["heads"] = 1;
  EXPECT_SPEC_ERROR(model_from_json(j), "model.hidden", "model.hidden=1000000000 exceeds the limit 1048576");
  j = gpt_like();
  j["layers"] = std::numeric_limits<int>::max();
  EXPECT_SPEC_ERROR(model_from_json(j), "model.layers", "model.layers=2147483647 exceeds the limit 65536");
  j = gpt_like();
  j["seq_len"] = 1 << 25;
  EXPECT_SPEC_ERROR(model_from_json(j), "model.seq_len", "model.seq_len=33554432 exceeds the limit 16777216");
  j = gpt_like();
  j["ffn_hidden"] = 1 << 23;
  EXPECT_SPEC_ERROR(model_from_json(j), "model.ffn_hidden", "model.ffn_hidden=8388608 exceeds the limit 4194304");
  // At the limits the derived counts stay exact and positive.
  j = gpt_like();
  j["hidden"] = limits::kHidden;
  j["vocab"] = limits::kVocab;
  const ModelSpec m = model_from_json(j);
  EXPECT_EQ(m.ffn(), 4 * limits::kHidden);
}

}  // namespace
}  // namespace zeropp
