// zeropp-train: trains the compact GPT or Llama with a parallel plan, one MPI rank per device.
//   mpirun -np 4 zeropp-train --plan tests/e2e/plans/zeropp_b_z2_pp2_v2_ragged.json --steps 3 --check-reference 1e-5
// See e2e/runtime/trainer.hpp for what a run reports and e2e/runtime/fault.hpp for how failures end the job.
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cost_model/options/cli_checks.hpp"
#include "cost_model/spec/error.hpp"
#include "e2e/comm/mpi_communicator.hpp"
#ifdef ZEROPP_HAVE_CUDA
#include "e2e/comm/nccl_communicator.hpp"
#endif
#include "e2e/runtime/fault.hpp"
#include "e2e/runtime/trainer.hpp"
#include "zeropp/version.hpp"

namespace {

// --threads' upper bound: 4x the hardware threads of today's largest two-socket x86 server (2 x AMD EPYC 9965,
// 192 cores and 384 threads each: 768), so that a typo (--threads 30000) is refused rather than spawned.
constexpr long long kMaxThreads = 4096;

// Parses the command line on every rank (all ranks see the same arguments). --help prints on rank 0 only.
// Returns -1 to go on, else the exit code.
int parse(int argc, char** argv, int rank, zeropp::e2e::TrainerOptions& opt, std::string& fault) {
  CLI::App app{"zeropp-train: the compact GPT/Llama trainer that executes the schedule IR (launch with mpirun -np N)"};
  // Exactly one source of the plan.
  auto* source = app.add_option_group("plan", "what to run (exactly one)");
  source->add_option("--plan", opt.plan_path, "plan JSON: {\"model\": ..., \"cluster\": ..., \"parallel\": ...}");
  auto* experiment = source->add_option("--experiment", opt.experiment,
                                        "experiment (configs/experiments name or path): run the search's fastest plan");
  source->require_option(1);
  app.add_option("--strategy", opt.strategy, "with --experiment: the fastest plan of this strategy")->needs(experiment);
  app.add_option("--model-override", opt.model_overrides,
                 "KEY=VALUE[,KEY=VALUE...]: replace sizes of the plan's model (layers, hidden, heads, kv_heads, "
                 "ffn_hidden, seq_len, vocab; 0 for kv_heads or ffn_hidden: the default), e.g. to train a "
                 "HuggingFace config at a scale this machine holds; every other fact of the model is kept")
      ->delimiter(',');
  app.add_option("--steps", opt.steps, "iterations to run")->capture_default_str();
  app.add_option("--seed", opt.seed, "seed of the parameter init and the synthetic data")->capture_default_str();
  app.add_option("--data", opt.data, "'synthetic' or a token file (format in e2e/data/token_batch.hpp)")
      ->capture_default_str();
#ifdef ZEROPP_HAVE_CUDA
  app.add_option("--backend", opt.backend, "cpu | cuda | null (empty compute: measures the runtime's overhead)")
#else
  app.add_option("--backend", opt.backend,
                 "cpu | null (empty compute: measures the runtime's overhead); cuda "
                 "when built with the CUDA toolkit")
#endif
      ->capture_default_str();
  // At least one; at most kMaxThreads (a larger count is a typo, not a machine).
  app.add_option("--threads", opt.threads, "CPU backend threads per rank (1 or more)")
      ->capture_default_str()
      ->check(zeropp::cli_checks::integer_in(1, kMaxThreads));
  // Real-valued options: finite and in a plausible range (NaN once turned the reference check off).
  using zeropp::cli_checks::number_in;
  app.add_option("--lr", opt.optim.lr, "AdamW learning rate")->capture_default_str()->check(number_in({0, 1e3, false}));
  app.add_option("--weight-decay", opt.optim.weight_decay, "AdamW decoupled weight decay")
      ->capture_default_str()
      ->check(number_in({0, 1e3, false}));
  app.add_option("--grad-clip", opt.optim.grad_clip, "max global gradient L2 norm (0: off)")
      ->capture_default_str()
      ->check(number_in({0, 1e30, false}));
  app.add_option("--trace", opt.trace_path,
                 "write the measured Chrome trace (Perfetto) here, and print each rank's time per operation kind "
                 "(GEMM, attention, norms, ...) over the steps after the first")
      ->check(zeropp::cli_checks::output_path());
  app.add_option("--out", opt.out_path, "JSON result path (default results/runs/<plan>-<strategy>-w<N>.json)")
      ->check(zeropp::cli_checks::output_path());
  app.add_flag("--compare-model{measured}", opt.compare_model,
               "print the simulator's prediction for the plan beside the measurement; costs: measured (the "
               "measured means, default) or analytic (the cost model for the plan's cluster)");
  app.add_option("--check-reference", opt.check_reference,
                 "compare parameters with the single-rank reference; fail (exit 3) above this relative error")
      ->check(number_in({0, 1e3, false}));
  app.add_option("--comm-timeout", opt.comm_timeout,
                 "seconds a rank may wait in one communication step (a peer stopped or hung) before the whole job "
                 "is aborted with exit code 4, naming the rank and what it waited on; 0: never")
      ->capture_default_str();
  app.add_option("--inject-fault", fault, "test hook: throw@RANK[:STEP], nan@RANK[:STEP] or stop@RANK[:STEP]");
  app.add_option("--skip-grad-sync", opt.skip_grad_sync_stage,
                 "test hook: the ranks holding virtual stage STAGE keep their own gradients instead of "
                 "reduce-scattering them and skip its DP sync (a wrong sync the reference check must catch)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--fp8-local-amax", opt.fp8_local_amax,
               "test hook: with dtype fp8, scale each TP shard by its own amax instead of the whole tensor's (the "
               "run then differs from the single-rank reference)");
  app.add_flag("--quiet", opt.quiet, "no per-step lines");
  app.set_version_flag("--version", zeropp::version_line("zeropp-train"));
  return zeropp::cli_checks::parse(app, argc, argv, "zeropp-train", rank == 0 ? stderr : nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int code = 0;
  {
    auto world = zeropp::e2e::MpiCommunicator::world();
    zeropp::e2e::TrainerOptions opt;
    std::string fault;
    code = parse(argc, argv, world->rank(), opt, fault);
    if (code < 0) {
      try {
        zeropp::e2e::run_agreed(*world, "options", [&] {
          if (!fault.empty()) opt.fault = zeropp::e2e::FaultInjection::parse(fault);
          if (!std::isfinite(opt.comm_timeout) || opt.comm_timeout < 0)
            throw zeropp::SpecError("comm-timeout", fmt::format("--comm-timeout={} must be a number of seconds >= 0 "
                                                                "(0: no timeout)",
                                                                opt.comm_timeout));
        });
        // The CUDA backend talks over NCCL (bootstrapped over MPI); options are agreed over MPI first, so a
        // rank that cannot parse them never reaches the NCCL bootstrap.
        std::unique_ptr<zeropp::e2e::Communicator> comm;
#ifdef ZEROPP_HAVE_CUDA
        if (opt.backend == "cuda")
          zeropp::e2e::run_agreed(*world, "nccl", [&] { comm = zeropp::e2e::NcclCommunicator::world(); });
#endif
        code = zeropp::e2e::train(comm ? *comm : *world, opt);
      } catch (const zeropp::e2e::SetupFailed&) {
        code = 2;
      }
    }
  }
  MPI_Finalize();
  return code;
}
