#pragma once
// ActionCosts: what every action of a schedule program costs, as the simulator consumes it.
// Seconds per action (compute and communication), the bytes each communication action moves, and the memory
// each action allocates or frees. Built by hand (uniform, for tests and `zeropp schedule --costs`) or from a
// Plan with the analytic model (costs_from_plan.hpp).
#include <string>
#include <vector>

#include "cost_model/schedule/action.hpp"

namespace zeropp::simulate {

// One communication action: how long it occupies its stream and how many bytes it moves.
// `bytes` is the full buffer of the collective (the gathered parameters of a stage, the gradients reduced), or
// the message of a p2p transfer; ring factors live in `seconds`, not here.
struct CommCost {
  double seconds = 0;
  double bytes = 0;
};

// Costs of one virtual stage (all of its layers), per micro-batch where the action has one.
struct StageCost {
  // Compute, seconds.
  double f = 0;          // forward
  double b = 0;          // input gradient
  double w = 0;          // weight gradient
  double bw = 0;         // fused backward (usually b + w)
  double recompute = 0;  // forward re-run before B (usually f)

  // Communication.
  CommCost send_f;       // this stage's output activation to stage + 1 (latency + bytes / bandwidth)
  CommCost send_b;       // this stage's input gradient to stage - 1
  CommCost unshard;      // all-gather of the stage's parameters in the ZeRO-3 group
  CommCost reduce_grad;  // reduce-scatter of the stage's gradients in the ZeRO-3 group
  CommCost dp_sync;      // gradient sync of the stage's shard across dp
  // The DP_SYNC in this many equal buckets, launched as the stage's last W/BW produces their gradients
  // (evenly over its duration): it may start once the first bucket is ready and ends no earlier than the last
  // bucket's share after the W/BW. 1: it starts when the W/BW ends. (Only when it follows a W/BW directly.)
  int dp_sync_buckets = 1;

  // Memory, bytes (per micro-batch where it applies).
  double activation_bytes = 0;  // from F start until B end: sb(34h + 5as) per layer
  double checkpoint_bytes = 0;  // what F keeps instead when the micro-batch is recomputed: 2sbh per layer
  // Live from RECOMPUTE start until B end: what recomputation brings back at once. Megatron recomputes a layer
  // at a time (full: every layer's input is checkpointed and one layer's activations are rebuilt during its
  // backward; selective: one layer's attention core), so this is one layer's share, not the whole stage's.
  double recompute_bytes = 0;
  double w_buffer_bytes = 0;        // from B end until W end: 32sbh per layer (ZB-PP Table 1)
  double gathered_param_bytes = 0;  // from UNSHARD start until RESHARD
  double grad_buffer_bytes = 0;     // unsharded gradients: first W/BW of the stage until its REDUCE_GRAD ends

  // Seconds of a compute action (F, B, W, BW, RECOMPUTE) of this stage as the table gives them; 0 for any other.
  double compute_seconds(schedule::ActionType type) const;
};

// Costs of one whole pipeline (p ranks, v chunks each).
struct ActionCosts {
  std::vector<StageCost> stages;     // indexed by virtual stage, size p * v
  std::vector<double> static_bytes;  // per rank: parameter, gradient and optimizer shards, held all along
  std::vector<CommCost> opt_step;    // per rank: optimizer step (seconds); ZeRO-1's parameter all-gather (bytes)
  // Most gathered parameter buffers a rank holds at once (0: no limit). With a limit K, the rank's n-th UNSHARD
  // (in program order) waits until its (n-K)-th RESHARD has freed a buffer: a prefetch depth of K - 1, as
  // layer-wise ZeRO-3 runs (per_layer.hpp). That RESHARD must come before the UNSHARD in program order.
  int gathered_limit = 0;
  // Compute slowdown while an NCCL kernel runs on the same rank (analytic/contention.hpp, the one rule every
  // overlap pays; GpuOps::nccl_contention): a compute action (F, B, W, BW, RECOMPUTE) that any of the rank's
  // communication streams (p2p, intra, inter) overlaps for t seconds takes contention * t longer (simulator.hpp).
  double contention = 0;

  int stage_count() const { return static_cast<int>(stages.size()); }

  // Every stage costs f, b, w seconds (bw = b + w, recompute = f); every communication action `comm`
  // seconds and 0 bytes. Memory in units of one stage micro-batch: activation 1 (recompute 1: the stage is one
  // layer), everything else 0, so peak memory reads as in-flight micro-batches.
  static ActionCosts uniform(int pp, int v, double f, double b, double w, double comm = 0);

  // Throws SpecError naming the field when the table does not fit the program (stage count, rank count) or a
  // value is negative or not finite.
  void check(const schedule::Program&) const;
};

// `F=1,B=1,W=1[,BW=..][,R=..][,P2P=..][,UNSHARD=..][,REDUCE=..][,DP=..][,OPT=..]` (seconds; BW defaults to
// B + W, R to F, REDUCE to UNSHARD) -> uniform costs. Throws SpecError("costs", ...) on unknown keys or bad
// numbers.
ActionCosts parse_uniform_costs(const std::string& text, int pp, int v);

}  // namespace zeropp::simulate
