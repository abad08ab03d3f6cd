#include "microbench/cpu/attention_bench.hpp"

#include <cmath>
#include <memory>
#include <vector>

#include "e2e/backend/backend.hpp"
#include "microbench/gemm_check.hpp"
#include "microbench/mpi_world.hpp"

namespace zeropp::microbench {

void bench_trainer_attention(benchmark::State& state, const LayerShape& g, bool flash, LayerPass pass, MPI_Comm comm) {
  using namespace e2e;
  const int B = static_cast<int>(g.b), T = static_cast<int>(g.s), NH = static_cast<int>(g.a);
  const int hs = static_cast<int>(g.h / g.a), C = static_cast<int>(g.h);
  const std::int64_t nqkv = std::int64_t{B} * T * 3 * C, nout = std::int64_t{B} * T * C;
  std::unique_ptr<Backend> be = make_backend("cpu", 1);
  Buffer qkv(*be, nqkv), out(*be, nout), dout(*be, nout), dqkv(*be, nqkv);
  std::vector<float> host(static_cast<std::size_t>(nqkv));
  fill_uniform(host, 5);
  be->copy_from_host(qkv.view(), host.data());
  host.resize(static_cast<std::size_t>(nout));
  fill_uniform(host, 6);
  be->copy_from_host(dout.view(), host.data());
  const std::size_t base = be->bytes_in_use();
  be->reset_peak();
  // What the forward keeps for the backward: the probabilities (unfused) or the log-sum-exp (flash).
  Buffer saved(*be, flash ? std::int64_t{B} * NH * T : std::int64_t{B} * NH * T * T);
  auto forward = [&] {
    if (flash)
      be->flash_attention_forward(out.view(), saved.view(), qkv.view(), B, T, NH, NH, hs);
    else
      be->grouped_attention_forward(out.view(), saved.view(), qkv.view(), B, T, NH, NH, hs);
  };
  auto backward = [&] {
    if (flash)
      be->flash_attention_backward(dqkv.view(), dout.view(), out.view(), saved.view(), qkv.view(), B, T, NH, NH, hs);
    else
      be->grouped_attention_backward(dqkv.view(), dout.view(), qkv.view(), saved.view(), B, T, NH, NH, hs);
  };
  forward();
  if (pass != LayerPass::F) backward();
  const double held = static_cast<double>(be->peak_bytes() - base);
  std::vector<float> check(static_cast<std::size_t>(pass == LayerPass::F ? nout : nqkv));
  be->copy_to_host(check.data(), pass == LayerPass::F ? out.view() : dqkv.view());
  bool finite = true;
  for (float x : check) finite = finite && std::isfinite(x);
  if (!all_ranks_ok(finite, comm)) {
    state.SkipWithError("attention produced non-finite output");
    return;
  }
  double total = 0;
  for (auto _ : state) {
    const double start = MPI_Wtime();
    if (pass == LayerPass::F)
      forward();
    else
      backward();
    const double seconds = max_over_ranks(MPI_Wtime() - start, comm);
    state.SetIterationTime(seconds);
    total += seconds;
  }
  const double flop = (pass == LayerPass::F ? 4.0 : 8.0) * B * static_cast<double>(T) * T * C;
  state.counters["flop"] = flop;
  state.counters["FLOP/s"] = benchmark::Counter(flop * static_cast<double>(state.iterations()) / total);
  state.counters["held_bytes"] = held;
}

}  // namespace zeropp::microbench
