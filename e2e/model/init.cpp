// Deterministic GPT-2 initialisation, independent of how the model is split (layout.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <thread>
#include <vector>

#include "e2e/model/layout.hpp"

namespace zeropp::e2e {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in (0, 1]: never 0, so log() below is finite.
double unit(std::uint64_t bits) { return (static_cast<double>(bits >> 11) + 1.0) * 0x1.0p-53; }

// Standard normal number `index` of the stream `key` (Box-Muller on two counter-derived uniforms).
double normal(std::uint64_t key, std::int64_t index) {
  const std::uint64_t i = static_cast<std::uint64_t>(index);
  const double u1 = unit(splitmix64(key ^ splitmix64(2 * i)));
  const double u2 = unit(splitmix64(key ^ splitmix64(2 * i + 1)));
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// Row of the unsliced QKV projection [C + 2 KVW, C] that TP rank `rank`'s local row r holds: its query heads'
// rows, then its key heads', then its value heads' (layout.hpp).
std::int64_t qkv_full_row(const GptConfig& g, int t, int rank, std::int64_t r) {
  const std::int64_t C = g.C, Cl = C / t, KVW = g.kv_width(), KVl = KVW / t;
  if (r < Cl) return rank * Cl + r;
  if (r < Cl + KVl) return C + rank * KVl + (r - Cl);
  return C + KVW + rank * KVl + (r - Cl - KVl);
}

// Row of the unsliced first MLP linear [U, C] (U = F, or 2F for SwiGLU's gate then up) for local row r.
std::int64_t up_full_row(const GptConfig& g, int t, int rank, std::int64_t r) {
  const std::int64_t F = g.F, Fl = F / t;
  if (r < Fl) return rank * Fl + r;
  return F + rank * Fl + (r - Fl);  // SwiGLU's up rows
}

// Index in the unsliced tensor of element `local` of TP rank `rank`'s slice (layout.hpp's slicing rules).
std::int64_t full_index(const GptConfig& g, ParamKind kind, int t, int rank, std::int64_t local) {
  if (t == 1) return local;
  const std::int64_t C = g.C, Cl = g.C / t, F = g.F, Fl = g.F / t;
  switch (kind) {
    case ParamKind::qkv_w:  // [Ql, C] of [C + 2 KVW, C]
      return qkv_full_row(g, t, rank, local / C) * C + local % C;
    case ParamKind::qkv_b:
      return qkv_full_row(g, t, rank, local);
    case ParamKind::attproj_w: {  // [C, Cl] of [C, C]: input columns
      const std::int64_t o = local / Cl, i = local % Cl;
      return o * C + rank * Cl + i;
    }
    case ParamKind::fc_w:  // [Ul, C] of [U, C]: output rows
      return up_full_row(g, t, rank, local / C) * C + local % C;
    case ParamKind::fc_b:
      return up_full_row(g, t, rank, local);
    case ParamKind::fcproj_w: {  // [C, Fl] of [C, F]: input columns
      const std::int64_t o = local / Fl, i = local % Fl;
      return o * F + rank * Fl + i;
    }
    default:
      return local;
  }
}

// Runs fn(begin, end) over [0, n) in contiguous ranges on up to hardware_concurrency threads. Every element's value
// depends only on its own index (normal() above is counter-based), so the result is the same on any thread count.
// Why threads: drawn one by one, a 1.3B-parameter model takes about 45 s of one core (measured on the lent H100
// machine's host, issue 23), longer than its eight training steps; small tensors stay on the calling thread.
template <class Fn>
void parallel_ranges(std::int64_t n, Fn fn) {
  constexpr std::int64_t kPerThread = std::int64_t{1} << 20;
  const std::int64_t threads =
      std::clamp<std::int64_t>(n / kPerThread, 1, std::max(1u, std::thread::hardware_concurrency()));
  if (threads == 1) return fn(0, n);
  std::vector<std::thread> pool;
  const std::int64_t step = (n + threads - 1) / threads;
  for (std::int64_t b = 0; b < n; b += step) pool.emplace_back(fn, b, std::min(n, b + step));
  for (std::thread& th : pool) th.join();
}

}  // namespace

void init_parameters(const ChunkLayout& layout, int tp_rank, std::uint64_t seed, float* host) {
  const GptConfig& g = layout.config();
  const double std_dev = 0.02;
  const double residual_std = 0.02 / std::sqrt(2.0 * g.L);  // GPT-2: residual projections scaled by 1/sqrt(2L)
  for (const ParamSegment& s : layout.segments()) {
    float* p = host + s.offset;
    const std::uint64_t key =
        splitmix64(seed ^ splitmix64((static_cast<std::uint64_t>(s.kind) << 32) ^ static_cast<std::uint32_t>(s.layer)));
    switch (s.kind) {
      case ParamKind::ln1_w:
      case ParamKind::ln2_w:
      case ParamKind::lnf_w:
        for (std::int64_t i = 0; i < s.numel; ++i) p[i] = 1.0f;
        break;
      case ParamKind::ln1_b:
      case ParamKind::ln2_b:
      case ParamKind::lnf_b:
      case ParamKind::qkv_b:
      case ParamKind::attproj_b:
      case ParamKind::fc_b:
      case ParamKind::fcproj_b:
        for (std::int64_t i = 0; i < s.numel; ++i) p[i] = 0.0f;
        break;
      default: {
        const bool residual = s.kind == ParamKind::attproj_w || s.kind == ParamKind::fcproj_w;
        const double sd = residual ? residual_std : std_dev;
        const int t = s.tp_sliced ? layout.tp_size() : 1;
        parallel_ranges(s.numel, [&](std::int64_t begin, std::int64_t end) {
          for (std::int64_t i = begin; i < end; ++i) {
            p[i] = static_cast<float>(sd * normal(key, full_index(g, s.kind, t, tp_rank, i)));
          }
        });
      }
    }
  }
}

void slice_for_tp(const GptConfig& g, ParamKind kind, int tp_size, int tp_rank, const float* full, float* local) {
  const std::int64_t C = g.C, Cl = g.C / tp_size, Ql = g.qkv_width() / tp_size, Fl = g.F / tp_size,
                     Ul = g.up_width() / tp_size;
  std::int64_t n = 0;
  switch (kind) {
    case ParamKind::wte:
    case ParamKind::lm_head:
      n = std::int64_t{g.V} * C;
      break;
    case ParamKind::wpe:
      n = std::int64_t{g.T} * C;
      break;
    case ParamKind::qkv_w:
      n = Ql * C;
      break;
    case ParamKind::qkv_b:
      n = Ql;
      break;
    case ParamKind::attproj_w:
      n = C * Cl;
      break;
    case ParamKind::fc_w:
      n = Ul * C;
      break;
    case ParamKind::fc_b:
      n = Ul;
      break;
    case ParamKind::fcproj_w:
      n = C * Fl;
      break;
    default:
      n = C;
      break;  // norm weights and shifts, attproj_b, fcproj_b
  }
  for (std::int64_t i = 0; i < n; ++i) local[i] = full[full_index(g, kind, tp_size, tp_rank, i)];
}

}  // namespace zeropp::e2e
