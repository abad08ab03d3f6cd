// zeropp-bench main: MPI first, then Google Benchmark. Every rank runs every benchmark (collectives need all of
// them); only rank 0 reports, and only rank 0 writes --benchmark_out, so ranks never race on the file.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>
#include <mpi.h>

#include "cost_model/spec/atomic_file.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/printable.hpp"
#include "microbench/cpu_profile.hpp"
#include "microbench/model_shapes.hpp"
#include "microbench/mpi_world.hpp"
#include "microbench/options.hpp"
#include "microbench/suites.hpp"
#include "zeropp/version.hpp"

namespace {

// Swallows everything: the display and file reporter of ranks other than 0.
class SilentReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

// Drops --benchmark_out and --benchmark_out_format on ranks other than 0 (Google Benchmark would open the
// file on every rank otherwise).
void drop_output_flags(int& argc, char** argv) {
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--benchmark_out=") || arg.starts_with("--benchmark_out_format=")) continue;
    argv[kept++] = argv[i];
  }
  argv[kept] = nullptr;
  argc = kept;
}

bool has_flag(int argc, char** argv, std::initializer_list<const char*> names) {
  for (int i = 1; i < argc; ++i)
    for (const char* name : names)
      if (std::strcmp(argv[i], name) == 0) return true;
  return false;
}

bool has_prefix(int argc, char** argv, std::string_view prefix) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]).starts_with(prefix)) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace zeropp::microbench;
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  if (has_flag(argc, argv, {"--version"})) {
    // zeropp-bench or zeropp-bench-cuda: the same main, named by its binary.
    if (rank == 0) std::cout << zeropp::version_line(std::filesystem::path(argv[0]).filename().string()) << "\n";
    MPI_Finalize();
    return 0;
  }
  if (has_flag(argc, argv, {"--help", "-h"})) {
    if (rank == 0) std::cout << options_help() << "\nGoogle Benchmark's flags:\n";
    MPI_Finalize();
    benchmark::Initialize(&argc, argv);  // prints its own help and exits
    return 0;
  }

  Options options;
  try {
    options = parse_options(argc, argv);
    // The models of --zeropp_gemm_models are loaded (and tp checked against them) before any work, so that a
    // mistyped name is exit 2 like any bad option; --zeropp_list_shapes writes their shapes and stops here.
    const std::vector<ModelCase> cases = model_cases(options);
    // A flash kernel this backend does not have: exit 2 as well.
    select_flash_kernels(flash_kernels(), options.attention_kernels, backend_name());
    if (!options.list_shapes.empty()) {
      if (rank == 0) {
        zeropp::write_file_atomically(options.list_shapes, shape_list(cases).dump(1) + "\n", "--zeropp_list_shapes",
                                      zeropp::ParentDirs::must_exist);
        std::cout << "wrote " << options.list_shapes << ": " << cases.size() << " model cases\n";
      }
      MPI_Finalize();
      return 0;
    }
  } catch (const std::exception& e) {
    if (rank == 0) std::cerr << "zeropp-bench: error: " << zeropp::printable(e.what()) << "\n";
    MPI_Finalize();
    return 2;
  }
  if (!options.cpu_profile.empty()) {
    // One rank measures and writes; under mpirun the others only wait (their cores stay idle meanwhile).
    int status = 0;
    if (rank == 0) {
      try {
        std::cout << write_cpu_profile(options.cpu_profile) << "\n";
      } catch (const zeropp::SpecError& e) {  // the output path, or a machine that gives no valid profile
        std::cerr << "zeropp-bench: error: " << e.what() << "\n";
        status = 2;
      } catch (const std::exception& e) {
        std::cerr << "zeropp-bench: error: " << e.what() << "\n";
        status = 1;
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
  }
  // Google Benchmark colours its console output when TERM names a colour terminal, whether or not stdout is one,
  // so output redirected to a file got ANSI escape codes; colour only a terminal unless --benchmark_color says.
  std::vector<char*> args(argv, argv + argc);
  static char no_color[] = "--benchmark_color=false";
  if (!isatty(STDOUT_FILENO) && !has_prefix(argc, argv, "--benchmark_color")) {
    args.push_back(no_color);
    ++argc;
  }
  args.push_back(nullptr);
  argv = args.data();
  if (rank != 0) drop_output_flags(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    MPI_Finalize();
    return 2;
  }

  int status = 0;
  {
    const MpiWorld world;
    benchmark::AddCustomContext("zeropp_backend", backend_name());
    benchmark::AddCustomContext("zeropp_ranks", std::to_string(world.size()));
    benchmark::AddCustomContext("zeropp_nodes", std::to_string(world.nodes()));
    benchmark::AddCustomContext("zeropp_ranks_per_node", std::to_string(world.ranks_per_node()));
    try {
      register_suites(options, world);
      if (rank == 0) {
        benchmark::RunSpecifiedBenchmarks();
      } else {
        SilentReporter silent;
        benchmark::RunSpecifiedBenchmarks(&silent);
      }
    } catch (const std::exception& e) {
      // A setup failure (no GPU, NCCL init) is raised on every rank alike; report it once.
      if (rank == 0) std::cerr << "zeropp-bench: error: " << zeropp::printable(e.what()) << "\n";
      status = 1;
    }
    release_suites();
  }
  benchmark::Shutdown();
  MPI_Finalize();
  return status;
}
