#pragma once
// Model FLOPs of the trainer's GPT (multiply-add = 2), computed by the cost model's formulas
// (cost_model/analytic/flops.hpp, DESIGN.md section 4), so the trainer's TFLOP/s and MFU use the same numbers:
//   per block and micro-batch: F = 24 b T C^2 + 4 b T^2 C (for F = 4C; general: (8C^2 + 4CF) b T + 4 b T^2 C),
//                              B = F + 4 b T^2 C (attention's input gradient is twice its forward), W = F - 4bT^2C
//   LM head: 2 b T C V forward, 4 b T C V backward (2 b T C V each in B and W).
// The embedding lookup, layer norms, GELU and softmax are not counted (as in MFU convention). Recompute is not
// counted (model FLOPs, not hardware FLOPs).
#include <cstdint>

#include "e2e/model/gpt_config.hpp"

namespace zeropp::e2e {

struct GptFlops {
  double forward = 0.0;
  double backward_input = 0.0;
  double backward_weight = 0.0;
  double total() const { return forward + backward_input + backward_weight; }
};

// One micro-batch of b sequences through `blocks` blocks, plus the head when with_head.
GptFlops microbatch_flops(const GptConfig&, int b, int blocks, bool with_head);
// One iteration of the whole model: M micro-batches of b sequences.
double iteration_flops(const GptConfig&, int b, std::int64_t M);

}  // namespace zeropp::e2e
