#pragma once
// `zeropp compare`: the strategies side by side for one experiment, each row the best plan that one plan search
// (search.hpp) finds for it, so that `compare`, `search`, `report` and `criterion --experiment` give the same
// plans and times. A row is a family of plans (search.hpp, PlanFamily): a strategy, maybe on one schedule, with
// or without context parallelism (cp) and, for ZeRO-3, tensor parallelism. The rows without CP:
//   3d            the best 3D plan (tp, pp, schedule, v chosen), cp = 1
//   zero3         pure ZeRO-3 over all GPUs, tp = 1, cp = 1, pp = 1 (simulated layer by layer: simulated_estimate.hpp)
//   fsdp_tp       ZeRO-3 with tp > 1, cp = 1: torchtitan's 2-D FSDP2 + TP (spec/strategy.hpp)
//   hsdp          ZeRO-3 with HSDP replicas (dp_shard < dp), pp = 1, cp = 1, any tp: FSDP2's hybrid sharding
//   fsdp_pp       ZeRO-3 under a pipeline (pp > 1), tp = 1, cp = 1, with or without HSDP: FSDP2 + PP
//   fsdp_tp_pp    the same with tp > 1: torchtitan's 3-D FSDP2 + TP + PP
//   1f1b_zero1    the best PP + ZeRO-1 plan, on whichever schedule wins, cp = 1
//   zb_h1_zero1   the best PP + ZeRO-1 plan on ZB-H1, cp = 1
//   zb_h2_zero1   the same on ZB-H2
//   bfs_zero1     the same on looped breadth-first
//   zero3_pp      naive ZeRO-3 under PP (gather/free per micro-batch), z and pp chosen, cp = 1
//   zeropp_a/b    ZeroPP hybrid A / B, z, pp, v and U chosen, cp = 1
// and with CP (cp > 1, spec/context_parallel.hpp; any schedule, any tp): 3d_cp, zero3_cp (FSDP + CP, with or
// without TP), 1f1b_zero1_cp, zero3_pp_cp, zeropp_a_cp, zeropp_b_cp. The rows of a strategy without a schedule
// (3d and 3d_cp; zero3, fsdp_tp and zero3_cp; ...) split its plans between them, so the fastest row is the
// search's fastest plan. fsdp_tp and the _cp rows are "variants": compare shows one only when the space has
// plans of it (CP needs a sequence of 2 x min_cp_tokens tokens, space.hpp; FSDP + TP, FSDP + PP and HSDP the
// fsdp2 framework).
// Every row also chooses b, recompute and the ZeRO stage its strategy allows. The row's plan is the search's
// best of its family: exact over the whole space (the family is a group of the one search), ranked by simulated
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

struct CompareRowSpec : PlanFamily {
  bool variant = false;  // shown only when the space has plans of it (select_rows, present_rows)
};

// The rows above: each strategy's rows together, a CP row after the row it adds CP to.
std::vector<CompareRowSpec> compare_row_specs();

struct CompareOptions {
  SpaceOptions space;  // strategies are set from the rows
  bool simulate = true;
  std::function<void(const char*, std::int64_t, std::int64_t)> progress;  // SearchOptions::progress
  int threads = 0;                                                        // SearchOptions::threads (0: every core)
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

// The rows to show: every row with a plan, and every row without one that is not a variant (a variant row with
// no plan in the space is left out: absent_variants says why).
std::vector<CompareRow> present_rows(const std::vector<CompareRow>& rows);
// Why the space has no plan with cp > 1 (space.hpp's cp_sizes: flash attention, at least min_cp_tokens tokens
// per CP rank), or "" when its rule lets a CP size in.
std::string cp_absent_reason(const Experiment& experiment, int min_cp_tokens);
// One line per kind of variant row left out for want of plans, saying why the space has none: CP at this
// sequence length (space.hpp's min_cp_tokens), FSDP + TP under a framework that does not run it. Empty when none.
std::vector<std::string> absent_variants(const Experiment& experiment, const std::vector<CompareRow>& rows,
                                         int min_cp_tokens);

// Rows to compare: `names` (row names; SpecError("strategies", ...) on an unknown one) when given, each then shown
// even without a plan; else the rows of experiment.strategies (each strategy's rows, in the experiment's order);
// else all.
std::vector<CompareRowSpec> select_rows(const Experiment& experiment, const std::vector<std::string>& names);

// The rows of a search already run (its strategies must include every row's).
std::vector<CompareRow> rows_of(const SearchResult& result, const std::vector<CompareRowSpec>& rows);

// The search compare_rows runs: the rows' strategies, in the rows' order, and the rows as its families.
SearchOptions search_options(const std::vector<CompareRowSpec>& rows, const CompareOptions& = {});
// One search over the rows' strategies, then rows_of.
CompareRow best_row_plan(const Experiment& experiment, const CompareRowSpec& row, const CompareOptions& = {});
std::vector<CompareRow> compare_rows(const Experiment& experiment, const std::vector<CompareRowSpec>& rows,
                                     const CompareOptions& = {});

}  // namespace zeropp::search
