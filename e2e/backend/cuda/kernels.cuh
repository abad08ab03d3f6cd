#pragma once
// Launchers of the CUDA backend's own kernels (e2e/backend/cuda/kernels.cu). Raw device pointers, no checks:
// CudaBackend validates dtypes and sizes before it calls these, and checks every launch (file:line).
// Activations and the parameters the layers read are bf16; statistics (layer-norm mean/rstd, losses),
// gradients of parameters, master weights and the AdamW moments are fp32. Every reduction accumulates in fp32
// (the sums of sum()/sum_squares() in fp64).
#include <cstdint>
#include <initializer_list>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace zeropp::e2e::cuda {

using bf16 = __nv_bfloat16;

// Tokens outside [0, V) set *error (checked by CudaBackend::synchronize) and give zero rows. wpe (dwpe) may be
// null: no position table (rotary positions).
void embedding_forward(bf16* out, const std::int32_t* tokens, const bf16* wte, const bf16* wpe, int N, int T, int C,
                       int row0, int V, int* error, cudaStream_t);
void embedding_backward(float* dwte, float* dwpe, const bf16* dout, const std::int32_t* tokens, int N, int T, int C,
                        int row0, int V, cudaStream_t);

void layernorm_forward(bf16* out, float* mean, float* rstd, const bf16* inp, const bf16* weight, const bf16* bias,
                       int N, int C, cudaStream_t);
void layernorm_backward_input(bf16* dinp, const bf16* dout, const bf16* inp, const float* mean, const float* rstd,
                              const bf16* weight, int N, int C, bool accumulate, cudaStream_t);
// Whether layernorm_forward (with out, inp) and layernorm_backward_input (with dinp, inp; dout aligned too) run
// their 16-byte-access kernels: C % 8 == 0 and 16-byte aligned rows; otherwise the 2-byte ones. Same results up to
// the order of fp32 partial sums.
bool layernorm_vectorized(int C, const void* out, const void* inp);
// The column sums of the weight passes below (bias, layer norm and RMSNorm weights) have two kernels: `scalar`
// (one bf16 per thread per row) and `vec16` (16-byte loads, 8 columns per thread, several rows in flight; it runs
// where column_sums_vectorized says, and the scalar kernel otherwise). Both add their fp32 sums atomically into the
// outputs, so results differ in the order of fp32 additions only, from run to run too. The backend runs
// kColumnSumsDefault; tests and zeropp-bench-cuda name each kernel. vec16 is checked on no GPU yet: it becomes the
// default (this one line) once a GPU has run its tests (test_e2e_cuda, CudaColumnSums*) and measured it faster
// (zeropp-bench-cuda, kernel/cuda/bf16/*_W-*: scripts/device/run.sh's kernels step).
enum class ColumnSumsKernel { scalar, vec16 };
constexpr ColumnSumsKernel kColumnSumsDefault = ColumnSumsKernel::scalar;
// Whether vec16 takes its 16-byte path for C columns and these rows (dout; inp may be null): C % 8 == 0 and
// 16-byte aligned pointers.
bool column_sums_vectorized(int C, const void* dout, const void* inp);
// dweight[c] += sum_n dout[n,c] xhat[n,c]; dbias[c] += sum_n dout[n,c].
void layernorm_backward_weight(float* dweight, float* dbias, const bf16* dout, const bf16* inp, const float* mean,
                               const float* rstd, int N, int C, cudaStream_t, ColumnSumsKernel = kColumnSumsDefault);
// dbias[c] += sum_n dout[n,c].
void bias_backward(float* dbias, const bf16* dout, int N, int C, cudaStream_t, ColumnSumsKernel = kColumnSumsDefault);

// RMSNorm (eps 1e-5): out = inp * rstd * weight, rstd[n] = 1/sqrt(mean(inp^2) + eps).
void rmsnorm_forward(bf16* out, float* rstd, const bf16* inp, const bf16* weight, int N, int C, cudaStream_t);
void rmsnorm_backward_input(bf16* dinp, const bf16* dout, const bf16* inp, const float* rstd, const bf16* weight, int N,
                            int C, bool accumulate, cudaStream_t);
// dweight[c] += sum_n dout[n,c] inp[n,c] rstd[n].
void rmsnorm_backward_weight(float* dweight, const bf16* dout, const bf16* inp, const float* rstd, int N, int C,
                             cudaStream_t, ColumnSumsKernel = kColumnSumsDefault);

