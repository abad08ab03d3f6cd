#pragma once
// What each strategy is, defined once. The cost model (plan validation, the analytic formulas, the simulator's
// inputs, the search space) and the trainer (the program it runs, how it shards and synchronises) ask here, so
// that the two executors of a plan cannot disagree on what the plan means.
//
// With context parallelism (cp > 1) every "dp" and "z*dp" below includes the cp ranks (spec/context_parallel.hpp).
//   strategy    intra-node  pp    ZeRO-3 shard group  gathered         after the backward (DP sync)
//   3d          tp          any   -                   -                z*dp replicas: all-reduce (stage 0) or
//                                                                      reduce-scatter + all-gather (stage 1)
//   1f1b_zero1  -           any   -                   -                the same
//   zero3       z or tp     1     z*dp (every DP GPU) per micro-batch  none (reduce-scattered in the group)
//               (pp 1)            or z*dp_shard (HSDP)  layer by layer   HSDP: the shard across dp/dp_shard
//                                                                      replicas, all-reduced per micro-batch
//   zero3       z or tp     > 1   z*dp or z*dp_shard  per iteration    the same, all-reduced once (HSDP)
//               (pp > 1)
//   zero3_pp    z           any   z                   per micro-batch  the shard across dp: all-reduce (0) or
//                                                                      reduce-scatter + all-gather (1)
//   zeropp_a    z           any   z                   per unit         the shard across dp: all-reduce (0)
//   zeropp_b    z           any   z                   per unit         the shard across dp: reduce-scatter (1)
// zero3 with tp > 1 (z = 1) is FSDP2 with TP, torchtitan's 2-D parallelism: each TP rank's shard of every layer is
// ZeRO-3-sharded over the dp GPUs holding the same TP rank (framework fsdp2 only).
// zero3 with pp > 1 is FSDP2 under a pipeline, torchtitan's 3-D parallelism with tp > 1 (framework fsdp2 only; the
// schedules torchtitan runs that are modelled: gpipe, 1f1b, interleaved, bfs). torchtitan keeps a stage's
// parameters gathered across micro-batches under PP (torchtitan/distributed/fsdp.py,
// get_fsdp_reshard_after_forward_policy: "default" is reshard_after_forward=False when PP is enabled, "to avoid
// per-microbatch all-gathers"), and PyTorch's pipeline stage turns FSDP's gradient sync and reshard-after-backward
// off for every micro-batch and runs the post-backward (reduce-scatter, reshard) once in the schedule's
// REDUCE_GRAD after the stage's last backward (torch/distributed/pipelining/stage.py, backward_maybe_with_nosync and
// perform_reduce_grad): one all-gather per stage at its first forward, the gradients accumulated unsharded (in the
// reduce dtype: FSDPParam.to_accumulated_grad_if_needed) and reduce-scattered once per iteration.
// HSDP (zero3 with dp_shard < dp, framework fsdp2: FSDP2's 2-D mesh, torchtitan's data_parallel_replicate_degree):
// the shard group is z*cp*dp_shard GPUs and dp/dp_shard groups replicate it; FSDP2 all-reduces the reduce-scattered
// gradient shard across the replicas right after each reduce-scatter (foreach_reduce with an all-reduce group), on
// its own stream: per layer and micro-batch without PP (torchtitan's gradient accumulation does not turn the sync
// off), once per stage under PP.
// Schedules: the ZeroPP strategies run the zeropp schedule and only they do; zero3 runs a pipeline only under FSDP2.
// Framework (what a plan keeps per parameter and reduces in, spec/framework.hpp), when a plan names none:
//   3d, 1f1b_zero1  megatron   the framework these plans are written after (TP, interleaving, distributed
//                              optimizer)
//   zero3           fsdp2      pure ZeRO-3 data parallelism as PyTorch runs it natively (fully_shard, the
//                              torchtitan reference trainer); DeepSpeed stage 3 is framework deepspeed
//   zero3_pp        deepspeed  ZeRO-3 under a pipeline with the ZeRO paper's conventions
//   zeropp_a/b      zeropp     the ZeroPP authors' code
#include <string>
#include <vector>

#include "cost_model/spec/parallel_spec.hpp"

