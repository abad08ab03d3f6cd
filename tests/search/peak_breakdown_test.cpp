// The simulated peak by part and when (search/peak_memory.hpp): its parts add up to the peak that decides
// feasibility, for every strategy row of a study, and a ZeroPP plan with z > 1 holds gathered parameters there.
#include <gtest/gtest.h>

#include "cost_model/search/compare.hpp"
#include "cost_model/search/simulated_estimate.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::search {
namespace {

double sum(const PeakBreakdown& p) {
  return p.params + p.grads + p.optimizer + p.activations + p.recompute + p.w_buffers + p.gathered_params +
         p.grad_buffers;
}

TEST(PeakBreakdown, PartsAddUpToTheSimulatedPeakOfEveryRow) {
  Experiment ex;
  ex.name = "t";
  ex.model = load_model("gpt3-1.3b");
  ex.cluster = load_cluster("dgx-a100-80gb");
  ex.gpus = 16;
  ex.global_batch = 64;
  const auto rows = compare_rows(ex, select_rows(ex, {}), {});
  int checked = 0;
  for (const CompareRow& row : rows) {
    if (!row.found || !row.estimate.simulated) continue;
    ASSERT_TRUE(row.estimate.peak.has_value()) << row.spec.name;
    const PeakBreakdown& p = *row.estimate.peak;
    EXPECT_NEAR(sum(p), p.total, 1e-9 * p.total) << row.spec.name;
    EXPECT_NEAR(p.total, row.estimate.estimate.memory_bytes.peak, 1e-9 * p.total) << row.spec.name;
    EXPECT_GE(p.time_s, 0);
    EXPECT_LE(p.time_s, p.makespan_s);
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

TEST(PeakBreakdown, ZeroppWithAZero3GroupHoldsGatheredParameters) {
  Plan plan;
  plan.model = load_model("gpt3-1.3b");
  plan.cluster = load_cluster("dgx-a100-80gb");
  ParallelSpec& p = plan.parallel;
  p.strategy = Strategy::zeropp_b;
  p.zero_stage = traits(Strategy::zeropp_b).default_zero_stage;
  p.schedule = ScheduleKind::zeropp;
  p.z = 8;
  p.pp = 2;
  p.dp = 1;
  p.v = 2;
  p.micro_batch = 1;
  p.micro_batches = 8;
  p.unit = 4;
  const SimulatedEstimate e = simulated_estimate(plan);
  ASSERT_TRUE(e.peak.has_value());
  EXPECT_GT(e.peak->gathered_params, 0);
  EXPECT_GT(e.peak->activations, 0);
  EXPECT_FALSE(e.peak->action.empty());
  EXPECT_NEAR(sum(*e.peak), e.estimate.memory_bytes.peak, 1e-9 * e.estimate.memory_bytes.peak);
}

}  // namespace
}  // namespace zeropp::search
