// The column sums of the weight passes (bias, layer-norm and RMSNorm weights: e2e/backend/cuda/kernels.cuh), both
// kernels by name (scalar, vec16) against independent values, accumulating into non-zero fp32 outputs as the trainer
// does across micro-batches. Layer norm and RMSNorm against the CPU backend; the bias against a host sum in double.
// Shapes cover every path of vec16 (kernels.cu, column_sums_vec_kernel):
//   the trainer's (N 2048/4096 tokens x C 2048, 6144, 8192: h, 3h, 4h of GPT-3 1.3B): full 256-column blocks, row
//     slices of several unrolled passes per thread;
//   C 1000 (125 vectors: a last block of 29 vectors, columns past C dropped) with N 1001 and C 96 with N 37: a row
//     slice that ends inside an unrolled pass, so the per-row tail loop runs (rows a thread would drop without it
//     move a column sum by ~sqrt(rows dropped / N), far above the tolerance);
//   C 1001 and pointers 2 bytes off 16-byte alignment (dout, or inp only): the scalar fallback;
//   views 16 bytes into their buffers: vec16 on offset pointers.
// column_sums_vectorized is checked for every case, so the shapes are known to take the path they are meant for.
// Tolerance kF32Out (tests/e2e/cuda_test_fixture.hpp) norm-wise and per element (relative to |ref| + rms(ref)):
// the same fp32 products, summed in another order.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "e2e/backend/cuda/kernels.cuh"
#include "tests/e2e/cuda_test_fixture.hpp"

