#include "cost_model/search/compare.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cost_model/search/simulated_timing.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::search {

std::vector<CompareRowSpec> compare_row_specs() {
  using K = ScheduleKind;
  return {
      {"3d", Strategy::three_d, std::nullopt},
      {"zero3", Strategy::zero3, std::nullopt},
      {"1f1b_zero1", Strategy::pp_zero1, std::nullopt},
      {"zb_h1_zero1", Strategy::pp_zero1, K::zb_h1},
      {"zb_h2_zero1", Strategy::pp_zero1, K::zb_h2},
      {"bfs_zero1", Strategy::pp_zero1, K::bfs},
      {"zero3_pp", Strategy::zero3_pp, std::nullopt},
      {"zeropp_a", Strategy::zeropp_a, std::nullopt},
      {"zeropp_b", Strategy::zeropp_b, std::nullopt},
  };
}
namespace {

// Why a row has no plan at all, with what to change. Every data-parallel replica (z*dp of them, GPUs/(tp*pp))
// runs at least one sequence per iteration, so the global batch bounds the replicas from below; the widest layout
// has tp at most a node's GPUs (strategies with TP) and pp at most the layers (pipelines).
std::string no_plan_note(const Experiment& ex, const CompareRowSpec& row) {
  const StrategyTraits& t = traits(row.strategy);
  const long long tp_max = t.tensor_parallel ? ex.cluster.gpus_per_node : 1;
  const long long pp_max = t.pipeline ? ex.model.layers : 1;
  const long long fewest_replicas = (ex.gpus + tp_max * pp_max - 1) / (tp_max * pp_max);
  std::string why;
  if (ex.global_batch < fewest_replicas) {
    const std::string how = !t.tensor_parallel && !t.pipeline
                                ? "every GPU is one: no TP, no pipeline"
                                : fmt::format("GPUs / (tp x pp), tp <= {}, pp <= {}", tp_max, pp_max);
    why = fmt::format(
        ": its layouts have at least {} data-parallel replicas ({}), each needing a sequence per iteration, and the "
        "global batch has {}: give at least {} sequences{}",
        fewest_replicas, how, ex.global_batch, fewest_replicas,
        t.pipeline ? "" : ", or a strategy with pipeline stages");
  } else {
    why = fmt::format(
        ": no layout of tp, pp, z and dp divides both the {} GPUs and the global batch of {} (and the model's heads "
        "and layers); try a GPU count or batch with more factors of 2",
        ex.gpus, ex.global_batch);
  }
  return fmt::format("no {} plan for {} GPUs and global batch {}{}", row.name, ex.gpus, ex.global_batch, why);
}

}  // namespace

std::vector<CompareRowSpec> select_rows(const Experiment& experiment, const std::vector<std::string>& names) {
  const std::vector<CompareRowSpec> all = compare_row_specs();
  std::vector<CompareRowSpec> out;
  if (!names.empty()) {
    for (const std::string& name : names) {
      const auto it = std::find_if(all.begin(), all.end(), [&](const CompareRowSpec& r) { return r.name == name; });
      if (it == all.end()) {
        std::string known;
        for (const auto& r : all) known += (known.empty() ? "" : ", ") + r.name;
        throw SpecError("strategies", fmt::format("\"{}\" is not a compare row; one of: {}", name, known));
      }
      out.push_back(*it);
    }
    return out;
  }
  if (experiment.strategies.empty()) return all;
  for (Strategy s : experiment.strategies)
    for (const auto& r : all)
      if (r.strategy == s) out.push_back(r);
  return out;
}

std::vector<CompareRow> rows_of(const SearchResult& result, const std::vector<CompareRowSpec>& rows) {
  const Experiment& ex = result.experiment;
  std::vector<CompareRow> out;
  for (const CompareRowSpec& row : rows) {
    CompareRow r;
    r.spec = row;
    const StrategySummary* s = result.strategy(row.strategy);
    if (!s) throw std::logic_error(fmt::format("compare row {}: its strategy was not searched", row.name));
    std::optional<Candidate> best = s->best;
    InfeasibleReport closest = s->closest;
    r.evaluated = s->enumerated;
    r.simulated = s->simulated;
    if (row.schedule) {
      const GroupBest* g = result.schedule_group(row.strategy, *row.schedule);
      best = g ? g->best : std::nullopt;
      closest = g ? g->closest : InfeasibleReport{};
      r.evaluated = g ? g->enumerated : 0;
      r.simulated = g ? g->simulated : 0;
    }
    const Candidate* chosen = best ? &*best : closest.any ? &closest.plan : nullptr;
    if (!chosen) {
      r.note = no_plan_note(ex, row);
    } else {
      r.found = true;
      r.plan = result.plan(*chosen);
      r.estimate = {chosen->estimate, chosen->closed_form, chosen->simulated, std::nullopt};
      // The simulated peak by part and when (what the memory figure draws): the chosen plan simulated once more,
      // since the search keeps only its numbers.
      if (chosen->simulated) r.estimate.peak = peak_breakdown(r.plan, simulate_plan(r.plan));
    }
    out.push_back(std::move(r));
  }
  return out;
}

CompareRow best_row_plan(const Experiment& ex, const CompareRowSpec& row, const CompareOptions& options) {
  return compare_rows(ex, {row}, options).front();
}

SearchOptions search_options(const std::vector<CompareRowSpec>& rows, const CompareOptions& options) {
  SearchOptions o;
  o.space = options.space;
  o.space.strategies.clear();
  for (const CompareRowSpec& r : rows)
    if (std::find(o.space.strategies.begin(), o.space.strategies.end(), r.strategy) == o.space.strategies.end())
      o.space.strategies.push_back(r.strategy);
  o.simulate = options.simulate;
  o.progress = options.progress;
  o.threads = options.threads;
  return o;
}

std::vector<CompareRow> compare_rows(const Experiment& experiment, const std::vector<CompareRowSpec>& rows,
                                     const CompareOptions& options) {
  return rows_of(run_search(experiment, search_options(rows, options)), rows);
}

}  // namespace zeropp::search
