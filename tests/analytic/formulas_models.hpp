#pragma once
// Models written out by hand for the formula tests (independent of the JSON zoo): published configurations.
#include "cost_model/spec/model_spec.hpp"

namespace zeropp::test {

// GPT-style: learned positions, gelu MLP with ffn = 4h, biases, LayerNorm, tied LM head.
inline ModelSpec gpt(int layers, int hidden, int heads, int seq_len, int vocab) {
  ModelSpec m;
  m.name = "gpt";
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.seq_len = seq_len;
  m.vocab = vocab;
  m.mlp = MlpKind::gelu;
  m.tied_embedding = true;
  m.learned_positions = true;
  return m;
}

// GPT-3 175B (Brown et al. 2020, Table 2.1): 96 layers, d_model 12288, 96 heads, context 2048, GPT-2's BPE
// vocabulary of 50257 tokens.
inline ModelSpec gpt3_175b() { return gpt(96, 12288, 96, 2048, 50257); }

// Llama-2 (Touvron et al. 2023; HF config.json): rotary positions, SwiGLU, RMSNorm, no biases, untied head.
inline ModelSpec llama(int layers, int hidden, int heads, int kv_heads, int ffn) {
  ModelSpec m;
  m.name = "llama";
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn_hidden = ffn;
  m.seq_len = 4096;
  m.vocab = 32000;
  m.mlp = MlpKind::swiglu;
  m.tied_embedding = false;
  m.learned_positions = false;
  return m;
}
inline ModelSpec llama2_7b() { return llama(32, 4096, 32, 32, 11008); }
inline ModelSpec llama2_70b() { return llama(80, 8192, 64, 8, 28672); }

}  // namespace zeropp::test
