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

std::vector<std::pair<long, long>> gemm_sample_entries(const GemmShape& g) {
  std::vector<std::pair<long, long>> entries;
  const long samples = 16;
  for (long s = 0; s < samples; ++s) {
    entries.emplace_back((s * 7919 + (s % 2) * (g.m - 1)) % g.m, (s * 104729 + (s / 2 % 2) * (g.n - 1)) % g.n);
  }
  return entries;
}

double gemm_entry_error(const std::vector<double>& a_row, const std::vector<double>& b_col, double got) {
  if (!std::isfinite(got)) return INFINITY;
  double ref = 0, scale = 0;
  for (std::size_t p = 0; p < a_row.size() && p < b_col.size(); ++p) {
    ref += a_row[p] * b_col[p];
    scale += std::abs(a_row[p] * b_col[p]);
  }
  return std::abs(got - ref) / std::max(scale, 1e-30);
}

double gemm_sample_error(const GemmShape& g, const std::vector<float>& a, const std::vector<float>& b,
                         const std::vector<float>& c) {
  // A is stored m x k (or k x m when transposed), B k x n (or n x k).
  auto a_at = [&](long i, long p) { return g.transpose_a ? a[p * g.m + i] : a[i * g.k + p]; };
  auto b_at = [&](long p, long j) { return g.transpose_b ? b[j * g.k + p] : b[p * g.n + j]; };
  double worst = 0;
  std::vector<double> a_row(static_cast<std::size_t>(g.k)), b_col(static_cast<std::size_t>(g.k));
  for (const auto& [i, j] : gemm_sample_entries(g)) {
    for (long p = 0; p < g.k; ++p) {
      a_row[static_cast<std::size_t>(p)] = a_at(i, p);
      b_col[static_cast<std::size_t>(p)] = b_at(p, j);
    }
    worst = std::max(worst, gemm_entry_error(a_row, b_col, c[static_cast<std::size_t>(i * g.n + j)]));
    if (std::isinf(worst)) return worst;
  }
  return worst;
}

}  // namespace zeropp::microbench
