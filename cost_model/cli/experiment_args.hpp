#pragma once
// The experiment a command works on, from `--experiment NAME|FILE` or from `--model --cluster --gpus
// --global-batch` (one or the other, never both), and `--dtype`, `--framework`, `--attention-kernel` (every plan's)
// and `--seq` with either.
// Shared by `compare`, `search`, `report`.
#include <string>

#include <CLI/CLI.hpp>

#include "cost_model/spec/config.hpp"

namespace zeropp::cli {

struct ExperimentArgs {
  std::string experiment, model, cluster, dtype, framework, fp8_recipe, attention_kernel;
  int gpus = 0;
  long long global_batch = 0;
  int seq = 0;  // --seq; 0: the model file's
};

void add_experiment_options(CLI::App& sub, ExperimentArgs& args);
// --seq S, the training sequence length s (ModelOptions::seq_len), for every command that reads a model.
void add_seq_option(CLI::App& sub, int& seq);

// With neither form given, `default_name` (when not empty) names the experiment; otherwise it is an error.
// Throws SpecError naming "experiment" when the two forms are mixed or the direct form is incomplete.
Experiment load_experiment_args(const ExperimentArgs& args, const std::string& default_name = "");

// "zeropp: warning: cluster ... is NOMINAL: ..." on stderr when the experiment's profile rests on nominal GEMM or
// link figures (spec/provenance.hpp), so a ranking against a fitted profile is not taken at face value.
void warn_if_nominal(const Experiment&);

}  // namespace zeropp::cli
