#include "e2e/backend/cpu_backend.hpp"

#include <time.h>

#include <Eigen/Core>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace zeropp::e2e {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatMap = Eigen::Map<RowMatrix, Eigen::Unaligned, Eigen::OuterStride<>>;
using VecMap = Eigen::Map<Eigen::RowVectorXf>;

// Checked typed pointers: every operation verifies that its views hold the elements it will touch.
float* fp(Tensor t, std::int64_t need, const char* what) {
  if (t.dtype != DType::f32) {
    throw std::logic_error(std::string("cpu backend: ") + what + " must be f32, is " +
                           std::string(dtype_name(t.dtype)));
  }
  if (t.numel < need) {
    throw std::logic_error(std::string("cpu backend: ") + what + " holds " + std::to_string(t.numel) +
                           " elements, needs " + std::to_string(need));
  }
  return static_cast<float*>(t.data);
}

const std::int32_t* ip(Tensor t, std::int64_t need, const char* what) {
  if (t.dtype != DType::i32 || t.numel < need) {
    throw std::logic_error(std::string("cpu backend: ") + what + " must be i32 with at least " + std::to_string(need) +
                           " elements");
  }
  return static_cast<const std::int32_t*>(t.data);
}

MatMap mat(float* p, int rows, int cols, int ld) { return MatMap(p, rows, cols, Eigen::OuterStride<>(ld)); }

// C = beta C + alpha op(A) op(B) on Eigen maps; the four transpose cases are distinct expression types.
template <class OA, class OB>
void gemm_into(MatMap& c, const OA& a, const OB& b, float alpha, float beta) {
  if (beta == 0.0f) {
    c.noalias() = alpha * (a * b);
  } else {
    if (beta != 1.0f) c *= beta;
    c.noalias() += alpha * (a * b);
  }
}

// Times an operation into the backend's profile while profiling is on. The clock is this thread's CPU time:
// the CPU backend computes on the calling thread (one Eigen thread per rank), and on a shared machine CPU time
// is not inflated by preemption the way wall time is (on an idle machine the two agree).
class OpTimer {
 public:
  explicit OpTimer(bool on) : on_(on) {
    if (on_) start_ = now();
  }
  double seconds() const { return on_ ? now() - start_ : 0.0; }

 private:
  static double now() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  }
  bool on_;
  double start_ = 0.0;
};

constexpr float kLayerNormEps = 1e-5f;
constexpr float kGeluScale = 0.7978845608028654f;  // sqrt(2 / pi)

}  // namespace

CpuBackend::CpuBackend(int threads) { Eigen::setNbThreads(threads < 1 ? 1 : threads); }

void* CpuBackend::raw_allocate(std::size_t bytes) {
  // 64-byte alignment: whole cache lines, and Eigen's widest packets.
  std::size_t rounded = (bytes + 63) / 64 * 64;
  return std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
}

void CpuBackend::raw_deallocate(void* p) noexcept { std::free(p); }

void CpuBackend::copy_from_host(Tensor dst, const void* src) {
  if (dst.numel > 0) std::memcpy(dst.data, src, dst.bytes());
}

void CpuBackend::copy_to_host(void* dst, Tensor src) {
  if (src.numel > 0) std::memcpy(dst, src.data, src.bytes());
}

// ---------------------------------------------------------------- GEMM

void CpuBackend::gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, Tensor A, int lda, Tensor B,
                      int ldb, float beta, Tensor C, int ldc) {
  OpTimer timer(profiling());
  const int a_rows = trans_a ? K : M, a_cols = trans_a ? M : K;
  const int b_rows = trans_b ? N : K, b_cols = trans_b ? K : N;
  if (lda < a_cols || ldb < b_cols || ldc < N) throw std::logic_error("cpu backend: gemm leading dimension too small");
  float* a = fp(A, static_cast<std::int64_t>(a_rows - 1) * lda + a_cols, "gemm A");
  float* b = fp(B, static_cast<std::int64_t>(b_rows - 1) * ldb + b_cols, "gemm B");
  float* c = fp(C, static_cast<std::int64_t>(M - 1) * ldc + N, "gemm C");
  MatMap am = mat(a, a_rows, a_cols, lda);
  MatMap bm = mat(b, b_rows, b_cols, ldb);
  MatMap cm = mat(c, M, N, ldc);
  if (!trans_a && !trans_b) gemm_into(cm, am, bm, alpha, beta);
  if (!trans_a && trans_b) gemm_into(cm, am, bm.transpose(), alpha, beta);
  if (trans_a && !trans_b) gemm_into(cm, am.transpose(), bm, alpha, beta);
  if (trans_a && trans_b) gemm_into(cm, am.transpose(), bm.transpose(), alpha, beta);
  if (profiling()) record(OpKind::gemm, timer.seconds(), 2.0 * M * N * K);
}

