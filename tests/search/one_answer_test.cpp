// Issue 13, point 1: one search, one answer. `search` (run_search), `compare` (compare_rows), `report`
// (build_study_report) and `criterion --experiment` (criterion_verdict) give the same plans and times for the
// same experiment: the default study and Llama-3 8B / 70B on 16, 64 and 256 H100 at 4M tokens per batch.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cost_model/search/compare.hpp"
#include "cost_model/search/criterion_verdict.hpp"
#include "cost_model/search/describe.hpp"
#include "cost_model/search/search.hpp"
#include "cost_model/search/study_report.hpp"
#include "cost_model/spec/names.hpp"
#include "tests/analytic/formulas_models.hpp"

namespace zeropp::search {
namespace {

// Meta's Llama 3 configurations (config.json of Meta-Llama-3-8B and -70B): Llama-2's architecture with 8
// key/value heads, a 128256-token vocabulary and an 8192-token context.
ModelSpec llama3(int layers, int hidden, int heads, int ffn) {
  ModelSpec m = test::llama(layers, hidden, heads, 8, ffn);
  m.name = fmt::format("llama3-{}L", layers);
  m.seq_len = 8192;
  m.vocab = 128256;
  return m;
}

Experiment h100(const ModelSpec& model, int gpus) {
  Experiment ex;
  ex.name = fmt::format("{}-{}", model.name, gpus);
  ex.model = model;
  ex.cluster = load_cluster("dgx-h100");
  ex.gpus = gpus;
  ex.global_batch = (4 << 20) / model.seq_len;  // 4M tokens: 512 sequences of 8192
  return ex;
}

std::vector<Experiment> experiments() {
  std::vector<Experiment> out{load_experiment("default")};
  for (int gpus : {16, 64, 256}) {
    out.push_back(h100(llama3(32, 4096, 32, 14336), gpus));
    out.push_back(h100(llama3(80, 8192, 64, 28672), gpus));
  }
  return out;
}

void expect_same_plan(const Plan& plan, const analytic::Estimate& e, const Candidate& c, const std::string& what) {
  EXPECT_EQ(plan.parallel, c.parallel) << what << ": " << describe_plan(plan.parallel) << " vs "
                                       << describe_plan(c.parallel);
  EXPECT_EQ(e.time_s.iteration, c.estimate.time_s.iteration) << what;
  EXPECT_EQ(e.memory_bytes.peak, c.estimate.memory_bytes.peak) << what;
  EXPECT_EQ(e.feasible, c.estimate.feasible) << what;
}

TEST(OneAnswer, SearchCompareReportAndCriterionAgree) {
  for (const Experiment& ex : experiments()) {
    const SearchResult search = run_search(ex);
    const std::vector<CompareRow> rows = present_rows(compare_rows(ex, select_rows(ex, {})));
    StudyOptions so;
    so.results_dir = std::filesystem::temp_directory_path() / "zeropp-one-answer-none";
    so.auto_validation_sets = false;  // no validation section: the rows are what is compared
    const StudyReport report = build_study_report(ex, so);
    ASSERT_EQ(report.rows.size(), rows.size()) << ex.name;

    // compare's rows of a strategy (without a schedule) split its plans: the fastest of them that fits is the
    // search's best of the strategy, in `zeropp search`'s own search (no families) ...
    for (const StrategySummary& s : search.strategies) {
      const CompareRow* best = nullptr;
      for (const CompareRow& row : rows)
        if (row.spec.strategy == s.strategy && !row.spec.schedule && row.found && row.estimate.estimate.feasible &&
            (!best || row.estimate.estimate.time_s.iteration < best->estimate.estimate.time_s.iteration))
          best = &row;
      const std::string what = ex.name + " " + std::string(to_string(s.strategy));
      ASSERT_EQ(best != nullptr, s.best.has_value()) << what;
      if (best) expect_same_plan(best->plan, best->estimate.estimate, *s.best, what + " (compare vs search)");
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const CompareRow& row = rows[i];
      const std::string what = ex.name + " " + row.spec.name;
      if (!row.found) continue;
      // ... and the report's table is compare's.
      const CompareRow& in_report = report.rows[i];
      EXPECT_EQ(in_report.plan.parallel, row.plan.parallel) << what << " (report vs compare)";
      EXPECT_EQ(in_report.estimate.estimate.time_s.iteration, row.estimate.estimate.time_s.iteration) << what;
    }
    // The search's winner is the fastest row (every winner's strategy has a row).
    if (!search.ranked.empty()) {
      ASSERT_GE(report.winner, 0) << ex.name;
      expect_same_plan(report.rows[report.winner].plan, report.rows[report.winner].estimate.estimate,
                       search.ranked.front(), ex.name + " winner (report vs search)");
    }
    // criterion --experiment judges the search's winning ZeroPP plan, the report's best ZeroPP row.
    const CriterionVerdict v = criterion_verdict(run_search(ex, search_options(select_rows(ex, {}))));
    ASSERT_EQ(v.found, report.best_zeropp >= 0) << ex.name;
    if (v.found) {
      expect_same_plan(report.rows[report.best_zeropp].plan, report.rows[report.best_zeropp].estimate.estimate,
                       v.zeropp, ex.name + " ZeroPP (criterion vs report)");
      EXPECT_EQ(report.criterion_b, v.zeropp.parallel.micro_batch) << ex.name;
      EXPECT_EQ(report.criterion_unit, v.zeropp.parallel.unit) << ex.name;
      EXPECT_FALSE(v.paragraph.empty());
      // The report quotes the same reconciliation, then the FP8 sentence (judge_fp8: a second search, in the other
      // precision, which `criterion --experiment` runs too; its sentence is tested in tests/cli).
      ASSERT_GE(report.criterion_verdict.size(), v.paragraph.size()) << ex.name;
      EXPECT_EQ(report.criterion_verdict.substr(0, v.paragraph.size()), v.paragraph) << ex.name;
      const std::string fp8 = report.criterion_verdict.substr(v.paragraph.size());
      EXPECT_TRUE(fp8.starts_with(" In FP8 ") || fp8.starts_with(" FP8 is not in question: ")) << ex.name << fp8;
    }
  }
}

}  // namespace
}  // namespace zeropp::search
