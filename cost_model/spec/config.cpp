// JSON configs: parsing with comments, plans and experiments, and loading from the zoo or from files.
//
// Key names and their Megatron-LM counterparts (configs/README.md has the same table for users):
//   model    layers             --num-layers                         L
//            hidden             --hidden-size                        h
//            heads              --num-attention-heads                a
//            kv_heads           --num-query-groups (with --group-query-attention); absent: = heads
//            ffn_hidden         --ffn-hidden-size; absent: 4h (gelu) or Llama's rounding of 8h/3 (swiglu)
//            seq_len            --seq-length                         s
//            vocab              the padded vocabulary size           V
//            mlp                "swiglu" = --swiglu, "gelu" = Megatron's default MLP
//            attention          "flash" = --use-flash-attn, "unfused" = Megatron's 2021-2022 attention; absent:
//                               unfused with dropout (GPT), flash without (Llama)
//            dropout            --attention-dropout/--hidden-dropout > 0 (all) or 0 (none); absent: true for gelu
//                               (GPT), false for swiglu (Llama)
//            tied_embedding     false = --untie-embeddings-and-output-weights
//            learned_positions  true = --position-embedding-type learned_absolute, false = rope
//            rope_theta         --rotary-base (absent: 10000); rotary_fraction --rotary-percent (absent: 1);
//            rope_scaling       a rotary frequency scaling (HuggingFace's rope_scaling type); these three cost
//                               nothing in the model, only the trainer computes with them
//   parallel tp                 --tensor-model-parallel-size         t
//            pp                 --pipeline-model-parallel-size       p
//            v                  --virtual-pipeline-model-parallel-size (model chunks per PP rank; Megatron's
//                               --num-layers-per-virtual-pipeline-stage = L/(pp*v))
//            dp, z              data-parallel size = z*dp (z: the intra-node ZeRO-3 group, dp: across nodes)
//            zero_stage         ZeRO stage of the dp dimension; 1 with strategy 3d = --use-distributed-optimizer
//            micro_batch        --micro-batch-size                   b
//            micro_batches      B, micro-batches per pipeline per iteration; --global-batch-size = b*B*z*dp
//            recompute          "selective" = --recompute-activations, "full" = --recompute-granularity full
//            sequence_parallel  --sequence-parallel
//            dtype              "bf16" = --bf16, "fp16" = --fp16, "fp8" = --bf16 --fp8-format hybrid (spec/fp8.hpp)
//            fp8_recipe         te_delayed = --fp8-recipe delayed, te_current = --fp8-recipe tensorwise; torchao_*
//                               for FSDP2 (torchtitan's float8 converter); fp8_all_gather its FSDP FP8 all-gather
//            reduce_dtype       "bf16" with framework megatron = --grad-reduce-in-bf16 (default fp32 with bf16)
//            unit, allow_ragged_units, grad_reduce, strategy, schedule, framework: ZeroPP/toolkit terms, no
//                               Megatron flag
//   cluster  units of spec sheets and nccl-tests: peak_tflops (dense TFLOP/s per GPU), memory_gib (GiB = 2^30
//            bytes per GPU), memory_bandwidth_GBps and bandwidth_GBps (GB/s = 1e9 bytes/s; links per GPU per
//            direction), latency_us (microseconds). Inside, everything is SI: FLOP/s, bytes, bytes/s, seconds.
#include "cost_model/spec/config.hpp"

#include <string_view>

#include <fmt/format.h>

#include "cost_model/spec/cluster_warnings.hpp"
#include "cost_model/spec/diagnostics.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/fp8.hpp"
#include "cost_model/spec/hf_config.hpp"
#include "cost_model/spec/json_fields.hpp"
#include "cost_model/spec/json_reader.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/zoo_paths.hpp"

