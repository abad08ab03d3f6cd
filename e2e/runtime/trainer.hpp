#pragma once
// The trainer's driver, what `zeropp-train` runs on every rank: load and check the plan (agreed across ranks),
// build the rank's groups, chunks and program, run the iterations, and report (rank 0): loss per step,
// tokens/s, model TFLOP/s per rank, peak memory per rank by category (the backend allocator's real peak) beside
// the simulator's prediction for the plan, every group's collective counts and bytes, a measured Chrome trace with
// the time per operation kind (GEMM, attention, ...) per rank, an optional model comparison (warning when the
// ranks outnumber the cores or GPUs) and reference check, and a JSON result written atomically.
#include <cstdint>
#include <string>
#include <vector>

#include "e2e/comm/communicator.hpp"
#include "e2e/optim/adamw.hpp"
#include "e2e/runtime/fault.hpp"

namespace zeropp::e2e {

struct TrainerOptions {
  std::string plan_path;                     // {"model": ..., "cluster": ..., "parallel": ...}
  std::string experiment;                    // or: an experiment (configs/experiments name or path); the plan is the
  std::string strategy;                      //   search's fastest feasible one (of `strategy` when given)
  std::vector<std::string> model_overrides;  // "layers=2", ... (gpt_config.hpp, apply_model_override)
  int steps = 3;
  std::uint64_t seed = 1234;       // parameter init and synthetic data
  std::string data = "synthetic";  // or a token file (e2e/data/token_batch.hpp)
  std::string backend = "cpu";     // "cpu", "cuda" (when built), "null" (empty compute: runtime overhead)
  int threads = 1;                 // CPU backend threads per rank
  AdamWConfig optim;
  std::string trace_path;       // measured Chrome trace ("" = none); also turns on the per-operation time profile
  std::string out_path;         // JSON result ("" = results/runs/<plan>-<strategy>-w<N>.json)
  std::string compare_model;    // "" (off), "measured" (measured means) or "analytic" (costs_from_plan)
  double check_reference = -1;  // tolerance for the normwise relative error vs the reference (< 0: off)
  FaultInjection fault;
  int skip_grad_sync_stage = -1;  // test hook (ExecutorOptions::skip_grad_sync_stage); -1: off
  bool fp8_local_amax = false;  // test hook: FP8 without the TP amax reduction (each shard its own scale)
  double comm_timeout = 300;  // seconds a rank may wait in one communication step (0: no watchdog)
  bool quiet = false;         // no per-step lines
};

// Runs the whole job on this rank. Returns the process exit code: 0 success, 2 bad input agreed in setup,
// 3 reference check failed. A failure during training aborts the job (never returns): exit code 1, or
// kTimeoutExitCode (4) when a rank waited longer than comm_timeout (e2e/runtime/watchdog.hpp).
int train(Communicator& world, const TrainerOptions&);

}  // namespace zeropp::e2e