void CpuBackend::linear_forward(Tensor out, Tensor inp, Tensor weight, Tensor bias, int N, int IC, int OC) {
  gemm(false, true, N, OC, IC, 1.0f, inp, IC, weight, IC, 0.0f, out, OC);
  if (!bias.empty()) {
    OpTimer timer(profiling());
    MatMap o = mat(fp(out, std::int64_t{N} * OC, "linear out"), N, OC, OC);
    o.rowwise() += VecMap(fp(bias, OC, "linear bias"), OC);
    if (profiling()) record(OpKind::elementwise, timer.seconds(), 0.0);
  }
}

void CpuBackend::linear_backward_input(Tensor dinp, Tensor dout, Tensor weight, int N, int IC, int OC,
                                       bool accumulate) {
  gemm(false, false, N, IC, OC, 1.0f, dout, OC, weight, IC, accumulate ? 1.0f : 0.0f, dinp, IC);
}

void CpuBackend::linear_backward_weight(Tensor dweight, Tensor dbias, Tensor dout, Tensor inp, int N, int IC, int OC) {
  gemm(true, false, OC, IC, N, 1.0f, dout, OC, inp, IC, 1.0f, dweight, IC);
  if (!dbias.empty()) {
    OpTimer timer(profiling());
    float* db = fp(dbias, OC, "linear dbias");
    const float* d = fp(dout, std::int64_t{N} * OC, "linear dout");
    // Row by row in index order: the same sum whatever the caller's split of N into micro-batches.
    for (int n = 0; n < N; ++n) {
      const float* row = d + std::int64_t{n} * OC;
      for (int o = 0; o < OC; ++o) db[o] += row[o];
    }
    if (profiling()) record(OpKind::elementwise, timer.seconds(), 0.0);
  }
}

// ---------------------------------------------------------------- layer norm

void CpuBackend::layernorm_forward(Tensor out, Tensor mean, Tensor rstd, Tensor inp, Tensor weight, Tensor bias, int N,
                                   int C) {
  OpTimer timer(profiling());
  const std::int64_t nc = std::int64_t{N} * C;
  float* o = fp(out, nc, "layernorm out");
  float* mu = fp(mean, N, "layernorm mean");
  float* rs = fp(rstd, N, "layernorm rstd");
  const float* x = fp(inp, nc, "layernorm inp");
  const float* w = fp(weight, C, "layernorm weight");
  const float* b = fp(bias, C, "layernorm bias");
  for (int n = 0; n < N; ++n) {
    const float* xr = x + std::int64_t{n} * C;
    float m = 0.0f;
    for (int c = 0; c < C; ++c) m += xr[c];
    m /= static_cast<float>(C);
    float var = 0.0f;
    for (int c = 0; c < C; ++c) var += (xr[c] - m) * (xr[c] - m);
    var /= static_cast<float>(C);
    const float r = 1.0f / std::sqrt(var + kLayerNormEps);
    float* orow = o + std::int64_t{n} * C;
    for (int c = 0; c < C; ++c) orow[c] = (xr[c] - m) * r * w[c] + b[c];
    mu[n] = m;
    rs[n] = r;
  }
  if (profiling()) record(OpKind::layernorm, timer.seconds(), 0.0);
}

