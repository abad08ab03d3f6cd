#include "microbench/cuda/gemm_bench.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

#include "cuda_util/bf16_convert.hpp"
#include "cuda_util/device_buffer.hpp"
#include "cuda_util/event_timer.hpp"
#include "cuda_util/random_fill.hpp"
#include "microbench/cuda/gemm_problem.hpp"
#include "microbench/gemm_check.hpp"
#include "microbench/mpi_world.hpp"
#include "microbench/suites.hpp"

namespace zeropp::microbench::cuda {
namespace {

using cuda_util::DeviceBuffer;

double bf16_bits_to_double(std::uint16_t bits) {
  const std::uint32_t wide = std::uint32_t{bits} << 16;
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}

// `count` bf16 values starting at `first`, `stride` elements apart, as doubles (one strided 2-D copy).
std::vector<double> gather(const __nv_bfloat16* first, long count, long stride) {
  std::vector<std::uint16_t> bits(static_cast<std::size_t>(count));
  CUDA_CHECK(cudaMemcpy2D(bits.data(), sizeof(std::uint16_t), first, static_cast<std::size_t>(stride) * 2,
                          sizeof(std::uint16_t), static_cast<std::size_t>(count), cudaMemcpyDeviceToHost));
  std::vector<double> out(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) out[i] = bf16_bits_to_double(bits[i]);
  return out;
}

// The spot check of gemm_check.hpp on device operands: only the sampled rows of op(A) and columns of op(B) are
// copied to the host (a row of A stored m x k is contiguous, one of A stored k x m is strided by m; likewise B).
double device_sample_error(const GemmShape& g, const __nv_bfloat16* a, const __nv_bfloat16* b, const __nv_bfloat16* c) {
  double worst = 0;
  for (const auto& [i, j] : gemm_sample_entries(g)) {
    const auto a_row = g.transpose_a ? gather(a + i, g.k, g.m) : gather(a + i * g.k, g.k, 1);
    const auto b_col = g.transpose_b ? gather(b + j * g.k, g.k, 1) : gather(b + j, g.k, g.n);
    const double got = gather(c + i * g.n + j, 1, 1)[0];
    worst = std::max(worst, gemm_entry_error(a_row, b_col, got));
  }
  return worst;
}

}  // namespace

void bench_gemm(benchmark::State& state, const GemmShape& g, e2e::cuda::LtMatmul& matmul, cudaStream_t stream,
                MPI_Comm comm) {
  // Inputs drawn on the device (cuda_util/random_fill.hpp): uploading host-drawn operands of a 70B model's layer
  // would take longer than timing it.
  DeviceBuffer<__nv_bfloat16> a(static_cast<std::size_t>(g.m * g.k)), b(static_cast<std::size_t>(g.k * g.n)),
      c(static_cast<std::size_t>(g.m * g.n));
  cuda_util::fill_uniform_bf16(a.data(), a.size(), 1, stream);
  cuda_util::fill_uniform_bf16(b.data(), b.size(), 2, stream);
  cuda_util::poison_bf16(c.data(), c.size(), stream);

  const e2e::cuda::MatmulProblem problem = matmul_problem(g);
  const auto run = [&] { matmul.run(problem, 1.0f, a.data(), b.data(), 0.0f, c.data(), nullptr, stream); };
  run();  // also the warm-up: the wrapper's plan for the shape, kernel load, first use of the workspace
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const double error = device_sample_error(g, a.data(), b.data(), c.data());
  // bf16 output rounding is 2^-9 relative; fp32 accumulation adds far less.
  if (!all_ranks_ok(error < 1e-2, comm)) {
    state.SkipWithError("GEMM result differs from the float64 reference");
    return;
  }

  const int inner = inner_repeats_for_flop(g.flop());
  for (int i = 0; i < inner; ++i) run();
  CUDA_CHECK(cudaStreamSynchronize(stream));
  cuda_util::EventTimer timer;
  double total = 0;
  for (auto _ : state) {
    timer.start(stream);
    for (int i = 0; i < inner; ++i) run();
    timer.stop(stream);
    const double seconds = max_over_ranks(timer.elapsed_seconds() / inner, comm);
    state.SetIterationTime(seconds);
    total += seconds;
  }
  const double mean = total / static_cast<double>(state.iterations());
  state.counters["flop"] = g.flop();
  state.counters["FLOP/s"] = g.flop() / mean;
  state.counters["m"] = static_cast<double>(g.m);
  state.counters["n"] = static_cast<double>(g.n);
  state.counters["k"] = static_cast<double>(g.k);
}

}  // namespace zeropp::microbench::cuda
