#include "e2e/backend/cuda/cuda_backend.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_util/bf16_convert.hpp"
#include "cuda_util/check.hpp"
#include "cuda_util/event_timer.hpp"
#include "cuda_util/local_device.hpp"
#include "e2e/backend/cuda/kernels.cuh"

namespace zeropp::e2e::cuda {
namespace {

// Checked typed device pointers: the view must have the dtype and hold the elements the operation touches.
template <typename T>
T* dev(Tensor t, DType want, std::int64_t need, const char* what) {
  if (t.dtype != want)
    throw std::logic_error(std::string("cuda backend: ") + what + " must be " + std::string(dtype_name(want)) +
                           ", is " + std::string(dtype_name(t.dtype)));
  if (t.numel < need)
    throw std::logic_error(std::string("cuda backend: ") + what + " holds " + std::to_string(t.numel) +
                           " elements, needs " + std::to_string(need));
  return static_cast<T*>(t.data);
}
bf16* b16(Tensor t, std::int64_t need, const char* what) { return dev<bf16>(t, DType::bf16, need, what); }
float* f32(Tensor t, std::int64_t need, const char* what) { return dev<float>(t, DType::f32, need, what); }
const std::int32_t* i32(Tensor t, std::int64_t need, const char* what) {
  return dev<std::int32_t>(t, DType::i32, need, what);
}

cudaDataType_t lt_type(DType t, const char* what) {
  if (t == DType::bf16) return CUDA_R_16BF;
  if (t == DType::f32) return CUDA_R_32F;
  throw std::logic_error(std::string("cuda backend: ") + what + " must be f32 or bf16");
}

// Times one operation with events on the compute stream while profiling is on (it then waits for the GPU after
// each operation: profiles show where time goes, not how fast an unprofiled step runs).
class OpScope {
 public:
  OpScope(bool on, cudaStream_t stream) : stream_(stream) {
    if (!on) return;
    timer_.emplace();
    timer_->start(stream_);
  }
  double seconds() {
    if (!timer_) return 0.0;
    timer_->stop(stream_);
    return timer_->elapsed_seconds();
  }

