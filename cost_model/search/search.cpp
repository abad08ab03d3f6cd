#include "cost_model/search/search.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "cost_model/search/describe.hpp"
#include "cost_model/search/search_budget.hpp"
#include "cost_model/search/simulated_estimate.hpp"
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
  int strategy = 0;  // index into the searched strategies
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

class Searcher {
 public:
  Searcher(const Experiment& ex, const SearchOptions& options)
      : ex_(ex), options_(options), order_(options.space.strategies.empty() ? all_strategies()
                                                                            : options.space.strategies) {
    strategy_groups_.resize(order_.size());
    schedule_groups_.resize(order_.size() * kScheduleKinds);
    keep_ = std::max(options.top, 2);
  }

  SearchResult run() {
    enumerate();
    if (options_.simulate && !options_.exhaustive) {
      branch_and_bound();
      closest_of_groups_with_no_fit();
    } else {
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(entries_.size()); ++i) {
        if (entries_[i].fate == PlanFate::rejected) continue;
        evaluate(i);
        tick("simulating", i + 1);
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

  void enumerate() {
    // The space is counted first (cheap: no estimate) so that progress can say how far along it is.
    total_ = options_.progress ? count_plans(ex_, options_.space) : 0;
    for_each_plan(ex_, options_.space, [&](const Plan& plan) {
      Entry e;
      e.parallel = plan.parallel;
      e.strategy = static_cast<int>(std::find(order_.begin(), order_.end(), plan.parallel.strategy) - order_.begin());
      const std::int64_t index = static_cast<std::int64_t>(entries_.size());
      ++strategy_groups_[e.strategy].enumerated;
      ++schedule_group(e).enumerated;
      try {
        validate(plan);
        e.bounds = lower_bounds(plan);
        strategy_groups_[e.strategy].members.push_back(index);
        schedule_group(e).members.push_back(index);
      } catch (const SpecError&) {
        e.fate = PlanFate::rejected;
      }
      entries_.push_back(std::move(e));
      tick("bounding", static_cast<std::int64_t>(entries_.size()));
    });
    total_ = static_cast<std::int64_t>(entries_.size());
  }

  // The time above which a plan of this entry's groups can no longer enter any answer.
  double threshold(const Entry& e) {
    const double top = static_cast<int>(top_.size()) < keep_ ? kInf : iteration(top_.back());
    return std::max({top, strategy_groups_[e.strategy].threshold(), schedule_group(e).threshold()});
  }
  double largest_threshold() const {
    double t = static_cast<int>(top_.size()) < keep_ ? kInf : iteration(top_.back());
    for (const Group& g : strategy_groups_) t = std::max(t, g.threshold());
    for (const Group& g : schedule_groups_)
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
    std::int64_t visited = 0;
    for (std::int64_t i : order) {
      Entry& e = entries_[i];
      tick("simulating", ++visited);
      if (e.bounds.memory_bytes > memory()) {
        e.fate = PlanFate::over_memory_bound;
        continue;
      }
      if (e.bounds.time_s > threshold(e)) {
        e.fate = PlanFate::pruned_by_time;
        if (e.bounds.time_s > largest_threshold()) break;  // every later bound is larger still
        continue;
      }
      // The costlier memory bound, only for plans that would otherwise be simulated.
      e.bounds.memory_bytes = std::max(e.bounds.memory_bytes, warmup_memory_bound(plan_of(e)));
      if (e.bounds.memory_bytes > memory()) {
        e.fate = PlanFate::over_memory_bound;
        continue;
      }
      evaluate(i);
    }
    // Plans after the break keep fate pruned_by_time unless their memory bound already rules them out.
    for (Entry& e : entries_)
      if (e.fate == PlanFate::pruned_by_time && e.bounds.memory_bytes > memory()) e.fate = PlanFate::over_memory_bound;
  }

  // Groups where nothing fits: visit their plans by memory bound until the bound's excess exceeds the smallest
  // excess simulated (the simulated excess of a plan is at least its bound's).
  void closest_of_groups_with_no_fit() {
    const auto settle = [&](Group& g) {
      if (g.best || g.members.empty()) return;
      std::vector<std::int64_t> members = g.members;
      std::stable_sort(members.begin(), members.end(), [&](std::int64_t a, std::int64_t b) {
        return entries_[a].bounds.memory_bytes < entries_[b].bounds.memory_bytes;
      });
      // Sorted by the memory bounds as they stand: every later plan's bound is at least this one's.
      const auto out_of_reach = [&](double bound) {
        return g.closest && bound - memory() > g.closest->estimate.over_by_bytes;
      };
      for (std::int64_t i : members) {
        if (out_of_reach(entries_[i].bounds.memory_bytes)) break;
        if (evaluated_.contains(i)) continue;
        if (out_of_reach(warmup_memory_bound(plan_of(entries_[i])))) continue;
        evaluate(i);
      }
    };
    for (Group& g : strategy_groups_) settle(g);
    for (Group& g : schedule_groups_) settle(g);
  }

  void evaluate(std::int64_t i) {
    Entry& e = entries_[i];
    const Plan plan = plan_of(e);
    Candidate c;
    c.parallel = e.parallel;
    c.bounds = e.bounds;
    c.index = i;
    analytic::EstimateOptions o;
    o.validate = false;  // validate(Plan) ran at enumeration
    if (options_.simulate) {
      try {
        SimulatedEstimate s = simulated_estimate(plan, o);
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
    e.fate = PlanFate::simulated;
    strategy_groups_[e.strategy].add(c);
    schedule_group(e).add(c);
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
              "model-state bytes + the activations of the forwards before its first backward) exceeds GPU memory "
              "(it cannot fit), or when a lower bound on its simulated time (busiest rank's compute seconds + the "
              "forward chain before it) exceeds the time of every answer it could change";
    r.tie_rule = "ties: lower peak memory, then the earlier plan in enumeration order (strategy, tp/z, pp, ZeRO "
                 "stage, sequence parallelism and TP overlap, schedule, v, b, U, recompute)";
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
        s.note = g.enumerated == 0 ? fmt::format("no {} layout for {} GPUs ({} per node) and global batch {}",
                                                 to_string(s.strategy), ex_.gpus, ex_.cluster.gpus_per_node,
                                                 ex_.global_batch)
                                   : fmt::format("none of its {} plans fits in memory", g.enumerated);
      }
      for (int kind = 0; kind < kScheduleKinds; ++kind) {
        const Group& sg = schedule_groups_[k * kScheduleKinds + kind];
        if (sg.enumerated == 0) continue;
        ScheduleSummary ss;
        ss.schedule = static_cast<ScheduleKind>(kind);
        ss.group.enumerated = sg.enumerated;
        ss.group.simulated = sg.simulated;
        ss.group.feasible = sg.feasible;
        ss.group.best = sg.best;
        if (!sg.best) ss.group.closest = report(sg.closest, ex_);
        s.schedules.push_back(std::move(ss));
      }
      r.strategies.push_back(std::move(s));
    }
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
  std::vector<Entry> entries_;
  std::vector<Group> strategy_groups_, schedule_groups_;
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

SearchResult run_search(const Experiment& ex, const SearchOptions& options) {
  if (options.top < 0) throw SpecError("search.top", fmt::format("search.top={} must be >= 0", options.top));
  check_search_budget(ex, options);  // before anything is enumerated: a named error, never bad_alloc
  return Searcher(ex, options).run();
}

}  // namespace zeropp::search
