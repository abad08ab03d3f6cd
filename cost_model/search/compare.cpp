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
  using S = Strategy;
  constexpr SizeClass any = SizeClass::any, one = SizeClass::one, more = SizeClass::more;
  const auto row = [](const char* name, S s, std::optional<K> k, SizeClass cp, SizeClass tp, bool variant,
                      SizeClass pp = SizeClass::any, SizeClass replicas = SizeClass::any) {
    CompareRowSpec r;
    r.name = name;
    r.strategy = s;
    r.schedule = k;
    r.cp = cp;
    r.tp = tp;
    r.pp = pp;
    r.replicas = replicas;
    r.variant = variant;
    return r;
  };
  const std::nullopt_t anyk = std::nullopt;
  return {
      row("3d", S::three_d, anyk, one, any, false),
      row("3d_cp", S::three_d, anyk, more, any, true),
      row("zero3", S::zero3, anyk, one, one, false, one, one),
      row("fsdp_tp", S::zero3, anyk, one, more, true, one, one),
      row("hsdp", S::zero3, anyk, one, any, true, one, more),
      row("fsdp_pp", S::zero3, anyk, one, one, true, more, any),
      row("fsdp_tp_pp", S::zero3, anyk, one, more, true, more, any),
      row("zero3_cp", S::zero3, anyk, more, any, true),
      row("1f1b_zero1", S::pp_zero1, anyk, one, any, false),
      row("1f1b_zero1_cp", S::pp_zero1, anyk, more, any, true),
      row("zb_h1_zero1", S::pp_zero1, K::zb_h1, one, any, false),
      row("zb_h2_zero1", S::pp_zero1, K::zb_h2, one, any, false),
      row("bfs_zero1", S::pp_zero1, K::bfs, one, any, false),
      row("zero3_pp", S::zero3_pp, anyk, one, any, false),
      row("zero3_pp_cp", S::zero3_pp, anyk, more, any, true),
      row("zeropp_a", S::zeropp_a, anyk, one, any, false),
      row("zeropp_a_cp", S::zeropp_a, anyk, more, any, true),
      row("zeropp_b", S::zeropp_b, anyk, one, any, false),
      row("zeropp_b_cp", S::zeropp_b, anyk, more, any, true),
  };
}
std::string cp_absent_reason(const Experiment& ex, int min_cp_tokens) {
  const ModelSpec& m = ex.model;
  if (m.attention_kind() != AttentionKind::flash)
    return fmt::format("context parallelism is not in the space: it needs flash attention, and {} runs {} attention",
                       m.name, to_string(m.attention_kind()));
  if (m.seq_len / 2 < min_cp_tokens)
    return fmt::format(
        "context parallelism is not in the space at sequence length {}: the search tries a CP size only when each "
        "CP rank keeps at least {} tokens (search/space.hpp, min_cp_tokens: the smallest share in Meta's Llama 3 "
        "405B layouts), so cp = 2 needs a sequence of at least {} tokens",
        m.seq_len, min_cp_tokens, 2 * static_cast<long long>(min_cp_tokens));
  return "";
}

