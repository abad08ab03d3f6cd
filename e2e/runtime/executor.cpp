#include "e2e/runtime/executor.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace zeropp::e2e {
namespace {

using schedule::Action;
using schedule::ActionType;

constexpr int kActivation = 0;  // tag direction: forward activations
constexpr int kGradient = 1;    // tag direction: backward gradients

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

Executor::Executor(Backend& backend, RankGroups& groups, const RankLayout& layout, const schedule::PlanProgram& plan,
                   const GptConfig& cfg, const DataSource& data, const ExecutorOptions& opt)
    : backend_(&backend), groups_(&groups), layout_(layout), plan_(&plan), cfg_(cfg), data_(&data), opt_(opt) {
  const schedule::Program& prog = plan.program;
  const RankCoords& c = groups.coords;
  if (prog.pp != layout.pp())
    throw std::invalid_argument(fmt::format("program has pp={}, layout pp={}", prog.pp, layout.pp()));
  program_ = &prog.ranks.at(static_cast<std::size_t>(c.pp));
  pipeline_ = layout.pipeline(c);
  global_microbatches_ = prog.microbatches * layout.pipelines();

  TensorParallel tp;
  if (layout.tp() > 1) {
    tp_comm_ = std::make_unique<TensorParallelCommAdapter>(*groups.tp);
    tp.size = layout.tp();
    tp.rank = c.tp;
    tp.sequence_parallel = opt.sequence_parallel;
    tp.comm = tp_comm_.get();
  }
  ContextParallel cp;
  if (layout.cp() > 1) {
    cp_comm_ = std::make_unique<ContextParallelCommAdapter>(*groups.cp);
    cp.size = layout.cp();
    cp.rank = c.cp;
    cp.comm = cp_comm_.get();
    cp.ulysses = opt.ulysses;
  }
  for (int chunk = 0; chunk < prog.v; ++chunk) {
    const int stage = chunk * layout.pp() + c.pp;
    const ChunkSpec spec = chunk_spec_for_stage(cfg, plan.layout, stage, opt.micro_batch, global_microbatches_);
    const ChunkLayout chunk_layout(cfg, spec, layout.tp());
    const ChunkRanges ranges = ChunkRanges::make(chunk_layout.numel(), plan.data_parallel.shard_group > 1,
                                                 layout.shard_size(), layout.shard_index(c), layout.sync_size(),
                                                 layout.sync_index(c), plan.data_parallel.mode == DpSyncMode::reduce_scatter);
    chunks_.push_back(std::make_unique<ChunkState>(backend, cfg, spec, tp, cp, ranges, opt.optim, opt.seed, c.tp));
  }

  bool has_opt_step = false;
  for (std::size_t i = 0; i < program_->size(); ++i) {
    const Action& a = (*program_)[i];
    if (a.type == ActionType::RECOMPUTE) recomputed_.insert({a.stage, a.microbatch});
    if (a.type == ActionType::OPT_STEP) {
      last_opt_step_ = i;
      has_opt_step = true;
    }
  }
  if (!has_opt_step) throw std::invalid_argument(fmt::format("the program of pipeline rank {} has no OPT_STEP", c.pp));
  reset_memory_peaks();
}

void Executor::reset_memory_peaks() {
  peaks_ = {};
  backend_->reset_peak();
  sample_memory(model_state_and_comm_bytes());
}

int Executor::tag(int direction, int stage, int mb) const {
  const schedule::Program& prog = plan_->program;
  return (direction * prog.stages() + stage) * prog.microbatches + mb;
}

ChunkState& Executor::chunk_for(int stage, const Action& a) {
  const int pp = layout_.pp();
  if (stage < 0 || stage % pp != groups_->coords.pp || stage / pp >= static_cast<int>(chunks_.size()))
    throw std::logic_error(fmt::format("action {} names stage {}, not held by pipeline rank {}", schedule::to_string(a),
                                       stage, groups_->coords.pp));
  return *chunks_[static_cast<std::size_t>(stage / pp)];
}

Buffer Executor::take(std::map<std::pair<int, int>, Buffer>& from, int stage, int mb) {
  auto it = from.find({stage, mb});
  if (it == from.end()) return Buffer{};
  Buffer b = std::move(it->second);
  from.erase(it);
  comm_buffer_bytes_ -= static_cast<std::int64_t>(b.view().bytes());
  return b;
}

IterationResult Executor::run_iteration(int step, MeasuredTrace* trace) {
  result_ = {};
  loss_sum_ = 0.0;
  const std::int64_t slots = static_cast<std::int64_t>(program_->size()) + 1;  // the actions and the flush
  for (std::size_t i = 0; i < program_->size(); ++i) {
    const Action& a = (*program_)[i];
    const double t0 = trace ? now_seconds() : 0.0;
    const std::int64_t held_before = model_state_and_comm_bytes();
    backend_->reset_peak();  // the allocator's peak inside this action
    {
      const Watchdog::Scope watched(schedule::is_compute(a.type) ? nullptr : opt_.watchdog, *this,
                                    step * slots + static_cast<std::int64_t>(i));
      if (a.type == ActionType::OPT_STEP) {
        if (i == last_opt_step_) finish_iteration(step);
      } else {
        execute(a, step);
      }
    }
    if (trace) trace->record(a, step, t0, now_seconds());
    sample_memory(held_before);
    ++result_.actions;
  }
  {
    const Watchdog::Scope watched(opt_.watchdog, *this, step * slots + slots - 1);
    groups_->pp->flush();
  }
  sample_memory(model_state_and_comm_bytes());
  if (!act_in_.empty() || !grad_in_.empty() || !grad_out_.empty())
    throw std::logic_error(fmt::format("pipeline rank {}: {} activations / gradients received or kept but never used",
                                       groups_->coords.pp, act_in_.size() + grad_in_.size() + grad_out_.size()));
  return result_;
}

int Executor::pipeline_peer(int stage) const {
  RankCoords c = groups_->coords;
  c.pp = (stage % layout_.pp() + layout_.pp()) % layout_.pp();
  return layout_.world_rank(c);
}

std::string Executor::counterpart(const Action& a) const {
  switch (a.type) {
    case ActionType::RECV_F:
      return fmt::format("from rank {}", pipeline_peer(a.stage - 1));
    case ActionType::SEND_F:
      return fmt::format("to rank {}", pipeline_peer(a.stage + 1));
    case ActionType::RECV_B:
      return fmt::format("from rank {}", pipeline_peer(a.stage + 1));
    case ActionType::SEND_B:
      return fmt::format("to rank {}", pipeline_peer(a.stage - 1));
    case ActionType::UNSHARD:
      return fmt::format("all-gather in the {} group", groups_->z->group());
    case ActionType::REDUCE_GRAD:
      return fmt::format("reduce-scatter in the {} group", groups_->z->group());
    case ActionType::DP_SYNC:
      return "gradient sync in the dp group";
    case ActionType::OPT_STEP:
      return "the optimizer step's collectives";
    default:
      return "";
  }
}

std::string Executor::describe(std::int64_t detail) const {
  const std::int64_t slots = static_cast<std::int64_t>(program_->size()) + 1;
  const std::int64_t step = detail / slots;
  const auto index = static_cast<std::size_t>(detail % slots);
  if (index == program_->size())
    return fmt::format("the completion of this rank's pipeline sends at the end of step {}", step);
  const Action& a = (*program_)[index];
  std::string what = fmt::format("{} stage {}", schedule::name(a.type), a.stage);
  if (a.microbatch != schedule::kNoMicrobatch) what += fmt::format(" micro-batch {}", a.microbatch);
  if (const std::string other = counterpart(a); !other.empty()) what += " (" + other + ")";
  return fmt::format("{} at step {}{}", what, step, collective_members(a));
}

// A collective waits for every member of its group and cannot tell which one has not arrived: name the group's
// ranks (a point-to-point wait names its one peer in counterpart()).
std::string Executor::collective_members(const Action& a) const {
  const bool shard = a.type == ActionType::UNSHARD || a.type == ActionType::REDUCE_GRAD;
  if (!shard && a.type != ActionType::DP_SYNC) return "";
  const std::vector<int> ranks = layout_.grid().members(shard ? layout_.shard_mask() : layout_.sync_mask(),
                                                       layout_.world_rank(groups_->coords));
  return fmt::format(
      "; the {} group is ranks {}, and a collective cannot tell which of them has not arrived: the "
      "one that reports no timeout of its own is stopped or hung",
      shard ? groups_->z->group() : groups_->dp->group(), fmt::join(ranks, ", "));
}

void Executor::execute(const Action& a, int step) {
  const int pp = layout_.pp();
  Communicator& pipe = *groups_->pp;
  const DataType dt = comm_type(backend_->compute_dtype());
  // Communication reads what queued compute writes: a device backend must have finished it (no-op on CPU).
  if (!schedule::is_compute(a.type)) backend_->synchronize();
  switch (a.type) {
    case ActionType::F:
      forward(a.stage, a.microbatch, step);
      return;
    case ActionType::RECOMPUTE:
      chunk_for(a.stage, a).chunk().recompute(a.microbatch);
      return;
    case ActionType::B:
      backward_input(a.stage, a.microbatch);
      return;
    case ActionType::W: {
      ChunkState& cs = chunk_for(a.stage, a);
      cs.ensure_grad_buffer();
      cs.chunk().backward_weight(a.microbatch);
      return;
    }
    case ActionType::BW:
      fused_backward(a.stage, a.microbatch);
      return;
    case ActionType::RECV_F: {
      ChunkState& cs = chunk_for(a.stage, a);
      Buffer buf(*backend_, cs.chunk().activation_numel(), backend_->compute_dtype());
      pipe.recv(buf.view().data, static_cast<std::size_t>(buf.numel()), dt, (a.stage - 1) % pp,
                tag(kActivation, a.stage, a.microbatch));
      comm_buffer_bytes_ += static_cast<std::int64_t>(buf.view().bytes());
      act_in_[{a.stage, a.microbatch}] = std::move(buf);
      return;
    }
    case ActionType::SEND_F: {
      Chunk& chunk = chunk_for(a.stage, a).chunk();
      const Tensor out = chunk.output(a.microbatch);
      pipe.send(out.data, static_cast<std::size_t>(out.numel), dt, (a.stage + 1) % pp,
                tag(kActivation, a.stage + 1, a.microbatch));
      chunk.release_output(a.microbatch);
      return;
    }
    case ActionType::RECV_B: {
      ChunkState& cs = chunk_for(a.stage, a);
      Buffer buf(*backend_, cs.chunk().activation_numel(), backend_->compute_dtype());
      pipe.recv(buf.view().data, static_cast<std::size_t>(buf.numel()), dt, (a.stage + 1) % pp,
                tag(kGradient, a.stage, a.microbatch));
      comm_buffer_bytes_ += static_cast<std::int64_t>(buf.view().bytes());
      grad_in_[{a.stage, a.microbatch}] = std::move(buf);
      return;
    }
    case ActionType::SEND_B: {
      Chunk& chunk = chunk_for(a.stage, a).chunk();
      const Buffer kept = take(grad_out_, a.stage, a.microbatch);
      const Tensor g = kept.empty() ? chunk.input_grad(a.microbatch) : kept.view();
      pipe.send(g.data, static_cast<std::size_t>(g.numel), dt, (a.stage - 1) % pp,
                tag(kGradient, a.stage - 1, a.microbatch));
      if (kept.empty()) chunk.release_input_grad(a.microbatch);
      return;
    }
    case ActionType::UNSHARD:
      chunk_for(a.stage, a).unshard(*groups_->z);
      return;
    case ActionType::RESHARD:
      chunk_for(a.stage, a).reshard();
      return;
    case ActionType::REDUCE_GRAD:
      if (a.stage == opt_.skip_grad_sync_stage)
        chunk_for(a.stage, a).keep_own_grad_shard();
      else
        chunk_for(a.stage, a).reduce_grad(*groups_->z);
      return;
    case ActionType::DP_SYNC:
      if (a.stage != opt_.skip_grad_sync_stage) chunk_for(a.stage, a).dp_sync(*groups_->dp);
      return;
    case ActionType::OPT_STEP:
      return;  // handled by run_iteration
  }
  throw std::logic_error(fmt::format("unknown action type {}", static_cast<int>(a.type)));
}

void Executor::forward(int stage, int mb, int step) {
  const Action a{ActionType::F, stage, mb};
  ChunkState& cs = chunk_for(stage, a);
  Chunk& chunk = cs.chunk();
  const int g = pipeline_ * plan_->program.microbatches + mb;
  const TokenBatch batch = data_->batch(step, g, global_microbatches_, opt_.micro_batch, cfg_.T);
  const StashMode mode = recomputed_.count({stage, mb}) ? StashMode::recompute : StashMode::keep;

  if (stage == 0) {
    chunk.forward(mb, batch, Tensor{}, mode);
  } else if (Buffer in = take(act_in_, stage, mb); !in.empty()) {
    chunk.forward(mb, batch, in.view(), mode);
  } else {
    // The previous stage runs on this rank too (pp = 1 with several chunks): no message, hand it over.
    ChunkState& prev = chunk_for(stage - 1, a);
    chunk.forward(mb, batch, prev.chunk().output(mb), mode);
    prev.chunk().release_output(mb);
  }

  if (chunk.spec().has_head) {
    const double loss = chunk.loss(mb);
    if (!std::isfinite(loss))
      throw std::runtime_error(
          fmt::format("loss is {} at step {} micro-batch {} (global {}) on stage {}", loss, step, mb, g, stage));
    // Without sequence parallelism every tp rank computes the same loss: count it once. Each cp rank's is the mean
    // over its equal share of the tokens: counted on every one and divided by cp below.
    const bool counted = layout_.tp() == 1 || opt_.sequence_parallel || groups_->coords.tp == 0;
    if (counted) loss_sum_ += loss;
  }
}

void Executor::backward_input(int stage, int mb) {
  const Action a{ActionType::B, stage, mb};
  Chunk& chunk = chunk_for(stage, a).chunk();
  if (chunk.spec().has_head) {
    chunk.backward_input(mb, Tensor{});
  } else if (Buffer g = take(grad_in_, stage, mb); !g.empty()) {
    chunk.backward_input(mb, g.view());
  } else if (Buffer kept = take(grad_out_, stage + 1, mb); !kept.empty()) {
    chunk.backward_input(mb, kept.view());  // the next stage on this rank ran a fused BW
  } else {
    ChunkState& next = chunk_for(stage + 1, a);
    chunk.backward_input(mb, next.chunk().input_grad(mb));
    next.chunk().release_input_grad(mb);
  }
}

void Executor::fused_backward(int stage, int mb) {
  const Action a{ActionType::BW, stage, mb};
  ChunkState& cs = chunk_for(stage, a);
  cs.ensure_grad_buffer();
  backward_input(stage, mb);
  // W frees the stash, input gradient included: keep a copy for the SEND_B (or the previous local stage's B).
  if (!cs.chunk().spec().has_embedding) {
    const Tensor g = cs.chunk().input_grad(mb);
    Buffer copy(*backend_, g.numel, g.dtype);
    backend_->copy(copy.view(), g, g.numel);
    comm_buffer_bytes_ += static_cast<std::int64_t>(copy.view().bytes());
    grad_out_[{stage, mb}] = std::move(copy);
    cs.chunk().release_input_grad(mb);
  }
  cs.chunk().backward_weight(mb);
}

void Executor::sync_tied_embedding() {
  const RankCoords& c = groups_->coords;
  if (!cfg_.tied) return;                    // an untied head has its own weight: nothing to share
  if (plan_->program.stages() == 1) return;  // one stage: the head uses the embedding's wte itself
  if (c.pp != 0 && c.pp != layout_.pp() - 1) return;
  const std::int64_t vc = static_cast<std::int64_t>(cfg_.V) * cfg_.C;
  Buffer sum(*backend_, vc, DType::f32);
  backend_->fill_zero(sum.view());
  comm_buffer_bytes_ += static_cast<std::int64_t>(sum.view().bytes());
  // wte sits at chunk offset 0 in both the first and the last stage: add this rank's owned part of each.
  auto owned = [&](ChunkState& cs, std::int64_t& lo, std::int64_t& hi) {
    lo = std::max<std::int64_t>(0, cs.ranges().chunk_lo());
    hi = std::min<std::int64_t>(vc, cs.ranges().chunk_hi());
    return cs.chunk().layout().wte().has_value() && lo < hi;
  };
  for (auto& cs : chunks_) {
    std::int64_t lo, hi;
    if (owned(*cs, lo, hi))
      backend_->accumulate(sum.slice(lo, hi - lo), cs->local_grads().slice(lo - cs->ranges().local_base, hi - lo),
                           hi - lo);
  }
  groups_->embed->all_reduce(sum.view().data, static_cast<std::size_t>(vc), DataType::f32);
  for (auto& cs : chunks_) {
    std::int64_t lo, hi;
    if (owned(*cs, lo, hi))
      backend_->copy(cs->local_grads().slice(lo - cs->ranges().local_base, hi - lo), sum.slice(lo, hi - lo), hi - lo);
  }
  comm_buffer_bytes_ -= static_cast<std::int64_t>(sum.view().bytes());
}

void Executor::finish_iteration(int step) {
  backend_->synchronize();
  if (opt_.sequence_parallel && layout_.tp() > 1)
    for (auto& cs : chunks_) cs->sync_sequence_parallel_grads();
  sync_tied_embedding();

  const int tp_rank = groups_->coords.tp;
  double partial[2] = {0.0, loss_sum_};
  for (auto& cs : chunks_) partial[0] += cs->owned_grad_sum_squares(tp_rank);
  groups_->world->all_reduce(partial, 2, DataType::f64);
  const double loss_divisor = static_cast<double>(global_microbatches_) *
                              (opt_.sequence_parallel && layout_.tp() > 1 ? layout_.tp() : 1) * layout_.cp();
  result_.loss = partial[1] / loss_divisor;
  result_.grad_norm = std::sqrt(partial[0]);
  if (!std::isfinite(partial[0]))
    throw std::runtime_error(fmt::format("gradient norm is {} at step {}", result_.grad_norm, step));
  result_.clip_scale = clip_scale(partial[0], opt_.optim.grad_clip);

  for (auto& cs : chunks_) {
    cs->optimizer_step(step + 1, result_.clip_scale, *groups_->dp);
    cs->zero_local_grads();
  }
}

std::int64_t Executor::model_state_and_comm_bytes() const {
  std::int64_t n = comm_buffer_bytes_;
  for (const auto& cs : chunks_) n += cs->param_bytes() + cs->grad_bytes() + cs->optimizer_bytes();
  return n;
}

// The categories at the end of the last action, and the allocator's real peak inside it: activations are that peak
// less the model states and communication buffers held, taking the larger of their sizes before and after the
// action (an action that gathers parameters or allocates gradients holds them through its compute; one that frees
// them does so after it), so transient buffers inside an action (attention scratch, a B's temporaries) count.
void Executor::sample_memory(std::int64_t held_before) {
  MemoryPeaks now;
  for (auto& cs : chunks_) {
    now.params += cs->param_bytes();
    now.grads += cs->grad_bytes();
    now.optimizer += cs->optimizer_bytes();
  }
  now.comm = comm_buffer_bytes_;
  const std::int64_t held = std::max(held_before, now.params + now.grads + now.optimizer + now.comm);
  const auto peak = static_cast<std::int64_t>(backend_->peak_bytes());
  peaks_.params = std::max(peaks_.params, now.params);
  peaks_.grads = std::max(peaks_.grads, now.grads);
  peaks_.optimizer = std::max(peaks_.optimizer, now.optimizer);
  peaks_.comm = std::max(peaks_.comm, now.comm);
  peaks_.activations = std::max(peaks_.activations, peak - held);
  peaks_.total = std::max(peaks_.total, peak);
}

}  // namespace zeropp::e2e
