#pragma once
// The memory-bound kernels of a trainer backend (e2e/backend/backend.hpp), one by one: layer norm forward and
// backward, GELU forward and backward, the residual add, softmax cross-entropy forward and backward, and the AdamW
// update. The cost model prices these by bytes over an achievable memory bandwidth; this suite measures that
// bandwidth per kernel on the backend the trainer runs (CUDA: bf16 activations, fp32 statistics, gradients of
// weights and optimizer state, as CudaBackend keeps them).
//
// The column sums of the weight passes (the bias gradient linear_backward_weight computes beside its GEMM, and the
// layer-norm and RMSNorm weight gradients: ops bias_W, layernorm_W, rmsnorm_W on [N, C]) are measured per kernel of
// the backend that has several (ColumnSumsRun; CUDA: scalar and vec16, microbench/cuda/register.cpp), so that one run
// sets them beside each other; a backend without named kernels has no such cases.
//
// Names: kernel/<backend>/<dtype>/<op>/rows:N/cols:C (adamw: kernel/<backend>/fp32/adamw/params:P; a named
// column-sum kernel: <op>-<kernel>, e.g. kernel/cuda/bf16/bias_W-vec16/rows:8192/cols:4096); counters
// bytes (the fewest bytes the operation must move: each input read once, each output written once, so a kernel
// pair that reads its input twice shows as a lower GB/s) and GB/s (1e9 bytes per second). `zeropp calibrate` leaves
// them out (its notes say so); scripts/device/import.py puts them in the measured operation table.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "e2e/backend/backend.hpp"

namespace zeropp::microbench {

// One column-sum kernel of a backend by name, run for op bias_W (dweight, inp, mean, rstd empty), layernorm_W (all)
// or rmsnorm_W (dbias, mean empty) with the benchmark's buffers; adds into dweight and dbias as the backend does.
struct ColumnSumsRun {
  std::string name;  // in the case's name: <op>-<name>
  std::function<void(e2e::Backend&, const std::string& op, e2e::Tensor dweight, e2e::Tensor dbias, e2e::Tensor dout,
                     e2e::Tensor inp, e2e::Tensor mean, e2e::Tensor rstd, int N, int C)>
      run;
};

struct KernelCase {
  std::string op;                               // "layernorm_F", "gelu_B", "crossentropy_F", "adamw", "bias_W", ...
  long rows = 0, cols = 0;                      // activations [rows, cols]; adamw: rows * cols parameters
  std::shared_ptr<const ColumnSumsRun> kernel;  // bias_W, layernorm_W, rmsnorm_W: the kernel that runs them
  std::string name(const std::string& backend, const std::string& dtype) const;
};

// The cases for rows N, hidden sizes C and vocabularies V: layernorm_F/B and residual_add on [N, C], gelu_F/B on
// [N, 4C] (the MLP's width), adamw on N * C parameters, bias_W, layernorm_W and rmsnorm_W on [N, C] for each of
// `column_kernels`, crossentropy_F/B on [N, V].
std::vector<KernelCase> kernel_cases(const std::vector<long>& rows, const std::vector<long>& hidden,
                                     const std::vector<long>& vocab,
                                     const std::vector<std::shared_ptr<const ColumnSumsRun>>& column_kernels = {});

// The fewest bytes of one case for activations of `element_bytes` (4 fp32, 2 bf16); statistics and targets are
// 4 bytes, AdamW's four arrays fp32.
double kernel_case_bytes(const KernelCase& c, double element_bytes);

// Times the case on `backend` (max over the ranks of `comm`), inputs uniform in [-1, 1) (never zeros), outputs
// checked finite after the warm-up; counters bytes and GB/s.
void bench_kernel(benchmark::State& state, const std::string& backend, const KernelCase& c, MPI_Comm comm);

}  // namespace zeropp::microbench
