#include "e2e/optim/adamw.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace zeropp::e2e {

float clip_scale(double global_sum_squares, float max_norm) {
  if (!std::isfinite(global_sum_squares)) {
    throw std::runtime_error("gradient norm is not finite (sum of squares = " + std::to_string(global_sum_squares) +
                             ")");
  }
  if (max_norm <= 0.0f) return 1.0f;
  const double norm = std::sqrt(global_sum_squares);
  return norm > max_norm ? static_cast<float>(max_norm / (norm + 1e-6)) : 1.0f;
}

AdamW::AdamW(Backend& backend, const AdamWConfig& cfg, const ChunkLayout& layout, std::int64_t lo, std::int64_t hi)
    : backend_(&backend),
      cfg_(cfg),
      lo_(lo),
      hi_(hi),
      decay_(layout.decay_intervals(lo, hi)),
      m_(backend, hi - lo),
      v_(backend, hi - lo) {
  if (lo < 0 || hi < lo || hi > layout.numel()) {
    throw std::out_of_range("AdamW: range [" + std::to_string(lo) + ", " + std::to_string(hi) +
                            ") outside the chunk's " + std::to_string(layout.numel()) + " parameters");
  }
  backend.fill_zero(m_.view());
  backend.fill_zero(v_.view());
}

void AdamW::step(Tensor params, Tensor grads, int t, float grad_scale) {
  const std::int64_t n = hi_ - lo_;
  if (params.numel != n || grads.numel != n) {
    throw std::invalid_argument("AdamW::step: views of " + std::to_string(params.numel) + "/" +
                                std::to_string(grads.numel) + " elements for a range of " + std::to_string(n));
  }
  if (t < 1) throw std::invalid_argument("AdamW::step: step t is 1-based");
  AdamWArgs a;
  a.lr = cfg_.lr;
  a.beta1 = cfg_.beta1;
  a.beta2 = cfg_.beta2;
  a.eps = cfg_.eps;
  a.bias_correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(cfg_.beta1), t));
  a.bias_correction2 = static_cast<float>(1.0 - std::pow(static_cast<double>(cfg_.beta2), t));
  a.grad_scale = grad_scale;
  // Alternate undecayed and decayed intervals over [0, n).
  auto run = [&](std::int64_t from, std::int64_t to, float wd) {
    if (to <= from) return;
    a.weight_decay = wd;
    backend_->adamw_update(params.slice(from, to - from), grads.slice(from, to - from), m_.slice(from, to - from),
                           v_.slice(from, to - from), to - from, a);
  };
  std::int64_t pos = 0;
  for (const auto& [from, to] : decay_) {
    run(pos, from, 0.0f);
    run(from, to, cfg_.weight_decay);
    pos = to;
  }
  run(pos, n, 0.0f);
}

}  // namespace zeropp::e2e
