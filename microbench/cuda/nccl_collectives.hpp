#pragma once
// NCCL collectives (fp32 sum), timed with CUDA events on one stream: `inner` operations back to back, the
// slowest rank's time divided by `inner` (nccl-tests' out-of-place numbers). Data checked once before timing.
#include <benchmark/benchmark.h>

#include "microbench/collective_data.hpp"
#include "microbench/cuda/nccl_comm.hpp"

namespace zeropp::microbench::cuda {

void run_nccl_collective(Collective c, const float* send, float* recv, std::size_t count, const NcclComm& comm,
                         cudaStream_t stream);

void bench_nccl_collective(benchmark::State& state, Collective c, const NcclComm& comm, cudaStream_t stream);

}  // namespace zeropp::microbench::cuda
