// `zeropp criterion`: does ZeroPP move fewer bytes than tensor parallelism (2 s U b > 3P/(4h), 9h for GPT's layer)?
// Per-layer bytes of both for the model's own layer, the smallest U that makes it hold, and with a cluster the
// time-based answer (bandwidths and overlap, TP under the rule of the plan it stands for) and its boundary;
// --map DIR draws the model's criterion map on the cluster (search/criterion_map.hpp, plots/criterion.py).
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
#include "cost_model/cli/plot_runner.hpp"
#include "cost_model/options/cli_checks.hpp"
#include "cost_model/search/compare.hpp"
#include "cost_model/search/criterion_map.hpp"
#include "cost_model/search/criterion_verdict.hpp"
#include "cost_model/search/describe.hpp"
#include "cost_model/search/search.hpp"
#include "cost_model/spec/atomic_file.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/limits.hpp"
#include "cost_model/spec/names.hpp"

namespace zeropp::cli {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct CriterionArgs {
  std::string experiment, model, cluster, dtype, map;
  std::optional<int> micro_batch, unit;
  int seq = 0;  // --seq; 0: the model file's
  bool cluster_time = false;
  bool sequence_parallel = false, tp_comm_overlap = false;  // the TP rule without an experiment
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
  analytic::CriterionTpRule tp_rule;                // the TP side of the time-based answer
  std::string tp_rule_origin;
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
      const search::SearchOptions options = search::search_options(search::select_rows(ex, {}));
      const search::SearchResult result = search::run_search(ex, options);
      in.verdict = search::criterion_verdict(result);
      search::judge_fp8(ex, options, *in.verdict);  // whether FP8 changes the answer (a second search)
      if (in.verdict->found) {
        const ParallelSpec& p = in.verdict->zeropp.parallel;
        in.b = p.micro_batch;
        in.U = p.unit;
        in.origin = fmt::format("best ZeroPP plan of experiment \"{}\", {}", ex.name, to_string(p.strategy));
      } else {
        // No ZeroPP plan fits: b and U of the zeropp_b plan closest to fitting, not called a best plan.
        const search::GroupBest* s = result.family("zeropp_b");
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
  // TP's rule: the best 3D plan's with an experiment's search, else the flags.
  if (in.verdict && in.verdict->found) {
    if (a.sequence_parallel || a.tp_comm_overlap)
      throw SpecError("tp-comm-overlap",
                      "--experiment takes the TP rule of its best 3D plan; do not combine it with "
                      "--sequence-parallel or --tp-comm-overlap");
    in.tp_rule = in.verdict->tp_rule;
    in.tp_rule_origin = in.verdict->three_d ? "the rule of the experiment's best 3D plan"
                                            : "the best the plan space has, as no 3D plan fits";
  } else {
    in.tp_rule = {.sequence_parallel = a.sequence_parallel || a.tp_comm_overlap, .tp_comm_overlap = a.tp_comm_overlap};
    in.tp_rule_origin =
        a.tp_comm_overlap || a.sequence_parallel ? "given" : "the default (--tp-comm-overlap to grant it)";
  }
  validate(in.model);
  return in;
}

std::string optional_text(const std::optional<long long>& v) { return v ? std::to_string(*v) : "none"; }

// `zeropp criterion --help`: where the inequality comes from (docs/criterion.md has it in full).
constexpr const char* kDerivation = R"(
Derivation (per transformer layer, per GPU, per micro-batch; elements of 2 bytes; ring factors (n-1)/n left out):
  P = the layer's parameters: 2h^2 + 2hq attention (q = kv_heads * head_dim: GQA), 2hf (GELU) or 3hf (SwiGLU)
      MLP, biases and norms. GPT with f = 4h: 12h^2 + 13h; Llama-3 70B 12.75h^2 + 2h, 8B 13h^2 + 2h.
  ZeroPP: per unit of U micro-batches, gather P for the forward, gather P for the backward, reduce-scatter P
      gradients: 3P/U per micro-batch.
  TP (Megatron): the layer's b*s*h output all-reduced after attention and after the MLP, forward and backward:
      4 all-reduces, each moving 2x its buffer: 8sbh per micro-batch (GQA, SwiGLU do not change it: the
      all-reduced tensors are h wide).
  ZeroPP moves fewer bytes  <=>  3P/U < 8sbh  <=>  2sUb > 3P/(4h).
  With P = 12h^2, in bytes: 72h^2/U < 16sbh  <=>  36h^2 < 8sbhU  <=>  2sUb > 9h (the paper's form).
  Reduce-scatter inside every W (the authors' code): 2P/U + P < 8sbh.
Time-based: TP over the node's g GPUs vs ZeroPP z = g on the same tokens; TP's collectives priced by the time model
under the TP rule of the plan it stands for (--tp-comm-overlap hides what its GEMM covers), ZeroPP's 2 gathers + 1
reduce-scatter hidden behind the compute of the U micro-batches of the previous layer, the rest exposed.)";

// --map DIR: the model's criterion map on the cluster as criterion_map.json in DIR, drawn there as
// criterion_map.png by plots/criterion.py. Returns the line to print.
std::string draw_map(const Inputs& in, const std::string& dir) {
  if (!in.cluster)
    throw SpecError("map", "--map needs a cluster: give --cluster C (or --experiment with --cluster-time)");
  check_output_folder(dir + "/criterion_map.json", "--map");
  const search::CriterionMap map = search::criterion_map(in.model, *in.cluster, in.b, in.dtype, in.tp_rule);
  const std::filesystem::path json = std::filesystem::path(dir) / "criterion_map.json";
  write_file_atomically(json, search::to_json(map).dump(1) + "\n", "--map", ParentDirs::must_exist);
  const PlotRun run = run_plot_script("criterion.py", {"--map", json.string(), "--out", dir});
  if (!run.drawn) return fmt::format("criterion map data written to {}; not drawn: {}", json.string(), run.message);
  return fmt::format("criterion map drawn: {}/criterion_map.png (data: {})", dir, json.string());
}

int run(const CriterionArgs& args) {
  const Inputs in = resolve(args);
  const analytic::Criterion c = analytic::criterion(analytic::criterion_input(in.model, in.b, in.U));
  std::optional<analytic::CriterionTime> t;
  std::optional<double> parity_unit;
  if (in.cluster) {
    t = analytic::criterion_time(in.model, *in.cluster, in.b, in.U, in.dtype, in.tp_rule);
    parity_unit =
        analytic::unit_at_parity(analytic::criterion_time(in.model, *in.cluster, in.b, 1, in.dtype, in.tp_rule));
  }
  const std::string map_line = args.map.empty() ? "" : draw_map(in, args.map);

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
      // Context parallelism: whether the space has it and whether it changes ZeroPP vs 3D.
      j["verdict"]["cp"] = {
          {"in_space", v.cp_in_space},
          {"changes_answer", v.cp_in_space ? nlohmann::json(v.cp_changes_answer) : nlohmann::json(false)},
          {"best_cp_row", v.best_cp ? nlohmann::json(v.best_cp_row) : nlohmann::json(nullptr)},
          {"best_cp_plan",
           v.best_cp ? nlohmann::json(search::describe_plan(v.best_cp->parallel)) : nlohmann::json(nullptr)},
          {"sentence", v.cp_sentence}};
      // FP8 (spec/fp8.hpp): whether the cluster runs it and whether the other precision's search changes the answer.
      j["verdict"]["fp8"] = {
          {"in_question", v.fp8_in_question},
          {"changes_answer", v.fp8_changes_answer},
          {"zeropp_plan", v.other_zeropp ? nlohmann::json(search::describe_plan(v.other_zeropp->parallel))
                                         : nlohmann::json(nullptr)},
          {"three_d_plan", v.other_three_d ? nlohmann::json(search::describe_plan(v.other_three_d->parallel))
                                           : nlohmann::json(nullptr)},
          {"sentence", v.fp8_sentence}};
    }
    if (t) {
      j["time"] = analytic::to_json(*t, in.cluster->name);
      j["time"]["parity_unit"] = *parity_unit;
      j["time"]["tp_rule"] = {{"sequence_parallel", in.tp_rule.sequence_parallel},
                              {"tp_comm_overlap", in.tp_rule.tp_comm_overlap},
                              {"origin", in.tp_rule_origin}};
    }
    if (!map_line.empty()) j["map"] = map_line;
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("criterion for {} (h={}, s={}), b={}, U={} ({})\n", in.model.name, in.model.hidden,
                           in.model.seq_len, in.b, in.U, in.origin);
  if (!in.no_fit.empty()) std::cout << "  note: " << in.no_fit << "\n";
  const double h = in.model.hidden;
  std::cout << fmt::format(
      "  layer parameters P = {:.0f} = {:.4g} h^2 (the model's own layer; GPT's is 12 h^2 + 13 h): ZeroPP moves 3P/U, "
      "TP 8sbh elements per layer per micro-batch\n",
      c.layer_params, c.layer_params / (h * h));
  std::cout << fmt::format("  2*s*U*b = {:.0f}  vs  3P/(4h) = {:.0f} (9*h = {:.0f} for GPT's layer): {}\n", c.lhs,
                           c.rhs, c.rhs_gpt,
                           c.holds ? "holds, ZeroPP moves fewer bytes than TP" : "does not hold, TP moves fewer bytes");
  std::cout << fmt::format(
      "  bytes per layer per micro-batch (16-bit, no ring factor): ZeroPP {:.4g} (per unit), "
      "{:.4g} (reduce per W); TP {:.4g}\n",
      c.zeropp_bytes_per_layer, c.zeropp_per_w_bytes_per_layer, c.tp_bytes_per_layer);
  std::cout << fmt::format("  smallest U that makes it hold: {} (per-W reduction: {})\n", c.min_unit,
                           optional_text(c.min_unit_per_w));
  if (t) {
    std::cout << fmt::format(
        "time-based on {} (TP over {} GPUs, {}: {}, vs ZeroPP z={}, same tokens, one layer, U "
        "micro-batches of work per GPU):\n",
        in.cluster->name, t->group, search::tp_rule_text(in.tp_rule), in.tp_rule_origin, t->group);
    std::cout << fmt::format(
        "  compute {:.3f} ms; TP exposed {:.3f} ms; ZeroPP gathers+reduce {:.3f} ms, exposed "
        "after prefetch {:.3f} ms: {}\n",
        1e3 * t->compute_s, 1e3 * t->tp_exposed_s, 1e3 * t->zeropp_comm_s, 1e3 * t->zeropp_exposed_s,
        t->holds ? "ZeroPP exposes less" : "TP exposes less");
    std::cout << fmt::format("  boundary: smallest U where ZeroPP exposes less: {} (equal exposure at U = {:.3g})\n",
                             optional_text(t->min_unit), *parity_unit);
  }
  if (in.verdict) std::cout << "\n" << in.verdict->paragraph << "\n";
  if (!map_line.empty()) std::cout << map_line << "\n";
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
      sub.add_flag("--sequence-parallel", a->sequence_parallel,
                   "Time-based answer: TP with sequence parallelism (without --experiment; default off)");
      sub.add_flag("--tp-comm-overlap", a->tp_comm_overlap,
                   "Time-based answer: TP's communication overlapped with its GEMMs, as Megatron's --tp-comm-overlap "
                   "(implies sequence parallelism; without --experiment, whose best 3D plan sets it)");
      sub.add_option("--map", a->map,
                     "Draw the model's criterion map on the cluster into this existing folder (criterion_map.png and "
                     "its data criterion_map.json)");
      sub.footer(kDerivation);
      add_format_option(sub, a->format);
      return [a] { return run(*a); };
    },
});

}  // namespace
}  // namespace zeropp::cli
