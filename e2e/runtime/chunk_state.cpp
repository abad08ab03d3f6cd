#include "e2e/runtime/chunk_state.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace zeropp::e2e {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The communicator's element type for a backend tensor dtype (parameters are f32 or bf16).
DataType comm_type(DType t) {
  if (t == DType::f32) return DataType::f32;
  if (t == DType::bf16) return DataType::bf16;
  throw std::logic_error("chunk state: parameters cannot be " + std::string(dtype_name(t)));
}

}  // namespace

ChunkRanges ChunkRanges::make(std::int64_t numel, bool sharded, int z, int z_index, int dp, int dp_index,
                              bool dp_scatter) {
  ChunkRanges r;
  r.numel = numel;
  r.sharded = sharded;
  r.z = sharded ? z : 1;
  r.z_index = sharded ? z_index : 0;
  r.shard = ceil_div(numel, r.z);
  r.local_base = r.shard * r.z_index;
  r.local = std::clamp<std::int64_t>(numel - r.local_base, 0, r.shard);
  r.dp = dp;
  r.dp_index = dp_index;
  r.dp_scatter = dp_scatter && dp > 1;
  r.piece = r.dp_scatter ? ceil_div(r.shard, dp) : r.shard;
  r.local_padded = r.dp_scatter ? r.piece * dp : r.shard;
  r.opt_lo = r.dp_scatter ? r.piece * dp_index : 0;
  r.opt_hi = std::max(r.opt_lo, std::min(r.opt_lo + r.piece, r.local));
  return r;
}

ChunkState::ChunkState(Backend& backend, const GptConfig& cfg, const ChunkSpec& spec, const TensorParallel& tp,
                       const ContextParallel& cp, const ChunkRanges& ranges, const AdamWConfig& optim,
                       std::uint64_t seed, int tp_rank)
    : backend_(&backend), ranges_(ranges), chunk_(backend, cfg, spec, tp, cp) {
  const ChunkLayout& layout = chunk_.layout();
  if (layout.numel() != ranges_.numel)
    throw std::logic_error("ChunkState: ranges built for " + std::to_string(ranges_.numel) + " elements, chunk has " +
                           std::to_string(layout.numel()));
  local_params_ = Buffer(backend, ranges_.local_padded, DType::f32);
  local_grads_ = Buffer(backend, ranges_.local_padded, DType::f32);
  backend.fill_zero(local_params_.view());
  backend.fill_zero(local_grads_.view());

  // The whole chunk is initialised on the host (a function of the seed and the element's global identity) and
  // this rank keeps its part, so every sharding sees the reference's numbers.
  std::vector<float> host(static_cast<std::size_t>(layout.numel()));
  init_parameters(layout, tp_rank, seed, host.data());
  if (ranges_.local > 0)
    backend.copy_from_host(local_params_.slice(0, ranges_.local), host.data() + ranges_.local_base);

  if (backend.compute_dtype() != DType::f32) {
    compute_params_ = Buffer(backend, ranges_.local_padded, backend.compute_dtype());
    refresh_compute_params();
  }

  if (!ranges_.sharded) {
    chunk_.bind_parameters(model_params().slice(0, ranges_.numel));
    chunk_.bind_gradients(local_grads_.slice(0, ranges_.numel));
  }
  if (ranges_.opt_hi > ranges_.opt_lo)
    optim_ = std::make_unique<AdamW>(backend, optim, layout, ranges_.chunk_lo(), ranges_.chunk_hi());
}

void ChunkState::unshard(Communicator& z) {
  if (!ranges_.sharded) throw std::logic_error(chunk_.label() + ": UNSHARD of an unsharded chunk");
  if (gathered()) throw std::logic_error(chunk_.label() + ": UNSHARD while already gathered");
  const Tensor source = model_params();
  gathered_ = Buffer(*backend_, ranges_.shard * ranges_.z, source.dtype);
  z.all_gather(source.data, gathered_.view().data, static_cast<std::size_t>(ranges_.shard), comm_type(source.dtype));
  chunk_.bind_parameters(gathered_.slice(0, ranges_.numel));
}

void ChunkState::reshard() {
  if (!gathered()) throw std::logic_error(chunk_.label() + ": RESHARD without UNSHARD");
  chunk_.bind_parameters(Tensor{});
  gathered_.reset();
}

