#include "e2e/backend/backend.hpp"

#include <new>
#include <stdexcept>
#include <string>

namespace zeropp::e2e {

std::string_view op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::gemm:
      return "gemm";
    case OpKind::attention:
      return "attention";
    case OpKind::layernorm:
      return "layernorm";
    case OpKind::gelu:
      return "gelu";
    case OpKind::embedding:
      return "embedding";
    case OpKind::cross_entropy:
      return "cross_entropy";
    case OpKind::adamw:
      return "adamw";
    case OpKind::elementwise:
      return "elementwise";
    case OpKind::rmsnorm:
      return "rmsnorm";
    case OpKind::swiglu:
      return "swiglu";
    case OpKind::rope:
      return "rope";
    case OpKind::count:
      break;
  }
  return "?";
}

void* Backend::allocate(std::size_t bytes) {
  void* p = raw_allocate(bytes);
  if (p == nullptr) throw std::bad_alloc();
  bytes_in_use_ += bytes;
  if (bytes_in_use_ > peak_bytes_) peak_bytes_ = bytes_in_use_;
  return p;
}

void Backend::deallocate(void* p, std::size_t bytes) noexcept {
  raw_deallocate(p);
  bytes_in_use_ -= bytes;
}

void Backend::attention_block_forward(Tensor, Tensor, Tensor, Tensor, int, int, int, int, int, const AttentionBlock&,
                                      bool) {
  throw std::logic_error(std::string(name()) + " backend: no context-parallel attention kernel");
}

void Backend::attention_block_backward(Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, int, int, int, int, int,
                                       const AttentionBlock&) {
  throw std::logic_error(std::string(name()) + " backend: no context-parallel attention kernel");
}

void Backend::reset_stats() {
  for (auto& s : stats_) s = {};
}

void Backend::record(OpKind k, double seconds, double flops) {
  OpStats& s = stats_[static_cast<int>(k)];
  ++s.calls;
  s.seconds += seconds;
  s.flops += flops;
}

}  // namespace zeropp::e2e
