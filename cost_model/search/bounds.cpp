#include "cost_model/search/bounds.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cost_model/schedule/action.hpp"
#include "cost_model/schedule/generate.hpp"
#include "cost_model/schedule/plan_program.hpp"
#include "cost_model/simulate/costs_from_plan.hpp"
#include "cost_model/simulate/simulator.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::search {

namespace {

// ZeroPP's units one after another (bounds.hpp): rank 0 starts unit k+1 only after its last backward of unit k,
// which ends a forward-and-backward chain through every stage after the unit's start.
double zeropp_units_bound(const ParallelSpec& par, const simulate::ActionCosts& costs,
                          const std::vector<double>& per_microbatch, const std::vector<double>& heads,
                          const std::vector<double>& opts) {
  const int p = static_cast<int>(per_microbatch.size());
  const simulate::StageCost& first = costs.stages[0];
  double chain = 0;  // F of stages 0..S-1, then the backward of S-1..0, of one micro-batch
  for (const simulate::StageCost& c : costs.stages) chain += c.f + std::min(c.b, c.bw);
  const double per_extra = std::max(first.f, std::min(first.b, first.bw));  // rank 0 runs them one at a time
  const int total = par.micro_batches, unit = par.unit > 0 ? std::min(par.unit, total) : total;
  const auto unit_span = [&](int u) { return std::max(per_microbatch[0] * u, chain + (u - 1) * per_extra); };
  const int full = total / unit, rest = total % unit;
  const int last = rest > 0 ? rest : unit;             // the last unit's micro-batches
  const int before_last = rest > 0 ? full : full - 1;  // units before it, all of size `unit`
  double last_span = unit_span(last) + opts[0];
  for (int r = 0; r < p; ++r) last_span = std::max(last_span, heads[r] + per_microbatch[r] * last + opts[r]);
  return before_last * unit_span(unit) + last_span;
}

}  // namespace

PlanBounds lower_bounds(const Plan& plan, const simulate::ActionCosts* given) {
  const ParallelSpec& par = plan.parallel;
  const simulate::ActionCosts own = given ? simulate::ActionCosts{} : simulate::costs_from_plan(plan);
  const simulate::ActionCosts& costs = given ? *given : own;
  const int p = par.pp, S = costs.stage_count();
  const bool recompute = par.recompute != Recompute::none;
  const bool last_recomputes = recomputes_last_stage(par.schedule);
  PlanBounds out;
  std::vector<double> per_microbatch(p, 0), heads(p, 0), opts(p, 0);
  double head = 0;  // f of the stages below rank r: the forward chain of micro-batch 0 before rank r can start
  for (int r = 0; r < p; ++r) {
    for (int s = r; s < S; s += p) {
      const simulate::StageCost& c = costs.stages[s];
      per_microbatch[r] += c.f + std::min(c.bw, c.b + c.w);
      if (recompute && (last_recomputes || s != S - 1)) per_microbatch[r] += c.recompute;
    }
    opts[r] = r < static_cast<int>(costs.opt_step.size()) ? costs.opt_step[r].seconds : 0;
    heads[r] = head;
    out.time_s = std::max(out.time_s, head + per_microbatch[r] * par.micro_batches + opts[r]);
    if (r < static_cast<int>(costs.static_bytes.size()))
      out.memory_bytes = std::max(out.memory_bytes, costs.static_bytes[r]);
    head += costs.stages[r].f;
  }
  if (par.schedule == ScheduleKind::zeropp)
    out.time_s = std::max(out.time_s, zeropp_units_bound(par, costs, per_microbatch, heads, opts));
  out.time_s *= 1 - kRounding;
  out.memory_bytes *= 1 - kRounding;
  return out;
}

