#include "cost_model/simulate/per_layer.hpp"

#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace zeropp::simulate {

using schedule::Action;
using schedule::ActionType;

namespace {

bool is_grad(ActionType t) { return t == ActionType::W || t == ActionType::BW; }

// Builds the per-layer program of rank 0, action by action of the stage program.
class Expander {
 public:
  Expander(int layers, int prefetch, bool sync_every_reduce)
      : layers_(layers), prefetch_(prefetch), sync_every_reduce_(sync_every_reduce) {}

  schedule::RankProgram run(const schedule::RankProgram& in) {
    for (std::size_t k = 0; k < in.size(); ++k) {
      const Action& a = in[k];
      switch (a.type) {
        case ActionType::UNSHARD:
        case ActionType::RESHARD:
          break;  // replaced by the per-layer gathers
        case ActionType::F:
          forward(a.microbatch);
          break;
        case ActionType::RECOMPUTE:
          recompute_ = true;
          break;
        case ActionType::B:
        case ActionType::BW:
          backward(a, reduces_after(in, k));
          recompute_ = false;
          break;
        case ActionType::W:
          for (int i = layers_ - 1; i >= 0; --i) {
            emit(ActionType::W, i, a.microbatch);
            if (reduces_after(in, k)) reduce(i, a.microbatch);
          }
          break;
        case ActionType::REDUCE_GRAD:
          // Already reduced layer by layer after the W/BW that precedes it, else every layer's here.
          if (!last_was_grad_) {
            for (int i = layers_ - 1; i >= 0; --i) reduce(i, a.microbatch);
          }
          break;
        case ActionType::DP_SYNC:
          // Already after every reduce-scatter (sync_every_reduce), else every layer's here.
          if (!sync_every_reduce_)
            for (int i = layers_ - 1; i >= 0; --i) emit(ActionType::DP_SYNC, i, a.microbatch);
          break;
        default:
          out_.push_back(a);  // OPT_STEP; a one-stage program has no p2p
          break;
      }
      if (schedule::is_compute(a.type) || a.type == ActionType::REDUCE_GRAD) last_was_grad_ = is_grad(a.type);
    }
    return std::move(out_);
  }

 private:
  int layers_, prefetch_;
  bool sync_every_reduce_;
  bool recompute_ = false;      // a RECOMPUTE of the stage waits for the next B/BW
  bool last_was_grad_ = false;  // the last compute or REDUCE_GRAD action seen was a W/BW
  schedule::RankProgram out_;

  void emit(ActionType t, int layer, int mb) { out_.push_back(Action{t, layer, mb}); }

  // A layer's reduce-scatter, and with sync_every_reduce its all-reduce across the replicas right after.
  void reduce(int layer, int mb) {
    emit(ActionType::REDUCE_GRAD, layer, mb);
    if (sync_every_reduce_) emit(ActionType::DP_SYNC, layer, schedule::kNoMicrobatch);
  }

  // Whether the stage program reduce-scatters right after the action at k (before its next compute action).
  static bool reduces_after(const schedule::RankProgram& in, std::size_t k) {
    for (std::size_t j = k + 1; j < in.size(); ++j) {
      if (in[j].type == ActionType::REDUCE_GRAD) return true;
      if (schedule::is_compute(in[j].type)) return false;
    }
    return false;
  }

  // The first gathers of a pass, issued before the previous pass's trailing reduce-scatters.
  void open(int first, int step) {
    auto at = out_.end();
    while (at != out_.begin() && std::prev(at)->type == ActionType::REDUCE_GRAD) --at;
    std::vector<Action> gathers;
    for (int j = 0; j <= prefetch_; ++j) {
      const int layer = first + step * j;
      if (layer < 0 || layer >= layers_) break;
      gathers.push_back(Action{ActionType::UNSHARD, layer, schedule::kNoMicrobatch});
    }
    out_.insert(at, gathers.begin(), gathers.end());
  }

  // After layer i's use: free it and gather the layer `prefetch` beyond the next one.
  void advance(int i, int step) {
    emit(ActionType::RESHARD, i, schedule::kNoMicrobatch);
    const int ahead = i + step * (1 + prefetch_);
    if (ahead >= 0 && ahead < layers_) emit(ActionType::UNSHARD, ahead, schedule::kNoMicrobatch);
  }

  void forward(int mb) {
    open(0, +1);
    for (int i = 0; i < layers_; ++i) {
      emit(ActionType::F, i, mb);
      advance(i, +1);
    }
  }

  void backward(const Action& a, bool reduces) {
    open(layers_ - 1, -1);
    for (int i = layers_ - 1; i >= 0; --i) {
      if (recompute_) emit(ActionType::RECOMPUTE, i, a.microbatch);
      emit(a.type, i, a.microbatch);
      advance(i, -1);
      if (reduces && a.type == ActionType::BW) reduce(i, a.microbatch);
    }
  }
};

void check_shape(int layers, int prefetch) {
  if (layers < 1) throw std::invalid_argument("per-layer ZeRO-3: layers must be >= 1, got " + std::to_string(layers));
  if (prefetch < 0) {
    throw std::invalid_argument("per-layer ZeRO-3: prefetch must be >= 0, got " + std::to_string(prefetch));
  }
}

}  // namespace

schedule::Program expand_layers(const schedule::Program& stage_program, int layers, int prefetch,
                                bool sync_every_reduce) {
  check_shape(layers, prefetch);
  if (stage_program.pp != 1 || stage_program.v != 1 || stage_program.ranks.size() != 1) {
    throw std::invalid_argument("per-layer ZeRO-3 expands a one-rank, one-stage program (pp = 1, v = 1)");
  }
  schedule::Program out = stage_program;
  out.v = layers;
  out.ranks[0] = Expander(layers, prefetch, sync_every_reduce).run(stage_program.ranks[0]);
  return out;
}

ActionCosts per_layer_costs(const ActionCosts& stage_costs, int layers, int prefetch) {
  check_shape(layers, prefetch);
  if (stage_costs.stages.size() != 1) {
    throw std::invalid_argument("per-layer ZeRO-3 splits a one-stage cost table");
  }
  const StageCost& s = stage_costs.stages[0];
  const double n = layers;
  auto split = [n](CommCost c) { return CommCost{c.seconds / n, c.bytes / n}; };
  StageCost l = s;
  l.f = s.f / n;
  l.b = s.b / n;
  l.w = s.w / n;
  l.bw = s.bw / n;
  l.recompute = s.recompute / n;
  l.unshard = split(s.unshard);
  l.reduce_grad = split(s.reduce_grad);
  l.dp_sync = split(s.dp_sync);
  l.activation_bytes = s.activation_bytes / n;
  l.checkpoint_bytes = s.checkpoint_bytes / n;
  l.w_buffer_bytes = s.w_buffer_bytes / n;
  l.gathered_param_bytes = s.gathered_param_bytes / n;
  l.grad_buffer_bytes = s.grad_buffer_bytes / n;
  // recompute_bytes is one layer's already; send_f / send_b are unused at pp = 1.
  ActionCosts out = stage_costs;
  out.stages.assign(layers, l);
  out.gathered_limit = 1 + prefetch;
  return out;
}

}  // namespace zeropp::simulate
