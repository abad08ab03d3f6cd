#pragma once
// `zeropp compare`: the strategies side by side for one experiment, each row the best plan that one plan search
// (search.hpp) finds for it, so that `compare`, `search`, `report` and `criterion --experiment` give the same
// plans and times. A row is a strategy, or a strategy on one schedule:
//   3d            the best 3D plan (tp, pp, schedule, v chosen)
//   zero3         pure ZeRO-3 over all GPUs (simulated layer by layer: see simulated_estimate.hpp)
//   1f1b_zero1    the best PP + ZeRO-1 plan, on whichever schedule wins
//   zb_h1_zero1   the best PP + ZeRO-1 plan on ZB-H1
//   zb_h2_zero1   the same on ZB-H2
//   bfs_zero1     the same on looped breadth-first
//   zero3_pp      naive ZeRO-3 under PP (gather/free per micro-batch), z and pp chosen
//   zeropp_a/b    ZeroPP hybrid A / B, z, pp, v and U chosen
// Every row also chooses b, recompute and the ZeRO stage its strategy allows. The row's plan is the search's
// best of the strategy (or of the strategy on that schedule): exact over the whole space, ranked by simulated
// time (ties: lower peak, then enumeration order). When none fits, the row is the plan that misses memory by
// least, reported with feasible = false and its over_by_bytes. With simulate = false the closed forms rank.
#include <optional>
#include <string>
#include <vector>

#include "cost_model/search/search.hpp"
#include "cost_model/search/simulated_estimate.hpp"
#include "cost_model/search/space.hpp"
#include "cost_model/spec/config.hpp"

namespace zeropp::search {

struct CompareRowSpec {
  std::string name;  // "zb_h1_zero1"
  Strategy strategy = Strategy::three_d;
  std::optional<ScheduleKind> schedule;  // the row's schedule, or none: the strategy's best on any
};

// The nine rows above, in that order.
std::vector<CompareRowSpec> compare_row_specs();

struct CompareOptions {
  SpaceOptions space;  // strategies are set from the rows
  bool simulate = true;
  std::function<void(const char*, std::int64_t, std::int64_t)> progress;  // SearchOptions::progress
  int threads = 0;  // SearchOptions::threads (0: every core)
};

struct CompareRow {
  CompareRowSpec spec;
  bool found = false;          // at least one plan exists for the experiment
  Plan plan;                   // the chosen plan (when found)
  SimulatedEstimate estimate;  // its estimate; estimate.estimate.feasible says whether it fits
  long long evaluated = 0;     // plans of the row in the space
  long long simulated = 0;     // of those, simulated (or estimated in closed form)
  std::string note;            // why no plan exists (found = false)
};

// Rows to compare: `names` (row names; SpecError("strategies", ...) on an unknown one) when given; else the
// rows of experiment.strategies (each strategy's rows, in the experiment's order); else all nine.
std::vector<CompareRowSpec> select_rows(const Experiment& experiment, const std::vector<std::string>& names);

// The rows of a search already run (its strategies must include every row's).
std::vector<CompareRow> rows_of(const SearchResult& result, const std::vector<CompareRowSpec>& rows);

// The search compare_rows runs: the rows' strategies, in the rows' order.
SearchOptions search_options(const std::vector<CompareRowSpec>& rows, const CompareOptions& = {});
// One search over the rows' strategies, then rows_of.
CompareRow best_row_plan(const Experiment& experiment, const CompareRowSpec& row, const CompareOptions& = {});
std::vector<CompareRow> compare_rows(const Experiment& experiment, const std::vector<CompareRowSpec>& rows,
                                     const CompareOptions& = {});

}  // namespace zeropp::search
