#pragma once
// AdamW with bias correction, decoupled weight decay on 2-D weights only, and global-norm gradient clipping,
// on a flat range [lo, hi) of one chunk's parameters (the whole chunk for DP, a shard for ZeRO-1/3).
//
// Clipping across ranks: each rank computes the sum of squares of the gradients it owns (Chunk::grad_sum_squares
// for a full chunk, or sum_squares of its shard), the runtime all-reduces the sums over every rank that owns a
// distinct part of the model, and each rank calls step() with clip_scale(global_sum).
#include <cstdint>
#include <utility>
#include <vector>

#include "e2e/backend/backend.hpp"
#include "e2e/model/layout.hpp"

namespace zeropp::e2e {

struct AdamWConfig {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.1f;
  float grad_clip = 1.0f;  // max global L2 norm; 0 disables clipping
};

// The gradient multiplier for global-norm clipping: min(1, max_norm / (sqrt(sum_squares) + 1e-6)); 1 when
// max_norm == 0. Throws std::runtime_error when sum_squares is not finite (a NaN/inf gradient).
float clip_scale(double global_sum_squares, float max_norm);

class AdamW {
 public:
  // Optimizer state (m, v: fp32, zeroed) for elements [lo, hi) of the chunk described by `layout`.
  AdamW(Backend&, const AdamWConfig&, const ChunkLayout& layout, std::int64_t lo, std::int64_t hi);

  // One step t (1-based) on params/grads views of exactly hi - lo elements (the range [lo, hi)), with the
  // gradient multiplied by grad_scale (from clip_scale). Weight decay applies on the layout's decay intervals.
  void step(Tensor params, Tensor grads, int t, float grad_scale);

  std::int64_t lo() const { return lo_; }
  std::int64_t hi() const { return hi_; }
  Tensor m() const { return m_.view(); }
  Tensor v() const { return v_.view(); }
  const AdamWConfig& config() const { return cfg_; }

 private:
  Backend* backend_;
  AdamWConfig cfg_;
  std::int64_t lo_, hi_;
  std::vector<std::pair<std::int64_t, std::int64_t>> decay_;  // relative to lo
  Buffer m_, v_;
};

}  // namespace zeropp::e2e
