#pragma once
// bf16 GEMMs through cuBLASLt with fp32 accumulation, as the CUDA trainer runs them: row-major operands
// (computed as the column-major C^T = op(B)^T op(A)^T), the heuristic's first algorithm for the shape, and a
// workspace (32 MiB, what cuBLAS recommends on Hopper).
#include <cuda_bf16.h>

#include "microbench/cuda/device_buffer.hpp"
#include "microbench/gemm_shapes.hpp"

namespace zeropp::microbench::cuda {

class CublasLtGemm {
 public:
  static constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;

  // Creates the descriptors and picks the algorithm; throws when cuBLASLt offers none for the shape.
  CublasLtGemm(cublasLtHandle_t handle, const GemmShape& shape);
  ~CublasLtGemm();
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  // C = op(A) op(B), all row-major bf16 as GemmShape describes them.
  void run(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c, cudaStream_t stream);

 private:
  cublasLtHandle_t handle_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, c_layout_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  DeviceBuffer<unsigned char> workspace_{kWorkspaceBytes};
};

}  // namespace zeropp::microbench::cuda