namespace zeropp::e2e {
namespace {

enum class Mode { bias, layernorm, rmsnorm };
const char* mode_name(Mode m) { return m == Mode::bias ? "bias" : m == Mode::layernorm ? "layernorm" : "rmsnorm"; }

struct ColumnCase {
  int N, C;
  int dout_off, inp_off;  // elements into the input buffers (8 = 16 bytes: still aligned; 1: misaligned)
};

TEST_F(CudaBackendTest, ColumnSumsBothKernelsAgainstCpuInEveryPath) {
  const std::vector<ColumnCase> cases{{2048, 2048, 0, 0}, {2048, 6144, 0, 0}, {2048, 8192, 0, 0}, {4096, 2048, 0, 0},
                                      {4096, 6144, 0, 0}, {4096, 8192, 0, 0}, {1001, 1000, 0, 0}, {37, 96, 0, 0},
                                      {1001, 1001, 0, 0}, {300, 2048, 1, 8},  {300, 2048, 8, 1},  {300, 2048, 8, 8},
                                      {1, 2048, 0, 0}};
  constexpr int kMaxRows = 4096, kPad = 8;
  constexpr std::size_t kMax = std::size_t{kMaxRows} * 8192 + kPad;
  // One pair of inputs for every case: a case's rows are the first N C elements after its offset.
  const auto dy = random_bf16(kMax, rng), x = random_bf16(kMax, rng, 2.0f);
  auto mean = random_bf16(kMaxRows, rng, 0.5f), rstd = random_bf16(kMaxRows, rng, 0.3f);
  for (auto& r : rstd) r = 1.0f + std::abs(r);
  Buffer gdy = up(dy), gx = up(x), gmean = up(mean, DType::f32), grstd = up(rstd, DType::f32);
  Buffer cdy = cpu_up(dy), cx = cpu_up(x), cmean = cpu_up(mean), crstd = cpu_up(rstd);
  const cuda::ColumnSumsKernel kernels[] = {cuda::ColumnSumsKernel::scalar, cuda::ColumnSumsKernel::vec16};

  for (const ColumnCase& k : cases) {
    const int N = k.N, C = k.C;
    const std::int64_t nc = std::int64_t{N} * C;
    const Tensor gd = gdy.view().slice(k.dout_off, nc), gi = gx.view().slice(k.inp_off, nc);
    const Tensor cd = cdy.view().slice(k.dout_off, nc), ci = cx.view().slice(k.inp_off, nc);
    const auto* d = static_cast<const cuda::bf16*>(gd.data);
    const auto* in = static_cast<const cuda::bf16*>(gi.data);
    const bool aligned = C % 8 == 0 && k.dout_off % 8 == 0;
    EXPECT_EQ(cuda::column_sums_vectorized(C, d, nullptr), aligned) << "bias, N " << N << " C " << C;
    EXPECT_EQ(cuda::column_sums_vectorized(C, d, in), aligned && k.inp_off % 8 == 0) << "N " << N << " C " << C;
    const auto dw0 = random_bf16(C, rng), db0 = random_bf16(C, rng);

    for (const Mode mode : {Mode::bias, Mode::layernorm, Mode::rmsnorm}) {
      // The independent values: dw (layer norm, RMSNorm) and db (bias, layer norm) after one accumulation.
      std::vector<float> want_w, want_b;
      if (mode == Mode::bias) {
        std::vector<double> s(db0.begin(), db0.end());
        for (int n = 0; n < N; ++n)
          for (int c = 0; c < C; ++c) s[std::size_t(c)] += dy[std::size_t(k.dout_off) + std::size_t(n) * C + c];
        want_b.assign(s.begin(), s.end());
      } else {
        Buffer cdw = cpu_up(dw0), cdb = cpu_up(db0);
        if (mode == Mode::layernorm)
          cpu.layernorm_backward_weight(cdw.view(), cdb.view(), cd, ci, cmean.view(), crstd.view(), N, C);
        else
          cpu.rmsnorm_backward_weight(cdw.view(), cd, ci, crstd.view(), N, C);
        want_w = cpu_down(cdw.view());
        if (mode == Mode::layernorm) want_b = cpu_down(cdb.view());
      }
      for (const cuda::ColumnSumsKernel kernel : kernels) {
        const std::string what = std::string(mode_name(mode)) +
                                 (kernel == cuda::ColumnSumsKernel::vec16 ? " vec16" : " scalar") + ", N " +
                                 std::to_string(N) + " C " + std::to_string(C) + " offsets " +
                                 std::to_string(k.dout_off) + "/" + std::to_string(k.inp_off);
        Buffer gdw = up(dw0, DType::f32), gdb = up(db0, DType::f32);
        if (mode == Mode::bias)
          cuda::bias_backward(fp(gdb), d, N, C, gpu->stream(), kernel);
        else if (mode == Mode::layernorm)
          cuda::layernorm_backward_weight(fp(gdw), fp(gdb), d, in, fp(gmean), fp(grstd), N, C, gpu->stream(), kernel);
        else
          cuda::rmsnorm_backward_weight(fp(gdw), d, in, fp(grstd), N, C, gpu->stream(), kernel);
        if (mode != Mode::bias) {
          const auto w = down(gdw.view());
          EXPECT_LT(rel_err(w, want_w), kF32Out) << "weight, " << what;
          EXPECT_LT(max_elem_err(w, want_w), kF32Out) << "weight, " << what;
        }
        if (mode != Mode::rmsnorm) {
          const auto b = down(gdb.view());
          EXPECT_LT(rel_err(b, want_b), kF32Out) << "bias, " << what;
          EXPECT_LT(max_elem_err(b, want_b), kF32Out) << "bias, " << what;
        }
      }
    }
  }
}

// No rows or no columns: nothing to add, nothing launched (a grid of zero blocks is a launch error), outputs untouched.
TEST_F(CudaBackendTest, ColumnSumsOfNoRowsLeaveTheOutputs) {
  const auto dw0 = random_bf16(16, rng), db0 = random_bf16(16, rng);
  Buffer gdy = up(random_bf16(64, rng)), gx = up(random_bf16(64, rng)), gstat = up(random_bf16(4, rng), DType::f32);
  Buffer gdw = up(dw0, DType::f32), gdb = up(db0, DType::f32);
  for (const cuda::ColumnSumsKernel kernel : {cuda::ColumnSumsKernel::scalar, cuda::ColumnSumsKernel::vec16}) {
    cuda::bias_backward(fp(gdb), bf(gdy), 0, 16, gpu->stream(), kernel);
    cuda::bias_backward(fp(gdb), bf(gdy), 4, 0, gpu->stream(), kernel);
    cuda::layernorm_backward_weight(fp(gdw), fp(gdb), bf(gdy), bf(gx), fp(gstat), fp(gstat), 0, 16, gpu->stream(),
                                    kernel);
    cuda::rmsnorm_backward_weight(fp(gdw), bf(gdy), bf(gx), fp(gstat), 0, 16, gpu->stream(), kernel);
  }
  EXPECT_EQ(down(gdb.view()), db0);
  EXPECT_EQ(down(gdw.view()), dw0);
}

}  // namespace
}  // namespace zeropp::e2e
