#pragma once
// A chunk (virtual stage) of the model (GPT or Llama layers, gpt_config.hpp): what one schedule action F/B/W/RECOMPUTE
// of (stage, micro-batch) runs.
//
// Activation stash, one per micro-batch `mb`, owned by the chunk:
//   F(mb)          creates it (error if it exists). StashMode::keep saves everything B and W need;
//                  StashMode::recompute saves only the chunk input (and the micro-batch's tokens).
//   RECOMPUTE(mb)  re-runs the forward from the saved input and rebuilds the full stash, bit-identical to keep.
//   B(mb)          computes the input gradient, frees what only B needed and keeps W's part (each linear's input
//                  and output gradient, each layer norm's input statistics and output gradient).
//   W(mb)          accumulates the weight gradients into the bound gradient buffer and frees the stash.
//   backward(mb)   fused B then W.
// Out-of-order use (B before F, W before B, B after a recompute-mode F without RECOMPUTE, F twice) throws
// std::logic_error naming the chunk and the micro-batch: the runtime's schedule bugs surface as errors.
//
// Activations crossing a stage boundary are [rows(), C] in the backend's compute dtype, rows() = b*T (b*T/t
// rows under sequence parallelism; under context parallelism b*T/cp, the rank's chunks of every sequence, and of
// those the 1/t share under sequence parallelism). The chunk owns them: output(mb) is valid from F until B(mb)
// starts or release_output(mb); input_grad(mb) from B until W(mb) ends or release_input_grad(mb). The runtime
// sends from these views and receives into its own buffers, which it passes to forward()/backward_input() (copied
// in).
//
// Parameters and gradients are one flat buffer each (layout.hpp). They are bound, not owned, so ZeRO-3 can
// gather into a temporary buffer at UNSHARD and release it at RESHARD; allocate_parameters() makes owned
// buffers for the unsharded case. F, RECOMPUTE and B read the bound parameters; W reads only its stash and
// writes the bound gradients, so it may run after RESHARD. Gradients accumulate over micro-batches until
// zero_gradients().
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "e2e/backend/backend.hpp"
#include "e2e/data/token_batch.hpp"
#include "e2e/model/context_parallel.hpp"
#include "e2e/model/layout.hpp"
#include "e2e/model/tensor_parallel.hpp"

namespace zeropp::e2e {

enum class StashMode { keep, recompute };

struct ChunkStash;  // chunk.cpp

class Chunk {
 public:
  Chunk(Backend&, const GptConfig&, const ChunkSpec&, const TensorParallel& tp = {}, const ContextParallel& cp = {});
  ~Chunk();
  Chunk(Chunk&&) noexcept;
  Chunk& operator=(Chunk&&) noexcept;

  const ChunkLayout& layout() const { return layout_; }
  const ChunkSpec& spec() const { return layout_.spec(); }
  const GptConfig& config() const { return layout_.config(); }
  Backend& backend() const { return *backend_; }
  std::string label() const;  // "chunk[blocks 2..3, +emb]" for messages

  // ---- parameters and gradients ----
  void allocate_parameters();      // owned params + grads (grads zeroed), bound
  void bind_parameters(Tensor p);  // p.numel == layout().numel(); empty view unbinds
  void bind_gradients(Tensor g);
  Tensor parameters() const { return params_; }
  Tensor gradients() const { return grads_; }
  bool has_parameters() const { return !params_.empty(); }
  void init_parameters(std::uint64_t seed);  // deterministic (layout.hpp), into the bound buffer
  void zero_gradients();

  // ---- compute ----
  int rows() const;  // activation rows per micro-batch on this rank
  std::int64_t activation_numel() const { return static_cast<std::int64_t>(rows()) * config().C; }

  // `batch` supplies tokens (first chunk) and targets (last chunk); `input` is the [rows, C] activation from the
  // previous stage (ignored, may be empty, on the first chunk). Copies what it keeps.
  void forward(int mb, const TokenBatch& batch, Tensor input, StashMode mode = StashMode::keep);
  void recompute(int mb);
  // `output_grad` is the [rows, C] gradient from the next stage (ignored, may be empty, on the last chunk).
  void backward_input(int mb, Tensor output_grad);
  void backward_weight(int mb);
  void backward(int mb, Tensor output_grad);  // B then W

  Tensor output(int mb) const;  // non-last chunk
  void release_output(int mb);
  Tensor input_grad(int mb) const;  // non-first chunk
  void release_input_grad(int mb);
  double loss(int mb) const;  // last chunk: mean cross-entropy over this rank's rows of micro-batch mb

  // ---- stash bookkeeping ----
  bool has_stash(int mb) const;
  int live_microbatches() const;  // stashes alive (created by F, not yet freed by W)
  void clear();                   // drop every stash (e.g. after an aborted iteration)

  // ---- gradient helpers for the runtime ----
  // Sum of squared gradients this chunk owns, for the global norm: excludes the tied wte copy of a last stage;
  // under TP it counts replicated parameters only on tp rank 0 (sliced ones on every rank), so a sum over all
  // ranks counts every model parameter once.
  double grad_sum_squares() const;
  // The wte gradient (embedding's, or the head's copy); empty when the chunk holds no wte.
  Tensor tied_embedding_grad() const;
  // Under sequence parallelism: all-reduce the replicated parameters' gradients over the TP group. No-op
  // otherwise. Call once per iteration before clipping.
  void sync_sequence_parallel_grads();
  // The same on chunk elements [base, base + n) held in `grads` (a ZeRO-3 shard's gradients: TP ranks of one shard
  // index hold the same range, since their chunk layouts have the same offsets).
  void sync_sequence_parallel_grads(Tensor grads, std::int64_t base, std::int64_t n);

 private:
  Backend* backend_;
  ChunkLayout layout_;
  TensorParallel tp_;
  ContextParallel cp_;
  Buffer owned_params_, owned_grads_;
  Tensor params_, grads_;
  std::map<int, std::unique_ptr<ChunkStash>> stash_;

  ChunkStash& stash_at(int mb, const char* action) const;
  // The view of a segment outside the blocks (wpe, lnf_w, lnf_b) in `flat`; empty when the model has none.
  Tensor view_of(Tensor flat, ParamKind kind) const;
  void run_forward(ChunkStash&);
  // Index into the micro-batch's [b, T] tokens of each of this rank's rows (its CP chunks, its SP share).
  std::vector<int> token_rows() const;
  // The embedding (or its weight gradient) over runs of consecutive token positions of this rank's rows.
  void embed(ChunkStash&, bool backward);
};

}  // namespace zeropp::e2e
