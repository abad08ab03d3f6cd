// The FLOP convention (analytic/flops.hpp): MFU counts causal attention and no recomputation, TFLOP/s per GPU what
// the kernels execute, and neither can exceed the best efficiency of the operations the time model prices. Checked
// on every plan of whole search spaces, A100 and H100, unfused (2021 GPT) and flash (Llama) attention, short and
// long sequences, in closed form and simulated.
#include <algorithm>

#include <gtest/gtest.h>

#include "cost_model/analytic/estimate.hpp"
#include "cost_model/analytic/flops.hpp"
#include "cost_model/analytic/time_model.hpp"
#include "cost_model/search/simulated_estimate.hpp"
#include "cost_model/search/space.hpp"
#include "tests/search/search_fixtures.hpp"

namespace zeropp::search {
namespace {

struct Checked {
  int plans = 0;
  int full_over_executed = 0;  // plans whose full-attention MFU exceeds what the kernels execute (a published count)
};

void check_throughput(const Plan& plan, const analytic::Estimate& e, Checked& checked) {
  const double peak = plan.cluster.peak(plan.parallel.dtype);
  const double ceiling = analytic::efficiency_ceiling(plan.cluster, plan.parallel.dtype);
  const double hfu = e.throughput.tflops_per_gpu * 1e12 / peak;
  // Executed FLOPs include the model's causal FLOPs (and more: recomputation, FlashAttention's backward
  // recompute, unfused attention's masked half), so MFU <= HFU <= the ceiling.
  EXPECT_LE(e.throughput.mfu, hfu * (1 + 1e-12)) << to_json(plan).dump();
  EXPECT_LE(hfu, ceiling * (1 + 1e-12)) << to_json(plan).dump();
  EXPECT_LE(e.throughput.mfu, ceiling * (1 + 1e-12)) << to_json(plan).dump();
  // The full s x s count only adds attention FLOPs.
  EXPECT_GT(e.throughput.mfu_full_attention, e.throughput.mfu);
  if (e.throughput.mfu_full_attention > hfu) ++checked.full_over_executed;
  ++checked.plans;
}

Checked check_space(const Experiment& ex, int max_v, bool simulate_some) {
  SpaceOptions space;
  space.max_v = max_v;
  Checked checked;
  int simulated = 0;
  for_each_plan(ex, space, [&](const Plan& plan) {
    analytic::EstimateOptions o;
    o.validate = false;
    const analytic::Estimate closed = analytic::estimate(plan, o);
    check_throughput(plan, closed, checked);
    // The simulator prices the same actions: a sample of plans through it too (every 97th keeps it quick).
    if (simulate_some && checked.plans % 97 == 0 && simulatable(plan)) {
      check_throughput(plan, simulated_estimate(plan, closed, o).estimate, checked);
      ++simulated;
    }
  });
  if (simulate_some) { EXPECT_GT(simulated, 0); }
  return checked;
}

TEST(FlopConvention, NoMfuExceedsTheEfficiencyCeilingOnA100Gpt) {
  Experiment ex = testing::experiment("gpt3-1.3b", 16, 64);  // unfused attention, dropout: the 2021 GPT layer
  const Checked c = check_space(ex, 2, true);
  EXPECT_GT(c.plans, 100);
}

TEST(FlopConvention, NoMfuExceedsTheEfficiencyCeilingOnH100LongSequences) {
  // Llama (flash attention) at s = 32768 on 16 H100: the attention core dominates, so the full-attention count
  // overstates the work: it exceeds what the kernels execute (and can exceed the ceiling); the causal MFU cannot.
  Experiment ex = testing::experiment("llama2-7b", 16, 16);
  ex.cluster = load_cluster("dgx-h100");
  ex.model.seq_len = 32768;
  const Checked c = check_space(ex, 1, true);
  EXPECT_GT(c.plans, 20);
  EXPECT_GT(c.full_over_executed, 0) << "s = 32768 should show why MFU counts causal attention";
}

// Hand counts of the executed FLOPs of one layer: the flash kernel runs the causal half, 2.5x in B; unfused
// attention runs the full s x s, twice in B.
TEST(FlopConvention, ExecutedLayerFlopsByAttentionKind) {
  ModelSpec m = testing::tiny_model();  // h 256, s 128
  const double b = 2, s = 128, h = 256;
  const double weight = 24 * b * s * h * h, core = 4 * b * s * s * h;
  m.attention = AttentionKind::unfused;
  analytic::PassFlops x = analytic::layer_executed_flops(m, 2);
  EXPECT_EQ(x.f, weight + core);
  EXPECT_EQ(x.b, weight + 2 * core);
  EXPECT_EQ(x.w, weight);
  m.attention = AttentionKind::flash;
  x = analytic::layer_executed_flops(m, 2);
  EXPECT_EQ(x.f, weight + core / 2);
  EXPECT_EQ(x.b, weight + 2.5 * core / 2);
  EXPECT_EQ(x.w, weight);
  // The model's causal count: F + B + W = 3F with the core halved.
  const analytic::PassFlops c = analytic::layer_flops(m, 2, analytic::AttentionCount::causal);
  EXPECT_EQ(c.total(), 3 * (weight + core / 2));
}

}  // namespace
}  // namespace zeropp::search
