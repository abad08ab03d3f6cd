#pragma once
// The trainer's own transformer block (e2e/model/chunk.hpp: one middle chunk of one block on a trainer backend,
// "cpu" or "cuda") timed pass by pass: F (forward), B (input gradient) and W (weight gradient), as the schedule runs
// them. Unlike the bare GEMM suite this includes everything the trainer does inside a pass: the transposed GEMM
// variants, attention, layer norms, GELU, the stash copies.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <string>

namespace zeropp::microbench {

enum class LayerPass { F, B, W };
const char* layer_pass_name(LayerPass);

struct LayerShape {
  long h = 0, a = 0, s = 0, b = 0;
  std::string name() const;  // "h:512/a:8/s:256/b:1"
};

// The model FLOPs of one pass (DESIGN.md section 4, e2e/model/flops.hpp): F = 24bsh^2 + 4bs^2h,
// B = 24bsh^2 + 8bs^2h, W = 24bsh^2.
double layer_pass_flop(const LayerShape&, LayerPass);

// Times the pass on `backend` (max over the ranks of `comm`, which run the same block at the same time, as the
// trainer's ranks do) with the passes it depends on run untimed before it; counters: flop, FLOP/s. A device
// backend is synchronised before each clock read. The block reads parameters in the backend's compute dtype (a
// bf16 copy of the fp32 master weights on CUDA, as e2e/runtime/chunk_state.cpp binds them).
void bench_trainer_layer(benchmark::State& state, const std::string& backend, const LayerShape& shape, LayerPass pass,
                         MPI_Comm comm);

}  // namespace zeropp::microbench
