#pragma once
// Ring attention over the CP group, as Megatron-LM runs it through TransformerEngine (transformer_engine/pytorch/
// attention, AttnFuncWithCPAndKVP2P, causal with load-balanced chunks; context_parallel.hpp has the layout).
// Rank r holds its Tl = 2*Tc rows of every sequence: chunks r and 2*cp-1-r. At step s (0 <= s < cp) it holds the
// keys and values of rank j = r - s (mod cp), passed one rank along the ring per step (cp - 1 exchanges), and
// attends to them in one block whose mask follows from the chunks' positions:
//   s = 0  (j = r): all rows against all rows, causal (the two chunks are in position order);
//   j < r: all rows against j's first chunk, no mask (chunk j precedes both of r's; j's second chunk follows them);
//   j > r: r's second chunk against all of j's rows, no mask (r's first chunk precedes both of j's).
// Each block's output and log-sum-exp merge into the running ones (the online softmax). The backward walks the
// same ring with the final output and log-sum-exp, passing each key/value block's gradient along with it so that
// after cp shifts it is back with its owner, complete. TE overlaps each exchange with the block computed beside it;
// here the exchange and the block run one after the other (the communicator's calls are blocking): the same values,
// not the same timeline.
// The ring is the flash-style kernel (it saves the log-sum-exp, not the probabilities), whatever the model's
// attention kind; the trainer runs it for flash models only (gpt_config.cpp: Megatron's local attention has no CP).
#include "e2e/backend/backend.hpp"
#include "e2e/model/context_parallel.hpp"

namespace zeropp::e2e {

// The block rank r computes at ring step s: the keys of rank (r - s) mod cp, for Tl rows per sequence.
Backend::AttentionBlock ring_block(int rank, int step, int cp, int Tl);

// qkv [B, Tl, (NH+2*KVH)*hs] (rotated); writes out [B, Tl, NH*hs] and lse [B, NH, Tl] (fp32).
void ring_attention_forward(Backend&, const ContextParallel&, Tensor out, Tensor lse, Tensor qkv, int B, int Tl, int NH,
                            int KVH, int hs);
// dqkv [B, Tl, (NH+2*KVH)*hs] overwritten with the gradients of this rank's q, k and v.
void ring_attention_backward(Backend&, const ContextParallel&, Tensor dqkv, Tensor dout, Tensor out, Tensor lse,
                             Tensor qkv, int B, int Tl, int NH, int KVH, int hs);

}  // namespace zeropp::e2e
