#include "cost_model/search/search.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "cost_model/analytic/grad_accumulation.hpp"
#include "cost_model/search/describe.hpp"
#include "cost_model/search/search_budget.hpp"
#include "cost_model/search/simulated_estimate.hpp"
#include "cost_model/search/worker_pool.hpp"
#include "cost_model/simulate/costs_from_plan.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::search {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kScheduleKinds = static_cast<int>(ScheduleKind::zeropp) + 1;

double iteration(const Candidate& c) { return c.estimate.time_s.iteration; }
double peak(const Candidate& c) { return c.estimate.memory_bytes.peak; }

// Smaller excess over memory, then faster.
bool closer(const Candidate& a, const Candidate& b) {
  if (a.estimate.over_by_bytes != b.estimate.over_by_bytes) return a.estimate.over_by_bytes < b.estimate.over_by_bytes;
  return faster(a, b);
}

// One enumerated plan, as the search keeps it (the estimates live only for the plans evaluated).
struct Entry {
  ParallelSpec parallel;
  PlanBounds bounds;
  int strategy = 0;            // index into the searched strategies
  std::uint64_t families = 0;  // bit k: in SearchOptions::families[k]
  PlanFate fate = PlanFate::pruned_by_time;
};

// A group of plans whose best (and, when none fits, closest) the search answers exactly.
struct Group {
  std::int64_t enumerated = 0, simulated = 0, feasible = 0;
  std::optional<Candidate> best, closest;
  std::vector<std::int64_t> members;  // entry indices (valid plans only)
  double threshold() const { return best ? iteration(*best) : kInf; }
  void add(const Candidate& c) {
    ++simulated;
    if (c.estimate.feasible) {
      ++feasible;
      if (!best || faster(c, *best)) best = c;
    } else if (!closest || closer(c, *closest)) {
      closest = c;
    }
  }
};

InfeasibleReport report(const std::optional<Candidate>& c, const Experiment& ex) {
  InfeasibleReport r;
  if (!c) return r;
  r.any = true;
  r.plan = *c;
  r.reason = fmt::format("{}: {}", describe_plan(c->parallel), memory_reason(c->estimate, ex.cluster.memory_bytes));
  return r;
}

// simulate::costs_from_plan(plan) does not depend on the scheduling unit U (tests/search/costs_cache_test.cpp):
// the plans that differ only in U, next to each other in the enumeration and in the visiting order alike, share
// one table. One entry per thread, keyed by the plan with U left out and by the search it belongs to.
class CostsCache {
 public:
  const simulate::ActionCosts& get(const Plan& plan, std::uint64_t search) {
    ParallelSpec key = plan.parallel;
    // Plans that differ only in U share one cost table, unless ZeroPP's per-unit gradient reduction makes the W
    // action's accumulation depend on U (analytic/grad_accumulation.hpp).
    if (!analytic::grad_reductions_depend_on_unit(key)) key.unit = 0;
    for (Slot& s : slots_)
      if (s.search == search && s.key == key) return s.costs;
    // The enumeration cycles through the recompute modes inside the U loop: a slot for each keeps them all.
    Slot& s = slots_[next_];
    next_ = (next_ + 1) % slots_.size();
    s.costs = simulate::costs_from_plan(plan);
    s.key = key;
    s.search = search;
    return s.costs;
  }

 private:
  struct Slot {
    std::uint64_t search = 0;  // 0: empty
    ParallelSpec key;
    simulate::ActionCosts costs;
  };
  std::array<Slot, 4> slots_;
  std::size_t next_ = 0;
};

const simulate::ActionCosts& costs_of(const Plan& plan, std::uint64_t search) {
  thread_local CostsCache cache;
  return cache.get(plan, search);
}

std::uint64_t next_search_id() {
  static std::atomic<std::uint64_t> next{1};
  return next++;
}

class Searcher {
 public:
  Searcher(const Experiment& ex, const SearchOptions& options)
      : ex_(ex),
        options_(options),
        order_(options.space.strategies.empty() ? all_strategies() : options.space.strategies),
        pool_(options.threads > 0 ? options.threads : default_threads()) {
    strategy_groups_.resize(order_.size());
    schedule_groups_.resize(order_.size() * kScheduleKinds);
    family_groups_.resize(options.families.size());
    keep_ = std::max(options.top, 2);
  }