void CpuBackend::layernorm_backward_input(Tensor dinp, Tensor dout, Tensor inp, Tensor mean, Tensor rstd, Tensor weight,
                                          int N, int C, bool accumulate) {
  OpTimer timer(profiling());
  const std::int64_t nc = std::int64_t{N} * C;
  float* dx = fp(dinp, nc, "layernorm dinp");
  const float* dy = fp(dout, nc, "layernorm dout");
  const float* x = fp(inp, nc, "layernorm inp");
  const float* mu = fp(mean, N, "layernorm mean");
  const float* rs = fp(rstd, N, "layernorm rstd");
  const float* w = fp(weight, C, "layernorm weight");
  for (int n = 0; n < N; ++n) {
    const std::int64_t off = std::int64_t{n} * C;
    // dxhat = dy * w; dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)).
    float mean_dxhat = 0.0f, mean_dxhat_xhat = 0.0f;
    for (int c = 0; c < C; ++c) {
      const float xhat = (x[off + c] - mu[n]) * rs[n];
      const float dxhat = dy[off + c] * w[c];
      mean_dxhat += dxhat;
      mean_dxhat_xhat += dxhat * xhat;
    }
    mean_dxhat /= static_cast<float>(C);
    mean_dxhat_xhat /= static_cast<float>(C);
    for (int c = 0; c < C; ++c) {
      const float xhat = (x[off + c] - mu[n]) * rs[n];
      const float g = (dy[off + c] * w[c] - mean_dxhat - xhat * mean_dxhat_xhat) * rs[n];
      dx[off + c] = accumulate ? dx[off + c] + g : g;
    }
  }
  if (profiling()) record(OpKind::layernorm, timer.seconds(), 0.0);
}

void CpuBackend::layernorm_backward_weight(Tensor dweight, Tensor dbias, Tensor dout, Tensor inp, Tensor mean,
                                           Tensor rstd, int N, int C) {
  OpTimer timer(profiling());
  const std::int64_t nc = std::int64_t{N} * C;
  float* dw = fp(dweight, C, "layernorm dweight");
  float* db = fp(dbias, C, "layernorm dbias");
  const float* dy = fp(dout, nc, "layernorm dout");
  const float* x = fp(inp, nc, "layernorm inp");
  const float* mu = fp(mean, N, "layernorm mean");
  const float* rs = fp(rstd, N, "layernorm rstd");
  for (int n = 0; n < N; ++n) {
    const std::int64_t off = std::int64_t{n} * C;
    for (int c = 0; c < C; ++c) {
      const float xhat = (x[off + c] - mu[n]) * rs[n];
      dw[c] += dy[off + c] * xhat;
      db[c] += dy[off + c];
    }
  }
  if (profiling()) record(OpKind::layernorm, timer.seconds(), 0.0);
}

// ---------------------------------------------------------------- GELU

// Through Eigen arrays: its tanh is a vectorised rational approximation (a few ulp), ~10x faster than a scalar
// std::tanh loop, which otherwise makes GELU a quarter of a step.
using ArrayMap = Eigen::Map<Eigen::ArrayXf>;

void CpuBackend::gelu_forward(Tensor out, Tensor inp, std::int64_t n) {
  OpTimer timer(profiling());
  ArrayMap o(fp(out, n, "gelu out"), n);
  const ArrayMap x(fp(inp, n, "gelu inp"), n);
  o = 0.5f * x * (1.0f + (kGeluScale * (x + 0.044715f * x.cube())).tanh());
  if (profiling()) record(OpKind::gelu, timer.seconds(), 0.0);
}

void CpuBackend::gelu_backward(Tensor dinp, Tensor inp, Tensor dout, std::int64_t n) {
  OpTimer timer(profiling());
  ArrayMap dx(fp(dinp, n, "gelu dinp"), n);
  const ArrayMap x(fp(inp, n, "gelu inp"), n);
  const ArrayMap dy(fp(dout, n, "gelu dout"), n);
  // d/dx [0.5 x (1 + tanh u)] = 0.5 (1 + tanh u) + 0.5 x sech^2(u) du/dx, u = k (x + 0.044715 x^3).
  constexpr std::int64_t kBlock = 4096;  // bounded temporaries, cache-resident
  Eigen::ArrayXf th(std::min(n, kBlock));
  for (std::int64_t i = 0; i < n; i += kBlock) {
    const std::int64_t m = std::min(kBlock, n - i);
    const auto xs = x.segment(i, m);
    th.head(m) = (kGeluScale * (xs + 0.044715f * xs.cube())).tanh();
    dx.segment(i, m) = (0.5f * (1.0f + th.head(m)) + 0.5f * xs * (1.0f - th.head(m).square()) * kGeluScale *
                                                         (1.0f + 3.0f * 0.044715f * xs.square())) *
                       dy.segment(i, m);
  }
  if (profiling()) record(OpKind::gelu, timer.seconds(), 0.0);
}

