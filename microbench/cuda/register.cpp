// zeropp-bench-cuda: bf16 GEMMs through the trainer's cuBLASLt wrapper, the trainer's block passes, optimizer step and
// memory-bound kernels on its CUDA backend (trainer_suites.hpp), and NCCL collectives through the trainer's NCCL
// communicator, one MPI process per GPU.
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "cuda_util/check.hpp"
#include "cuda_util/local_device.hpp"
#include "e2e/backend/cuda/cuda_backend.hpp"
#include "e2e/backend/cuda/kernels.cuh"
#include "e2e/backend/cuda/lt_matmul.hpp"
#include "e2e/comm/mpi_communicator.hpp"
#include "e2e/comm/nccl_communicator.hpp"
#include "microbench/cuda/collective_bench.hpp"
#include "microbench/cuda/gemm_bench.hpp"
#include "microbench/model_shapes.hpp"
#include "microbench/suites.hpp"
#include "microbench/trainer_suites.hpp"

namespace zeropp::microbench {
namespace {

// What the registered benchmarks use; lives from register_suites() to release_suites().
struct CudaContext {
  cudaStream_t stream = nullptr;
  std::unique_ptr<e2e::cuda::LtMatmul> matmul;
  std::unique_ptr<e2e::NcclCommunicator> intra, inter;

