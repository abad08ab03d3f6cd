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
using ArrayMap = Eigen::Map<Eigen::ArrayXf>;  // element-wise work through Eigen's vectorised exp / tanh

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

// ---------------------------------------------------------------- RMSNorm

void CpuBackend::rmsnorm_forward(Tensor out, Tensor rstd, Tensor inp, Tensor weight, int N, int C) {
  OpTimer timer(profiling());
  const std::int64_t nc = std::int64_t{N} * C;
  float* o = fp(out, nc, "rmsnorm out");
  float* rs = fp(rstd, N, "rmsnorm rstd");
  const float* x = fp(inp, nc, "rmsnorm inp");
  const float* w = fp(weight, C, "rmsnorm weight");
  for (int n = 0; n < N; ++n) {
    const float* xr = x + std::int64_t{n} * C;
    float ss = 0.0f;
    for (int c = 0; c < C; ++c) ss += xr[c] * xr[c];
    const float r = 1.0f / std::sqrt(ss / static_cast<float>(C) + kLayerNormEps);
    float* orow = o + std::int64_t{n} * C;
    for (int c = 0; c < C; ++c) orow[c] = xr[c] * r * w[c];
    rs[n] = r;
  }
  if (profiling()) record(OpKind::rmsnorm, timer.seconds(), 0.0);
}

void CpuBackend::rmsnorm_backward_input(Tensor dinp, Tensor dout, Tensor inp, Tensor rstd, Tensor weight, int N, int C,
                                        bool accumulate) {
  OpTimer timer(profiling());
  const std::int64_t nc = std::int64_t{N} * C;
  float* dx = fp(dinp, nc, "rmsnorm dinp");
  const float* dy = fp(dout, nc, "rmsnorm dout");
  const float* x = fp(inp, nc, "rmsnorm inp");
  const float* rs = fp(rstd, N, "rmsnorm rstd");
  const float* w = fp(weight, C, "rmsnorm weight");
  for (int n = 0; n < N; ++n) {
    const std::int64_t off = std::int64_t{n} * C;
    // g = dy * w, xhat = x * rstd: dx = rstd * (g - xhat * mean(g * xhat)).
    float mean_g_xhat = 0.0f;
    for (int c = 0; c < C; ++c) mean_g_xhat += dy[off + c] * w[c] * x[off + c] * rs[n];
    mean_g_xhat /= static_cast<float>(C);
    for (int c = 0; c < C; ++c) {
      const float g = (dy[off + c] * w[c] - x[off + c] * rs[n] * mean_g_xhat) * rs[n];
      dx[off + c] = accumulate ? dx[off + c] + g : g;
    }
  }
  if (profiling()) record(OpKind::rmsnorm, timer.seconds(), 0.0);
}

void CpuBackend::rmsnorm_backward_weight(Tensor dweight, Tensor dout, Tensor inp, Tensor rstd, int N, int C) {
  OpTimer timer(profiling());
  const std::int64_t nc = std::int64_t{N} * C;
  float* dw = fp(dweight, C, "rmsnorm dweight");
  const float* dy = fp(dout, nc, "rmsnorm dout");
  const float* x = fp(inp, nc, "rmsnorm inp");
  const float* rs = fp(rstd, N, "rmsnorm rstd");
  for (int n = 0; n < N; ++n) {
    const std::int64_t off = std::int64_t{n} * C;
    for (int c = 0; c < C; ++c) dw[c] += dy[off + c] * x[off + c] * rs[n];
  }
  if (profiling()) record(OpKind::rmsnorm, timer.seconds(), 0.0);
}

// ---------------------------------------------------------------- SwiGLU

void CpuBackend::swiglu_forward(Tensor out, Tensor inp, int N, int F) {
  OpTimer timer(profiling());
  float* o = fp(out, std::int64_t{N} * F, "swiglu out");
  float* x = fp(inp, std::int64_t{N} * 2 * F, "swiglu inp");
  for (int n = 0; n < N; ++n) {
    const ArrayMap gate(x + std::int64_t{n} * 2 * F, F), up(x + std::int64_t{n} * 2 * F + F, F);
    ArrayMap y(o + std::int64_t{n} * F, F);
    y = gate / (1.0f + (-gate).exp()) * up;  // silu(gate) * up, vectorised exp
  }
  if (profiling()) record(OpKind::swiglu, timer.seconds(), 0.0);
}

