#include "microbench/gemm_shapes.hpp"

namespace zeropp::microbench {

GemmShape linear_gemm(const std::string& layer, long tokens, long in, long out, Pass pass) {
  switch (pass) {
    case Pass::F:
      return {layer + "_F", tokens, out, in, false, true};
    case Pass::B:
      return {layer + "_B", tokens, in, out, false, false};
    case Pass::W:
      return {layer + "_W", out, in, tokens, true, false};
  }
  return {};
}

std::vector<GemmShape> transformer_layer_gemms(long hidden, long tokens) {
  const long h = hidden;
  struct Linear {
    const char* name;
    long in, out;
  };
  const Linear linears[] = {{"qkv", h, 3 * h}, {"attn_out", h, h}, {"mlp_up", h, 4 * h}, {"mlp_down", 4 * h, h}};
  std::vector<GemmShape> gemms;
  for (const auto& linear : linears) {
    for (Pass pass : {Pass::F, Pass::B, Pass::W}) {
      gemms.push_back(linear_gemm(linear.name, tokens, linear.in, linear.out, pass));
    }
  }
  return gemms;
}

std::vector<GemmShape> attention_gemms(long seq, long head_dim) {
  return {{"attn_score", seq, seq, head_dim, false, true}, {"attn_context", seq, head_dim, seq, false, false}};
}

GemmShape square_gemm(long n) { return {"square", n, n, n, false, false}; }

}  // namespace zeropp::microbench
