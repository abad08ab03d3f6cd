#pragma once
// Pure ZeRO-3 (FSDP) layer by layer, on the simulator's side.
//
// The schedule IR gathers a virtual stage at a time (UNSHARD / F / RESHARD per micro-batch for ShardPolicy
// per_microbatch); at pp = 1 that is the whole model, where ZeRO-3 and FSDP gather one layer (one FSDP unit) at a
// time with the next ones prefetched. The trainer executes the stage-level program as is; the simulator prices it
// by expanding its one stage into `layers` virtual stages of one layer each (pp = 1, v = layers):
//   F          gather layers 0..prefetch ahead, then per layer i: F(i), RESHARD(i), UNSHARD(i + 1 + prefetch)
//   B / BW     the same downwards from the last layer, RECOMPUTE(i) (when the stage is recomputed) and B/BW(i)
//              under one gather of layer i: the recompute of a checkpointed layer runs inside that layer's
//              backward, whose parameters are already gathered (2 gathers per layer and micro-batch, as the
//              closed form counts), then REDUCE_GRAD(i) right after BW(i) when the stage program reduces after
//              every W/BW (pure ZeRO-3's per_w reduction), else every layer's at the stage's REDUCE_GRAD
//   W          W(i) downwards (needs no parameters), REDUCE_GRAD(i) after each when the stage program reduces there
// A micro-batch's first gathers are issued ahead of the previous micro-batch's trailing reduce-scatters on the
// collective stream, as FSDP issues the next all-gather before the last reduce-scatter. The prefetch depth is a
// memory rule (ActionCosts::gathered_limit = 1 + prefetch): the gather of layer i + 1 + prefetch waits until
// layer i is freed, so at most 1 + prefetch layers are gathered at once. Depth 1 is FSDP2's default forward
// (and backward) prefetch and one DeepSpeed prefetch bucket of a layer.
#include "cost_model/schedule/action.hpp"
#include "cost_model/simulate/costs.hpp"

namespace zeropp::simulate {

inline constexpr int kDefaultPrefetch = 1;

// The per-layer program of a one-rank, one-stage program (pp = 1, v = 1; throws std::invalid_argument
// otherwise or when layers < 1 or prefetch < 0). sync_every_reduce (HSDP): a DP_SYNC of the layer right after each
// of its REDUCE_GRADs, FSDP2's all-reduce of the reduce-scattered shard across the replicas (foreach_reduce), in
// place of the stage program's one DP_SYNC at the end.
schedule::Program expand_layers(const schedule::Program& stage_program, int layers, int prefetch = kDefaultPrefetch,
                                bool sync_every_reduce = false);

// The cost table of expand_layers' program: every per-stage second, byte and buffer split evenly over the layers
// (the embedding and LM head spread with them, as the closed form's per-layer gather does), one layer's recompute
// buffer as before, the rank's static bytes and optimizer step unchanged, gathered_limit = 1 + prefetch.
ActionCosts per_layer_costs(const ActionCosts& stage_costs, int layers, int prefetch = kDefaultPrefetch);

}  // namespace zeropp::simulate
