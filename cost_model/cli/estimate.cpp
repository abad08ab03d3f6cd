// `zeropp estimate`: one plan: communication bytes by category, memory per GPU, iteration time (compute,
// exposed communication, bubble), throughput, and whether it fits in memory.
// Time, bubble, exposed communication, peak memory and the pp/zero bytes come from the schedule simulator
// (search/simulated_estimate.hpp; pure ZeRO-3 layer by layer); the closed forms are printed beside them as a
// cross-check. --closed-form uses the closed forms only.
//   zeropp estimate --plan plan.json
//   zeropp estimate --model gpt3-13b --cluster dgx-a100-80gb --strategy zeropp_b --pp 4 --z 8 --dp 2
//                   --micro-batch 1 --global-batch 256 --unit 8   (one line)
// Flags take a plan file's defaults: U = B (one unit) unless --unit, the ZeRO stage and schedule by strategy.
// A plan that does not fit is reported (feasible: false, over_by_bytes), not refused.
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cost_model/analytic/estimate.hpp"
#include "cost_model/analytic/flops.hpp"
#include "cost_model/cli/command.hpp"
#include "cost_model/cli/experiment_args.hpp"
#include "cost_model/cli/run_cost_args.hpp"
#include "cost_model/options/cli_checks.hpp"
#include "cost_model/search/simulated_estimate.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/framework.hpp"
#include "cost_model/spec/limits.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/stage_layout.hpp"
#include "cost_model/spec/attention_kernel.hpp"
#include "cost_model/spec/fp8.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::cli {
namespace {

struct EstimateArgs {
  std::string plan_file, model, cluster;
  std::string strategy, schedule, recompute, grad_reduce, dtype, framework, tp_comm_overlap, fp8_recipe;
  std::string attention_kernel;
  std::optional<bool> fp8_all_gather;
  std::optional<int> tp, pp, dp, z, zero_stage, v, micro_batch, micro_batches, unit, gpus;
  std::optional<int> first_stage_layers, last_stage_layers, cp, dp_shard;
  std::string cp_kind;
  std::optional<long long> global_batch;
  std::optional<bool> sequence_parallel;
  int seq = 0;  // --seq; 0: the model file's
  bool no_dp_overlap = false;
  bool closed_form = false;
  RunCostArgs run_cost;
  Format format = Format::table;
};

Plan build_plan(const EstimateArgs& a) {
  Plan plan;
  const bool from_file = !a.plan_file.empty();
  if (from_file) {
    if (!a.model.empty() || !a.cluster.empty())
      throw SpecError("plan", "--plan gives the model and the cluster; do not combine it with --model/--cluster");
    plan = load_plan(a.plan_file, {.seq_len = a.seq});
  } else {
    if (a.model.empty() || a.cluster.empty())
      throw SpecError("plan", "give --plan FILE, or --model and --cluster (zoo names or JSON files)");
    plan.model = load_model(a.model, {.seq_len = a.seq});
    plan.cluster = load_cluster(a.cluster);
  }
  ParallelSpec& p = plan.parallel;
  if (!a.strategy.empty()) p.strategy = strategy_from_string(a.strategy, "--strategy");
  if (!from_file || !a.strategy.empty()) p.zero_stage = traits(p.strategy).default_zero_stage;
  if (a.tp) p.tp = *a.tp;
  if (a.pp) p.pp = *a.pp;
  if (a.z) p.z = *a.z;
  if (a.v) p.v = *a.v;
  if (a.zero_stage) p.zero_stage = *a.zero_stage;
  if (a.first_stage_layers) p.first_stage_layers = *a.first_stage_layers;
  if (a.last_stage_layers) p.last_stage_layers = *a.last_stage_layers;
  if (a.dp) p.dp = *a.dp;
  if (a.cp) p.cp = *a.cp;
  if (!a.cp_kind.empty()) p.cp_kind = cp_kind_from_string(a.cp_kind, "--cp-kind");
  if (a.gpus) {
    // inner <= 2^24 and dp <= 2^24 (option check or plan validation): inner * dp cannot overflow. cp counts in
    // the product (and the messages) only when the plan has a CP group.
    const bool with_cp = p.cp > 1;
    const std::string label = with_cp ? "tp*z*cp*pp" : "tp*z*pp";
    const long long inner = with_cp ? bounded_product({p.tp, p.z, p.cp, p.pp}, limits::kGpus, "--gpus", label, "GPUs")
                                    : bounded_product({p.tp, p.z, p.pp}, limits::kGpus, "--gpus", label, "GPUs");
    const std::string factors = with_cp ? fmt::format("{}*{}*{}*{}", p.tp, p.z, p.cp, p.pp)
                                        : fmt::format("{}*{}*{}", p.tp, p.z, p.pp);
    if (a.dp && inner * p.dp != *a.gpus)
      throw SpecError("--gpus", fmt::format("--gpus={} disagrees with {}*dp={}*{}={} (give --gpus or --dp, or values "
                                            "that agree)",
                                            *a.gpus, label, factors, p.dp, inner * p.dp));
    if (*a.gpus % inner != 0)
      throw SpecError("--gpus", fmt::format("--gpus={} is not a multiple of {}={}", *a.gpus, label, inner));
    p.dp = static_cast<int>(*a.gpus / inner);
  }
  if (a.dp_shard) p.dp_shard = *a.dp_shard;  // after --gpus: its rule is against the dp it sets
  if (!a.schedule.empty())
    p.schedule = schedule_from_string(a.schedule, "--schedule");
  else if (!from_file || a.v || !a.strategy.empty())
    p.schedule = default_schedule(p.strategy, p.v);
  if (a.no_dp_overlap) p.overlap_grad_reduce = false;
  if (a.micro_batch) p.micro_batch = *a.micro_batch;
  if (a.micro_batches && a.global_batch)
    throw SpecError("--micro-batches", "give --micro-batches or --global-batch, not both");
  if (a.micro_batches) p.micro_batches = *a.micro_batches;
  if (a.global_batch) {
    const long long per_step = bounded_product({p.micro_batch, p.z, p.dp}, limits::kGlobalBatch, "--global-batch",
                                               "micro_batch*z*dp", "sequences");
    if (*a.global_batch % per_step != 0)
      throw SpecError("--global-batch", fmt::format("--global-batch={} is not a multiple of micro_batch*z*dp={}",
                                                    *a.global_batch, per_step));
    const long long B = *a.global_batch / per_step;
    if (B > limits::kMicroBatches)
      throw SpecError("--global-batch", fmt::format("--global-batch={} makes B = G/(b*z*dp) = {} micro-batches per "
                                                    "pipeline, above the limit {}",
                                                    *a.global_batch, B, limits::kMicroBatches));
    p.micro_batches = static_cast<int>(B);
  }
  // As in a plan file: U = B (one unit, the whole iteration) unless given.
  if (a.unit)
    p.unit = *a.unit;
  else if (!from_file)
    p.unit = p.micro_batches;
  if (!a.recompute.empty()) p.recompute = recompute_from_string(a.recompute, "--recompute");
  if (!a.grad_reduce.empty()) p.grad_reduce = grad_reduce_from_string(a.grad_reduce, "--grad-reduce");
  if (a.sequence_parallel)
    p.sequence_parallel = *a.sequence_parallel;
  else if (!from_file)
    p.sequence_parallel = p.tp > 1;
  if (!a.dtype.empty()) {
    const TrainingDtype d = training_dtype_from_string(a.dtype, "--dtype");
    p.dtype = d.dtype;
    p.fp8 = d.fp8;
  }
  if (!a.framework.empty()) p.framework = framework_from_string(a.framework, "--framework");
  if (!a.fp8_recipe.empty()) {
    p.fp8_recipe = fp8_recipe_from_string(a.fp8_recipe, "--fp8-recipe");
    if (!p.fp8) throw SpecError("--fp8-recipe", "--fp8-recipe needs --dtype fp8 (or a plan in fp8)");
  }
  if (a.fp8_all_gather) p.fp8_all_gather = *a.fp8_all_gather;
  if (a.tp_comm_overlap == "auto") {
    // What the plan's framework runs on this GPU when it can overlap at all (needs tp > 1 and SP).
    const TpCommOverlap kind = framework_tp_overlap(framework_of(p));
    const bool runs = p.tp > 1 && p.sequence_parallel && tp_overlap_unavailable(kind, plan.cluster).empty();
    p.tp_comm_overlap = runs ? kind : TpCommOverlap::none;
  } else if (!a.tp_comm_overlap.empty()) {
    p.tp_comm_overlap = tp_comm_overlap_from_string(a.tp_comm_overlap, "--tp-comm-overlap");
  }
  if (!a.attention_kernel.empty())
    p.attention_kernel = attention_kernel_from_string(a.attention_kernel, "--attention-kernel");
  validate(plan);
  return plan;
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// "  (closed form 1.2345)" beside a simulated value; nothing when the closed form is all there is.
std::string beside(const search::SimulatedEstimate& e, double closed, const char* spec) {
  if (!e.simulated) return "";
  return fmt::format("  (closed form {})", fmt::format(fmt::runtime(spec), closed));
}

// "training run" lines: days, GPU-hours and cost of the whole run at this plan's iteration time.
void print_run_cost(const analytic::RunCost& r) {
  std::cout << fmt::format(
      "\ntraining run         {:.4g} tokens = {} iterations of {:.0f} tokens: {:.2f} days, {} "
      "GPU-hours",
      r.tokens, analytic::grouped_number(r.iterations), r.tokens_per_iteration, r.days,
      analytic::grouped_number(r.gpu_hours));
  if (r.cost)
    std::cout << fmt::format(", cost {} at {:g} per GPU-hour", analytic::grouped_number(*r.cost),
                             *r.price_per_gpu_hour);
  std::cout << "\n";
}

// Without --global-batch or --micro-batches a plan from flags has B = 1 (a plan file's default): one micro-batch
// per pipeline, all bubble. Said on stderr, not assumed in silence.
std::string batch_warning(const EstimateArgs& a) {
  if (!a.plan_file.empty() || a.global_batch || a.micro_batches) return {};
  return "no --global-batch or --micro-batches: B = 1 micro-batch per pipeline (a pipeline of it is mostly bubble); "
         "give --global-batch G for the iteration you train";
}

void print_table(const Plan& plan, const search::SimulatedEstimate& s) {
  const analytic::Estimate& e = s.estimate;
  const analytic::Estimate& c = s.closed_form;
  const ParallelSpec& p = plan.parallel;
  const FrameworkPrecision precision = framework_precision(p);
  std::cout << fmt::format("plan: {} on {}, {} GPUs, strategy {}, framework {} (gradients held in {}, reduced in {})\n",
                           plan.model.name, plan.cluster.name, p.world(), to_string(p.strategy),
                           to_string(framework_of(p)), to_string(precision.grads), to_string(precision.reduce));
  std::cout << fmt::format(
      "      tp={} pp={} dp={} z={} zero_stage={} v={} schedule={} b={} B={} U={} recompute={} "
      "sp={} tp_comm_overlap={} attention={} {}\n",
      p.tp, p.pp, p.dp, p.z, p.zero_stage, p.v, to_string(p.schedule), p.micro_batch, p.micro_batches, p.unit,
      to_string(p.recompute), p.sequence_parallel ? "on" : "off", to_string(p.tp_comm_overlap),
      to_string(attention_kernel_of(plan)), dtype_label(p.dtype, p.fp8));
  if (const std::optional<Fp8Recipe> recipe = fp8_recipe_of(p))
    std::cout << fmt::format("      fp8: linear-layer GEMMs in FP8, recipe {}{}\n", to_string(*recipe),
                             p.fp8_all_gather ? ", FP8 all-gather of the linear weights" : "");
  if (p.pp > 1) std::cout << fmt::format("      layers per virtual stage: {}\n", describe(stage_layout(plan.model, p)));
  std::cout << (s.simulated ? "      time, bubble, exposed comm, peak memory and pp/zero bytes: schedule simulator\n\n"
                            : "      closed form\n\n");
  const auto& t = e.time_s;
  std::cout << fmt::format("time per iteration   {:10.4f} s{}\n", t.iteration, beside(s, c.time_s.iteration, "{:.4f}"));
  std::cout << fmt::format("  compute            {:10.4f} s{}\n", t.compute, beside(s, c.time_s.compute, "{:.4f}"));
  std::cout << fmt::format("  exposed comm       {:10.4f} s  (tp {:.4f}, pp {:.4f}, zero {:.4f}, dp {:.4f}){}\n",
                           t.comm_exposed, t.tp_exposed, t.pp_exposed, t.zero_exposed, t.dp_exposed,
                           beside(s, c.time_s.comm_exposed, "{:.4f}"));
  std::cout << fmt::format("  bubble             {:10.4f} s{}\n\n", t.bubble, beside(s, c.time_s.bubble, "{:.4f}"));
  const auto& th = e.throughput;
  std::cout << fmt::format(
      "throughput           {:10.0f} tokens/s, {:.1f} TFLOP/s per GPU (executed), MFU {:.1f}% (full attention "
      "{:.1f}%){}\n",
      th.tokens_per_s, th.tflops_per_gpu, 100 * th.mfu, 100 * th.mfu_full_attention,
      beside(s, 100 * c.throughput.mfu, "MFU {:.1f}%"));
  std::cout << "                     " << analytic::kFlopConventionNote << "\n\n";
  const auto& cb = e.comm_bytes;
  std::cout << fmt::format(
      "sent per GPU/iter    {:10.3f} GB  (tp {:.3f}, pp {:.3f}, dp {:.3f}, zero {:.3f}; GB = 1e9){}\n\n",
      cb.total / 1e9, cb.tp / 1e9, cb.pp / 1e9, cb.dp / 1e9, cb.zero / 1e9,
      beside(s, c.comm_bytes.total / 1e9, "{:.3f}"));
  const auto& m = e.memory_bytes;
  std::cout << fmt::format("memory per GPU       {:10.2f} GiB of {:.2f} GiB{}\n", m.peak / kGiB,
                           plan.cluster.memory_bytes / kGiB, beside(s, c.memory_bytes.peak / kGiB, "{:.2f}"));
  std::cout << fmt::format(
      "  closed-form parts  params {:.2f}, grads {:.2f}, optimizer {:.2f}, activations {:.2f}, "
      "buffers {:.2f} GiB (GiB = 2^30 B)\n",
      m.params / kGiB, m.grads / kGiB, m.optimizer / kGiB, m.activations / kGiB, m.buffers / kGiB);
  if (s.peak) {
    const search::PeakBreakdown& k = *s.peak;
    std::cout << fmt::format(
        "  simulated peak     params {:.2f}, grads {:.2f}, optimizer {:.2f}, activations {:.2f}, recompute {:.2f}, "
        "W buffers {:.2f}, gathered {:.2f}, grad buffers {:.2f} GiB\n"
        "                     on rank {}, {:.0f}% into the iteration, {}\n",
        k.params / kGiB, k.grads / kGiB, k.optimizer / kGiB, k.activations / kGiB, k.recompute / kGiB,
        k.w_buffers / kGiB, k.gathered_params / kGiB, k.grad_buffers / kGiB, k.rank,
        k.makespan_s > 0 ? 100 * k.time_s / k.makespan_s : 0.0, k.when);
  }
  if (e.feasible)
    std::cout << "fits in memory       yes\n";
  else
    std::cout << fmt::format("fits in memory       NO: over by {:.2f} GiB\n", e.over_by_bytes / kGiB);
}

int run(const EstimateArgs& args) {
  const Plan plan = build_plan(args);
  const std::string warning = batch_warning(args);
  if (!warning.empty()) std::cerr << "zeropp: warning: " << warning << "\n";
  analytic::EstimateOptions options;
  search::SimulatedEstimate est;
  if (args.closed_form) {
    est.estimate = est.closed_form = analytic::estimate(plan, options);
  } else {
    est = search::simulated_estimate(plan, options);
  }
  std::optional<analytic::RunCost> run_cost;
  if (const auto o = run_cost_options(args.run_cost))
    run_cost = analytic::run_cost(plan, est.estimate.time_s.iteration, *o);
  if (args.format == Format::json) {
    nlohmann::json j = search::to_json(est);
    j["schema"] = kSchemaVersion;
    j["command"] = "estimate";
    j["plan"] = {{"model", to_json(plan.model)}, {"cluster", plan.cluster.name}, {"parallel", to_json(plan.parallel)}};
    if (run_cost) j["run"] = analytic::to_json(*run_cost);
    if (!warning.empty()) j["warnings"] = {warning};
    std::cout << j.dump(2) << "\n";
  } else {
    print_table(plan, est);
    if (run_cost) print_run_cost(*run_cost);
  }
  return 0;
}

const bool registered = register_command({
    "estimate",
    "Estimate one plan: time, throughput, memory and communication per GPU",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<EstimateArgs>();
      using cli_checks::integer_in;
      sub.add_option("--plan", a->plan_file, "Plan JSON {model, cluster, parallel}");
      sub.add_option("--model", a->model, "Model: zoo name or JSON file");
      sub.add_option("--cluster", a->cluster, "Cluster: zoo name or JSON file");
      add_seq_option(sub, a->seq);
      sub.add_option("--strategy", a->strategy, "3d | zero3 | 1f1b_zero1 | zero3_pp | zeropp_a | zeropp_b");
      sub.add_option("--tp", a->tp, "Tensor parallel size (tensor_model_parallel_size)")
          ->check(integer_in(1, limits::kGpus));
      sub.add_option("--pp", a->pp, "Pipeline parallel size (pipeline_model_parallel_size)")
          ->check(integer_in(1, limits::kGpus));
      sub.add_option("--dp", a->dp, "Data parallel size across nodes")->check(integer_in(1, limits::kGpus));
      sub.add_option("--gpus", a->gpus, "GPUs in all: sets dp = gpus/(tp*z*pp); with --dp, must equal tp*z*pp*dp")
          ->check(integer_in(1, limits::kGpus));
      sub.add_option("--z", a->z, "Intra-node ZeRO-3 group size")->check(integer_in(1, limits::kGpus));
      sub.add_option("--zero-stage", a->zero_stage, "ZeRO stage of the dp dimension (default: by strategy)")
          ->check(integer_in(0, 3));
      sub.add_option("--v", a->v, "Model chunks per pipeline rank")->check(integer_in(1, limits::kLayers));
      sub.add_option("--first-stage-layers", a->first_stage_layers,
                     "Layers of the first pipeline rank (--decoder-first-pipeline-num-layers); default: even, or "
                     "Megatron's split with the embedding and loss counted as layers")
          ->check(integer_in(1, limits::kLayers));
      sub.add_option("--cp", a->cp,
                     "Context parallel size: GPUs that split every sequence (--context-parallel-size); needs "
                     "flash attention")
          ->check(integer_in(1, limits::kGpus));
      sub.add_option("--dp-shard", a->dp_shard,
                     "HSDP (strategy zero3, framework fsdp2): dp groups one ZeRO-3 shard group spans (torchtitan's "
                     "data_parallel_shard_degree with z = 1); dp/dp-shard replicas; default dp (plain FSDP)")
          ->check(integer_in(1, limits::kGpus));
      sub.add_option("--cp-kind", a->cp_kind,
                     "ring (Megatron/Transformer Engine KV ring, default) | ulysses (DeepSpeed all-to-all)");
      sub.add_option("--last-stage-layers", a->last_stage_layers,
                     "Layers of the last pipeline rank (--decoder-last-pipeline-num-layers)")
          ->check(integer_in(1, limits::kLayers));
      sub.add_option("--schedule", a->schedule, "gpipe | 1f1b | interleaved | bfs | zb_h1 | zb_h2 | zeropp");
      sub.add_option("--micro-batch", a->micro_batch, "b, sequences per micro-batch (micro_batch_size)")
          ->check(integer_in(1, limits::kMicroBatch));
      sub.add_option("--micro-batches", a->micro_batches, "B, micro-batches per iteration per pipeline")
          ->check(integer_in(1, limits::kMicroBatches));
      sub.add_option("--global-batch", a->global_batch, "Sequences per iteration; sets B = G/(b*z*dp)")
          ->check(integer_in(1, limits::kGlobalBatch));
      sub.add_option("--unit", a->unit,
                     "U, ZeroPP scheduling-unit size (default: B, one unit per iteration, as in a plan file)")
          ->check(integer_in(1, limits::kMicroBatches));
      sub.add_option("--recompute", a->recompute, "none | selective | full");
      sub.add_option("--grad-reduce", a->grad_reduce, "ZeroPP gradient reduction: per_unit | per_w");
      sub.add_option("--sequence-parallel", a->sequence_parallel, "true | false (default: on when tp > 1)");
      sub.add_option("--dtype", a->dtype, "bf16 | fp16 | fp32 | fp8 (bf16 with FP8 linear layers: spec/fp8.hpp)");
      sub.add_option("--fp8-recipe", a->fp8_recipe,
                     "te_delayed | te_current | torchao_tensorwise | torchao_rowwise with --dtype fp8 (default: the "
                     "framework's: megatron te_delayed, fsdp2 torchao_tensorwise)");
      sub.add_option("--fp8-all-gather", a->fp8_all_gather,
                     "true | false: FSDP2 all-gathers the linear weights in FP8 (torchao tensorwise; default false)");
      sub.add_option("--framework", a->framework,
                     "megatron | deepspeed | fsdp2 | zeropp | fsdp1 (default: by strategy)");
      sub.add_option("--tp-comm-overlap", a->tp_comm_overlap,
                     "none | userbuffers (Megatron/TransformerEngine, compute capability 9.0+) | async_tp (PyTorch, "
                     "torchtitan) | auto (what the framework runs on this GPU); default: the plan file's, else none");
      sub.add_option("--attention-kernel", a->attention_kernel,
                     "flash2 | flash3 (Hopper only) | cudnn | unfused: the attention core's kernel (default: what the "
                     "framework runs on this GPU: spec/attention_kernel.hpp)");
      sub.add_flag("--no-dp-overlap", a->no_dp_overlap,
                   "DP gradient sync after the backward, not overlapped (parallel.overlap_grad_reduce=false)");
      sub.add_flag("--closed-form", a->closed_form, "Closed forms only, no schedule simulation");
      add_run_cost_options(sub, a->run_cost);
      add_format_option(sub, a->format);
      return [a] { return run(*a); };
    },
});

}  // namespace
}  // namespace zeropp::cli