void CpuBackend::swiglu_backward(Tensor dinp, Tensor inp, Tensor dout, int N, int F) {
  OpTimer timer(profiling());
  float* dx = fp(dinp, std::int64_t{N} * 2 * F, "swiglu dinp");
  float* x = fp(inp, std::int64_t{N} * 2 * F, "swiglu inp");
  float* dy = fp(dout, std::int64_t{N} * F, "swiglu dout");
  Eigen::ArrayXf sig(F);
  for (int n = 0; n < N; ++n) {
    const std::int64_t off = std::int64_t{n} * 2 * F;
    const ArrayMap gate(x + off, F), up(x + off + F, F), g(dy + std::int64_t{n} * F, F);
    ArrayMap dgate(dx + off, F), dup(dx + off + F, F);
    sig = 1.0f / (1.0f + (-gate).exp());
    dup = g * gate * sig;                                 // d up = dy * silu(gate)
    dgate = g * up * sig * (1.0f + gate * (1.0f - sig));  // silu'(x) = s(x) (1 + x (1 - s(x)))
  }
  if (profiling()) record(OpKind::swiglu, timer.seconds(), 0.0);
}

// ---------------------------------------------------------------- rotary position embedding

const CpuBackend::RopeTable& CpuBackend::rope_table(int T, int rotary_dims, double theta) {
  RopeTable& t = rope_table_;
  // A position's angles do not depend on T: a table of at least T positions serves.
  if (t.T >= T && t.rotary_dims == rotary_dims && t.theta == theta) return t;
  const int half = rotary_dims / 2;
  t.T = T;
  t.rotary_dims = rotary_dims;
  t.theta = theta;
  t.cos.resize(static_cast<std::size_t>(T) * half);
  t.sin.resize(t.cos.size());
  for (int pos = 0; pos < T; ++pos)
    for (int i = 0; i < half; ++i) {
      const double angle = pos * std::pow(theta, -2.0 * i / rotary_dims);
      t.cos[static_cast<std::size_t>(pos) * half + i] = static_cast<float>(std::cos(angle));
      t.sin[static_cast<std::size_t>(pos) * half + i] = static_cast<float>(std::sin(angle));
    }
  return t;
}

void CpuBackend::rope(Tensor qkv, int N, int T, int NH, int KVH, int hs, int rotary_dims, double theta, bool inverse,
                      int pos0) {
  OpTimer timer(profiling());
  if (rotary_dims < 2 || rotary_dims % 2 != 0 || rotary_dims > hs || T < 1 || !(theta > 0) || pos0 < 0)
    throw std::logic_error("cpu backend: rope needs an even rotary_dims in [2, hs], T >= 1, theta > 0, pos0 >= 0");
  const int W = (NH + 2 * KVH) * hs, half = rotary_dims / 2, heads = NH + KVH;  // q and k heads are contiguous
  float* x = fp(qkv, std::int64_t{N} * W, "rope qkv");
  const RopeTable& tab = rope_table(pos0 + T, rotary_dims, theta);
  const float sign = inverse ? -1.0f : 1.0f;
  for (int r = 0; r < N; ++r) {
    const int pos = pos0 + r % T;
    const float* cs = tab.cos.data() + static_cast<std::size_t>(pos) * half;
    const float* sn = tab.sin.data() + static_cast<std::size_t>(pos) * half;
    for (int h = 0; h < heads; ++h) {
      float* head = x + std::int64_t{r} * W + std::int64_t{h} * hs;
      for (int i = 0; i < half; ++i) {
        const float a = head[i], b = head[i + half], s = sign * sn[i];
        head[i] = a * cs[i] - b * s;
        head[i + half] = b * cs[i] + a * s;
      }
    }
  }
  if (profiling()) record(OpKind::rope, timer.seconds(), 0.0);
}

