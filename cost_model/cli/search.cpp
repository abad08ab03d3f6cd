// `zeropp search`: every plan of every strategy for one experiment, the ones that fit in memory ranked by
// simulated iteration time, the top ones printed with why the best wins.
//   zeropp search --model gpt3-13b --cluster dgx-a100-80gb --gpus 64 --global-batch 256 --top 10
//   zeropp search --experiment default --strategies zeropp_b,3d --format json
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "cost_model/analytic/flops.hpp"
#include "cost_model/cli/command.hpp"
#include "cost_model/cli/experiment_args.hpp"
#include "cost_model/cli/progress_line.hpp"
#include "cost_model/cli/run_cost_args.hpp"
#include "cost_model/options/cli_checks.hpp"
#include "cost_model/search/compare.hpp"
#include "cost_model/search/describe.hpp"
#include "cost_model/search/plans_csv.hpp"
#include "cost_model/search/report.hpp"
#include "cost_model/search/search.hpp"
#include "cost_model/spec/atomic_file.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/limits.hpp"
#include "cost_model/spec/fp8.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::cli {
namespace {

struct SearchArgs {
  ExperimentArgs source;
  std::vector<std::string> strategies;
  int top = 10;
  bool closed_form = false;
  search::SearchOptions options;
  std::string csv;
  RunCostArgs run_cost;
  Format format = Format::table;
};

Experiment build_experiment(const SearchArgs& a) {
  Experiment ex = load_experiment_args(a.source, "");
  if (!a.strategies.empty()) {
    ex.strategies.clear();
    for (const auto& s : a.strategies) {
      // compare's row names (zb_h1_zero1 is 1f1b_zero1 on one schedule, 3d_cp is 3d with cp > 1, ...) that are
      // part of a strategy: the search takes the strategy, every plan of it, and says so.
      Strategy strategy{};
      const auto rows = search::compare_row_specs();
      const auto row = std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r.name == s; });
      if (row != rows.end() && to_string(row->strategy) != s) {
        strategy = row->strategy;
        std::cerr << fmt::format(
            "zeropp: note: --strategies {} is compare's row of {}; search searches every plan of {} (the table's "
            "schedule, tp and cp columns tell them apart)\n",
            s, search::describe_family(*row), to_string(strategy));
      } else {
        strategy = strategy_from_string(s, "strategies");
      }
      if (std::find(ex.strategies.begin(), ex.strategies.end(), strategy) == ex.strategies.end())
        ex.strategies.push_back(strategy);
    }
  }
  validate(ex);
  return ex;
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr long long kIntMax = std::numeric_limits<int>::max();

void print_row(const std::string& rank, const search::Candidate& c) {
  const ParallelSpec& p = c.parallel;
  const auto& t = c.estimate.time_s;
  const bool zeropp = is_zeropp(p.strategy);
  std::cout << fmt::format(
      "{:>4} {:<10} {:>2} {:<5} {:>2} {:>2} {:>2} {:>3} {:>2} {:>2} {:<11} {:>2} {:>4} {:>4} {:<9} "
      "{:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>6.1f} {:>5.1f}% {:>7.1f}% {:>6.1f}{}\n",
      rank, to_string(p.strategy), p.tp, search::tp_comm_label(p), p.z, p.cp, p.pp, p.dp, p.zero_stage, p.v,
      to_string(p.schedule), p.micro_batch, p.micro_batches, zeropp ? std::to_string(p.unit) : "-",
      to_string(p.recompute), t.iteration, t.compute, t.comm_exposed, t.bubble, c.estimate.throughput.tflops_per_gpu,
      100 * c.estimate.throughput.mfu, 100 * c.estimate.throughput.mfu_full_attention,
      c.estimate.memory_bytes.peak / kGiB, c.simulated ? "" : " (closed form)");
}

void print_header() {
  std::cout << fmt::format(
      "{:>4} {:<10} {:>2} {:<5} {:>2} {:>2} {:>2} {:>3} {:>2} {:>2} {:<11} {:>2} {:>4} {:>4} {:<9} {:>8} {:>8} "
      "{:>8} {:>8} {:>6} {:>6} {:>8} {:>6}\n",
      "rank", "strategy", "tp", "tpcom", "z", "cp", "pp", "dp", "ZS", "v", "schedule", "b", "B", "U", "recompute",
      "iter s", "compute", "exp comm", "bubble", "TFLOP/s", "MFU", "MFU full", "GiB");
}

