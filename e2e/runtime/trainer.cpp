#include "e2e/runtime/trainer.hpp"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "cost_model/schedule/plan_program.hpp"
#include "cost_model/search/search.hpp"
#include "cost_model/simulate/costs_from_plan.hpp"
#include "cost_model/simulate/simulator.hpp"
#include "cost_model/spec/atomic_file.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/input_files.hpp"
#include "cost_model/spec/names.hpp"
#include "e2e/comm/gather.hpp"
#include "e2e/model/flops.hpp"
#include "e2e/runtime/compare_model.hpp"
#include "e2e/runtime/executor.hpp"
#include "e2e/runtime/null_backend.hpp"
#include "e2e/runtime/oversubscription.hpp"
#include "e2e/runtime/reference_check.hpp"
#include "e2e/runtime/watchdog.hpp"

namespace zeropp::e2e {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Peak resident set of this process (VmHWM), bytes; 0 where /proc is not there.
double vm_hwm_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      std::istringstream in(line.substr(6));
      double kb = 0;
      in >> kb;
      return kb * 1024.0;
    }
  }
  return 0.0;
}

std::string default_out_path(const TrainerOptions& opt, const Plan& plan, int world) {
  const std::string stem =
      std::filesystem::path(opt.experiment.empty() ? opt.plan_path : opt.experiment).stem().string();
  return fmt::format("results/runs/{}-{}-w{}.json", stem, to_string(plan.parallel.strategy), world);
}

// A seq_len override is the training length s a HuggingFace config is read at (zeropp's --seq): the mapping's
// rules that depend on s (a sliding window, a learned position table) see it.
ModelOptions model_options(const std::vector<std::string>& overrides) {
  ModelOptions o;
  for (const std::string& item : overrides) {
    if (item.rfind("seq_len=", 0) != 0) continue;
    ModelSpec scratch;
    apply_model_override(scratch, item);  // checks the value
    o.seq_len = scratch.seq_len;
  }
  return o;
}

// The fastest feasible plan the search finds for an experiment (of one strategy when given), for its model with
// the --model-override sizes.
Plan plan_from_experiment(const std::string& name, const std::string& strategy,
                          const std::vector<std::string>& overrides) {
  Experiment experiment = load_experiment(name, model_options(overrides));
  for (const std::string& o : overrides) apply_model_override(experiment.model, o);
  if (!overrides.empty()) validate(experiment);
  const search::SearchResult result = search::run_search(experiment);
  if (strategy.empty()) {
    if (result.ranked.empty())
      throw SpecError("experiment", fmt::format("no plan of experiment {} fits in memory", name));
    return result.plan(result.ranked.front());
  }
  const Strategy wanted = strategy_from_string(strategy, "strategy");
  for (const search::StrategySummary& s : result.strategies)
    if (s.strategy == wanted && s.best) return result.plan(*s.best);
  throw SpecError("strategy", fmt::format("experiment {} has no feasible plan of strategy {}", name, strategy));
}

// Everything a run needs, built in the agreed setup phases.
struct Job {
  Plan plan;
  GptConfig gpt;
  schedule::PlanProgram program;
  std::optional<RankLayout> layout;
  std::unique_ptr<DataSource> data;
  RankGroups groups;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Executor> executor;
};

void inject_fault(const FaultInjection& fault, Job& job, int rank, int step) {
  if (fault.kind == FaultInjection::Kind::none || fault.rank != rank || fault.step != step) return;
  if (fault.kind == FaultInjection::Kind::exception)
    throw std::runtime_error(fmt::format("injected fault: exception at step {}", step));
  if (fault.kind == FaultInjection::Kind::stop) {
    std::raise(SIGSTOP);  // frozen until the job is killed; the peers' watchdogs must notice
    return;
  }
  // NaN parameters: the first chunk's local copy, so the NaN flows into every later stage's activations.
  ChunkState& cs = *job.executor->chunks().front();
  const Tensor p = cs.local_params();
  std::vector<float> nan(static_cast<std::size_t>(p.numel), std::numeric_limits<float>::quiet_NaN());
  job.backend->copy_from_host(p, nan.data());
}

