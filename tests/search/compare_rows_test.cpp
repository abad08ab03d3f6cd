// Issue 20, items 5-6: compare's rows for the plans people train with today (3d_cp, fsdp_tp, zero3_cp, the
// ZeroPP and pipeline rows with CP) are views of the one search: each row is the best plan (or the closest) of
// its family in that search, equal to the best plan of a search restricted to the family, and a strategy's rows
// split its plans, so the fastest row is the search's winner.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cost_model/search/compare.hpp"
#include "cost_model/search/describe.hpp"
#include "cost_model/spec/names.hpp"
#include "search_fixtures.hpp"

namespace zeropp::search {
namespace {

// The tiny GPT with 1024 tokens and flash attention, CP allowed down to 128 tokens per rank (cp in {2, 4, 8}),
// on GPUs of 1 GiB so that memory decides some rows.
Experiment tiny_cp() {
  Experiment ex = testing::tiny_experiment();
  ex.name = "tiny-cp";
  ex.model.attention = AttentionKind::flash;
  ex.model.hidden = 1024;
  ex.model.seq_len = 1024;
  ex.cluster.memory_bytes = 1.0 * (1 << 30);
  return ex;
}

CompareOptions tiny_cp_options() {
  CompareOptions o;
  o.space.max_v = 2;
  o.space.max_micro_batch = 2;
  o.space.min_cp_tokens = 128;
  return o;
}

const CompareRow& row(const std::vector<CompareRow>& rows, const std::string& name) {
  for (const auto& r : rows)
    if (r.spec.name == name) return r;
  throw std::runtime_error("no row " + name);
}

TEST(CompareRows, EachRowIsTheBestOfASearchRestrictedToItsFamily) {
  const Experiment ex = tiny_cp();
  const CompareOptions options = tiny_cp_options();
  const std::vector<CompareRow> rows = compare_rows(ex, compare_row_specs(), options);
  ASSERT_EQ(rows.size(), compare_row_specs().size());
  int fitting = 0;
  for (const CompareRow& r : rows) {
    // Every row has plans here (CP reaches every strategy, FSDP2 is the default framework) but fsdp_pp: zero3
    // without TP is written z = 8, the node, and one node leaves it no GPUs for a pipeline (space.hpp).
    if (r.spec.name == "fsdp_pp") {
      EXPECT_EQ(r.evaluated, 0);
      continue;
    }
    ASSERT_TRUE(r.found) << r.spec.name << ": " << r.note;
    SearchOptions restricted;
    restricted.space = options.space;
    restricted.space.strategies = {r.spec.strategy};
    restricted.space.filter = [&](const ParallelSpec& p) { return r.spec.contains(p); };
    restricted.top = 2;
    const SearchResult s = run_search(ex, restricted);
    EXPECT_EQ(r.evaluated, s.counts.enumerated) << r.spec.name;
    const Candidate& best = s.ranked.empty() ? s.closest_infeasible.plan : s.ranked.front();
    ASSERT_TRUE(!s.ranked.empty() || s.closest_infeasible.any) << r.spec.name;
    EXPECT_EQ(r.plan.parallel, best.parallel)
        << r.spec.name << ": " << describe_plan(r.plan.parallel) << " vs " << describe_plan(best.parallel);
    EXPECT_EQ(r.estimate.estimate.time_s.iteration, best.estimate.time_s.iteration) << r.spec.name;
    EXPECT_EQ(r.estimate.estimate.feasible, !s.ranked.empty()) << r.spec.name;
    fitting += r.estimate.estimate.feasible;
  }
  EXPECT_GT(fitting, 4);  // memory leaves most rows a plan that fits, not all (closest plans are exact too)
  // The rows' families as their names say.
  EXPECT_EQ(row(rows, "3d").plan.parallel.cp, 1);
  EXPECT_GT(row(rows, "3d_cp").plan.parallel.cp, 1);
  EXPECT_EQ(row(rows, "zero3").plan.parallel.tp, 1);
  EXPECT_EQ(row(rows, "zero3").plan.parallel.cp, 1);
  EXPECT_GT(row(rows, "fsdp_tp").plan.parallel.tp, 1);
  EXPECT_EQ(row(rows, "fsdp_tp").plan.parallel.cp, 1);
  EXPECT_GT(row(rows, "zero3_cp").plan.parallel.cp, 1);
  EXPECT_GT(row(rows, "hsdp").plan.parallel.dp_shard, 0);
  EXPECT_LT(row(rows, "hsdp").plan.parallel.dp_shard, row(rows, "hsdp").plan.parallel.dp);
  EXPECT_GT(row(rows, "fsdp_tp_pp").plan.parallel.tp, 1);
  EXPECT_GT(row(rows, "fsdp_tp_pp").plan.parallel.pp, 1);
  EXPECT_GT(row(rows, "zeropp_b_cp").plan.parallel.cp, 1);
  EXPECT_EQ(row(rows, "zb_h1_zero1").plan.parallel.schedule, ScheduleKind::zb_h1);
  EXPECT_EQ(row(rows, "zb_h1_zero1").plan.parallel.cp, 1);
}

// A strategy's rows without a schedule split its plans: the fastest of them is the strategy's best in the same
// search, and the fastest row is the search's winner.
TEST(CompareRows, AStrategysRowsSplitItsPlans) {
  const Experiment ex = tiny_cp();
  const std::vector<CompareRowSpec> specs = compare_row_specs();
  const SearchResult r = run_search(ex, search_options(specs, tiny_cp_options()));
  const std::vector<CompareRow> rows = rows_of(r, specs);
  const CompareRow* fastest = nullptr;
  for (const StrategySummary& s : r.strategies) {
    std::int64_t enumerated = 0;
    const CompareRow* best = nullptr;
    for (const CompareRow& row : rows) {
      if (row.spec.strategy != s.strategy || row.spec.schedule) continue;
      enumerated += row.evaluated;
      if (!row.found || !row.estimate.estimate.feasible) continue;
      if (!best || row.estimate.estimate.time_s.iteration < best->estimate.estimate.time_s.iteration) best = &row;
    }
    EXPECT_EQ(enumerated, s.enumerated) << to_string(s.strategy);
    ASSERT_EQ(best != nullptr, s.best.has_value()) << to_string(s.strategy);
    if (!best) continue;
    EXPECT_EQ(best->plan.parallel, s.best->parallel) << to_string(s.strategy);
    if (!fastest || best->estimate.estimate.time_s.iteration < fastest->estimate.estimate.time_s.iteration)
      fastest = best;
  }
  ASSERT_FALSE(r.ranked.empty());
  ASSERT_NE(fastest, nullptr);
  EXPECT_EQ(fastest->plan.parallel, r.ranked.front().parallel);
}

// Variant rows (fsdp_tp, the _cp rows) are shown only where the space has plans of them, and the table says why
// the others are absent: CP below twice min_cp_tokens, FSDP + TP under another framework than FSDP2.
TEST(CompareRows, VariantRowsOnlyWhereTheSpaceHasThem) {
  Experiment ex = tiny_cp();
  CompareOptions options = tiny_cp_options();
  options.space.min_cp_tokens = 8192;  // the default: no CP at 1024 tokens
  ex.framework = Framework::megatron;  // no FSDP2 + TP
  const std::vector<CompareRow> all = compare_rows(ex, compare_row_specs(), options);
  std::vector<std::string> shown;
  for (const CompareRow& r : present_rows(all)) shown.push_back(r.spec.name);
  EXPECT_EQ(shown, (std::vector<std::string>{"3d", "zero3", "1f1b_zero1", "zb_h1_zero1", "zb_h2_zero1", "bfs_zero1",
                                             "zero3_pp", "zeropp_a", "zeropp_b"}));
  const std::vector<std::string> why = absent_variants(ex, all, options.space.min_cp_tokens);
  ASSERT_EQ(why.size(), 2u);
  EXPECT_NE(why[0].find("no 3d_cp, zero3_cp, 1f1b_zero1_cp, zero3_pp_cp, zeropp_a_cp, zeropp_b_cp row"),
            std::string::npos)
      << why[0];
  EXPECT_NE(why[0].find("sequence length 1024"), std::string::npos) << why[0];
  EXPECT_NE(why[0].find("at least 8192 tokens"), std::string::npos) << why[0];
  EXPECT_NE(why[0].find("at least 16384 tokens"), std::string::npos) << why[0];
  EXPECT_NE(why[1].find("no fsdp_tp, hsdp, fsdp_pp, fsdp_tp_pp row"), std::string::npos) << why[1];
  EXPECT_NE(why[1].find("megatron"), std::string::npos) << why[1];
  // Asked for by name, a variant row is shown, with the same reason.
  const std::vector<CompareRow> named = compare_rows(ex, select_rows(ex, {"3d_cp"}), options);
  ASSERT_EQ(present_rows(named).size(), 1u);
  EXPECT_FALSE(named[0].found);
  EXPECT_NE(named[0].note.find("min_cp_tokens"), std::string::npos) << named[0].note;
  // Unfused attention: CP is not in the space at any length.
  ex.model.attention = AttentionKind::unfused;
  options.space.min_cp_tokens = 128;
  const std::vector<std::string> unfused =
      absent_variants(ex, compare_rows(ex, compare_row_specs(), options), options.space.min_cp_tokens);
  ASSERT_FALSE(unfused.empty());
  EXPECT_NE(unfused[0].find("needs flash attention"), std::string::npos) << unfused[0];
}

}  // namespace
}  // namespace zeropp::search
