// HuggingFace config.json files as models (cost_model/spec/hf_config.hpp): the published configs of
// tests/data/hf, each family's mapping, every refusal, and malformed files.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "cost_model/analytic/params.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/hf_config.hpp"
#include "cost_model/spec/json_reader.hpp"
#include "tests/spec/captured_diagnostics.hpp"
#include "tests/spec/expect_spec_error.hpp"
#include "tests/spec/scratch_dir.hpp"
#include "zeropp/source_dir.hpp"

namespace zeropp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string data_path(const std::string& file) {
  return (fs::path(ZEROPP_SOURCE_DIR) / "tests" / "data" / "hf" / file).string();
}

json data(const std::string& file) { return read_json_file(data_path(file)); }

ModelSpec hf(const json& j, int seq = 0) { return model_from_hf_json(j, "m", "m.json", seq); }

TEST(HfConfig, RecognisedByModelTypeOrArchitectures) {
  EXPECT_TRUE(is_hf_config(data("llama-3-8b.json")));
  EXPECT_TRUE(is_hf_config(json{{"architectures", {"LlamaForCausalLM"}}}));
  EXPECT_TRUE(is_hf_config(json{{"model_type", "gpt2"}}));
  EXPECT_FALSE(is_hf_config(json{{"layers", 2}, {"hidden", 64}}));
  EXPECT_FALSE(is_hf_config(json::array()));
}

// Hand count, Llama-3-8B (h 4096, 32 layers, 8 kv heads of 128, ffn 14336, V 128256, untied):
// per layer 4096*(4096 + 2*1024) + 4096^2 = 41,943,040 (attention) + 3*4096*14336 = 176,160,768 (SwiGLU)
// + 2*4096 (RMSNorms) = 218,112,000; x 32 = 6,979,584,000; + 2 * 128256*4096 (embedding, head) = 1,050,673,152;
// + 4096 (final norm) = 8,030,261,248: Meta's "8B", 8.03 B.
TEST(HfConfig, Llama3_8B) {
  CapturedDiagnostics said;
  const ModelSpec m = load_model(data_path("llama-3-8b.json"));
  EXPECT_EQ(m.name, "llama-3-8b");
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(m.heads, 32);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.ffn_hidden, 14336);
  EXPECT_EQ(m.vocab, 128256);
  EXPECT_EQ(m.seq_len, 8192);  // max_position_embeddings, and a note says so
  EXPECT_EQ(m.mlp, MlpKind::swiglu);
  EXPECT_FALSE(m.tied_embedding);
  EXPECT_FALSE(m.learned_positions);
  EXPECT_FALSE(m.has_dropout());
  EXPECT_EQ(m.attention_kind(), AttentionKind::flash);
  EXPECT_EQ(analytic::total_params(m), 8'030'261'248);
  ASSERT_EQ(said.lines().size(), 1u);
  EXPECT_EQ(said.lines()[0], "note: " + data_path("llama-3-8b.json") +
                                 ": s = max_position_embeddings = 8192 (a HuggingFace config gives the longest "
                                 "sequence, not the training length; --seq S sets s)");
}

// Llama-3-70B: per layer 8192*(8192 + 2048) + 8192^2 = 150,994,944 + 3*8192*28672 = 704,643,072 + 16,384
// = 855,654,400; x 80 = 68,452,352,000; + 2 * 128256*8192 = 2,101,346,304; + 8192 = 70,553,706,496 (70.55 B).
TEST(HfConfig, Llama3_70B) {
  const ModelSpec m = hf(data("llama-3-70b.json"));
  EXPECT_EQ(m.layers, 80);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.ffn_hidden, 28672);
  EXPECT_EQ(analytic::total_params(m), 70'553'706'496);
}

