#pragma once
// The transformer the trainer runs (DESIGN.md section 7), in two layer styles that the model side tells apart by
// its MLP kind (cost_model/analytic/params.hpp, has_biases: one home for that fact):
//   GPT   (mlp gelu):   LayerNorm, biases on every linear, GELU MLP (ffn = 4C by default);
//   Llama (mlp swiglu): RMSNorm, no biases, SwiGLU MLP (gate and up, then down; ffn by Llama's rule).
// Each independently of the style: grouped-query attention (KV heads <= heads), learned or rotary positions (RoPE
// with the config's base and rotating share), a tied or untied LM head, unfused or FlashAttention-style (tiled,
// online-softmax) attention. Pre-norm blocks, causal attention, cross-entropy. Shape letters as llm.c; the
// mapping to the cost model's ModelSpec symbols is L = layers, C = h (hidden), NH = a (heads), KVH = kv_heads,
// T = s (seq_len), V = vocab, F = ffn_hidden.
#include <cstdint>
#include <string>
#include <vector>

#include "cost_model/spec/config.hpp"
#include "cost_model/spec/model_spec.hpp"
#include "e2e/model/fp8.hpp"

namespace zeropp::e2e {

struct GptConfig {
  int L = 0;                   // transformer blocks
  int C = 0;                   // channels (h)
  int NH = 0;                  // attention (query) heads (a)
  int T = 0;                   // sequence length (s)
  int V = 0;                   // vocabulary
  int F = 0;                   // MLP hidden size (ffn); 0 in a ModelSpec means the MLP kind's default
  int KVH = 0;                 // key/value heads (GQA); 0: = NH
  bool llama = false;          // Llama-style layer (RMSNorm, SwiGLU, no biases) instead of GPT-style
  bool tied = true;            // LM head shares the token embedding
  bool rope = false;           // rotary positions instead of a learned position table
  double rope_theta = 10000;   // rotary base
  double rotary_fraction = 1;  // share of each head's dimensions that rotates
  bool flash = false;          // tiled online-softmax attention (stores the log-sum-exp, not the s x s softmax)
  // FP8 linear layers (e2e/model/fp8.hpp): a plan setting, not the model's, kept here because everything that
  // builds blocks (the executor's chunks, the single-rank reference) reads this config; fp8_training_of sets it.
  Fp8Training fp8{};

  int head_size() const { return C / NH; }
  int kv_heads() const { return KVH > 0 ? KVH : NH; }
  bool biases() const { return !llama; }
  bool rmsnorm() const { return llama; }
  bool swiglu() const { return llama; }
  int kv_width() const { return kv_heads() * head_size(); }  // K (or V) columns
  int qkv_width() const { return C + 2 * kv_width(); }       // the QKV projection's output columns
  int up_width() const { return swiglu() ? 2 * F : F; }      // the first MLP linear's output (gate and up)
  int rotary_dims() const;  // dimensions of a head that rotate: the fraction of head_size, rounded down to even
  // Parameter counts (of the unsliced model).
  std::int64_t block_params() const;      // GPT F = 4C, MHA: 12C^2 + 13C
  std::int64_t embedding_params() const;  // wte V*C (+ wpe T*C when learned)
  std::int64_t total_params() const;      // L blocks + embedding + final norm + untied head
};

// Checks a GptConfig (positive sizes, NH | C, KVH | NH, an even rotary width) and throws zeropp::SpecError naming
// `field`.<key>.
void validate(const GptConfig&, const char* field = "model");

// One line for reports: "llama layers (RMSNorm, SwiGLU, no biases), GQA 8/2 heads, RoPE theta 500000, flash
// attention, untied head".
std::string describe(const GptConfig&);

// From the cost model's ModelSpec; throws zeropp::SpecError("model.<key>", ...) for what the trainer does not
// implement. This is the model half of the trainer's one list of what it runs or refuses; the plan half is
// check_plan_runs below.
GptConfig gpt_config_from(const ModelSpec&);
// The inverse, e.g. to ask the cost model's formulas about this model.
ModelSpec to_model_spec(const GptConfig&);

// `zeropp-train --model-override KEY=VALUE`: replaces a size of `m` (KEY one of the model file's layers, hidden,
// heads, kv_heads, ffn_hidden, seq_len, vocab; ffn_hidden=0 and kv_heads=0 mean the defaults), so that a published
// config (a HuggingFace config.json) trains at a scale the machine holds, with every other fact of it (layer style,
// GQA ratio if kv_heads is given, positions, rotary base, tied head, attention kind) unchanged. Throws
// zeropp::SpecError("--model-override", ...) naming the bad item; the caller validates the result.
void apply_model_override(ModelSpec& m, const std::string& item);

// The plan half: every ParallelSpec key the trainer does not execute as the cost model prices it is refused with
// one line naming the key (zeropp::SpecError("parallel.<key>", ...)). `compute_f32`: the backend computes in fp32
// (CPU) rather than bf16 (CUDA). The Plan's model and cluster are read for the facts the rules need.
void check_plan_runs(const Plan&, bool compute_f32);
// Completes a checked plan with how the trainer executes what the plan leaves to the framework's default, so that its
// predictions (costs_from_plan) and its result's plan price what it runs: a Megatron plan's transformer_impl becomes
// local (check_plan_runs).
void state_execution(Plan& plan);

// The FP8 training a checked plan (check_plan_runs) asks for: enabled for dtype fp8 (current per-tensor scaling).
Fp8Training fp8_training_of(const ParallelSpec&);

// What the trainer does with each key of a plan's "parallel" and "model" objects, one line per key: the list
// check_plan_runs and gpt_config_from enforce, checked against the spec's own keys by tests/e2e/unit_model.cpp (a
// new key must be sorted into executed or refused here).
struct KeySupport {
  const char* key;   // "parallel.tp_comm_overlap"
  const char* what;  // "refused when true: ..."
};
const std::vector<KeySupport>& key_support();

}  // namespace zeropp::e2e
