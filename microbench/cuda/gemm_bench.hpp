#pragma once
// The Google Benchmark body of a bf16 GEMM through the trainer's cuBLASLt wrapper (e2e::cuda::LtMatmul, the
// object CudaBackend runs its GEMMs with): random inputs drawn on the device (never zeros), a poisoned output
// checked against a float64 reference on a sample of entries, then `inner` GEMMs per timed iteration between CUDA
// events, the slowest rank's time.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>
#include <mpi.h>

#include "e2e/backend/cuda/lt_matmul.hpp"
#include "microbench/gemm_shapes.hpp"

namespace zeropp::microbench::cuda {

void bench_gemm(benchmark::State& state, const GemmShape& g, e2e::cuda::LtMatmul& matmul, cudaStream_t stream,
                MPI_Comm comm);

}  // namespace zeropp::microbench::cuda
