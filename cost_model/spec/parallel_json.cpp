// ParallelSpec <-> JSON, and the rules a plan obeys on its own (before the model and cluster are known).
#include <fmt/format.h>

#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/fp8.hpp"
#include "cost_model/spec/framework.hpp"
#include "cost_model/spec/json_fields.hpp"
#include "cost_model/spec/limits.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp {
namespace {

bool multi_chunk(ScheduleKind k) {
  return k == ScheduleKind::interleaved || k == ScheduleKind::bfs || k == ScheduleKind::zeropp;
}

// "tp_comm_overlap": false | true (the framework's own overlap, framework.hpp) | "none" | "userbuffers" |
// "async_tp".
TpCommOverlap tp_comm_overlap_from_json(const detail::Fields& f, Framework framework) {
  const nlohmann::json& v = f.at("tp_comm_overlap");
  const std::string path = f.path_of("tp_comm_overlap");
  if (v.is_string()) return tp_comm_overlap_from_string(v.get<std::string>(), path);
  if (!f.boolean("tp_comm_overlap")) return TpCommOverlap::none;
  const TpCommOverlap kind = framework_tp_overlap(framework);
  if (kind == TpCommOverlap::none)
    throw SpecError(path,
                    fmt::format("{}=true: framework {} has no TP communication overlap", path, to_string(framework)));
  return kind;
}

}  // namespace

