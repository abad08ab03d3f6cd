#pragma once
// The suites that run the trainer's own code on its backend (one list for zeropp-bench on "cpu" and
// zeropp-bench-cuda on "cuda"): the block's F/B/W passes (layer_bench.hpp), the optimizer step
// (optimizer_bench.hpp) and the memory-bound kernels (kernel_bench.hpp), each as the options ask.
#include <memory>
#include <string>
#include <vector>

#include "microbench/attention_bench.hpp"
#include "microbench/kernel_bench.hpp"
#include "microbench/mpi_world.hpp"
#include "microbench/options.hpp"

namespace zeropp::microbench {

// Names: layer/trainer/<dtype>/<F|B|W>/h:../a:../s:../b:.. with the backend's compute dtype (fp32 on the CPU,
// bf16 on CUDA), optimizer/trainer/fp32/params:P, kernel/<backend>/... (kernel_bench.hpp), attention/trainer/...
// (attention_bench.hpp): flash (the backend's choice), unfused, and flash-<name> for each of `flash_kernels`; the
// column sums of the weight passes for each of `column_kernels` (kernel_bench.hpp).
void register_trainer_suites(const Options& options, const MpiWorld& world, const std::string& backend,
                             const std::vector<std::shared_ptr<const FlashKernelRun>>& flash_kernels = {},
                             const std::vector<std::shared_ptr<const ColumnSumsRun>>& column_kernels = {});

}  // namespace zeropp::microbench
