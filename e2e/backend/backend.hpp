#pragma once
// The math the GPT needs, behind one abstract interface, so the model and the runtime are written once and a
// backend (CPU: fp32 + Eigen; CUDA: bf16 + cuBLASLt, e2e/backend/cuda) only implements these operations.
//
// Conventions (as llm.c): row-major; shape letters B batch (micro-batch size b), T sequence, C channels (h),
// NH heads, V vocabulary, N = B*T rows (or the rows a rank holds under sequence parallelism). A linear layer's
// weight is [OC, IC] and computes out = inp @ weight^T + bias. Operations named *_backward_weight ACCUMULATE
// (+=) into their gradient outputs (gradients sum over micro-batches); every other output is overwritten unless
// an `accumulate` flag says otherwise. All operations are synchronous from the caller's point of view on the
// CPU backend; a device backend may queue them on its compute stream, and `synchronize()` waits for them.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "e2e/backend/tensor.hpp"

namespace zeropp::e2e {

// Operation classes for the time profile (what fraction of a step is GEMM).
enum class OpKind : std::uint8_t {
  gemm,
  attention,
  layernorm,
  gelu,
  embedding,
  cross_entropy,
  adamw,
  elementwise,
  rmsnorm,
  swiglu,
  rope,
  count
};
std::string_view op_kind_name(OpKind);

struct OpStats {
  std::int64_t calls = 0;
  double seconds = 0.0;  // time inside the operation, only while profiling is on (CPU backend: thread CPU time)
  double flops = 0.0;    // matmul FLOPs (multiply-add = 2) the operation performed
};

// One AdamW update's hyper-parameters, with the bias corrections already folded in by the optimizer.
struct AdamWArgs {
  float lr = 0.0f;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;      // decoupled: p -= lr * wd * p
  float bias_correction1 = 1.0f;  // 1 - beta1^t
  float bias_correction2 = 1.0f;  // 1 - beta2^t
  float grad_scale = 1.0f;        // gradient multiplier (global-norm clipping); g_used = grad_scale * g
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;  // "cpu", "cuda"
  // Element type of activations and of the parameters the layers read (f32 on CPU; bf16 on CUDA).
  virtual DType compute_dtype() const = 0;

  // ---- memory (Buffer calls these) ----
  void* allocate(std::size_t bytes);  // throws std::bad_alloc
  void deallocate(void* p, std::size_t bytes) noexcept;
  std::size_t bytes_in_use() const { return bytes_in_use_; }
  std::size_t peak_bytes() const { return peak_bytes_; }
  void reset_peak() { peak_bytes_ = bytes_in_use_; }

  // ---- transfers and synchronisation ----
  virtual void copy_from_host(Tensor dst, const void* src) = 0;  // dst.bytes() bytes
  virtual void copy_to_host(void* dst, Tensor src) = 0;
  virtual void synchronize() = 0;  // wait for queued work (before communication or host reads)

  // ---- GEMM ----
  // C[M,N] = alpha * op(A) @ op(B) + beta * C, row-major with row strides lda/ldb/ldc (elements).
  // op(A) is [M,K]: A is [M,K] (lda >= K) or, with trans_a, [K,M] (lda >= M); likewise op(B) is [K,N].
  virtual void gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, Tensor A, int lda, Tensor B, int ldb,
                    float beta, Tensor C, int ldc) = 0;
  // out[N,OC] = inp[N,IC] @ weight[OC,IC]^T + bias[OC] (bias may be empty).
  virtual void linear_forward(Tensor out, Tensor inp, Tensor weight, Tensor bias, int N, int IC, int OC) = 0;
  // dinp[N,IC] (=, or += with accumulate) dout[N,OC] @ weight[OC,IC].
  virtual void linear_backward_input(Tensor dinp, Tensor dout, Tensor weight, int N, int IC, int OC,
                                     bool accumulate) = 0;
  // dweight[OC,IC] += dout^T @ inp; dbias[OC] += column sums of dout (dbias may be empty).
  virtual void linear_backward_weight(Tensor dweight, Tensor dbias, Tensor dout, Tensor inp, int N, int IC, int OC) = 0;

