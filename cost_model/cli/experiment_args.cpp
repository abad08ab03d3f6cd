#include "cost_model/cli/experiment_args.hpp"

#include <iostream>

#include <fmt/format.h>

#include "cost_model/options/cli_checks.hpp"
#include "cost_model/spec/attention_kernel.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/fp8.hpp"
#include "cost_model/spec/limits.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/provenance.hpp"

namespace zeropp::cli {

void add_experiment_options(CLI::App& sub, ExperimentArgs& a) {
  sub.add_option("--experiment", a.experiment, "Experiment: name under configs/experiments or JSON file");
  sub.add_option("--model", a.model, "Model: zoo name or JSON file");
  sub.add_option("--cluster", a.cluster, "Cluster: zoo name or JSON file");
  sub.add_option("--gpus", a.gpus, "Number of GPUs")->check(cli_checks::integer_in(1, limits::kGpus));
  sub.add_option("--global-batch", a.global_batch, "Sequences per iteration")
      ->check(cli_checks::integer_in(1, limits::kGlobalBatch));
  sub.add_option("--dtype", a.dtype,
                 "bf16 | fp16 | fp32 | fp8 (default bf16, or the experiment's); fp8: every plan trains its linear "
                 "layers in FP8 (spec/fp8.hpp)");
  sub.add_option("--fp8-recipe", a.fp8_recipe,
                 "te_delayed | te_current | torchao_tensorwise | torchao_rowwise with --dtype fp8 (default: each "
                 "plan's framework's)");
  sub.add_option("--framework", a.framework,
                 "megatron | deepspeed | fsdp2 | zeropp | fsdp1: every plan's (default: each strategy's own)");
  sub.add_option("--attention-kernel", a.attention_kernel,
                 "flash2 | flash3 (Hopper only) | cudnn | unfused: every plan's attention kernel (default: what each "
                 "plan's framework runs on this GPU: spec/attention_kernel.hpp)");
  add_seq_option(sub, a.seq);
}

void add_seq_option(CLI::App& sub, int& seq) {
  sub.add_option("--seq", seq,
                 "Training sequence length s (default: the model file's; a HuggingFace config's "
                 "max_position_embeddings)")
      ->check(cli_checks::integer_in(1, limits::kSeqLen));
}

Experiment load_experiment_args(const ExperimentArgs& a, const std::string& default_name) {
  const bool direct = !a.model.empty() || !a.cluster.empty() || a.gpus > 0 || a.global_batch > 0;
  const std::string name = a.experiment.empty() && !direct ? default_name : a.experiment;
  Experiment ex;
  if (!name.empty()) {
    if (direct) throw SpecError("experiment", "--experiment gives model, cluster, GPUs and batch; do not combine them");
    ex = load_experiment(name, {.seq_len = a.seq});
  } else {
    if (a.model.empty() || a.cluster.empty() || a.gpus <= 0 || a.global_batch <= 0)
      throw SpecError("experiment",
                      "give --experiment NAME|FILE, or all of --model, --cluster, --gpus, --global-batch");
    ex.name = "command line";
    ex.model = load_model(a.model, {.seq_len = a.seq});
    ex.cluster = load_cluster(a.cluster);
    ex.gpus = a.gpus;
    ex.global_batch = a.global_batch;
  }
  // Either form: --dtype overrides the experiment's (an unknown name is an error, never ignored).
  if (!a.dtype.empty()) {
    const TrainingDtype d = training_dtype_from_string(a.dtype, "--dtype");
    ex.dtype = d.dtype;
    ex.fp8 = d.fp8;
  }
  if (!a.framework.empty()) ex.framework = framework_from_string(a.framework, "--framework");
  if (!a.fp8_recipe.empty()) {
    ex.fp8_recipe = fp8_recipe_from_string(a.fp8_recipe, "--fp8-recipe");
    if (!ex.fp8) throw SpecError("--fp8-recipe", "--fp8-recipe needs --dtype fp8 (or an experiment in fp8)");
  }
  if (!a.attention_kernel.empty()) {
    ex.attention_kernel = attention_kernel_from_string(a.attention_kernel, "--attention-kernel");
    if (const std::string no = attention_kernel_unavailable(*ex.attention_kernel, ex.model, ex.cluster); !no.empty())
      throw SpecError("--attention-kernel", fmt::format("--attention-kernel {} cannot run on cluster {}: {}",
                                                        a.attention_kernel, ex.cluster.name, no));
  }
  if (ex.fp8 || ex.attention_kernel) validate(ex);  // the FP8 rate and recipe (spec/fp8.hpp); the attention kernel
  return ex;
}

void warn_if_nominal(const Experiment& ex) {
  if (const std::string w = nominal_warning(ex.cluster, ex.dtype); !w.empty())
    std::cerr << "zeropp: warning: " << w << "\n";
}

}  // namespace zeropp::cli
