#pragma once
// Helpers shared by the trainer's unit tests: host <-> backend copies and deterministic random fill.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "e2e/backend/backend.hpp"

namespace zeropp::e2e::testing {

inline std::vector<float> random_vector(std::size_t n, std::uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

inline Buffer upload(Backend& be, const std::vector<float>& host) {
  Buffer b(be, static_cast<std::int64_t>(host.size()));
  be.copy_from_host(b.view(), host.data());
  return b;
}

inline Buffer upload_i32(Backend& be, const std::vector<std::int32_t>& host) {
  Buffer b(be, static_cast<std::int64_t>(host.size()), DType::i32);
  be.copy_from_host(b.view(), host.data());
  return b;
}

inline std::vector<float> download(Backend& be, Tensor t) {
  std::vector<float> v(static_cast<std::size_t>(t.numel));
  be.copy_to_host(v.data(), t);
  return v;
}

// ||a - b|| / max(||b||, tiny): the norm-wise relative error used by the gradient checks.
inline double rel_error(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
}

}  // namespace zeropp::e2e::testing
