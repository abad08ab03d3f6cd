#pragma once
// Helpers shared by the trainer's unit tests: host <-> backend copies and deterministic random fill.
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "e2e/backend/backend.hpp"
#include "e2e/model/gpt_config.hpp"

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

// sum(out * r) in double: the scalar objective whose gradient w.r.t. out is r.
inline double dot(const std::vector<float>& out, const std::vector<float>& r) {
  double s = 0.0;
  for (std::size_t i = 0; i < out.size(); ++i) s += static_cast<double>(out[i]) * r[i];
  return s;
}

// Central differences (step 1e-2 on O(1) fp32 inputs) of `objective` w.r.t. every element of x (host copy re-read by
// the objective).
inline std::vector<double> numeric_grad(std::vector<float>& x, const std::function<double()>& objective) {
  constexpr float kStep = 1e-2f;
  std::vector<double> g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float keep = x[i];
    x[i] = keep + kStep;
    const double up = objective();
    x[i] = keep - kStep;
    const double down = objective();
    x[i] = keep;
    g[i] = (up - down) / (2.0 * kStep);
  }
  return g;
}

inline std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// A tiny model with Llama layers (RMSNorm, SwiGLU, no biases), 4 query heads over 2 KV heads (tp = 2 gives each rank
// 2 and 1), RoPE with Llama 3's base and an untied head; flash or unfused attention.
inline GptConfig tiny_llama(bool flash) {
  GptConfig g;
  g.L = 2;
  g.C = 16;
  g.NH = 4;
  g.KVH = 2;
  g.T = 6;
  g.V = 11;
  g.F = 24;
  g.llama = true;
  g.tied = false;
  g.rope = true;
  g.rope_theta = 500000;
  g.flash = flash;
  return g;
}

// The model of the synthetic-task training tests (unit_model.cpp SyntheticLossFalls, unit_fp8.cpp): GPT layers,
// L=2, C=32, 4 heads, T=16, V=64, F=128.
inline GptConfig synthetic_task_model() {
  GptConfig g;
  g.L = 2;
  g.C = 32;
  g.NH = 4;
  g.T = 16;
  g.V = 64;
  g.F = 128;
  return g;
}

}  // namespace zeropp::e2e::testing
