#pragma once
// The suites an executable registers. zeropp-bench (CPU: Eigen GEMMs, MPI collectives) and zeropp-bench-cuda
// (cuBLASLt GEMMs, NCCL collectives) share main.cpp and each define register_suites() once.
//
// Benchmark names are what `zeropp calibrate` reads:
//   gemm/<backend>/<dtype>/<shape>/h:<h>/tokens:<s*b>      counters flop, FLOP/s, m, n, k
//   gemm/<backend>/<dtype>/attn_score|attn_context/s:<s>/d:<d>
//   gemm/<backend>/<dtype>/square/n:<n>
//   <collective>/<backend>/<level>/bytes:<S>              counters bytes, ranks, algbw_GBps, busbw_GBps
// with <level> "intra" (ranks of one node) or "inter" (a group that crosses nodes: the whole world).
#include <memory>
#include <string>
#include <vector>

#include "microbench/attention_bench.hpp"
#include "microbench/kernel_bench.hpp"
#include "microbench/mpi_world.hpp"
#include "microbench/options.hpp"

namespace zeropp::microbench {

// "cpu" or "cuda": recorded in the JSON context as zeropp_backend.
std::string backend_name();

// The backend's flash kernels that --zeropp_attention_kernels may name (cpu: none; cuda: mma, wmma, scalar;
// select_flash_kernels picks them).
std::vector<std::shared_ptr<const FlashKernelRun>> flash_kernels();

// The backend's column-sum kernels, each measured by name at the kernel cases (cpu: none; cuda: scalar, vec16;
// kernel_bench.hpp).
std::vector<std::shared_ptr<const ColumnSumsRun>> column_sums_kernels();

void register_suites(const Options& options, const MpiWorld& world);
// Frees what register_suites() set up (GPU handles, NCCL communicators), before MPI_Finalize.
void release_suites();

// Collective sizes S: options.coll_min_bytes, times coll_step, up to coll_max_bytes.
std::vector<std::size_t> collective_sizes(const Options& options);

// Google Benchmark iterations for a GEMM or collective: each timed iteration runs `inner` operations
// back to back (like nccl-tests' -n) so that microsecond-scale ones are not dominated by timer and sync
// overhead; derived from the work alone so that every rank computes the same number.
int inner_repeats_for_flop(double flop);
int inner_repeats_for_bytes(double bytes);

}  // namespace zeropp::microbench