// ---------------------------------------------------------------- attention

void CpuBackend::attention_forward(Tensor out, Tensor att, Tensor qkv, int B, int T, int C, int NH) {
  OpTimer timer(profiling());
  const int hs = C / NH;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  float* o = fp(out, std::int64_t{B} * T * C, "attention out");
  float* p = fp(att, std::int64_t{B} * NH * T * T, "attention att");
  float* x = fp(qkv, std::int64_t{B} * T * 3 * C, "attention qkv");
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < NH; ++h) {
      float* base = x + std::int64_t{b} * T * 3 * C + std::int64_t{h} * hs;
      MatMap q = mat(base, T, hs, 3 * C), k = mat(base + C, T, hs, 3 * C), v = mat(base + 2 * C, T, hs, 3 * C);
      MatMap s = mat(p + (std::int64_t{b} * NH + h) * T * T, T, T, T);
      s.noalias() = scale * (q * k.transpose());
      // Causal softmax: row t sees columns 0..t; the rest is zero so P @ V needs no mask.
      for (int t = 0; t < T; ++t) {
        float* row = &s(t, 0);
        float mx = -std::numeric_limits<float>::infinity();
        for (int j = 0; j <= t; ++j) mx = std::max(mx, row[j]);
        Eigen::Map<Eigen::ArrayXf> live(row, t + 1);
        live = (live - mx).exp();  // vectorised exp
        float z = 0.0f;
        for (int j = 0; j <= t; ++j) z += row[j];
        const float inv = 1.0f / z;
        for (int j = 0; j <= t; ++j) row[j] *= inv;
        for (int j = t + 1; j < T; ++j) row[j] = 0.0f;
      }
      MatMap y = mat(o + std::int64_t{b} * T * C + std::int64_t{h} * hs, T, hs, C);
      y.noalias() = s * v;
    }
  }
  if (profiling()) record(OpKind::attention, timer.seconds(), 4.0 * B * T * T * C);
}

void CpuBackend::attention_backward(Tensor dqkv, Tensor dout, Tensor qkv, Tensor att, int B, int T, int C, int NH) {
  OpTimer timer(profiling());
  const int hs = C / NH;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  float* dx = fp(dqkv, std::int64_t{B} * T * 3 * C, "attention dqkv");
  float* dy = fp(dout, std::int64_t{B} * T * C, "attention dout");
  float* x = fp(qkv, std::int64_t{B} * T * 3 * C, "attention qkv");
  float* p = fp(att, std::int64_t{B} * NH * T * T, "attention att");
  RowMatrix dp(T, T);
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < NH; ++h) {
      const std::int64_t off = std::int64_t{b} * T * 3 * C + std::int64_t{h} * hs;
      MatMap q = mat(x + off, T, hs, 3 * C), k = mat(x + off + C, T, hs, 3 * C), v = mat(x + off + 2 * C, T, hs, 3 * C);
      MatMap dq = mat(dx + off, T, hs, 3 * C), dk = mat(dx + off + C, T, hs, 3 * C),
             dv = mat(dx + off + 2 * C, T, hs, 3 * C);
      MatMap pm = mat(p + (std::int64_t{b} * NH + h) * T * T, T, T, T);
      MatMap g = mat(dy + std::int64_t{b} * T * C + std::int64_t{h} * hs, T, hs, C);
      dv.noalias() = pm.transpose() * g;  // dV = P^T dY
      dp.noalias() = g * v.transpose();   // dP = dY V^T
      // Softmax backward row by row: dS = P * (dP - sum_j dP_j P_j), times the 1/sqrt(hs) of the scores.
      for (int t = 0; t < T; ++t) {
        const float* prow = &pm(t, 0);
        float* drow = &dp(t, 0);
        float dot = 0.0f;
        for (int j = 0; j <= t; ++j) dot += drow[j] * prow[j];
        for (int j = 0; j <= t; ++j) drow[j] = prow[j] * (drow[j] - dot) * scale;
        for (int j = t + 1; j < T; ++j) drow[j] = 0.0f;
      }
      dq.noalias() = dp * k;              // dQ = dS K
      dk.noalias() = dp.transpose() * q;  // dK = dS^T Q
    }
  }
  if (profiling()) record(OpKind::attention, timer.seconds(), 8.0 * B * T * T * C);
}