// SwiGLU on rows [gate (F) | up (F)]: out[n, f] = silu(gate) * up; the backward writes both halves of dinp.
void swiglu_forward(bf16* out, const bf16* inp, int N, int F, cudaStream_t);
void swiglu_backward(bf16* dinp, const bf16* inp, const bf16* dout, int N, int F, cudaStream_t);

// Rotary embedding in place on the NH query and KVH key heads of rows of width (NH + 2 KVH) hs (Backend::rope).
void rope(bf16* qkv, int N, int T, int NH, int KVH, int hs, int rotary_dims, double theta, bool inverse, int pos0,
          cudaStream_t);

// FlashAttention-style causal attention with grouped-query heads (Backend::flash_attention_*), head size at most
// kFlashMaxHead. The forward writes out [B, T, NH hs] (bf16) and lse [B, NH, T] (fp32). The backward takes
// `delta` [B, NH, T] (fp32 scratch) and overwrites dqkv [B, T, (NH + 2 KVH) hs]; it needs no atomics: each query
// row's dq and each key row's dk, dv (summed over the query heads of its group) are one warp's.
// Three implementations: FlashAttention-2 on tensor cores through mma.sync with the softmax in registers
// (e2e/backend/cuda/flash_mma.cu) for heads of 64 and 128, the same through WMMA (flash_tc.cu) for heads of 16, 32,
// ..., 128, and scalar kernels (a warp per row, fp32 FMAs) for every head up to kFlashMaxHead.
// `automatic` (what CudaBackend uses) takes what flash_kernel_for says; the tests and benchmarks also ask for each one
// by name, and a named kernel that cannot run this call throws std::invalid_argument.
constexpr int kFlashMaxHead = 256;
enum class FlashKernel { automatic, mma, tensor_cores, scalar };
// What `automatic` runs for head size hs and these device pointers: tensor_cores (WMMA) where flash_tc_supports(hs),
// every pointer is 16-byte aligned (its tiles are staged with 16-byte copies) and the current device allows its
// shared memory per block (flash_tc_shared_bytes); scalar otherwise. The mma kernels run only when named, until a GPU
// has run them (kernels.cu).
FlashKernel flash_kernel_for(int hs, std::initializer_list<const void*> pointers);
void flash_attention_forward(bf16* out, float* lse, const bf16* qkv, int B, int T, int NH, int KVH, int hs,
                             cudaStream_t, FlashKernel = FlashKernel::automatic);
void flash_attention_backward(bf16* dqkv, float* delta, const bf16* dout, const bf16* out, const float* lse,
                              const bf16* qkv, int B, int T, int NH, int KVH, int hs, cudaStream_t,
                              FlashKernel = FlashKernel::automatic);

void gelu_forward(bf16* out, const bf16* inp, std::int64_t n, cudaStream_t);
void gelu_backward(bf16* dinp, const bf16* inp, const bf16* dout, std::int64_t n, cudaStream_t);

// In place on `rows` rows of length T holding scaled scores; row r is query position r % T: columns 0..t become
// the softmax, columns above t zero.
void causal_softmax_forward(bf16* att, std::int64_t rows, int T, cudaStream_t);
// In place: dp = scale * att * (dp - sum_j dp_j att_j) on the causal part, zero above it.
void causal_softmax_backward(bf16* dp, const bf16* att, std::int64_t rows, int T, float scale, cudaStream_t);

// Targets outside [0, V) set *error.
void crossentropy_forward(float* losses, bf16* probs, const bf16* logits, const std::int32_t* targets, int N, int V,
                          int* error, cudaStream_t);
void crossentropy_backward(bf16* dlogits, const bf16* probs, const std::int32_t* targets, int N, int V, float scale,
                           cudaStream_t);

// Element-wise on f32 or bf16 (T = float or bf16), computed in fp32.
template <typename T>
void add(T* out, const T* a, const T* b, std::int64_t n, cudaStream_t);
template <typename T>
void accumulate(T* y, const T* x, std::int64_t n, cudaStream_t);
template <typename T>
void scale(T* x, float s, std::int64_t n, cudaStream_t);

// Per-block partial sums (of x, or of x^2) in fp64: partials[0..blocks); the caller adds them in order, so the
// result is the same from run to run. `blocks` is at most kReduceBlocks.
constexpr int kReduceBlocks = 256;
template <typename T>
void partial_sums(const T* x, std::int64_t n, bool square, double* partials, cudaStream_t);

void adamw(float* params, const float* grads, float* m, float* v, std::int64_t n, float lr, float beta1, float beta2,
           float eps, float weight_decay, float bias_correction1, float bias_correction2, float grad_scale,
           cudaStream_t);

}  // namespace zeropp::e2e::cuda
