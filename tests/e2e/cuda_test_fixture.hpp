#pragma once
// What the CUDA backend tests share (cuda_backend_test.cpp, cuda_column_sums_test.cpp): the fixture, inputs and
// tolerances of comparing the CUDA backend with the CPU backend on fresh random inputs.
// Inputs are drawn in fp32 and rounded to bf16 once; both backends see those same rounded values (the CPU in
// fp32), so the differences come only from the CUDA backend's bf16 outputs and its summation order.
// Tolerances (norm-wise relative error ||gpu - cpu|| / ||cpu||, NaN always fails):
//   kBf16Out  1e-2  bf16 outputs: one rounding (2^-9 relative) per stored intermediate, a few in a row
//                   (e.g. scores -> probabilities -> output in attention); METHOD.md's bf16 range 1e-3..1e-2.
//                   Attention is the tightest: emulating the backend's bf16 roundings (S, P, out; dV, dP, dS,
//                   dQ, dK) on the CPU at this test's shape (T=24, hs=16), the worst of 200 random draws was
//                   2.8e-3 (probabilities), 3.7e-3 (output), 5.3e-3 (dq, dk, dv) against fp32.
//   kF32Out   1e-4  fp32 outputs of fp32 arithmetic on identical inputs (weight gradients, AdamW, sums): only
//                   the order of fp32 additions differs (atomics, GEMM tiling).
// Every output that is overwritten is poisoned (NaN) first, so an element the GPU never writes fails the check.
// Without a GPU every test skips with a message (CI machines have none).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "cuda_util/local_device.hpp"
#include "e2e/backend/cpu_backend.hpp"
#include "e2e/backend/cuda/cuda_backend.hpp"
#include "e2e/backend/cuda/kernels.cuh"

namespace zeropp::e2e {

constexpr double kBf16Out = 1e-2;
constexpr double kF32Out = 1e-4;

inline float round_bf16(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;  // round to nearest even
  float y;
  std::memcpy(&y, &bits, 4);
  return y;
}
inline std::uint16_t bf16_bits(float x) {
  std::uint32_t bits;
  const float r = round_bf16(x);
  std::memcpy(&bits, &r, 4);
  return static_cast<std::uint16_t>(bits >> 16);
}

inline std::vector<float> random_bf16(std::size_t n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = round_bf16(d(rng));
  return v;
}

inline double rel_err(const std::vector<float>& got, const std::vector<float>& ref) {
  if (got.size() != ref.size()) return std::numeric_limits<double>::infinity();
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return std::numeric_limits<double>::infinity();
    num += (double(got[i]) - ref[i]) * (double(got[i]) - ref[i]);
    den += double(ref[i]) * ref[i];
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
}

class CudaBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_util::device_count() == 0)
      GTEST_SKIP() << "no CUDA device (cudaGetDeviceCount reports none or fails): the CUDA backend runs only on a GPU";
    gpu = std::make_unique<cuda::CudaBackend>();
    rng.seed(std::random_device{}());  // fresh inputs every run: the kernels must be right on any input
  }

  // GPU buffer holding `host` as `dt` (bf16 values are exact: host values are already bf16-rounded).
  Buffer up(const std::vector<float>& host, DType dt = DType::bf16) {
    Buffer b(*gpu, static_cast<std::int64_t>(host.size()), dt);
    if (dt == DType::bf16) {
      std::vector<std::uint16_t> bits(host.size());
      for (std::size_t i = 0; i < host.size(); ++i) bits[i] = bf16_bits(host[i]);
      gpu->copy_from_host(b.view(), bits.data());
    } else {
      gpu->copy_from_host(b.view(), host.data());
    }
    return b;
  }
  Buffer poisoned(std::size_t n, DType dt = DType::bf16) {
    return up(std::vector<float>(n, std::numeric_limits<float>::quiet_NaN()), dt);
  }
  Buffer up_i32(const std::vector<std::int32_t>& host, Backend& be) {
    Buffer b(be, static_cast<std::int64_t>(host.size()), DType::i32);
    be.copy_from_host(b.view(), host.data());
    return b;
  }
  std::vector<float> down(Tensor t) {
    gpu->synchronize();
    std::vector<float> v(static_cast<std::size_t>(t.numel));
    if (t.dtype == DType::bf16) {
      std::vector<std::uint16_t> bits(v.size());
      gpu->copy_to_host(bits.data(), t);
      for (std::size_t i = 0; i < v.size(); ++i) {
        const std::uint32_t w = std::uint32_t{bits[i]} << 16;
        std::memcpy(&v[i], &w, 4);
      }
    } else {
      gpu->copy_to_host(v.data(), t);
    }
    return v;
  }
  Buffer cpu_up(const std::vector<float>& host) {
    Buffer b(cpu, static_cast<std::int64_t>(host.size()));
    cpu.copy_from_host(b.view(), host.data());
    return b;
  }
  std::vector<float> cpu_down(Tensor t) {
    std::vector<float> v(static_cast<std::size_t>(t.numel));
    cpu.copy_to_host(v.data(), t);
    return v;
  }

  CpuBackend cpu{1};
  std::unique_ptr<cuda::CudaBackend> gpu;
  std::mt19937 rng;
};

// Largest |got - ref| / (|ref| + rms(ref)); infinity for a non-finite value (never written: NaN poison).
inline double max_elem_err(const std::vector<float>& got, const std::vector<float>& ref) {
  if (got.size() != ref.size() || ref.empty()) return std::numeric_limits<double>::infinity();
  double ss = 0.0;
  for (float r : ref) ss += double(r) * r;
  const double rms = std::sqrt(ss / double(ref.size()));
  double worst = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, std::abs(double(got[i]) - ref[i]) / (std::abs(double(ref[i])) + rms + 1e-30));
  }
  return worst;
}

inline cuda::bf16* bf(Buffer& b) { return static_cast<cuda::bf16*>(b.view().data); }
inline float* fp(Buffer& b) { return static_cast<float*>(b.view().data); }

}  // namespace zeropp::e2e
