#include "microbench/trainer_suites.hpp"

#include <benchmark/benchmark.h>

#include "microbench/attention_bench.hpp"
#include "microbench/kernel_bench.hpp"
#include "microbench/layer_bench.hpp"
#include "microbench/optimizer_bench.hpp"

namespace zeropp::microbench {

void register_trainer_suites(const Options& options, const MpiWorld& world, const std::string& backend,
                             const std::vector<std::shared_ptr<const FlashKernelRun>>& flash_kernels,
                             const std::vector<std::shared_ptr<const ColumnSumsRun>>& column_kernels) {
  MPI_Comm comm = world.world();
  // The dtype a backend computes in (e2e Backend::compute_dtype), named as zeropp calibrate reads it.
  const std::string dtype = backend == "cpu" ? "fp32" : "bf16";
  for (long h : options.layer_hidden) {
    const LayerShape shape{h, h / options.layer_head_dim, options.layer_seq, options.layer_batch};
    for (LayerPass pass : {LayerPass::F, LayerPass::B, LayerPass::W}) {
      const std::string name = "layer/trainer/" + dtype + "/" + layer_pass_name(pass) + "/" + shape.name();
      benchmark::RegisterBenchmark(name.c_str(),
                                   [backend, shape, pass, comm](benchmark::State& state) {
                                     bench_trainer_layer(state, backend, shape, pass, comm);
                                   })
          ->Iterations(options.iterations)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  for (long params : options.optimizer_params) {
    const std::string name = "optimizer/trainer/fp32/params:" + std::to_string(params);
    benchmark::RegisterBenchmark(
        name.c_str(),
        [backend, params, comm](benchmark::State& state) { bench_trainer_optimizer(state, backend, params, comm); })
        ->Iterations(options.iterations)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  for (const AttentionCase& shape :
       attention_cases(options.attention_heads, options.attention_kv_heads, options.attention_seq,
                       options.attention_head_dim, options.attention_batch)) {
    // The backend's flash kernels, its unfused core, then each named flash kernel.
    std::vector<AttentionCase> variants{shape, shape};
    variants[1].unfused = true;
    for (const auto& kernel : flash_kernels) {
      variants.push_back(shape);
      variants.back().kernel = kernel;
    }
    for (const AttentionCase& c : variants) {
      for (const bool backward : {false, true})
        benchmark::RegisterBenchmark(c.name(dtype, backward).c_str(),
                                     [backend, c, backward, comm](benchmark::State& state) {
                                       bench_attention(state, backend, c, backward, comm);
                                     })
            ->Iterations(options.iterations)
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
    }
  }
  for (const KernelCase& c :
       kernel_cases(options.kernel_rows, options.kernel_hidden, options.kernel_vocab, column_kernels)) {
    benchmark::RegisterBenchmark(c.name(backend, dtype).c_str(),
                                 [backend, c, comm](benchmark::State& state) { bench_kernel(state, backend, c, comm); })
        ->Iterations(options.iterations)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace zeropp::microbench