ParallelSpec parallel_from_json(const nlohmann::json& j, const std::string& field) {
  const detail::Fields f(j, field,
                         {"strategy",
                          "tp",
                          "pp",
                          "dp",
                          "z",
                          "zero_stage",
                          "v",
                          "schedule",
                          "micro_batch",
                          "micro_batches",
                          "unit",
                          "allow_ragged_units",
                          "recompute",
                          "sequence_parallel",
                          "dtype",
                          "grad_reduce",
                          "overlap_grad_reduce",
                          "tp_comm_overlap",
                          "overlap_param_gather",
                          "framework",
                          "reduce_dtype",
                          "kernel_efficiency",
                          "first_stage_layers",
                          "last_stage_layers",
                          "cp",
                          "cp_kind",
                          "fp8_recipe",
                          "fp8_all_gather",
                          "dp_shard",
                          "attention_kernel",
                          "grad_accumulation_fusion",
                          "transformer_impl"});
  ParallelSpec p;
  p.strategy = strategy_from_string(f.string("strategy"), f.path_of("strategy"));
  p.tp = f.integer("tp", 1);
  p.pp = f.integer("pp", 1);
  p.dp = f.integer("dp", 1);
  p.z = f.integer("z", 1);
  p.cp = f.integer("cp", 1);
  if (f.has("cp_kind")) p.cp_kind = cp_kind_from_string(f.string("cp_kind"), f.path_of("cp_kind"));
  if (f.has("dp_shard")) {
    p.dp_shard = f.integer("dp_shard");
    if (p.dp_shard < 1)
      throw SpecError(f.path_of("dp_shard"), fmt::format("{}={} must be >= 1", f.path_of("dp_shard"), p.dp_shard));
  }
  p.v = f.integer("v", 1);
  p.zero_stage = f.integer("zero_stage", traits(p.strategy).default_zero_stage);
  p.schedule = f.has("schedule") ? schedule_from_string(f.string("schedule"), f.path_of("schedule"))
                                 : default_schedule(p.strategy, p.v);
  p.micro_batch = f.integer("micro_batch", 1);
  p.micro_batches = f.integer("micro_batches", 1);
  p.unit = f.integer("unit", p.micro_batches);  // absent: the whole iteration is one unit
  p.allow_ragged_units = f.boolean("allow_ragged_units", true);
  if (f.has("recompute")) p.recompute = recompute_from_string(f.string("recompute"), f.path_of("recompute"));
  p.sequence_parallel = f.boolean("sequence_parallel", false);
  if (f.has("dtype")) {
    const TrainingDtype d = training_dtype_from_string(f.string("dtype"), f.path_of("dtype"));
    p.dtype = d.dtype;
    p.fp8 = d.fp8;
  }
  p.fp8_all_gather = f.boolean("fp8_all_gather", false);
  if (f.has("grad_reduce")) p.grad_reduce = grad_reduce_from_string(f.string("grad_reduce"), f.path_of("grad_reduce"));
  p.overlap_grad_reduce = f.boolean("overlap_grad_reduce", true);
  p.overlap_param_gather = f.boolean("overlap_param_gather", false);
  // A value equal to the default is kept as the default, so that to_json (which writes the values in effect)
  // and parallel_from_json round-trip.
  if (f.has("framework")) {
    const Framework framework = framework_from_string(f.string("framework"), f.path_of("framework"));
    if (framework != framework_of(p)) p.framework = framework;
  }
  if (f.has("kernel_efficiency")) {
    const double value = f.number("kernel_efficiency");
    if (value != framework_kernel_efficiency(framework_of(p))) p.kernel_efficiency = value;
  }
  // After the framework: a value equal to the framework's default is kept as the default (round trip).
  if (f.has("grad_accumulation_fusion")) {
    const bool fusion = f.boolean("grad_accumulation_fusion");
    if (fusion != (framework_of(p) == Framework::megatron)) p.grad_accumulation_fusion = fusion;
  }
  // Kept as given, the default (transformer_engine) too: the trainer refuses a plan that states the stack it does not
  // run (e2e/model/gpt_config.cpp), and validate refuses the key for a framework other than Megatron.
  if (f.has("transformer_impl"))
    p.transformer_impl = transformer_impl_from_string(f.string("transformer_impl"), f.path_of("transformer_impl"));
  // After the framework: true names the framework's own overlap.
  if (f.has("tp_comm_overlap")) p.tp_comm_overlap = tp_comm_overlap_from_json(f, framework_of(p));
  if (f.has("reduce_dtype")) {
    const Dtype reduce = dtype_from_string(f.string("reduce_dtype"), f.path_of("reduce_dtype"));
    if (reduce != default_reduce_dtype(framework_of(p), p.dtype)) p.reduce_dtype = reduce;
  }
  // After the framework: a recipe equal to the framework's default is kept as the default (spec/fp8.hpp).
  if (f.has("fp8_recipe")) {
    const Fp8Recipe recipe = fp8_recipe_from_string(f.string("fp8_recipe"), f.path_of("fp8_recipe"));
    if (!p.fp8 || recipe != default_fp8_recipe(framework_of(p))) p.fp8_recipe = recipe;
  }
  // Absent: the framework's on the plan's GPU (spec/attention_kernel.hpp), resolved once model and cluster are known.
  if (f.has("attention_kernel"))
    p.attention_kernel = attention_kernel_from_string(f.string("attention_kernel"), f.path_of("attention_kernel"));
  // 0 is not a count a file may give: a stage without layers (validate(Plan) checks the rest of the split).
  for (const auto& [key, count] : {std::pair{"first_stage_layers", &p.first_stage_layers},
                                   std::pair{"last_stage_layers", &p.last_stage_layers}}) {
    if (!f.has(key)) continue;
    *count = f.integer(key);
    if (*count < 1)
      throw SpecError(f.path_of(key),
                      fmt::format("{}={} must be >= 1: a pipeline stage needs a layer", f.path_of(key), *count));
  }
  validate(p, field);
  return p;
}

