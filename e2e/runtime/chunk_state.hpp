#pragma once
// One model chunk on one rank with the storage the plan gives it, and the ranges it owns.
//
// Ranges, in elements of the chunk's flat parameter buffer (N = layout().numel()):
//   shard  (ZeRO-3 over z) rank i of z holds [i*S, (i+1)*S), S = ceil(N/z); unsharded: the whole [0, N).
//          That is the rank's "local" copy, L elements starting at chunk offset `local_base`.
//   piece  (ZeRO-1 over dp) with a reduce-scatter DP sync, dp rank j updates local elements [j*D, (j+1)*D),
//          D = ceil(L/dp); with an all-reduce DP sync (or dp = 1) it updates all L.
// Local buffers are padded (to z*S gathered, dp*D local) so every collective has equal blocks; padding holds
// zeros and is never read by the model. The optimizer state covers only the piece's real elements.
//
// Buffers: local params and grads (always, fp32: the optimizer's master weights and the gradients it reads); when
// the backend computes in another dtype (bf16 on CUDA), a copy of the local params in that dtype, refreshed after
// every optimizer step, which the model binds and UNSHARD all-gathers (2-byte gathers); the gathered parameters between
// UNSHARD and RESHARD and the full (unsharded) gradient buffer from the first W after a REDUCE_GRAD until the next
// (ZeRO-3 only).
#include <cstdint>
#include <memory>

#include "e2e/backend/backend.hpp"
#include "e2e/comm/communicator.hpp"
#include "e2e/model/chunk.hpp"
#include "e2e/optim/adamw.hpp"

namespace zeropp::e2e {

struct ChunkRanges {
  std::int64_t numel = 0;  // N
  bool sharded = false;
  int z = 1, z_index = 0;
  std::int64_t shard = 0;       // S (= N unsharded)
  std::int64_t local_base = 0;  // chunk offset of local element 0
  std::int64_t local = 0;       // L, real elements in the local copy (the last shard may be short or empty)
  int dp = 1, dp_index = 0;
  bool dp_scatter = false;        // reduce-scatter DP sync (ZeRO-1 over dp)
  std::int64_t piece = 0;         // D, local elements per dp rank (= shard when not scattered)
  std::int64_t local_padded = 0;  // dp * D (or S)

  // The optimizer's range as local offsets [opt_lo, opt_hi) and chunk offsets [chunk_lo, chunk_hi).
  std::int64_t opt_lo = 0, opt_hi = 0;
  std::int64_t chunk_lo() const { return local_base + opt_lo; }
  std::int64_t chunk_hi() const { return local_base + opt_hi; }

  static ChunkRanges make(std::int64_t numel, bool sharded, int z, int z_index, int dp, int dp_index, bool dp_scatter);
};

class ChunkState {
 public:
  ChunkState(Backend&, const GptConfig&, const ChunkSpec&, const TensorParallel&, const ContextParallel&,
             const ChunkRanges&, const AdamWConfig&, std::uint64_t seed, int tp_rank);

  Chunk& chunk() { return chunk_; }
  const Chunk& chunk() const { return chunk_; }
  const ChunkRanges& ranges() const { return ranges_; }
  Tensor local_params() const { return local_params_.view(); }
  Tensor local_grads() const { return local_grads_.view(); }
  bool gathered() const { return !gathered_.empty(); }

  // ZeRO-3 (sharded) only.
  void unshard(Communicator& z);      // all-gather the shards, bind the full parameters
  void reshard();                     // unbind and free them
  void ensure_grad_buffer();          // bind a zeroed full gradient buffer if none is bound
  void reduce_grad(Communicator& z);  // reduce-scatter the full gradients, add to the local shard, free them
  void keep_own_grad_shard();         // test hook: as reduce_grad, but only this rank's gradients (no collective)
  bool has_grad_buffer() const { return !full_grads_.empty(); }

  // DP sync of the local gradients (all-reduce, or reduce-scatter into this rank's piece).
  void dp_sync(Communicator& dp);
  // AdamW step `t` on the optimizer's range; then (dp_scatter) all-gather the updated pieces over dp.
  void optimizer_step(int t, float grad_scale, Communicator& dp);
  void zero_local_grads();
  // Sequence parallelism's sum of the replicated parameters' gradients over TP (Chunk::sync_sequence_parallel_grads),
  // on the local shard when ZeRO-3-sharded (the full gradients are reduce-scattered and freed by then).
  void sync_sequence_parallel_grads();

  // Sum of squares of the gradients this rank owns after DP sync, counting every model parameter once over all
  // ranks: only the optimizer range; without the tied wte copy; replicated (non-TP-sliced) parameters on tp
  // rank 0 only; and with an all-reduce DP sync only on dp rank 0.
  double owned_grad_sum_squares(int tp_rank);

  // Bytes by category, for the memory report.
  std::int64_t param_bytes() const { return bytes(local_params_) + bytes(compute_params_) + bytes(gathered_); }
  std::int64_t grad_bytes() const { return bytes(local_grads_) + bytes(full_grads_) + bytes(scratch_); }
  std::int64_t optimizer_bytes() const { return 8 * (ranges_.opt_hi - ranges_.opt_lo); }

 private:
  static std::int64_t bytes(const Buffer& b) { return static_cast<std::int64_t>(b.view().bytes()); }
  Backend* backend_;
  ChunkRanges ranges_;
  Chunk chunk_;
  // The params the model reads: compute_params_ when it exists, else the fp32 local params themselves.
  Tensor model_params() const { return compute_params_.empty() ? local_params_.view() : compute_params_.view(); }
  void refresh_compute_params();  // compute_params_ = convert(local_params_)
  Buffer local_params_, local_grads_;
  Buffer compute_params_;  // empty when the backend's compute dtype is f32
  Buffer gathered_, full_grads_, scratch_;
  std::unique_ptr<AdamW> optim_;
};

}  // namespace zeropp::e2e