namespace {

// Why the space has no FSDP + TP, FSDP + PP or HSDP plan, or "" when the framework runs them.
std::string fsdp2_absent_reason(const Experiment& ex) {
  const Framework f = ex.framework.value_or(Framework::fsdp2);
  if (f == Framework::fsdp2) return "";
  return fmt::format("FSDP + TP (fsdp_tp), FSDP under a pipeline (fsdp_pp, fsdp_tp_pp) and HSDP (hsdp) are "
                     "torchtitan's FSDP2 and the experiment's framework is {}",
                     to_string(f));
}

// A zero3 row only FSDP2 has plans of: with TP, a pipeline or HSDP replicas.
bool fsdp2_row(const PlanFamily& row) {
  return row.strategy == Strategy::zero3 &&
         (row.tp == SizeClass::more || row.pp == SizeClass::more || row.replicas == SizeClass::more);
}

// Why a row has no plan at all, with what to change. Every data-parallel replica (z*dp of them, GPUs/(tp*pp))
// runs at least one sequence per iteration, so the global batch bounds the replicas from below; the widest layout
// has tp at most a node's GPUs (strategies with TP) and pp at most the layers (pipelines).
std::string no_plan_note(const Experiment& ex, const CompareRowSpec& row, int min_cp_tokens) {
  if (row.cp == SizeClass::more)
    if (std::string why = cp_absent_reason(ex, min_cp_tokens); !why.empty())
      return fmt::format("no {} plan: {}", row.name, why);
  if (fsdp2_row(row))
    if (std::string why = fsdp2_absent_reason(ex); !why.empty()) return fmt::format("no {} plan: {}", row.name, why);
  const StrategyTraits& t = traits(row.strategy);
  const long long tp_max = t.tensor_parallel ? ex.cluster.gpus_per_node : 1;
  const bool pipeline = t.pipeline && row.pp != SizeClass::one;  // the zero3 rows without PP
  const long long pp_max = pipeline ? ex.model.layers : 1;
  const long long fewest_replicas = (ex.gpus + tp_max * pp_max - 1) / (tp_max * pp_max);
  std::string why;
  if (ex.global_batch < fewest_replicas) {
    const std::string how = !t.tensor_parallel && !pipeline
                                ? "every GPU is one: no TP, no pipeline"
                                : fmt::format("GPUs / (tp x pp), tp <= {}, pp <= {}", tp_max, pp_max);
    why = fmt::format(
        ": its layouts have at least {} data-parallel replicas ({}), each needing a sequence per iteration, and the "
        "global batch has {}: give at least {} sequences{}",
        fewest_replicas, how, ex.global_batch, fewest_replicas,
        pipeline ? "" : ", or a strategy with pipeline stages");
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
      out.back().variant = false;  // asked for by name: shown even without a plan
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
    const GroupBest* g = result.family(row.name);
    if (!g) throw std::logic_error(fmt::format("compare row {}: its family was not searched", row.name));
    r.evaluated = g->enumerated;
    r.simulated = g->simulated;
    const Candidate* chosen = g->best ? &*g->best : g->closest.any ? &g->closest.plan : nullptr;
    if (!chosen) {
      r.note = no_plan_note(ex, row, result.options.space.min_cp_tokens);
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

std::vector<CompareRow> present_rows(const std::vector<CompareRow>& rows) {
  std::vector<CompareRow> out;
  for (const CompareRow& r : rows)
    if (r.found || !r.spec.variant || r.evaluated > 0) out.push_back(r);
  return out;
}

std::vector<std::string> absent_variants(const Experiment& ex, const std::vector<CompareRow>& rows, int min_cp_tokens) {
  std::string cp_rows, tp_rows, other_rows;
  for (const CompareRow& r : rows) {
    if (r.found || !r.spec.variant || r.evaluated > 0) continue;
    std::string& list = r.spec.cp == SizeClass::more ? cp_rows : fsdp2_row(r.spec) ? tp_rows : other_rows;
    list += (list.empty() ? "" : ", ") + r.spec.name;
  }
  std::vector<std::string> out;
  if (!cp_rows.empty()) {
    std::string why = cp_absent_reason(ex, min_cp_tokens);
    if (why.empty()) why = "no CP size divides the GPUs left beside the other dimensions and the global batch";
    out.push_back(fmt::format("no {} row: {}", cp_rows, why));
  }
  if (!tp_rows.empty()) {
    std::string why = fsdp2_absent_reason(ex);
    if (why.empty()) why = "no layout of tp, pp and dp_shard divides the GPUs, the model's heads and the batch";
    out.push_back(fmt::format("no {} row: {}", tp_rows, why));
  }
  if (!other_rows.empty()) out.push_back(fmt::format("no {} row: the space has no plan of it", other_rows));
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
  o.families.assign(rows.begin(), rows.end());
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
