// Runs the mma.sync flash kernels (e2e/backend/cuda/flash_mma_kernels.cuh) in the host emulation (warp_emulation.hpp)
// and checks out, lse, dq, dk and dv against causal attention in double precision (attention_reference.hpp), at every
// requested head size, sequence length and head grouping. Prints one line of error figures per case, then
// "ok: N cases", or "FAILED: ..." for each failing case and exits 1.
//
//   flash_mma_emulation [--hs 64,128] [--T 1,17,64,70,130,257,1024] [--heads mha,gqa] [--mutate NAME]
//                       [--host-threads N] [--reverse-warps] [--stop]
// mha: B = 2, NH = KVH = 2; gqa: B = 1, NH = 4, KVH = 1 (groups of 4, as Llama-3 8B's 32 / 8). --mutate runs with
// one documented layout fact changed (fragment_layout.hpp: c_rows_swapped, a_regs_swapped, trans_ignored); the
// kernels must then fail. --stop ends at the first failing case.
//
// Inputs are bf16 draws of N(0, 1) like tests/e2e/cuda_backend_test.cpp's. The backward gets, as on the GPU in that
// test, the reference's output rounded to bf16 and its lse as fp32, and delta = rowsum(dout * out) in fp32 (what
// kernels.cu's flash_delta_kernel computes); the reference gradient is the exact one.
//
// Bounds, as tests/e2e/cuda_backend_test.cpp's flash tests (its comments give their derivation): norm-wise relative
// error < 1e-2 (kBf16Out) and, per element, |got - ref| <= 0.1 (|ref| + rms(ref)) (kBf16Elem) for out, dq, dk, dv;
// lse per row |got - ref| <= 1e-4 (1 + |ref|). With T = 1, dq and dk are exactly 0 in exact arithmetic (one key: P = 1,
// dS = dP - delta = 0): |got| < 1e-3. Beyond the values, every byte of out, lse and dqkv must be written exactly once.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/flash_mma_emulation/warp_emulation.hpp"
// The kernels after the emulation's primitives, as they ask.
#include "e2e/backend/cuda/flash_mma_kernels.cuh"
#include "tests/e2e/flash_mma_emulation/attention_reference.hpp"

namespace {

using zeropp::e2e::cuda::FlashShape;
using bf16 = __nv_bfloat16;
namespace emu = zeropp::emu;
namespace fm = zeropp::e2e::cuda::flash_mma;

constexpr double kBf16Out = 1e-2;
constexpr double kBf16Elem = 0.1;
constexpr double kLse = 1e-4;
constexpr double kZero = 1e-3;

struct Options {
  std::vector<int> hs{64, 128};
  std::vector<int> T{1, 17, 64, 70, 130, 257, 1024};
  std::vector<std::string> heads{"mha", "gqa"};
  emu::LayoutMutation mutate = emu::LayoutMutation::none;
  int host_threads = 2;
  bool reverse_warps = false;
  bool stop = false;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] {
      if (i + 1 >= argc) throw std::invalid_argument(a + ": needs a value");
      return std::string(argv[++i]);
    };
    if (a == "--hs") {
      o.hs.clear();
      for (const auto& v : split(value())) o.hs.push_back(std::stoi(v));
    } else if (a == "--T") {
      o.T.clear();
      for (const auto& v : split(value())) o.T.push_back(std::stoi(v));
    } else if (a == "--heads") {
      o.heads = split(value());
    } else if (a == "--mutate") {
      const std::string m = value();
      if (m == "c_rows_swapped")
        o.mutate = emu::LayoutMutation::c_rows_swapped;
      else if (m == "a_regs_swapped")
        o.mutate = emu::LayoutMutation::a_regs_swapped;
      else if (m == "trans_ignored")
        o.mutate = emu::LayoutMutation::trans_ignored;
      else
        throw std::invalid_argument("--mutate: " + m + " is not c_rows_swapped, a_regs_swapped or trans_ignored");
    } else if (a == "--host-threads") {
      o.host_threads = std::stoi(value());
    } else if (a == "--reverse-warps") {
      o.reverse_warps = true;
    } else if (a == "--stop") {
      o.stop = true;
    } else {
      throw std::invalid_argument(a + ": unknown option");
    }
  }
  return o;
}

// ---- error figures
struct Err {
  double norm = 0, elem = 0;  // norm-wise relative; worst |got - ref| / (|ref| + rms(ref))
};

Err errors(const std::vector<double>& got, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) num += (got[i] - ref[i]) * (got[i] - ref[i]), den += ref[i] * ref[i];
  const double rms = std::sqrt(den / double(ref.size()));
  Err e{den > 0 ? std::sqrt(num / den) : std::sqrt(num), 0.0};
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(got[i])) return {INFINITY, INFINITY};
    e.elem = std::max(e.elem, std::abs(got[i] - ref[i]) / (std::abs(ref[i]) + rms + 1e-300));
  }
  return e;
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::isfinite(x) ? std::abs(x) : INFINITY);
  return m;
}

