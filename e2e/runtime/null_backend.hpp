#pragma once
// A backend whose math does nothing: allocations and host copies are real, every operation returns at once
// (sums return 0). With it the trainer runs a plan's whole program (actions, messages, collectives, stash
// bookkeeping) with empty compute, which measures the runtime's own overhead in actions per second
// (`zeropp-train --backend null`). The numbers it trains on are garbage, by design.
#include "e2e/backend/backend.hpp"

namespace zeropp::e2e {

class NullBackend final : public Backend {
 public:
  std::string_view name() const override { return "null"; }
  DType compute_dtype() const override { return DType::f32; }

  void copy_from_host(Tensor dst, const void* src) override;
  void copy_to_host(void* dst, Tensor src) override;
  void synchronize() override {}

  void gemm(bool, bool, int, int, int, float, Tensor, int, Tensor, int, float, Tensor, int) override {}
  void linear_forward(Tensor, Tensor, Tensor, Tensor, int, int, int) override {}
  void linear_backward_input(Tensor, Tensor, Tensor, int, int, int, bool) override {}
  void linear_backward_weight(Tensor, Tensor, Tensor, Tensor, int, int, int) override {}
  void layernorm_forward(Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, int, int) override {}
  void layernorm_backward_input(Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, int, int, bool) override {}
  void layernorm_backward_weight(Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, int, int) override {}
  void rmsnorm_forward(Tensor, Tensor, Tensor, Tensor, int, int) override {}
  void rmsnorm_backward_input(Tensor, Tensor, Tensor, Tensor, Tensor, int, int, bool) override {}
  void rmsnorm_backward_weight(Tensor, Tensor, Tensor, Tensor, int, int) override {}
  void swiglu_forward(Tensor, Tensor, int, int) override {}
  void swiglu_backward(Tensor, Tensor, Tensor, int, int) override {}
  void rope(Tensor, int, int, int, int, int, int, double, bool, int) override {}
  void gelu_forward(Tensor, Tensor, std::int64_t) override {}
  void gelu_backward(Tensor, Tensor, Tensor, std::int64_t) override {}
  void grouped_attention_forward(Tensor, Tensor, Tensor, int, int, int, int, int) override {}
  void grouped_attention_backward(Tensor, Tensor, Tensor, Tensor, int, int, int, int, int) override {}
  void flash_attention_forward(Tensor, Tensor, Tensor, int, int, int, int, int) override {}
  void flash_attention_backward(Tensor, Tensor, Tensor, Tensor, Tensor, int, int, int, int, int) override {}
  void embedding_forward(Tensor, Tensor, Tensor, Tensor, int, int, int, int) override {}
  void embedding_backward_weight(Tensor, Tensor, Tensor, Tensor, int, int, int, int) override {}
  void crossentropy_forward(Tensor, Tensor, Tensor, Tensor, int, int) override {}
  void crossentropy_backward(Tensor, Tensor, Tensor, int, int, float) override {}
  void add(Tensor, Tensor, Tensor, std::int64_t) override {}
  void accumulate(Tensor, Tensor, std::int64_t) override {}
  void scale(Tensor, float, std::int64_t) override {}
  void copy(Tensor, Tensor, std::int64_t) override {}
  void fill_zero(Tensor) override {}
  double sum_squares(Tensor) override { return 0.0; }
  double sum(Tensor) override { return 0.0; }
  void adamw_update(Tensor, Tensor, Tensor, Tensor, std::int64_t, const AdamWArgs&) override {}

 private:
  void* raw_allocate(std::size_t bytes) override;
  void raw_deallocate(void* p) noexcept override;
};

}  // namespace zeropp::e2e