// ---------------------------------------------------------------- embedding

void CpuBackend::embedding_forward(Tensor out, Tensor tokens, Tensor wte, Tensor wpe, int N, int T, int C, int row0) {
  OpTimer timer(profiling());
  float* o = fp(out, std::int64_t{N} * C, "embedding out");
  const std::int32_t* tok = ip(tokens, N, "embedding tokens");
  const float* e = fp(wte, 0, "embedding wte");
  const float* pe = fp(wpe, std::int64_t{T} * C, "embedding wpe");
  const std::int64_t vocab = wte.numel / C;
  for (int r = 0; r < N; ++r) {
    if (tok[r] < 0 || tok[r] >= vocab) {
      throw std::out_of_range("embedding: token " + std::to_string(tok[r]) + " outside the vocabulary of " +
                              std::to_string(vocab));
    }
    const float* er = e + std::int64_t{tok[r]} * C;
    const float* pr = pe + std::int64_t{(row0 + r) % T} * C;
    float* orow = o + std::int64_t{r} * C;
    for (int c = 0; c < C; ++c) orow[c] = er[c] + pr[c];
  }
  if (profiling()) record(OpKind::embedding, timer.seconds(), 0.0);
}

void CpuBackend::embedding_backward_weight(Tensor dwte, Tensor dwpe, Tensor dout, Tensor tokens, int N, int T, int C,
                                           int row0) {
  OpTimer timer(profiling());
  float* de = fp(dwte, 0, "embedding dwte");
  float* dpe = fp(dwpe, std::int64_t{T} * C, "embedding dwpe");
  const float* dy = fp(dout, std::int64_t{N} * C, "embedding dout");
  const std::int32_t* tok = ip(tokens, N, "embedding tokens");
  const std::int64_t vocab = dwte.numel / C;
  for (int r = 0; r < N; ++r) {
    if (tok[r] < 0 || tok[r] >= vocab) throw std::out_of_range("embedding backward: token outside the vocabulary");
    float* er = de + std::int64_t{tok[r]} * C;
    float* pr = dpe + std::int64_t{(row0 + r) % T} * C;
    const float* g = dy + std::int64_t{r} * C;
    for (int c = 0; c < C; ++c) {
      er[c] += g[c];
      pr[c] += g[c];
    }
  }
  if (profiling()) record(OpKind::embedding, timer.seconds(), 0.0);
}

// ---------------------------------------------------------------- cross-entropy

void CpuBackend::crossentropy_forward(Tensor losses, Tensor probs, Tensor logits, Tensor targets, int N, int V) {
  OpTimer timer(profiling());
  float* l = fp(losses, N, "crossentropy losses");
  float* pr = fp(probs, std::int64_t{N} * V, "crossentropy probs");
  const float* lg = fp(logits, std::int64_t{N} * V, "crossentropy logits");
  const std::int32_t* tg = ip(targets, N, "crossentropy targets");
  for (int n = 0; n < N; ++n) {
    const float* in = lg + std::int64_t{n} * V;
    float* out = pr + std::int64_t{n} * V;
    if (tg[n] < 0 || tg[n] >= V) throw std::out_of_range("crossentropy: target outside the vocabulary");
    float mx = -std::numeric_limits<float>::infinity();
    for (int i = 0; i < V; ++i) mx = std::max(mx, in[i]);
    const float target_logit = in[tg[n]];
    Eigen::Map<Eigen::ArrayXf> row(out, V);
    row = (Eigen::Map<const Eigen::ArrayXf>(in, V) - mx).exp();  // vectorised exp
    double z = 0.0;
    for (int i = 0; i < V; ++i) z += out[i];
    const float inv = static_cast<float>(1.0 / z);
    for (int i = 0; i < V; ++i) out[i] *= inv;
    // -log softmax computed as logsumexp - logit: no log(0) when the target's probability underflows.
    l[n] = static_cast<float>(std::log(z)) + mx - target_logit;
  }
  if (profiling()) record(OpKind::cross_entropy, timer.seconds(), 0.0);
}

