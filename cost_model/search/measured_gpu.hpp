#pragma once
// What was measured on a real GPU and committed under results/measured/<gpu>/ (scripts/device/import.py): the GPU
// named by nvidia-smi, the trainer's runs with the model's prediction beside them (the same zeropp-train results
// load_loop_runs reads), and the same model and step in PyTorch (e2e/compare_torch.py) from the run's summary.json.
// The study report shows them so that a reader sees the trainer against PyTorch on one GPU and the model against
// the measured step, with the machine stated.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cost_model/search/loop_runs.hpp"

namespace zeropp::search {

// One measured step of one implementation of the same model (GPT-3 1.3B on one GPU, bf16).
struct MeasuredStep {
  std::string who;  // "zeropp-train (...)", "PyTorch eager (SDPA attention)", "PyTorch torch.compile ...", ...
  double step_s = 0;
  double tokens_per_s = 0;
  double mfu = 0;  // model FLOPs per step / step time / the dense bf16 peak summarize.py states
  double peak_memory_gib = 0;
};

struct MeasuredGpu {
  std::string folder;  // "h100-80gb-hbm3"
  std::string gpu;     // nvidia-smi's name
  std::string driver;
  std::string power_limit;
  std::vector<LoopRun> trainer;     // zeropp-train results with model_comparison
  std::vector<MeasuredStep> steps;  // the trainer first, then PyTorch's modes, as the run has them
  std::optional<double> mfu_over_torch_eager;        // the trainer with materialised attention
  std::optional<double> flash_mfu_over_torch_eager;  // the trainer with its flash attention
};

// Every folder of `dir` with a machine.json and a summary.json, sorted by name; unreadable files are skipped. A
// missing folder gives an empty list.
std::vector<MeasuredGpu> load_measured_gpus(const std::filesystem::path& dir);

}  // namespace zeropp::search
