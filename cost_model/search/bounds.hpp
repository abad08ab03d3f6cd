#pragma once
// Bounds on what the simulator will say about a plan, computed from its action costs without simulating: they
// let the search (search.hpp) skip simulations and still return exactly what simulating every plan would.
//
//   time_s        <= the simulated makespan. The simulator runs a rank's compute actions (F, B, W, BW, RECOMPUTE,
//                 OPT_STEP) one after another on its compute stream, each for at least its cost in the table
//                 (contention only stretches them), so the makespan is at least the busiest rank's sum of those
//                 costs. Before its first compute action a rank waits for the forward of micro-batch 0 through
//                 every earlier stage: any action of rank r depends (directly or through its rank's program
//                 order) on some F of a stage s' >= r, which depends on F of stages s'-1, ..., 0 of the same
//                 micro-batch, run one after another; the stages below r are a part of that chain. So
//                 makespan >= max over r of (f_0 + ... + f_{r-1}) + the compute seconds of rank r.
//                 The compute seconds of rank r count, per micro-batch and chunk, F, min(BW, B + W) (fused or
//                 split backward, whichever the schedule runs), RECOMPUTE when the plan recomputes (not the last
//                 stage of a schedule that exempts it: recomputes_last_stage), and the rank's OPT_STEP.
//                 ZeroPP (schedule zeropp) runs its units one after another on every rank (schedule/zeropp.cpp:
//                 each unit's forwards, backwards and Ws, its W stack emptied, before the next unit). Let T_k be
//                 when rank 0 starts unit k (T_0 >= 0). Every micro-batch m of unit k has F(0,m) on rank 0, so no
//                 earlier than T_k, and then the chain F(0..S-1,m), B(S-1..0,m) (each waits for the one before, on
//                 its rank or through a p2p message), so B(0,m) ends >= T_k + sum over stages of f + min(b, bw).
//                 Rank 0 runs the u forwards F(0,.) and the u backwards B(0,.) of the unit one at a time, so the last
//                 to start of either adds (u - 1) f_0 or (u - 1) min(b_0, bw_0) before or after its chain; and rank 0
//                 is busy for u times its per-micro-batch compute seconds (above) from T_k. Unit k+1 starts after
//                 all that: T_{k+1} >= T_k + max(u * rank 0's seconds, chain + (u - 1) max(f_0, min(b_0, bw_0))).
//                 In the last unit rank r starts no earlier than T_last + the f of the stages below it, is busy for
//                 its seconds, then runs its OPT_STEP; rank 0's OPT_STEP follows its last backward. With units of
//                 one micro-batch this is the pipeline's fill and drain once per unit, which the sum above misses.
//   memory_bytes  <= the simulated peak: the simulator starts every rank at its static bytes (model-state
//                 shards, held all along) and its peak is at least that; the bound is the largest over ranks.
//                 Every allocation the simulator makes is >= 0 and freed at most once, so what is live at an instant
//                 only adds to the static bytes.
// memory_walk_bound (a second, costlier memory bound: it generates the compute-only schedule, no simulation):
//                 the simulator's memory changes at the start or end of actions. Those of the compute stream (F,
//                 RECOMPUTE, B, BW, W) happen in the rank's program order, one action after another, so at the
//                 start of compute action X every allocation and free of the compute actions before X has
//                 happened and none after X. Their running sum from the static bytes is the rank's memory at that
//                 instant but for buffers allocated or freed by other streams: gathered parameters (UNSHARD on the
//                 collective stream, freed by RESHARD) and unsharded gradients (allocated by the first W/BW of a
//                 stage, freed by REDUCE_GRAD on the collective stream). Leaving both out entirely only lowers the
//                 sum (what they hold is >= 0 at any instant), and at X's start X's own stage is gathered (F, B,
//                 BW and RECOMPUTE need its weights, so its UNSHARD has started and its RESHARD comes after X) and,
//                 for W/BW, X's stage holds its gradient buffer: both are added at that instant. So the largest such
//                 sum over a rank's program is <= its simulated peak. Without ZeRO-3 every memory change is a
//                 compute action's, and the walk is the simulator's own memory track: the bound equals the
//                 simulated peak (up to kRounding), and a plan over memory is never simulated.
//                 (Lowering adds communication actions around the compute ones and keeps their order.)
// Pure ZeRO-3 is simulated layer by layer (per_layer.hpp), the stage's costs split over its layers; the sums
// are the same up to rounding, which the factor kRounding below absorbs.
// tests/search/bounds_test.cpp checks both bounds against the simulation of every plan of small spaces.
#include <limits>

