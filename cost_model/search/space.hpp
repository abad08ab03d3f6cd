#pragma once
// The search space: every parallel plan of an experiment (model, cluster, N GPUs, global batch G) that the
// strategies allow (spec/strategy.hpp). Plans are built valid by construction (every divisibility rule of
// validate(Plan) holds); memory is not checked here, the search decides it. No default cut: every dimension
// below is enumerated in full unless SpaceOptions narrows it (tests do, to count by hand).
//
// g = GPUs per node (the GPUs that share the fast intra-node link), L = layers. Per strategy:
//   3d          tp any divisor of g that divides heads, kv heads and ffn; when tp > 1 sequence parallelism off,
//               on, and on with the TP communication overlapped where the plan's framework runs an overlap on
//               the cluster's GPU (spec/framework.hpp, tp_overlap_unavailable); pp any; dp = N/(tp pp);
//               ZeRO stage 0 (all-reduce) or 1 (distributed optimizer).
//   1f1b_zero1  tp = z = 1; pp any; dp = N/pp; ZeRO stage 0 or 1 across dp.
//   zero3       one ZeRO-3 group over all N GPUs, written z = min(g, N), dp = N/z (stage 3), pp = 1; and with
//               framework fsdp2 (the default) FSDP2 + TP: every tp >= 2 as for 3d (SP as 3d), z = 1, dp = N/tp;
//               FSDP2 under a pipeline: pp any (torchtitan's 3-D with tp >= 2), schedules 1f1b, gpipe,
//               interleaved, bfs; and HSDP: dp_shard every divisor of dp below dp (shard group z*cp*dp_shard >= 2),
//               besides plain FSDP (dp_shard unset).
//   zero3_pp    z any divisor >= 2 of g (the ZeRO-3 group inside a node); pp any; dp = N/(z pp);
//               ZeRO stage 0 or 1 across dp; parameters gathered and freed per micro-batch.
//   zeropp_a/b  z as zero3_pp; pp any; dp = N/(z pp); hybrid A all-reduces across dp (stage 0),
//               hybrid B shards the optimizer across dp (stage 1).
// "pp any": every pipeline depth that divides the GPUs left (N / (tp z)), up to L; the layers need not divide:
// for every (pp, v) the splits that matter (stage_splits.hpp: the default, even or with the embedding and loss
// counted as layers, and the balanced and lighter-ends first/last_stage_layers) are each a plan.
// Schedules and chunks v (pp > 1; with pp = 1 every schedule is the same sequence, so 1f1b with v = 1 stands for
// them all, and zeropp keeps its own schedule): every v for which a split exists, and
//   3d, 1f1b_zero1, zero3_pp   1f1b, zb_h1, zb_h2, gpipe (v = 1); interleaved (v >= 2, B a multiple of pp as
//                              Megatron requires); bfs (v >= 1).
//   zeropp_a/b                 zeropp, every U in 1..B (the last unit holds B mod U micro-batches when U does
//                              not divide B).
// Context parallelism cp (every strategy): 1, and with flash attention every divisor cp >= 2 of N / (tp z) with at
// least min_cp_tokens tokens per CP rank, as Megatron's ring where seq_len is divisible by 2 cp and as
// DeepSpeed-Ulysses where cp divides seq_len and a TP rank's heads and key/value heads; pp then divides
// N / (tp z cp) and dp = N / (tp z cp pp).
// Micro-batch b: every b with b z dp dividing G; B = G / (b z dp) <= 2^20, and the program of (pp, v, B) within
// the simulator's action budget (schedule/budget.hpp): larger plans are left out (they cannot be simulated).
// Recompute none | selective | full for every layout.
#include <cstdint>
#include <functional>
#include <vector>

#include "cost_model/spec/config.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::search {

struct SpaceOptions {
  std::vector<Strategy> strategies;  // empty = all six
  int max_v = 0;                     // most chunks per PP rank tried; 0 = no cut (every v with pp v | L)
  int max_micro_batch = 0;           // largest b tried; 0 = no cut (every b with b z dp | G)
  // Fewest tokens a CP rank keeps: CP sizes that leave fewer are not tried. 8192, the smallest share in the
  // layouts Meta published for Llama 3 405B (Dubey et al. 2024, Table 4: CP 16 at 131,072 tokens, no CP at
  // 8,192): below it the GEMMs shrink and the KV ring is exposed. Tests lower it to reach CP on tiny models.
  int min_cp_tokens = 8192;
  // Plans to keep (empty: all). Tests narrow the space to another enumerator's with it.
  std::function<bool(const ParallelSpec&)> filter;
};

// Calls `visit` with every plan of the space, strategy by strategy in the order of options.strategies (or enum
// order). `plan` is reused between calls: copy what you keep. Throws SpecError for a bad experiment or options.
void for_each_plan(const Experiment& experiment, const SpaceOptions& options,
                   const std::function<void(const Plan&)>& visit);

// The recomputation choices of every layout: none, selective, full; without selective under FlashAttention.
std::vector<Recompute> recompute_choices(const Experiment& experiment);

// The same walk one level up: every layout of the space (everything but the unit U and recomputation) with the
// number of units it takes, B for the zeropp schedule (U = 1..B) and 1 otherwise; each layout stands for
// units x recompute_choices() plans, before options.filter. `plan` has unit and recompute unset (as they were
// last) and is reused between calls. What counts the space without visiting every plan of it.
void for_each_layout(const Experiment& experiment, const SpaceOptions& options,
                     const std::function<void(Plan& plan, int units)>& visit);

// Number of plans for_each_plan visits.
std::int64_t count_plans(const Experiment& experiment, const SpaceOptions& options);

}  // namespace zeropp::search