std::vector<double> to_double(const std::vector<bf16>& v) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = emu::bf16_to_float(v[i]);
  return out;
}

// Columns [c0, c0 + n) of rows of width w.
std::vector<double> columns(const std::vector<double>& rows, std::size_t w, std::size_t c0, std::size_t n) {
  std::vector<double> out;
  for (std::size_t r = 0; r + w <= rows.size(); r += w) out.insert(out.end(), &rows[r + c0], &rows[r + c0] + n);
  return out;
}

template <typename T>
bool written_once(const std::vector<T>& v) {
  for (unsigned n : emu::writes_of(v.data(), v.size() * sizeof(T)))
    if (n != 1) return false;
  return true;
}

struct Case {
  std::string heads;
  emu::AttentionShape s;
  std::string name() const {
    return "hs " + std::to_string(s.hs) + " T " + std::to_string(s.T) + " " + heads + " (B " + std::to_string(s.B) +
           ", heads " + std::to_string(s.NH) + "/" + std::to_string(s.KVH) + ")";
  }
};

template <int HS>
void run_kernels(const Case& c, const Options& o, std::vector<bf16>& qkv, std::vector<bf16>& out,
                 std::vector<float>& lse, std::vector<bf16>& dout, std::vector<bf16>& out_in,
                 std::vector<float>& lse_in, std::vector<float>& delta, std::vector<bf16>& dqkv) {
  const auto& s = c.s;
  const FlashShape sh{s.T, s.NH, s.KVH, HS};
  const float scale = 1.0f / std::sqrt(static_cast<float>(HS));
  const unsigned tiles = static_cast<unsigned>(fm::row_tiles(s.T));
  emu::Launch how;
  how.block = {fm::kThreads, 1, 1};
  how.host_threads = o.host_threads;
  how.reverse_warps = o.reverse_warps;
  how.grid = {tiles, static_cast<unsigned>(s.B * s.NH), 1};
  how.smem_bytes = fm::Smem<HS>::forward;
  emu::launch(how, [&] { fm::flash_mma_forward_kernel<HS>(out.data(), lse.data(), qkv.data(), sh, scale); });
  how.smem_bytes = fm::Smem<HS>::dq;
  emu::launch(how, [&] {
    fm::flash_mma_dq_kernel<HS>(dqkv.data(), delta.data(), dout.data(), lse_in.data(), qkv.data(), sh, scale);
  });
  how.grid = {tiles, static_cast<unsigned>(s.B * s.KVH), 1};
  how.smem_bytes = fm::Smem<HS>::dkv;
  emu::launch(how, [&] {
    fm::flash_mma_dkv_kernel<HS>(dqkv.data(), delta.data(), dout.data(), lse_in.data(), qkv.data(), sh, scale);
  });
  (void)out_in;
}