#include "cost_model/search/simulated_timing.hpp"
#include "cost_model/spec/config.hpp"

namespace zeropp::search {

struct PlanBounds {
  double time_s = 0;        // <= simulated iteration time
  double memory_bytes = 0;  // <= simulated peak memory per GPU
};

// Slack for floating-point rounding between the bound's sums and the simulator's (relative).
inline constexpr double kRounding = 1e-9;

// `costs`, when given, must be simulate::costs_from_plan(plan) (the search shares one table between the plans
// that differ only in U: the table does not depend on it).
PlanBounds lower_bounds(const Plan& plan, const simulate::ActionCosts* costs = nullptr);
// max(lower_bounds(plan).memory_bytes, the walk above) <= simulated peak. The walk stops as soon as it exceeds
// `stop_above` (the search passes the GPU memory: the plan cannot fit, how far it goes past does not matter).
double memory_walk_bound(const Plan& plan, double stop_above = std::numeric_limits<double>::infinity(),
                         const simulate::ActionCosts* costs = nullptr);

// The same walk over the lowered program a simulation runs (prepare_plan), for plans whose stages are ZeRO-3
// sharded in a z group (zero3_pp, ZeroPP; not pure ZeRO-3, simulated layer by layer): it sees where RESHARD and
// REDUCE_GRAD sit, so it counts more buffers, where they are provably allocated:
//   gathered   from a use of a stage (F, B, BW, RECOMPUTE: its UNSHARD started before it) until the stage's next
//              RESHARD (compute stream, after the use in program order);
//   gradients  from a stage's first W/BW until the last W/BW before its first REDUCE_GRAD (that REDUCE_GRAD waits
//              for it). Only the first run of each stage: the simulator allocates the buffer at a W/BW that finds
//              it free, so a later run may start while the previous REDUCE_GRAD still holds it and then go without.
// Gathers that ran ahead: the intra-node stream runs a rank's UNSHARDs and REDUCE_GRADs in program order, one
// after another, and an UNSHARD allocates its buffer when it starts. At the start of compute action X the gathered
// bytes are at least (what the UNSHARDs that provably started allocated) - (what every RESHARD before X in program
// order frees; RESHARDs after X run after X on the compute stream). An UNSHARD provably started when
//   - it is at or before, on the intra stream, an UNSHARD that X or a compute-stream action before X waits for
//     (that one has ended, and the stream is in order); or
//   - it is in the stream's leading run of UNSHARDs that wait for nothing but the stream (all of them when
//     ActionCosts::gathered_limit is 0, else the first gathered_limit) and its start time - exactly the sum of
//     the run's earlier UNSHARD seconds, as communication is never stretched by contention - is below a lower
//     bound on X's start: the forward chain of micro-batch 0 before rank r (lower_bounds) plus the table seconds
//     of the rank's compute actions before X (its compute stream runs them in order, each at least that long).
// This catches ZeroPP's per-unit gathers, which have no gathered-buffer limit and run ahead of the first forward.
// >= memory_walk_bound's sum at every compute action, <= the simulated peak.
double lowered_memory_bound(const PreparedPlan& prepared, double stop_above = std::numeric_limits<double>::infinity());
// Whether lowered_memory_bound applies (and can say more than memory_walk_bound).
bool has_lowered_memory_bound(const Plan& plan);

// A second, costlier time bound: the makespan of the compute-only program (schedule::generate, no lowering)
// simulated with the plan's costs, the p2p transfers as delays on the edges between ranks. The lowered program
// the search simulates has the same compute actions with the same costs, in the same order on each compute
// stream, and every dependency of the compute-only one: a forward waits for its RECV_F, which ends no earlier
// than the SEND_F it matches, which starts after the producing forward and lasts the same transfer time (the
// same for backwards); it only adds actions of non-negative length, more dependencies and, with contention,
// longer compute; and each rank's OPT_STEP waits for all of the rank's actions. So the simulated iteration time is
// at least every rank's last compute end here plus its OPT_STEP's seconds. Unlike lower_bounds
// it sees the pipeline's fill and drain (every unit's, for ZeroPP). Pure ZeRO-3 (pp = 1, one rank, simulated
// layer by layer) gains nothing from it: lower_bounds is returned as is. `costs` as in lower_bounds.
double schedule_time_bound(const Plan& plan, const simulate::ActionCosts* costs = nullptr);

}  // namespace zeropp::search
