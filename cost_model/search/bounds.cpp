#include "cost_model/search/bounds.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cost_model/schedule/generate.hpp"
#include "cost_model/schedule/plan_program.hpp"
#include "cost_model/simulate/costs_from_plan.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::search {

PlanBounds lower_bounds(const Plan& plan) {
  const ParallelSpec& par = plan.parallel;
  const simulate::ActionCosts costs = simulate::costs_from_plan(plan);
  const int p = par.pp, S = costs.stage_count();
  const bool recompute = par.recompute != Recompute::none;
  const bool last_recomputes = recomputes_last_stage(par.schedule);
  PlanBounds out;
  double head = 0;  // f of the stages below rank r: the forward chain of micro-batch 0 before rank r can start
  for (int r = 0; r < p; ++r) {
    double per_microbatch = 0;
    for (int s = r; s < S; s += p) {
      const simulate::StageCost& c = costs.stages[s];
      per_microbatch += c.f + std::min(c.bw, c.b + c.w);
      if (recompute && (last_recomputes || s != S - 1)) per_microbatch += c.recompute;
    }
    const double opt = r < static_cast<int>(costs.opt_step.size()) ? costs.opt_step[r].seconds : 0;
    out.time_s = std::max(out.time_s, head + per_microbatch * par.micro_batches + opt);
    if (r < static_cast<int>(costs.static_bytes.size()))
      out.memory_bytes = std::max(out.memory_bytes, costs.static_bytes[r]);
    head += costs.stages[r].f;
  }
  out.time_s *= 1 - kRounding;
  out.memory_bytes *= 1 - kRounding;
  return out;
}

double memory_walk_bound(const Plan& plan, double stop_above) {
  const simulate::ActionCosts costs = simulate::costs_from_plan(plan);
  const schedule::Program program = schedule::generate(schedule::schedule_for(plan));
  const DataParallelSync sync = data_parallel_sync(plan.parallel);
  // Pure ZeRO-3 is simulated a layer at a time (per_layer.hpp): its buffers are a layer's share of the stage's.
  const double share = sync.shard_spans_dp ? 1.0 / plan.model.layers : 1.0;
  const int stages = program.stages(), microbatches = program.microbatches;
  // Which (stage, micro-batch) pairs are recomputed and have a separate W: what B/BW free depends on it.
  constexpr std::uint8_t kRecomputed = 1, kSplit = 2;
  std::vector<std::uint8_t> kind(static_cast<std::size_t>(stages) * microbatches, 0);
  for (const schedule::RankProgram& rank : program.ranks)
    for (const schedule::Action& a : rank) {
      if (a.type == schedule::ActionType::RECOMPUTE) kind[a.stage * microbatches + a.microbatch] |= kRecomputed;
      if (a.type == schedule::ActionType::W) kind[a.stage * microbatches + a.microbatch] |= kSplit;
    }
  double out = 0;
  for (int r = 0; r < static_cast<int>(program.ranks.size()); ++r) {
    double live = r < static_cast<int>(costs.static_bytes.size()) ? costs.static_bytes[r] : 0;
    out = std::max(out, live);
    for (const schedule::Action& a : program.ranks[r]) {
      const simulate::StageCost& c = costs.stages[a.stage];
      const std::uint8_t k = kind[a.stage * microbatches + a.microbatch];
      // What the micro-batch holds until its B/BW ends (the simulator's held_until_b).
      const double held = k & kRecomputed ? c.checkpoint_bytes + c.recompute_bytes : c.activation_bytes;
      const double gathered = share * c.gathered_param_bytes, grads = share * c.grad_buffer_bytes;
      double at_start = live;  // at the action's start, after what it allocates
      switch (a.type) {
        case schedule::ActionType::F:
          live += k & kRecomputed ? c.checkpoint_bytes : c.activation_bytes;
          at_start = live + gathered;
          break;
        case schedule::ActionType::RECOMPUTE:
          live += c.recompute_bytes;
          at_start = live + gathered;
          break;
        case schedule::ActionType::B:
          at_start = live + gathered;
          live += (k & kSplit ? c.w_buffer_bytes : 0) - held;
          break;
        case schedule::ActionType::BW:
          at_start = live + gathered + grads;
          live -= held;
          break;
        case schedule::ActionType::W:
          at_start = live + grads;
          live -= c.w_buffer_bytes;
          break;
        default:
          break;
      }
      out = std::max({out, at_start, live});
      if (out > stop_above) return out * (1 - kRounding);
    }
  }
  return out * (1 - kRounding);
}

}  // namespace zeropp::search
