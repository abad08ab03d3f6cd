#include "microbench/attention_bench.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>

#include "e2e/backend/backend.hpp"
#include "microbench/backend_data.hpp"
#include "microbench/mpi_world.hpp"

namespace zeropp::microbench {

std::string AttentionCase::name(const std::string& dtype, bool backward) const {
  const std::string core = unfused ? "unfused" : kernel ? "flash-" + kernel->name : "flash";
  return "attention/trainer/" + dtype + "/" + core + (backward ? "/B" : "/F") +
         "/h:" + std::to_string(heads * head_dim) + "/a:" + std::to_string(heads) + "/kv:" + std::to_string(kv_heads) +
         "/s:" + std::to_string(s) + "/b:" + std::to_string(b);
}

std::vector<AttentionCase> attention_cases(const std::vector<long>& heads, const std::vector<long>& kv_heads, long s,
                                           long d, long b) {
  if (!kv_heads.empty() && kv_heads.size() != heads.size())
    throw std::invalid_argument("--zeropp_attention_kv_heads: " + std::to_string(kv_heads.size()) + " values for the " +
                                std::to_string(heads.size()) +
                                " of --zeropp_attention_heads (one each, or none: as many as heads)");
  std::vector<AttentionCase> cases;
  for (std::size_t i = 0; i < heads.size(); ++i) {
    const long kv = kv_heads.empty() ? heads[i] : kv_heads[i];
    if (heads[i] % kv != 0)
      throw std::invalid_argument("--zeropp_attention_kv_heads: " + std::to_string(kv) + " does not divide " +
                                  std::to_string(heads[i]) + " heads");
    cases.push_back({s, heads[i], kv, d, b, false, nullptr});
  }
  return cases;
}

std::vector<std::shared_ptr<const FlashKernelRun>> select_flash_kernels(
    const std::vector<std::shared_ptr<const FlashKernelRun>>& available, const std::vector<std::string>& names,
    const std::string& backend) {
  std::vector<std::shared_ptr<const FlashKernelRun>> chosen;
  for (const std::string& name : names) {
    const auto it = std::find_if(available.begin(), available.end(), [&](const auto& k) { return k->name == name; });
    if (it == available.end()) {
      std::string choices;
      for (const auto& k : available) choices += (choices.empty() ? "" : ", ") + k->name;
      throw std::invalid_argument("--zeropp_attention_kernels: " + name + " is not a flash kernel of the " + backend +
                                  " backend (" + (choices.empty() ? "it has none" : choices) + ")");
    }
    chosen.push_back(*it);
  }
  return chosen;
}

double attention_flop(const AttentionCase& c, bool backward, bool causal) {
  const double full_forward = 4.0 * static_cast<double>(c.b) * static_cast<double>(c.s) * static_cast<double>(c.s) *
                              static_cast<double>(c.heads * c.head_dim);
  if (!causal) return backward ? 2.0 * full_forward : full_forward;
  return (backward ? 2.5 : 1.0) * full_forward / 2.0;
}

void bench_attention(benchmark::State& state, const std::string& backend_name, const AttentionCase& c, bool backward,
                     MPI_Comm comm) {
  using namespace e2e;
  std::unique_ptr<Backend> backend = make_backend(backend_name, 1);
  const DType dt = backend->compute_dtype();
  const int B = static_cast<int>(c.b), T = static_cast<int>(c.s), NH = static_cast<int>(c.heads);
  const int KVH = static_cast<int>(c.kv_heads), hs = static_cast<int>(c.head_dim);
  const std::int64_t rows = std::int64_t{B} * T, W = std::int64_t{NH + 2 * KVH} * hs, C = std::int64_t{NH} * hs;
  const Buffer qkv = random_buffer(*backend, rows * W, dt, 1);
  const Buffer dout = random_buffer(*backend, rows * C, dt, 2);
  Buffer out(*backend, rows * C, dt), dqkv(*backend, rows * W, dt);
  // flash: the log-sum-exp rows; unfused: the B x NH x T x T probabilities the backward reads.
  Buffer saved(*backend, c.unfused ? std::int64_t{B} * NH * T * T : std::int64_t{B} * NH * T,
               c.unfused ? dt : DType::f32);
  Buffer delta;  // a named flash kernel's backward scratch
  std::function<void()> op;
  Tensor checked;
  // A named kernel that cannot run this shape (its head sizes) says so and is skipped.
  try {
    if (c.unfused) {
      backend->grouped_attention_forward(out.view(), saved.view(), qkv.view(), B, T, NH, KVH, hs);
      if (backward)
        op = [&] {
          backend->grouped_attention_backward(dqkv.view(), dout.view(), qkv.view(), saved.view(), B, T, NH, KVH, hs);
        };
      else
        op = [&] { backend->grouped_attention_forward(out.view(), saved.view(), qkv.view(), B, T, NH, KVH, hs); };
      checked = backward ? dqkv.view() : out.view();
    } else {
      // The backend's own kernels, or the one the case names (the same arguments, plus a delta scratch).
      if (c.kernel) delta = Buffer(*backend, std::int64_t{B} * NH * T, DType::f32);
      const auto forward = [&] {
        if (c.kernel)
          c.kernel->forward(*backend, out.view(), saved.view(), qkv.view(), B, T, NH, KVH, hs);
        else
          backend->flash_attention_forward(out.view(), saved.view(), qkv.view(), B, T, NH, KVH, hs);
      };
      if (backward) {
        forward();
        op = [&] {
          if (c.kernel)
            c.kernel->backward(*backend, dqkv.view(), delta.view(), dout.view(), out.view(), saved.view(), qkv.view(),
                               B, T, NH, KVH, hs);
          else
            backend->flash_attention_backward(dqkv.view(), dout.view(), out.view(), saved.view(), qkv.view(), B, T, NH,
                                              KVH, hs);
        };
        checked = dqkv.view();
      } else {
        op = forward;
        checked = out.view();
      }
    }
    op();  // warm-up (and the outputs checked below)
    backend->synchronize();
  } catch (const std::invalid_argument& e) {
    state.SkipWithError(e.what());
    return;
  }
  if (!all_ranks_ok(all_finite(*backend, checked), comm)) {
    state.SkipWithError(c.unfused ? "unfused attention produced non-finite output"
                                  : "flash attention produced non-finite output");
    return;
  }
  double total = 0;
  for (auto _ : state) {
    backend->synchronize();
    const double start = MPI_Wtime();
    op();
    backend->synchronize();
    const double seconds = max_over_ranks(MPI_Wtime() - start, comm);
    state.SetIterationTime(seconds);
    total += seconds;
  }
  const double flop = attention_flop(c, backward, false), causal = attention_flop(c, backward, true);
  const double per_second = static_cast<double>(state.iterations()) / total;
  state.counters["flop"] = flop;
  state.counters["FLOP/s"] = benchmark::Counter(flop * per_second);
  state.counters["flop_causal"] = causal;
  state.counters["FLOP/s_causal"] = benchmark::Counter(causal * per_second);
}

}  // namespace zeropp::microbench
