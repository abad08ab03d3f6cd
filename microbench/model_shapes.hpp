#pragma once
// The GEMMs and the attention core of named models' transformer layers as one tensor-parallel rank runs them:
// the operation table the cost model needs for a GPU (GPT-3 13B, Llama-3 8B and 70B at tp 1..8, b 1..4), measured
// through the trainer's cuBLASLt wrapper (zeropp-bench-cuda) and through PyTorch (scripts/device/*.py read the
// list this writes, so that both measure the same shapes: one home for the shapes).
//
// Megatron-LM's split (Shoeybi et al. 2019, section 3): QKV and MLP-up are column-parallel (their outputs split over
// tp), attention output and MLP-down row-parallel (their inputs split). A GQA QKV projects h -> (a + 2 kv) d; a
// SwiGLU MLP-up projects h -> 2 ffn (gate and up fused in one GEMM, as Megatron's fc1 does). Tokens are b * s (the
// full sequence: with sequence parallelism the GEMM runs after the all-gather on all of them).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost_model/spec/model_spec.hpp"
#include "microbench/gemm_shapes.hpp"
#include "microbench/options.hpp"

namespace zeropp::microbench {

// One (model, tp, b) of the options.
struct ModelCase {
  std::string model;  // as named in --zeropp_gemm_models (a zoo name, or a path's file stem)
  ModelSpec spec;
  int tp = 1;
  int b = 1;
  long tokens() const { return static_cast<long>(b) * spec.seq_len; }
  std::string name() const;  // "model:llama3-8b/tp:2/b:1/tokens:8192"
};

// The attention core of one rank for one micro-batch: heads and kv heads are the rank's share.
struct AttentionShape {
  int batch = 0, heads = 0, kv_heads = 0, seq = 0, head_dim = 0;
};

// Every (model, tp, b) of options.gemm_models x gemm_tp x gemm_batch, models loaded through the zoo
// (cost_model/spec/config.hpp). Throws SpecError for an unknown model and std::invalid_argument naming
// --zeropp_gemm_tp when tp does not divide the model's heads, kv heads, hidden size or ffn.
std::vector<ModelCase> model_cases(const Options& options);

// The 12 GEMMs (QKV, attention output, MLP up, MLP down; F, B, W each) of one rank, named like
// transformer_layer_gemms ("qkv_F", ...).
std::vector<GemmShape> model_layer_gemms(const ModelSpec& model, int tp, long tokens);
// The LM head of one rank, F, B and W: Megatron's vocabulary-parallel output layer, h -> V/tp. "lm_head_*" at the
// vocabulary as given, where tp divides it (the trainer runs it so: GPT-3's 50257 leaves the logits an odd leading
// dimension); where the vocabulary is not a multiple of 128 x tp, "lm_head_padded_*" at Megatron's padded one
// (--make-vocab-size-divisible-by 128, times tp: megatron/training/tokenizer, _vocab_size_with_padding), as
// Megatron and llm.c run it, so that one measurement shows what the padding buys.
std::vector<GemmShape> model_head_gemms(const ModelSpec& model, int tp, long tokens);
// Every GEMM a case measures: the layer's 12 and the head's.
std::vector<GemmShape> model_gemms(const ModelSpec& model, int tp, long tokens);
AttentionShape model_attention_shape(const ModelSpec& model, int tp, int b);

// {"schema": 1, "kind": "zeropp-bench-shapes", "gemms": [{case, model, tp, b, tokens, gemm, m, n, k, transpose_a,
// transpose_b, flop}], "attention": [{case, model, tp, b, batch, heads, kv_heads, seq, head_dim}]}.
nlohmann::json shape_list(const std::vector<ModelCase>& cases);

}  // namespace zeropp::microbench