struct Measured {
  std::vector<double> losses, grad_norms, step_seconds;
  int first_timed = 0, end_timed = 0;  // the steps [first, end) whose mean is the iteration time (throughput, MFU)
  int first_profiled = 0;              // the first step of the operation profile and the trace (with --trace)
  std::int64_t actions_per_iteration = 0;
  double profiled_seconds = 0;      // wall seconds of the steps the operation profile covers (after the warm-up)
  double profiled_cpu_seconds = 0;  // this thread's CPU time over those steps (computing, or polling in MPI)
};

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Which steps time the throughput and which are profiled. The first step of several is the warm-up. On the CPU
// backend the profile costs ~50 ns per operation, so it covers every later step, and so does the throughput. On
// the CUDA backend the profile waits for the GPU after each operation (cuda_backend.cpp, OpScope), which idles the
// GPU while the host launches the next one: measured on an H100, GPT-3 1.3B's profiled steps ran ~10% longer than
// the sum of their operations (results/measured/h100-80gb-hbm3, "other" in the operation profile). There, with
// three steps or more, the steps after the warm-up are split: the first half times the throughput unprofiled, the
// second half is profiled and traced.
void plan_steps(Measured& m, const Backend& backend, int steps, bool profile) {
  const int warm_up = steps > 1 ? 1 : 0;
  m.first_timed = warm_up;
  m.end_timed = steps;
  m.first_profiled = warm_up;
  if (profile && backend.name() == "cuda" && steps >= 3) {
    m.first_profiled = warm_up + (steps - warm_up + 1) / 2;
    m.end_timed = m.first_profiled;
  }
}

Measured run_steps(Communicator& world, Job& job, const TrainerOptions& opt, MeasuredTrace& trace) {
  Measured m;
  const bool profile = !opt.trace_path.empty();
  plan_steps(m, *job.backend, opt.steps, profile);
  trace.reserve(job.executor->program().size() * static_cast<std::size_t>(opt.steps));
  for (int step = 0; step < opt.steps; ++step) {
    if (profile && step == m.first_profiled) {
      job.backend->reset_stats();
      job.backend->set_profiling(true);
    }
    inject_fault(opt.fault, job, world.rank(), step);
    const double t0 = now_seconds(), cpu0 = thread_cpu_seconds();
    // Unprofiled CUDA steps are not traced: their host-side action times would be launch times.
    const bool traced = step >= m.first_profiled || m.end_timed == opt.steps;
    const IterationResult r = job.executor->run_iteration(step, traced ? &trace : nullptr);
    const double seconds = now_seconds() - t0;
    m.losses.push_back(r.loss);
    m.grad_norms.push_back(r.grad_norm);
    m.step_seconds.push_back(seconds);
    if (step >= m.first_profiled) {
      m.profiled_seconds += seconds;
      m.profiled_cpu_seconds += thread_cpu_seconds() - cpu0;
    }
    m.actions_per_iteration = r.actions;
    if (world.rank() == 0 && !opt.quiet)
      fmt::print("step {:>3}/{}: loss {:.6f}  grad norm {:.4f}  clip {:.3f}  {:.2f} ms{}\n", step + 1, opt.steps, r.loss,
                 r.grad_norm, r.clip_scale, seconds * 1e3,
                 profile && step >= m.first_profiled && m.end_timed < opt.steps ? "  (profiled)" : "");
  }
  return m;
}

// Mean of the timed steps' times (plan_steps).
double steady_seconds(const Measured& m) {
  double sum = 0;
  for (int i = m.first_timed; i < m.end_timed; ++i) sum += m.step_seconds[static_cast<std::size_t>(i)];
  return sum / static_cast<double>(m.end_timed - m.first_timed);
}

std::string mib(double bytes) { return fmt::format("{:.2f}", bytes / (1024.0 * 1024.0)); }

