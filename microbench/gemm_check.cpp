#include "microbench/gemm_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace zeropp::microbench {

void fill_uniform(std::vector<float>& v, unsigned seed) {
  std::uint64_t state = 0x9e3779b97f4a7c15ULL ^ seed;
  for (float& x : v) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;  // 64-bit LCG; top 24 bits as mantissa
    x = static_cast<float>(static_cast<double>(state >> 40) / static_cast<double>(1 << 24)) * 2.0f - 1.0f;
  }
}

double gemm_sample_error(const GemmShape& g, const std::vector<float>& a, const std::vector<float>& b,
                         const std::vector<float>& c) {
  // A is stored m x k (or k x m when transposed), B k x n (or n x k).
  auto a_at = [&](long i, long p) { return g.transpose_a ? a[p * g.m + i] : a[i * g.k + p]; };
  auto b_at = [&](long p, long j) { return g.transpose_b ? b[j * g.k + p] : b[p * g.n + j]; };
  double worst = 0;
  const long samples = 16;
  for (long s = 0; s < samples; ++s) {
    // Corners and a spread of interior entries, so edge tiles are covered.
    const long i = (s * 7919 + (s % 2) * (g.m - 1)) % g.m;
    const long j = (s * 104729 + (s / 2 % 2) * (g.n - 1)) % g.n;
    double ref = 0, scale = 0;
    for (long p = 0; p < g.k; ++p) {
      ref += static_cast<double>(a_at(i, p)) * b_at(p, j);
      scale += std::abs(static_cast<double>(a_at(i, p)) * b_at(p, j));
    }
    const double got = c[static_cast<std::size_t>(i * g.n + j)];
    if (!std::isfinite(got)) return INFINITY;
    worst = std::max(worst, std::abs(got - ref) / std::max(scale, 1e-30));
  }
  return worst;
}

}  // namespace zeropp::microbench