nlohmann::json to_json(const ParallelSpec& p) {
  nlohmann::json j = {{"strategy", to_string(p.strategy)},
          {"tp", p.tp},
          {"pp", p.pp},
          {"dp", p.dp},
          {"z", p.z},
          {"zero_stage", p.zero_stage},
          {"v", p.v},
          {"schedule", to_string(p.schedule)},
          {"micro_batch", p.micro_batch},
          {"micro_batches", p.micro_batches},
          {"unit", p.unit},
          {"allow_ragged_units", p.allow_ragged_units},
          {"recompute", to_string(p.recompute)},
          {"sequence_parallel", p.sequence_parallel},
          {"dtype", dtype_label(p.dtype, p.fp8)},
          {"grad_reduce", to_string(p.grad_reduce)},
          {"overlap_grad_reduce", p.overlap_grad_reduce},
          {"tp_comm_overlap", to_string(p.tp_comm_overlap)},
          {"overlap_param_gather", p.overlap_param_gather},
          {"framework", to_string(framework_of(p))},
          {"reduce_dtype", to_string(framework_precision(p).reduce)},
          {"kernel_efficiency", kernel_efficiency(p)}};
  // Written only when given, as a plan file gives them (absent: the default split).
  if (p.first_stage_layers > 0) j["first_stage_layers"] = p.first_stage_layers;
  if (p.last_stage_layers > 0) j["last_stage_layers"] = p.last_stage_layers;
  // Written only for FP8 plans, so that other plans read as before.
  if (const std::optional<Fp8Recipe> recipe = fp8_recipe_of(p)) {
    j["fp8_recipe"] = to_string(*recipe);
    j["fp8_all_gather"] = p.fp8_all_gather;
  }
  // Written only with a CP group, so that plans without one read as before.
  if (p.cp > 1) {
    j["cp"] = p.cp;
    j["cp_kind"] = to_string(p.cp_kind);
  }
  if (p.dp_shard > 0) j["dp_shard"] = p.dp_shard;  // written only when given (HSDP)
  // Written only when given: the default depends on the model and the GPU, which this spec does not hold.
  if (p.attention_kernel) j["attention_kernel"] = to_string(*p.attention_kernel);
  // Written only when it differs from the framework's default (Megatron's --no-gradient-accumulation-fusion).
  if (p.grad_accumulation_fusion) j["grad_accumulation_fusion"] = *p.grad_accumulation_fusion;
  if (p.transformer_impl) j["transformer_impl"] = to_string(*p.transformer_impl);  // written only when given
  return j;
}

