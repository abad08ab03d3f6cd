#include "microbench/layer_bench.hpp"

#include <cmath>
#include <memory>

#include "e2e/backend/backend.hpp"
#include "e2e/data/token_batch.hpp"
#include "e2e/model/chunk.hpp"
#include "e2e/model/flops.hpp"
#include "microbench/backend_data.hpp"
#include "microbench/gemm_check.hpp"
#include "microbench/mpi_world.hpp"

namespace zeropp::microbench {

const char* layer_pass_name(LayerPass p) {
  switch (p) {
    case LayerPass::F:
      return "F";
    case LayerPass::B:
      return "B";
    case LayerPass::W:
      return "W";
  }
  return "?";
}

std::string LayerShape::name() const {
  return "h:" + std::to_string(h) + "/a:" + std::to_string(a) + "/s:" + std::to_string(s) + "/b:" + std::to_string(b);
}

double layer_pass_flop(const LayerShape& g, LayerPass p) {
  const double bs = static_cast<double>(g.b) * g.s, h = static_cast<double>(g.h);
  const double linear = 24.0 * bs * h * h, attention = 4.0 * bs * g.s * h;
  switch (p) {
    case LayerPass::F:
      return linear + attention;
    case LayerPass::B:
      return linear + 2.0 * attention;
    case LayerPass::W:
      return linear;
  }
  return 0;
}

void bench_trainer_layer(benchmark::State& state, const std::string& backend_name, const LayerShape& g, LayerPass pass,
                         MPI_Comm comm) {
  using namespace e2e;
  // One block, neither first nor last stage: no embedding, no head. V only has to be valid.
  const GptConfig config{1,  static_cast<int>(g.h),    static_cast<int>(g.a), static_cast<int>(g.s),
                         64, static_cast<int>(4 * g.h)};
  std::unique_ptr<Backend> backend = make_backend(backend_name, 1);
  const DType dt = backend->compute_dtype();
  Chunk chunk(*backend, config, ChunkSpec{0, 1, false, false, static_cast<int>(g.b), 1});
  chunk.allocate_parameters();
  chunk.init_parameters(1);
  Buffer compute_params;  // the compute-dtype copy a bf16 backend's model reads
  if (dt != DType::f32) {
    const Tensor master = chunk.parameters();
    compute_params = Buffer(*backend, master.numel, dt);
    backend->convert(compute_params.view(), master, master.numel);
    chunk.bind_parameters(compute_params.view());
  }
  const SyntheticData data(config.V, 1);
  const TokenBatch batch = data.batch(0, 0, 1, static_cast<int>(g.b), config.T);
  const Buffer input = random_buffer(*backend, chunk.activation_numel(), dt, 3);
  const Buffer grad = random_buffer(*backend, chunk.activation_numel(), dt, 4);

  // Runs the passes before `pass` untimed, then `pass` timed; leaves no stash behind.
  auto run_once = [&]() {
    double start = 0;
    if (pass == LayerPass::F) start = MPI_Wtime();
    chunk.forward(0, batch, input.view());
    if (pass == LayerPass::B) {
      backend->synchronize();
      start = MPI_Wtime();
    }
    if (pass != LayerPass::F) chunk.backward_input(0, grad.view());
    if (pass == LayerPass::W) {
      backend->synchronize();
      start = MPI_Wtime();
    }
    if (pass == LayerPass::W) chunk.backward_weight(0);
    backend->synchronize();
    const double seconds = MPI_Wtime() - start;
    chunk.clear();
    return seconds;
  };

  backend->synchronize();
  run_once();  // warm-up: first touch of the stash buffers, Eigen's packing buffers, cuBLASLt's plans
  // The block must compute something finite: a NaN here is a broken build of the trainer, not a time.
  chunk.forward(0, batch, input.view());
  const bool finite = all_finite(*backend, chunk.output(0));
  chunk.clear();
  if (!all_ranks_ok(finite, comm)) {
    state.SkipWithError("trainer block forward produced non-finite output");
    return;
  }

  double total = 0;
  for (auto _ : state) {
    const double seconds = max_over_ranks(run_once(), comm);
    state.SetIterationTime(seconds);
    total += seconds;
  }
  const double flop = layer_pass_flop(g, pass);
  state.counters["flop"] = flop;
  state.counters["FLOP/s"] = benchmark::Counter(flop * static_cast<double>(state.iterations()) / total);
}

}  // namespace zeropp::microbench
