#pragma once
// The single-rank reference trainer: the whole GPT as one chunk on one rank. Every parallel plan is checked
// against it (same data, same init, same objective). One iteration: zero gradients; for global micro-batch
// g = 0 .. M-1: F, then B, then W; then global-norm clipping and AdamW over all parameters.
#include <cstdint>
#include <vector>

#include "e2e/backend/backend.hpp"
#include "e2e/data/token_batch.hpp"
#include "e2e/model/chunk.hpp"
#include "e2e/optim/adamw.hpp"

namespace zeropp::e2e {

struct ReferenceConfig {
  GptConfig model;
  int micro_batch = 1;        // b
  int microbatches = 1;       // M, global micro-batches per iteration
  std::uint64_t seed = 1234;  // parameter init
  AdamWConfig optim;
  bool fused_backward = false;        // BW instead of B then W (same numbers)
  StashMode stash = StashMode::keep;  // recompute: F drops, RECOMPUTE rebuilds before B
};

struct StepResult {
  double loss = 0.0;       // mean over the iteration's tokens (mean of the equal-sized micro-batch means)
  double grad_norm = 0.0;  // global L2 norm before clipping
  float clip_scale = 1.0f;
};

class ReferenceTrainer {
 public:
  ReferenceTrainer(Backend&, const ReferenceConfig&, const DataSource&);
  StepResult step();  // one iteration; iteration() advances by one
  std::int64_t iteration() const { return iteration_; }
  Chunk& model() { return model_; }
  const Chunk& model() const { return model_; }
  std::vector<float> host_parameters() const;  // layout().numel() floats (whole-model layout)
  std::vector<float> host_gradients() const;   // of the last step, before clipping

 private:
  Backend* backend_;
  ReferenceConfig cfg_;
  const DataSource* data_;
  Chunk model_;
  AdamW optim_;
  std::int64_t iteration_ = 0;
};

}  // namespace zeropp::e2e
