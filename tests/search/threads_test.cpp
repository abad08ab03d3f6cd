// Issue 20, point 5: the search runs its per-plan work on every core, and the answer does not depend on how
// many threads it had: the same counts, the same fate for every plan, the same bounds and the same simulated
// numbers, plan for plan, as one thread (search.hpp: decisions in order on one thread, evaluations ahead on
// the others).
#include <gtest/gtest.h>

#include "cost_model/search/describe.hpp"
#include "cost_model/search/search.hpp"
#include "cost_model/search/worker_pool.hpp"
#include "search_fixtures.hpp"

namespace zeropp::search {
namespace {

void expect_same_search(const Experiment& ex, SearchOptions o, int threads) {
  o.keep_all = true;
  o.threads = 1;
  const SearchResult one = run_search(ex, o);
  o.threads = threads;
  const SearchResult many = run_search(ex, o);
  EXPECT_EQ(one.counts.enumerated, many.counts.enumerated);
  EXPECT_EQ(one.counts.rejected, many.counts.rejected);
  EXPECT_EQ(one.counts.over_memory_bound, many.counts.over_memory_bound);
  EXPECT_EQ(one.counts.pruned, many.counts.pruned);
  EXPECT_EQ(one.counts.simulated, many.counts.simulated);
  EXPECT_EQ(one.counts.over_memory, many.counts.over_memory);
  EXPECT_EQ(one.counts.feasible, many.counts.feasible);
  ASSERT_EQ(one.all.size(), many.all.size());
  for (std::size_t i = 0; i < one.all.size(); ++i) {
    const PlanRecord& a = one.all[i];
    const PlanRecord& b = many.all[i];
    const std::string what = ex.name + " plan " + std::to_string(i) + " " + describe_plan(a.parallel);
    ASSERT_EQ(a.parallel, b.parallel) << what;
    EXPECT_EQ(a.fate, b.fate) << what;
    EXPECT_EQ(a.bounds.time_s, b.bounds.time_s) << what;
    EXPECT_EQ(a.bounds.memory_bytes, b.bounds.memory_bytes) << what;
    ASSERT_EQ(a.result.has_value(), b.result.has_value()) << what;
    if (a.result) {
      EXPECT_EQ(a.result->estimate.time_s.iteration, b.result->estimate.time_s.iteration) << what;
      EXPECT_EQ(a.result->estimate.memory_bytes.peak, b.result->estimate.memory_bytes.peak) << what;
    }
  }
  ASSERT_EQ(one.ranked.size(), many.ranked.size());
  for (std::size_t i = 0; i < one.ranked.size(); ++i) EXPECT_EQ(one.ranked[i].index, many.ranked[i].index);
  for (std::size_t k = 0; k < one.strategies.size(); ++k) {
    const StrategySummary& a = one.strategies[k];
    const StrategySummary& b = many.strategies[k];
    ASSERT_EQ(a.best.has_value(), b.best.has_value());
    if (a.best) {
      EXPECT_EQ(a.best->index, b.best->index);
    }
    EXPECT_EQ(a.closest.any, b.closest.any);
    if (a.closest.any) {
      EXPECT_EQ(a.closest.plan.index, b.closest.plan.index);
    }
  }
}

TEST(SearchThreads, TinyCaseIsTheSameOnFourThreads) {
  SearchOptions o;
  o.space.max_v = 2;
  expect_same_search(testing::tiny_experiment(), o, 4);
}

// Memory matters here (plans over memory, by bound and by simulation), and the thresholds move as it goes.
TEST(SearchThreads, Gpt3_1_3bIsTheSameOnThreeThreads) {
  SearchOptions o;
  o.space.max_v = 2;
  o.space.max_micro_batch = 4;
  o.top = 25;
  expect_same_search(testing::experiment("gpt3-1.3b", 16, 64), o, 3);
}

// ZeroPP plans ruled out by the lowered walk (gathers run ahead) and by the units time bound, between the round's
// speculation and the visit (search.cpp): GPT-3 175B on 64 A100, ZeroPP only.
TEST(SearchThreads, ZeroPPLoweredBoundsAreTheSameOnTwoThreads) {
  SearchOptions o;
  o.space.strategies = {Strategy::zeropp_a, Strategy::zeropp_b};
  o.top = 5;
  expect_same_search(testing::experiment("gpt3-175b", 64, 32), o, 2);
}

// Nothing fits: the closest plan of every group is searched in rounds too.
TEST(SearchThreads, NothingFitsIsTheSameOnTwoThreads) {
  SearchOptions o;
  o.space.max_v = 2;
  o.space.max_micro_batch = 2;
  o.top = 5;
  expect_same_search(testing::experiment("gpt3-175b", 8, 8), o, 2);
}

TEST(WorkerPool, RunsEveryIndexOnceAndRethrowsTheSmallestFailure) {
  WorkerPool pool(3);
  EXPECT_EQ(pool.threads(), 3);
  std::vector<int> hits(1000, 0);
  pool.run(hits.size(), [&](std::size_t i) { ++hits[i]; });
  for (int h : hits) EXPECT_EQ(h, 1);
  pool.run(0, [](std::size_t) { FAIL() << "no index to run"; });
  try {
    pool.run(100, [](std::size_t i) {
      if (i % 7 == 3) throw std::runtime_error("index " + std::to_string(i));
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "index 3");
  }
  // Still usable after a failure.
  std::vector<int> again(10, 0);
  pool.run(again.size(), [&](std::size_t i) { again[i] = static_cast<int>(i); });
  for (int i = 0; i < 10; ++i) EXPECT_EQ(again[i], i);
}

}  // namespace
}  // namespace zeropp::search