  // ---- layer norm over the last dimension (eps 1e-5) ----
  // out = (inp - mean) * rstd * weight + bias; mean[N] and rstd[N] are saved for the backward.
  virtual void layernorm_forward(Tensor out, Tensor mean, Tensor rstd, Tensor inp, Tensor weight, Tensor bias, int N,
                                 int C) = 0;
  // dinp (=, or += with accumulate) the input gradient.
  virtual void layernorm_backward_input(Tensor dinp, Tensor dout, Tensor inp, Tensor mean, Tensor rstd, Tensor weight,
                                        int N, int C, bool accumulate) = 0;
  // dweight += sum_rows(dout * xhat); dbias += sum_rows(dout).
  virtual void layernorm_backward_weight(Tensor dweight, Tensor dbias, Tensor dout, Tensor inp, Tensor mean,
                                         Tensor rstd, int N, int C) = 0;

  // ---- RMSNorm over the last dimension (Zhang & Sennrich 2019; Llama), eps 1e-5 ----
  // out = inp * rstd * weight, rstd[N] = 1 / sqrt(mean(inp^2) + eps) saved for the backward.
  virtual void rmsnorm_forward(Tensor out, Tensor rstd, Tensor inp, Tensor weight, int N, int C) = 0;
  // dinp (=, or += with accumulate) the input gradient: rstd * (g - xhat * mean(g * xhat)), g = dout * weight.
  virtual void rmsnorm_backward_input(Tensor dinp, Tensor dout, Tensor inp, Tensor rstd, Tensor weight, int N, int C,
                                      bool accumulate) = 0;
  // dweight += sum_rows(dout * xhat), xhat = inp * rstd.
  virtual void rmsnorm_backward_weight(Tensor dweight, Tensor dout, Tensor inp, Tensor rstd, int N, int C) = 0;

  // ---- SwiGLU (Shazeer 2020; Llama's MLP) ----
  // inp[N, 2F] holds each row's gate then up projection: out[N, F] = silu(gate) * up, silu(x) = x sigmoid(x).
  virtual void swiglu_forward(Tensor out, Tensor inp, int N, int F) = 0;
  // dinp[N, 2F] overwritten: d gate = dout * up * silu'(gate), d up = dout * silu(gate).
  virtual void swiglu_backward(Tensor dinp, Tensor inp, Tensor dout, int N, int F) = 0;

  // ---- rotary position embedding (Su et al. 2021), in place ----
  // qkv rows are [q (NH heads) | k (KVH heads) | v (KVH heads)] of hs columns each; row r is sequence position
  // pos0 + r % T (pos0 > 0: a context-parallel rank's chunk that starts at global position pos0). In each q and k
  // head the first `rotary_dims` (even) columns rotate as pairs (i, i + rotary_dims/2) by the angle
  // pos * theta^(-2i/rotary_dims) (HuggingFace's rotate_half layout); v is untouched. `inverse` rotates by the
  // opposite angle: the backward of the forward rotation (its transpose).
  virtual void rope(Tensor qkv, int N, int T, int NH, int KVH, int hs, int rotary_dims, double theta, bool inverse,
                    int pos0) = 0;

  // ---- GELU, tanh approximation (GPT-2) ----
  virtual void gelu_forward(Tensor out, Tensor inp, std::int64_t n) = 0;
  virtual void gelu_backward(Tensor dinp, Tensor inp, Tensor dout, std::int64_t n) = 0;  // dinp overwritten

