#pragma once
// The trainer's causal attention kernels alone (CPU backend, e2e/backend/cpu_backend.cpp): the unfused one, which
// writes the b x a x s x s probabilities and keeps them for its backward, and the flash-style one (tiled, online
// softmax), which keeps a log-sum-exp per row. Forward (F) or backward (B, after an untimed forward), on the block
// shape of the layer suite (b, s, a = h / d heads of d). Counters: flop (the causal core as the cost model counts
// it, 4bs^2h forward, 8bs^2h backward), FLOP/s, and held_bytes: what the kernel allocates beyond its inputs and
// outputs (the saved probabilities or log-sum-exp, and the scratch), from the backend allocator's peak.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include "microbench/layer_bench.hpp"

namespace zeropp::microbench {

void bench_trainer_attention(benchmark::State& state, const LayerShape& shape, bool flash, LayerPass pass,
                             MPI_Comm comm);

}  // namespace zeropp::microbench
