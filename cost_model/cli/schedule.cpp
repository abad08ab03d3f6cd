// `zeropp schedule --schedule NAME --pp P [--chunks V] --micro-batches B [--unit U] [--costs F=1,B=1,W=1] ...`:
// generates a schedule's per-rank programs, lowers them (p2p, ZeRO-3 gathers per --shard), simulates them with
// uniform per-stage costs, and prints the programs, an ASCII grid, the makespan and the bubble fraction
// (or JSON with --format json); --trace FILE writes a Chrome trace for Perfetto.
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cost_model/cli/command.hpp"
#include "cost_model/options/cli_checks.hpp"
#include "cost_model/schedule/generate.hpp"
#include "cost_model/simulate/ascii_grid.hpp"
#include "cost_model/simulate/costs.hpp"
#include "cost_model/simulate/simulator.hpp"
#include "cost_model/simulate/trace.hpp"
#include "cost_model/spec/atomic_file.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/limits.hpp"
#include "cost_model/spec/names.hpp"

namespace zeropp::cli {
namespace {

enum class Backward { automatic, split, fused };

struct ScheduleArgs {
  std::string schedule;
  int pp = 0;
  int chunks = 1;
  int microbatches = 0;
  int unit = 0;
  std::string costs = "F=1,B=1,W=1";
  schedule::ShardPolicy shard = schedule::ShardPolicy::none;
  std::string grad_reduce = "per_unit";
  Backward backward = Backward::automatic;
  bool recompute = false;
  bool compute_only = false;
  std::string trace;
  int width = 160;
  Format format = Format::table;
};

// The zero-bubble schedules and ZeroPP exist because B and W are separate; the others are drawn fused, as
// their closed forms are usually written.
bool split_by_default(ScheduleKind kind) {
  return kind == ScheduleKind::zb_h1 || kind == ScheduleKind::zb_h2 || kind == ScheduleKind::zeropp;
}

nlohmann::json comm_json(const simulate::CommBytes& c) {
  return {{"pp", c.pp}, {"zero", c.zero}, {"dp", c.dp}, {"total", c.total()}};
}

int run_schedule(const ScheduleArgs& args) {
  schedule::ScheduleConfig cfg;
  cfg.kind = schedule_from_string(args.schedule, "--schedule");
  cfg.pp = args.pp;
  cfg.v = args.chunks;
  cfg.microbatches = args.microbatches;
  cfg.unit = args.unit;
  cfg.split_backward =
      args.backward == Backward::automatic ? split_by_default(cfg.kind) : args.backward == Backward::split;
  cfg.recompute = args.recompute;

  if (!args.trace.empty()) check_output_path(args.trace, "--trace");  // before the work, not after
  schedule::Program program;
  try {
    program = schedule::generate(cfg);
    if (!args.compute_only) {
      schedule::LoweringOptions lowering;
      lowering.shard = args.shard;
      lowering.grad_reduce = grad_reduce_from_string(args.grad_reduce, "--grad-reduce");
      program = schedule::lower(program, lowering);
    }
  } catch (const std::invalid_argument& e) {
    throw SpecError("schedule", e.what());
  }
  const simulate::ActionCosts costs = simulate::parse_uniform_costs(args.costs, cfg.pp, cfg.v);
  simulate::SimOptions options;
  options.memory_timeline = !args.trace.empty();
  const simulate::SimResult result = simulate::simulate(program, costs, options);
  if (!args.trace.empty()) simulate::write_chrome_trace(args.trace, program, result);

  if (args.format == Format::json) {
    nlohmann::json ranks = nlohmann::json::array();
    for (const simulate::RankSummary& r : result.ranks) {
      ranks.push_back({{"compute", r.compute},
                       {"exposed_comm", r.exposed_comm},
                       {"bubble", r.bubble},
                       {"peak_memory_bytes", r.peak_memory_bytes},
                       {"peak_activation_microbatches", r.peak_activation_microbatches},
                       {"comm_bytes", comm_json(r.comm_bytes)}});
    }
    nlohmann::json programs = nlohmann::json::array();
    for (const schedule::RankProgram& rank : program.ranks) {
      std::string line;
      for (const schedule::Action& a : rank) {
        if (!line.empty()) line += ' ';
        line += schedule::to_string(a);
      }
      programs.push_back(line);
    }
    nlohmann::json out = {{"schema", kSchemaVersion},
                          {"schedule", to_string(cfg.kind)},
                          {"pp", cfg.pp},
                          {"chunks", cfg.v},
                          {"micro_batches", cfg.microbatches},
                          {"unit", program.unit},
                          {"split_backward", cfg.split_backward},
                          {"actions", result.actions()},
                          {"makespan", result.makespan},
                          {"bubble_fraction", result.bubble_fraction()},
                          {"peak_activation_microbatches", result.peak_activation_microbatches()},
                          {"comm_bytes", comm_json(result.comm_bytes)},
                          {"ranks", ranks},
                          {"programs", programs}};
    if (!args.trace.empty()) out["trace"] = args.trace;
    std::cout << out.dump(2) << "\n";
    return 0;
  }

  std::cout << fmt::format(
      "schedule {}  pp={} chunks={} micro-batches={}{}  backward {}{}\n\n", to_string(cfg.kind), cfg.pp, cfg.v,
      cfg.microbatches, program.unit > 0 ? fmt::format(" unit={}", program.unit) : std::string(),
      cfg.split_backward ? "split (B, W)" : "fused (BW)", args.compute_only ? "  (compute only)" : "");
  std::cout << "programs (one rank per line):\n" << schedule::format_program(program) << "\n";
  simulate::GridOptions grid;
  grid.max_width = args.width;
  std::cout << "timeline (F forward, B backward, W weight gradient, R recompute; odd chunks lower case):\n"
            << simulate::ascii_grid(program, result, grid) << "\n";
  std::cout << fmt::format("{:<6} {:>12} {:>12} {:>12} {:>10} {:>14}\n", "rank", "compute s", "exposed s", "bubble s",
                           "peak mbs", "peak memory");
  for (int r = 0; r < result.pp; ++r) {
    const simulate::RankSummary& s = result.ranks[r];
    std::cout << fmt::format("{:<6} {:>12.6g} {:>12.6g} {:>12.6g} {:>10} {:>14.6g}\n", r, s.compute, s.exposed_comm,
                             s.bubble, s.peak_activation_microbatches, s.peak_memory_bytes);
  }
  std::cout << fmt::format("\nmakespan        {:.6g} s\nbubble fraction {:.4f} (idle share of ranks x makespan)\n",
                           result.makespan, result.bubble_fraction());
  std::cout << fmt::format("comm bytes      pp {:.6g}  zero {:.6g}  dp {:.6g}\n", result.comm_bytes.pp,
                           result.comm_bytes.zero, result.comm_bytes.dp);
  if (!args.trace.empty()) std::cout << "trace           " << args.trace << " (open in https://ui.perfetto.dev)\n";
  return 0;
}

const bool registered = register_command(Command{
    "schedule", "Generate, lower and simulate a pipeline schedule; print programs, grid, makespan and bubble",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<ScheduleArgs>();
      sub.add_option("--schedule", args->schedule, "gpipe, 1f1b, interleaved, bfs, zb_h1, zb_h2 or zeropp")->required();
      sub.add_option("--pp", args->pp, "Pipeline ranks p")->required()->check(cli_checks::integer_in(1, limits::kGpus));
      sub.add_option("--chunks", args->chunks, "Model chunks per rank v (interleaved, bfs, zeropp)")
          ->check(cli_checks::integer_in(1, limits::kLayers));
      sub.add_option("--micro-batches", args->microbatches, "Micro-batches per iteration B")
          ->required()
          ->check(cli_checks::integer_in(1, limits::kMicroBatches));
      sub.add_option("--unit", args->unit, "ZeroPP scheduling unit U (0: one unit of all micro-batches)")
          ->check(cli_checks::integer_in(0, limits::kMicroBatches));
      sub.add_option("--costs", args->costs,
                     "Seconds per stage and micro-batch: F=..,B=..,W=..[,BW=..,R=..,P2P=..,UNSHARD=..,REDUCE=..,"
                     "DP=..,OPT=..]");
      sub.add_option("--shard", args->shard, "ZeRO-3 gathers: none, per_microbatch, per_unit, per_iteration")
          ->transform(CLI::CheckedTransformer(
              std::map<std::string, schedule::ShardPolicy>{{"none", schedule::ShardPolicy::none},
                                                           {"per_microbatch", schedule::ShardPolicy::per_microbatch},
                                                           {"per_unit", schedule::ShardPolicy::per_unit},
                                                           {"per_iteration", schedule::ShardPolicy::per_iteration}},
              CLI::ignore_case));
      sub.add_option("--grad-reduce", args->grad_reduce, "Sharded gradient reduction: per_unit or per_w");
      sub.add_option("--backward", args->backward, "auto (split for zb_h1, zb_h2, zeropp), split or fused")
          ->transform(CLI::CheckedTransformer(
              std::map<std::string, Backward>{
                  {"auto", Backward::automatic}, {"split", Backward::split}, {"fused", Backward::fused}},
              CLI::ignore_case));
      sub.add_flag("--recompute", args->recompute, "Recompute activations before B (the schedule's rule)");
      sub.add_flag("--compute-only", args->compute_only, "Simulate the generated program without lowering");
      sub.add_option("--trace", args->trace, "Write a Chrome trace JSON (Perfetto) to this file")
          ->check(cli_checks::output_path());
      sub.add_option("--width", args->width, "Grid width in characters")->check(cli_checks::integer_in(20, 100000));
      add_format_option(sub, args->format);
      return [args] { return run_schedule(*args); };
    }});

}  // namespace
}  // namespace zeropp::cli
