// zeropp-bench-cuda: cuBLASLt bf16 GEMMs and NCCL collectives, one MPI process per GPU.
#include <memory>
#include <string>

#include "microbench/cuda/cublaslt_bench.hpp"
#include "microbench/cuda/nccl_collectives.hpp"
#include "microbench/suites.hpp"

namespace zeropp::microbench {
namespace {

// What the registered benchmarks use; lives from register_suites() to release_suites().
struct CudaContext {
  cudaStream_t stream = nullptr;
  cublasLtHandle_t cublaslt = nullptr;
  std::unique_ptr<cuda::NcclComm> intra, inter;

  ~CudaContext() {
    intra.reset();
    inter.reset();
    if (cublaslt) cublasLtDestroy(cublaslt);
    if (stream) cudaStreamDestroy(stream);
  }
};

std::unique_ptr<CudaContext>& context() {
  static std::unique_ptr<CudaContext> ctx;
  return ctx;
}

void register_gemm(const std::string& name, const GemmShape& g, const Options& options, const MpiWorld& world) {
  CudaContext* ctx = context().get();
  MPI_Comm comm = world.world();
  benchmark::RegisterBenchmark(name.c_str(),
                               [g, ctx, comm](benchmark::State& state) {
                                 cuda::bench_cublaslt_gemm(state, g, ctx->cublaslt, ctx->stream, comm);
                               })
      ->Iterations(options.iterations)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
}

void register_collectives(const std::string& level, const cuda::NcclComm& comm, const Options& options) {
  CudaContext* ctx = context().get();
  for (Collective c : {Collective::all_gather, Collective::reduce_scatter, Collective::all_reduce,
                       Collective::send_recv}) {
    const std::string name = std::string(analytic::collective_name(c)) + "/nccl/" + level;
    auto* bench = benchmark::RegisterBenchmark(name.c_str(), [c, &comm, ctx](benchmark::State& state) {
      cuda::bench_nccl_collective(state, c, comm, ctx->stream);
    });
    bench->ArgName("bytes")->Iterations(options.iterations)->UseManualTime()->Unit(benchmark::kMicrosecond);
    for (std::size_t bytes : collective_sizes(options)) bench->Arg(static_cast<std::int64_t>(bytes));
  }
}

}  // namespace

std::string backend_name() { return "cuda"; }

void register_suites(const Options& options, const MpiWorld& world) {
  int devices = 0;
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  if (devices == 0) throw std::runtime_error("no CUDA device visible");
  int local_rank = 0;
  MPI_Comm_rank(world.node(), &local_rank);
  CUDA_CHECK(cudaSetDevice(local_rank % devices));

  auto& ctx = context();
  ctx = std::make_unique<CudaContext>();
  CUDA_CHECK(cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking));
  CUBLAS_CHECK(cublasLtCreate(&ctx->cublaslt));

  for (long h : options.gemm_hidden) {
    for (long tokens : options.gemm_tokens) {
      for (const GemmShape& g : transformer_layer_gemms(h, tokens)) {
        register_gemm("gemm/cublaslt/bf16/" + g.name + "/h:" + std::to_string(h) + "/tokens:" + std::to_string(tokens),
                      g, options, world);
      }
    }
  }
  for (long seq : options.gemm_seq) {
    for (const GemmShape& g : attention_gemms(seq, options.gemm_head_dim)) {
      register_gemm("gemm/cublaslt/bf16/" + g.name + "/s:" + std::to_string(seq) + "/d:" +
                        std::to_string(options.gemm_head_dim),
                    g, options, world);
    }
  }
  for (long n : options.gemm_square) {
    register_gemm("gemm/cublaslt/bf16/square/n:" + std::to_string(n), square_gemm(n), options, world);
  }

  if (world.size() < 2) return;
  if (world.nodes() == 1) {
    ctx->intra = std::make_unique<cuda::NcclComm>(world.world());
    register_collectives("intra", *ctx->intra, options);
  } else {
    if (world.ranks_per_node() > 1) {
      ctx->intra = std::make_unique<cuda::NcclComm>(world.node());
      register_collectives("intra", *ctx->intra, options);
    }
    ctx->inter = std::make_unique<cuda::NcclComm>(world.world());
    register_collectives("inter", *ctx->inter, options);
  }
}

void release_suites() { context().reset(); }

}  // namespace zeropp::microbench
