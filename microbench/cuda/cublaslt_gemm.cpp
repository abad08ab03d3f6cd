#include "microbench/cuda/cublaslt_gemm.hpp"

namespace zeropp::microbench::cuda {

CublasLtGemm::CublasLtGemm(cublasLtHandle_t handle, const GemmShape& g) : handle_(handle) {
  // Row-major X[r x c] is column-major X^T[c x r] with leading dimension c. cuBLASLt's A is our B, its B our A.
  const cublasOperation_t trans_a = g.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t trans_b = g.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof(trans_a)));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof(trans_b)));
  // Stored (column-major) shapes: our B is k x n row-major (n x k column-major), or n x k when transposed.
  const auto rows_a = static_cast<std::uint64_t>(g.transpose_b ? g.k : g.n);
  const auto cols_a = static_cast<std::uint64_t>(g.transpose_b ? g.n : g.k);
  const auto rows_b = static_cast<std::uint64_t>(g.transpose_a ? g.m : g.k);
  const auto cols_b = static_cast<std::uint64_t>(g.transpose_a ? g.k : g.m);
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_layout_, CUDA_R_16BF, rows_a, cols_a, static_cast<std::int64_t>(rows_a)));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_layout_, CUDA_R_16BF, rows_b, cols_b, static_cast<std::int64_t>(rows_b)));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c_layout_, CUDA_R_16BF, static_cast<std::uint64_t>(g.n),
                                          static_cast<std::uint64_t>(g.m), g.n));

  cublasLtMatmulPreference_t preference = nullptr;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  const std::size_t workspace = kWorkspaceBytes;
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace, sizeof(workspace)));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(handle_, op_, a_layout_, b_layout_, c_layout_,
                                                               c_layout_, preference, 1, &heuristic, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  CUBLAS_CHECK(status);
  if (found == 0) throw std::runtime_error("cuBLASLt offers no algorithm for GEMM " + g.name);
  algo_ = heuristic.algo;
}

CublasLtGemm::~CublasLtGemm() {
  if (c_layout_) cublasLtMatrixLayoutDestroy(c_layout_);
  if (b_layout_) cublasLtMatrixLayoutDestroy(b_layout_);
  if (a_layout_) cublasLtMatrixLayoutDestroy(a_layout_);
  if (op_) cublasLtMatmulDescDestroy(op_);
}

void CublasLtGemm::run(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c, cudaStream_t stream) {
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasLtMatmul(handle_, op_, &alpha, b, a_layout_, a, b_layout_, &beta, c, c_layout_, c, c_layout_,
                              &algo_, workspace_.data(), workspace_.size(), stream));
}

}  // namespace zeropp::microbench::cuda
