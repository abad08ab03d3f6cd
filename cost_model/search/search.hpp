#pragma once
// Plan search: enumerate the whole space (space.hpp), simulate what can matter, and return exactly what
// simulating every plan would: the fastest `top` plans that fit, the best plan of every strategy and of every
// (strategy, schedule) pair, and for a group where nothing fits the plan that misses memory by least.
//
// The groups: every strategy, every (strategy, schedule) pair, and every family of SearchOptions::families.
// Branch and bound on two provable bounds (bounds.hpp): time_s <= the simulated iteration time and
// memory_bytes <= the simulated peak, both from the plan's action costs without simulating.
//   1. Every plan is enumerated, checked by validate(Plan) (the trainer's rules: a plan it refuses is never
//      reported) and bounded.
//   2. Plans are visited by time bound (ties: enumeration order). A plan whose memory bound exceeds GPU memory
//      cannot fit: it is discarded without simulating. Any other is simulated unless its time bound is above
//      every threshold it could still change: the `top`-th best time found so far, the best time of each group
//      it belongs to (infinite while fewer are known). Thresholds only fall and
//      bounds only rise along the order, so once a bound exceeds every threshold the rest is skipped. A plan
//      skipped this way has a simulated time >= its bound > the thresholds: it cannot enter any answer.
//   3. For each group with no plan that fits, plans are visited by memory bound and
//      simulated until the bound exceeds memory + the smallest excess found: the closest plan is exact too.
// Steps 1 and 2 (and 3) run their per-plan work on SearchOptions::threads threads: bounds are computed for all
// plans at once; in step 2 the next plans that the thresholds as they stand do not rule out are simulated
// together, then taken in order on one thread with the thresholds of the sequential visit.
// The simulated peak decides fit. Order of plans ("faster"): shorter simulated iteration, then lower simulated
// peak, then earlier in the enumeration order of space.hpp; "closer": smaller excess over memory, then faster.
// With simulate = false the closed form (analytic::estimate) ranks every plan and decides fit; no bound is
// needed. With exhaustive = true every plan is simulated (the brute force the tests compare against).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost_model/analytic/estimate.hpp"
#include "cost_model/search/bounds.hpp"
#include "cost_model/search/space.hpp"
#include "cost_model/spec/config.hpp"