// GPT-2: 12 layers of 12h^2 + 13h = 7,087,872 (h 768) = 85,054,464; embedding 50257*768 = 38,597,376 (tied: the
// head adds nothing); learned positions 1024*768 = 786,432; final LayerNorm 1,536: 124,439,808 (124.44 M).
TEST(HfConfig, Gpt2) {
  CapturedDiagnostics said;
  const ModelSpec m = hf(data("gpt2.json"));
  EXPECT_EQ(m.layers, 12);
  EXPECT_EQ(m.hidden, 768);
  EXPECT_EQ(m.heads, 12);
  EXPECT_EQ(m.kv_heads, 0);
  EXPECT_EQ(m.ffn_hidden, 0);  // n_inner absent: the default 4h
  EXPECT_EQ(m.ffn(), 3072);
  EXPECT_EQ(m.seq_len, 1024);  // n_positions
  EXPECT_EQ(m.vocab, 50257);
  EXPECT_EQ(m.mlp, MlpKind::gelu);
  EXPECT_TRUE(m.tied_embedding);
  EXPECT_TRUE(m.learned_positions);
  EXPECT_FALSE(m.dropout.has_value());  // 0.1 everywhere: the GELU default, dropout on
  EXPECT_TRUE(m.has_dropout());
  EXPECT_EQ(analytic::total_params(m), 124'439'808);
  EXPECT_TRUE(said.lines().empty());  // learned positions fix s: nothing to note
  json j = data("gpt2.json");
  j["n_inner"] = nullptr;  // null: 4h too
  EXPECT_EQ(hf(j).ffn(), 3072);
  j["n_inner"] = 2048;
  EXPECT_EQ(hf(j).ffn(), 2048);
}

// The HuggingFace config of Llama-2-7B is the zoo's hand-written llama2-7b, field for field.
TEST(HfConfig, Llama2_7BEqualsTheZooModel) {
  const ModelSpec zoo = load_model("llama2-7b");
  EXPECT_EQ(model_from_hf_json(data("llama-2-7b.json"), "llama2-7b", "x", 0), zoo);
}

// RoPE scaling changes no cost: the model is Llama-3-8B's in every field the cost model reads. The spec records the
// scaling's type (and the rotary base) for the trainer, which computes with them (configs/README.md).
TEST(HfConfig, Llama31RopeScalingDoesNotChangeTheModel) {
  const json scaled = data("llama-3.1-8b.json");
  ASSERT_TRUE(scaled.at("rope_scaling").is_object());
  const ModelSpec m = hf(scaled, 8192);
  EXPECT_EQ(m.rope_scaling, "llama3");
  EXPECT_EQ(m.rope_theta, 500000);
  json plain = scaled;
  plain["rope_scaling"] = nullptr;
  ModelSpec unscaled = m;
  unscaled.rope_scaling.clear();
  EXPECT_EQ(hf(plain, 8192), unscaled);
  EXPECT_EQ(unscaled, hf(data("llama-3-8b.json")));
  EXPECT_EQ(analytic::total_params(m), analytic::total_params(unscaled));
  EXPECT_EQ(hf(scaled).seq_len, 131072);
}

