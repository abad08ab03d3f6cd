#include "microbench/cpu/eigen_gemm.hpp"

#include <limits>
#include <vector>

#include <Eigen/Core>

#include "microbench/gemm_check.hpp"
#include "microbench/mpi_world.hpp"
#include "microbench/suites.hpp"

namespace zeropp::microbench {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Map = Eigen::Map<RowMatrix>;
using ConstMap = Eigen::Map<const RowMatrix>;

// C = op(A) * op(B) with Eigen's lazy transposes, which its GEMM kernel packs without a copy.
void eigen_gemm(const GemmShape& g, const std::vector<float>& a, const std::vector<float>& b, std::vector<float>& c) {
  ConstMap A(a.data(), g.transpose_a ? g.k : g.m, g.transpose_a ? g.m : g.k);
  ConstMap B(b.data(), g.transpose_b ? g.n : g.k, g.transpose_b ? g.k : g.n);
  Map C(c.data(), g.m, g.n);
  if (g.transpose_a && g.transpose_b) {
    C.noalias() = A.transpose() * B.transpose();
  } else if (g.transpose_a) {
    C.noalias() = A.transpose() * B;
  } else if (g.transpose_b) {
    C.noalias() = A * B.transpose();
  } else {
    C.noalias() = A * B;
  }
}

}  // namespace

void bench_eigen_gemm(benchmark::State& state, const GemmShape& g, MPI_Comm comm) {
  std::vector<float> a(static_cast<std::size_t>(g.m * g.k));
  std::vector<float> b(static_cast<std::size_t>(g.k * g.n));
  std::vector<float> c(static_cast<std::size_t>(g.m * g.n), std::numeric_limits<float>::quiet_NaN());
  fill_uniform(a, 1);
  fill_uniform(b, 2);

  eigen_gemm(g, a, b, c);  // also the warm-up: first-touch of C, Eigen's packing buffers
  const double error = gemm_sample_error(g, a, b, c);
  if (!all_ranks_ok(error < 1e-4, comm)) {
    state.SkipWithError("GEMM result differs from the float64 reference");
    return;
  }

  const int inner = inner_repeats_for_flop(g.flop());
  double total = 0;
  for (auto _ : state) {
    const double start = MPI_Wtime();
    for (int i = 0; i < inner; ++i) eigen_gemm(g, a, b, c);
    const double seconds = max_over_ranks((MPI_Wtime() - start) / inner, comm);
    state.SetIterationTime(seconds);
    total += seconds;
  }
  benchmark::DoNotOptimize(c.data());
  const double mean = total / static_cast<double>(state.iterations());
  state.counters["flop"] = g.flop();
  state.counters["FLOP/s"] = g.flop() / mean;
  state.counters["m"] = static_cast<double>(g.m);
  state.counters["n"] = static_cast<double>(g.n);
  state.counters["k"] = static_cast<double>(g.k);
}

}  // namespace zeropp::microbench