// ---------------------------------------------------------------- GELU

// Through Eigen arrays: its tanh is a vectorised rational approximation (a few ulp), ~10x faster than a scalar
// std::tanh loop, which otherwise makes GELU a quarter of a step.

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
// Row layout of qkv: [q: NH heads | k: KVH heads | v: KVH heads], hs columns per head, W = (NH + 2 KVH) hs per
// row; query head h reads key/value head h / (NH / KVH).

namespace {

struct HeadLayout {
  int NH, KVH, hs;
  int W() const { return (NH + 2 * KVH) * hs; }
  int group() const { return NH / KVH; }
  std::int64_t q(int h) const { return std::int64_t{h} * hs; }
  std::int64_t k(int h) const { return std::int64_t{NH} * hs + std::int64_t{h / group()} * hs; }
  std::int64_t v(int h) const { return std::int64_t{NH + KVH} * hs + std::int64_t{h / group()} * hs; }
};

HeadLayout head_layout(int NH, int KVH, int hs) {
  if (NH < 1 || KVH < 1 || hs < 1 || NH % KVH != 0)
    throw std::logic_error("cpu backend: attention needs KVH >= 1 dividing NH >= 1 and hs >= 1");
  return {NH, KVH, hs};
}

}  // namespace

void CpuBackend::grouped_attention_forward(Tensor out, Tensor att, Tensor qkv, int B, int T, int NH, int KVH, int hs) {
  OpTimer timer(profiling());
  const HeadLayout hl = head_layout(NH, KVH, hs);
  const int W = hl.W(), C = NH * hs;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  float* o = fp(out, std::int64_t{B} * T * C, "attention out");
  float* p = fp(att, std::int64_t{B} * NH * T * T, "attention att");
  float* x = fp(qkv, std::int64_t{B} * T * W, "attention qkv");
  for (int b = 0; b < B; ++b) {
    float* base = x + std::int64_t{b} * T * W;
    for (int h = 0; h < NH; ++h) {
      MatMap q = mat(base + hl.q(h), T, hs, W), k = mat(base + hl.k(h), T, hs, W), v = mat(base + hl.v(h), T, hs, W);
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

void CpuBackend::grouped_attention_backward(Tensor dqkv, Tensor dout, Tensor qkv, Tensor att, int B, int T, int NH,
                                            int KVH, int hs) {
  OpTimer timer(profiling());
  const HeadLayout hl = head_layout(NH, KVH, hs);
  const int W = hl.W(), C = NH * hs;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  float* dx = fp(dqkv, std::int64_t{B} * T * W, "attention dqkv");
  float* dy = fp(dout, std::int64_t{B} * T * C, "attention dout");
  float* x = fp(qkv, std::int64_t{B} * T * W, "attention qkv");
  float* p = fp(att, std::int64_t{B} * NH * T * T, "attention att");
  // The score gradient of one head, T x T: through the allocator, so the peak it adds is counted.
  Buffer scratch(*this, std::int64_t{T} * T);
  MatMap dp = mat(scratch.view().f32(), T, T, T);
  // Key and value gradients are sums over the query heads of their group: start from zero.
  std::memset(dx, 0, sizeof(float) * static_cast<std::size_t>(B) * T * W);
  for (int b = 0; b < B; ++b) {
    const std::int64_t row = std::int64_t{b} * T * W;
    for (int h = 0; h < NH; ++h) {
      MatMap q = mat(x + row + hl.q(h), T, hs, W), k = mat(x + row + hl.k(h), T, hs, W),
             v = mat(x + row + hl.v(h), T, hs, W);
      MatMap dq = mat(dx + row + hl.q(h), T, hs, W), dk = mat(dx + row + hl.k(h), T, hs, W),
             dv = mat(dx + row + hl.v(h), T, hs, W);
      MatMap pm = mat(p + (std::int64_t{b} * NH + h) * T * T, T, T, T);
      MatMap g = mat(dy + std::int64_t{b} * T * C + std::int64_t{h} * hs, T, hs, C);
      dv.noalias() += pm.transpose() * g;  // dV = P^T dY
      dp.noalias() = g * v.transpose();    // dP = dY V^T
      // Softmax backward row by row: dS = P * (dP - sum_j dP_j P_j), times the 1/sqrt(hs) of the scores.
      for (int t = 0; t < T; ++t) {
        const float* prow = &pm(t, 0);
        float* drow = &dp(t, 0);
        float dot = 0.0f;
        for (int j = 0; j <= t; ++j) dot += drow[j] * prow[j];
        for (int j = 0; j <= t; ++j) drow[j] = prow[j] * (drow[j] - dot) * scale;
        for (int j = t + 1; j < T; ++j) drow[j] = 0.0f;
      }
      dq.noalias() = dp * k;               // dQ = dS K
      dk.noalias() += dp.transpose() * q;  // dK = dS^T Q
    }
  }
  if (profiling()) record(OpKind::attention, timer.seconds(), 8.0 * B * T * T * C);
}

// ---------------------------------------------------------------- flash-style attention
// FlashAttention-2's algorithm (Dao 2023, Algorithms 1 and 2) on Eigen blocks: the forward walks kFlashRows
// queries at a time over the causally visible keys, kFlashCols at a time, keeping each row's running maximum m and
// normaliser l (online softmax) and rescaling its partial output; it writes the output and lse = m + log l. The
// backward recomputes each tile's probabilities as exp(S - lse), and with D = rowsum(dY * Y) forms
// dS = P * (dP - D) tile by tile (dP = dY V^T): dV += P^T dY, dQ += dS K, dK += dS^T Q (dS with the 1/sqrt(hs)).
// Scratch: a few tiles and one T-vector per call, whatever T is. 64 x 64 tiles keep Eigen's GEMMs efficient and
// the working set (S, P, dP, partial output: about 64 KB at hs = 64) inside L2.

namespace {
constexpr int kFlashRows = 64;
constexpr int kFlashCols = 64;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Masks the tile's scores above the diagonal: query row i0 + r sees keys j0 + c <= i0 + r.
void causal_mask(Eigen::Ref<RowMatrix> s, int i0, int j0) {
  for (int r = 0; r < s.rows(); ++r)
    for (int c = std::max(0, i0 + r - j0 + 1); c < s.cols(); ++c) s(r, c) = kNegInf;
}
}  // namespace

void CpuBackend::flash_attention_forward(Tensor out, Tensor lse, Tensor qkv, int B, int T, int NH, int KVH, int hs) {
  OpTimer timer(profiling());
  const HeadLayout hl = head_layout(NH, KVH, hs);
  const int W = hl.W(), C = NH * hs;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  float* o = fp(out, std::int64_t{B} * T * C, "flash attention out");
  float* l_out = fp(lse, std::int64_t{B} * NH * T, "flash attention lse");
  float* x = fp(qkv, std::int64_t{B} * T * W, "flash attention qkv");
  const int br = std::min(kFlashRows, T), bc = std::min(kFlashCols, T);
  Buffer scratch(*this, std::int64_t{br} * bc + std::int64_t{br} * hs + 2 * br);
  float* sp = scratch.view().f32();
  MatMap s_tile = mat(sp, br, bc, bc), acc_tile = mat(sp + br * bc, br, hs, hs);
  double flops = 0.0;  // the tiles' matmul FLOPs: about half of the unfused kernel's T x T
  Eigen::Map<Eigen::VectorXf> m_all(sp + br * bc + br * hs, br), l_all(sp + br * bc + br * hs + br, br);
  for (int b = 0; b < B; ++b) {
    float* base = x + std::int64_t{b} * T * W;
    for (int h = 0; h < NH; ++h) {
      MatMap q = mat(base + hl.q(h), T, hs, W), k = mat(base + hl.k(h), T, hs, W), v = mat(base + hl.v(h), T, hs, W);
      MatMap y = mat(o + std::int64_t{b} * T * C + std::int64_t{h} * hs, T, hs, C);
      float* lse_row = l_out + (std::int64_t{b} * NH + h) * T;
      for (int i0 = 0; i0 < T; i0 += br) {
        const int rows = std::min(br, T - i0), last = i0 + rows - 1;
        auto m = m_all.head(rows), l = l_all.head(rows);
        auto acc = acc_tile.topRows(rows);
        m.setConstant(kNegInf);
        l.setZero();
        acc.setZero();
        for (int j0 = 0; j0 <= last; j0 += bc) {
          const int cols = std::min(bc, last + 1 - j0);
          flops += 4.0 * rows * cols * hs;  // S = Q K^T and P V on this tile
          auto st = s_tile.topLeftCorner(rows, cols);
          st.noalias() = scale * (q.middleRows(i0, rows) * k.middleRows(j0, cols).transpose());
          if (j0 + cols - 1 > i0) causal_mask(st, i0, j0);
          for (int r = 0; r < rows; ++r) {
            // Key j0 <= i0 + r for every row that sees this tile; a row that sees none keeps m (finite: key 0 came
            // first) and gets exp(-inf) = 0 everywhere.
            const float m_new = std::max(m(r), st.row(r).maxCoeff());
            const float alpha = std::exp(m(r) - m_new);  // 0 on the first tile (m = -inf)
            st.row(r).array() = (st.row(r).array() - m_new).exp();
            l(r) = alpha * l(r) + st.row(r).sum();
            acc.row(r) *= alpha;
            m(r) = m_new;
          }
          acc.noalias() += st * v.middleRows(j0, cols);
        }
        for (int r = 0; r < rows; ++r) {
          y.row(i0 + r) = acc.row(r) / l(r);
          lse_row[i0 + r] = m(r) + std::log(l(r));
        }
      }
    }
  }
  if (profiling()) record(OpKind::attention, timer.seconds(), flops);
}

void CpuBackend::flash_attention_backward(Tensor dqkv, Tensor dout, Tensor out, Tensor lse, Tensor qkv, int B, int T,
                                          int NH, int KVH, int hs) {
  OpTimer timer(profiling());
  const HeadLayout hl = head_layout(NH, KVH, hs);
  const int W = hl.W(), C = NH * hs;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  float* dx = fp(dqkv, std::int64_t{B} * T * W, "flash attention dqkv");
  float* dy = fp(dout, std::int64_t{B} * T * C, "flash attention dout");
  float* yo = fp(out, std::int64_t{B} * T * C, "flash attention out");
  float* l_in = fp(lse, std::int64_t{B} * NH * T, "flash attention lse");
  float* x = fp(qkv, std::int64_t{B} * T * W, "flash attention qkv");
  const int br = std::min(kFlashRows, T), bc = std::min(kFlashCols, T);
  Buffer scratch(*this, 2 * std::int64_t{br} * bc + T);
  float* sp = scratch.view().f32();
  MatMap p_tile = mat(sp, br, bc, bc), dp_tile = mat(sp + br * bc, br, bc, bc);
  Eigen::Map<Eigen::VectorXf> d_all(sp + 2 * br * bc, T);
  double flops = 0.0;
  std::memset(dx, 0, sizeof(float) * static_cast<std::size_t>(B) * T * W);  // every gradient accumulates
  for (int b = 0; b < B; ++b) {
    const std::int64_t row = std::int64_t{b} * T * W;
    for (int h = 0; h < NH; ++h) {
      MatMap q = mat(x + row + hl.q(h), T, hs, W), k = mat(x + row + hl.k(h), T, hs, W),
             v = mat(x + row + hl.v(h), T, hs, W);
      MatMap dq = mat(dx + row + hl.q(h), T, hs, W), dk = mat(dx + row + hl.k(h), T, hs, W),
             dv = mat(dx + row + hl.v(h), T, hs, W);
      const std::int64_t yoff = std::int64_t{b} * T * C + std::int64_t{h} * hs;
      MatMap g = mat(dy + yoff, T, hs, C), y = mat(yo + yoff, T, hs, C);
      const Eigen::Map<const Eigen::VectorXf> lse_h(l_in + (std::int64_t{b} * NH + h) * T, T);
      d_all = (g.array() * y.array()).rowwise().sum().matrix();  // D = rowsum(dY * Y)
      for (int j0 = 0; j0 < T; j0 += bc) {
        const int cols = std::min(bc, T - j0);
        for (int i0 = j0 / br * br; i0 < T; i0 += br) {  // the query tiles that see keys j0 and later
          const int rows = std::min(br, T - i0);
          flops += 10.0 * rows * cols * hs;  // S again, dV, dP, dQ, dK
          auto pt = p_tile.topLeftCorner(rows, cols);
          auto dpt = dp_tile.topLeftCorner(rows, cols);
          pt.noalias() = scale * (q.middleRows(i0, rows) * k.middleRows(j0, cols).transpose());
          if (j0 + cols - 1 > i0) causal_mask(pt, i0, j0);
          pt.array().colwise() -= lse_h.segment(i0, rows).array();
          pt.array() = pt.array().exp();  // P, exactly 0 where masked
          dv.middleRows(j0, cols).noalias() += pt.transpose() * g.middleRows(i0, rows);
          dpt.noalias() = g.middleRows(i0, rows) * v.middleRows(j0, cols).transpose();
          dpt.array().colwise() -= d_all.segment(i0, rows).array();
          dpt.array() *= pt.array() * scale;  // dS, with the scores' 1/sqrt(hs)
          dq.middleRows(i0, rows).noalias() += dpt * k.middleRows(j0, cols);
          dk.middleRows(j0, cols).noalias() += dpt.transpose() * q.middleRows(i0, rows);
        }
      }
    }
  }
  if (profiling()) record(OpKind::attention, timer.seconds(), flops);
}

// ---------------------------------------------------------------- one block of ring attention

namespace {
void check_block(const Backend::AttentionBlock& b, int Tl) {
  const bool ok = b.q_lo >= 0 && b.q_len >= 1 && b.q_lo + b.q_len <= Tl && b.k_lo >= 0 && b.k_len >= 1 &&
                  b.k_lo + b.k_len <= Tl && (!b.causal || b.q_len == b.k_len);
  if (!ok)
    throw std::logic_error("cpu backend: attention block outside the sequence's Tl rows, or causal and not square");
}
}  // namespace

// Query rows kFlashRows at a time against all the block's keys (a rank's share of a sequence is short on this
// backend): each tile's softmax is exact, then merged into the running (out, lse) row by row.
void CpuBackend::attention_block_forward(Tensor out, Tensor lse, Tensor q, Tensor kv, int B, int Tl, int NH, int KVH,
                                         int hs, const AttentionBlock& blk, bool merge) {
  OpTimer timer(profiling());
  check_block(blk, Tl);
  const HeadLayout hl = head_layout(NH, KVH, hs);
  const int W = hl.W(), C = NH * hs, KW = 2 * KVH * hs;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  float* o = fp(out, std::int64_t{B} * Tl * C, "attention block out");
  float* l_io = fp(lse, std::int64_t{B} * NH * Tl, "attention block lse");
  float* x = fp(q, std::int64_t{B} * Tl * W, "attention block q");
  float* y = fp(kv, std::int64_t{B} * Tl * KW, "attention block kv");
  const int br = std::min(kFlashRows, blk.q_len), n = blk.k_len;
  Buffer scratch(*this, std::int64_t{br} * n + std::int64_t{br} * hs + br);
  float* sp = scratch.view().f32();
  float* tile_lse = sp + std::int64_t{br} * n + std::int64_t{br} * hs;
  double flops = 0.0;
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < NH; ++h) {
      float* qb = x + (std::int64_t{b} * Tl + blk.q_lo) * W + hl.q(h);
      float* kb = y + (std::int64_t{b} * Tl + blk.k_lo) * KW + std::int64_t{h / hl.group()} * hs;
      MatMap k = mat(kb, n, hs, KW), v = mat(kb + std::int64_t{KVH} * hs, n, hs, KW);
      float* lse_row = l_io + (std::int64_t{b} * NH + h) * Tl + blk.q_lo;
      float* ob = o + (std::int64_t{b} * Tl + blk.q_lo) * C + std::int64_t{h} * hs;
      for (int i0 = 0; i0 < blk.q_len; i0 += br) {
        const int rows = std::min(br, blk.q_len - i0);
        flops += 4.0 * rows * n * hs;  // S = Q K^T and P V
        MatMap st = mat(sp, rows, n, n), acc = mat(sp + std::int64_t{br} * n, rows, hs, hs);
        st.noalias() = scale * (mat(qb + std::int64_t{i0} * W, rows, hs, W) * k.transpose());
        if (blk.causal) causal_mask(st, i0, 0);
        for (int r = 0; r < rows; ++r) {
          const float m = st.row(r).maxCoeff();  // finite: every row sees at least one key (a causal row key 0)
          st.row(r).array() = (st.row(r).array() - m).exp();
          const float l = st.row(r).sum();
          st.row(r) /= l;
          tile_lse[r] = m + std::log(l);
        }
        acc.noalias() = st * v;
        for (int r = 0; r < rows; ++r) {
          Eigen::Map<Eigen::RowVectorXf> yo(ob + std::int64_t{i0 + r} * C, hs);
          float& l_old = lse_row[i0 + r];
          if (!merge) {
            yo = acc.row(r);
            l_old = tile_lse[r];
            continue;
          }
          // The online-softmax merge (FlashAttention-2; TE's flash_attn_fwd_out_correction).
          const float mx = std::max(l_old, tile_lse[r]);
          const float l_new = mx + std::log(std::exp(l_old - mx) + std::exp(tile_lse[r] - mx));
          yo = yo * std::exp(l_old - l_new) + acc.row(r) * std::exp(tile_lse[r] - l_new);
          l_old = l_new;
        }
      }
    }
  }
  if (profiling()) record(OpKind::attention, timer.seconds(), flops);
}

void CpuBackend::attention_block_backward(Tensor dq, Tensor dkv, Tensor dout, Tensor out, Tensor lse, Tensor q,
                                          Tensor kv, int B, int Tl, int NH, int KVH, int hs,
                                          const AttentionBlock& blk) {
  OpTimer timer(profiling());
  check_block(blk, Tl);
  const HeadLayout hl = head_layout(NH, KVH, hs);
  const int W = hl.W(), C = NH * hs, KW = 2 * KVH * hs;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  float* dx = fp(dq, std::int64_t{B} * Tl * W, "attention block dq");
  float* dy = fp(dkv, std::int64_t{B} * Tl * KW, "attention block dkv");
  float* go = fp(dout, std::int64_t{B} * Tl * C, "attention block dout");
  float* yo = fp(out, std::int64_t{B} * Tl * C, "attention block out");
  float* l_in = fp(lse, std::int64_t{B} * NH * Tl, "attention block lse");
  float* x = fp(q, std::int64_t{B} * Tl * W, "attention block q");
  float* y = fp(kv, std::int64_t{B} * Tl * KW, "attention block kv");
  const int br = std::min(kFlashRows, blk.q_len), n = blk.k_len;
  Buffer scratch(*this, 2 * std::int64_t{br} * n + br);
  float* sp = scratch.view().f32();
  double flops = 0.0;
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < NH; ++h) {
      const std::int64_t qrow = (std::int64_t{b} * Tl + blk.q_lo) * W + hl.q(h);
      const std::int64_t krow = (std::int64_t{b} * Tl + blk.k_lo) * KW + std::int64_t{h / hl.group()} * hs;
      const std::int64_t orow = (std::int64_t{b} * Tl + blk.q_lo) * C + std::int64_t{h} * hs;
      MatMap k = mat(y + krow, n, hs, KW), v = mat(y + krow + std::int64_t{KVH} * hs, n, hs, KW);
      MatMap dk = mat(dy + krow, n, hs, KW), dv = mat(dy + krow + std::int64_t{KVH} * hs, n, hs, KW);
      const float* lse_row = l_in + (std::int64_t{b} * NH + h) * Tl + blk.q_lo;
      for (int i0 = 0; i0 < blk.q_len; i0 += br) {
        const int rows = std::min(br, blk.q_len - i0);
        flops += 10.0 * rows * n * hs;  // S again, dV, dP, dQ, dK
        const std::int64_t qi = qrow + std::int64_t{i0} * W, oi = orow + std::int64_t{i0} * C;
        MatMap qt = mat(x + qi, rows, hs, W), dqt = mat(dx + qi, rows, hs, W);
        MatMap g = mat(go + oi, rows, hs, C), yt = mat(yo + oi, rows, hs, C);
        MatMap pt = mat(sp, rows, n, n), dpt = mat(sp + std::int64_t{br} * n, rows, n, n);
        Eigen::Map<Eigen::VectorXf> d(sp + 2 * std::int64_t{br} * n, rows);
        d = (g.array() * yt.array()).rowwise().sum().matrix();  // D = rowsum(dY * Y) of the merged output
        pt.noalias() = scale * (qt * k.transpose());
        if (blk.causal) causal_mask(pt, i0, 0);
        pt.array().colwise() -= Eigen::Map<const Eigen::VectorXf>(lse_row + i0, rows).array();
        pt.array() = pt.array().exp();  // P of this block under the final normaliser; 0 where masked
        dv.noalias() += pt.transpose() * g;
        dpt.noalias() = g * v.transpose();
        dpt.array().colwise() -= d.array();
        dpt.array() *= pt.array() * scale;
        dqt.noalias() += dpt * k;
        dk.noalias() += dpt.transpose() * qt;
      }
    }
  }
  if (profiling()) record(OpKind::attention, timer.seconds(), flops);
}

