#include "cost_model/search/simulated_timing.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "cost_model/analytic/stage_balance.hpp"
#include "cost_model/schedule/generate.hpp"
#include "cost_model/schedule/plan_program.hpp"
#include "cost_model/simulate/costs_from_plan.hpp"
#include "cost_model/simulate/per_layer.hpp"
#include "cost_model/simulate/simulator.hpp"

namespace zeropp::search {
namespace {

using simulate::Stream;

// Seconds of TP collectives inside the compute actions of PP rank r: per micro-batch and chunk, the forward's
// and the backward's (and the recomputed forward's), plus the embedding's on the first virtual stage and the LM
// head's on the last. They sit inside F/B in the simulator's cost table (costs_from_plan).
double tp_seconds_on_rank(const Plan& plan, const analytic::ActionCosts& a, int r) {
  const ParallelSpec& par = plan.parallel;
  const int p = par.pp, S = p * par.v;
  const bool recompute = par.recompute != Recompute::none;
  const StageLayout layout = stage_layout(plan.model, par);
  double per_mb = 0;
  for (int c = 0; c < par.v; ++c) {
    const int vs = c * p + r;
    per_mb += analytic::stage_share(layout, vs, a.layers_per_chunk) *
              (a.tp_f + a.tp_b + (recompute ? a.tp_recompute : 0));
    if (vs == 0) per_mb += a.embed_tp_f;
    if (vs == S - 1) per_mb += a.head_tp_f + a.head_tp_b;
  }
  return per_mb * par.micro_batches;
}

// Category of a communication stream: 0 p2p, 1 ZeRO-3 group, 2 DP.
int category(Stream s) {
  switch (s) {
    case Stream::p2p_next:
    case Stream::p2p_prev:
      return 0;
    case Stream::intra:
      return 1;
    case Stream::inter:
      return 2;
    case Stream::compute:
      break;
  }
  return -1;
}

// Exposed seconds of each communication category on rank r: time its stream is busy while the compute stream
// idles; an instant where several categories are exposed is split evenly between them.
std::array<double, 3> exposed_by_category(const simulate::SimResult& sim, int r) {
  struct Event {
    double time;
    int delta;  // +1 start, -1 end
    Stream stream;
  };
  std::vector<Event> events;
  const std::size_t begin = sim.rank_offset[r], end = sim.rank_offset[r + 1];
  events.reserve(2 * (end - begin));
  for (std::size_t i = begin; i < end; ++i) {
    if (sim.end[i] <= sim.start[i]) continue;  // zero-length actions occupy nothing
    events.push_back({sim.start[i], +1, sim.stream[i]});
    events.push_back({sim.end[i], -1, sim.stream[i]});
  }
  // Ends before starts at equal times: back-to-back actions leave no gap and no overlap.
  std::sort(events.begin(), events.end(),
            [](const Event& x, const Event& y) { return x.time != y.time ? x.time < y.time : x.delta < y.delta; });
  std::array<int, simulate::kStreams> busy{};
  std::array<double, 3> exposed{};
  double last = 0;
  for (const Event& e : events) {
    const double dt = e.time - last;
    if (dt > 0 && busy[static_cast<int>(Stream::compute)] == 0) {
      std::array<bool, 3> on{};
      int n = 0;
      for (int k = 0; k < simulate::kStreams; ++k) {
        const int c = category(static_cast<Stream>(k));
        if (c >= 0 && busy[k] > 0 && !on[c]) {
          on[c] = true;
          ++n;
        }
      }
      for (int c = 0; c < 3; ++c)
        if (on[c]) exposed[c] += dt / n;
    }
    busy[static_cast<int>(e.stream)] += e.delta;
    last = e.time;
  }
  return exposed;
}

}  // namespace

PreparedPlan prepare_plan(const Plan& plan) { return {schedule::program_for(plan), simulate::costs_from_plan(plan)}; }

PreparedPlan prepare_plan(const Plan& plan, const simulate::ActionCosts& costs) {
  return {schedule::program_for(plan), costs};
}

simulate::SimResult simulate_plan(const Plan& plan, const PreparedPlan* prepared) {
  const PreparedPlan own = prepared ? PreparedPlan{} : prepare_plan(plan);
  const PreparedPlan& use = prepared ? *prepared : own;
  const DataParallelSync sync = data_parallel_sync(plan.parallel);
  if (sync.layer_wise) {
    // Pure ZeRO-3: one stage (pp = 1) gathered a layer at a time (simulate/per_layer.hpp); HSDP all-reduces every
    // layer's reduce-scattered shard after each micro-batch.
    const int layers = plan.model.layers;
    return simulate::simulate(
        simulate::expand_layers(use.program, layers, simulate::kDefaultPrefetch, sync.sync_every_micro_batch),
        simulate::per_layer_costs(use.costs, layers));
  }
  return simulate::simulate(use.program, use.costs);
}

analytic::PipelineTiming simulated_timing(const Plan& plan) { return simulated_timing(plan, simulate_plan(plan)); }

analytic::PipelineTiming simulated_timing(const Plan& plan, const simulate::SimResult& sim) {
  int busiest = 0;
  double peak = 0;
  for (int r = 0; r < static_cast<int>(sim.ranks.size()); ++r) {
    if (sim.ranks[r].compute > sim.ranks[busiest].compute) busiest = r;
    peak = std::max(peak, sim.ranks[r].peak_memory_bytes);
  }
  const simulate::RankSummary& rank = sim.ranks[busiest];
  const std::array<double, 3> exposed = exposed_by_category(sim, busiest);

  analytic::PipelineTiming t;
  const analytic::ActionCosts a = analytic::action_costs(plan);
  t.tp_exposed = std::min(rank.compute, tp_seconds_on_rank(plan, a, busiest));
  // OPT_STEP runs on the compute stream and carries the communication that follows the step (costs_from_plan):
  // the exposed part of ZeRO-1's parameter all-gather and the tied embedding's all-reduce. Count those as DP.
  const double after_step = std::min(rank.compute - t.tp_exposed, simulate::after_step_seconds(plan, a, busiest));
  t.compute = rank.compute - t.tp_exposed - after_step;
  t.pp_exposed = exposed[0];
  t.zero_exposed = exposed[1];
  t.dp_exposed = exposed[2] + after_step;
  t.comm_exposed = t.tp_exposed + t.pp_exposed + t.zero_exposed + t.dp_exposed;
  t.iteration = sim.makespan;
  t.bubble = std::max(0.0, t.iteration - t.compute - t.comm_exposed);
  t.peak_memory = peak;
  return t;
}

}  // namespace zeropp::search
