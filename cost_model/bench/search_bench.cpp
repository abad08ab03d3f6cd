// Speed of the exact plan search over the whole space (issue 13, point 4), as `zeropp search` runs it (the
// simulator ranks, every plan enumerated and bounded). Goals on one core: GPT-3 13B / 64 A100 / batch 256 in
// < 10 s; 1T parameters (Megatron's 1008B) on 4096 A100 / batch 4096 in < 60 s; peak memory < 2 GB (max_rss_MB,
// the process's peak resident set after the run). Compare with BM_ReferenceWorkload of the same run (ratios, not
// absolute times: docs/regression.md).
//   zeropp-model-bench --benchmark_filter='Search|Reference'
#include <sys/resource.h>

#include <benchmark/benchmark.h>

#include "cost_model/search/search.hpp"
#include "cost_model/spec/config.hpp"

namespace zeropp::search {
namespace {

double max_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

void run(benchmark::State& state, const Experiment& ex) {
  SearchResult r;
  for (auto _ : state) {
    r = run_search(ex);
    benchmark::DoNotOptimize(r.ranked);
  }
  state.SetItemsProcessed(state.iterations() * r.counts.enumerated);
  state.counters["plans"] = static_cast<double>(r.counts.enumerated);
  state.counters["simulated"] = static_cast<double>(r.counts.simulated);
  state.counters["max_rss_MB"] = max_rss_mb();
}

// The zoo's GPT-3 13B on the zoo's DGX A100 80GB, 64 GPUs, global batch 256 (Calculon's comparison case).
void BM_SearchGpt3_13bOn64A100(benchmark::State& state) {
  Experiment ex;
  ex.name = "gpt3-13b-64";
  ex.model = load_model("gpt3-13b");
  ex.cluster = load_cluster("dgx-a100-80gb");
  ex.gpus = 64;
  ex.global_batch = 256;
  run(state, ex);
}

// Megatron-LM's 1T model (megatron-1t) on 512 DGX A100 nodes (the zoo's cluster has 384: the same nodes, more
// of them), global batch 4096.
void BM_SearchMegatron1tOn4096A100(benchmark::State& state) {
  Experiment ex;
  ex.name = "megatron-1t-4096";
  ex.model = load_model("megatron-1t");
  ex.cluster = load_cluster("dgx-a100-80gb");
  ex.cluster.nodes = 512;
  ex.gpus = 4096;
  ex.global_batch = 4096;
  run(state, ex);
}

BENCHMARK(BM_SearchGpt3_13bOn64A100)->Unit(benchmark::kSecond)->Iterations(3);
BENCHMARK(BM_SearchMegatron1tOn4096A100)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
}  // namespace zeropp::search