  ~CudaContext() {
    intra.reset();
    inter.reset();
    matmul.reset();
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
  benchmark::RegisterBenchmark(
      name.c_str(),
      [g, ctx, comm](benchmark::State& state) { cuda::bench_gemm(state, g, *ctx->matmul, ctx->stream, comm); })
      ->Iterations(options.iterations)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
}

// The trainer's NCCL communicator over the ranks of `mpi` (duplicated: the communicator frees what it wraps).
std::unique_ptr<e2e::NcclCommunicator> nccl_over(MPI_Comm mpi, const std::string& group) {
  MPI_Comm own = MPI_COMM_NULL;
  MPI_Comm_dup(mpi, &own);
  return std::make_unique<e2e::NcclCommunicator>(std::make_unique<e2e::MpiCommunicator>(own, group));
}

void register_collectives(const std::string& level, e2e::NcclCommunicator& comm, MPI_Comm mpi, const Options& options) {
  for (Collective c :
       {Collective::all_gather, Collective::reduce_scatter, Collective::all_reduce, Collective::send_recv}) {
    const std::string name = std::string(analytic::collective_name(c)) + "/nccl/" + level;
    auto* bench = benchmark::RegisterBenchmark(
        name.c_str(), [c, &comm, mpi](benchmark::State& state) { cuda::bench_nccl_collective(state, c, comm, mpi); });
    bench->ArgName("bytes")->Iterations(options.iterations)->UseManualTime()->Unit(benchmark::kMicrosecond);
    for (std::size_t bytes : collective_sizes(options)) bench->Arg(static_cast<std::int64_t>(bytes));
  }
}

}  // namespace

std::string backend_name() { return "cuda"; }

// The CUDA backend's flash kernels by name (e2e/backend/cuda/kernels.cuh FlashKernel): mma.sync, WMMA, scalar.
std::vector<std::shared_ptr<const FlashKernelRun>> flash_kernels() {
  using e2e::Tensor;
  using e2e::cuda::bf16;
  std::vector<std::shared_ptr<const FlashKernelRun>> kernels;
  for (const auto& [name, kernel] :
       {std::pair{"mma", e2e::cuda::FlashKernel::mma}, std::pair{"wmma", e2e::cuda::FlashKernel::tensor_cores},
        std::pair{"scalar", e2e::cuda::FlashKernel::scalar}}) {
    auto run = std::make_shared<FlashKernelRun>();
    run->name = name;
    run->forward = [kernel](e2e::Backend& backend, Tensor out, Tensor lse, Tensor qkv, int B, int T, int NH, int KVH,
                            int hs) {
      e2e::cuda::flash_attention_forward(static_cast<bf16*>(out.data), static_cast<float*>(lse.data),
                                         static_cast<const bf16*>(qkv.data), B, T, NH, KVH, hs,
                                         dynamic_cast<e2e::cuda::CudaBackend&>(backend).stream(), kernel);
    };
    run->backward = [kernel](e2e::Backend& backend, Tensor dqkv, Tensor delta, Tensor dout, Tensor out, Tensor lse,
                             Tensor qkv, int B, int T, int NH, int KVH, int hs) {
      e2e::cuda::flash_attention_backward(static_cast<bf16*>(dqkv.data), static_cast<float*>(delta.data),
                                          static_cast<const bf16*>(dout.data), static_cast<const bf16*>(out.data),
                                          static_cast<const float*>(lse.data), static_cast<const bf16*>(qkv.data), B, T,
                                          NH, KVH, hs, dynamic_cast<e2e::cuda::CudaBackend&>(backend).stream(), kernel);
    };
    kernels.push_back(std::move(run));
  }
  return kernels;
}

// The CUDA backend's column-sum kernels by name (e2e/backend/cuda/kernels.cuh ColumnSumsKernel): scalar, vec16.
std::vector<std::shared_ptr<const ColumnSumsRun>> column_sums_kernels() {
  using e2e::Tensor;
  using e2e::cuda::bf16;
  std::vector<std::shared_ptr<const ColumnSumsRun>> kernels;
  for (const auto& [name, kernel] : {std::pair{"scalar", e2e::cuda::ColumnSumsKernel::scalar},
                                     std::pair{"vec16", e2e::cuda::ColumnSumsKernel::vec16}}) {
    auto run = std::make_shared<ColumnSumsRun>();
    run->name = name;
    run->run = [kernel](e2e::Backend& backend, const std::string& op, Tensor dweight, Tensor dbias, Tensor dout,
                        Tensor inp, Tensor mean, Tensor rstd, int N, int C) {
      const cudaStream_t stream = dynamic_cast<e2e::cuda::CudaBackend&>(backend).stream();
      auto* dw = static_cast<float*>(dweight.data);
      auto* db = static_cast<float*>(dbias.data);
      const auto* dy = static_cast<const bf16*>(dout.data);
      const auto* x = static_cast<const bf16*>(inp.data);
      const auto* m = static_cast<const float*>(mean.data);
      const auto* r = static_cast<const float*>(rstd.data);
      if (op == "bias_W")
        e2e::cuda::bias_backward(db, dy, N, C, stream, kernel);
      else if (op == "layernorm_W")
        e2e::cuda::layernorm_backward_weight(dw, db, dy, x, m, r, N, C, stream, kernel);
      else if (op == "rmsnorm_W")
        e2e::cuda::rmsnorm_backward_weight(dw, dy, x, r, N, C, stream, kernel);
      else
        throw std::invalid_argument("column_sums_kernels: no column-sum op " + op);
    };
    kernels.push_back(std::move(run));
  }
  return kernels;
}

void register_suites(const Options& options, const MpiWorld& world) {
  // The node's MPI communicator gives the local rank with any launcher (the trainer reads it from the launcher's
  // environment, which it needs before MPI groups exist).
  int local_rank = 0;
  MPI_Comm_rank(world.node(), &local_rank);
  cuda_util::select_local_device(local_rank);

  auto& ctx = context();
  ctx = std::make_unique<CudaContext>();
  CUDA_CHECK(cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking));
  ctx->matmul = std::make_unique<e2e::cuda::LtMatmul>();

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
      register_gemm(
          "gemm/cublaslt/bf16/" + g.name + "/s:" + std::to_string(seq) + "/d:" + std::to_string(options.gemm_head_dim),
          g, options, world);
    }
  }
  for (long n : options.gemm_square) {
    register_gemm("gemm/cublaslt/bf16/square/n:" + std::to_string(n), square_gemm(n), options, world);
  }
  for (const ModelCase& c : model_cases(options)) {
    for (const GemmShape& g : model_gemms(c.spec, c.tp, c.tokens()))
      register_gemm("gemm/cublaslt/bf16/" + g.name + "/" + c.name(), g, options, world);
  }
  register_trainer_suites(options, world, "cuda",
                          select_flash_kernels(flash_kernels(), options.attention_kernels, backend_name()),
                          column_sums_kernels());

  if (world.size() < 2) return;
  if (world.nodes() == 1) {
    ctx->intra = nccl_over(world.world(), "intra");
    register_collectives("intra", *ctx->intra, world.world(), options);
  } else {
    if (world.ranks_per_node() > 1) {
      ctx->intra = nccl_over(world.node(), "intra");
      register_collectives("intra", *ctx->intra, world.node(), options);
    }
    ctx->inter = nccl_over(world.world(), "inter");
    register_collectives("inter", *ctx->inter, world.world(), options);
  }
}

void release_suites() { context().reset(); }

}  // namespace zeropp::microbench