namespace {

// The walk of one rank's compute-only program (bounds.hpp), from its static bytes; stops once above stop_above.
double walk_rank(const schedule::RankProgram& program, int stages, int microbatches,
                 const simulate::ActionCosts& costs, double static_bytes, double share, double stop_above) {
  // Which (stage, micro-batch) pairs are recomputed and have a separate W: what B/BW free depends on it. A stage
  // belongs to one rank, so the rank's own program tells.
  constexpr std::uint8_t kRecomputed = 1, kSplit = 2;
  std::vector<std::uint8_t> kind(static_cast<std::size_t>(stages) * microbatches, 0);
  for (const schedule::Action& a : program) {
    if (a.type == schedule::ActionType::RECOMPUTE) kind[a.stage * microbatches + a.microbatch] |= kRecomputed;
    if (a.type == schedule::ActionType::W) kind[a.stage * microbatches + a.microbatch] |= kSplit;
  }
  double live = static_bytes, out = static_bytes;
  for (const schedule::Action& a : program) {
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
    if (out > stop_above) return out;
  }
  return out;
}

}  // namespace

double memory_walk_bound(const Plan& plan, double stop_above, const simulate::ActionCosts* given) {
  const simulate::ActionCosts own = given ? simulate::ActionCosts{} : simulate::costs_from_plan(plan);
  const simulate::ActionCosts& costs = given ? *given : own;
  const DataParallelSync sync = data_parallel_sync(plan.parallel);
  // Pure ZeRO-3 is simulated a layer at a time (per_layer.hpp): its buffers are a layer's share of the stage's.
  const double share = sync.layer_wise ? 1.0 / plan.model.layers : 1.0;
  const schedule::ScheduleConfig cfg = schedule::schedule_for(plan);
  // The ZeroPP schedule runs its units one after another through the same per-rank code and ends each with an
  // empty W stack (schedule/zeropp.cpp): every allocation of a unit's compute actions is freed in that unit, so
  // the walk returns to the static bytes at each unit's end and the program's walk is the largest of its units'.
  // A unit of u micro-batches walks as the one-unit program of u micro-batches: U, and B mod U when the last unit
  // is ragged (tests/search/exact_search_test.cpp checks the walk against the simulated peak of every plan).
  std::vector<int> units = {cfg.microbatches};
  if (cfg.kind == ScheduleKind::zeropp && cfg.unit > 0 && cfg.unit < cfg.microbatches) {
    units = {cfg.unit};
    if (cfg.microbatches % cfg.unit != 0) units.push_back(cfg.microbatches % cfg.unit);
  }
  // Rank by rank, each generated on its own (ScheduleConfig::only_rank), in the order 0, p-1, 1, ..., p-2: the
  // first holds the most in flight, the last the logits, so a plan over memory is usually found out after one
  // rank's program.
  const int p = cfg.pp;
  double out = 0;
  for (int i = 0; i < p; ++i) {
    const int r = i == 0 ? 0 : i == 1 ? p - 1 : i - 1;
    const double static_bytes = r < static_cast<int>(costs.static_bytes.size()) ? costs.static_bytes[r] : 0;
    for (int u : units) {
      schedule::ScheduleConfig one = cfg;
      one.microbatches = u;
      if (cfg.kind == ScheduleKind::zeropp && u != cfg.microbatches) one.unit = u;
      one.only_rank = r;
      const schedule::Program program = schedule::generate(one);
      out = std::max(out, walk_rank(program.ranks[r], program.stages(), u, costs, static_bytes, share, stop_above));
      if (out > stop_above) return out * (1 - kRounding);
    }
  }
  return out * (1 - kRounding);
}

bool has_lowered_memory_bound(const Plan& plan) {
  const DataParallelSync sync = data_parallel_sync(plan.parallel);
  return sync.shard_group > 1 && !sync.layer_wise;
}