  // ---- causal self-attention with grouped-query heads ----
  // qkv[B,T,(NH+2*KVH)*hs]: each row is [q | k | v], q with NH heads, k and v with KVH heads (KVH divides NH), head
  // h owning columns h*hs..(h+1)*hs-1 of its part; query head h reads key/value head h / (NH/KVH). The heads are
  // the ones this rank holds (a 1/tp share under tensor parallelism). out[B,T,NH*hs] = softmax(q k^T / sqrt(hs),
  // causal) v per head.
  // Unfused: att[B,NH,T,T] saves the probabilities (zero above the diagonal) for the backward.
  virtual void grouped_attention_forward(Tensor out, Tensor att, Tensor qkv, int B, int T, int NH, int KVH, int hs) = 0;
  // dqkv overwritten (the key/value gradients summed over the query heads that share them).
  virtual void grouped_attention_backward(Tensor dqkv, Tensor dout, Tensor qkv, Tensor att, int B, int T, int NH,
                                          int KVH, int hs) = 0;
  // Multi-head forms (KVH = NH, C = NH*hs, qkv[B,T,3C]).
  void attention_forward(Tensor out, Tensor att, Tensor qkv, int B, int T, int C, int NH) {
    grouped_attention_forward(out, att, qkv, B, T, NH, NH, C / NH);
  }
  void attention_backward(Tensor dqkv, Tensor dout, Tensor qkv, Tensor att, int B, int T, int C, int NH) {
    grouped_attention_backward(dqkv, dout, qkv, att, B, T, NH, NH, C / NH);
  }
  // FlashAttention-style (Dao 2023, FlashAttention-2): tiled, online softmax, no s x s tensor in memory. Saves
  // lse[B,NH,T] (fp32), each softmax row's log-sum-exp of the scaled scores; the backward recomputes the
  // probabilities from q, k and lse, and reads the forward's output `out` (for rowsum(dout * out)).
  virtual void flash_attention_forward(Tensor out, Tensor lse, Tensor qkv, int B, int T, int NH, int KVH, int hs) = 0;
  virtual void flash_attention_backward(Tensor dqkv, Tensor dout, Tensor out, Tensor lse, Tensor qkv, int B, int T,
                                        int NH, int KVH, int hs) = 0;

  // ---- one block of context-parallel (ring) attention ----
  // A rank's sequences hold Tl rows each (its share of every sequence); q is its qkv [B, Tl, (NH+2*KVH)*hs] (only the
  // q columns are read), kv a [B, Tl, 2*KVH*hs] tensor of K then V (this rank's, or another rank's received around
  // the ring). The block is query rows [q_lo, q_lo + q_len) of each sequence against key rows [k_lo, k_lo + k_len),
  // with no mask or causal (q_len == k_len: query i sees keys 0..i), as TransformerEngine's AttnFuncWithCPAndKVP2P
  // splits it. out [B, Tl, NH*hs] and lse [B, NH, Tl] (fp32) hold each row's attention over the keys seen so far:
  // with `merge` false the block's rows are overwritten; with `merge` true they are combined by the log-sum-exp
  // rule lse = log(e^lse + e^lse_blk), out = e^(lse_old - lse) out + e^(lse_blk - lse) out_blk (the online softmax).
  // Rows outside the block are untouched. Backends without it throw (the trainer refuses cp > 1 on them first).
  struct AttentionBlock {
    int q_lo = 0, q_len = 0, k_lo = 0, k_len = 0;
    bool causal = false;
  };
  virtual void attention_block_forward(Tensor out, Tensor lse, Tensor q, Tensor kv, int B, int Tl, int NH, int KVH,
                                       int hs, const AttentionBlock& blk, bool merge);
  // The block's backward from the final (merged) out and lse, as FlashAttention-2's: P = exp(s - lse),
  // D = rowsum(dout * out). Accumulates (+=) into the q columns of dq [B, Tl, (NH+2*KVH)*hs] and into dkv [B, Tl,
  // 2*KVH*hs] (the key/value gradients summed over the query heads sharing them).
  virtual void attention_block_backward(Tensor dq, Tensor dkv, Tensor dout, Tensor out, Tensor lse, Tensor q,
                                        Tensor kv, int B, int Tl, int NH, int KVH, int hs, const AttentionBlock& blk);

  // ---- token + learned position embedding ----
  // Row r (0 <= r < N) holds sequence position (row0 + r) % T: out[r] = wte[tokens[r]] + wpe[(row0 + r) % T].
  // row0 is the first global row this rank holds (non-zero only under sequence parallelism). An empty wpe (dwpe)
  // means no position table (rotary positions): out[r] = wte[tokens[r]].
  virtual void embedding_forward(Tensor out, Tensor tokens, Tensor wte, Tensor wpe, int N, int T, int C, int row0) = 0;
  virtual void embedding_backward_weight(Tensor dwte, Tensor dwpe, Tensor dout, Tensor tokens, int N, int T, int C,
                                         int row0) = 0;