namespace zeropp {
namespace fs = std::filesystem;
namespace {

// Runs `load`, prefixing any SpecError's message with the file it came from (the field path is kept).
template <typename Load>
auto from_file(const fs::path& path, Load&& load) {
  try {
    return load();
  } catch (const SpecError& e) {
    throw SpecError(e.field(), path.string() + ": " + e.what());
  }
}

// A model object in either format; `name` when it states none, `source` names it in notes. --seq replaces the
// file's seq_len before validation (and supplies it when the file has none).
ModelSpec model_from_object(nlohmann::json j, const std::string& name, const std::string& source,
                            const ModelOptions& options) {
  if (is_hf_config(j)) return model_from_hf_json(j, name, source, options.seq_len);
  if (j.is_object() && !j.contains("name") && !name.empty()) j["name"] = name;
  if (j.is_object() && options.seq_len > 0) j["seq_len"] = options.seq_len;
  return model_from_json(j, "model");
}

ModelSpec model_from_file(const fs::path& path, const ModelOptions& options) {
  const nlohmann::json j = read_json_file(path);
  return from_file(path, [&] { return model_from_object(j, path.stem().string(), path.string(), options); });
}

// A cluster object read and checked for implausible units (cluster_warnings.hpp); the warnings name the file, or
// only the field for an inline object.
ClusterSpec checked_cluster(const nlohmann::json& j, const std::string& source) {
  ClusterSpec c = cluster_from_json(j, "cluster");
  for (const std::string& w : cluster_warnings(j, "cluster")) warn(source.empty() ? w : source + ": " + w);
  return c;
}

ClusterSpec cluster_from_file(const fs::path& path) {
  nlohmann::json j = read_json_file(path);
  return from_file(path, [&] {
    if (j.is_object() && !j.contains("name")) j["name"] = path.stem().string();
    return checked_cluster(j, path.string());
  });
}

// "model": "gpt3-13b" | "path/to/model.json" | {...}
ModelSpec model_from_value(const nlohmann::json& value, const fs::path& base_dir, const ModelOptions& options) {
  if (value.is_string())
    return model_from_file(detail::resolve_config("models", "model", value.get<std::string>(), base_dir), options);
  if (!value.is_object())
    throw SpecError("model", fmt::format("model: expected a zoo name, a file path or an object, got {} {}",
                                         value.type_name(), detail::show(value)));
  return model_from_object(value, "", "model", options);
}

ClusterSpec cluster_from_value(const nlohmann::json& value, const fs::path& base_dir) {
  if (value.is_string())
    return cluster_from_file(detail::resolve_config("clusters", "cluster", value.get<std::string>(), base_dir));
  if (!value.is_object())
    throw SpecError("cluster", fmt::format("cluster: expected a zoo name, a file path or an object, got {} {}",
                                           value.type_name(), detail::show(value)));
  return checked_cluster(value, "");
}

}  // namespace

Plan plan_from_json(const nlohmann::json& j, const fs::path& base_dir, const ModelOptions& options) {
  const detail::Fields f(j, "plan", {"model", "cluster", "parallel"});
  Plan plan{model_from_value(f.at("model"), base_dir, options), cluster_from_value(f.at("cluster"), base_dir),
            parallel_from_json(f.at("parallel"), "parallel")};
  validate(plan);
  return plan;
}

nlohmann::json to_json(const Plan& plan) {
  return {{"model", to_json(plan.model)}, {"cluster", to_json(plan.cluster)}, {"parallel", to_json(plan.parallel)}};
}

Experiment experiment_from_json(const nlohmann::json& j, const fs::path& base_dir, const ModelOptions& options) {
  const detail::Fields f(j, "experiment",
                         {"name", "model", "cluster", "gpus", "global_batch", "strategies", "dtype", "framework",
                          "fp8_recipe", "attention_kernel"});
  Experiment e;
  e.name = f.string("name", "");
  e.model = model_from_value(f.at("model"), base_dir, options);
  e.cluster = cluster_from_value(f.at("cluster"), base_dir);
  e.gpus = f.integer("gpus");
  e.global_batch = f.integer64("global_batch");
  if (f.has("strategies")) {
    const nlohmann::json& list = f.at("strategies");
    detail::expect_array(list, f.path_of("strategies"));
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string path = fmt::format("experiment.strategies[{}]", i);
      e.strategies.push_back(strategy_from_string(detail::as_string(list[i], path), path));
    }
  }
  if (f.has("dtype")) {
    const TrainingDtype d = training_dtype_from_string(f.string("dtype"), f.path_of("dtype"));
    e.dtype = d.dtype;
    e.fp8 = d.fp8;
  }
  if (f.has("fp8_recipe"))
    e.fp8_recipe = fp8_recipe_from_string(f.string("fp8_recipe"), f.path_of("fp8_recipe"));
  if (f.has("framework")) e.framework = framework_from_string(f.string("framework"), f.path_of("framework"));
  if (f.has("attention_kernel"))
    e.attention_kernel = attention_kernel_from_string(f.string("attention_kernel"), f.path_of("attention_kernel"));
  validate(e);
  return e;
}

nlohmann::json to_json(const Experiment& e) {
  nlohmann::json strategies = nlohmann::json::array();
  for (Strategy s : e.strategies) strategies.push_back(to_string(s));
  nlohmann::json j = {{"name", e.name},
                      {"model", to_json(e.model)},
                      {"cluster", to_json(e.cluster)},
                      {"gpus", e.gpus},
                      {"global_batch", e.global_batch},
                      {"strategies", strategies},
                      {"dtype", dtype_label(e.dtype, e.fp8)}};
  if (e.framework) j["framework"] = to_string(*e.framework);  // absent: by strategy
  if (e.fp8_recipe) j["fp8_recipe"] = to_string(*e.fp8_recipe);  // absent: by framework
  if (e.attention_kernel) j["attention_kernel"] = to_string(*e.attention_kernel);  // absent: by framework and GPU
  return j;
}

ModelSpec load_model(const std::string& name_or_path, const ModelOptions& options) {
  return model_from_file(detail::resolve_config("models", "model", name_or_path, {}), options);
}

ClusterSpec load_cluster(const std::string& name_or_path) {
  return cluster_from_file(detail::resolve_config("clusters", "cluster", name_or_path, {}));
}

Plan load_plan(const std::string& path, const ModelOptions& options) {
  const fs::path file = path;
  const nlohmann::json j = read_json_file(file);
  return from_file(file, [&] { return plan_from_json(j, file.parent_path(), options); });
}

Experiment load_experiment(const std::string& name_or_path, const ModelOptions& options) {
  const fs::path file = detail::resolve_config("experiments", "experiment", name_or_path, {});
  nlohmann::json j = read_json_file(file);
  return from_file(file, [&] {
    if (j.is_object() && !j.contains("name")) j["name"] = file.stem().string();
    return experiment_from_json(j, file.parent_path(), options);
  });
}

}  // namespace zeropp
