#include "tests/e2e/flash_mma_emulation/attention_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace zeropp::emu {
namespace {

struct Index {
  const AttentionShape& s;
  std::size_t W() const { return std::size_t(s.NH + 2 * s.KVH) * s.hs; }
  std::size_t row(int b, int t) const { return (std::size_t(b) * s.T + t) * W(); }
  std::size_t q(int b, int t, int h) const { return row(b, t) + std::size_t(h) * s.hs; }
  std::size_t k(int b, int t, int kvh) const { return row(b, t) + std::size_t(s.NH + kvh) * s.hs; }
  std::size_t v(int b, int t, int kvh) const { return row(b, t) + std::size_t(s.NH + s.KVH + kvh) * s.hs; }
  std::size_t o(int b, int t, int h) const { return (std::size_t(b) * s.T + t) * s.NH * s.hs + std::size_t(h) * s.hs; }
};

double dot(const double* a, const double* b, int n) {
  double d = 0.0;
  for (int i = 0; i < n; ++i) d += a[i] * b[i];
  return d;
}

// Probabilities of query row t (keys 0..t) of head h, and their log-sum-exp.
std::vector<double> probabilities(const std::vector<double>& qkv, const Index& ix, int b, int h, int t, double* lse) {
  const AttentionShape& s = ix.s;
  const int kvh = h / (s.NH / s.KVH);
  const double scale = 1.0 / std::sqrt(double(s.hs));
  std::vector<double> p(std::size_t(t) + 1);
  double m = -INFINITY;
  for (int j = 0; j <= t; ++j) {
    p[std::size_t(j)] = scale * dot(&qkv[ix.q(b, t, h)], &qkv[ix.k(b, j, kvh)], s.hs);
    m = std::max(m, p[std::size_t(j)]);
  }
  double sum = 0.0;
  for (double& x : p) sum += (x = std::exp(x - m));
  for (double& x : p) x /= sum;
  *lse = m + std::log(sum);
  return p;
}

}  // namespace

AttentionForward attention_forward(const std::vector<double>& qkv, const AttentionShape& s) {
  const Index ix{s};
  AttentionForward f{std::vector<double>(std::size_t(s.B) * s.T * s.NH * s.hs, 0.0),
                     std::vector<double>(std::size_t(s.B) * s.NH * s.T)};
  for (int b = 0; b < s.B; ++b)
    for (int h = 0; h < s.NH; ++h)
      for (int t = 0; t < s.T; ++t) {
        const int kvh = h / (s.NH / s.KVH);
        const auto p = probabilities(qkv, ix, b, h, t, &f.lse[(std::size_t(b) * s.NH + h) * s.T + t]);
        double* o = &f.out[ix.o(b, t, h)];
        for (int j = 0; j <= t; ++j) {
          const double* v = &qkv[ix.v(b, j, kvh)];
          for (int d = 0; d < s.hs; ++d) o[d] += p[std::size_t(j)] * v[d];
        }
      }
  return f;
}

std::vector<double> attention_backward(const std::vector<double>& qkv, const std::vector<double>& dout,
                                       const AttentionShape& s) {
  const Index ix{s};
  const double scale = 1.0 / std::sqrt(double(s.hs));
  std::vector<double> d(qkv.size(), 0.0);
  for (int b = 0; b < s.B; ++b)
    for (int h = 0; h < s.NH; ++h)
      for (int t = 0; t < s.T; ++t) {
        const int kvh = h / (s.NH / s.KVH);
        double lse = 0.0;
        const auto p = probabilities(qkv, ix, b, h, t, &lse);
        const double* g = &dout[ix.o(b, t, h)];
        // dP_j = dout . v_j; dS_j = P_j (dP_j - sum_i P_i dP_i), the softmax's Jacobian applied to dP.
        std::vector<double> dp(p.size());
        double delta = 0.0;
        for (int j = 0; j <= t; ++j)
          delta += p[std::size_t(j)] * (dp[std::size_t(j)] = dot(g, &qkv[ix.v(b, j, kvh)], s.hs));
        double* dq = &d[ix.q(b, t, h)];
        const double* q = &qkv[ix.q(b, t, h)];
        for (int j = 0; j <= t; ++j) {
          const double pj = p[std::size_t(j)], ds = scale * pj * (dp[std::size_t(j)] - delta);
          const double* k = &qkv[ix.k(b, j, kvh)];
          double* dk = &d[ix.k(b, j, kvh)];
          double* dv = &d[ix.v(b, j, kvh)];
          for (int e = 0; e < s.hs; ++e) {
            dq[e] += ds * k[e];
            dk[e] += ds * q[e];
            dv[e] += pj * g[e];
          }
        }
      }
  return d;
}

}  // namespace zeropp::emu
