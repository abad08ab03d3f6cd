#pragma once
// Event-driven execution of a schedule program (compute-only or lowered) with an ActionCosts table.
//
// Every rank has five streams: compute (F, B, W, BW, RECOMPUTE, RESHARD, OPT_STEP), two p2p streams, one per
// direction, like the two NCCL peer communicators of a pipeline rank (p2p_next: SEND_F and RECV_B with the next
// stage's rank; p2p_prev: RECV_F and SEND_B with the previous one), the intra-node collective stream (UNSHARD,
// REDUCE_GRAD in the ZeRO-3 group) and the inter-node collective stream (DP_SYNC). A stream runs its actions in
// the rank's program order; an action starts when its stream is free and its dependencies are done:
//   F(s,m)      <- RECV_F(s,m) if the program has it, else F(s-1,m) on its rank (+ the p2p time of the message)
//   B/BW(s,m)   <- F(s,m), RECOMPUTE(s,m) if any, RECV_B(s,m) or else B/BW(s+1,m) (+ p2p time)
//   W(s,m)      <- B(s,m);   RECOMPUTE(s,m) <- F(s,m)
//   F/B/BW/RECOMPUTE of a sharded stage <- the stage's latest UNSHARD before it in program order
//   SEND_F(s,m) <- F(s,m);   SEND_B(s,m) <- B/BW(s,m);   RECV_F(s,m) <- SEND_F(s-1,m);   RECV_B <- SEND_B(s+1,m)
//   UNSHARD     <- with ActionCosts::gathered_limit K > 0, the rank's n-th UNSHARD <- its (n-K)-th RESHARD
//   RESHARD(s)  <- latest UNSHARD(s);   REDUCE_GRAD(s) <- latest W/BW(s) before it;   DP_SYNC(s) <- latest
//   REDUCE_GRAD(s) (or W/BW(s));   OPT_STEP <- everything before it on every stream of its rank.
// Sends are eager (the sender's stream is busy for latency + bytes/bandwidth, the data lands when it ends); a
// receive completes when its stream reaches it and the data has landed. With no contention beyond stream order
// the event simulation is exactly a longest-path pass over this dependency graph, which is how it runs:
// O(actions), flat arrays, no maps or strings on the hot path. With ActionCosts::contention > 0 a second pass
// runs with every compute action stretched by contention x its overlap with the rank's communication streams in the
// first pass (compute slowed by NCCL kernels beside it). A cycle or a missing partner is reported as a
// SimulationError naming the rank and the action, never an endless wait.
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cost_model/schedule/action.hpp"
#include "cost_model/simulate/costs.hpp"

namespace zeropp::simulate {

enum class Stream : std::uint8_t { compute, p2p_next, p2p_prev, intra, inter };
inline constexpr int kStreams = 5;
std::string_view name(Stream);  // "compute", "p2p_next", ...
Stream stream_of(schedule::ActionType);

// Bytes moved, summed over the simulated actions of all ranks of the pipeline, by category.
struct CommBytes {
  double pp = 0;    // SEND_F / SEND_B (and the implicit transfers of a compute-only program)
  double zero = 0;  // UNSHARD, REDUCE_GRAD (ZeRO-3 group)
  double dp = 0;    // DP_SYNC, OPT_STEP (ZeRO-1 parameter all-gather)
  double total() const { return pp + zero + dp; }
};

// What a rank holds at its memory peak, by part, and when the peak occurs (the first instant it is reached).
enum class MemoryPart : std::uint8_t {
  static_state,     // ActionCosts::static_bytes: parameter, gradient and optimizer shards
  activations,      // F start to B end: a micro-batch's activations, or its checkpoint when recomputed
  recompute,        // RECOMPUTE start to B end: the one layer rebuilt at a time
  w_buffers,        // B end to W end: what the deferred W still needs
  gathered_params,  // UNSHARD start to RESHARD: a ZeRO-3 chunk's gathered parameters
  grad_buffers,     // first W/BW to REDUCE_GRAD end: a chunk's unsharded gradients
};
inline constexpr int kMemoryParts = 6;
std::string_view name(MemoryPart);  // "static", "activations", "recompute", "w_buffers", ...

struct PeakMemory {
  std::array<double, kMemoryParts> bytes{};  // by MemoryPart; they add up to RankSummary::peak_memory_bytes
  double time = 0;                           // seconds; 0 with action_index -1: the static state alone
  int action_index = -1;                     // in the rank's program, the action whose start or end reached it
  bool at_start = true;                      // whether the peak came at that action's start (else at its end)
  schedule::Action action;                   // that action (valid when action_index >= 0)
};

struct RankSummary {
  double compute = 0;                    // seconds the compute stream is busy
  double exposed_comm = 0;               // seconds some communication stream is busy while the compute stream is idle
  double bubble = 0;                     // makespan - compute - exposed_comm: nothing runs
  double peak_memory_bytes = 0;          // static + activations + buffers + gathered parameters, at its peak
  int peak_activation_microbatches = 0;  // most (stage, micro-batch) pairs between F start and B/BW end
  PeakMemory peak;                       // peak_memory_bytes by part, and when
  CommBytes comm_bytes;                  // bytes of this rank's actions
};

struct MemoryPoint {
  double time = 0;   // seconds
  double bytes = 0;  // allocated after the events at `time`
};

struct SimOptions {
  bool memory_timeline = false;  // keep every memory change per rank (off for large runs: peaks are kept anyway)
};

struct SimResult {
  int pp = 0;
  // Flat over all actions, rank-major in program order: rank r's actions are [rank_offset[r], rank_offset[r+1]).
  std::vector<std::int32_t> rank_offset;
  std::vector<double> start;
  std::vector<double> end;
  std::vector<Stream> stream;

  double makespan = 0;
  std::vector<RankSummary> ranks;
  CommBytes comm_bytes;                          // all ranks
  std::vector<std::vector<MemoryPoint>> memory;  // per rank, when SimOptions::memory_timeline

  std::size_t actions() const { return start.size(); }
  std::size_t id(int rank, int index) const { return static_cast<std::size_t>(rank_offset[rank]) + index; }
  // Mean over ranks of bubble / makespan: the share of the timeline where a rank does nothing.
  double bubble_fraction() const;
  std::vector<int> peak_activation_microbatches() const;
};

// A program that cannot run: a missing partner (a RECV without its SEND, a B without its F), an action on a
// stage its rank does not own, a duplicated action, or a deadlock. rank() and index() locate the action.
class SimulationError : public std::runtime_error {
 public:
  SimulationError(int rank, int index, const std::string& message)
      : std::runtime_error(message), rank_(rank), index_(index) {}
  int rank() const { return rank_; }
  int index() const { return index_; }

 private:
  int rank_;
  int index_;
};

SimResult simulate(const schedule::Program&, const ActionCosts&, const SimOptions& = {});

}  // namespace zeropp::simulate
