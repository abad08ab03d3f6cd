#include "e2e/runtime/null_backend.hpp"

#include <cstdlib>
#include <cstring>

namespace zeropp::e2e {

void NullBackend::copy_from_host(Tensor dst, const void* src) {
  if (dst.numel > 0) std::memcpy(dst.data, src, dst.bytes());
}

void NullBackend::copy_to_host(void* dst, Tensor src) {
  if (src.numel > 0) std::memcpy(dst, src.data, src.bytes());
}

void* NullBackend::raw_allocate(std::size_t bytes) { return std::malloc(bytes == 0 ? 1 : bytes); }

void NullBackend::raw_deallocate(void* p) noexcept { std::free(p); }

}  // namespace zeropp::e2e
