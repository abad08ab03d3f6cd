#include "microbench/model_shapes.hpp"

#include <filesystem>
#include <stdexcept>

#include "cost_model/spec/config.hpp"

namespace zeropp::microbench {
namespace {

void require_divides(int tp, int value, const std::string& model, const char* what) {
  if (value % tp != 0) {
    throw std::invalid_argument("--zeropp_gemm_tp=" + std::to_string(tp) + " does not divide " + model + "'s " + what +
                                " (" + std::to_string(value) + ")");
  }
}

}  // namespace

std::string ModelCase::name() const {
  return "model:" + model + "/tp:" + std::to_string(tp) + "/b:" + std::to_string(b) +
         "/tokens:" + std::to_string(tokens());
}

std::vector<ModelCase> model_cases(const Options& options) {
  std::vector<ModelCase> cases;
  for (const std::string& name : options.gemm_models) {
    const ModelSpec spec = load_model(name);
    // A path names the model by its file: "configs/models/llama3-8b.json" -> "llama3-8b".
    const bool is_path = name.find('/') != std::string::npos || name.ends_with(".json");
    const std::string label = is_path ? std::filesystem::path(name).stem().string() : name;
    for (long tp : options.gemm_tp) {
      const int t = static_cast<int>(tp);
      require_divides(t, spec.heads, label, "heads");
      require_divides(t, spec.kv_heads_or_heads(), label, "kv heads");
      require_divides(t, spec.hidden, label, "hidden size");
      require_divides(t, spec.ffn(), label, "ffn hidden size");
      for (long b : options.gemm_batch) cases.push_back({label, spec, t, static_cast<int>(b)});
    }
  }
  return cases;
}

std::vector<GemmShape> model_layer_gemms(const ModelSpec& model, int tp, long tokens) {
  const long h = model.hidden, d = model.head_dim(), ffn = model.ffn();
  const long qkv_out = (static_cast<long>(model.heads) + 2L * model.kv_heads_or_heads()) * d / tp;
  const long up_out = (model.mlp == MlpKind::swiglu ? 2 * ffn : ffn) / tp;
  struct Linear {
    const char* name;
    long in, out;
  };
  const Linear linears[] = {
      {"qkv", h, qkv_out}, {"attn_out", h / tp, h}, {"mlp_up", h, up_out}, {"mlp_down", ffn / tp, h}};
  std::vector<GemmShape> gemms;
  for (const auto& linear : linears) {
    for (Pass pass : {Pass::F, Pass::B, Pass::W})
      gemms.push_back(linear_gemm(linear.name, tokens, linear.in, linear.out, pass));
  }
  return gemms;
}

std::vector<GemmShape> model_head_gemms(const ModelSpec& model, int tp, long tokens) {
  const long h = model.hidden, vocab = model.vocab, multiple = 128L * tp;
  const long padded = (vocab + multiple - 1) / multiple * multiple;
  std::vector<GemmShape> gemms;
  const auto add = [&](const char* name, long out) {
    for (Pass pass : {Pass::F, Pass::B, Pass::W}) gemms.push_back(linear_gemm(name, tokens, h, out, pass));
  };
  if (vocab % tp == 0) add("lm_head", vocab / tp);
  if (padded != vocab) add("lm_head_padded", padded / tp);
  return gemms;
}

std::vector<GemmShape> model_gemms(const ModelSpec& model, int tp, long tokens) {
  std::vector<GemmShape> gemms = model_layer_gemms(model, tp, tokens);
  for (GemmShape& g : model_head_gemms(model, tp, tokens)) gemms.push_back(std::move(g));
  return gemms;
}

AttentionShape model_attention_shape(const ModelSpec& model, int tp, int b) {
  return {b, model.heads / tp, model.kv_heads_or_heads() / tp, model.seq_len, model.head_dim()};
}

nlohmann::json shape_list(const std::vector<ModelCase>& cases) {
  nlohmann::json gemms = nlohmann::json::array(), attention = nlohmann::json::array();
  for (const ModelCase& c : cases) {
    for (const GemmShape& g : model_gemms(c.spec, c.tp, c.tokens())) {
      gemms.push_back({{"case", c.name()},
                       {"model", c.model},
                       {"tp", c.tp},
                       {"b", c.b},
                       {"tokens", c.tokens()},
                       {"gemm", g.name},
                       {"m", g.m},
                       {"n", g.n},
                       {"k", g.k},
                       {"transpose_a", g.transpose_a},
                       {"transpose_b", g.transpose_b},
                       {"flop", g.flop()}});
    }
    const AttentionShape a = model_attention_shape(c.spec, c.tp, c.b);
    attention.push_back({{"case", c.name()},
                         {"model", c.model},
                         {"tp", c.tp},
                         {"b", c.b},
                         {"batch", a.batch},
                         {"heads", a.heads},
                         {"kv_heads", a.kv_heads},
                         {"seq", a.seq},
                         {"head_dim", a.head_dim}});
  }
  return {{"schema", 1}, {"kind", "zeropp-bench-shapes"}, {"gemms", gemms}, {"attention", attention}};
}

}  // namespace zeropp::microbench