namespace zeropp {

// When a ZeRO-3-sharded stage gathers its parameters.
enum class ParamGather {
  none,             // parameters replicated (or split by tp): nothing to gather
  per_micro_batch,  // naive ZeRO-3: gather before every F and B, free after
  per_unit,         // ZeroPP: gather on a chunk's first use in a unit, keep while the chunk stays active
  per_iteration,    // FSDP2 under PP: gather on a chunk's first use, keep until its last; reduce once per iteration
};

// How a stage's gradient (or its ZeRO-3 shard) is synchronised across its data-parallel replicas.
enum class DpSyncMode {
  none,            // no replicas outside the shard group
  all_reduce,      // every replica keeps the whole gradient (shard) and the optimizer states for it
  reduce_scatter,  // ZeRO-1 across the replicas: reduce-scatter, step on 1/n, all-gather the parameters
};

struct StrategyTraits {
  bool zeropp = false;           // ZeroPP hybrid A or B
  bool tensor_parallel = false;  // tp may be > 1 (the intra-node dimension is tp)
  bool zero3_group = false;      // z may be > 1 (the intra-node dimension shards parameters with ZeRO-3)
  bool pipeline = true;          // pp may be > 1
  ParamGather gather = ParamGather::none;
  Framework framework = Framework::megatron;  // when a config names none
  int default_zero_stage = 1;                 // of the dp dimension, when a config leaves it out
  int min_zero_stage = 0, max_zero_stage = 1;
  const char* zero_stage_rule = "";  // why other stages are refused (for the error message)
};

// One row per Strategy, in enum order (strategy.cpp). traits() is inline: every plan evaluation asks it often.
extern const StrategyTraits kStrategyTraits[6];
[[noreturn]] void invalid_strategy(Strategy);  // throws SpecError
inline const StrategyTraits& traits(Strategy s) {
  const int i = static_cast<int>(s);
  if (i < 0 || i > 5) invalid_strategy(s);
  return kStrategyTraits[i];
}

inline bool is_zeropp(Strategy s) { return traits(s).zeropp; }
// Parameters live ZeRO-3-sharded and are gathered for use (zero3, zero3_pp, zeropp_a, zeropp_b).
inline bool shards_with_zero3(Strategy s) { return traits(s).gather != ParamGather::none; }

// The framework a plan follows: its own, else its strategy's.
inline Framework framework_of(const ParallelSpec& p) { return p.framework.value_or(traits(p.strategy).framework); }

// The schedule a strategy runs when a config names none (interleaved when a pipeline rank holds v > 1 chunks).
ScheduleKind default_schedule(Strategy, int v);
// Whether a strategy can run a schedule: the zeropp schedule is the ZeroPP strategies' and theirs alone.
bool runs_schedule(Strategy, ScheduleKind);

// Whether the last virtual stage recomputes when a plan recomputes (DESIGN.md section 5). Megatron-LM's
// schedules (GPipe, 1F1B, interleaved, BFS and the zero-bubble ones built on them) recompute in every stage, the
// last included, and so at pp = 1. Only the ZeroPP authors' schedule exempts its last chunk (of the last rank),
// whose B follows its F at once.
inline bool recomputes_last_stage(ScheduleKind k) { return k != ScheduleKind::zeropp; }

// The dp groups one zero3 shard group spans: parallel.dp_shard, or every dp group when not given (plain FSDP).
inline int dp_shard_of(const ParallelSpec& p) { return p.dp_shard > 0 ? p.dp_shard : p.dp; }

// A plan's data-parallel picture (z*dp GPUs hold copies or shards of each stage).
struct DataParallelSync {
  int shard_group = 1;          // GPUs that ZeRO-3-shard a stage's parameters (1: not sharded)
  bool shard_spans_dp = false;  // the shard group spans the dp dimension (zero3: z*cp*dp_shard), not the z group
  bool layer_wise = false;      // gathered an FSDP unit (a layer) at a time, pp = 1 (simulate/per_layer.hpp)
  // HSDP without PP: the shard is all-reduced across the replicas after every micro-batch's reduce-scatter, not
  // once after the last backward.
  bool sync_every_micro_batch = false;
  ParamGather gather = ParamGather::none;
  DpSyncMode mode = DpSyncMode::none;  // the sync after the backward
  int replicas = 1;                    // GPUs the (shard of the) gradient is synchronised across (1: no sync)
  bool replicas_span_z = false;        // those are all z*dp GPUs (no ZeRO-3 group) rather than the dp dimension
  int grad_shard = 1;                  // the synchronised gradient is 1/grad_shard of the stage's (z for the hybrids)
  int optimizer_shards = 1;            // GPUs sharing one copy of the optimizer states
};
DataParallelSync data_parallel_sync(const ParallelSpec&);

// The rules a plan's split obeys because of its strategy (SpecError naming `field`.key): tp, z, pp, the ZeRO
// stage and the schedule. Part of validate(ParallelSpec); the trainer refuses exactly these plans too.
void validate_strategy(const ParallelSpec&, const std::string& field = "parallel");

// Every strategy, in enum order.
std::vector<Strategy> all_strategies();

}  // namespace zeropp