  SearchResult run() {
    enumerate();
    if (options_.simulate && !options_.exhaustive) {
      branch_and_bound();
      closest_of_groups_with_no_fit();
    } else {
      std::vector<std::int64_t> all;
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(entries_.size()); ++i)
        if (entries_[i].fate != PlanFate::rejected) all.push_back(i);
      const std::vector<Speculation> done = speculate(all, /*walk=*/false);
      for (std::size_t k = 0; k < all.size(); ++k) {
        commit(all[k], *done[k].candidate);
        tick("simulating", all[k] + 1);
      }
    }
    return result();
  }

 private:
  double memory() const { return ex_.cluster.memory_bytes; }
  Plan plan_of(const Entry& e) const { return Plan{ex_.model, ex_.cluster, e.parallel}; }
  Group& schedule_group(const Entry& e) {
    return schedule_groups_[e.strategy * kScheduleKinds + static_cast<int>(e.parallel.schedule)];
  }
  // Calls f with the group of every family entry e is in.
  template <class F>
  void for_each_family(const Entry& e, F f) {
    for (std::uint64_t m = e.families; m != 0; m &= m - 1) f(family_groups_[std::countr_zero(m)]);
  }

  void enumerate() {
    // The space is enumerated first (cheap: no estimate), then every plan is checked and bounded on the pool,
    // then the groups take their members in enumeration order.
    for_each_plan(ex_, options_.space, [&](const Plan& plan) {
      Entry e;
      e.parallel = plan.parallel;
      e.strategy = static_cast<int>(std::find(order_.begin(), order_.end(), plan.parallel.strategy) - order_.begin());
      for (std::size_t k = 0; k < options_.families.size(); ++k)
        if (options_.families[k].contains(plan.parallel)) e.families |= std::uint64_t{1} << k;
      entries_.push_back(std::move(e));
    });
    total_ = static_cast<std::int64_t>(entries_.size());
    constexpr std::int64_t kBlock = 64;  // plans per task: bounding one takes microseconds
    const std::int64_t blocks = (total_ + kBlock - 1) / kBlock;
    std::atomic<std::int64_t> bounded{0};
    const std::thread::id caller = std::this_thread::get_id();  // progress is reported from this thread only
    pool_.run(static_cast<std::size_t>(blocks), [&](std::size_t block) {
      const std::int64_t lo = static_cast<std::int64_t>(block) * kBlock, hi = std::min(total_, lo + kBlock);
      for (std::int64_t i = lo; i < hi; ++i) {
        Entry& e = entries_[i];
        const Plan plan = plan_of(e);
        try {
          validate(plan);
          e.bounds = lower_bounds(plan, &costs_of(plan, id_));
        } catch (const SpecError&) {
          e.fate = PlanFate::rejected;
        }
      }
      const std::int64_t done = bounded += hi - lo;
      if (std::this_thread::get_id() == caller) tick_every("bounding", done);
    });
    for (std::int64_t i = 0; i < total_; ++i) {
      Entry& e = entries_[i];
      ++strategy_groups_[e.strategy].enumerated;
      ++schedule_group(e).enumerated;
      for_each_family(e, [](Group& g) { ++g.enumerated; });
      if (e.fate == PlanFate::rejected) continue;
      strategy_groups_[e.strategy].members.push_back(i);
      schedule_group(e).members.push_back(i);
      for_each_family(e, [&](Group& g) { g.members.push_back(i); });
    }
    tick("bounding", total_);
  }

  // A plan's work that depends on that plan alone, done ahead on the pool: its memory walk bound and, when
  // that does not rule it out, its evaluation.
  struct Speculation {
    double walk = 0;           // memory_walk_bound
    double schedule_time = 0;  // schedule_time_bound (0: not reached)
    double lowered = 0;        // lowered_memory_bound (0: not reached or not applicable)
    std::optional<Candidate> candidate;
  };

  // For branch_and_bound: the checks of its visit in the same order (memory walk, lowered memory walk, schedule
  // time bound), each against the GPU memory or the threshold as it stood when the plan was picked (thresholds
  // only fall, so a plan they rule out now the visit rules out too), then the evaluation. Without `walk` (the
  // exhaustive search) only the evaluation.
  std::vector<Speculation> speculate(const std::vector<std::int64_t>& plans, bool walk,
                                     const std::vector<double>& thresholds = {}) {
    std::vector<Speculation> out(plans.size());
    pool_.run(plans.size(), [&](std::size_t k) {
      const Entry& e = entries_[plans[k]];
      Speculation& sp = out[k];
      if (!walk) {
        sp.candidate = evaluated_candidate(plans[k]);
        return;
      }
      const Plan plan = plan_of(e);
      const simulate::ActionCosts& costs = costs_of(plan, id_);
      sp.walk = memory_walk_bound(plan, memory(), &costs);
      if (std::max(e.bounds.memory_bytes, sp.walk) > memory()) return;
      // The program the simulation runs, walked where that can say more (bounds.hpp), before the compute-only
      // schedule is simulated: lowering costs less than that simulation, and the gathers that run ahead rule out
      // most ZeroPP plans over memory (GPT-3 175B on 64 A100: 134 of the 315 schedule simulations it needed).
      std::optional<PreparedPlan> prepared;
      if (has_lowered_memory_bound(plan)) {
        prepared.emplace(prepare_plan(plan, costs));
        sp.lowered = lowered_memory_bound(*prepared, memory());
        if (sp.lowered > memory()) return;
      }
      sp.schedule_time = schedule_time_bound(plan, &costs);
      if (std::max(e.bounds.time_s, sp.schedule_time) > thresholds[k]) return;
      if (!prepared) prepared.emplace(prepare_plan(plan, costs));
      sp.candidate = evaluated_candidate(plans[k], &*prepared);
    });
    return out;
  }

  // The time above which a plan of this entry's groups can no longer enter any answer.
  double threshold(const Entry& e) {
    const double top = static_cast<int>(top_.size()) < keep_ ? kInf : iteration(top_.back());
    double t = std::max({top, strategy_groups_[e.strategy].threshold(), schedule_group(e).threshold()});
    for_each_family(e, [&](const Group& g) { t = std::max(t, g.threshold()); });
    return t;
  }
  double largest_threshold() const {
    double t = static_cast<int>(top_.size()) < keep_ ? kInf : iteration(top_.back());
    for (const Group& g : strategy_groups_) t = std::max(t, g.threshold());
    for (const Group& g : schedule_groups_)
      if (!g.members.empty()) t = std::max(t, g.threshold());
    for (const Group& g : family_groups_)
      if (!g.members.empty()) t = std::max(t, g.threshold());
    return t;
  }

  void branch_and_bound() {
    std::vector<std::int64_t> order;
    order.reserve(entries_.size());
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(entries_.size()); ++i)
      if (entries_[i].fate != PlanFate::rejected) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
      return entries_[a].bounds.time_s < entries_[b].bounds.time_s;
    });
    // Rounds: the next plans (up to `batch`) that the thresholds as they stand do not rule out are bounded and
    // simulated on the pool; then the visit below takes the plans in order with the thresholds of the moment,
    // exactly as one thread would, and uses those results where it simulates. Thresholds only fall along the
    // visit, so a plan it simulates was picked for the round (a plan picked that it then rules out is dropped).
    const std::size_t batch = pool_.threads() > 1 ? 4 * static_cast<std::size_t>(pool_.threads()) : 1;
    std::size_t pos = 0;
    std::int64_t visited = 0;
    bool stopped = false;
    while (pos < order.size() && !stopped) {
      std::vector<std::int64_t> picked;
      std::vector<double> thresholds;
      std::size_t end = pos;
      for (; end < order.size() && picked.size() < batch; ++end) {
        const Entry& e = entries_[order[end]];
        if (e.bounds.memory_bytes > memory()) continue;
        const double t = threshold(e);
        if (e.bounds.time_s > t) {
          if (e.bounds.time_s > largest_threshold()) break;
          continue;
        }
        picked.push_back(order[end]);
        thresholds.push_back(t);
      }
      const std::vector<Speculation> ahead = speculate(picked, /*walk=*/true, thresholds);
      std::unordered_map<std::int64_t, std::size_t> slot;
      for (std::size_t k = 0; k < picked.size(); ++k) slot.emplace(picked[k], k);
      for (; pos < order.size(); ++pos) {
        const std::int64_t i = order[pos];
        Entry& e = entries_[i];
        if (e.bounds.memory_bytes > memory()) {
          tick("simulating", ++visited);
          e.fate = PlanFate::over_memory_bound;
          continue;
        }
        if (e.bounds.time_s > threshold(e)) {
          tick("simulating", ++visited);
          e.fate = PlanFate::pruned_by_time;
          if (e.bounds.time_s > largest_threshold()) {  // every later bound is larger still
            stopped = true;
            break;
          }
          continue;
        }
        const auto it = slot.find(i);
        if (it == slot.end()) break;  // beyond this round: the next one starts here
        tick("simulating", ++visited);
        // The costlier bounds, only for plans that would otherwise be simulated (bounds.hpp): the memory walk,
        // the walk of the lowered program, the compute-only schedule's time (not for the break above: the visit is
        // sorted by the first bound).
        const Speculation& sp = ahead[it->second];
        e.bounds.memory_bytes = std::max(e.bounds.memory_bytes, sp.walk);
        if (e.bounds.memory_bytes > memory()) {
          e.fate = PlanFate::over_memory_bound;
          continue;
        }
        e.bounds.memory_bytes = std::max(e.bounds.memory_bytes, sp.lowered);
        if (e.bounds.memory_bytes > memory()) {
          e.fate = PlanFate::over_memory_bound;
          continue;
        }
        e.bounds.time_s = std::max(e.bounds.time_s, sp.schedule_time);
        if (e.bounds.time_s > threshold(e)) {
          e.fate = PlanFate::pruned_by_time;
          continue;
        }
        commit(i, *sp.candidate);
      }
    }
    // Plans after the break keep fate pruned_by_time unless their memory bound already rules them out.
    for (Entry& e : entries_)
      if (e.fate == PlanFate::pruned_by_time && e.bounds.memory_bytes > memory()) e.fate = PlanFate::over_memory_bound;
  }

  // Groups where nothing fits: simulate their plans in increasing order of memory bound (the memory walk's, where
  // known), until the bound's excess exceeds the smallest excess simulated (a plan's simulated excess is at least its
  // bound's). The order is the same on any number of threads: a walked plan is taken only when no plan left to walk
  // can come before it (their bounds so far are at least the next one's in the sorted list), ties by that position.
  void closest_of_groups_with_no_fit() {
    const auto settle = [&](Group& g) {
      if (g.best || g.members.empty()) return;
      std::vector<std::int64_t> members = g.members;
      std::stable_sort(members.begin(), members.end(), [&](std::int64_t a, std::int64_t b) {
        return entries_[a].bounds.memory_bytes < entries_[b].bounds.memory_bytes;
      });
      const auto out_of_reach = [&](double bound) {
        return g.closest && bound - memory() > g.closest->estimate.over_by_bytes;
      };
      const std::size_t batch = pool_.threads() > 1 ? 4 * static_cast<std::size_t>(pool_.threads()) : 1;
      using Key = std::pair<double, std::size_t>;  // (bound, position in members)
      std::vector<Key> walked;                     // a min-heap
      const auto later = [](const Key& a, const Key& b) { return a > b; };
      std::size_t pos = 0;
      const auto skip_evaluated = [&] {
        while (pos < members.size() && evaluated_.contains(members[pos])) ++pos;
      };
      // Until something is simulated there is no reach: the first plan in the list is simulated as it comes.
      skip_evaluated();
      if (!g.closest && pos < members.size()) {
        const std::vector<Speculation> first = speculate_reach({members[pos]}, out_of_reach, kInf);
        commit(members[pos], *first[0].candidate);
        ++pos;
      }
      while (true) {
        skip_evaluated();
        const Key next = pos < members.size() ? Key{entries_[members[pos]].bounds.memory_bytes, pos}
                                              : Key{kInf, members.size()};
        const double reach = g.closest ? memory() + g.closest->estimate.over_by_bytes : kInf;
        if (!walked.empty() && !(next < walked.front())) {
          // The walked plans that come first, simulated ahead on the pool, committed in order if still in reach.
          std::vector<std::int64_t> picked;
          std::vector<double> bounds;
          while (!walked.empty() && !(next < walked.front()) && picked.size() < batch) {
            std::pop_heap(walked.begin(), walked.end(), later);
            const Key k = walked.back();
            walked.pop_back();
            if (out_of_reach(k.first)) {  // every later key is at least as large
              walked.clear();
              break;
            }
            picked.push_back(members[k.second]);
            bounds.push_back(k.first);
          }
          if (picked.empty()) break;
          const std::vector<Speculation> ahead = speculate_reach(picked, out_of_reach, reach, /*walked=*/true);
          for (std::size_t k = 0; k < picked.size(); ++k) {
            if (out_of_reach(std::max(bounds[k], ahead[k].walk))) continue;
            commit(picked[k], *ahead[k].candidate);
          }
          continue;
        }
        if (pos == members.size() || out_of_reach(next.first)) break;
        // The next plans of the list, walked on the pool; those within reach wait in the heap.
        std::vector<std::int64_t> picked;
        std::vector<std::size_t> at;
        for (; pos < members.size() && picked.size() < batch; ++pos) {
          if (evaluated_.contains(members[pos])) continue;
          if (out_of_reach(entries_[members[pos]].bounds.memory_bytes)) break;
          picked.push_back(members[pos]);
          at.push_back(pos);
        }
        const std::vector<double> walks = walk_reach(picked, reach);
        for (std::size_t k = 0; k < picked.size(); ++k) {
          const double bound = std::max(entries_[picked[k]].bounds.memory_bytes, walks[k]);
          if (out_of_reach(bound)) continue;
          walked.push_back({bound, at[k]});
          std::push_heap(walked.begin(), walked.end(), later);
        }
      }
    };
    for (Group& g : strategy_groups_) settle(g);
    for (Group& g : schedule_groups_) settle(g);
    for (Group& g : family_groups_) settle(g);
  }

  // The memory walk bound of each plan, on the pool; a walk stops once above `reach` (its value so far is a bound).
  std::vector<double> walk_reach(const std::vector<std::int64_t>& plans, double reach) {
    std::vector<double> out(plans.size());
    pool_.run(plans.size(), [&](std::size_t k) {
      const Plan plan = plan_of(entries_[plans[k]]);
      out[k] = memory_walk_bound(plan, reach, &costs_of(plan, id_));
    });
    return out;
  }

  // The evaluation of each plan unless its memory bound puts it out of reach (as it stands: the reach only shrinks;
  // the caller decides again, in order, afterwards): the memory walk first unless `walked` says it is done, then
  // the lowered program's walk where it applies. Speculation::walk is the largest of those bounds.
  template <class Reach>
  std::vector<Speculation> speculate_reach(const std::vector<std::int64_t>& plans, const Reach& out_of_reach,
                                           double reach, bool walked = false) {
    std::vector<Speculation> out(plans.size());
    pool_.run(plans.size(), [&](std::size_t k) {
      const Plan plan = plan_of(entries_[plans[k]]);
      const simulate::ActionCosts& costs = costs_of(plan, id_);
      if (!walked) {
        out[k].walk = memory_walk_bound(plan, reach, &costs);
        if (out_of_reach(out[k].walk)) return;
      }
      const PreparedPlan prepared = prepare_plan(plan, costs);
      if (has_lowered_memory_bound(plan)) {
        out[k].walk = std::max(out[k].walk, lowered_memory_bound(prepared, reach));
        if (out_of_reach(out[k].walk)) return;
      }
      out[k].candidate = evaluated_candidate(plans[k], &prepared);
    });
    return out;
  }

  // Evaluates plan i (simulated, or in closed form): depends on that plan alone, so it may run on any thread.
  Candidate evaluated_candidate(std::int64_t i, const PreparedPlan* prepared = nullptr) const {
    const Entry& e = entries_[i];
    const Plan plan = plan_of(e);
    Candidate c;
    c.parallel = e.parallel;
    c.bounds = e.bounds;
    c.index = i;
    analytic::EstimateOptions o;
    o.validate = false;  // validate(Plan) ran at enumeration
    if (options_.simulate) {
      try {
        SimulatedEstimate s = prepared ? simulated_estimate(plan, o, *prepared) : simulated_estimate(plan, o);
        c.estimate = s.estimate;
        c.closed_form = s.closed_form;
        c.simulated = s.simulated;
      } catch (const SpecError&) {
        throw;
      } catch (const std::exception& ex) {
        // A valid plan the schedule generator or the simulator cannot run is a bug there: say which plan.
        throw std::runtime_error(fmt::format("simulating {}: {}", describe_plan(e.parallel), ex.what()));
      }
    } else {
      c.estimate = c.closed_form = analytic::estimate(plan, o);
    }
    c.closed_form_iteration = c.closed_form.time_s.iteration;
    return c;
  }

  // Records the evaluation of plan i in its groups and the ranking (the calling thread, in visiting order).
  void commit(std::int64_t i, Candidate c) {
    Entry& e = entries_[i];
    c.bounds = e.bounds;  // as they stand when it is visited (the memory walk bound included)
    e.fate = PlanFate::simulated;
    strategy_groups_[e.strategy].add(c);
    schedule_group(e).add(c);
    for_each_family(e, [&](Group& g) { g.add(c); });
    if (c.estimate.feasible) {
      insert_top(c);
    } else if (!fastest_infeasible_ || faster(c, *fastest_infeasible_)) {
      fastest_infeasible_ = c;
    }
    evaluated_.emplace(i, std::move(c));
  }

  void insert_top(const Candidate& c) {
    if (static_cast<int>(top_.size()) == keep_ && !faster(c, top_.back())) return;
    top_.insert(std::upper_bound(top_.begin(), top_.end(), c, faster), c);
    if (static_cast<int>(top_.size()) > keep_) top_.pop_back();
  }

  void tick(const char* phase, std::int64_t done) {
    if (options_.progress && (done % 1024 == 0 || done == total_)) options_.progress(phase, done, total_);
  }
  // The same when `done` moves in steps (blocks of plans), not one by one.
  void tick_every(const char* phase, std::int64_t done) {
    if (options_.progress && done < total_) options_.progress(phase, done, total_);
  }

  GroupBest summary(const Group& g) const {
    GroupBest out;
    out.enumerated = g.enumerated;
    out.simulated = g.simulated;
    out.feasible = g.feasible;
    out.best = g.best;
    if (!g.best) out.closest = report(g.closest, ex_);
    return out;
  }

  SearchResult result() {
    SearchResult r;
    r.experiment = ex_;
    r.options = options_;
    r.ranked_by = options_.simulate ? "simulated" : "closed_form";
    r.pruning_rule =
        !options_.simulate ? "none: every plan is estimated in closed form and ranked by closed-form time"
        : options_.exhaustive
            ? "none: every plan is simulated (exhaustive)"
            : "exact branch and bound: a plan is not simulated when a lower bound on its simulated peak (static "
              "model-state bytes + the memory of its compute actions in program order, with the ZeRO-3 buffers "
              "that are provably held, gathers that ran ahead included) exceeds GPU memory (it cannot fit), or when "
              "a lower bound on its simulated time (the busiest rank's compute seconds + the forward chain before "
              "it; for ZeroPP, each unit's forward-backward chain; then the compute-only schedule's makespan) "
              "exceeds the time of every answer it could change";
    r.tie_rule =
        "ties: lower peak memory, then the earlier plan in enumeration order (strategy, tp/z, pp, ZeRO "
        "stage, sequence parallelism and TP overlap, schedule, v, b, FP8 all-gather, U, recompute)";
    SearchCounts& n = r.counts;
    n.enumerated = static_cast<std::int64_t>(entries_.size());
    for (const Entry& e : entries_) {
      switch (e.fate) {
        case PlanFate::rejected:
          ++n.rejected;
          break;
        case PlanFate::over_memory_bound:
          ++n.over_memory_bound;
          ++n.over_memory;
          break;
        case PlanFate::pruned_by_time:
          ++n.pruned;
          break;
        case PlanFate::simulated:
          ++n.simulated;
          break;
      }
    }
    for (const auto& [i, c] : evaluated_) {
      if (c.estimate.feasible)
        ++n.feasible;
      else
        ++n.over_memory;
    }
    r.ranked = top_;

    std::optional<Candidate> closest;
    for (std::size_t k = 0; k < order_.size(); ++k) {
      const Group& g = strategy_groups_[k];
      StrategySummary s;
      s.strategy = order_[k];
      s.enumerated = g.enumerated;
      s.simulated = g.simulated;
      s.feasible = g.feasible;
      s.best = g.best;
      if (!g.best) {
        s.closest = report(g.closest, ex_);
        if (g.closest && (!closest || closer(*g.closest, *closest))) closest = g.closest;
        s.note = g.enumerated == 0
                     ? fmt::format("no {} layout for {} GPUs ({} per node) and global batch {}", to_string(s.strategy),
                                   ex_.gpus, ex_.cluster.gpus_per_node, ex_.global_batch)
                     : fmt::format("none of its {} plans fits in memory", g.enumerated);
      }
      for (int kind = 0; kind < kScheduleKinds; ++kind) {
        const Group& sg = schedule_groups_[k * kScheduleKinds + kind];
        if (sg.enumerated == 0) continue;
        s.schedules.push_back({static_cast<ScheduleKind>(kind), summary(sg)});
      }
      r.strategies.push_back(std::move(s));
    }
    for (std::size_t k = 0; k < family_groups_.size(); ++k)
      r.families.push_back({options_.families[k], summary(family_groups_[k])});
    r.fastest_infeasible = report(fastest_infeasible_, ex_);
    if (top_.empty()) r.closest_infeasible = report(closest, ex_);
    if (options_.keep_all) {
      r.all.reserve(entries_.size());
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(entries_.size()); ++i) {
        PlanRecord rec;
        rec.parallel = entries_[i].parallel;
        rec.bounds = entries_[i].bounds;
        rec.fate = entries_[i].fate;
        if (const auto it = evaluated_.find(i); it != evaluated_.end()) rec.result = it->second;
        r.all.push_back(std::move(rec));
      }
    }
    return r;
  }

  const Experiment& ex_;
  const SearchOptions& options_;
  std::vector<Strategy> order_;
  WorkerPool pool_;
  const std::uint64_t id_ = next_search_id();  // keys the per-thread cost tables (costs_of)
  std::vector<Entry> entries_;
  std::vector<Group> strategy_groups_, schedule_groups_, family_groups_;
  std::unordered_map<std::int64_t, Candidate> evaluated_;
  std::vector<Candidate> top_;
  int keep_ = 2;
  std::int64_t total_ = 0;
  std::optional<Candidate> fastest_infeasible_;
};

}  // namespace