// One case: returns an empty string when every check passes, else what failed.
std::string run_case(const Case& c, const Options& o, std::mt19937& rng) {
  const auto& s = c.s;
  const std::size_t W = std::size_t(s.NH + 2 * s.KVH) * s.hs, C = std::size_t(s.NH) * s.hs;
  const std::size_t nqkv = std::size_t(s.B) * s.T * W, nout = std::size_t(s.B) * s.T * C;
  const std::size_t nrow = std::size_t(s.B) * s.NH * s.T;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<bf16> qkv(nqkv), dout(nout);
  for (auto& x : qkv) x = emu::float_to_bf16(normal(rng));
  for (auto& x : dout) x = emu::float_to_bf16(normal(rng));
  const auto qkv_d = to_double(qkv), dout_d = to_double(dout);
  const auto ref = emu::attention_forward(qkv_d, s);
  const auto ref_d = emu::attention_backward(qkv_d, dout_d, s);

  // Outputs poisoned (NaN), inputs of the backward as the GPU test gives them.
  const bf16 nan_bf16{0x7fc0};
  std::vector<bf16> out(nout, nan_bf16), dqkv(nqkv, nan_bf16), out_in(nout);
  std::vector<float> lse(nrow, NAN), lse_in(nrow), delta(nrow);
  for (std::size_t i = 0; i < nout; ++i) out_in[i] = emu::float_to_bf16(static_cast<float>(ref.out[i]));
  for (std::size_t i = 0; i < nrow; ++i) lse_in[i] = static_cast<float>(ref.lse[i]);
  for (int b = 0; b < s.B; ++b)
    for (int h = 0; h < s.NH; ++h)
      for (int t = 0; t < s.T; ++t) {
        float d = 0.0f;
        const std::size_t off = (std::size_t(b) * s.T + t) * C + std::size_t(h) * s.hs;
        for (int e = 0; e < s.hs; ++e) d += emu::bf16_to_float(dout[off + e]) * emu::bf16_to_float(out_in[off + e]);
        delta[(std::size_t(b) * s.NH + h) * s.T + t] = d;
      }

  emu::clear_globals();
  emu::register_global(qkv.data(), qkv.size() * sizeof(bf16), false);
  emu::register_global(dout.data(), dout.size() * sizeof(bf16), false);
  emu::register_global(lse_in.data(), lse_in.size() * sizeof(float), false);
  emu::register_global(delta.data(), delta.size() * sizeof(float), false);
  emu::register_global(out.data(), out.size() * sizeof(bf16), true);
  emu::register_global(lse.data(), lse.size() * sizeof(float), true);
  emu::register_global(dqkv.data(), dqkv.size() * sizeof(bf16), true);
  try {
    if (s.hs == 64)
      run_kernels<64>(c, o, qkv, out, lse, dout, out_in, lse_in, delta, dqkv);
    else
      run_kernels<128>(c, o, qkv, out, lse, dout, out_in, lse_in, delta, dqkv);
  } catch (const emu::EmulationError& e) {
    return std::string("emulation fault: ") + e.what();
  }
  std::string failed;
  auto fail = [&](const std::string& what) { failed += (failed.empty() ? "" : "; ") + what; };
  if (!written_once(out)) fail("out: not every byte written exactly once");
  if (!written_once(lse)) fail("lse: not every byte written exactly once");
  if (!written_once(dqkv)) fail("dqkv: not every byte written exactly once");

  char line[512];
  const Err eo = errors(to_double(out), ref.out);
  double lse_worst = 0;
  for (std::size_t i = 0; i < nrow; ++i)
    lse_worst = std::max(lse_worst,
                         std::isfinite(lse[i]) ? std::abs(lse[i] - ref.lse[i]) / (1 + std::abs(ref.lse[i])) : INFINITY);
  std::snprintf(line, sizeof line, "%-36s out %.2e / %.2e  lse %.1e", c.name().c_str(), eo.norm, eo.elem, lse_worst);
  std::string report = line;
  if (!(eo.norm < kBf16Out && eo.elem < kBf16Elem)) fail("out error above the bounds");
  if (!(lse_worst < kLse)) fail("lse error above the bound");
  const auto got = to_double(dqkv);
  const std::size_t kv = std::size_t(s.KVH) * s.hs;
  const struct {
    const char* name;
    std::size_t c0, n;
  } parts[] = {{"dq", 0, C}, {"dk", C, kv}, {"dv", C + kv, kv}};
  for (const auto& p : parts) {
    const auto g = columns(got, W, p.c0, p.n), r = columns(ref_d, W, p.c0, p.n);
    if (s.T == 1 && p.c0 < C + kv) {
      const double m = max_abs(g);
      std::snprintf(line, sizeof line, "  %s |max| %.1e", p.name, m);
      report += line;
      if (!(m < kZero)) fail(std::string(p.name) + " not zero");
      continue;
    }
    const Err e = errors(g, r);
    std::snprintf(line, sizeof line, "  %s %.2e / %.2e", p.name, e.norm, e.elem);
    report += line;
    if (!(e.norm < kBf16Out && e.elem < kBf16Elem)) fail(std::string(p.name) + " error above the bounds");
  }
  std::printf("%s\n", report.c_str());
  return failed;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flash_mma_emulation: %s\n", e.what());
    return 2;
  }
  emu::layout_mutation() = o.mutate;
  std::printf("errors against fp64: norm-wise relative / worst per element (|d| / (|ref| + rms)); lse per row\n");
  std::mt19937 rng(20261126);
  int cases = 0, failures = 0;
  for (int hs : o.hs)
    for (const std::string& heads : o.heads)
      for (int T : o.T) {
        if (!fm::supports(hs) || (heads != "mha" && heads != "gqa") || T < 1) {
          std::fprintf(stderr, "flash_mma_emulation: no case hs %d, heads %s, T %d\n", hs, heads.c_str(), T);
          return 2;
        }
        const Case c{heads, heads == "mha" ? emu::AttentionShape{2, T, 2, 2, hs} : emu::AttentionShape{1, T, 4, 1, hs}};
        const std::string failed = run_case(c, o, rng);
        ++cases;
        if (!failed.empty()) {
          ++failures;
          std::printf("FAILED: %s: %s\n", c.name().c_str(), failed.c_str());
          if (o.stop) return 1;
        }
      }
  if (failures > 0) return 1;
  std::printf("ok: %d cases\n", cases);
  return 0;
}
