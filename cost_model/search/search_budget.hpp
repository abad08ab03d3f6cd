#pragma once
// How large a search may get, checked before any plan is enumerated. Every command that enumerates or simulates
// plans (search, compare, report, criterion --experiment, zeropp-train --experiment) searches through
// run_search, which checks this first. Without it `zeropp search --model gpt3-13b --cluster dgx-a100-80gb
// --gpus 8 --global-batch 4194304 --closed-form --top 1` ran 90 s and died of a bare std::bad_alloc at 2.16 GB:
// ZeroPP's unit U takes every value 1..B, so its plans grow as B^2 and B as the global batch.
//
// One budget with `estimate`'s (schedule/budget.hpp):
//   - each plan's program holds at most kMaxProgramActions actions (space.hpp leaves larger ones out: they cannot
//     be simulated), as estimate refuses one;
//   - a simulating search (not --closed-form): the programs of all its plans together at most kMaxSearchActions
//     actions, what simulating every plan would take (the search simulates a part of them, but which part is
//     known only as it goes, so the whole is what can be checked before);
//   - the memory the search keeps, plans x the bytes per plan measured for its mode, at most kMaxSearchBytes: the
//     same ceiling as one program at the action budget (kMaxProgramActions x 76 B, schedule/budget.hpp);
//   - at most kMaxSearchPlans plans (each is validated and bounded before the search ranks any).
// A space over any of them is refused with one line saying how large it is, which strategies make it so and
// what narrows it; nothing is enumerated.
#include <cstdint>
#include <string>

#include "cost_model/search/search.hpp"

namespace zeropp::search {

// kMaxProgramActions x the simulator's 76 bytes per action: about 1.3 GB.
inline constexpr std::int64_t kMaxSearchBytes = std::int64_t{76} << 24;
// Plans in one search: 2.1 million, 43 times the largest search of the zoo's studies and benchmarks (Megatron's 1T
// model on 4096 A100, batch 4096: 49 k plans, README). Estimating them all in closed form took 13 us per plan on
// the development VM under load (GPT-3 13B on 8 A100: 1,076,766 plans in 14.3 s): about half a minute.
inline constexpr std::int64_t kMaxSearchPlans = std::int64_t{1} << 21;
// The programs of a simulating search's plans together: 2^36 = 68.7 billion actions. The largest shipped search
// has 0.26 billion (paper-megatron-39.1b-a100-64), Megatron's 1T on 3072 A100 2.4 billion; GPT-3 13B on 8 A100
// at batch 4096 has 59 billion and took 112 s (21,625 plans simulated, on the 2-core VM under a load of 12), at
// batch 16384 925 billion and was still running after 4 CPU-minutes.
inline constexpr std::int64_t kMaxSearchActions = std::int64_t{1} << 36;

// Bytes the search keeps per enumerated plan (its entry, group memberships and visiting order), measured as the
// growth of peak RSS with the number of plans; more when every plan is evaluated (simulate = false, or
// exhaustive: each keeps its estimates) and again with keep_all (--csv: a record per plan).
std::int64_t bytes_per_plan(const SearchOptions& options);

struct SearchSize {
  std::int64_t plans = 0;            // in the space (before options.space.filter)
  std::int64_t zeropp_plans = 0;     // of them, the zeropp schedule's (every U in 1..B)
  int largest_micro_batches = 0;     // the largest B of the zeropp schedule's layouts (0: none)
  std::int64_t largest_program = 0;  // the action bound of the largest plan's program, over all ranks
  double actions = 0;                // the action bounds of every plan's program together (simulating them all)
  double bytes = 0;                  // plans x bytes_per_plan(options)
};

// The size of the space run_search would search, counted layout by layout without enumerating its plans.
SearchSize search_size(const Experiment& experiment, const SearchOptions& options);

// Throws SpecError("search", "...") when the search would exceed the budget above.
void check_search_budget(const Experiment& experiment, const SearchOptions& options);

}  // namespace zeropp::search
