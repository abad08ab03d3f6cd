#pragma once
// fp32 GEMMs through Eigen, the CPU trainer's GEMM engine, on row-major matrices as the trainer stores
// activations [tokens x features]. Single-threaded per rank: one rank per core, as the trainer runs.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include "microbench/gemm_shapes.hpp"

namespace zeropp::microbench {

void bench_eigen_gemm(benchmark::State& state, const GemmShape& g, MPI_Comm comm);

}  // namespace zeropp::microbench