void validate(const ParallelSpec& p, const std::string& field) {
  const auto at_least_one = [&](const char* key, int value) {
    if (value < 1) throw SpecError(field + "." + key, fmt::format("{}.{}={} must be >= 1", field, key, value));
  };
  at_least_one("tp", p.tp);
  at_least_one("pp", p.pp);
  at_least_one("dp", p.dp);
  at_least_one("z", p.z);
  at_least_one("cp", p.cp);
  at_least_one("v", p.v);
  at_least_one("micro_batch", p.micro_batch);
  at_least_one("micro_batches", p.micro_batches);
  at_least_one("unit", p.unit);
  for (const auto& [key, n] : {std::pair{"first_stage_layers", p.first_stage_layers},
                               std::pair{"last_stage_layers", p.last_stage_layers}}) {
    if (n < 0) throw SpecError(field + "." + key, fmt::format("{}.{}={} must be >= 1", field, key, n));
    check_at_most(field, key, n, limits::kLayers);
    if (n > 0 && p.pp < 2)
      throw SpecError(field + "." + key, fmt::format("{0}.{1}={2} needs {0}.pp >= 2 (a pipeline with a first and a "
                                                     "last stage)",
                                                     field, key, n));
  }
  // Within limits.hpp, so that world(), pipelines() and global_batch() never wrap around.
  if (p.cp > 1)
    bounded_product({p.tp, p.z, p.cp, p.pp, p.dp}, limits::kGpus, field, "world tp*z*cp*pp*dp", "GPUs");
  else
    bounded_product({p.tp, p.z, p.pp, p.dp}, limits::kGpus, field, "world tp*z*pp*dp", "GPUs");
  check_at_most(field, "v", p.v, limits::kLayers);
  check_at_most(field, "micro_batch", p.micro_batch, limits::kMicroBatch);
  check_at_most(field, "micro_batches", p.micro_batches, limits::kMicroBatches);
  bounded_product({p.micro_batch, p.micro_batches, p.z, p.dp}, limits::kGlobalBatch, field,
                  "global batch micro_batch*micro_batches*z*dp", "sequences");
  if (p.zero_stage < 0 || p.zero_stage > 3)
    throw SpecError(field + ".zero_stage", fmt::format("{}.zero_stage={} must be 0, 1, 2 or 3", field, p.zero_stage));
  // One intra-node dimension: a node's GPUs either split every layer (tp) or shard the stage's parameters (z).
  if (p.tp > 1 && p.z > 1)
    throw SpecError(field + ".z",
                    fmt::format("{0}.tp={1} and {0}.z={2}: tp and z are never both > 1", field, p.tp, p.z));
  if (p.v > 1 && !multi_chunk(p.schedule))
    throw SpecError(field + ".v", fmt::format("{0}.v={1} needs a schedule with several chunks per rank "
                                              "(interleaved, bfs, zeropp), not {0}.schedule={2}",
                                              field, p.v, to_string(p.schedule)));
  if (p.unit > p.micro_batches)
    throw SpecError(field + ".unit",
                    fmt::format("{0}.unit={1} exceeds {0}.micro_batches={2}", field, p.unit, p.micro_batches));
  if (!p.allow_ragged_units && p.micro_batches % p.unit != 0)
    throw SpecError(field + ".micro_batches", fmt::format("{0}.micro_batches={1} is not a multiple of {0}.unit={2} "
                                                          "({0}.allow_ragged_units=false)",
                                                          field, p.micro_batches, p.unit));

  if (p.tp_comm_overlap != TpCommOverlap::none) {
    const std::string kind = to_string(p.tp_comm_overlap);
    if (!(p.tp > 1 && p.sequence_parallel))
      throw SpecError(field + ".tp_comm_overlap",
                      fmt::format("{0}.tp_comm_overlap={1} needs {0}.tp > 1 and {0}.sequence_parallel=true (it "
                                  "overlaps the sequence-parallel all-gathers and reduce-scatters)",
                                  field, kind));
    const Framework framework = framework_of(p);
    if (framework_tp_overlap(framework) != p.tp_comm_overlap)
      throw SpecError(field + ".tp_comm_overlap",
                      fmt::format("{0}.tp_comm_overlap={1}: framework {2} runs {3}", field, kind, to_string(framework),
                                  framework_tp_overlap(framework) == TpCommOverlap::none
                                      ? "no TP communication overlap"
                                      : to_string(framework_tp_overlap(framework))));
  }
  if (p.kernel_efficiency && !(*p.kernel_efficiency > 0 && *p.kernel_efficiency <= 1))
    throw SpecError(field + ".kernel_efficiency",
                    fmt::format("{}.kernel_efficiency={} must be in (0, 1]", field, *p.kernel_efficiency));
  if (p.overlap_param_gather && p.zero_stage < 1)
    throw SpecError(field + ".overlap_param_gather",
                    fmt::format("{0}.overlap_param_gather=true needs a dp-sharded optimizer ({0}.zero_stage >= 1): "
                                "there is no parameter all-gather after the step to overlap",
                                field));
  if (p.grad_accumulation_fusion.value_or(false) && framework_of(p) != Framework::megatron)
    throw SpecError(field + ".grad_accumulation_fusion",
                    fmt::format("{0}.grad_accumulation_fusion=true: framework {1} has no fused weight-gradient "
                                "accumulation (Megatron-LM's --gradient-accumulation-fusion; {1} returns fresh "
                                "16-bit weight gradients to autograd)",
                                field, to_string(framework_of(p))));
  if (p.transformer_impl && framework_of(p) != Framework::megatron)
    throw SpecError(field + ".transformer_impl",
                    fmt::format("{0}.transformer_impl={1}: only framework megatron has it (Megatron-LM's "
                                "--transformer-impl); framework {2} runs its own kernels (spec/framework.hpp)",
                                field, to_string(*p.transformer_impl), to_string(framework_of(p))));
  // What each strategy is (strategy.hpp): reject plans that contradict their own strategy.
  validate_strategy(p, field);
}

}  // namespace zeropp
