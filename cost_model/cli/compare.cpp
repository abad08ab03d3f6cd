// `zeropp compare`: the strategies side by side for one experiment, each with its best layout (tp, pp, dp, z, v),
// micro-batch b, unit U and recompute within memory, and its speedup over 3D parallelism. Rows and how they are
// chosen: cost_model/search/compare.hpp (the simulator decides time and memory, pure ZeRO-3 layer by layer;
// --closed-form uses the closed forms). The closed-form time and peak of each chosen plan are printed beside the
// simulated ones.
//   zeropp compare --experiment default
//   zeropp compare --model gpt3-13b --cluster dgx-a100-80gb --gpus 64 --global-batch 256
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cost_model/analytic/flops.hpp"
#include "cost_model/cli/command.hpp"
#include "cost_model/cli/experiment_args.hpp"
#include "cost_model/cli/run_cost_args.hpp"
#include "cost_model/search/compare.hpp"
#include "cost_model/search/describe.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/fp8.hpp"
#include "cost_model/spec/names.hpp"

namespace zeropp::cli {
namespace {

struct CompareArgs {
  ExperimentArgs source;
  std::vector<std::string> strategies;
  bool closed_form = false;
  RunCostArgs run_cost;
  Format format = Format::table;
};

Experiment build_experiment(const CompareArgs& a) {
  Experiment ex = load_experiment_args(a.source, default_experiment_name());
  validate(ex);
  return ex;
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Iteration time of the 3d row (cp = 1) when it was compared and fits; 0 otherwise.
double three_d_time(const std::vector<search::CompareRow>& rows) {
  for (const auto& r : rows)
    if (r.spec.name == "3d" && r.found && r.estimate.estimate.feasible) return r.estimate.estimate.time_s.iteration;
  return 0;
}

// The whole run's cost at a row's plan (--tokens), when the row has a plan that fits.
std::optional<analytic::RunCost> row_run_cost(const search::CompareRow& r,
                                              const std::optional<analytic::RunCostOptions>& o) {
  if (!o || !r.found || !r.estimate.estimate.feasible) return std::nullopt;
  return analytic::run_cost(r.plan, r.estimate.estimate.time_s.iteration, *o);
}

void print_table(const Experiment& ex, const std::vector<search::CompareRow>& rows, const search::SearchResult& r,
                 const std::vector<std::string>& absent) {
  std::cout << fmt::format("{}: {} on {} GPUs of {}, global batch {} x {} tokens, {}\n\n", ex.name, ex.model.name,
                           ex.gpus, ex.cluster.name, ex.global_batch, ex.model.seq_len, dtype_label(ex.dtype, ex.fp8));
  std::cout << fmt::format(
      "{:<13} {:>3} {:>3} {:>3} {:>4} {:>2} {:>2} {:<5} {:>11} {:>2} {:>3} {:>5} {:>5} {:>9} {:>8} {:>8} {:>7} "
      "{:>6} {:>8} {:>8} {:>8} {:>8} {:>7}\n",
      "strategy", "tp", "cp", "pp", "dp", "z", "ZS", "tpcom", "schedule", "v", "b", "B", "U", "recompute", "iter s",
      "(closed)", "TFLOP/s", "MFU", "MFU full", "peak GiB", "(closed)", "sent GB", "vs 3D");
  const double base = three_d_time(rows);
  bool any_closed = false;
  for (const auto& r : rows) {
    if (!r.found) {
      std::cout << fmt::format("{:<13} {}\n", r.spec.name, r.note);
      continue;
    }
    const ParallelSpec& p = r.plan.parallel;
    const auto& e = r.estimate.estimate;
    const auto& c = r.estimate.closed_form;
    const bool sim = r.estimate.simulated;
    any_closed = any_closed || !sim;
    std::string vs = "-";
    if (e.feasible && base > 0) vs = fmt::format("{:.2f}x", base / e.time_s.iteration);
    const std::string closed_time = sim ? fmt::format("{:.3f}", c.time_s.iteration) : "cf";
    const std::string closed_peak = sim ? fmt::format("{:.1f}", c.memory_bytes.peak / kGiB) : "cf";
    // A plan that does not fit is the one that misses memory by least: its time says nothing about the strategy
    // (it is chosen for memory alone, often U = 1 or full recompute), so only its memory is printed.
    const auto when_fits = [&](std::string text) { return e.feasible ? text : std::string("-"); };
    std::cout << fmt::format(
        "{:<13} {:>3} {:>3} {:>3} {:>4} {:>2} {:>2} {:<5} {:>11} {:>2} {:>3} {:>5} {:>5} {:>9} {:>8} {:>8} "
        "{:>7} {:>6} {:>8} {:>8.1f} {:>8} {:>8} {:>7}{}\n",
        r.spec.name, p.tp, p.cp, p.pp, p.dp, p.z, p.zero_stage, search::tp_comm_label(p), to_string(p.schedule), p.v,
        p.micro_batch, p.micro_batches, p.unit, to_string(p.recompute),
        when_fits(fmt::format("{:.3f}", e.time_s.iteration)), when_fits(closed_time),
        when_fits(fmt::format("{:.1f}", e.throughput.tflops_per_gpu)),
        when_fits(fmt::format("{:.1f}%", 100 * e.throughput.mfu)),
        when_fits(fmt::format("{:.1f}%", 100 * e.throughput.mfu_full_attention)), e.memory_bytes.peak / kGiB,
        closed_peak, when_fits(fmt::format("{:.2f}", e.comm_bytes.total / 1e9)), vs,
        e.feasible ? ""
                   : fmt::format("  does not fit: its least-memory plan is over by {:.1f} GiB (more GPUs, or a "
                                 "smaller model per GPU)",
                                 e.over_by_bytes / kGiB));
  }
  const search::SearchCounts& n = r.counts;
  std::cout << fmt::format(
      "\nEach row is the best plan of one search over the whole space ({} plans; {} {}, {} ruled out by provable "
      "bounds): the same plans as `zeropp search`; {}.\n",
      n.enumerated, n.simulated, r.ranked_by == "simulated" ? "simulated" : "estimated in closed form",
      n.pruned + n.over_memory_bound, r.tie_rule);
  std::cout
      << "iter s and peak GiB (GiB = 2^30 B): simulated schedule; (closed): the closed forms for the same plan"
      << (any_closed ? "; cf: closed form only (--closed-form)" : "")
      << ".\nRows: 3d, zero3 (tp = 1), the pipeline rows and zeropp_a/b are plans without context parallelism "
         "(cp = 1); fsdp_tp is ZeRO-3 with tp > 1 (torchtitan's FSDP2 + TP), cp = 1; hsdp ZeRO-3 sharded over part of "
         "dp and replicated across the rest (FSDP2's HSDP, dp_shard < dp); fsdp_pp and fsdp_tp_pp ZeRO-3 under a "
         "pipeline without and with TP (torchtitan's 3-D); a _cp row is its strategy "
         "with cp > 1 (zero3_cp with any tp). A strategy's rows split its plans, so the fastest row is the search's "
         "fastest plan; vs 3D is against the 3d row (cp = 1). FP8 is not modelled.\n";
  for (const std::string& line : absent) std::cout << line << ".\n";
  std::cout << "ZS: ZeRO stage of the dp dimension; tpcom: sequence parallel (sp), with the TP communication "
               "overlapped (sp+ov), or not (nosp). A row that does not fit shows the plan that misses memory by least, "
               "with its memory only.\n"
            << analytic::kFlopConventionNote << "\nsent GB: bytes sent per GPU per iteration (GB = 1e9).\n";
}

nlohmann::json rows_json(const std::vector<search::CompareRow>& rows,
                         const std::optional<analytic::RunCostOptions>& run_cost) {
  const double base = three_d_time(rows);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json j = {{"row", r.spec.name},
                        {"strategy", to_string(r.spec.strategy)},
                        {"family", search::describe_family(r.spec)},
                        {"found", r.found},
                        {"evaluated", r.evaluated},
                        {"simulated", r.simulated}};
    if (!r.found) {
      j["note"] = r.note;
    } else {
      const auto& e = r.estimate.estimate;
      j["tp"] = r.plan.parallel.tp;
      j["cp"] = r.plan.parallel.cp;
      j["parallel"] = to_json(r.plan.parallel);
      j["estimate"] = search::to_json(r.estimate);
      j["feasible"] = e.feasible;
      j["speedup_vs_3d"] =
          (e.feasible && base > 0) ? nlohmann::json(base / e.time_s.iteration) : nlohmann::json(nullptr);
      if (const auto c = row_run_cost(r, run_cost)) j["run"] = analytic::to_json(*c);
    }
    out.push_back(j);
  }
  return out;
}

int run(const CompareArgs& args) {
  const Experiment ex = build_experiment(args);
  warn_if_nominal(ex);
  search::CompareOptions options;
  options.simulate = !args.closed_form;
  const auto specs = search::select_rows(ex, args.strategies);
  const search::SearchResult result = search::run_search(ex, search::search_options(specs, options));
  const auto all_rows = search::rows_of(result, specs);
  const auto rows = search::present_rows(all_rows);
  const std::vector<std::string> absent = search::absent_variants(ex, all_rows, result.options.space.min_cp_tokens);
  const std::optional<analytic::RunCostOptions> run_cost = run_cost_options(args.run_cost);
  if (args.format == Format::json) {
    nlohmann::json j = {{"schema", kSchemaVersion},
                        {"command", "compare"},
                        {"executor", args.closed_form ? "closed_form" : "simulator"},
                        {"experiment",
                         {{"name", ex.name},
                          {"model", ex.model.name},
                          {"cluster", ex.cluster.name},
                          {"gpus", ex.gpus},
                          {"global_batch", ex.global_batch},
                          {"dtype", dtype_label(ex.dtype, ex.fp8)}}},
                        {"counts",
                         {{"enumerated", result.counts.enumerated},
                          {"simulated", result.counts.simulated},
                          {"over_memory_bound", result.counts.over_memory_bound},
                          {"pruned", result.counts.pruned}}},
                        {"tie_rule", result.tie_rule},
                        {"absent_rows", absent},
                        {"strategies", rows_json(rows, run_cost)}};
    std::cout << j.dump(2) << "\n";
  } else {
    print_table(ex, rows, result, absent);
    if (run_cost) {
      std::vector<RunCostRow> costs;
      for (const auto& r : rows) costs.push_back({r.spec.name, row_run_cost(r, run_cost)});
      print_run_costs(costs, *run_cost);
    }
  }
  return 0;
}

const bool registered = register_command({
    "compare",
    "Compare the strategies (3D, ZeRO-3, FSDP + TP, 1F1B/ZB-H1/ZB-H2/BFS + ZeRO-1, naive ZeRO-3 + PP, ZeroPP A/B, "
    "each with context parallelism where the space has it) for one experiment, each at its best plan",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<CompareArgs>();
      add_experiment_options(sub, a->source);
      sub.add_option("--strategies", a->strategies,
                     "Rows to compare: 3d, 3d_cp, zero3, fsdp_tp, zero3_cp, 1f1b_zero1, 1f1b_zero1_cp, zb_h1_zero1, "
                     "zb_h2_zero1, bfs_zero1, zero3_pp, zero3_pp_cp, zeropp_a, zeropp_a_cp, zeropp_b, zeropp_b_cp "
                     "(default: all, the fsdp_tp and _cp rows where the space has plans of them)")
          ->delimiter(',');
      sub.add_flag("--closed-form", a->closed_form, "Closed forms only, no schedule simulation");
      add_run_cost_options(sub, a->run_cost);
      add_format_option(sub, a->format);
      return [a] { return run(*a); };
    },
});

}  // namespace
}  // namespace zeropp::cli
