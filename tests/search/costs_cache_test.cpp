// The search shares one cost table between plans that differ only in U (search.cpp, CostsCache): that is exact
// only where simulate::costs_from_plan does not depend on the scheduling unit. Checked here on ZeroPP plans of
// every shape the cache meets: chunks, recomputation, uneven splits, both gradient reductions. Reduced per unit, the
// W action's gradient accumulation depends on U (analytic/grad_accumulation.hpp) and the cache keeps U in its key
// (grad_reductions_depend_on_unit): there only W may differ.
#include <gtest/gtest.h>

#include "cost_model/analytic/grad_accumulation.hpp"
#include "cost_model/search/describe.hpp"
#include "cost_model/simulate/costs_from_plan.hpp"
#include "cost_model/spec/strategy.hpp"
#include "search_fixtures.hpp"

namespace zeropp::search {
namespace {

void expect_same(const simulate::CommCost& a, const simulate::CommCost& b, const std::string& what) {
  EXPECT_EQ(a.seconds, b.seconds) << what;
  EXPECT_EQ(a.bytes, b.bytes) << what;
}

TEST(CostsCache, CostsDoNotDependOnTheUnit) {
  Plan plan{testing::tiny_model(), load_cluster("dgx-a100-80gb"), {}};
  plan.model.layers = 6;
  ParallelSpec& p = plan.parallel;
  int compared = 0;
  for (Strategy s : {Strategy::zeropp_a, Strategy::zeropp_b})
    for (int v : {1, 2, 3})
      for (Recompute rc : {Recompute::none, Recompute::full})
        for (GradReduce g : {GradReduce::per_unit, GradReduce::per_w}) {
          p = {};
          p.strategy = s;
          p.zero_stage = traits(s).default_zero_stage;
          p.schedule = ScheduleKind::zeropp;
          p.z = 2;
          p.pp = 2;
          p.dp = 2;
          p.v = v;
          p.micro_batches = 7;
          p.recompute = rc;
          p.grad_reduce = g;
          if (v == 1) p.first_stage_layers = 4;
          p.unit = 7;
          const simulate::ActionCosts whole = simulate::costs_from_plan(plan);
          const bool by_unit = g == GradReduce::per_unit;
          EXPECT_EQ(analytic::grad_reductions_depend_on_unit(p), by_unit);
          for (int U = 1; U < 7; ++U) {
            p.unit = U;
            const simulate::ActionCosts c = simulate::costs_from_plan(plan);
            const std::string what = describe_plan(p);
            ASSERT_EQ(c.stages.size(), whole.stages.size()) << what;
            for (std::size_t k = 0; k < c.stages.size(); ++k) {
              const simulate::StageCost& a = c.stages[k];
              const simulate::StageCost& b = whole.stages[k];
              EXPECT_EQ(a.f, b.f) << what;
              EXPECT_EQ(a.b, b.b) << what;
              if (!by_unit) {
                EXPECT_EQ(a.w, b.w) << what;
                EXPECT_EQ(a.bw, b.bw) << what;
              } else {  // U < 7
                EXPECT_LT(a.w, b.w) << what;  // fewer micro-batches add into the unsharded gradient
                EXPECT_DOUBLE_EQ(a.bw - a.w, b.bw - b.w) << what;
              }
              EXPECT_EQ(a.recompute, b.recompute) << what;
              expect_same(a.send_f, b.send_f, what);
              expect_same(a.send_b, b.send_b, what);
              expect_same(a.unshard, b.unshard, what);
              expect_same(a.reduce_grad, b.reduce_grad, what);
              expect_same(a.dp_sync, b.dp_sync, what);
              EXPECT_EQ(a.dp_sync_buckets, b.dp_sync_buckets) << what;
              EXPECT_EQ(a.activation_bytes, b.activation_bytes) << what;
              EXPECT_EQ(a.checkpoint_bytes, b.checkpoint_bytes) << what;
              EXPECT_EQ(a.recompute_bytes, b.recompute_bytes) << what;
              EXPECT_EQ(a.w_buffer_bytes, b.w_buffer_bytes) << what;
              EXPECT_EQ(a.gathered_param_bytes, b.gathered_param_bytes) << what;
              EXPECT_EQ(a.grad_buffer_bytes, b.grad_buffer_bytes) << what;
            }
            EXPECT_EQ(c.static_bytes, whole.static_bytes) << what;
            ASSERT_EQ(c.opt_step.size(), whole.opt_step.size()) << what;
            for (std::size_t r = 0; r < c.opt_step.size(); ++r) expect_same(c.opt_step[r], whole.opt_step[r], what);
            EXPECT_EQ(c.gathered_limit, whole.gathered_limit) << what;
            EXPECT_EQ(c.contention, whole.contention) << what;
            ++compared;
          }
        }
  EXPECT_EQ(compared, 2 * 3 * 2 * 2 * 6);
}

}  // namespace
}  // namespace zeropp::search
