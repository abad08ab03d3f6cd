#pragma once
// Command-line options of zeropp-bench beyond Google Benchmark's own `--benchmark_*` flags.
// They choose which shapes and sizes are registered; every rank parses the same argv, so every rank registers
// the same benchmarks in the same order (a requirement for collectives under MPI).
#include <cstddef>
#include <string>
#include <vector>

namespace zeropp::microbench {

struct Options {
  // GEMM suite: hidden sizes h and token counts s*b of the transformer shapes.
  std::vector<long> gemm_hidden{64, 128, 256, 512, 1024};
  std::vector<long> gemm_tokens{128, 512, 2048};
  // Per-head attention GEMMs: sequence lengths s and the head dimension d.
  std::vector<long> gemm_seq{128, 512};
  long gemm_head_dim = 64;
  // Square GEMMs n^3 (8192 is the usual peak probe on a GPU).
  std::vector<long> gemm_square{};
  // Model GEMMs (microbench/model_shapes.hpp): the layers of these models (zoo names or paths) as one rank of
  // tp runs them, at micro-batches b (tokens b * s). Empty: off.
  std::vector<std::string> gemm_models{};
  std::vector<long> gemm_tp{1};
  std::vector<long> gemm_batch{1};
  // Not empty: write the model shapes (GEMMs and attention, shape_list in model_shapes.hpp) there as JSON and run
  // no benchmark.
  std::string list_shapes;
  // Memory-bound kernels of the trainer's backend (microbench/kernel_bench.hpp) on rows x hidden activations,
  // cross-entropy on rows x vocab. Empty rows: off.
  std::vector<long> kernel_rows{};
  std::vector<long> kernel_hidden{1024};
  std::vector<long> kernel_vocab{};
  // Trainer layer suite: one transformer block of the trainer (e2e Chunk) per hidden size h, with a = h / d
  // heads of dimension d (fixed, so that every h has the same attention kernels), sequence length s and
  // micro-batch b; its F, B (input gradient) and W (weight gradient) passes.
  std::vector<long> layer_hidden{256, 512};
  long layer_head_dim = 64;
  long layer_seq = 256;
  long layer_batch = 1;
  // Attention-core suite (microbench/attention_bench.hpp): heads[i] query heads over kv_heads[i] key/value heads
  // (empty: as many as heads) at sequence length s, head dimension d, micro-batch b; forward and backward.
  // Empty heads: off.
  std::vector<long> attention_heads{};
  std::vector<long> attention_kv_heads{};
  long attention_seq = 2048;
  long attention_head_dim = 128;
  long attention_batch = 1;
  // Flash kernels of the backend measured by name at those cases besides the backend's own choice (zeropp-bench-cuda:
  // mma, wmma, scalar; suites.hpp flash_kernels). Empty: only the backend's choice.
  std::vector<std::string> attention_kernels{};
  // Optimizer suite: the trainer's OPT_STEP (gradient norm + AdamW) on P fp32 parameters per rank.
  std::vector<long> optimizer_params{1L << 20, 1L << 22, 1L << 24};
  // Collective suite: full-buffer sizes S from min to max bytes, multiplied by `step` each time.
  std::size_t coll_min_bytes = 1024;
  std::size_t coll_max_bytes = std::size_t{64} << 20;
  std::size_t coll_step = 2;
  int coll_points_per_step = 1;  // sizes per step: 2 adds the geometric midpoint (s * sqrt(step)), ...
  // Timed repetitions per benchmark (Google Benchmark iterations); fixed so ranks never disagree.
  int iterations = 5;
  // Not empty: write the base cluster profile of this CPU there (cpu_profile.hpp) and run no benchmark.
  std::string cpu_profile;
};

// Removes the `--zeropp_*` flags it understands from argv (so Google Benchmark does not see them) and returns
// the options. Unknown `--zeropp_*` flags or malformed values throw std::invalid_argument naming the flag.
Options parse_options(int& argc, char** argv);

// Help text for the options above (printed by --help next to Google Benchmark's own).
std::string options_help();

}  // namespace zeropp::microbench
