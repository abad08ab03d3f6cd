// Run cost (--tokens): iterations, days, GPU-hours and cost by hand.
#include "cost_model/analytic/run_cost.hpp"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "cost_model/spec/error.hpp"
#include "estimate_fixtures.hpp"

namespace zeropp::analytic {
namespace {

// 64 GPUs (dp 64), global batch 256 sequences of 2048 tokens = 524,288 tokens per iteration.
Plan sixty_four_gpus() {
  ParallelSpec p;
  p.dp = 64;
  p.micro_batch = 4;
  p.micro_batches = 1;
  return test::plan_of(test::gpt(4, 1024, 16, 2048, 8192), test::round_cluster(8, 8), p);
}

TEST(RunCost, ByHand) {
  RunCostOptions o;
  o.tokens = 1e12;
  o.price_per_gpu_hour = 2.0;
  const RunCost r = run_cost(sixty_four_gpus(), 4.0, o);
  EXPECT_DOUBLE_EQ(r.tokens_per_iteration, 524288);
  EXPECT_DOUBLE_EQ(r.iterations, 1907349);  // 1e12 / 524288 = 1907348.6...: the last iteration runs whole
  EXPECT_DOUBLE_EQ(r.seconds, 1907349 * 4.0);
  EXPECT_DOUBLE_EQ(r.days, 1907349 * 4.0 / 86400);  // 88.3 days
  EXPECT_DOUBLE_EQ(r.gpu_hours, 1907349 * 4.0 * 64 / 3600);
  ASSERT_TRUE(r.cost.has_value());
  EXPECT_DOUBLE_EQ(*r.cost, 1907349 * 4.0 * 64 / 3600 * 2.0);
  const nlohmann::json j = to_json(r);
  EXPECT_DOUBLE_EQ(j.at("cost").get<double>(), *r.cost);
  EXPECT_DOUBLE_EQ(j.at("days").get<double>(), r.days);
}

TEST(RunCost, WithoutAPriceThereIsNoCost) {
  RunCostOptions o;
  o.tokens = 524288;  // exactly one iteration
  const RunCost r = run_cost(sixty_four_gpus(), 2.5, o);
  EXPECT_DOUBLE_EQ(r.iterations, 1);
  EXPECT_DOUBLE_EQ(r.seconds, 2.5);
  EXPECT_FALSE(r.cost.has_value());
  EXPECT_FALSE(to_json(r).contains("cost"));
}

TEST(RunCost, BadInputsNameTheField) {
  RunCostOptions o;
  o.tokens = 0;
  try {
    run_cost(sixty_four_gpus(), 1.0, o);
    ADD_FAILURE() << "no error";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "run.tokens");
  }
  o.tokens = 1e9;
  o.price_per_gpu_hour = -1;
  EXPECT_THROW(run_cost(sixty_four_gpus(), 1.0, o), SpecError);
  o.price_per_gpu_hour.reset();
  EXPECT_THROW(run_cost(sixty_four_gpus(), std::numeric_limits<double>::infinity(), o), SpecError);
  EXPECT_THROW(run_cost(sixty_four_gpus(), 0.0, o), SpecError);
}

}  // namespace
}  // namespace zeropp::analytic
