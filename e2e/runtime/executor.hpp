#pragma once
// The executor: walks one rank's program (cost_model/schedule, lowered) action by action, once per iteration.
//   F / B / W / BW / RECOMPUTE  the chunk's compute (e2e/model/chunk.hpp) on (stage, micro-batch);
//   RECV_F / SEND_F             activations from / to the previous / next stage's rank (pp group);
//   RECV_B / SEND_B             gradients from / to the next / previous stage's rank;
//   UNSHARD / RESHARD           all-gather / free the chunk's parameters in the z group;
//   REDUCE_GRAD                 reduce-scatter the chunk's full gradients in the z group into the local shard;
//   DP_SYNC                     all-reduce or reduce-scatter the local gradients over dp;
//   OPT_STEP                    (the rank's last one) tied-embedding gradient sum, sequence-parallel gradient
//                               sync, global-norm clipping over all ranks, AdamW on the owned range, and the
//                               ZeRO-1 parameter all-gather.
// Micro-batch m of pipeline q is global micro-batch g = q * B + m of the iteration, so every plan trains on the
// reference's data (the tp and cp ranks of a pipeline share its micro-batches; cp ranks take their chunks of them).
// Errors (an out-of-order program, a NaN loss, a failed collective) throw; the trainer turns them into a job-wide
// abort.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "cost_model/schedule/plan_program.hpp"
#include "e2e/backend/backend.hpp"
#include "e2e/data/token_batch.hpp"
#include "e2e/model/gpt_config.hpp"
#include "e2e/optim/adamw.hpp"
#include "e2e/runtime/chunk_state.hpp"
#include "e2e/runtime/cp_comm_adapter.hpp"
#include "e2e/runtime/measured_trace.hpp"
#include "e2e/runtime/rank_groups.hpp"
#include "e2e/runtime/rank_layout.hpp"
#include "e2e/runtime/tp_comm_adapter.hpp"
#include "e2e/runtime/watchdog.hpp"

namespace zeropp::e2e {

struct ExecutorOptions {
  int micro_batch = 1;             // b
  bool sequence_parallel = false;  // with tp > 1
  bool ulysses = false;            // cp_kind ulysses (else ring) with cp > 1
  AdamWConfig optim;
  std::uint64_t seed = 1234;     // parameter init (the reference uses the same)
  Watchdog* watchdog = nullptr;  // times every communication action (and the compute a device queued before it)
  // Test hook (--skip-grad-sync): every rank holding this virtual stage keeps its own gradients where the program
  // reduce-scatters (REDUCE_GRAD) and skips the stage's DP_SYNC: a deliberately wrong sync that the reference
  // check must catch. -1: off.
  int skip_grad_sync_stage = -1;
};

struct IterationResult {
  double loss = 0.0;       // mean over every token of the iteration (all ranks agree)
  double grad_norm = 0.0;  // global L2 norm before clipping
  float clip_scale = 1.0f;
  std::int64_t actions = 0;
};

// Bytes held per category, at the moment of the peak of each; total and activations from the backend
// allocator's own peak (every Buffer), not from samples between actions.
struct MemoryPeaks {
  std::int64_t params = 0, grads = 0, optimizer = 0, comm = 0, activations = 0, total = 0;
};

class Executor : private WaitSite {
 public:
  Executor(Backend&, RankGroups&, const RankLayout&, const schedule::PlanProgram&, const GptConfig&, const DataSource&,
           const ExecutorOptions&);

  // Runs iteration `step` (0-based). Events go to `trace` when given.
  IterationResult run_iteration(int step, MeasuredTrace* trace);

  const schedule::RankProgram& program() const { return *program_; }
  std::vector<std::unique_ptr<ChunkState>>& chunks() { return chunks_; }
  // chunks()[c] runs virtual stage c * pp + pipeline rank.
  int stage_of_chunk(int c) const { return c * layout_.pp() + groups_->coords.pp; }
  const MemoryPeaks& memory_peaks() const { return peaks_; }
  void reset_memory_peaks();

 private:
  void execute(const schedule::Action&, int step);
  void forward(int stage, int mb, int step);
  void backward_input(int stage, int mb);
  void fused_backward(int stage, int mb);
  void finish_iteration(int step);  // the OPT_STEP work
  void sync_tied_embedding();
  void sample_memory(std::int64_t held_before);
  std::int64_t model_state_and_comm_bytes() const;
  ChunkState& chunk_for(int stage, const schedule::Action&);
  int tag(int direction, int stage, int mb) const;
  Buffer take(std::map<std::pair<int, int>, Buffer>&, int stage, int mb);
  // For the watchdog: `detail` = step * (actions + 1) + index of the action (actions: the final flush).
  std::string describe(std::int64_t detail) const override;
  std::string collective_members(const schedule::Action&) const;  // "; the z group is ranks 0, 1, ..."
  std::string counterpart(const schedule::Action&) const;  // "from rank 0", "all-gather in the z group", ...
  int pipeline_peer(int stage) const;                      // world rank holding `stage` in this pipeline

  Backend* backend_;
  RankGroups* groups_;
  RankLayout layout_;
  const schedule::PlanProgram* plan_;
  const schedule::RankProgram* program_;
  GptConfig cfg_;
  const DataSource* data_;
  ExecutorOptions opt_;
  std::unique_ptr<TensorParallelCommAdapter> tp_comm_;
  std::unique_ptr<ContextParallelCommAdapter> cp_comm_;
  std::vector<std::unique_ptr<ChunkState>> chunks_;
  std::set<std::pair<int, int>> recomputed_;  // (stage, mb) with a RECOMPUTE in the program
  std::size_t last_opt_step_ = 0;             // index of the rank's last OPT_STEP
  int pipeline_ = 0;                          // this rank's pipeline (data) index
  int global_microbatches_ = 1;               // M = B * pipelines

  // Per iteration.
  std::map<std::pair<int, int>, Buffer> act_in_, grad_in_;  // received activations / gradients
  std::map<std::pair<int, int>, Buffer> grad_out_;  // input gradients kept past a fused BW (which frees the stash)
  std::int64_t comm_buffer_bytes_ = 0;
  double loss_sum_ = 0.0;
  IterationResult result_;
  MemoryPeaks peaks_;
};

}  // namespace zeropp::e2e
