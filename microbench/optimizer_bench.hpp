#pragma once
// The trainer's optimizer step (OPT_STEP) timed on P parameters: the gradients' sum of squares (global-norm
// clipping) and the AdamW update, with the same backend calls the runtime makes (e2e/optim/adamw.hpp,
// e2e/runtime/chunk_state.cpp). `zeropp calibrate` turns the times into the profile's optimizer rate
// (parameters per second), which the time model uses for OPT_STEP instead of a memory-bound guess.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <string>

namespace zeropp::microbench {

// Times one step on `params` fp32 parameters on `backend` ("cpu" or "cuda"; max over the ranks of `comm`, which
// step their own copies at the same time, as the trainer's ranks do); counters: params, params/s.
void bench_trainer_optimizer(benchmark::State& state, const std::string& backend, long params, MPI_Comm comm);

}  // namespace zeropp::microbench