  // ---- softmax cross-entropy over V classes ----
  // probs[N,V] = softmax(logits) (probs may alias logits); losses[N] = -log probs[target].
  virtual void crossentropy_forward(Tensor losses, Tensor probs, Tensor logits, Tensor targets, int N, int V) = 0;
  // dlogits[N,V] = scale * (probs - onehot(target)) (dlogits may alias probs).
  virtual void crossentropy_backward(Tensor dlogits, Tensor probs, Tensor targets, int N, int V, float scale) = 0;

  // ---- element-wise and reductions ----
  virtual void add(Tensor out, Tensor a, Tensor b, std::int64_t n) = 0;  // out = a + b (out may alias a or b)
  virtual void accumulate(Tensor y, Tensor x, std::int64_t n) = 0;       // y += x
  virtual void scale(Tensor x, float s, std::int64_t n) = 0;             // x *= s
  virtual void copy(Tensor dst, Tensor src, std::int64_t n) = 0;         // same dtype, no overlap
  virtual void fill_zero(Tensor x) = 0;                                  // whole view
  // dst = src converted to dst's dtype (f32 <-> bf16, round to nearest even); a plain copy when the dtypes agree.
  // Backends whose compute dtype is f32 never need a conversion, so only the same-dtype case is built in; a bf16
  // backend overrides this (the runtime refreshes its bf16 parameter copy from the fp32 master weights with it).
  virtual void convert(Tensor dst, Tensor src, std::int64_t n) {
    if (dst.dtype != src.dtype) throw std::logic_error(std::string(name()) + " backend: no dtype conversion");
    copy(dst, src, n);
  }
  virtual double sum_squares(Tensor x) = 0;  // sum of x^2 accumulated in double, in index order
  virtual double sum(Tensor x) = 0;          // sum of x accumulated in double, in index order
  // sum_squares of every part, added in the parts' order starting from 0.0: bit for bit the loop below, which is
  // what this default runs. A device backend overrides it to wait for the device once instead of once per part
  // (the global gradient norm sums ~300 parameter segments per step: Chunk::grad_sum_squares).
  virtual double total_sum_squares(std::span<const Tensor> parts) {
    double total = 0.0;
    for (const Tensor& part : parts) total += sum_squares(part);
    return total;
  }

  // ---- optimizer ----
  // One AdamW step on n fp32 elements: m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
  // p -= lr * (m/bc1 / (sqrt(v/bc2) + eps) + wd * p), with g = grad_scale * grads.
  virtual void adamw_update(Tensor params, Tensor grads, Tensor m, Tensor v, std::int64_t n, const AdamWArgs& args) = 0;

  // ---- profile ----
  void set_profiling(bool on) { profiling_ = on; }
  bool profiling() const { return profiling_; }
  const OpStats& stats(OpKind k) const { return stats_[static_cast<int>(k)]; }
  void reset_stats();

 protected:
  // Backends call this for each operation while profiling() is on (time and matmul FLOPs).
  void record(OpKind k, double seconds, double flops);

 private:
  std::size_t bytes_in_use_ = 0;
  std::size_t peak_bytes_ = 0;
  bool profiling_ = false;
  OpStats stats_[static_cast<int>(OpKind::count)]{};

  virtual void* raw_allocate(std::size_t bytes) = 0;
  virtual void raw_deallocate(void* p) noexcept = 0;
};

// "cpu" (always built) or "cuda" (when built with ZEROPP_HAVE_CUDA). Throws zeropp::SpecError("backend", ...)
// naming the known backends otherwise. `threads` is the CPU backend's Eigen thread count (1 per MPI rank).
std::unique_ptr<Backend> make_backend(std::string_view name, int threads = 1);

}  // namespace zeropp::e2e
