// The model-layer GEMMs and attention shapes one tensor-parallel rank runs (microbench/model_shapes.hpp), against
// values derived by hand from the published configs (Llama-3 8B/70B: HuggingFace config.json; GPT-3 13B: Brown et
// al. 2020, Table 2.1) and Megatron-LM's split (column-parallel QKV and MLP-up, row-parallel attention output and
// MLP-down).
#include <gtest/gtest.h>

#include <stdexcept>

#include "cost_model/spec/config.hpp"
#include "microbench/model_shapes.hpp"

namespace zeropp::microbench {
namespace {

GemmShape find(const std::vector<GemmShape>& gemms, const std::string& name) {
  for (const auto& g : gemms)
    if (g.name == name) return g;
  ADD_FAILURE() << name << " missing";
  return {};
}

// The LM head, h -> V/tp: GPT-3's vocabulary 50257 (odd: split by no tp > 1) as given at tp 1 and Megatron's padding
// to a multiple of 128 x tp (50304 at tp 1, 50432 / 2 = 25216 at tp 2); Llama-3's 128256 = 128 x 1002 needs none
// up to tp 2 and 129024 / 8 = 16128 at tp 8 (128256 / 8 = 16032 as given).
TEST(ModelShapes, LmHeadAsGivenAndPadded) {
  const ModelSpec gpt = load_model("gpt3-1.3b");
  auto heads = model_head_gemms(gpt, 1, 2048);
  ASSERT_EQ(heads.size(), 6u);
  EXPECT_EQ(find(heads, "lm_head_F").n, 50257);
  EXPECT_EQ(find(heads, "lm_head_F").k, 2048);
  EXPECT_EQ(find(heads, "lm_head_padded_F").n, 50304);
  EXPECT_EQ(find(heads, "lm_head_padded_W").m, 50304);  // the weight gradient, V x h deep in the tokens
  EXPECT_EQ(find(heads, "lm_head_padded_W").k, 2048);
  heads = model_head_gemms(gpt, 2, 2048);
  ASSERT_EQ(heads.size(), 3u);
  EXPECT_EQ(find(heads, "lm_head_padded_B").k, 25216);  // the input gradient, deep in the vocabulary shard
  const ModelSpec llama = load_model("llama3-8b");
  EXPECT_EQ(model_head_gemms(llama, 2, 8192).size(), 3u);
  heads = model_head_gemms(llama, 8, 8192);
  EXPECT_EQ(find(heads, "lm_head_F").n, 16032);
  EXPECT_EQ(find(heads, "lm_head_padded_F").n, 16128);
  EXPECT_EQ(model_gemms(llama, 8, 8192).size(), 12u + 6u);
}

TEST(ModelShapes, Llama3_70bAtTp8) {
  // h 8192, 64 heads of 128, 8 kv heads, ffn 28672 (SwiGLU: gate and up fused, 2 x 28672 out), s = 8192.
  const auto gemms = model_layer_gemms(load_model("llama3-70b"), 8, 8192);
  ASSERT_EQ(gemms.size(), 12u);
  const GemmShape qkv = find(gemms, "qkv_F");  // (64 + 2 * 8) * 128 / 8 = 1280 outputs per rank
  EXPECT_EQ(qkv.m, 8192);
  EXPECT_EQ(qkv.n, 1280);
  EXPECT_EQ(qkv.k, 8192);
  EXPECT_TRUE(qkv.transpose_b);
  const GemmShape up = find(gemms, "mlp_up_F");  // 2 * 28672 / 8
  EXPECT_EQ(up.n, 7168);
  const GemmShape down_w = find(gemms, "mlp_down_W");  // dW [h x ffn/tp] = dY^T X, k = tokens
  EXPECT_EQ(down_w.m, 8192);
  EXPECT_EQ(down_w.n, 3584);
  EXPECT_EQ(down_w.k, 8192);
  EXPECT_TRUE(down_w.transpose_a);
  const AttentionShape a = model_attention_shape(load_model("llama3-70b"), 8, 2);
  EXPECT_EQ(a.batch, 2);
  EXPECT_EQ(a.heads, 8);
  EXPECT_EQ(a.kv_heads, 1);
  EXPECT_EQ(a.seq, 8192);
  EXPECT_EQ(a.head_dim, 128);
}

TEST(ModelShapes, Gpt3_13bAtTp4B2) {
  // h 5120, 40 heads (MHA), GELU ffn 4h = 20480, s = 2048: tokens 4096 at b = 2.
  const auto gemms = model_layer_gemms(load_model("gpt3-13b"), 4, 4096);
  EXPECT_EQ(find(gemms, "qkv_F").n, 3 * 5120 / 4);
  const GemmShape out_b = find(gemms, "attn_out_B");  // dX [tokens x h/tp] = dY W
  EXPECT_EQ(out_b.m, 4096);
  EXPECT_EQ(out_b.n, 1280);
  EXPECT_EQ(out_b.k, 5120);
  EXPECT_EQ(find(gemms, "mlp_up_F").n, 20480 / 4);
  EXPECT_EQ(find(gemms, "mlp_down_F").k, 20480 / 4);
}

TEST(ModelShapes, CasesAndTheirNames) {
  Options o;
  o.gemm_models = {"gpt3-13b", "llama3-8b"};
  o.gemm_tp = {1, 8};
  o.gemm_batch = {1, 4};
  const auto cases = model_cases(o);
  ASSERT_EQ(cases.size(), 8u);
  EXPECT_EQ(cases.back().name(), "model:llama3-8b/tp:8/b:4/tokens:32768");
  const auto list = shape_list(cases);
  // 12 layer GEMMs per case, and the head's 3 per vocabulary (LmHeadAsGivenAndPadded): GPT-3 13B 6 at tp 1 (as
  // given and padded), 3 at tp 8 (padded); Llama-3 8B 3 at tp 1, 6 at tp 8; each at b 1 and 4.
  EXPECT_EQ(list["gemms"].size(), 8u * 12u + 2u * (6u + 3u + 3u + 6u));
  EXPECT_EQ(list["attention"].size(), 8u);
  EXPECT_EQ(list["attention"][7]["kv_heads"], 1);  // Llama-3 8B: 8 kv heads over tp 8
}

TEST(ModelShapes, TpThatDoesNotDivideIsRefusedNamingTheFlag) {
  Options o;
  o.gemm_models = {"llama3-8b"};
  o.gemm_tp = {3};
  try {
    model_cases(o);
    FAIL() << "tp 3 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--zeropp_gemm_tp=3 does not divide llama3-8b's heads (32)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace zeropp::microbench
