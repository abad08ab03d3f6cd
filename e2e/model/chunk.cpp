#include "e2e/model/chunk.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "e2e/model/block.hpp"

namespace zeropp::e2e {

// Everything one micro-batch keeps inside a chunk between its F, B and W (chunk.hpp describes the lifecycle).
struct ChunkStash {
  enum class State { forward_done, dropped, backward_input_done };
  int mb = 0;
  State state = State::forward_done;
  Buffer tokens, targets;          // i32 [N]: first chunk / last chunk
  std::vector<BlockStash> blocks;  // blocks[0].x is the chunk input (kept in recompute mode)
  Buffer output;                   // [N, C] non-last chunk
  Buffer input_grad;               // [N, C] non-first chunk
  Buffer demb;                     // [N, C] first chunk: gradient of the embedding output (for W)
  // head (last chunk)
  Buffer lnf_in, lnf, lnf_mean, lnf_rstd;
  Buffer probs;  // [N, V] softmax; becomes dlogits in B
  Buffer dlnf;   // [N, C]
  double loss = 0.0;
};

namespace {
const char* state_name(ChunkStash::State s) {
  switch (s) {
    case ChunkStash::State::forward_done:
      return "after F";
    case ChunkStash::State::dropped:
      return "after F without stash (needs RECOMPUTE)";
    case ChunkStash::State::backward_input_done:
      return "after B";
  }
  return "?";
}
}  // namespace

Chunk::Chunk(Backend& backend, const GptConfig& cfg, const ChunkSpec& spec, const TensorParallel& tp,
             const ContextParallel& cp)
    : backend_(&backend), layout_(cfg, spec, tp.size), tp_(tp), cp_(cp) {
  if (spec.num_blocks < 1) throw std::invalid_argument("Chunk: a chunk holds at least one block");
  if (spec.micro_batch < 1 || spec.loss_microbatches < 1) {
    throw std::invalid_argument("Chunk: micro_batch and loss_microbatches must be >= 1");
  }
  if (tp.size > 1) {
    if (tp.comm == nullptr) throw std::invalid_argument("Chunk: tensor parallelism needs a communicator");
    if (tp.rank < 0 || tp.rank >= tp.size) throw std::invalid_argument("Chunk: tp.rank outside [0, tp.size)");
    if (tp.sequence_parallel && (spec.micro_batch * (cfg.T / cp.size)) % tp.size != 0) {
      throw std::invalid_argument("Chunk: sequence parallelism needs b*T/cp divisible by tp");
    }
  }
  if (cp.size > 1) {
    if (cp.comm == nullptr) throw std::invalid_argument("Chunk: context parallelism needs a communicator");
    if (cp.rank < 0 || cp.rank >= cp.size) throw std::invalid_argument("Chunk: cp.rank outside [0, cp.size)");
    if (cfg.T % (2 * cp.size) != 0)
      throw std::invalid_argument("Chunk: context parallelism needs T divisible by 2*cp (load-balanced chunks)");
  }
}

Chunk::~Chunk() = default;
Chunk::Chunk(Chunk&&) noexcept = default;
Chunk& Chunk::operator=(Chunk&&) noexcept = default;

std::string Chunk::label() const {
  const ChunkSpec& s = spec();
  std::string l =
      "chunk[blocks " + std::to_string(s.first_block) + ".." + std::to_string(s.first_block + s.num_blocks - 1);
  if (s.has_embedding) l += ", +embedding";
  if (s.has_head) l += ", +head";
  if (tp_.size > 1) l += ", tp " + std::to_string(tp_.rank) + "/" + std::to_string(tp_.size);
  if (cp_.size > 1) l += ", cp " + std::to_string(cp_.rank) + "/" + std::to_string(cp_.size);
  return l + "]";
}

int Chunk::rows() const {
  const int n = spec().micro_batch * cp_.rows_per_sequence(config().T);
  return tp_.sequence_parallel && tp_.size > 1 ? n / tp_.size : n;
}

std::vector<int> Chunk::token_rows() const {
  const int N = rows(), T = config().T, Tl = cp_.rows_per_sequence(T);
  const int row0 = tp_.sequence_parallel && tp_.size > 1 ? tp_.rank * N : 0;  // first of the CP rows held
  std::vector<int> out(static_cast<std::size_t>(N));
  for (int r = 0; r < N; ++r) {
    const int local = row0 + r;  // row of the rank's [b, Tl] share
    out[static_cast<std::size_t>(r)] = local / Tl * T + cp_.position(local % Tl, T);
  }
  return out;
}

// embedding_forward places row i of a call at position (row0 + i) % T: one call per run of consecutive token
// indices (a single run without CP).
void Chunk::embed(ChunkStash& st, bool backward) {
  const GptConfig& g = config();
  const int C = g.C;
  const std::vector<int> idx = token_rows();
  const ParamSegment& wte = layout_.segment(ParamKind::wte);
  const Tensor flat = backward ? grads_ : params_;
  const Tensor table = flat.slice(wte.offset, wte.numel), pos_table = view_of(flat, ParamKind::wpe);
  for (std::size_t a = 0; a < idx.size();) {
    std::size_t e = a + 1;
    while (e < idx.size() && idx[e] == idx[e - 1] + 1) ++e;
    const auto r = static_cast<std::int64_t>(a);
    const int n = static_cast<int>(e - a);
    const Tensor tokens = st.tokens.slice(r, n);
    if (backward)
      backend_->embedding_backward_weight(table, pos_table, st.demb.slice(r * C, std::int64_t{n} * C), tokens, n, g.T,
                                          C, idx[a]);
    else
      backend_->embedding_forward(st.blocks[0].x.slice(r * C, std::int64_t{n} * C), tokens, table, pos_table, n, g.T,
                                  C, idx[a]);
    a = e;
  }
}

// ---------------------------------------------------------------- parameters

void Chunk::allocate_parameters() {
  owned_params_ = Buffer(*backend_, layout_.numel(), DType::f32);
  owned_grads_ = Buffer(*backend_, layout_.numel(), DType::f32);
  params_ = owned_params_.view();
  grads_ = owned_grads_.view();
  backend_->fill_zero(grads_);
}

void Chunk::bind_parameters(Tensor p) {
  if (!p.empty() && p.numel != layout_.numel()) {
    throw std::invalid_argument(label() + ": bind_parameters with " + std::to_string(p.numel) +
                                " elements, layout has " + std::to_string(layout_.numel()));
  }
  params_ = p;
}

void Chunk::bind_gradients(Tensor g) {
  if (!g.empty() && g.numel != layout_.numel()) {
    throw std::invalid_argument(label() + ": bind_gradients with " + std::to_string(g.numel) +
                                " elements, layout has " + std::to_string(layout_.numel()));
  }
  grads_ = g;
}

void Chunk::init_parameters(std::uint64_t seed) {
  if (params_.empty()) throw std::logic_error(label() + ": init_parameters without bound parameters");
  std::vector<float> host(static_cast<std::size_t>(layout_.numel()));
  e2e::init_parameters(layout_, tp_.rank, seed, host.data());
  backend_->copy_from_host(params_, host.data());
}

void Chunk::zero_gradients() {
  if (grads_.empty()) throw std::logic_error(label() + ": zero_gradients without bound gradients");
  backend_->fill_zero(grads_);
}

// ---------------------------------------------------------------- stash bookkeeping

ChunkStash& Chunk::stash_at(int mb, const char* action) const {
  auto it = stash_.find(mb);
  if (it == stash_.end()) {
    throw std::logic_error(label() + ": " + action + " of micro-batch " + std::to_string(mb) +
                           " without its forward (no stash)");
  }
  return *it->second;
}

bool Chunk::has_stash(int mb) const { return stash_.count(mb) != 0; }
int Chunk::live_microbatches() const { return static_cast<int>(stash_.size()); }
void Chunk::clear() { stash_.clear(); }

Tensor Chunk::output(int mb) const {
  ChunkStash& st = stash_at(mb, "output");
  if (st.output.empty())
    throw std::logic_error(label() + ": no output of micro-batch " + std::to_string(mb) +
                           " (last chunk, released, or after B)");
  return st.output.view();
}

void Chunk::release_output(int mb) { stash_at(mb, "release_output").output.reset(); }

Tensor Chunk::input_grad(int mb) const {
  ChunkStash& st = stash_at(mb, "input_grad");
  if (st.input_grad.empty()) {
    throw std::logic_error(label() + ": no input gradient of micro-batch " + std::to_string(mb) +
                           " (first chunk, released, or before B)");
  }
  return st.input_grad.view();
}

void Chunk::release_input_grad(int mb) { stash_at(mb, "release_input_grad").input_grad.reset(); }

double Chunk::loss(int mb) const {
  if (!spec().has_head) throw std::logic_error(label() + ": loss() on a chunk without the head");
  return stash_at(mb, "loss").loss;
}

// ---------------------------------------------------------------- compute

void Chunk::forward(int mb, const TokenBatch& batch, Tensor input, StashMode mode) {
  if (params_.empty()) throw std::logic_error(label() + ": forward without bound parameters");
  if (stash_.count(mb) != 0) {
    throw std::logic_error(label() + ": forward of micro-batch " + std::to_string(mb) + " twice (stash exists)");
  }
  const ChunkSpec& s = spec();
  const int N = rows(), C = config().C;
  auto st = std::make_unique<ChunkStash>();
  st->mb = mb;
  if (s.has_embedding || s.has_head) {
    if (batch.b != s.micro_batch || batch.T != config().T ||
        batch.inputs.size() != static_cast<std::size_t>(batch.b) * batch.T ||
        batch.targets.size() != batch.inputs.size()) {
      throw std::invalid_argument(label() + ": token batch is not [b=" + std::to_string(s.micro_batch) +
                                  ", T=" + std::to_string(config().T) + "]");
    }
  }
  if (s.has_embedding || s.has_head) {
    const std::vector<int> idx = token_rows();
    std::vector<std::int32_t> picked(idx.size());
    auto take = [&](Buffer& into, const std::vector<std::int32_t>& from) {
      for (std::size_t r = 0; r < idx.size(); ++r) picked[r] = from[static_cast<std::size_t>(idx[r])];
      into = Buffer(*backend_, N, DType::i32);
      backend_->copy_from_host(into.view(), picked.data());
    };
    if (s.has_embedding) take(st->tokens, batch.inputs);
    if (s.has_head) take(st->targets, batch.targets);
  }
  st->blocks.resize(static_cast<std::size_t>(s.num_blocks));
  if (!s.has_embedding) {
    if (input.numel != activation_numel()) {
      throw std::invalid_argument(label() + ": forward input has " + std::to_string(input.numel) +
                                  " elements, expected rows*C = " + std::to_string(activation_numel()));
    }
    st->blocks[0].x = Buffer(*backend_, std::int64_t{N} * C, backend_->compute_dtype());
    backend_->copy(st->blocks[0].x.view(), input, std::int64_t{N} * C);
  }
  run_forward(*st);
  if (mode == StashMode::recompute) {
    // Keep the chunk input (rebuilt for the first chunk from its tokens), the loss, the output to send.
    Buffer x0 = s.has_embedding ? Buffer{} : std::move(st->blocks[0].x);
    for (auto& b : st->blocks) b.clear();
    st->blocks[0].x = std::move(x0);
    st->lnf_in.reset();
    st->lnf.reset();
    st->lnf_mean.reset();
    st->lnf_rstd.reset();
    st->probs.reset();
    st->state = ChunkStash::State::dropped;
  }
  stash_.emplace(mb, std::move(st));
}

void Chunk::recompute(int mb) {
  ChunkStash& st = stash_at(mb, "RECOMPUTE");
  if (st.state != ChunkStash::State::dropped) {
    throw std::logic_error(label() + ": RECOMPUTE of micro-batch " + std::to_string(mb) + " " + state_name(st.state));
  }
  if (params_.empty()) throw std::logic_error(label() + ": RECOMPUTE without bound parameters");
  // The output was already produced (and sent); rebuild it into a buffer that is dropped again.
  Buffer sent = std::move(st.output);
  run_forward(st);
  st.output = std::move(sent);
  st.state = ChunkStash::State::forward_done;
}

void Chunk::run_forward(ChunkStash& st) {
  const ChunkSpec& s = spec();
  const GptConfig& g = config();
  const int N = rows(), C = g.C;
  const std::int64_t nc = std::int64_t{N} * C;
  const DType dt = backend_->compute_dtype();
  if (s.has_embedding) {
    st.blocks[0].x = Buffer(*backend_, nc, dt);
    embed(st, false);
  }
  BlockRunner runner(*backend_, block_shape(g, s.micro_batch, tp_, cp_), tp_, cp_);
  for (int i = 0; i < s.num_blocks; ++i) {
    Buffer* next;
    if (i + 1 < s.num_blocks) {
      next = &st.blocks[static_cast<std::size_t>(i) + 1].x;
    } else {
      next = s.has_head ? &st.lnf_in : &st.output;
    }
    *next = Buffer(*backend_, nc, dt);
    runner.forward(block_tensors(params_, layout_, i), st.blocks[static_cast<std::size_t>(i)], next->view());
  }
  if (s.has_head) {
    const ParamSegment head = layout_.head_weight();
    norm_forward(*backend_, g.rmsnorm(), st.lnf, st.lnf_mean, st.lnf_rstd, st.lnf_in.view(),
                 view_of(params_, ParamKind::lnf_w), view_of(params_, ParamKind::lnf_b), N, C);
    st.probs = Buffer(*backend_, std::int64_t{N} * g.V, dt);
    backend_->linear_forward(st.probs.view(), st.lnf.view(), params_.slice(head.offset, head.numel), Tensor{}, N, C,
                             g.V);
    Buffer losses(*backend_, N);
    backend_->crossentropy_forward(losses.view(), st.probs.view(), st.probs.view(), st.targets.view(), N, g.V);
    st.loss = backend_->sum(losses.view()) / N;
  }
}

void Chunk::backward_input(int mb, Tensor output_grad) {
  ChunkStash& st = stash_at(mb, "B");
  if (st.state != ChunkStash::State::forward_done) {
    throw std::logic_error(label() + ": B of micro-batch " + std::to_string(mb) + " " + state_name(st.state));
  }
  if (params_.empty()) throw std::logic_error(label() + ": B without bound parameters");
  const ChunkSpec& s = spec();
  const GptConfig& g = config();
  const int N = rows(), C = g.C;
  const std::int64_t nc = std::int64_t{N} * C;
  const DType dt = backend_->compute_dtype();
  Buffer dcur(*backend_, nc, dt);
  if (s.has_head) {
    const ParamSegment head = layout_.head_weight();
    // The objective is the mean over every token of the iteration (ChunkSpec::loss_microbatches).
    const float scale = 1.0f / (static_cast<float>(s.loss_microbatches) * s.micro_batch * g.T);
    backend_->crossentropy_backward(st.probs.view(), st.probs.view(), st.targets.view(), N, g.V, scale);
    st.dlnf = Buffer(*backend_, nc, dt);
    backend_->linear_backward_input(st.dlnf.view(), st.probs.view(), params_.slice(head.offset, head.numel), N, C, g.V,
                                    false);
    norm_backward_input(*backend_, g.rmsnorm(), dcur.view(), st.dlnf.view(), st.lnf_in.view(), st.lnf_mean.view(),
                        st.lnf_rstd.view(), view_of(params_, ParamKind::lnf_w), N, C, false);
  } else {
    if (output_grad.numel != nc) {
      throw std::invalid_argument(label() + ": B output gradient has " + std::to_string(output_grad.numel) +
                                  " elements, expected rows*C = " + std::to_string(nc));
    }
    backend_->copy(dcur.view(), output_grad, nc);
    st.output.reset();
  }
  BlockRunner runner(*backend_, block_shape(g, s.micro_batch, tp_, cp_), tp_, cp_);
  for (int i = s.num_blocks - 1; i >= 0; --i) {
    Buffer dx(*backend_, nc, dt);
    runner.backward_input(block_tensors(params_, layout_, i), st.blocks[static_cast<std::size_t>(i)], std::move(dcur),
                          dx.view());
    dcur = std::move(dx);
  }
  if (s.has_embedding) {
    st.demb = std::move(dcur);
  } else {
    st.input_grad = std::move(dcur);
  }
  st.state = ChunkStash::State::backward_input_done;
}

void Chunk::backward_weight(int mb) {
  ChunkStash& st = stash_at(mb, "W");
  if (st.state != ChunkStash::State::backward_input_done) {
    throw std::logic_error(label() + ": W of micro-batch " + std::to_string(mb) + " " + state_name(st.state));
  }
  if (grads_.empty()) throw std::logic_error(label() + ": W without bound gradients");
  const ChunkSpec& s = spec();
  const GptConfig& g = config();
  const int N = rows(), C = g.C;
  if (s.has_head) {
    const ParamSegment head = layout_.head_weight();
    backend_->linear_backward_weight(grads_.slice(head.offset, head.numel), Tensor{}, st.probs.view(), st.lnf.view(), N,
                                     C, g.V);
    norm_backward_weight(*backend_, g.rmsnorm(), view_of(grads_, ParamKind::lnf_w), view_of(grads_, ParamKind::lnf_b),
                         st.dlnf.view(), st.lnf_in.view(), st.lnf_mean.view(), st.lnf_rstd.view(), N, C);
  }
  BlockRunner runner(*backend_, block_shape(g, s.micro_batch, tp_, cp_), tp_, cp_);
  for (int i = s.num_blocks - 1; i >= 0; --i) {
    runner.backward_weight(block_tensors(grads_, layout_, i), st.blocks[static_cast<std::size_t>(i)]);
  }
  if (s.has_embedding) embed(st, true);
  stash_.erase(mb);
}

void Chunk::backward(int mb, Tensor output_grad) {
  backward_input(mb, output_grad);
  backward_weight(mb);
}

// ---------------------------------------------------------------- gradient helpers

double Chunk::grad_sum_squares() const {
  if (grads_.empty()) throw std::logic_error(label() + ": grad_sum_squares without bound gradients");
  std::vector<Tensor> parts;
  for (const ParamSegment& seg : layout_.segments()) {
    if (seg.tied_copy) continue;                    // counted on the first stage
    if (!seg.tp_sliced && tp_.rank != 0) continue;  // replicated under TP: counted on TP rank 0
    parts.push_back(grads_.slice(seg.offset, seg.numel));
  }
  return backend_->total_sum_squares(parts);  // one wait for the device, not one per segment
}

Tensor Chunk::view_of(Tensor flat, ParamKind kind) const {
  const ParamSegment* s = layout_.find(std::string(param_kind_name(kind)));
  return s == nullptr ? Tensor{} : flat.slice(s->offset, s->numel);
}

Tensor Chunk::tied_embedding_grad() const {
  const auto wte = layout_.wte();
  if (!wte || grads_.empty()) return {};
  return grads_.slice(wte->offset, wte->numel);
}

void Chunk::sync_sequence_parallel_grads() {
  if (!(tp_.sequence_parallel && tp_.size > 1)) return;
  if (grads_.empty()) throw std::logic_error(label() + ": sync_sequence_parallel_grads without bound gradients");
  sync_sequence_parallel_grads(grads_, 0, layout_.numel());
}

void Chunk::sync_sequence_parallel_grads(Tensor grads, std::int64_t base, std::int64_t n) {
  if (!(tp_.sequence_parallel && tp_.size > 1)) return;
  for (const ParamSegment& seg : layout_.segments()) {
    // Row-parallel biases see the all-gathered output gradient: already complete on every rank.
    if (seg.tp_sliced || seg.kind == ParamKind::attproj_b || seg.kind == ParamKind::fcproj_b) continue;
    const std::int64_t lo = std::max(seg.offset, base), hi = std::min(seg.offset + seg.numel, base + n);
    if (lo < hi) tp_.comm->all_reduce_sum(grads.slice(lo - base, hi - lo), hi - lo);
  }
}

}  // namespace zeropp::e2e
