#pragma once
// The CUDA backend (DESIGN.md section 7): bf16 activations and layer parameters, fp32 parameter gradients, fp32
// master weights and AdamW moments (kept by the runtime's ChunkState and the optimizer; the layers read the bf16
// copy that ChunkState refreshes with convert()). GEMMs through cuBLASLt with fp32 accumulation (bias fused as an
// epilogue); fp32<->bf16 conversion in cuda_util/bf16_convert.cu; everything else in e2e/backend/cuda/kernels.cu.
// All work is queued on one compute stream; synchronize() waits for it and reports device-side input errors
// (tokens outside the vocabulary).
// Memory comes from the stream-ordered allocator (cudaMallocAsync), so freeing a buffer whose last use is still
// queued is safe and costs no device-wide synchronisation.
//
// dtypes the operations accept (anything else throws std::logic_error naming the operand):
//   gemm / linear_*:   A, B both bf16 (C bf16 or f32) or all f32; linear weight gradients f32, biases like out.
//   layer norm, RMSNorm, GELU, SwiGLU, RoPE, attention, embedding, cross-entropy: activations bf16; mean/rstd,
//                      losses, flash attention's lse, and the weight gradients of the norms and embedding f32.
//   add, accumulate, scale: f32 or bf16; sum, sum_squares: f32 or bf16; adamw_update: f32.
#include <cuda_runtime.h>

#include <span>
#include <vector>

#include "cuda_util/device_buffer.hpp"
#include "e2e/backend/backend.hpp"
#include "e2e/backend/cuda/lt_matmul.hpp"

namespace zeropp::e2e::cuda {

class CudaBackend final : public Backend {
 public:
  // Selects this process's GPU (cuda_util/local_device.hpp) and creates the stream and the cuBLASLt handle. Throws
  // std::runtime_error when no CUDA device is present.
  CudaBackend();
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string_view name() const override { return "cuda"; }
  DType compute_dtype() const override { return DType::bf16; }
  cudaStream_t stream() const { return stream_; }
  int device() const { return device_; }

  void copy_from_host(Tensor dst, const void* src) override;
  void copy_to_host(void* dst, Tensor src) override;
  void synchronize() override;

  void gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, Tensor A, int lda, Tensor B, int ldb,
            float beta, Tensor C, int ldc) override;
  void linear_forward(Tensor out, Tensor inp, Tensor weight, Tensor bias, int N, int IC, int OC) override;
  void linear_backward_input(Tensor dinp, Tensor dout, Tensor weight, int N, int IC, int OC, bool accumulate) override;
  void linear_backward_weight(Tensor dweight, Tensor dbias, Tensor dout, Tensor inp, int N, int IC, int OC) override;

  void layernorm_forward(Tensor out, Tensor mean, Tensor rstd, Tensor inp, Tensor weight, Tensor bias, int N,
                         int C) override;
  void layernorm_backward_input(Tensor dinp, Tensor dout, Tensor inp, Tensor mean, Tensor rstd, Tensor weight, int N,
                                int C, bool accumulate) override;
  void layernorm_backward_weight(Tensor dweight, Tensor dbias, Tensor dout, Tensor inp, Tensor mean, Tensor rstd, int N,
                                 int C) override;

  void rmsnorm_forward(Tensor out, Tensor rstd, Tensor inp, Tensor weight, int N, int C) override;
  void rmsnorm_backward_input(Tensor dinp, Tensor dout, Tensor inp, Tensor rstd, Tensor weight, int N, int C,
                              bool accumulate) override;
  void rmsnorm_backward_weight(Tensor dweight, Tensor dout, Tensor inp, Tensor rstd, int N, int C) override;
  void swiglu_forward(Tensor out, Tensor inp, int N, int F) override;
  void swiglu_backward(Tensor dinp, Tensor inp, Tensor dout, int N, int F) override;
  void rope(Tensor qkv, int N, int T, int NH, int KVH, int hs, int rotary_dims, double theta, bool inverse,
            int pos0) override;

  void gelu_forward(Tensor out, Tensor inp, std::int64_t n) override;
  void gelu_backward(Tensor dinp, Tensor inp, Tensor dout, std::int64_t n) override;

  void grouped_attention_forward(Tensor out, Tensor att, Tensor qkv, int B, int T, int NH, int KVH, int hs) override;
  void grouped_attention_backward(Tensor dqkv, Tensor dout, Tensor qkv, Tensor att, int B, int T, int NH, int KVH,
                                  int hs) override;
  // Head size at most kFlashMaxHead (256; std::invalid_argument otherwise).
  void flash_attention_forward(Tensor out, Tensor lse, Tensor qkv, int B, int T, int NH, int KVH, int hs) override;
  void flash_attention_backward(Tensor dqkv, Tensor dout, Tensor out, Tensor lse, Tensor qkv, int B, int T, int NH,
                                int KVH, int hs) override;

  void embedding_forward(Tensor out, Tensor tokens, Tensor wte, Tensor wpe, int N, int T, int C, int row0) override;
  void embedding_backward_weight(Tensor dwte, Tensor dwpe, Tensor dout, Tensor tokens, int N, int T, int C,
                                 int row0) override;

  void crossentropy_forward(Tensor losses, Tensor probs, Tensor logits, Tensor targets, int N, int V) override;
  void crossentropy_backward(Tensor dlogits, Tensor probs, Tensor targets, int N, int V, float scale) override;

  void add(Tensor out, Tensor a, Tensor b, std::int64_t n) override;
  void accumulate(Tensor y, Tensor x, std::int64_t n) override;
  void scale(Tensor x, float s, std::int64_t n) override;
  void copy(Tensor dst, Tensor src, std::int64_t n) override;
  void fill_zero(Tensor x) override;
  void convert(Tensor dst, Tensor src, std::int64_t n) override;
  double sum_squares(Tensor x) override;
  double sum(Tensor x) override;
  double total_sum_squares(std::span<const Tensor> parts) override;  // one copy back and one wait for all parts

  void adamw_update(Tensor params, Tensor grads, Tensor m, Tensor v, std::int64_t n, const AdamWArgs& args) override;

 private:
  void* raw_allocate(std::size_t bytes) override;
  void raw_deallocate(void* p) noexcept override;
  double reduce(std::span<const Tensor> parts, bool square);
  // A batched strided GEMM over heads of one sequence (attention); C = alpha op(A) op(B) + beta C.
  void head_gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const void* A, int lda,
                 std::int64_t stride_a, const void* B, int ldb, std::int64_t stride_b, void* C, int ldc,
                 std::int64_t stride_c, int heads, float beta = 0.0f);

  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  LtMatmul matmul_;
  cuda_util::DeviceBuffer<int> error_;        // set by kernels that find bad tokens/targets
  // reduce(): kReduceBlocks partial sums per part, on the device and copied back; grown to the most parts asked for.
  cuda_util::DeviceBuffer<double> partials_;
  std::vector<double> host_partials_;
};

}  // namespace zeropp::e2e::cuda
