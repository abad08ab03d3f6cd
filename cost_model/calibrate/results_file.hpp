#pragma once
// One results file for `zeropp calibrate`, whichever program wrote it: zeropp-bench's Google Benchmark JSON
// (bench_results.hpp) or nccl-tests' text output (nccl_tests.hpp), told apart by the first character that is
// not white space ('{', '[' or a '/' comment: JSON, except mpirun's "[1,0]<stdout>:" tag; anything else:
// nccl-tests, whose errors then say that the file is neither).
#include <string>

#include "cost_model/calibrate/bench_results.hpp"
#include "cost_model/calibrate/nccl_tests.hpp"
#include "cost_model/spec/cluster_spec.hpp"

namespace zeropp::calibrate {

// Reads, detects and parses `path`; errors are SpecErrors naming the file (and the line or benchmark).
BenchResults load_results(const std::string& path, const NcclTestsOptions& nccl_tests);

// Throws SpecError(path) when the file says it measured another kind of device than `base` models (CPU results
// onto a GPU profile, nccl-tests onto a CPU profile): its fits would describe the wrong machine.
void check_device(const BenchResults& results, const std::string& path, const ClusterSpec& base);

}  // namespace zeropp::calibrate