namespace {

// The rank's UNSHARDs that have provably started (allocated their gathered buffers) when one of its compute actions
// starts (bounds.hpp, "gathers that ran ahead"). The intra-node collective stream runs UNSHARD and REDUCE_GRAD in
// program order, one after another; positions below count its actions in that order.
class StartedGathers {
 public:
  StartedGathers(const schedule::RankProgram& rank, const simulate::ActionCosts& costs) {
    using schedule::ActionType;
    bytes_before_.push_back(0);
    bool ahead = true;  // still in the leading run of UNSHARDs that wait for nothing but the stream
    double t = 0;       // start of the next one (the simulator's stream_free: the previous one's end)
    for (const schedule::Action& a : rank) {
      if (a.type != ActionType::UNSHARD && a.type != ActionType::REDUCE_GRAD) continue;
      const bool unshard = a.type == ActionType::UNSHARD;
      const double b = unshard ? costs.stages[a.stage].gathered_param_bytes : 0;
      bytes_before_.push_back(bytes_before_.back() + b);
      // Only the first gathered_limit UNSHARDs are free of a RESHARD dependency (simulator.hpp).
      const int index = static_cast<int>(ahead_start_.size());
      ahead = ahead && unshard && (costs.gathered_limit <= 0 || index < costs.gathered_limit);
      if (ahead) {
        ahead_start_.push_back(t);
        t += costs.stages[a.stage].unshard.seconds;
      }
    }
  }
  // Gathered bytes of the first `position` actions of the stream.
  double bytes(std::size_t position) const { return bytes_before_[std::min(position, bytes_before_.size() - 1)]; }
  // How many leading actions of the stream have started strictly before `time`.
  std::size_t started_before(double time) const {
    return static_cast<std::size_t>(std::lower_bound(ahead_start_.begin(), ahead_start_.end(), time) -
                                    ahead_start_.begin());
  }

 private:
  std::vector<double> bytes_before_;  // prefix sums over the stream's actions (REDUCE_GRAD counts 0)
  std::vector<double> ahead_start_;   // start times of the leading UNSHARDs, exact (their durations never stretch)
};

}  // namespace

