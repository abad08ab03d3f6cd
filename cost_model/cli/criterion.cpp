// `zeropp criterion`: does ZeroPP move fewer bytes than tensor parallelism (2 s U b > 9 h)? Per-layer bytes of both,
// the smallest U that makes it hold, and with a cluster the time-based answer (bandwidths and overlap) and its
// boundary.
//   zeropp criterion --model gpt3-13b --micro-batch 1 --unit 4
//   zeropp criterion --model gpt3-13b --micro-batch 1 --unit 4 --cluster dgx-a100-80gb
//   zeropp criterion --experiment default --cluster-time
// With --experiment and no --micro-batch/--unit, b and U are those of the winning ZeroPP plan (hybrid A or B) of
// the experiment's plan search (the one `zeropp search`, `compare` and `report` run), and a closing paragraph
// reconciles the byte criterion, the time-based answer on the experiment's cluster and the simulated search
// (cost_model/search/criterion_verdict.hpp).
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cost_model/analytic/criterion.hpp"
#include "cost_model/analytic/criterion_json.hpp"
#include "cost_model/cli/command.hpp"
#include "cost_model/cli/experiment_args.hpp"
#include "cost_model/options/cli_checks.hpp"
#include "cost_model/search/criterion_verdict.hpp"
#include "cost_model/search/search.hpp"
#include "cost_model/search/describe.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/limits.hpp"
#include "cost_model/spec/names.hpp"