void print_table(const search::SearchResult& r, int top) {
  const Experiment& ex = r.experiment;
  const search::SearchCounts& n = r.counts;
  std::cout << fmt::format("search: {} on {} GPUs of {} ({} per node), global batch {} x {} tokens, {}\n",
                           ex.model.name, ex.gpus, ex.cluster.name, ex.cluster.gpus_per_node, ex.global_batch,
                           ex.model.seq_len, dtype_label(ex.dtype, ex.fp8));
  const bool sim = r.ranked_by == "simulated";
  std::cout << fmt::format(
      "plans: {} enumerated (the whole space); {} refused by the plan rules; not {}: {} that cannot fit (memory "
      "bound), {} that cannot be an answer (time bound); {} {}: {} feasible, {} over memory; ranked by {} "
      "iteration time\n",
      n.enumerated, n.rejected, sim ? "simulated" : "estimated", n.over_memory_bound, n.pruned, n.simulated,
      sim ? "simulated" : "estimated in closed form", n.feasible, n.simulated - n.feasible,
      sim ? "simulated" : "closed-form");
  std::cout << "pruning: " << r.pruning_rule << "\n";
  std::cout << "ranking: " << r.tie_rule << "\n\n";

  if (r.ranked.empty()) {
    std::cout << "no plan fits in memory.\n";
  } else {
    print_header();
    const int shown = std::min<int>(top, static_cast<int>(r.ranked.size()));
    for (int i = 0; i < shown; ++i) print_row(std::to_string(i + 1), r.ranked[i]);

    const search::Explanation e = search::explain(r);
    const search::Candidate& best = r.ranked.front();
    std::cout << "\nwhy " << search::describe_plan(best.parallel) << " wins"
              << (best.simulated ? "" : " (closed-form estimate: zero3 has no pipeline to simulate)") << ":\n";
    std::cout << "  dominated by " << e.dominant << "\n";
    for (const auto& v : e.versus) {
      std::cout << fmt::format("  vs {:<15} {:+.3f} s ({:.2f}x slower), mostly {}: {}\n", v.label, v.delta_s,
                               v.slowdown, v.main_difference, search::describe_plan(v.other.parallel));
      if (v.label != "runner-up") continue;
      // What the runner-up loses, part by part (positive: it spends more there), and its memory.
      std::string parts;
      for (const auto& d : v.deltas)
        parts += fmt::format("{}{} {:+.3f} s", parts.empty() ? "" : ", ", d.name, d.seconds);
      std::cout << fmt::format("     by part: {}; peak memory {:+.1f} GiB\n", parts, v.peak_delta_bytes / kGiB);
    }
    for (const auto& m : e.missing) std::cout << "  no plan for " << m << "\n";
  }
  std::cout << "\nbest plan of each strategy:\n";
  print_header();
  for (const auto& s : r.strategies) {
    if (s.best)
      print_row("-", *s.best);
    else
      std::cout << fmt::format("   - {:<10} {}{}\n", to_string(s.strategy), s.note,
                               s.closest.any ? "; closest: " + s.closest.reason : "");
  }
  if (r.ranked.empty() && r.closest_infeasible.any)
    std::cout << "\nclosest to fitting: " << r.closest_infeasible.reason << "\n";
  std::cout << "\nTimes in seconds per iteration (busiest PP rank: compute, exposed communication, bubble); "
               "GiB = 2^30 bytes, peak per GPU. tpcom: sequence parallel (sp), with the TP communication overlapped "
               "(sp+ov), or not (nosp); ZS: ZeRO stage of the dp dimension.\n"
            << analytic::kFlopConventionNote << "\n";
}

// The whole run's cost at a ranked plan (--tokens).
analytic::RunCost candidate_run_cost(const Experiment& ex, const search::Candidate& c,
                                     const analytic::RunCostOptions& o) {
  return analytic::run_cost(ex.model, c.parallel, c.estimate.time_s.iteration, o);
}