// The simulator's peak memory per pipeline rank for the plan (the analytic costs: memory.hpp's stored tensors per
// layer, the framework's model states, gathered parameters and buffers), beside the trainer's measured peak.
struct PredictedMemory {
  std::vector<double> per_pp_rank;
  std::string note;  // why there is none
};

PredictedMemory predicted_peaks(const Job& job) {
  PredictedMemory out;
  try {
    const simulate::SimResult sim = simulate::simulate(job.program.program, simulate::costs_from_plan(job.plan));
    for (const simulate::RankSummary& r : sim.ranks) out.per_pp_rank.push_back(r.peak_memory_bytes);
  } catch (const std::exception& e) {
    out.note = e.what();
  }
  return out;
}

// Per rank, the share of the profiled steps' wall time in each operation kind (the CPU backend times operations
// in thread CPU time, equal to wall time on a core the rank has to itself); "other" is the rest: communication,
// waiting, the runtime. On a shared or oversubscribed machine the rank is also preempted, so the GEMM share of the
// rank's own CPU time (which includes polling in MPI) is printed beside it.
nlohmann::json report_profile(const std::vector<std::vector<double>>& all) {
  nlohmann::json ranks = nlohmann::json::array();
  const auto kinds = static_cast<std::size_t>(OpKind::count);
  fmt::print("time by operation over the profiled steps (share of the step's wall time per rank):\n");
  for (std::size_t r = 0; r < all.size(); ++r) {
    const auto& v = all[r];
    const double cpu = v[kinds], wall = v[kinds + 1];
    const auto share = [](double part, double whole) { return whole > 0 ? 100 * part / whole : 0.0; };
    nlohmann::json seconds = nlohmann::json::object();
    std::string line;
    double sum = 0;
    for (std::size_t k = 0; k < kinds; ++k) {
      sum += v[k];
      if (v[k] <= 0) continue;
      const std::string name(op_kind_name(static_cast<OpKind>(k)));
      seconds[name] = v[k];
      line += fmt::format("  {} {:.1f}%", name, share(v[k], wall));
    }
    const double gemm = v[static_cast<std::size_t>(OpKind::gemm)];
    fmt::print("  rank {}:{}  other {:.1f}%  (wall {:.3f} s, thread CPU {:.3f} s; gemm {:.1f}% of the CPU time)\n", r,
               line, share(std::max(0.0, wall - sum), wall), wall, cpu, share(gemm, cpu));
    ranks.push_back({{"seconds", seconds}, {"step_wall_seconds", wall}, {"thread_cpu_seconds", cpu}});
  }
  return {{"per_rank", ranks},
          {"clock", "operations: thread CPU time (cpu backend) or GPU events (cuda); steps: wall and thread CPU time"}};
}