namespace zeropp::cli {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct CriterionArgs {
  std::string experiment, model, cluster, dtype;
  std::optional<int> micro_batch, unit;
  int seq = 0;  // --seq; 0: the model file's
  bool cluster_time = false;
  Format format = Format::table;
};

struct Inputs {
  ModelSpec model;
  std::optional<ClusterSpec> cluster;
  int b = 1, U = 1;
  Dtype dtype = Dtype::bf16;
  std::string origin;  // where b and U came from
  std::string no_fit;  // when the experiment's plans all exceed memory: that, and the closest plan's excess
  std::optional<search::CriterionVerdict> verdict;  // with --experiment and no --micro-batch/--unit
};

Inputs resolve(const CriterionArgs& a) {
  Inputs in;
  in.origin = "given";
  if (!a.experiment.empty()) {
    if (!a.model.empty()) throw SpecError("model", "--experiment gives the model; do not combine it with --model");
    const Experiment ex = load_experiment(a.experiment, {.seq_len = a.seq});
    in.model = ex.model;
    in.dtype = ex.dtype;
    if (a.cluster_time) in.cluster = ex.cluster;
    if (!a.micro_batch || !a.unit) {
      // The same search as `zeropp search`, `compare` and `report`: b and U of its winning ZeroPP plan.
      search::SearchOptions options;
      options.space.strategies = ex.strategies;
      const search::SearchResult result = search::run_search(ex, options);
      in.verdict = search::criterion_verdict(result);
      if (in.verdict->found) {
        const ParallelSpec& p = in.verdict->zeropp.parallel;
        in.b = p.micro_batch;
        in.U = p.unit;
        in.origin = fmt::format("best ZeroPP plan of experiment \"{}\", {}", ex.name, to_string(p.strategy));
      } else {
        // No ZeroPP plan fits: b and U of the zeropp_b plan closest to fitting, not called a best plan.
        const search::StrategySummary* s = result.strategy(Strategy::zeropp_b);
        if (!s || !s->closest.any) throw SpecError("experiment", in.verdict->paragraph);
        const search::Candidate& c = s->closest.plan;
        in.b = c.parallel.micro_batch;
        in.U = c.parallel.unit;
        in.origin = fmt::format("closest zeropp_b plan of experiment \"{}\"", ex.name);
        in.no_fit = fmt::format(
            "no zeropp_b plan of experiment \"{}\" fits in memory; the closest, {}, is over by "
            "{:.2f} GiB",
            ex.name, search::describe_plan(c.parallel), c.estimate.over_by_bytes / kGiB);
      }
    }
  } else {
    if (a.model.empty()) throw SpecError("model", "give --model M (zoo name or JSON file) or --experiment NAME|FILE");
    if (a.cluster_time) throw SpecError("cluster", "--cluster-time takes the experiment's cluster; give --cluster C");
    in.model = load_model(a.model, {.seq_len = a.seq});
  }
  if (a.micro_batch) in.b = *a.micro_batch;
  if (a.unit) in.U = *a.unit;
  if (!a.cluster.empty()) in.cluster = load_cluster(a.cluster);
  if (!a.dtype.empty()) in.dtype = dtype_from_string(a.dtype, "--dtype");
  validate(in.model);
  return in;
}

std::string optional_text(const std::optional<long long>& v) { return v ? std::to_string(*v) : "none"; }

// The real-valued U at which ZeroPP's exposed time equals TP's: the continuous boundary that plots draw beside
// 2sUb = 9h (plots/criterion.py). criterion_time is linear in U (criterion.hpp): per U, compute c and TP's exposed
// time t grow by their U = 1 values while ZeroPP's gathers+reduce (comm) stay fixed, so
// max(0, comm - U c) = U t  at  U* = comm / (c + t), and the integer boundary min_unit is floor(U*) + 1.
double unit_at_parity(const analytic::CriterionTime& at_one) {
  return at_one.zeropp_comm_s / (at_one.compute_s + at_one.tp_exposed_s);
}

int run(const CriterionArgs& args) {
  const Inputs in = resolve(args);
  const analytic::Criterion c = analytic::criterion({in.model.hidden, in.model.seq_len, in.b, in.U});
  std::optional<analytic::CriterionTime> t;
  std::optional<double> parity_unit;
  if (in.cluster) {
    t = analytic::criterion_time(in.model, *in.cluster, in.b, in.U, in.dtype);
    parity_unit = unit_at_parity(analytic::criterion_time(in.model, *in.cluster, in.b, 1, in.dtype));
  }

  if (args.format == Format::json) {
    nlohmann::json j = analytic::to_json(c);
    j.update({{"schema", kSchemaVersion},
              {"command", "criterion"},
              {"model", in.model.name},
              {"h", in.model.hidden},
              {"s", in.model.seq_len},
              {"b", in.b},
              {"U", in.U}});
    if (!in.no_fit.empty()) j["note"] = in.no_fit;
    if (in.verdict) {
      const search::CriterionVerdict& v = *in.verdict;
      j["verdict"] = {{"found", v.found}, {"paragraph", v.paragraph}};
      if (v.found)
        j["verdict"].update({{"plan", search::describe_plan(v.zeropp.parallel)},
                             {"iteration_s", v.zeropp.estimate.time_s.iteration},
                             {"three_d_plan", v.three_d ? nlohmann::json(search::describe_plan(v.three_d->parallel))
                                                        : nlohmann::json(nullptr)},
                             {"search_prefers_zeropp", v.search_prefers_zeropp},
                             {"bytes_criterion_agrees", v.bytes_agree},
                             {"time_criterion_agrees", v.time_agree},
                             {"followed", v.followed}});
    }
    if (t) {
      j["time"] = analytic::to_json(*t, in.cluster->name);
      j["time"]["parity_unit"] = *parity_unit;
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("criterion for {} (h={}, s={}), b={}, U={} ({})\n", in.model.name, in.model.hidden,
                           in.model.seq_len, in.b, in.U, in.origin);
  if (!in.no_fit.empty()) std::cout << "  note: " << in.no_fit << "\n";
  std::cout << fmt::format("  2*s*U*b = {:.0f}  vs  9*h = {:.0f}: {}\n", c.lhs, c.rhs,
                           c.holds ? "holds, ZeroPP moves fewer bytes than TP" : "does not hold, TP moves fewer bytes");
  std::cout << fmt::format(
      "  bytes per layer per micro-batch (16-bit, no ring factor): ZeroPP {:.4g} (per unit), "
      "{:.4g} (reduce per W); TP {:.4g}\n",
      c.zeropp_bytes_per_layer, c.zeropp_per_w_bytes_per_layer, c.tp_bytes_per_layer);
  std::cout << fmt::format("  smallest U that makes it hold: {} (per-W reduction: {})\n", c.min_unit,
                           optional_text(c.min_unit_per_w));
  if (t) {
    std::cout << fmt::format(
        "time-based on {} (TP over {} GPUs vs ZeroPP z={}, same tokens, one layer, U "
        "micro-batches of work per GPU):\n",
        in.cluster->name, t->group, t->group);
    std::cout << fmt::format(
        "  compute {:.3f} ms; TP exposed {:.3f} ms; ZeroPP gathers+reduce {:.3f} ms, exposed "
        "after prefetch {:.3f} ms: {}\n",
        1e3 * t->compute_s, 1e3 * t->tp_exposed_s, 1e3 * t->zeropp_comm_s, 1e3 * t->zeropp_exposed_s,
        t->holds ? "ZeroPP exposes less" : "TP exposes less");
    std::cout << fmt::format("  boundary: smallest U where ZeroPP exposes less: {} (equal exposure at U = {:.3g})\n",
                             optional_text(t->min_unit), *parity_unit);
  }
  if (in.verdict) std::cout << "\n" << in.verdict->paragraph << "\n";
  return 0;
}

const bool registered = register_command({
    "criterion",
    "ZeroPP vs TP communication: 2*s*U*b > 9*h, per-layer bytes, smallest U; time-based answer with a cluster",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<CriterionArgs>();
      sub.add_option("--experiment", a->experiment, "Experiment: name or JSON file (model, cluster, best b and U)");
      sub.add_option("--model", a->model, "Model: zoo name or JSON file");
      add_seq_option(sub, a->seq);
      sub.add_option("--micro-batch", a->micro_batch, "b (default 1, or the experiment's best ZeroPP plan)")
          ->check(cli_checks::integer_in(1, limits::kMicroBatch));
      sub.add_option("--unit", a->unit, "U (default 1, or the experiment's best ZeroPP plan)")
          ->check(cli_checks::integer_in(1, limits::kMicroBatches));
      sub.add_option("--cluster", a->cluster, "Cluster for the time-based answer: zoo name or JSON file");
      sub.add_flag("--cluster-time", a->cluster_time, "Time-based answer on the experiment's cluster");
      sub.add_option("--dtype", a->dtype, "bf16 | fp16 | fp32 for the time-based answer (default bf16)");
      add_format_option(sub, a->format);
      return [a] { return run(*a); };
    },
});

}  // namespace
}  // namespace zeropp::cli
