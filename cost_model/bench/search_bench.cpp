// Speed of the exact plan search over the whole space (issue 13, point 4; issue 20, point 5), the simulator
// ranking, every plan enumerated and bounded, on ONE thread (the work; `zeropp search` spreads it over every
// core). Issue 20's goal: each of the five cases below under 10 s of wall time with both cores of the 2-core
// development VM; peak memory < 2 GB (max_rss_MB, the process's peak resident set after the run). Compare with
// BM_ReferenceWorkload of the same run (ratios, not absolute times: docs/regression.md).
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

// One thread (SearchOptions::threads): Google Benchmark's CPU time is the calling thread's. The wall time of the
// multi-threaded search is what `zeropp search` reports; these measure the work.
void run(benchmark::State& state, const Experiment& ex) {
  SearchResult r;
  SearchOptions o;
  o.threads = 1;
  for (auto _ : state) {
    r = run_search(ex, o);
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

// GPT-3 175B on 64 A100 with the paper's batch of 1536 (Brown et al. 2020, Table 2.1): most of the space is over
// memory, so this one measures the memory bounds (issue 20: 17,398 plans simulated before them, 16,977 of them
// over memory).
void BM_SearchGpt3_175bOn64A100(benchmark::State& state) {
  Experiment ex;
  ex.name = "gpt3-175b-64";
  ex.model = load_model("gpt3-175b");
  ex.cluster = load_cluster("dgx-a100-80gb");
  ex.gpus = 64;
  ex.global_batch = 1536;
  run(state, ex);
}

// Llama 3.1 405B (126 layers: uneven pipeline splits) on 16,384 H100 (2048 DGX H100 nodes; the zoo's cluster has
// 128 of the same nodes) with Meta's 16M-token batch (Llama 3 paper, section 3.4.1): 2048 sequences of 8192
// tokens, or 128 of 131,072 (the long-context stage's length).
void search_llama405b(benchmark::State& state, int seq, long long global_batch) {
  Experiment ex;
  ex.name = "llama3.1-405b-16384";
  ex.model = load_model("llama3.1-405b", {.seq_len = seq});
  ex.cluster = load_cluster("dgx-h100");
  ex.cluster.nodes = 2048;
  ex.gpus = 16384;
  ex.global_batch = global_batch;
  run(state, ex);
}
void BM_SearchLlama405bOn16384H100Seq8k(benchmark::State& state) { search_llama405b(state, 8192, 2048); }
void BM_SearchLlama405bOn16384H100Seq128k(benchmark::State& state) { search_llama405b(state, 131072, 128); }

BENCHMARK(BM_SearchGpt3_13bOn64A100)->Unit(benchmark::kSecond)->Iterations(3);
BENCHMARK(BM_SearchMegatron1tOn4096A100)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_SearchGpt3_175bOn64A100)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_SearchLlama405bOn16384H100Seq8k)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_SearchLlama405bOn16384H100Seq128k)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
}  // namespace zeropp::search