int report_and_check(Communicator& world, Job& job, const TrainerOptions& opt, const Measured& m, MeasuredTrace& trace,
                     double origin, Watchdog& watchdog) {
  const NamedWait gathers("the report's gathers");
  const ParallelSpec& p = job.plan.parallel;
  const RankLayout& layout = *job.layout;
  const int rank = world.rank();

  // Snapshot the counters before the report's own gathers add to them.
  const std::string comm_json = job.groups.stats_json().dump();
  const MemoryPeaks& peaks = job.executor->memory_peaks();
  const std::vector<double> memory{double(peaks.params), double(peaks.grads),       double(peaks.optimizer),
                                   double(peaks.comm),   double(peaks.activations), double(peaks.total),
                                   vm_hwm_bytes()};
  // Seconds per operation kind over the profiled steps, then those steps' wall seconds (only with --trace).
  std::vector<double> profile;
  for (int k = 0; k < static_cast<int>(OpKind::count); ++k)
    profile.push_back(job.backend->stats(static_cast<OpKind>(k)).seconds);
  profile.push_back(m.profiled_cpu_seconds);
  profile.push_back(m.profiled_seconds);
  std::vector<std::vector<double>> all_memory, all_profile;
  std::vector<std::string> all_comm;
  std::optional<std::string> oversubscribed;
  trace.rebase(origin);
  std::vector<std::vector<ActionEvent>> events;
  {
    const Watchdog::Scope watched(&watchdog, gathers);
    all_memory = all_gather_values(world, memory);
    all_comm = all_gather_strings(world, comm_json);
    events = trace.gather(world, 0);
    if (!opt.trace_path.empty()) all_profile = all_gather_values(world, profile);
    if (!opt.compare_model.empty()) oversubscribed = oversubscription(world, opt.backend == "cuda", opt.threads);
  }

  // Reference check: every rank compares what it holds; the verdict is computed from gathered numbers, so every
  // rank returns the same exit code.
  std::optional<ReferenceComparison> ref;
  int exit_code = 0;
  if (opt.check_reference >= 0) {
    ReferenceConfig rc;
    rc.model = job.gpt;
    rc.micro_batch = p.micro_batch;
    rc.microbatches = p.micro_batches * layout.pipelines();
    rc.seed = opt.seed;
    rc.optim = opt.optim;
    auto ref_backend = make_backend("cpu", 1);
    const int tp_rank = job.groups.coords.tp;
    ReferenceComparison mine =
        compare_with_reference(*ref_backend, rc, *job.data, opt.steps, *job.executor, layout.tp(), tp_rank);
    const Watchdog::Scope watched(&watchdog, gathers);
    const auto all =
        all_gather_values(world, {mine.max_abs_diff, mine.max_abs_ref, double(mine.compared), double(mine.differing)});
    const auto worst = all_gather_strings(world, mine.worst);
    ReferenceComparison total;
    total.losses = mine.losses;
    for (std::size_t r = 0; r < all.size(); ++r) {
      const auto& v = all[r];
      if (v[0] > total.max_abs_diff || total.worst.empty()) total.worst = fmt::format("{} on rank {}", worst[r], r);
      total.max_abs_diff = std::max(total.max_abs_diff, v[0]);
      total.max_abs_ref = std::max(total.max_abs_ref, v[1]);
      total.compared += static_cast<std::int64_t>(v[2]);
      total.differing += static_cast<std::int64_t>(v[3]);
    }
    ref = total;
    const bool params_ok = total.relative_error() <= opt.check_reference;
    const bool loss_fell = m.losses.size() < 2 || m.losses.back() < m.losses.front();
    if (!params_ok || !loss_fell) exit_code = 3;
    if (rank == 0) {
      fmt::print(
          "reference check: {} elements, max |p - p_ref| = {:.3e}, max |p_ref| = {:.3e}, relative {:.3e} "
          "(tolerance {:.1e}) -> {}; bitwise equal: {} ({} differ; largest at {})\n",
          total.compared, total.max_abs_diff, total.max_abs_ref, total.relative_error(), opt.check_reference,
          params_ok ? "ok" : "FAILED", total.bitwise_equal() ? "yes" : "no", total.differing, total.worst);
      fmt::print("reference losses:");
      for (double l : total.losses) fmt::print(" {:.6f}", l);
      fmt::print("\nloss {} ({:.6f} -> {:.6f})\n", loss_fell ? "falls" : "DOES NOT FALL", m.losses.front(),
                 m.losses.back());
    }
  }

  if (rank != 0) return exit_code;

  const double iteration = steady_seconds(m);
  const std::int64_t M = static_cast<std::int64_t>(p.micro_batches) * layout.pipelines();
  const double tokens = static_cast<double>(M) * p.micro_batch * job.gpt.T;
  const double flops = iteration_flops(job.gpt, p.micro_batch, M);
  const double tflops_per_rank = flops / iteration / world.size() / 1e12;
  const double actions_per_second = static_cast<double>(m.actions_per_iteration) / iteration;
  fmt::print(
      "throughput: {:.0f} tokens/s, {:.4f} model TFLOP/s per rank, {:.3f} ms per iteration, "
      "{:.0f} actions/s on rank 0 ({} actions per iteration)\n",
      tokens / iteration, tflops_per_rank, iteration * 1e3, actions_per_second, m.actions_per_iteration);
  const PredictedMemory predicted = predicted_peaks(job);
  fmt::print(
      "peak memory per rank (MiB): params / grads / optimizer / comm buffers / activations | backend total | model's "
      "prediction | VmHWM\n");
  if (!predicted.note.empty()) fmt::print("  (no prediction: {})\n", predicted.note);
  nlohmann::json memory_json = nlohmann::json::array();
  for (std::size_t r = 0; r < all_memory.size(); ++r) {
    const auto& v = all_memory[r];
    const int pp_rank = layout.coords(static_cast<int>(r)).pp;
    const double model = predicted.per_pp_rank.empty() ? -1 : predicted.per_pp_rank[static_cast<std::size_t>(pp_rank)];
    fmt::print("  rank {}: {} / {} / {} / {} / {} | {} | {} | {}\n", r, mib(v[0]), mib(v[1]), mib(v[2]), mib(v[3]),
               mib(v[4]), mib(v[5]),
               model < 0 ? "-" : fmt::format("{} ({:+.1f}%)", mib(model), 100 * (model - v[5]) / v[5]), mib(v[6]));
    nlohmann::json row = {{"params_bytes", v[0]},      {"grads_bytes", v[1]},      {"optimizer_bytes", v[2]},
                          {"comm_buffer_bytes", v[3]}, {"activation_bytes", v[4]}, {"backend_peak_bytes", v[5]},
                          {"vm_hwm_bytes", v[6]}};
    if (model >= 0) row["predicted_peak_bytes"] = model;
    memory_json.push_back(row);
  }
  nlohmann::json profile_json;
  if (!all_profile.empty()) profile_json = report_profile(all_profile);
  // Collective totals over all ranks, per group and kind.
  nlohmann::json per_rank = nlohmann::json::array(), totals = nlohmann::json::object();
  for (const std::string& s : all_comm) {
    const nlohmann::json j = nlohmann::json::parse(s);
    per_rank.push_back(j);
    for (const auto& [group, kinds] : j.items())
      for (const auto& [kind, c] : kinds.items()) {
        nlohmann::json& t = totals[group][kind];
        if (t.is_null()) t = {{"calls", std::int64_t{0}}, {"bytes", std::int64_t{0}}};
        t["calls"] = t["calls"].get<std::int64_t>() + c["calls"].get<std::int64_t>();
        t["bytes"] = t["bytes"].get<std::int64_t>() + c["bytes"].get<std::int64_t>();
      }
  }
  fmt::print("communication over {} step(s), all ranks (calls, bytes = full buffer as in nccl-tests):\n", opt.steps);
  for (const auto& [group, kinds] : totals.items())
    for (const auto& [kind, c] : kinds.items())
      fmt::print("  {:<6} {:<15} {:>8} calls {:>14} bytes\n", group, kind, c["calls"].get<std::int64_t>(),
                 c["bytes"].get<std::int64_t>());

  nlohmann::json result = {
      {"schema", 1},
      {"kind", "zeropp-train"},
      {"plan_file", opt.plan_path},
      {"experiment", opt.experiment},
      {"plan", {{"model", to_json(job.plan.model)}, {"cluster", to_json(job.plan.cluster)}, {"parallel", to_json(p)}}},
      {"world", world.size()},
      {"backend", job.backend->name()},
      {"data", opt.data},
      {"steps", opt.steps},
      {"seed", opt.seed},
      {"losses", m.losses},
      {"grad_norms", m.grad_norms},
      {"step_seconds", m.step_seconds},
      {"timed_steps", {m.first_timed, m.end_timed}},  // [first, end), 0-based: iteration_seconds is their mean
      {"profiled_from_step", m.first_profiled},       // with --trace: the operation profile and trace cover these
      {"iteration_seconds", iteration},
      {"tokens_per_iteration", tokens},
      {"tokens_per_second", tokens / iteration},
      {"model_flops_per_iteration", flops},
      {"model_tflops_per_rank", tflops_per_rank},
      {"actions_per_iteration_rank0", m.actions_per_iteration},
      {"actions_per_second_rank0", actions_per_second},
      {"memory_per_rank", memory_json},
      {"memory_model", predicted.note.empty() ? "simulator, costs_from_plan (cost_model/simulate)" : predicted.note},
      {"communication", {{"steps", opt.steps}, {"total", totals}, {"per_rank", per_rank}}},
  };
  if (ref)
    result["reference_check"] = {{"tolerance", opt.check_reference},      {"relative_error", ref->relative_error()},
                                 {"max_abs_diff", ref->max_abs_diff},     {"elements", ref->compared},
                                 {"bitwise_equal", ref->bitwise_equal()}, {"largest_difference_at", ref->worst},
                                 {"reference_losses", ref->losses}};
  if (!opt.compare_model.empty()) {
    std::optional<simulate::ActionCosts> costs;
    if (opt.compare_model == "analytic") costs = simulate::costs_from_plan(job.plan);
    ModelComparison cmp = compare_with_model(job.program.program, layout, events, m.first_profiled, iteration,
                                             costs, "analytic (plan's cluster)");
    if (oversubscribed) cmp.oversubscribed = *oversubscribed;
    fmt::print("{}", format_table(cmp));
    result["model_comparison"] = to_json(cmp);
  }
  if (!profile_json.is_null()) result["operation_profile"] = profile_json;
  if (!opt.trace_path.empty()) {
    write_file_atomically(opt.trace_path, chrome_trace(events).dump(), "--trace", ParentDirs::must_exist);
    result["trace_file"] = opt.trace_path;
    fmt::print("trace: {}\n", opt.trace_path);
  }
  const std::string out = opt.out_path.empty() ? default_out_path(opt, job.plan, world.size()) : opt.out_path;
  // --out names a file in an existing folder (a typo must not create one); the default results/runs/ is created.
  write_file_atomically(out, result.dump(2) + "\n", "--out",
                        opt.out_path.empty() ? ParentDirs::create : ParentDirs::must_exist);
  fmt::print("result: {}\n", out);
  return exit_code;
}

}  // namespace

