#include "microbench/optimizer_bench.hpp"

#include <cmath>
#include <vector>

#include "e2e/backend/backend.hpp"
#include "microbench/gemm_check.hpp"
#include "microbench/mpi_world.hpp"

namespace zeropp::microbench {

void bench_trainer_optimizer(benchmark::State& state, const std::string& backend_name, long params, MPI_Comm comm) {
  using namespace e2e;
  std::unique_ptr<Backend> backend = make_backend(backend_name, 1);
  Buffer p(*backend, params), g(*backend, params), m(*backend, params), v(*backend, params);
  std::vector<float> host(static_cast<std::size_t>(params));
  fill_uniform(host, 5);
  backend->copy_from_host(p.view(), host.data());
  fill_uniform(host, 6);
  backend->copy_from_host(g.view(), host.data());
  backend->fill_zero(m.view());
  backend->fill_zero(v.view());

  AdamWArgs args;  // the trainer's defaults (e2e/optim/adamw.hpp), weight decay on: the slower, common case
  args.lr = 1e-3f;
  args.weight_decay = 0.1f;
  int t = 0;
  auto step = [&]() {
    ++t;
    args.bias_correction1 = static_cast<float>(1.0 - std::pow(0.9, t));
    args.bias_correction2 = static_cast<float>(1.0 - std::pow(0.95, t));
    const double start = MPI_Wtime();
    const double sum = backend->sum_squares(g.view());
    args.grad_scale = static_cast<float>(1.0 / (std::sqrt(sum) + 1e-6));  // clipping to norm 1
    backend->adamw_update(p.view(), g.view(), m.view(), v.view(), params, args);
    backend->synchronize();
    return MPI_Wtime() - start;
  };

  step();  // warm-up: first touch of m and v
  // The update must stay finite: a NaN here is a broken optimizer kernel, not a time.
  backend->copy_to_host(host.data(), p.view());
  bool finite = true;
  for (float x : host) finite = finite && std::isfinite(x);
  if (!all_ranks_ok(finite, comm)) {
    state.SkipWithError("AdamW step produced non-finite parameters");
    return;
  }

  double total = 0;
  for (auto _ : state) {
    const double seconds = max_over_ranks(step(), comm);
    state.SetIterationTime(seconds);
    total += seconds;
  }
  state.counters["params"] = static_cast<double>(params);
  state.counters["params/s"] = static_cast<double>(params) * static_cast<double>(state.iterations()) / total;
}

}  // namespace zeropp::microbench
