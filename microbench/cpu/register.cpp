// zeropp-bench (CPU): Eigen fp32 GEMMs of transformer shapes, the trainer's block F/B/W passes, its optimizer
// step and memory-bound kernels (trainer_suites.hpp), its attention kernels (unfused and flash), and MPI
// collectives.
#include <string>

#include "microbench/cpu/attention_bench.hpp"
#include "microbench/cpu/eigen_gemm.hpp"
#include "microbench/cpu/mpi_collectives.hpp"
#include "microbench/model_shapes.hpp"
#include "microbench/suites.hpp"
#include "microbench/trainer_suites.hpp"

namespace zeropp::microbench {
namespace {

void register_gemm(const std::string& name, const GemmShape& g, const Options& options, const MpiWorld& world) {
  MPI_Comm comm = world.world();
  benchmark::RegisterBenchmark(name.c_str(), [g, comm](benchmark::State& state) { bench_eigen_gemm(state, g, comm); })
      ->Iterations(options.iterations)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
}

// The trainer's causal attention alone, unfused and flash-style, forward and backward (attention_bench.hpp).
void register_attention(const Options& options, const MpiWorld& world) {
  MPI_Comm comm = world.world();
  for (long h : options.layer_hidden) {
    const LayerShape shape{h, h / options.layer_head_dim, options.layer_seq, options.layer_batch};
    for (bool flash : {false, true}) {
      for (LayerPass pass : {LayerPass::F, LayerPass::B}) {
        const std::string name = std::string("attention/trainer/fp32/") + (flash ? "flash/" : "unfused/") +
                                 layer_pass_name(pass) + "/" + shape.name();
        benchmark::RegisterBenchmark(name.c_str(),
                                     [shape, flash, pass, comm](benchmark::State& state) {
                                       bench_trainer_attention(state, shape, flash, pass, comm);
                                     })
            ->Iterations(options.iterations)
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
}

void register_collectives(const std::string& level, MPI_Comm comm, const Options& options) {
  for (Collective c :
       {Collective::all_gather, Collective::reduce_scatter, Collective::all_reduce, Collective::send_recv}) {
    const std::string name = std::string(analytic::collective_name(c)) + "/mpi/" + level;
    auto* bench = benchmark::RegisterBenchmark(
        name.c_str(), [c, comm](benchmark::State& state) { bench_mpi_collective(state, c, comm); });
    bench->ArgName("bytes")->Iterations(options.iterations)->UseManualTime()->Unit(benchmark::kMicrosecond);
    for (std::size_t bytes : collective_sizes(options)) bench->Arg(static_cast<std::int64_t>(bytes));
  }
}

}  // namespace

std::string backend_name() { return "cpu"; }

std::vector<std::shared_ptr<const FlashKernelRun>> flash_kernels() { return {}; }       // one flash kernel: its choice
std::vector<std::shared_ptr<const ColumnSumsRun>> column_sums_kernels() { return {}; }  // one loop each: no choice

void release_suites() {}  // the CPU suites hold nothing between benchmarks

void register_suites(const Options& options, const MpiWorld& world) {
  for (long h : options.gemm_hidden) {
    for (long tokens : options.gemm_tokens) {
      for (const GemmShape& g : transformer_layer_gemms(h, tokens)) {
        register_gemm("gemm/eigen/fp32/" + g.name + "/h:" + std::to_string(h) + "/tokens:" + std::to_string(tokens), g,
                      options, world);
      }
    }
  }
  for (long seq : options.gemm_seq) {
    for (const GemmShape& g : attention_gemms(seq, options.gemm_head_dim)) {
      register_gemm(
          "gemm/eigen/fp32/" + g.name + "/s:" + std::to_string(seq) + "/d:" + std::to_string(options.gemm_head_dim), g,
          options, world);
    }
  }
  for (long n : options.gemm_square) {
    register_gemm("gemm/eigen/fp32/square/n:" + std::to_string(n), square_gemm(n), options, world);
  }
  for (const ModelCase& c : model_cases(options)) {
    for (const GemmShape& g : model_gemms(c.spec, c.tp, c.tokens()))
      register_gemm("gemm/eigen/fp32/" + g.name + "/" + c.name(), g, options, world);
  }
  register_trainer_suites(options, world, "cpu",
                          select_flash_kernels(flash_kernels(), options.attention_kernels, backend_name()));
  register_attention(options, world);
  // One rank has nobody to talk to. One node: the world is the intra-node group. Several nodes: the node's
  // ranks measure the intra-node link, the world the inter-node one.
  if (world.size() < 2) return;
  if (world.nodes() == 1) {
    register_collectives("intra", world.world(), options);
  } else {
    if (world.ranks_per_node() > 1) register_collectives("intra", world.node(), options);
    register_collectives("inter", world.world(), options);
  }
}

}  // namespace zeropp::microbench