int run(SearchArgs& a) {
  const Experiment ex = build_experiment(a);
  // Before the work, not after; the inputs are read by now, so an output that is one of them is refused too.
  if (!a.csv.empty()) check_output_path(a.csv, "--csv");
  warn_if_nominal(ex);
  search::SearchOptions o = a.options;
  o.space.strategies = ex.strategies;
  o.simulate = !a.closed_form;
  o.top = a.top;
  o.keep_all = !a.csv.empty();
  // Progress only for a person watching: a terminal on stderr, and not in JSON mode.
  std::unique_ptr<ProgressLine> progress;
  if (a.format != Format::json && isatty(fileno(stderr))) {
    progress = std::make_unique<ProgressLine>();
    o.progress = [&](const char* phase, std::int64_t done, std::int64_t total) { progress->show(phase, done, total); };
  }
  const search::SearchResult r = search::run_search(ex, o);
  if (progress) progress->finish();
  if (!a.csv.empty()) write_file_atomically(a.csv, search::plans_csv(r), "--csv", ParentDirs::must_exist);
  const std::optional<analytic::RunCostOptions> run_cost = run_cost_options(a.run_cost);
  if (a.format == Format::json) {
    nlohmann::json j = search::to_json(r, a.top);
    if (run_cost) {
      for (std::size_t i = 0; i < j["top"].size(); ++i)
        j["top"][i]["run"] = analytic::to_json(candidate_run_cost(ex, r.ranked[i], *run_cost));
      for (std::size_t k = 0; k < r.strategies.size(); ++k)
        if (r.strategies[k].best)
          j["strategies"][k]["best"]["run"] =
              analytic::to_json(candidate_run_cost(ex, *r.strategies[k].best, *run_cost));
    }
    j["schema"] = kSchemaVersion;
    j["command"] = "search";
    j["experiment"] = {{"name", ex.name}, {"model", ex.model.name},          {"cluster", ex.cluster.name},
                       {"gpus", ex.gpus}, {"global_batch", ex.global_batch}, {"dtype", dtype_label(ex.dtype, ex.fp8)}};
    std::cout << j.dump(2) << "\n";
  } else {
    print_table(r, a.top);
    if (run_cost) {
      std::vector<RunCostRow> costs;
      for (const auto& st : r.strategies)
        costs.push_back({to_string(st.strategy),
                         st.best ? std::optional(candidate_run_cost(ex, *st.best, *run_cost)) : std::nullopt});
      print_run_costs(costs, *run_cost);
    }
  }
  return 0;
}

const bool registered = register_command({
    "search",
    "Enumerate every plan (strategy, tp/pp/dp/z, v, b, U, recompute, schedule), keep those within memory, rank "
    "them by simulated iteration time",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<SearchArgs>();
      add_experiment_options(sub, a->source);
      sub.add_option(
             "--strategies", a->strategies,
             "Strategies to search: 3d, zero3, 1f1b_zero1, zero3_pp, zeropp_a, zeropp_b (default: all); compare's "
             "other rows (zb_h1_zero1, 3d_cp, fsdp_tp, ...) search their strategy")
          ->delimiter(',');
      sub.add_option("--top", a->top, "Plans to print (default 10)")->check(cli_checks::integer_in(0, kIntMax));
      sub.add_option("--max-v", a->options.space.max_v,
                     "Narrow the space: most chunks per PP rank (default: every v with pp*v dividing the layers)")
          ->check(cli_checks::integer_in(1, limits::kLayers));
      sub.add_option("--max-micro-batch", a->options.space.max_micro_batch,
                     "Narrow the space: largest micro-batch size (default: every b that divides the batch)")
          ->check(cli_checks::integer_in(1, limits::kMicroBatch));
      sub.add_option("--threads", a->options.threads,
                     "Threads that bound and simulate plans (default 0: every core; the answer is the same for any)")
          ->check(cli_checks::integer_in(0, 1024));
      sub.add_flag("--exhaustive", a->options.exhaustive,
                   "Simulate every plan (no bound-based pruning; the answer is the same, slower)");
      sub.add_option("--csv", a->csv, "Write every enumerated plan (fate, bounds, simulated split) to FILE as CSV")
          ->check(cli_checks::output_path());
      sub.add_flag("--closed-form", a->closed_form, "Rank by the closed-form estimate only (no simulation)");
      add_run_cost_options(sub, a->run_cost);
      add_format_option(sub, a->format);
      return [a] { return run(*a); };
    },
});

}  // namespace
}  // namespace zeropp::cli