namespace zeropp::search {

// Which sizes of one dimension (cp, tp, pp, the HSDP replicas) a family takes.
enum class SizeClass { any, one, more };  // any size; exactly 1; 2 or more

// A family of plans whose best the search answers exactly, like a strategy's (compare's rows, compare.hpp): the
// plans of one strategy, optionally on one schedule, with cp, tp, pp and the replicas of a ZeRO-3 shard group
// (HSDP's dp/dp_shard; 1 for every other plan) of the given classes.
struct PlanFamily {
  std::string name;  // "3d_cp"
  Strategy strategy = Strategy::three_d;
  std::optional<ScheduleKind> schedule;  // none: any schedule
  SizeClass cp = SizeClass::any;
  SizeClass tp = SizeClass::any;
  SizeClass pp = SizeClass::any;
  SizeClass replicas = SizeClass::any;  // HSDP's replicate degree dp/dp_shard (strategy zero3)
  bool contains(const ParallelSpec&) const;
};
// "3d with cp > 1 on zb_h1"; the bare strategy when the family is the whole strategy.
std::string describe_family(const PlanFamily&);

struct SearchOptions {
  SpaceOptions space;
  bool simulate = true;     // false: the closed form ranks every plan
  bool exhaustive = false;  // simulate every plan, no pruning (tests)
  int top = 10;             // the fastest `top` plans are found exactly (at least 2: the runner-up explains)
  bool keep_all = false;    // keep every enumerated plan in SearchResult::all (--csv)
  // Threads that bound and simulate plans (0: every core, worker_pool.hpp). The answer, the counts and every
  // plan's fate are the same for any number: the decisions are taken on one thread in the order above, the
  // other threads only evaluate plans ahead of them (a plan evaluated ahead that the order then rules out is
  // dropped, as if never simulated).
  int threads = 0;
  // Called now and then: (phase, plans done, plans in the space). Phases: "bounding" (enumerating and bounding
  // every plan), "simulating" (visiting plans by time bound). Optional.
  std::function<void(const char*, std::int64_t, std::int64_t)> progress;
  // Families whose best (or, when none fits, closest) plan the search also answers exactly (at most 64): each
  // is one more group, with the strategies and the (strategy, schedule) pairs, in the rule below.
  std::vector<PlanFamily> families;
};

// One evaluated plan.
struct Candidate {
  ParallelSpec parallel;
  analytic::Estimate estimate;  // simulated when `simulated`, else closed form
  analytic::Estimate closed_form;
  PlanBounds bounds;
  std::int64_t index = 0;  // position in the enumeration order (the last tie-break)
  bool simulated = false;
  double closed_form_iteration = 0;
};

// What happened to one enumerated plan (SearchResult::all).
enum class PlanFate { rejected, over_memory_bound, pruned_by_time, simulated };
struct PlanRecord {
  ParallelSpec parallel;
  PlanBounds bounds;
  PlanFate fate = PlanFate::pruned_by_time;
  std::optional<Candidate> result;  // when simulated (or ranked by the closed form)
};

struct SearchCounts {
  std::int64_t enumerated = 0;         // plans in the space
  std::int64_t rejected = 0;           // refused by validate(Plan) (0 unless the space and the rules disagree)
  std::int64_t over_memory_bound = 0;  // memory bound > GPU memory: cannot fit, not simulated
  std::int64_t pruned = 0;             // time bound above every threshold: cannot be in any answer, not simulated
  std::int64_t simulated = 0;          // (or estimated in closed form with simulate = false)
  std::int64_t over_memory = 0;        // discarded for memory: by the bound, or by the evaluated peak
  std::int64_t feasible = 0;           // evaluated and fit
  // enumerated = rejected + pruned + over_memory + feasible; simulated = feasible + over_memory - over_memory_bound
};

// A plan discarded for memory and why it does not fit.
struct InfeasibleReport {
  bool any = false;
  Candidate plan;
  std::string reason;  // "3d tp=1 pp=1 ...: peak 96.1 GiB > 80.0 GiB (GiB = 2^30 B); optimizer 55.0 GiB, ..."
};

// The best of a group of plans (a strategy, or a strategy on one schedule).
struct GroupBest {
  std::int64_t enumerated = 0;
  std::int64_t simulated = 0;
  std::int64_t feasible = 0;      // simulated plans that fit
  std::optional<Candidate> best;  // the group's fastest plan that fits (exact)
  InfeasibleReport closest;       // when none fits: the plan that misses memory by least (exact)
};

struct ScheduleSummary {
  ScheduleKind schedule = ScheduleKind::one_f_one_b;
  GroupBest group;
};

struct StrategySummary {
  Strategy strategy = Strategy::three_d;
  std::int64_t enumerated = 0;
  std::int64_t simulated = 0;
  std::int64_t feasible = 0;               // simulated plans of the strategy that fit
  std::optional<Candidate> best;           // fastest plan of the strategy that fits (exact)
  InfeasibleReport closest;                // when none fits: the plan that misses memory by least (exact)
  std::string note;                        // why there is none
  std::vector<ScheduleSummary> schedules;  // per schedule the strategy's plans run, in enumeration order
};

struct FamilySummary {
  PlanFamily family;
  GroupBest group;
};

struct SearchResult {
  Experiment experiment;
  SearchOptions options;
  std::string ranked_by;     // "simulated" or "closed_form"
  std::string pruning_rule;  // the rule in words
  std::string tie_rule;      // how ties are broken, in words
  SearchCounts counts;
  std::vector<Candidate> ranked;  // the fastest max(options.top, 2) plans that fit, fastest first (exact)
  std::vector<StrategySummary> strategies;
  std::vector<FamilySummary> families;  // options.families, in their order
  InfeasibleReport fastest_infeasible;  // the fastest evaluated plan over memory (among those evaluated)
  InfeasibleReport closest_infeasible;  // when nothing fits: the plan that misses memory by least (exact)
  std::vector<PlanRecord> all;          // every enumerated plan, with options.keep_all

  Plan plan(const Candidate& c) const { return Plan{experiment.model, experiment.cluster, c.parallel}; }
  // The summary of a strategy searched; nullptr when it was not.
  const StrategySummary* strategy(Strategy) const;
  // The group of (strategy, schedule); nullptr when the strategy was not searched or never runs it.
  const GroupBest* schedule_group(Strategy, ScheduleKind) const;
  // The group of the family of that name; nullptr when it was not searched for.
  const GroupBest* family(const std::string& name) const;
};

// Throws SpecError for a bad experiment or options (field "search.*").
SearchResult run_search(const Experiment& experiment, const SearchOptions& options = {});

// The order of plans: true when a is faster than b (time, then peak, then enumeration index).
bool faster(const Candidate& a, const Candidate& b);

}  // namespace zeropp::search
