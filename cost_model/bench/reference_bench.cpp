// The unit of time for the performance regression check (tests/regression, docs/regression.md): a fixed workload
// whose cost depends only on the machine, never on zeropp's code. Every other benchmark's time is divided by this
// one's, measured in the same run, so the committed baseline transfers between machines and survives a loaded
// CI runner: a machine twice as slow, or a core shared with another test, slows the reference as much as the
// model. Its mix follows the model's code: branchy integer work on a cache-resident array (the simulator's event
// queue and action lists) and dependent floating-point divisions and square roots (the analytic formulas).
// Never change it: a different reference rescales every baseline number (refresh the baseline if you must).
//   ./zeropp-model-bench --benchmark_filter=Reference
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

namespace {

// 16384 keys from a fixed xorshift64 sequence (Marsaglia 2003), the same on every machine; 128 KiB, in L2.
std::vector<std::uint64_t> fixed_keys() {
  std::vector<std::uint64_t> keys(1 << 14);
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (auto& k : keys) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    k = x;
  }
  return keys;
}

void BM_ReferenceWorkload(benchmark::State& state) {
  const std::vector<std::uint64_t> keys = fixed_keys();
  std::vector<std::uint64_t> work(keys.size());
  for (auto _ : state) {
    std::copy(keys.begin(), keys.end(), work.begin());
    std::sort(work.begin(), work.end());
    benchmark::DoNotOptimize(work.data());
    // A dependent chain: each step waits for the previous division and square root (latency, not throughput).
    double y = 1.0;
    for (int i = 1; i <= 20000; ++i) y = std::sqrt(y + 1.0 / i) + 1e-3;
    benchmark::DoNotOptimize(y);
  }
}
BENCHMARK(BM_ReferenceWorkload)->Unit(benchmark::kMicrosecond);

}  // namespace