 private:
  cudaStream_t stream_;
  std::optional<cuda_util::EventTimer> timer_;  // only while profiling
};

}  // namespace

CudaBackend::CudaBackend() : device_(cuda_util::select_local_device()), error_(1) {
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  // Keep freed memory in the pool: a training step frees and re-allocates the same activation sizes every
  // micro-batch, and returning them to the driver at each synchronisation would cost a cudaMalloc each time.
  cudaMemPool_t pool = nullptr;
  CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device_));
  std::uint64_t threshold = std::numeric_limits<std::uint64_t>::max();
  CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  CUDA_CHECK(cudaMemsetAsync(error_.data(), 0, sizeof(int), stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

CudaBackend::~CudaBackend() {
  if (stream_) {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
}

void* CudaBackend::raw_allocate(std::size_t bytes) {
  void* p = nullptr;
  // 256-byte granules: every view starts aligned for cuBLASLt's vectorised kernels.
  const std::size_t rounded = (bytes + 255) / 256 * 256;
  if (cudaMallocAsync(&p, rounded == 0 ? 256 : rounded, stream_) != cudaSuccess) {
    (void)cudaGetLastError();
    throw std::bad_alloc();
  }
  return p;
}

void CudaBackend::raw_deallocate(void* p) noexcept {
  if (p) (void)cudaFreeAsync(p, stream_);
}

void CudaBackend::copy_from_host(Tensor dst, const void* src) {
  if (dst.numel == 0) return;
  CUDA_CHECK(cudaMemcpyAsync(dst.data, src, dst.bytes(), cudaMemcpyHostToDevice, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));  // the caller may free `src` on return
}

void CudaBackend::copy_to_host(void* dst, Tensor src) {
  if (src.numel == 0) return;
  CUDA_CHECK(cudaMemcpyAsync(dst, src.data, src.bytes(), cudaMemcpyDeviceToHost, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaBackend::synchronize() {
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  int error = 0;
  CUDA_CHECK(cudaMemcpy(&error, error_.data(), sizeof(int), cudaMemcpyDeviceToHost));
  if (error != 0) {
    CUDA_CHECK(cudaMemset(error_.data(), 0, sizeof(int)));
    throw std::out_of_range("cuda backend: a token or target lies outside the vocabulary");
  }
}

// ---------------------------------------------------------------- GEMM

void CudaBackend::gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, Tensor A, int lda, Tensor B,
                       int ldb, float beta, Tensor C, int ldc) {
  OpScope scope(profiling(), stream_);
  const int a_rows = trans_a ? K : M, a_cols = trans_a ? M : K;
  const int b_rows = trans_b ? N : K, b_cols = trans_b ? K : N;
  if (lda < a_cols || ldb < b_cols || ldc < N) throw std::logic_error("cuda backend: gemm leading dimension too small");
  if (A.dtype != B.dtype) throw std::logic_error("cuda backend: gemm A and B must have one dtype");
  if (A.dtype == DType::f32 && C.dtype != DType::f32) throw std::logic_error("cuda backend: f32 gemm needs f32 C");
  const auto need = [](int rows, int cols, int ld) { return static_cast<std::int64_t>(rows - 1) * ld + cols; };
  if (A.numel < need(a_rows, a_cols, lda) || B.numel < need(b_rows, b_cols, ldb) || C.numel < need(M, N, ldc))
    throw std::logic_error("cuda backend: gemm operand smaller than its shape");
  MatmulProblem p;
  p.trans_a = trans_a;
  p.trans_b = trans_b;
  p.M = M;
  p.N = N;
  p.K = K;
  p.lda = lda;
  p.ldb = ldb;
  p.ldc = ldc;
  p.ab_type = lt_type(A.dtype, "gemm A");
  p.c_type = lt_type(C.dtype, "gemm C");
  matmul_.run(p, alpha, A.data, B.data, beta, C.data, nullptr, stream_);
  if (profiling()) record(OpKind::gemm, scope.seconds(), 2.0 * M * N * K);
}

void CudaBackend::linear_forward(Tensor out, Tensor inp, Tensor weight, Tensor bias, int N, int IC, int OC) {
  if (bias.empty()) {
    gemm(false, true, N, OC, IC, 1.0f, inp, IC, weight, IC, 0.0f, out, OC);
    return;
  }
  OpScope scope(profiling(), stream_);
  if (inp.dtype != weight.dtype || bias.dtype != out.dtype)
    throw std::logic_error("cuda backend: linear_forward needs inp/weight of one dtype and bias like out");
  if (inp.numel < std::int64_t{N} * IC || weight.numel < std::int64_t{OC} * IC || bias.numel < OC ||
      out.numel < std::int64_t{N} * OC)
    throw std::logic_error("cuda backend: linear_forward operand smaller than its shape");
  MatmulProblem p;
  p.trans_b = true;
  p.M = N;
  p.N = OC;
  p.K = IC;
  p.lda = IC;
  p.ldb = IC;
  p.ldc = OC;
  p.ab_type = lt_type(inp.dtype, "linear inp");
  p.c_type = lt_type(out.dtype, "linear out");
  p.bias = true;  // out = inp weight^T + bias in the GEMM's epilogue: no second pass over out
  matmul_.run(p, 1.0f, inp.data, weight.data, 0.0f, out.data, bias.data, stream_);
  if (profiling()) record(OpKind::gemm, scope.seconds(), 2.0 * N * OC * IC);
}

void CudaBackend::linear_backward_input(Tensor dinp, Tensor dout, Tensor weight, int N, int IC, int OC,
                                        bool accumulate) {
  gemm(false, false, N, IC, OC, 1.0f, dout, OC, weight, IC, accumulate ? 1.0f : 0.0f, dinp, IC);
}

void CudaBackend::linear_backward_weight(Tensor dweight, Tensor dbias, Tensor dout, Tensor inp, int N, int IC, int OC) {
  gemm(true, false, OC, IC, N, 1.0f, dout, OC, inp, IC, 1.0f, dweight, IC);
  if (dbias.empty()) return;
  OpScope scope(profiling(), stream_);
  bias_backward(f32(dbias, OC, "linear dbias"), b16(dout, std::int64_t{N} * OC, "linear dout"), N, OC, stream_);
  if (profiling()) record(OpKind::elementwise, scope.seconds(), 0.0);
}

// ---------------------------------------------------------------- layer norm, GELU

void CudaBackend::layernorm_forward(Tensor out, Tensor mean, Tensor rstd, Tensor inp, Tensor weight, Tensor bias, int N,
                                    int C) {
  OpScope scope(profiling(), stream_);
  const std::int64_t nc = std::int64_t{N} * C;
  cuda::layernorm_forward(b16(out, nc, "layernorm out"), f32(mean, N, "layernorm mean"), f32(rstd, N, "layernorm rstd"),
                          b16(inp, nc, "layernorm inp"), b16(weight, C, "layernorm weight"),
                          b16(bias, C, "layernorm bias"), N, C, stream_);
  if (profiling()) record(OpKind::layernorm, scope.seconds(), 0.0);
}

void CudaBackend::layernorm_backward_input(Tensor dinp, Tensor dout, Tensor inp, Tensor mean, Tensor rstd,
                                           Tensor weight, int N, int C, bool accumulate) {
  OpScope scope(profiling(), stream_);
  const std::int64_t nc = std::int64_t{N} * C;
  cuda::layernorm_backward_input(b16(dinp, nc, "layernorm dinp"), b16(dout, nc, "layernorm dout"),
                                 b16(inp, nc, "layernorm inp"), f32(mean, N, "layernorm mean"),
                                 f32(rstd, N, "layernorm rstd"), b16(weight, C, "layernorm weight"), N, C, accumulate,
                                 stream_);
  if (profiling()) record(OpKind::layernorm, scope.seconds(), 0.0);
}

void CudaBackend::layernorm_backward_weight(Tensor dweight, Tensor dbias, Tensor dout, Tensor inp, Tensor mean,
                                            Tensor rstd, int N, int C) {
  OpScope scope(profiling(), stream_);
  const std::int64_t nc = std::int64_t{N} * C;
  cuda::layernorm_backward_weight(f32(dweight, C, "layernorm dweight"), f32(dbias, C, "layernorm dbias"),
                                  b16(dout, nc, "layernorm dout"), b16(inp, nc, "layernorm inp"),
                                  f32(mean, N, "layernorm mean"), f32(rstd, N, "layernorm rstd"), N, C, stream_);
  if (profiling()) record(OpKind::layernorm, scope.seconds(), 0.0);
}

void CudaBackend::gelu_forward(Tensor out, Tensor inp, std::int64_t n) {
  OpScope scope(profiling(), stream_);
  cuda::gelu_forward(b16(out, n, "gelu out"), b16(inp, n, "gelu inp"), n, stream_);
  if (profiling()) record(OpKind::gelu, scope.seconds(), 0.0);
}

void CudaBackend::gelu_backward(Tensor dinp, Tensor inp, Tensor dout, std::int64_t n) {
  OpScope scope(profiling(), stream_);
  cuda::gelu_backward(b16(dinp, n, "gelu dinp"), b16(inp, n, "gelu inp"), b16(dout, n, "gelu dout"), n, stream_);
  if (profiling()) record(OpKind::gelu, scope.seconds(), 0.0);
}

// ---------------------------------------------------------------- attention
// Unfused: per sequence b, heads are strided batches of GEMMs: head h's q, k, v start hs columns after head h-1's
// in the qkv rows, its probabilities are a dense [T, T] block, materialised (the interface saves them for the
// backward): O(T^2) memory per head, as in the CPU backend. Flash: kernels.cu, O(T) per head.

void CudaBackend::head_gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const void* A, int lda,
                            std::int64_t stride_a, const void* B, int ldb, std::int64_t stride_b, void* C, int ldc,
                            std::int64_t stride_c, int heads, float beta) {
  MatmulProblem p;
  p.trans_a = trans_a;
  p.trans_b = trans_b;
  p.M = M;
  p.N = N;
  p.K = K;
  p.lda = lda;
  p.ldb = ldb;
  p.ldc = ldc;
  p.batch = heads;
  p.stride_a = stride_a;
  p.stride_b = stride_b;
  p.stride_c = stride_c;
  matmul_.run(p, alpha, A, B, beta, C, nullptr, stream_);
}

// Grouped-query heads: query head h = kvh * g + j (g = NH / KVH) reads key/value head kvh. For each j, the KVH heads
// kvh = 0.. form one strided batch: query columns stride g*hs, key/value columns stride hs, probabilities stride
// g*T*T. With g = 1 that is the plain multi-head batch. The key/value gradients sum over j (beta = 1 after j = 0).
void CudaBackend::grouped_attention_forward(Tensor out, Tensor att, Tensor qkv, int B, int T, int NH, int KVH, int hs) {
  OpScope scope(profiling(), stream_);
  if (NH < 1 || KVH < 1 || NH % KVH != 0 || hs < 1)
    throw std::logic_error("cuda backend: attention needs KVH >= 1 dividing NH and hs >= 1");
  const int g = NH / KVH, C = NH * hs, W = (NH + 2 * KVH) * hs;
  const std::int64_t tt = std::int64_t{T} * T;
  bf16* o = b16(out, std::int64_t{B} * T * C, "attention out");
  bf16* p = b16(att, std::int64_t{B} * NH * tt, "attention att");
  const bf16* x = b16(qkv, std::int64_t{B} * T * W, "attention qkv");
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  for (int b = 0; b < B; ++b) {
    const bf16* row = x + std::int64_t{b} * T * W;
    for (int j = 0; j < g; ++j)
      head_gemm(false, true, T, T, hs, scale, row + j * hs, W, std::int64_t{g} * hs, row + C, W, hs,
                p + std::int64_t{b} * NH * tt + j * tt, T, g * tt, KVH);
  }
  causal_softmax_forward(p, std::int64_t{B} * NH * T, T, stream_);
  for (int b = 0; b < B; ++b) {
    const bf16* v = x + std::int64_t{b} * T * W + C + std::int64_t{KVH} * hs;
    for (int j = 0; j < g; ++j)
      head_gemm(false, false, T, hs, T, 1.0f, p + std::int64_t{b} * NH * tt + j * tt, T, g * tt, v, W, hs,
                o + std::int64_t{b} * T * C + j * hs, C, std::int64_t{g} * hs, KVH);
  }
  if (profiling()) record(OpKind::attention, scope.seconds(), 4.0 * B * T * T * C);
}

void CudaBackend::grouped_attention_backward(Tensor dqkv, Tensor dout, Tensor qkv, Tensor att, int B, int T, int NH,
                                             int KVH, int hs) {
  OpScope scope(profiling(), stream_);
  if (NH < 1 || KVH < 1 || NH % KVH != 0 || hs < 1)
    throw std::logic_error("cuda backend: attention needs KVH >= 1 dividing NH and hs >= 1");
  const int g = NH / KVH, C = NH * hs, W = (NH + 2 * KVH) * hs;
  const std::int64_t tt = std::int64_t{T} * T;
  bf16* dx = b16(dqkv, std::int64_t{B} * T * W, "attention dqkv");
  const bf16* dy = b16(dout, std::int64_t{B} * T * C, "attention dout");
  const bf16* x = b16(qkv, std::int64_t{B} * T * W, "attention qkv");
  const bf16* p = b16(att, std::int64_t{B} * NH * tt, "attention att");
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  Buffer dp(*this, NH * tt, DType::bf16);  // one sequence's score gradients, reused for every b
  bf16* ds = static_cast<bf16*>(dp.view().data);
  const std::int64_t qs = std::int64_t{g} * hs, ps = g * tt;  // batch strides of query heads and their scores
  for (int b = 0; b < B; ++b) {
    const std::int64_t row = std::int64_t{b} * T * W;
    const bf16 *q = x + row, *k = x + row + C, *v = x + row + C + std::int64_t{KVH} * hs;
    bf16 *dq = dx + row, *dk = dx + row + C, *dv = dx + row + C + std::int64_t{KVH} * hs;
    const bf16* gy = dy + std::int64_t{b} * T * C;
    const bf16* pb = p + std::int64_t{b} * NH * tt;
    for (int j = 0; j < g; ++j) {
      const float acc = j == 0 ? 0.0f : 1.0f;  // dK, dV sum over the group's query heads
      head_gemm(true, false, T, hs, T, 1.0f, pb + j * tt, T, ps, gy + j * hs, C, qs, dv, W, hs, KVH,
                acc);                                                                                 // dV += P^T dY
      head_gemm(false, true, T, T, hs, 1.0f, gy + j * hs, C, qs, v, W, hs, ds + j * tt, T, ps, KVH);  // dP = dY V^T
    }
    causal_softmax_backward(ds, pb, std::int64_t{NH} * T, T, scale, stream_);  // dS (with 1/sqrt(hs))
    for (int j = 0; j < g; ++j) {
      const float acc = j == 0 ? 0.0f : 1.0f;
      head_gemm(false, false, T, hs, T, 1.0f, ds + j * tt, T, ps, k, W, hs, dq + j * hs, W, qs, KVH);  // dQ = dS K
      head_gemm(true, false, T, hs, T, 1.0f, ds + j * tt, T, ps, q + j * hs, W, qs, dk, W, hs, KVH,
                acc);  // dK += dS^T Q
    }
  }
  if (profiling()) record(OpKind::attention, scope.seconds(), 8.0 * B * T * T * C);
}

void CudaBackend::flash_attention_forward(Tensor out, Tensor lse, Tensor qkv, int B, int T, int NH, int KVH, int hs) {
  OpScope scope(profiling(), stream_);
  const int C = NH * hs, W = (NH + 2 * KVH) * hs;
  cuda::flash_attention_forward(b16(out, std::int64_t{B} * T * C, "flash attention out"),
                                f32(lse, std::int64_t{B} * NH * T, "flash attention lse"),
                                b16(qkv, std::int64_t{B} * T * W, "flash attention qkv"), B, T, NH, KVH, hs, stream_);
  if (profiling()) record(OpKind::attention, scope.seconds(), 2.0 * B * T * T * C);  // causal: half of 4BT^2C
}

void CudaBackend::flash_attention_backward(Tensor dqkv, Tensor dout, Tensor out, Tensor lse, Tensor qkv, int B, int T,
                                           int NH, int KVH, int hs) {
  OpScope scope(profiling(), stream_);
  const int C = NH * hs, W = (NH + 2 * KVH) * hs;
  Buffer delta(*this, std::int64_t{B} * NH * T, DType::f32);  // rowsum(dout * out): O(T) per head
  cuda::flash_attention_backward(
      b16(dqkv, std::int64_t{B} * T * W, "flash attention dqkv"), f32(delta.view(), delta.numel(), "flash delta"),
      b16(dout, std::int64_t{B} * T * C, "flash attention dout"), b16(out, std::int64_t{B} * T * C, "flash out"),
      f32(lse, std::int64_t{B} * NH * T, "flash attention lse"), b16(qkv, std::int64_t{B} * T * W, "flash qkv"), B, T,
      NH, KVH, hs, stream_);
  if (profiling()) record(OpKind::attention, scope.seconds(), 5.0 * B * T * T * C);  // causal: half of 10BT^2C
}

// ---------------------------------------------------------------- RMSNorm, SwiGLU, RoPE

void CudaBackend::rmsnorm_forward(Tensor out, Tensor rstd, Tensor inp, Tensor weight, int N, int C) {
  OpScope scope(profiling(), stream_);
  const std::int64_t nc = std::int64_t{N} * C;
  cuda::rmsnorm_forward(b16(out, nc, "rmsnorm out"), f32(rstd, N, "rmsnorm rstd"), b16(inp, nc, "rmsnorm inp"),
                        b16(weight, C, "rmsnorm weight"), N, C, stream_);
  if (profiling()) record(OpKind::rmsnorm, scope.seconds(), 0.0);
}

void CudaBackend::rmsnorm_backward_input(Tensor dinp, Tensor dout, Tensor inp, Tensor rstd, Tensor weight, int N, int C,
                                         bool accumulate) {
  OpScope scope(profiling(), stream_);
  const std::int64_t nc = std::int64_t{N} * C;
  cuda::rmsnorm_backward_input(b16(dinp, nc, "rmsnorm dinp"), b16(dout, nc, "rmsnorm dout"),
                               b16(inp, nc, "rmsnorm inp"), f32(rstd, N, "rmsnorm rstd"),
                               b16(weight, C, "rmsnorm weight"), N, C, accumulate, stream_);
  if (profiling()) record(OpKind::rmsnorm, scope.seconds(), 0.0);
}

void CudaBackend::rmsnorm_backward_weight(Tensor dweight, Tensor dout, Tensor inp, Tensor rstd, int N, int C) {
  OpScope scope(profiling(), stream_);
  const std::int64_t nc = std::int64_t{N} * C;
  cuda::rmsnorm_backward_weight(f32(dweight, C, "rmsnorm dweight"), b16(dout, nc, "rmsnorm dout"),
                                b16(inp, nc, "rmsnorm inp"), f32(rstd, N, "rmsnorm rstd"), N, C, stream_);
  if (profiling()) record(OpKind::rmsnorm, scope.seconds(), 0.0);
}

void CudaBackend::swiglu_forward(Tensor out, Tensor inp, int N, int F) {
  OpScope scope(profiling(), stream_);
  cuda::swiglu_forward(b16(out, std::int64_t{N} * F, "swiglu out"), b16(inp, std::int64_t{N} * 2 * F, "swiglu inp"), N,
                       F, stream_);
  if (profiling()) record(OpKind::swiglu, scope.seconds(), 0.0);
}

void CudaBackend::swiglu_backward(Tensor dinp, Tensor inp, Tensor dout, int N, int F) {
  OpScope scope(profiling(), stream_);
  cuda::swiglu_backward(b16(dinp, std::int64_t{N} * 2 * F, "swiglu dinp"),
                        b16(inp, std::int64_t{N} * 2 * F, "swiglu inp"), b16(dout, std::int64_t{N} * F, "swiglu dout"),
                        N, F, stream_);
  if (profiling()) record(OpKind::swiglu, scope.seconds(), 0.0);
}

void CudaBackend::rope(Tensor qkv, int N, int T, int NH, int KVH, int hs, int rotary_dims, double theta, bool inverse,
                       int pos0) {
  OpScope scope(profiling(), stream_);
  if (rotary_dims < 2 || rotary_dims % 2 != 0 || rotary_dims > hs || T < 1 || !(theta > 0) || pos0 < 0)
    throw std::logic_error("cuda backend: rope needs an even rotary_dims in [2, hs], T >= 1, theta > 0, pos0 >= 0");
  cuda::rope(b16(qkv, std::int64_t{N} * (NH + 2 * KVH) * hs, "rope qkv"), N, T, NH, KVH, hs, rotary_dims, theta,
             inverse, pos0, stream_);
  if (profiling()) record(OpKind::rope, scope.seconds(), 0.0);
}

// ---------------------------------------------------------------- embedding, cross-entropy

void CudaBackend::embedding_forward(Tensor out, Tensor tokens, Tensor wte, Tensor wpe, int N, int T, int C, int row0) {
  OpScope scope(profiling(), stream_);
  const int V = static_cast<int>(wte.numel / C);
  cuda::embedding_forward(b16(out, std::int64_t{N} * C, "embedding out"), i32(tokens, N, "embedding tokens"),
                          b16(wte, std::int64_t{V} * C, "embedding wte"),
                          wpe.empty() ? nullptr : b16(wpe, std::int64_t{T} * C, "embedding wpe"), N, T, C, row0, V,
                          error_.data(), stream_);
  if (profiling()) record(OpKind::embedding, scope.seconds(), 0.0);
}

void CudaBackend::embedding_backward_weight(Tensor dwte, Tensor dwpe, Tensor dout, Tensor tokens, int N, int T, int C,
                                            int row0) {
  OpScope scope(profiling(), stream_);
  const int V = static_cast<int>(dwte.numel / C);
  cuda::embedding_backward(f32(dwte, std::int64_t{V} * C, "embedding dwte"),
                           dwpe.empty() ? nullptr : f32(dwpe, std::int64_t{T} * C, "embedding dwpe"),
                           b16(dout, std::int64_t{N} * C, "embedding dout"), i32(tokens, N, "embedding tokens"), N, T,
                           C, row0, V, stream_);
  if (profiling()) record(OpKind::embedding, scope.seconds(), 0.0);
}

void CudaBackend::crossentropy_forward(Tensor losses, Tensor probs, Tensor logits, Tensor targets, int N, int V) {
  OpScope scope(profiling(), stream_);
  const std::int64_t nv = std::int64_t{N} * V;
  cuda::crossentropy_forward(f32(losses, N, "crossentropy losses"), b16(probs, nv, "crossentropy probs"),
                             b16(logits, nv, "crossentropy logits"), i32(targets, N, "crossentropy targets"), N, V,
                             error_.data(), stream_);
  if (profiling()) record(OpKind::cross_entropy, scope.seconds(), 0.0);
}

void CudaBackend::crossentropy_backward(Tensor dlogits, Tensor probs, Tensor targets, int N, int V, float scale) {
  OpScope scope(profiling(), stream_);
  const std::int64_t nv = std::int64_t{N} * V;
  cuda::crossentropy_backward(b16(dlogits, nv, "crossentropy dlogits"), b16(probs, nv, "crossentropy probs"),
                              i32(targets, N, "crossentropy targets"), N, V, scale, stream_);
  if (profiling()) record(OpKind::cross_entropy, scope.seconds(), 0.0);
}

// ---------------------------------------------------------------- element-wise and reductions

void CudaBackend::add(Tensor out, Tensor a, Tensor b, std::int64_t n) {
  OpScope scope(profiling(), stream_);
  if (out.dtype == DType::bf16)
    cuda::add<bf16>(b16(out, n, "add out"), b16(a, n, "add a"), b16(b, n, "add b"), n, stream_);
  else
    cuda::add<float>(f32(out, n, "add out"), f32(a, n, "add a"), f32(b, n, "add b"), n, stream_);
  if (profiling()) record(OpKind::elementwise, scope.seconds(), 0.0);
}

void CudaBackend::accumulate(Tensor y, Tensor x, std::int64_t n) {
  OpScope scope(profiling(), stream_);
  if (y.dtype == DType::bf16)
    cuda::accumulate<bf16>(b16(y, n, "accumulate y"), b16(x, n, "accumulate x"), n, stream_);
  else
    cuda::accumulate<float>(f32(y, n, "accumulate y"), f32(x, n, "accumulate x"), n, stream_);
  if (profiling()) record(OpKind::elementwise, scope.seconds(), 0.0);
}

void CudaBackend::scale(Tensor x, float s, std::int64_t n) {
  if (x.dtype == DType::bf16)
    cuda::scale<bf16>(b16(x, n, "scale x"), s, n, stream_);
  else
    cuda::scale<float>(f32(x, n, "scale x"), s, n, stream_);
}

void CudaBackend::copy(Tensor dst, Tensor src, std::int64_t n) {
  if (dst.dtype != src.dtype || dst.numel < n || src.numel < n) throw std::logic_error("cuda backend: bad copy");
  if (n > 0)
    CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, static_cast<std::size_t>(n) * dtype_size(dst.dtype),
                               cudaMemcpyDeviceToDevice, stream_));
}

void CudaBackend::fill_zero(Tensor x) {
  if (x.numel > 0) CUDA_CHECK(cudaMemsetAsync(x.data, 0, x.bytes(), stream_));
}

void CudaBackend::convert(Tensor dst, Tensor src, std::int64_t n) {
  if (dst.dtype == src.dtype) return copy(dst, src, n);
  const auto count = static_cast<std::size_t>(n);
  if (dst.dtype == DType::bf16)
    cuda_util::float_to_bf16(f32(src, n, "convert src"), b16(dst, n, "convert dst"), count, stream_);
  else
    cuda_util::bf16_to_float(b16(src, n, "convert src"), f32(dst, n, "convert dst"), count, stream_);
}

// Every part's per-block partial sums into its own kReduceBlocks slots of partials_, one copy back, one wait; then
// each part's partials added in block order from 0.0 and the parts' sums in their order: the additions the one-part
// call makes, part by part, so a many-part sum equals the loop over the parts bit for bit (Backend::total_sum_squares).
double CudaBackend::reduce(std::span<const Tensor> parts, bool square) {
  constexpr std::size_t kBlocks = kReduceBlocks;
  const std::size_t slots = parts.size() * kBlocks;
  if (partials_.size() < slots) partials_ = cuda_util::DeviceBuffer<double>(slots);  // grown once, kept
  bool any = false;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const Tensor& x = parts[p];
    if (x.numel == 0) continue;
    double* slot = partials_.data() + p * kBlocks;
    if (x.dtype == DType::bf16)
      partial_sums<bf16>(static_cast<const bf16*>(x.data), x.numel, square, slot, stream_);
    else
      partial_sums<float>(f32(x, x.numel, "sum x"), x.numel, square, slot, stream_);
    any = true;
  }
  if (!any) return 0.0;
  host_partials_.resize(slots);
  CUDA_CHECK(cudaMemcpyAsync(host_partials_.data(), partials_.data(), slots * sizeof(double), cudaMemcpyDeviceToHost,
                             stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  double total = 0.0;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    double s = 0.0;
    if (parts[p].numel > 0)
      for (std::size_t b = 0; b < kBlocks; ++b) s += host_partials_[p * kBlocks + b];  // fixed order
    total += s;
  }
  return total;
}

double CudaBackend::sum_squares(Tensor x) { return reduce({&x, 1}, true); }
double CudaBackend::sum(Tensor x) { return reduce({&x, 1}, false); }
double CudaBackend::total_sum_squares(std::span<const Tensor> parts) { return reduce(parts, true); }

void CudaBackend::adamw_update(Tensor params, Tensor grads, Tensor m, Tensor v, std::int64_t n, const AdamWArgs& a) {
  OpScope scope(profiling(), stream_);
  cuda::adamw(f32(params, n, "adamw params"), f32(grads, n, "adamw grads"), f32(m, n, "adamw m"), f32(v, n, "adamw v"),
              n, a.lr, a.beta1, a.beta2, a.eps, a.weight_decay, a.bias_correction1, a.bias_correction2, a.grad_scale,
              stream_);
  if (profiling()) record(OpKind::adamw, scope.seconds(), 0.0);
}

}  // namespace zeropp::e2e::cuda
