#pragma once
// The Google Benchmark body of a cuBLASLt bf16 GEMM: random inputs (never zeros), a poisoned output checked
// against a float64 reference on a sample of entries, then `inner` GEMMs per timed iteration between CUDA
// events, the slowest rank's time.
#include <benchmark/benchmark.h>
#include <cublasLt.h>
#include <mpi.h>

#include "microbench/gemm_shapes.hpp"

namespace zeropp::microbench::cuda {

void bench_cublaslt_gemm(benchmark::State& state, const GemmShape& g, cublasLtHandle_t handle, cudaStream_t stream,
                         MPI_Comm comm);

}  // namespace zeropp::microbench::cuda
