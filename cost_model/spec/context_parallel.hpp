#pragma once
// Context parallelism (parallel.cp, parallel.cp_kind): cp ranks split every sequence of a micro-batch and hold the
// same parameters. Each keeps s/cp tokens through every token-wise operation (GEMMs, norms, activations, the
// pipeline's p2p, the TP collectives) and computes 1/cp of the causal attention:
//   ring     Megatron-LM's context parallelism as Transformer Engine runs it (AttnFuncWithCPAndKVP2P,
//            transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py): the sequence is cut
//            into 2*cp chunks and rank r holds chunks r and 2cp-1-r, so that every rank gets the same share of the
//            causal work (Megatron's get_batch_on_this_cp_rank); the forward runs cp attention steps, each on the
//            key/value chunk received in the previous step while the next is passed on in a ring (cp-1 sends);
//            the backward passes the key/values together with their accumulated gradients (a (2, kv) buffer per
//            send) and returns the last dKV after the final step.
//   ulysses  DeepSpeed-Ulysses (Jacobs et al. 2023): an all-to-all before attention turns the sequence split into
//            a head split (each rank gets the whole sequence of heads/cp heads: Q, K and V), one after it turns
//            the output back; the backward runs the same all-to-alls on the gradients. Not overlapped.
// Both run in the fused attention kernel (Megatron's context parallelism requires Transformer Engine's
// DotProductAttention), so a plan with cp > 1 needs flash attention. The CP group sits next to the TP group, inside
// the ZeRO-3 and data-parallel ones, in rank order (spec/rank_grid.hpp, Megatron's tp-cp-dp-pp); a group wider
// than a node crosses nodes and is priced on the inter-node link (analytic::cp_group). Gradients are synchronised
// over data parallelism and CP together (Megatron's data-parallel group with context parallelism; torchtitan shards
// FSDP over dp x cp): spec/strategy.hpp.
#include <optional>

#include "cost_model/spec/model_spec.hpp"
#include "cost_model/spec/parallel_spec.hpp"

namespace zeropp {

// The model as one CP rank sees its token-wise work: seq_len / cp tokens per sequence (the model itself when cp
// is 1). Its attention work is NOT that of the shorter sequence: see attention_share.
ModelSpec cp_rank_model(const ModelSpec& model, int cp);
// The same without a copy when cp is 1 (`model` itself, `copy` left empty: not even a ModelSpec constructed);
// otherwise `copy` holds it. For the closed forms, which ask for it in every plan evaluation of a search.
inline const ModelSpec& cp_rank_model(const ModelSpec& model, int cp, std::optional<ModelSpec>& copy) {
  if (cp <= 1) return model;
  return copy.emplace(cp_rank_model(model, cp));
}

// The rules a plan with cp > 1 obeys (SpecError naming parallel.cp, one line): flash attention; ring: seq_len
// divisible by 2*cp (two load-balanced chunks per rank); ulysses: seq_len divisible by cp, and cp dividing the
// heads and key/value heads each TP rank holds.
void validate_context_parallel(const ModelSpec& model, const ParallelSpec& parallel);

}  // namespace zeropp
