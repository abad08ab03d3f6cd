#include "microbench/backend_data.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "microbench/gemm_check.hpp"

namespace zeropp::microbench {
namespace {

constexpr std::int64_t kBlock = std::int64_t{1} << 20;

}  // namespace

e2e::Buffer random_buffer(e2e::Backend& backend, std::int64_t n, e2e::DType dtype, unsigned seed) {
  e2e::Buffer out(backend, n, dtype);
  const std::int64_t block = std::min(n, kBlock);
  std::vector<float> host(static_cast<std::size_t>(block));
  fill_uniform(host, seed);
  e2e::Buffer staging(backend, block, e2e::DType::f32);
  backend.copy_from_host(staging.view(), host.data());
  for (std::int64_t offset = 0; offset < n; offset += block) {
    const std::int64_t count = std::min(block, n - offset);
    backend.convert(out.slice(offset, count), staging.slice(0, count), count);
  }
  backend.synchronize();
  return out;
}

e2e::Buffer random_tokens(e2e::Backend& backend, std::int64_t n, int vocab, unsigned seed) {
  std::vector<float> u(static_cast<std::size_t>(n));
  fill_uniform(u, seed);
  std::vector<std::int32_t> tokens(u.size());
  for (std::size_t i = 0; i < u.size(); ++i) {
    tokens[i] = std::clamp(static_cast<std::int32_t>((u[i] + 1.0f) * 0.5f * static_cast<float>(vocab)), 0, vocab - 1);
  }
  e2e::Buffer out(backend, n, e2e::DType::i32);
  backend.copy_from_host(out.view(), tokens.data());
  return out;
}

bool all_finite(e2e::Backend& backend, e2e::Tensor t) {
  const std::int64_t block = std::min(t.numel, kBlock);
  e2e::Buffer staging(backend, block, e2e::DType::f32);
  std::vector<float> host(static_cast<std::size_t>(block));
  for (std::int64_t offset = 0; offset < t.numel; offset += block) {
    const std::int64_t count = std::min(block, t.numel - offset);
    backend.convert(staging.slice(0, count), t.slice(offset, count), count);
    backend.copy_to_host(host.data(), staging.slice(0, count));
    for (std::int64_t i = 0; i < count; ++i)
      if (!std::isfinite(host[static_cast<std::size_t>(i)])) return false;
  }
  return true;
}

}  // namespace zeropp::microbench
