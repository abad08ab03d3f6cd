#pragma once
// MPI collectives (fp32, MPI_SUM), timed as nccl-tests times them: a barrier, `inner` operations back to back,
// the slowest rank's time divided by `inner`. Data is checked once before timing on every rank.
#include <cstddef>

#include <benchmark/benchmark.h>
#include <mpi.h>

#include "microbench/collective_data.hpp"

namespace zeropp::microbench {

// Runs collective c once on `comm` with the given buffers (counts as collective_data.hpp defines them).
void run_mpi_collective(Collective c, const float* send, float* recv, std::size_t count, MPI_Comm comm);

// The Google Benchmark body: state.range(0) is S in bytes; `iterations` is fixed by the registration.
void bench_mpi_collective(benchmark::State& state, Collective c, MPI_Comm comm);

}  // namespace zeropp::microbench