void CpuBackend::crossentropy_backward(Tensor dlogits, Tensor probs, Tensor targets, int N, int V, float scale) {
  OpTimer timer(profiling());
  float* d = fp(dlogits, std::int64_t{N} * V, "crossentropy dlogits");
  const float* pr = fp(probs, std::int64_t{N} * V, "crossentropy probs");
  const std::int32_t* tg = ip(targets, N, "crossentropy targets");
  for (int n = 0; n < N; ++n) {
    const std::int64_t off = std::int64_t{n} * V;
    for (int i = 0; i < V; ++i) d[off + i] = scale * (pr[off + i] - (i == tg[n] ? 1.0f : 0.0f));
  }
  if (profiling()) record(OpKind::cross_entropy, timer.seconds(), 0.0);
}

// ---------------------------------------------------------------- element-wise

void CpuBackend::add(Tensor out, Tensor a, Tensor b, std::int64_t n) {
  OpTimer timer(profiling());
  float* o = fp(out, n, "add out");
  const float* x = fp(a, n, "add a");
  const float* y = fp(b, n, "add b");
  for (std::int64_t i = 0; i < n; ++i) o[i] = x[i] + y[i];
  if (profiling()) record(OpKind::elementwise, timer.seconds(), 0.0);
}

void CpuBackend::accumulate(Tensor y, Tensor x, std::int64_t n) {
  OpTimer timer(profiling());
  float* o = fp(y, n, "accumulate y");
  const float* in = fp(x, n, "accumulate x");
  for (std::int64_t i = 0; i < n; ++i) o[i] += in[i];
  if (profiling()) record(OpKind::elementwise, timer.seconds(), 0.0);
}

void CpuBackend::scale(Tensor x, float s, std::int64_t n) {
  float* o = fp(x, n, "scale x");
  for (std::int64_t i = 0; i < n; ++i) o[i] *= s;
}

void CpuBackend::copy(Tensor dst, Tensor src, std::int64_t n) {
  if (dst.dtype != src.dtype || dst.numel < n || src.numel < n) throw std::logic_error("cpu backend: bad copy");
  if (n > 0) std::memcpy(dst.data, src.data, static_cast<std::size_t>(n) * dtype_size(dst.dtype));
}

void CpuBackend::fill_zero(Tensor x) {
  if (x.numel > 0) std::memset(x.data, 0, x.bytes());
}

double CpuBackend::sum_squares(Tensor x) {
  const float* p = fp(x, x.numel, "sum_squares x");
  double s = 0.0;
  for (std::int64_t i = 0; i < x.numel; ++i) s += static_cast<double>(p[i]) * p[i];
  return s;
}

double CpuBackend::sum(Tensor x) {
  const float* p = fp(x, x.numel, "sum x");
  double s = 0.0;
  for (std::int64_t i = 0; i < x.numel; ++i) s += p[i];
  return s;
}

// ---------------------------------------------------------------- AdamW

void CpuBackend::adamw_update(Tensor params, Tensor grads, Tensor m, Tensor v, std::int64_t n, const AdamWArgs& a) {
  OpTimer timer(profiling());
  float* p = fp(params, n, "adamw params");
  const float* g = fp(grads, n, "adamw grads");
  float* mm = fp(m, n, "adamw m");
  float* vv = fp(v, n, "adamw v");
  for (std::int64_t i = 0; i < n; ++i) {
    const float gi = a.grad_scale * g[i];
    mm[i] = a.beta1 * mm[i] + (1.0f - a.beta1) * gi;
    vv[i] = a.beta2 * vv[i] + (1.0f - a.beta2) * gi * gi;
    const float mhat = mm[i] / a.bias_correction1;
    const float vhat = vv[i] / a.bias_correction2;
    p[i] -= a.lr * (mhat / (std::sqrt(vhat) + a.eps) + a.weight_decay * p[i]);
  }
  if (profiling()) record(OpKind::adamw, timer.seconds(), 0.0);
}

}  // namespace zeropp::e2e
