#pragma once
// JSON configs (comments allowed) for models, clusters, plans and experiments, and the zoo under configs/.
// Loading validates everything up front: unknown keys, wrong types and impossible values throw SpecError
// naming the field path and the rule.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost_model/spec/cluster_spec.hpp"
#include "cost_model/spec/json_reader.hpp"
#include "cost_model/spec/model_spec.hpp"
#include "cost_model/spec/parallel_spec.hpp"

namespace zeropp {

// A full plan: what is trained, where, and how.
struct Plan {
  ModelSpec model;
  ClusterSpec cluster;
  ParallelSpec parallel;

  friend bool operator==(const Plan&, const Plan&) = default;
};

// An experiment: a model and a cluster, a GPU count and a global batch; the strategies to compare.
struct Experiment {
  std::string name;
  ModelSpec model;
  ClusterSpec cluster;
  int gpus = 0;
  long long global_batch = 0;        // sequences per iteration
  std::vector<Strategy> strategies;  // empty = all
  Dtype dtype = Dtype::bf16;
  // FP8 training ("dtype": "fp8"): every plan of the experiment trains its linear layers in FP8 (spec/fp8.hpp), with
  // fp8_recipe or each plan's framework's default.
  bool fp8 = false;
  std::optional<Fp8Recipe> fp8_recipe;
  std::optional<Framework> framework;  // every plan's; absent: each strategy's own (strategy.hpp)
  // Every plan's attention kernel; absent: each plan's framework's on this GPU (spec/attention_kernel.hpp).
  std::optional<AttentionKernel> attention_kernel;

  friend bool operator==(const Experiment&, const Experiment&) = default;
};

// What a model file leaves to the command line. seq_len > 0 is the training sequence length s (--seq): it
// replaces the file's seq_len, or a HuggingFace config's max_position_embeddings (hf_config.hpp), which is used
// otherwise.
struct ModelOptions {
  int seq_len = 0;
};

// Parsing: parse_json_with_comments (cost_model/spec/json_reader.hpp). `field` prefixes every error path
// ("model", "cluster", ...).
ModelSpec model_from_json(const nlohmann::json&, const std::string& field = "model");
ClusterSpec cluster_from_json(const nlohmann::json&, const std::string& field = "cluster");
ParallelSpec parallel_from_json(const nlohmann::json&, const std::string& field = "parallel");
nlohmann::json to_json(const ModelSpec&);
nlohmann::json to_json(const ClusterSpec&);
nlohmann::json to_json(const ParallelSpec&);
// Plans and experiments: "model"/"cluster" are a zoo name, a path to a JSON file (relative paths are resolved
// against `base_dir` first, then the working directory) or an inline object; a model may be a HuggingFace
// config.json.
Plan plan_from_json(const nlohmann::json&, const std::filesystem::path& base_dir = {}, const ModelOptions& = {});
Experiment experiment_from_json(const nlohmann::json&, const std::filesystem::path& base_dir = {},
                                const ModelOptions& = {});
nlohmann::json to_json(const Plan&);        // model and cluster inline
nlohmann::json to_json(const Experiment&);  // model and cluster inline

// Validation of each spec alone and of their combination (divisibility, ranges, world vs cluster).
void validate(const ModelSpec&, const std::string& field = "model");
void validate(const ClusterSpec&, const std::string& field = "cluster");
void validate(const ParallelSpec&, const std::string& field = "parallel");
void validate(const Plan&);
void validate(const Experiment&);  // GPU count vs cluster, global batch, dtype peak, strategies listed once

// The zoo: configs/models/*.json, configs/clusters/*.json. The directory is found from $ZEROPP_CONFIGS,
// else <exe dir>/../configs walking up, else the source tree's configs/ (compiled in).
std::filesystem::path configs_dir();
std::vector<std::string> zoo_models();  // names, sorted
std::vector<std::string> zoo_clusters();
std::vector<std::string> zoo_experiments();
// A name from the zoo or a path to a JSON file: our format or (models) a HuggingFace config.json. A cluster file
// with implausible units warns (cluster_warnings.hpp).
ModelSpec load_model(const std::string& name_or_path, const ModelOptions& = {});
ClusterSpec load_cluster(const std::string& name_or_path);
// {"model": name|{...}, "cluster": ..., "parallel": {...}}
Plan load_plan(const std::string& path, const ModelOptions& = {});
// configs/experiments/<name>.json or a path
Experiment load_experiment(const std::string& name_or_path, const ModelOptions& = {});
std::string default_experiment_name();  // "default"

}  // namespace zeropp