bool faster(const Candidate& a, const Candidate& b) {
  if (iteration(a) != iteration(b)) return iteration(a) < iteration(b);
  if (peak(a) != peak(b)) return peak(a) < peak(b);
  return a.index < b.index;
}

const StrategySummary* SearchResult::strategy(Strategy s) const {
  for (const StrategySummary& x : strategies)
    if (x.strategy == s) return &x;
  return nullptr;
}

const GroupBest* SearchResult::schedule_group(Strategy s, ScheduleKind k) const {
  const StrategySummary* x = strategy(s);
  if (!x) return nullptr;
  for (const ScheduleSummary& g : x->schedules)
    if (g.schedule == k) return &g.group;
  return nullptr;
}

bool PlanFamily::contains(const ParallelSpec& p) const {
  const auto in = [](SizeClass c, int size) {
    return c == SizeClass::any || (c == SizeClass::one ? size == 1 : size > 1);
  };
  const int hsdp_replicas = p.dp_shard > 0 ? p.dp / p.dp_shard : 1;
  return p.strategy == strategy && (!schedule || p.schedule == *schedule) && in(cp, p.cp) && in(tp, p.tp) &&
         in(pp, p.pp) && in(replicas, hsdp_replicas);
}

std::string describe_family(const PlanFamily& f) {
  std::string out = to_string(f.strategy);
  const auto size = [&](const char* dim, SizeClass c) {
    if (c != SizeClass::any)
      out += fmt::format("{} {} {}", out.find(" with ") == std::string::npos ? " with" : ",", dim,
                         c == SizeClass::one ? "= 1" : "> 1");
  };
  size("tp", f.tp);
  size("cp", f.cp);
  size("pp", f.pp);
  size("HSDP replicas", f.replicas);
  if (f.schedule) out += " on " + to_string(*f.schedule);
  return out;
}

const GroupBest* SearchResult::family(const std::string& name) const {
  for (const FamilySummary& f : families)
    if (f.family.name == name) return &f.group;
  return nullptr;
}

SearchResult run_search(const Experiment& ex, const SearchOptions& options) {
  if (options.top < 0) throw SpecError("search.top", fmt::format("search.top={} must be >= 0", options.top));
  if (options.families.size() > 64)
    throw SpecError("search.families", fmt::format("{} families: at most 64", options.families.size()));
  check_search_budget(ex, options);  // before anything is enumerated: a named error, never bad_alloc
  return Searcher(ex, options).run();
}

}  // namespace zeropp::search
