// Speed of the analytic model: plan evaluations per second (goal >= 1e6 per core), and the whole `zeropp compare`
// of the default study, as users run it. Run: zeropp-model-bench --benchmark_filter='Analytic|Compare'
#include <benchmark/benchmark.h>

#include "cost_model/analytic/estimate.hpp"
#include "cost_model/search/compare.hpp"

namespace zeropp::analytic {
namespace {

// Hand-written so the benchmark needs no config files: GPT-3 13B (Brown et al. 2020) on DGX A100 80GB nodes
// (datasheet peaks and links, as in configs/clusters/dgx-a100-80gb.json).
ModelSpec gpt3_13b() {
  ModelSpec m;
  m.name = "gpt3-13b";
  m.layers = 40;
  m.hidden = 5120;
  m.heads = 40;
  m.seq_len = 2048;
  m.vocab = 50257;
  return m;
}

ClusterSpec dgx_a100() {
  ClusterSpec c;
  c.name = "dgx-a100-80gb";
  c.nodes = 8;
  c.gpus_per_node = 8;
  c.peak_flops[Dtype::bf16] = 312e12;
  c.memory_bytes = 80.0 * (1ull << 30);
  c.intra = {300e9, 3.4e-6};
  c.inter = {25e9, 14e-6};
  return c;
}

Plan zeropp_plan() {
  Plan p{gpt3_13b(), dgx_a100(), {}};
  p.parallel.strategy = Strategy::zeropp_b;
  p.parallel.schedule = ScheduleKind::zeropp;
  p.parallel.z = 8;
  p.parallel.pp = 4;
  p.parallel.dp = 2;
  p.parallel.v = 2;
  p.parallel.micro_batches = 16;
  p.parallel.unit = 8;
  return p;
}

Plan three_d_plan() {
  Plan p{gpt3_13b(), dgx_a100(), {}};
  p.parallel.strategy = Strategy::three_d;
  p.parallel.schedule = ScheduleKind::interleaved;
  p.parallel.tp = 8;
  p.parallel.pp = 4;
  p.parallel.dp = 2;
  p.parallel.v = 2;
  p.parallel.micro_batches = 128;
  p.parallel.sequence_parallel = true;
  p.parallel.recompute = Recompute::selective;
  return p;
}

void run_estimates(benchmark::State& state, const Plan& plan) {
  EstimateOptions options;
  options.validate = false;  // what a search does: the layout is valid by construction
  for (auto _ : state) {
    Estimate e = estimate(plan, options);
    benchmark::DoNotOptimize(e);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_AnalyticEstimateZeroPP(benchmark::State& state) { run_estimates(state, zeropp_plan()); }
void BM_AnalyticEstimate3D(benchmark::State& state) { run_estimates(state, three_d_plan()); }

void BM_AnalyticEstimateValidated(benchmark::State& state) {
  const Plan plan = zeropp_plan();
  for (auto _ : state) {
    Estimate e = estimate(plan);
    benchmark::DoNotOptimize(e);
  }
  state.SetItemsProcessed(state.iterations());
}

// What `zeropp compare` runs (cost_model/cli/compare.cpp): search::compare_rows over every row with the
// simulator on, for 64 GPUs and global batch 256; items = plans evaluated in closed form.
void BM_CompareDefaultStudy(benchmark::State& state) {
  Experiment ex;
  ex.model = gpt3_13b();
  ex.cluster = dgx_a100();
  ex.gpus = 64;
  ex.global_batch = 256;
  const std::vector<search::CompareRowSpec> rows = search::select_rows(ex, {});
  // One thread: Google Benchmark's CPU time is the calling thread's, which would not see the search's workers.
  search::CompareOptions options;
  options.threads = 1;
  long long evaluated = 0;
  for (auto _ : state) {
    const auto out = search::compare_rows(ex, rows, options);
    for (const auto& r : out) evaluated += r.evaluated;
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(evaluated);
}

BENCHMARK(BM_AnalyticEstimateZeroPP);
BENCHMARK(BM_AnalyticEstimate3D);
BENCHMARK(BM_AnalyticEstimateValidated);
BENCHMARK(BM_CompareDefaultStudy)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace zeropp::analytic