int train(Communicator& world, const TrainerOptions& opt) {
  const InputFiles inputs;  // the plan, the configs and the token file this run reads: no output may replace one
  Watchdog watchdog(world, opt.comm_timeout);
  Job job;
  try {
    run_agreed(
        world, "config",
        [&] {
          if (opt.steps < 1) throw SpecError("steps", fmt::format("--steps={} must be >= 1", opt.steps));
          if (!opt.compare_model.empty() && opt.compare_model != "measured" && opt.compare_model != "analytic")
            throw SpecError("compare-model", fmt::format("'{}' must be 'measured' or 'analytic'", opt.compare_model));
          if (opt.experiment.empty()) {
            job.plan = load_plan(opt.plan_path, model_options(opt.model_overrides));
            for (const std::string& o : opt.model_overrides) apply_model_override(job.plan.model, o);
            if (!opt.model_overrides.empty()) validate(job.plan);
          } else {
            job.plan = plan_from_experiment(opt.experiment, opt.strategy, opt.model_overrides);
          }
          // The trainer's one list (gpt_config.hpp): the model it computes and the plan keys it executes, or a
          // one-line refusal naming the key.
          job.gpt = gpt_config_from(job.plan.model);
          check_plan_runs(job.plan, opt.backend != "cuda");
          state_execution(job.plan);
          job.gpt.fp8 = fp8_training_of(job.plan.parallel);
          job.gpt.fp8.reduce_amax = !opt.fp8_local_amax;
          const ParallelSpec& p = job.plan.parallel;
          if (p.world() != world.size())
            throw SpecError("parallel",
                            fmt::format("the plan needs tp*z*cp*pp*dp = {}*{}*{}*{}*{} = {} ranks but the job has {} "
                                        "(launch with mpirun -np {})",
                                        p.tp, p.z, p.cp, p.pp, p.dp, p.world(), world.size(), p.world()));
          job.program = schedule::build_plan_program(job.plan);
          job.layout.emplace(RankLayout::for_plan(p));
          job.data = make_data_source(opt.data, job.gpt.V, opt.seed);
          if (job.data->vocab() > job.gpt.V)
            throw SpecError(
                "data", fmt::format("token file vocabulary {} exceeds model.vocab={}", job.data->vocab(), job.gpt.V));
          // Outputs the user named: in an existing folder, of a kind that can be written, none of the inputs read
          // above (spec/atomic_file.hpp); found now, not after the run.
          if (!opt.out_path.empty()) check_output_path(opt.out_path, "--out");
          if (!opt.trace_path.empty()) check_output_path(opt.trace_path, "--trace");
          if (opt.fault.rank >= world.size())
            throw SpecError("inject-fault",
                            fmt::format("rank {} outside the world of {}", opt.fault.rank, world.size()));
          if (const int stages = job.program.program.stages(); opt.skip_grad_sync_stage >= stages)
            throw SpecError("skip-grad-sync",
                            fmt::format("stage {} outside the plan's {} stages", opt.skip_grad_sync_stage, stages));
        },
        &watchdog);
  } catch (const SetupFailed&) {
    return 2;
  }

  {
    const NamedWait splitting("the split of the rank groups");
    const Watchdog::Scope watched(&watchdog, splitting);
    job.groups = RankGroups::split(world, *job.layout);
  }
  try {
    run_agreed(
        world, "setup",
        [&] {
          if (opt.backend == "null")
            job.backend = std::make_unique<NullBackend>();
          else
            job.backend = make_backend(opt.backend, opt.threads);
          ExecutorOptions eo;
          eo.micro_batch = job.plan.parallel.micro_batch;
          eo.sequence_parallel = job.plan.parallel.sequence_parallel;
          eo.ulysses = job.plan.parallel.cp_kind == CpKind::ulysses;
          eo.optim = opt.optim;
          eo.seed = opt.seed;
          eo.watchdog = &watchdog;
          eo.skip_grad_sync_stage = opt.skip_grad_sync_stage;
          job.executor =
              std::make_unique<Executor>(*job.backend, job.groups, *job.layout, job.program, job.gpt, *job.data, eo);
        },
        &watchdog);
  } catch (const SetupFailed&) {
    return 2;
  }

  try {
    const ParallelSpec& p = job.plan.parallel;
    if (world.rank() == 0)
      fmt::print(
          "zeropp-train: {} on {} rank(s): strategy {} schedule {} tp={} z={} cp={} pp={} dp={} v={} b={} B={} U={} "
          "grad_reduce={}, model L={} h={} a={} s={} V={} ffn={}: {}, {} actions per iteration on rank 0\n",
          opt.experiment.empty() ? opt.plan_path : "experiment " + opt.experiment, world.size(), to_string(p.strategy),
          to_string(p.schedule), p.tp, p.z, p.cp, p.pp, p.dp, p.v, p.micro_batch, p.micro_batches,
          job.program.program.unit,
          to_string(p.grad_reduce), job.gpt.L, job.gpt.C, job.gpt.NH, job.gpt.T, job.gpt.V, job.gpt.F,
          describe(job.gpt), job.executor->program().size());
    {
      const NamedWait start("the barrier before step 0");
      const Watchdog::Scope watched(&watchdog, start);
      world.barrier();
    }
    job.groups.reset_stats();
    job.executor->reset_memory_peaks();
    MeasuredTrace trace;
    const double origin = now_seconds();
    const Measured m = run_steps(world, job, opt, trace);
    return report_and_check(world, job, opt, m, trace, origin, watchdog);
  } catch (const std::exception& e) {
    abort_job(world, describe(e));
  }
}

}  // namespace zeropp::e2e