void ChunkState::ensure_grad_buffer() {
  if (!ranges_.sharded || has_grad_buffer()) return;
  full_grads_ = Buffer(*backend_, ranges_.shard * ranges_.z, DType::f32);
  backend_->fill_zero(full_grads_.view());
  chunk_.bind_gradients(full_grads_.slice(0, ranges_.numel));
}

void ChunkState::reduce_grad(Communicator& z) {
  if (!ranges_.sharded) throw std::logic_error(chunk_.label() + ": REDUCE_GRAD of an unsharded chunk");
  ensure_grad_buffer();
  scratch_ = Buffer(*backend_, ranges_.shard, DType::f32);
  z.reduce_scatter(full_grads_.view().data, scratch_.view().data, static_cast<std::size_t>(ranges_.shard),
                   DataType::f32);
  backend_->accumulate(local_grads_.slice(0, ranges_.shard), scratch_.view(), ranges_.shard);
  chunk_.bind_gradients(Tensor{});
  full_grads_.reset();
  scratch_.reset();
}

void ChunkState::keep_own_grad_shard() {
  if (!ranges_.sharded) throw std::logic_error(chunk_.label() + ": REDUCE_GRAD of an unsharded chunk");
  ensure_grad_buffer();
  backend_->accumulate(local_grads_.slice(0, ranges_.shard), full_grads_.slice(ranges_.local_base, ranges_.shard),
                       ranges_.shard);
  chunk_.bind_gradients(Tensor{});
  full_grads_.reset();
}

void ChunkState::sync_sequence_parallel_grads() {
  if (!ranges_.sharded) return chunk_.sync_sequence_parallel_grads();
  chunk_.sync_sequence_parallel_grads(local_grads_.view(), ranges_.local_base, ranges_.local);
}

void ChunkState::dp_sync(Communicator& dp) {
  if (has_grad_buffer())
    throw std::logic_error(chunk_.label() + ": DP_SYNC before the last REDUCE_GRAD of the iteration");
  if (ranges_.dp_scatter) {
    auto* base = static_cast<float*>(local_grads_.view().data);
    dp.reduce_scatter(base, base + ranges_.piece * ranges_.dp_index, static_cast<std::size_t>(ranges_.piece),
                      DataType::f32);
  } else {
    dp.all_reduce(local_grads_.view().data, static_cast<std::size_t>(ranges_.local_padded), DataType::f32);
  }
}

void ChunkState::optimizer_step(int t, float grad_scale, Communicator& dp) {
  if (gathered()) throw std::logic_error(chunk_.label() + ": OPT_STEP while the parameters are gathered");
  if (has_grad_buffer())
    throw std::logic_error(chunk_.label() + ": OPT_STEP with unreduced gradients (missing REDUCE_GRAD)");
  const std::int64_t n = ranges_.opt_hi - ranges_.opt_lo;
  if (optim_)
    optim_->step(local_params_.slice(ranges_.opt_lo, n), local_grads_.slice(ranges_.opt_lo, n), t, grad_scale);
  if (ranges_.dp_scatter) {
    auto* base = static_cast<float*>(local_params_.view().data);
    dp.all_gather(base + ranges_.piece * ranges_.dp_index, base, static_cast<std::size_t>(ranges_.piece),
                  DataType::f32);
  }
  if (!compute_params_.empty()) refresh_compute_params();
}

void ChunkState::refresh_compute_params() {
  backend_->convert(compute_params_.view(), local_params_.view(), ranges_.local_padded);
}

void ChunkState::zero_local_grads() { backend_->fill_zero(local_grads_.view()); }

double ChunkState::owned_grad_sum_squares(int tp_rank) {
  if (!ranges_.dp_scatter && ranges_.dp_index != 0) return 0.0;
  const std::int64_t lo = ranges_.chunk_lo(), hi = ranges_.chunk_hi();
  std::vector<Tensor> parts;
  for (const ParamSegment& seg : chunk_.layout().segments()) {
    if (seg.tied_copy || (!seg.tp_sliced && tp_rank != 0)) continue;
    const std::int64_t a = std::max(lo, seg.offset), b = std::min(hi, seg.offset + seg.numel);
    if (a < b) parts.push_back(local_grads_.slice(a - ranges_.local_base, b - a));
  }
  return backend_->total_sum_squares(parts);  // one wait for the device, not one per segment
}

}  // namespace zeropp::e2e