double lowered_memory_bound(const PreparedPlan& prepared, double stop_above) {
  using schedule::ActionType;
  const schedule::Program& program = prepared.program;
  const simulate::ActionCosts& costs = prepared.costs;
  const int stages = program.stages(), microbatches = program.microbatches;
  double out = 0;
  double head = 0;  // f of the stages below rank r (lower_bounds): no compute action of rank r starts earlier
  for (int r = 0; r < static_cast<int>(program.ranks.size()); ++r) {
    if (r > 0) head += costs.stages[r - 1].f;
    const schedule::RankProgram& rank = program.ranks[r];
    const StartedGathers gathers(rank, costs);
    constexpr std::uint8_t kRecomputed = 1, kSplit = 2;
    std::vector<std::uint8_t> kind(static_cast<std::size_t>(stages) * microbatches, 0);
    // Per stage: the position of the last W/BW before its first REDUCE_GRAD (or of its last W/BW when there is
    // none): its gradient buffer is provably live from its first W/BW to there.
    std::vector<std::int64_t> run_end(stages, -1);
    std::vector<char> reduced(stages, 0);
    for (std::size_t i = 0; i < rank.size(); ++i) {
      const schedule::Action& a = rank[i];
      if (a.type == ActionType::RECOMPUTE) kind[a.stage * microbatches + a.microbatch] |= kRecomputed;
      if (a.type == ActionType::W) kind[a.stage * microbatches + a.microbatch] |= kSplit;
      if (a.type == ActionType::REDUCE_GRAD) reduced[a.stage] = 1;
      if ((a.type == ActionType::W || a.type == ActionType::BW) && !reduced[a.stage])
        run_end[a.stage] = static_cast<std::int64_t>(i);
    }
    std::vector<char> held(stages, 0), grad_live(stages, 0), grad_done(stages, 0);
    double live = r < static_cast<int>(costs.static_bytes.size()) ? costs.static_bytes[r] : 0;
    double gathered = 0, grads = 0;
    // For the gathers that ran ahead: the intra-stream position just past the latest UNSHARD of each stage, the
    // stream actions known to have started, the bytes of the RESHARDs so far, the compute seconds so far.
    std::vector<std::size_t> unshard_end(stages, 0);
    std::size_t stream_pos = 0, started = 0;
    double resharded = 0, busy = 0;
    out = std::max(out, live);
    for (std::size_t i = 0; i < rank.size(); ++i) {
      const schedule::Action& a = rank[i];
      const int s = a.stage;
      const simulate::StageCost& c = costs.stages[s];
      if (a.type == ActionType::UNSHARD || a.type == ActionType::REDUCE_GRAD) {
        ++stream_pos;
        if (a.type == ActionType::UNSHARD) unshard_end[s] = stream_pos;
        continue;
      }
      if (a.type == ActionType::RESHARD) {
        if (held[s]) gathered -= c.gathered_param_bytes;
        held[s] = 0;
        started = std::max(started, unshard_end[s]);  // it waits for that UNSHARD
        resharded += c.gathered_param_bytes;
        continue;
      }
      if (!schedule::is_compute(a.type)) continue;
      const bool uses_weights = a.type != ActionType::W;
      if (uses_weights && !held[s]) {
        held[s] = 1;
        gathered += c.gathered_param_bytes;
      }
      const bool grad_action = a.type == ActionType::W || a.type == ActionType::BW;
      if (grad_action && !grad_live[s] && !grad_done[s] && run_end[s] >= 0) {
        grad_live[s] = 1;
        grads += c.grad_buffer_bytes;
      }
      const std::uint8_t k = kind[s * microbatches + a.microbatch];
      const double held_until_b = k & kRecomputed ? c.checkpoint_bytes + c.recompute_bytes : c.activation_bytes;
      // The acting W/BW's own buffer is live at its start even outside the first run (bounds.hpp).
      const double own_grads = grad_action && !grad_live[s] ? c.grad_buffer_bytes : 0;
      double at_start = 0;
      switch (a.type) {
        case ActionType::F:
          live += k & kRecomputed ? c.checkpoint_bytes : c.activation_bytes;
          at_start = live;
          break;
        case ActionType::RECOMPUTE:
          live += c.recompute_bytes;
          at_start = live;
          break;
        case ActionType::B:
          at_start = live;
          live += (k & kSplit ? c.w_buffer_bytes : 0) - held_until_b;
          break;
        case ActionType::BW:
          at_start = live;
          live -= held_until_b;
          break;
        case ActionType::W:
          at_start = live;
          live -= c.w_buffer_bytes;
          break;
        default:
          break;
      }
      // The gathers that provably started before this action did, less every RESHARD before it (bounds.hpp).
      if (uses_weights) started = std::max(started, unshard_end[s]);
      const std::size_t ahead = gathers.started_before((head + busy) * (1 - kRounding));
      const double ran_ahead = gathers.bytes(std::max(started, ahead)) - resharded;
      busy += c.compute_seconds(a.type);
      out = std::max({out, at_start + std::max(gathered, ran_ahead) + grads + own_grads, live + gathered + grads});
      if (grad_live[s] && static_cast<std::int64_t>(i) == run_end[s]) {
        grad_live[s] = 0;
        grad_done[s] = 1;
        grads -= c.grad_buffer_bytes;
      }
      if (out > stop_above) return out * (1 - kRounding);
    }
  }
  return out * (1 - kRounding);
}

double schedule_time_bound(const Plan& plan, const simulate::ActionCosts* given) {
  if (data_parallel_sync(plan.parallel).layer_wise) return lower_bounds(plan, given).time_s;
  const simulate::ActionCosts own = given ? simulate::ActionCosts{} : simulate::costs_from_plan(plan);
  const simulate::ActionCosts& costs = given ? *given : own;
  const simulate::SimResult sim = simulate::simulate(schedule::generate(schedule::schedule_for(plan)), costs);
  // Each rank's OPT_STEP (lowering adds it) waits for everything before it on the rank.
  double out = 0;
  for (int r = 0; r < sim.pp; ++r) {
    double last = 0;
    for (std::size_t i = sim.rank_offset[r]; i < static_cast<std::size_t>(sim.rank_offset[r + 1]); ++i)
      last = std::max(last, sim.end[i]);
    out = std::max(out, last + (r < static_cast<int>(costs.opt_step.size()) ? costs.opt_step[r].seconds : 0));
  }
  return out * (1 - kRounding);
}

}  // namespace zeropp::search