TEST(HfConfig, RotarySettings) {
  EXPECT_EQ(hf(data("llama-2-7b.json")).rope_theta, 0);  // 10000, the default, is stored as the default
  EXPECT_EQ(hf(data("qwen2-7b-instruct.json")).rope_theta, 1e6);
  json j = data("llama-3-8b.json");
  j["partial_rotary_factor"] = 0.5;
  EXPECT_EQ(hf(j).rotary_fraction, 0.5);
  j["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
  EXPECT_EQ(hf(j).rope_scaling, "linear");
  j.erase("rope_scaling");
  j.erase("rope_theta");
  j["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 250000.0}};  // transformers v5's form
  EXPECT_EQ(hf(j).rope_theta, 250000);
  EXPECT_EQ(hf(j).rope_scaling, "");
  j["rope_theta"] = -1.0;
  j.erase("rope_parameters");
  EXPECT_THROW(hf(j), SpecError);
  json neox = data("pythia-160m.json");
  neox["use_parallel_residual"] = false;
  EXPECT_EQ(hf(neox).rotary_fraction, 0.25);  // rotary_pct
  EXPECT_EQ(hf(neox).rope_theta, 0);          // rotary_emb_base 10000
  // Round trip through our format.
  const ModelSpec m = hf(neox);
  EXPECT_EQ(model_from_json(to_json(m)), m);
}

TEST(HfConfig, SeqChoosesTheTrainingLength) {
  CapturedDiagnostics said;
  const ModelSpec m = load_model(data_path("llama-3-8b.json"), {.seq_len = 4096});
  EXPECT_EQ(m.seq_len, 4096);
  EXPECT_TRUE(said.lines().empty());  // s was chosen: no note
  // Our own format too: --seq replaces seq_len.
  EXPECT_EQ(load_model("gpt3-1.3b", {.seq_len = 1024}).seq_len, 1024);
}

// Mistral-7B-v0.1: a 4096-token sliding window, refused where s exceeds it, accepted within it.
// 7,241,732,096 parameters: Llama-3-8B's layers with a 32000-token vocabulary.
TEST(HfConfig, MistralSlidingWindow) {
  const json j = data("mistral-7b.json");
  EXPECT_SPEC_ERROR(hf(j), "sliding_window",
                    "sliding_window=4096 is shorter than s=32768: sliding-window attention is not modelled (--seq "
                    "4096 or less attends within the window)");
  const ModelSpec m = hf(j, 4096);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(analytic::total_params(m), 7'241'732'096);
  // MistralConfig's own default is a 4096 window: an absent key is that window; null is none.
  json absent = j;
  absent.erase("sliding_window");
  EXPECT_SPEC_ERROR(hf(absent, 8192), "sliding_window",
                    "sliding_window=4096 is shorter than s=8192: sliding-window attention is not modelled (--seq "
                    "4096 or less attends within the window)");
  json none = j;
  none["sliding_window"] = nullptr;
  EXPECT_EQ(hf(none).seq_len, 32768);
}

// Qwen2-7B-Instruct: use_sliding_window false switches the window off whatever its size. Per layer
// 3584*(3584 + 2*512) + 3584^2 = 29,360,128 + 3*3584*18944 = 203,685,888 + 7,168 = 233,053,184; x 28
// = 6,525,489,152; + 2 * 152064*3584 = 1,089,994,752; + 3,584 = 7,615,487,488. Its Q/K/V biases, 28 * 4608
// = 129,024 parameters, are not modelled: the checkpoint has 7,615,616,512.
TEST(HfConfig, Qwen2) {
  const json j = data("qwen2-7b-instruct.json");
  const ModelSpec m = hf(j, 131073);  // beyond the 131072 window: it is off
  EXPECT_EQ(m.kv_heads, 4);
  EXPECT_EQ(m.ffn_hidden, 18944);
  EXPECT_EQ(analytic::total_params(m), 7'615'487'488);
  json windowed = j;
  windowed["use_sliding_window"] = true;
  windowed["sliding_window"] = 4096;
  EXPECT_SPEC_ERROR(hf(windowed), "sliding_window",
                    "sliding_window=4096 is shorter than s=32768: sliding-window attention is not modelled (--seq "
                    "4096 or less attends within the window)");
}

// Phi-3-mini-4k: its config states a 2047-token window, so only s <= 2047 is modelled. 3,821,079,552 parameters.
TEST(HfConfig, Phi3) {
  const json j = data("phi-3-mini-4k-instruct.json");
  EXPECT_SPEC_ERROR(hf(j), "sliding_window",
                    "sliding_window=2047 is shorter than s=4096: sliding-window attention is not modelled (--seq "
                    "2047 or less attends within the window)");
  const ModelSpec m = hf(j, 2047);
  EXPECT_EQ(m.kv_heads, 0);  // 32 of 32: multi-head attention
  EXPECT_FALSE(m.has_dropout());
  EXPECT_EQ(analytic::total_params(m), 3'821'079'552);
  json mixed = j;
  mixed["resid_pdrop"] = 0.1;
  EXPECT_SPEC_ERROR(hf(mixed, 2047), "resid_pdrop",
                    "resid_pdrop=0.1 with attention_dropout=0: dropout in some places and not in others is not "
                    "modelled (all or none)");
  json all = j;
  for (const char* k : {"attention_dropout", "resid_pdrop", "embd_pdrop"}) all[k] = 0.1;
  EXPECT_EQ(hf(all, 2047).dropout, std::optional<bool>(true));
}

// Pythia-160M (GPT-NeoX): its parallel residual is refused; without it the layout maps to a GELU model with
// rotary positions and (dropout 0) no dropout. 12 * 7,087,872 + 2 * 50304*768 + 1,536 = 162,322,944.
TEST(HfConfig, GptNeox) {
  const json j = data("pythia-160m.json");
  EXPECT_SPEC_ERROR(hf(j), "use_parallel_residual",
                    "use_parallel_residual=true: the parallel attention+MLP residual is not modelled (it shares one "
                    "tensor-parallel all-reduce between the branches)");
  json sequential = j;
  sequential["use_parallel_residual"] = false;
  const ModelSpec m = hf(sequential);
  EXPECT_EQ(m.mlp, MlpKind::gelu);
  EXPECT_FALSE(m.learned_positions);
  EXPECT_FALSE(m.tied_embedding);
  EXPECT_EQ(m.dropout, std::optional<bool>(false));
  EXPECT_EQ(m.attention_kind(), AttentionKind::flash);  // no dropout: FlashAttention
  EXPECT_EQ(analytic::total_params(m), 162'322'944);
  EXPECT_EQ(model_from_json(to_json(m)), m);  // the stated dropout survives our format
  json absent = sequential;
  absent.erase("use_parallel_residual");  // GPTNeoXConfig's default is parallel
  EXPECT_THROW(hf(absent), SpecError);
  json no_bias = sequential;
  no_bias["attention_bias"] = false;
  EXPECT_SPEC_ERROR(hf(no_bias), "attention_bias",
                    "attention_bias=false: a GELU model without attention biases is not modelled");
}

TEST(HfConfig, MathChangingKeysAreRefusedByName) {
  const json base = data("llama-3-8b.json");
  const auto refused = [&](const char* key, const json& value, const std::string& message) {
    json j = base;
    j[key] = value;
    EXPECT_SPEC_ERROR(hf(j), key, message);
  };
  const std::string moe = "mixture-of-experts layers are not modelled (dense transformers only)";
  refused("num_local_experts", 8, "num_local_experts=8: " + moe);
  refused("num_experts", 64, "num_experts=64: " + moe);
  refused("num_experts_per_tok", 2, "num_experts_per_tok=2: " + moe);
  refused("moe_intermediate_size", 2560, "moe_intermediate_size=2560: " + moe);
  refused("router_aux_loss_coef", 0.001, "router_aux_loss_coef=0.001: " + moe);
  refused("quantization_config", json{{"bits", 4}},
          "quantization_config={\"bits\":4}: quantized weights are not modelled (16-bit training only)");
  refused("attention_bias", true,
          "attention_bias=true: biases in a SwiGLU model are not modelled (the Llama layout has none)");
  refused("mlp_bias", true, "mlp_bias=true: biases in a SwiGLU model are not modelled (the Llama layout has none)");
  refused("head_dim", 64,
          "head_dim=64 differs from hidden_size/num_attention_heads=128: heads of another width than h/a are not "
          "modelled");
  refused("hidden_act", "gelu",
          "hidden_act=\"gelu\": a gated MLP with this activation is not modelled (silu: SwiGLU only)");
  refused("attention_dropout", 0.1,
          "attention_dropout=0.1: dropout on the attention probabilities alone is not modelled (the model has "
          "dropout after the attention and MLP outputs too, or none)");
  refused("tie_word_embeddings", "no", "tie_word_embeddings: expected true or false, got \"no\"");
  // A key nobody listed may change the math: it is an error, not ignored.
  refused("use_qk_norm", true,
          "use_qk_norm: unknown key for a HuggingFace llama config (not known to leave the model's math "
          "unchanged, so it is not ignored)");
  refused("", 1,
          ": unknown key for a HuggingFace llama config (not known to leave the model's math unchanged, so it is "
          "not ignored)");
  // null means "none" in HuggingFace configs: a null MoE key is a dense model, a matching head_dim is fine.
  json fine = base;
  fine["num_experts"] = nullptr;
  fine["head_dim"] = 128;
  fine["mlp_bias"] = false;
  EXPECT_EQ(hf(fine), hf(base));
}

TEST(HfConfig, GptLayoutRefusals) {
  json j = data("gpt2.json");
  j["activation_function"] = "relu";
  EXPECT_SPEC_ERROR(hf(j), "activation_function",
                    "activation_function=\"relu\": only a GELU MLP is modelled for gpt2 (gelu, gelu_new, gelu_fast, "
                    "gelu_pytorch_tanh)");
  j = data("gpt2.json");
  j["add_cross_attention"] = true;
  EXPECT_SPEC_ERROR(hf(j), "add_cross_attention", "add_cross_attention=true: cross-attention layers are not modelled");
  // The learned position table has n_positions rows: s must equal it.
  EXPECT_SPEC_ERROR(hf(data("gpt2.json"), 2048), "n_positions",
                    "n_positions=1024: the learned position table is modelled as s x h, so s must equal it (got "
                    "--seq 2048)");
  EXPECT_EQ(hf(data("gpt2.json"), 1024).seq_len, 1024);
}

TEST(HfConfig, FamilyDetection) {
  json j = data("llama-3-8b.json");
  j["model_type"] = "mixtral";
  EXPECT_SPEC_ERROR(hf(j), "model_type",
                    "model_type=\"mixtral\" is not a supported HuggingFace family (supported: llama, mistral, qwen2, "
                    "phi3, gpt2, gpt_neox)");
  j = data("llama-3-8b.json");
  j["architectures"] = {"MistralForCausalLM"};
  EXPECT_SPEC_ERROR(hf(j), "architectures[0]",
                    "architectures[0]=\"MistralForCausalLM\" is not the causal LM of model_type=\"llama\" "
                    "(LlamaForCausalLM)");
  j.erase("model_type");  // architectures alone detect the family
  EXPECT_EQ(hf(j, 4096).name, "m");
  j["architectures"] = {"BertModel"};
  EXPECT_SPEC_ERROR(hf(j), "architectures[0]",
                    "architectures[0]=\"BertModel\" is not a supported HuggingFace model (supported: "
                    "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Phi3ForCausalLM, GPT2LMHeadModel, "
                    "GPTNeoXForCausalLM)");
  j["architectures"] = json::array();
  EXPECT_SPEC_ERROR(hf(j), "architectures", "architectures is empty");
}

// Issue 18, point 5: values a wrong type would be refused for, refused by name too.
TEST(HfConfig, NoWindowAndNoFamilyAreRefusedByName) {
  for (const int window : {-1, 0}) {
    for (const bool used : {true, false}) {  // whether or not the window is switched on
      json j = data("qwen2-7b-instruct.json");
      j["sliding_window"] = window;
      j["use_sliding_window"] = used;
      EXPECT_SPEC_ERROR(
          hf(j), "sliding_window",
          "sliding_window=" + std::to_string(window) + " must be a number of tokens >= 1 (or null: no window)");
    }
  }
  json j = data("llama-3-8b.json");
  j["model_type"] = nullptr;
  EXPECT_SPEC_ERROR(hf(j), "model_type",
                    "model_type: expected a string (a HuggingFace family such as \"llama\"), got null");
}

TEST(HfConfig, MissingAndImpossibleShapes) {
  const json base = data("llama-3-8b.json");
  for (const char* key : {"hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size",
                          "max_position_embeddings"}) {
    json j = base;
    j.erase(key);
    EXPECT_SPEC_ERROR(hf(j), key, std::string(key) + " is required (HuggingFace llama config)");
    j[key] = nullptr;  // null is absent
    EXPECT_SPEC_ERROR(hf(j), key, std::string(key) + " is required (HuggingFace llama config)");
  }
  json j = base;
  j["num_attention_heads"] = 7;
  EXPECT_SPEC_ERROR(hf(j), "num_attention_heads", "num_attention_heads=7 does not divide hidden_size=4096");
  j = base;
  j["num_key_value_heads"] = 5;
  EXPECT_SPEC_ERROR(hf(j), "num_key_value_heads", "num_key_value_heads=5 does not divide num_attention_heads=32");
  j = base;
  j["num_hidden_layers"] = 0;
  EXPECT_SPEC_ERROR(hf(j), "num_hidden_layers", "num_hidden_layers=0 must be > 0");
  j = base;
  j["hidden_size"] = 4096.5;
  EXPECT_SPEC_ERROR(hf(j), "hidden_size", "hidden_size: expected an integer, got number 4096.5");
  j = base;
  j["vocab_size"] = 1LL << 40;
  EXPECT_SPEC_ERROR(hf(j), "vocab_size", "vocab_size=1099511627776 exceeds the limit 16777216");
  j = base;
  j.erase("num_key_value_heads");  // HuggingFace's default: multi-head attention
  EXPECT_EQ(hf(j).kv_heads_or_heads(), 32);
  j = data("gpt2.json");
  j.erase("n_embd");
  EXPECT_SPEC_ERROR(hf(j), "n_embd", "n_embd is required (HuggingFace gpt2 config)");
}

// A HuggingFace config is a model wherever one is expected: files name themselves in errors, truncated ones give
// the position, and plans and experiments take them (inline or by path) with --seq.
class HfFiles : public ScratchDir {};

TEST_F(HfFiles, ErrorsNameTheFileAndTheKey) {
  json j = data("llama-3-8b.json");
  j.erase("num_hidden_layers");
  const std::string missing = write("config.json", j.dump(2)).string();
  EXPECT_SPEC_ERROR(load_model(missing), "num_hidden_layers",
                    missing + ": num_hidden_layers is required (HuggingFace llama config)");
  j = data("llama-3-8b.json");
  j["num_local_experts"] = 8;
  const std::string moe = write("moe.json", j.dump(2)).string();
  EXPECT_SPEC_ERROR(
      load_model(moe), "num_local_experts",
      moe + ": num_local_experts=8: mixture-of-experts layers are not modelled (dense transformers only)");
  // Cut in the middle of a key, as a download that stopped.
  const std::string text = data("llama-3-8b.json").dump(2);
  const std::string cut = write("cut.json", text.substr(0, text.find("\"num_hidden_layers\"") + 5)).string();
  try {
    load_model(cut);
    ADD_FAILURE() << "no error";
  } catch (const SpecError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(cut + ":", 0), 0u) << what;
    EXPECT_NE(what.find(": invalid JSON: "), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST_F(HfFiles, PlansAndExperimentsTakeThem) {
  CapturedDiagnostics said;
  const std::string path = data_path("llama-3-8b.json");
  const Experiment e = experiment_from_json(
      {{"model", path}, {"cluster", "dgx-h100"}, {"gpus", 64}, {"global_batch", 512}}, {}, {.seq_len = 2048});
  EXPECT_EQ(e.model.seq_len, 2048);
  EXPECT_EQ(e.model.name, "llama-3-8b");
  const Plan p = plan_from_json(
      {{"model", data("gpt2.json")}, {"cluster", "dgx-h100"}, {"parallel", {{"strategy", "3d"}, {"tp", 4}}}});
  EXPECT_EQ(p.model.hidden, 768);
  EXPECT_EQ(p.model.name, "");  // an inline object has no name of its own
  EXPECT_TRUE(said.lines().empty());
}

}  // namespace
}  // namespace zeropp