// ---------------------------------------------------------------- embedding

void CpuBackend::embedding_forward(Tensor out, Tensor tokens, Tensor wte, Tensor wpe, int N, int T, int C, int row0) {
  OpTimer timer(profiling());
  float* o = fp(out, std::int64_t{N} * C, "embedding out");
  const std::int32_t* tok = ip(tokens, N, "embedding tokens");
  const float* e = fp(wte, 0, "embedding wte");
  const float* pe = wpe.empty() ? nullptr : fp(wpe, std::int64_t{T} * C, "embedding wpe");
  const std::int64_t vocab = wte.numel / C;
  for (int r = 0; r < N; ++r) {
    if (tok[r] < 0 || tok[r] >= vocab) {
      throw std::out_of_range("embedding: token " + std::to_string(tok[r]) + " outside the vocabulary of " +
                              std::to_string(vocab));
    }
    const float* er = e + std::int64_t{tok[r]} * C;
    float* orow = o + std::int64_t{r} * C;
    if (pe == nullptr) {
      for (int c = 0; c < C; ++c) orow[c] = er[c];
      continue;
    }
    const float* pr = pe + std::int64_t{(row0 + r) % T} * C;
    for (int c = 0; c < C; ++c) orow[c] = er[c] + pr[c];
  }
  if (profiling()) record(OpKind::embedding, timer.seconds(), 0.0);
}

void CpuBackend::embedding_backward_weight(Tensor dwte, Tensor dwpe, Tensor dout, Tensor tokens, int N, int T, int C,
                                           int row0) {
  OpTimer timer(profiling());
  float* de = fp(dwte, 0, "embedding dwte");
  float* dpe = dwpe.empty() ? nullptr : fp(dwpe, std::int64_t{T} * C, "embedding dwpe");
  const float* dy = fp(dout, std::int64_t{N} * C, "embedding dout");
  const std::int32_t* tok = ip(tokens, N, "embedding tokens");
  const std::int64_t vocab = dwte.numel / C;
  for (int r = 0; r < N; ++r) {
    if (tok[r] < 0 || tok[r] >= vocab) throw std::out_of_range("embedding backward: token outside the vocabulary");
    float* er = de + std::int64_t{tok[r]} * C;
    const float* g = dy + std::int64_t{r} * C;
    for (int c = 0; c < C; ++c) er[c] += g[c];
    if (dpe == nullptr) continue;
    float* pr = dpe + std::int64_t{(row0 + r) % T} * C;
    for (int c = 0; c < C; ++c) pr[c] += g[c];
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
