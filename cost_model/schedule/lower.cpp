// lower(): turns a compute-only program into the one the executors run, in two steps.
//
// 1. Plan, per rank, independently: around every compute action the communication it implies, placed where it
//    costs least -
//      [RESHARD old chunk] [UNSHARD chunk]  [RECV_F | RECV_B]  compute  [SEND_F | SEND_B]  [RESHARD]
//      [REDUCE_GRAD] [DP_SYNC]                                                     ... and OPT_STEP at the end.
//    A RECV sits right before the compute that consumes it and a SEND right after the compute that produces
//    it. p2p is emitted only between stages on different ranks. ZeRO-3 gathers follow the ShardPolicy:
//      per_microbatch  UNSHARD before and RESHARD after every F, B, BW and RECOMPUTE (naive ZeRO-3 under PP);
//      per_unit        a chunk's parameters are gathered by the first F/B/RECOMPUTE that needs them and kept
//                      while that chunk stays active; switching to another chunk frees them, and so does the
//                      end of a scheduling unit (the unit's last weight use). W needs no weights. With the
//                      ZeroPP order this gives 2v-1 UNSHARDs per rank per unit (chunks 0..v-1 forward, then
//                      v-1..0 backward; the steady phase runs F and B on the last chunk under one gather);
//      per_iteration   gathered before a chunk's first use, freed after its last use in the iteration.
//    Gradients of a sharded stage are reduce-scattered after every W/BW (GradReduce::per_w, the REDUCE_GRAD
//    carries the micro-batch) or after the last W/BW of the stage in each unit (per_unit, no micro-batch).
//    DP_SYNC of a stage follows its last W/BW (and REDUCE_GRAD), so it can overlap the rest of the backward;
//    without dp_sync_overlap every DP_SYNC waits for the rank's last compute action.
//
// 2. Order the p2p under blocking semantics. The plan above deadlocks when SEND and RECV are a rendezvous:
//    in 1F1B's steady phase rank r sends F(m+w) while rank r+1 sends B(m) back, each waiting for the other to
//    reach its RECV. So all ranks are executed symbolically with a rendezvous per message, the actions are
//    emitted in the order they run, and whenever no rank can move, one blocked SEND is released by hoisting its
//    matching RECV on the receiving rank to the point where that rank is blocked (a RECV may always run
//    earlier: only its consumer needs it). SEND_F is preferred, so the downstream rank takes the activation
//    before it returns the gradient, the order of Megatron's send_backward_recv_forward. Every hoist
//    moves one message, so this ends; the emitted programs are one complete execution, hence deadlock-free
//    under rendezvous semantics and, a fortiori, under eager sends. Both steps are O(actions).
#include <cstdint>
#include <deque>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cost_model/schedule/budget.hpp"
#include "cost_model/schedule/generate.hpp"

namespace zeropp::schedule {
namespace {

bool uses_weights(ActionType t) {
  return t == ActionType::F || t == ActionType::B || t == ActionType::BW || t == ActionType::RECOMPUTE;
}
bool is_weight_grad(ActionType t) { return t == ActionType::W || t == ActionType::BW; }
bool is_send(ActionType t) { return t == ActionType::SEND_F || t == ActionType::SEND_B; }
bool is_recv(ActionType t) { return t == ActionType::RECV_F || t == ActionType::RECV_B; }

class Planner {
 public:
  Planner(const Program& prog, const LoweringOptions& opts)
      : prog_(prog), opts_(opts), p_(prog.pp), S_(prog.stages()), U_(prog.unit > 0 ? prog.unit : prog.microbatches) {}

  RankProgram plan(int r) {
    const RankProgram& in = prog_.ranks[r];
    const int n = static_cast<int>(in.size());
    mark_lasts(in);
    RankProgram out;
    out.reserve(static_cast<std::size_t>(n) * 3 + 2);
    std::vector<char> gathered(prog_.v, 0);
    RankProgram deferred_syncs;  // DP_SYNCs held until the rank's backward is over (no dp_sync_overlap)
    int active = -1;             // per_unit: the gathered chunk's stage
    const bool sharded = opts_.shard != ShardPolicy::none;
    for (int i = 0; i < n; ++i) {
      const Action& a = in[i];
      const int chunk = a.stage / p_;
      if (uses_weights(a.type)) {
        switch (opts_.shard) {
          case ShardPolicy::none:
            break;
          case ShardPolicy::per_microbatch:
            out.push_back({ActionType::UNSHARD, a.stage, kNoMicrobatch});
            break;
          case ShardPolicy::per_unit:
            if (active != a.stage) {
              if (active >= 0) out.push_back({ActionType::RESHARD, active, kNoMicrobatch});
              out.push_back({ActionType::UNSHARD, a.stage, kNoMicrobatch});
              active = a.stage;
            }
            break;
          case ShardPolicy::per_iteration:
            if (!gathered[chunk]) {
              out.push_back({ActionType::UNSHARD, a.stage, kNoMicrobatch});
              gathered[chunk] = 1;
            }
            break;
        }
      }
      if (opts_.p2p) add_recv(r, a, out);
      out.push_back(a);
      if (opts_.p2p) add_send(r, a, out);
      if (uses_weights(a.type)) {
        if (opts_.shard == ShardPolicy::per_microbatch ||
            (opts_.shard == ShardPolicy::per_iteration && last_use_of_stage_[i]) ||
            (opts_.shard == ShardPolicy::per_unit && last_use_in_unit_[i])) {
          out.push_back({ActionType::RESHARD, a.stage, kNoMicrobatch});
          if (opts_.shard == ShardPolicy::per_unit) active = -1;
        }
      }
      if (is_weight_grad(a.type)) {
        if (sharded && opts_.grad_reduce == GradReduce::per_w) {
          out.push_back({ActionType::REDUCE_GRAD, a.stage, a.microbatch});
        } else if (sharded && last_wgrad_in_unit_[i]) {
          out.push_back({ActionType::REDUCE_GRAD, a.stage, kNoMicrobatch});
        }
        if (opts_.dp_sync && last_wgrad_of_stage_[i]) {
          if (opts_.dp_sync_overlap)
            out.push_back({ActionType::DP_SYNC, a.stage, kNoMicrobatch});
          else
            deferred_syncs.push_back({ActionType::DP_SYNC, a.stage, kNoMicrobatch});
        }
      }
    }
    out.insert(out.end(), deferred_syncs.begin(), deferred_syncs.end());
    if (opts_.opt_step) out.push_back({ActionType::OPT_STEP, r, kNoMicrobatch});
    return out;
  }

 private:
  // One backward pass over a rank's compute actions marks the last weight use / weight gradient per stage in
  // the iteration and per unit.
  void mark_lasts(const RankProgram& in) {
    const std::size_t n = in.size();
    last_use_of_stage_.assign(n, 0);
    last_use_in_unit_.assign(n, 0);
    last_wgrad_in_unit_.assign(n, 0);
    last_wgrad_of_stage_.assign(n, 0);
    std::vector<char> use_seen(prog_.v, 0), wgrad_seen(prog_.v, 0);
    std::vector<int> wgrad_unit(prog_.v, -1);
    int use_unit = -1;
    for (std::size_t j = n; j-- > 0;) {
      const Action& a = in[j];
      const int chunk = a.stage / p_;
      const int unit = a.microbatch / U_;
      if (uses_weights(a.type)) {
        if (!use_seen[chunk]) last_use_of_stage_[j] = use_seen[chunk] = 1;
        if (use_unit != unit) {
          last_use_in_unit_[j] = 1;
          use_unit = unit;
        }
      }
      if (is_weight_grad(a.type)) {
        if (!wgrad_seen[chunk]) last_wgrad_of_stage_[j] = wgrad_seen[chunk] = 1;
        if (wgrad_unit[chunk] != unit) {
          last_wgrad_in_unit_[j] = 1;
          wgrad_unit[chunk] = unit;
        }
      }
    }
  }

  void add_recv(int r, const Action& a, RankProgram& out) const {
    if (a.type == ActionType::F && a.stage > 0 && owner(a.stage - 1) != r) {
      out.push_back({ActionType::RECV_F, a.stage, a.microbatch});
    } else if ((a.type == ActionType::B || a.type == ActionType::BW) && a.stage < S_ - 1 && owner(a.stage + 1) != r) {
      out.push_back({ActionType::RECV_B, a.stage, a.microbatch});
    }
  }
  void add_send(int r, const Action& a, RankProgram& out) const {
    if (a.type == ActionType::F && a.stage < S_ - 1 && owner(a.stage + 1) != r) {
      out.push_back({ActionType::SEND_F, a.stage, a.microbatch});
    } else if ((a.type == ActionType::B || a.type == ActionType::BW) && a.stage > 0 && owner(a.stage - 1) != r) {
      out.push_back({ActionType::SEND_B, a.stage, a.microbatch});
    }
  }
  int owner(int s) const { return s % p_; }

  const Program& prog_;
  const LoweringOptions& opts_;
  const int p_;
  const int S_;
  const int U_;
  std::vector<char> last_use_of_stage_, last_use_in_unit_, last_wgrad_in_unit_, last_wgrad_of_stage_;
};

// Step 2: rendezvous execution of the planned programs, emitting actions in the order they run.
class Orderer {
 public:
  Orderer(const Program& shape, std::vector<RankProgram> plans)
      : p_(shape.pp), S_(shape.stages()), B_(shape.microbatches), plans_(std::move(plans)) {
    const std::size_t n = static_cast<std::size_t>(S_) * B_;
    recv_f_at_.assign(n, -1);
    recv_b_at_.assign(n, -1);
    ranks_.resize(p_);
    for (int r = 0; r < p_; ++r) {
      const RankProgram& pl = plans_[r];
      ranks_[r].skip.assign(pl.size(), 0);
      ranks_[r].out.reserve(pl.size());
      for (std::size_t i = 0; i < pl.size(); ++i) {
        const Action& a = pl[i];
        if (a.type == ActionType::RECV_F) recv_f_at_[key(a.stage, a.microbatch)] = static_cast<std::int32_t>(i);
        if (a.type == ActionType::RECV_B) recv_b_at_[key(a.stage, a.microbatch)] = static_cast<std::int32_t>(i);
      }
    }
  }

  std::vector<RankProgram> run() {
    for (int r = 0; r < p_; ++r) enqueue(r);
    for (;;) {
      while (!work_.empty()) {
        const int r = work_.front();
        work_.pop_front();
        ranks_[r].queued = false;
        advance(r);
      }
      if (!release_one()) break;
    }
    std::vector<RankProgram> result(p_);
    for (int r = 0; r < p_; ++r) {
      if (current(r) != nullptr) {
        const int i = static_cast<int>(ranks_[r].pc);
        throw ProgramError(r, i,
                           "lower: rank " + std::to_string(r) + " blocked at planned action " + std::to_string(i) +
                               " '" + to_string(plans_[r][i]) +
                               "' with every other rank waiting for a receive: the compute order deadlocks");
      }
      result[r] = std::move(ranks_[r].out);
    }
    return result;
  }

 private:
  struct RankState {
    std::size_t pc = 0;
    bool queued = false;
    std::vector<char> skip;  // RECVs hoisted earlier
    RankProgram out;
  };

  std::size_t key(int s, int m) const { return static_cast<std::size_t>(s) * B_ + m; }
  int owner(int s) const { return s % p_; }

  void enqueue(int r) {
    if (!ranks_[r].queued) {
      ranks_[r].queued = true;
      work_.push_back(r);
    }
  }

  // The rank's next planned action that has not run yet (hoisted RECVs are skipped), or null at the end.
  const Action* current(int r) {
    RankState& st = ranks_[r];
    while (st.pc < st.skip.size() && st.skip[st.pc]) ++st.pc;
    return st.pc < st.skip.size() ? &plans_[r][st.pc] : nullptr;
  }

  // The RECV that receives what `send` sends.
  static Action matching_recv(const Action& send) {
    return send.type == ActionType::SEND_F ? Action{ActionType::RECV_F, send.stage + 1, send.microbatch}
                                           : Action{ActionType::RECV_B, send.stage - 1, send.microbatch};
  }
  static Action matching_send(const Action& recv) {
    return recv.type == ActionType::RECV_F ? Action{ActionType::SEND_F, recv.stage - 1, recv.microbatch}
                                           : Action{ActionType::SEND_B, recv.stage + 1, recv.microbatch};
  }
  int peer(const Action& a) const {
    switch (a.type) {
      case ActionType::SEND_F:
        return owner(a.stage + 1);
      case ActionType::RECV_F:
        return owner(a.stage - 1);
      case ActionType::SEND_B:
        return owner(a.stage - 1);
      default:
        return owner(a.stage + 1);  // RECV_B
    }
  }

  void advance(int r) {
    RankState& st = ranks_[r];
    while (const Action* a = current(r)) {
      if (is_send(a->type) || is_recv(a->type)) {
        const int q = peer(*a);
        const Action* b = current(q);
        const Action want = is_send(a->type) ? matching_recv(*a) : matching_send(*a);
        if (b == nullptr || !(*b == want)) {
          if (is_send(a->type)) (a->type == ActionType::SEND_F ? blocked_f_ : blocked_b_).push_back({r, st.pc});
          return;
        }
        st.out.push_back(*a);
        ranks_[q].out.push_back(*b);
        ++st.pc;
        ++ranks_[q].pc;
        enqueue(q);
        continue;
      }
      st.out.push_back(*a);
      ++st.pc;
    }
  }

  // No rank can move: hoist the RECV of one blocked SEND (SEND_F first) to where its receiver stands.
  bool release_one() {
    for (auto* queue : {&blocked_f_, &blocked_b_}) {
      while (!queue->empty()) {
        const auto [r, pc] = queue->front();
        queue->pop_front();
        const Action* a = current(r);
        if (a == nullptr || ranks_[r].pc != pc || !is_send(a->type)) continue;  // stale entry
        const Action recv = matching_recv(*a);
        const int q = peer(*a);
        const std::int32_t at =
            (recv.type == ActionType::RECV_F ? recv_f_at_ : recv_b_at_)[key(recv.stage, recv.microbatch)];
        if (at < 0 || static_cast<std::size_t>(at) < ranks_[q].pc || ranks_[q].skip[at]) {
          throw ProgramError(r, static_cast<int>(pc),
                             "lower: '" + to_string(*a) + "' has no pending receive on rank " + std::to_string(q));
        }
        ranks_[r].out.push_back(*a);
        ranks_[q].out.push_back(recv);
        ranks_[q].skip[at] = 1;
        ++ranks_[r].pc;
        enqueue(r);
        enqueue(q);
        return true;
      }
    }
    return false;
  }

  const int p_;
  const int S_;
  const int B_;
  std::vector<RankProgram> plans_;
  std::vector<std::int32_t> recv_f_at_, recv_b_at_;  // plan index of RECV_F/RECV_B(s,m) on its rank
  std::vector<RankState> ranks_;
  std::deque<int> work_;
  std::deque<std::pair<int, std::size_t>> blocked_f_, blocked_b_;
};

}  // namespace

Program lower(const Program& compute_only, const LoweringOptions& opts) {
  // The lowered program's memory budget (budget.hpp), before any of it is built.
  if (!within_action_budget(compute_only.pp, compute_only.v, compute_only.microbatches))
    throw std::invalid_argument(
        "lower: " + over_budget_message(compute_only.pp, compute_only.v, compute_only.microbatches, /*lowered=*/true));
  for (std::size_t r = 0; r < compute_only.ranks.size(); ++r) {
    const RankProgram& rp = compute_only.ranks[r];
    for (std::size_t i = 0; i < rp.size(); ++i) {
      if (!is_compute(rp[i].type)) {
        throw std::invalid_argument("lower: rank " + std::to_string(r) + " action " + std::to_string(i) + " '" +
                                    to_string(rp[i]) +
                                    "' is not a compute action; lower() takes a compute-only program");
      }
    }
  }
  // A broken input is reported with its own rule, before lowering can trip over it.
  if (opts.check_input) validate_program(compute_only, ValidateOptions{.require_w = false});

  Planner planner(compute_only, opts);
  std::vector<RankProgram> plans(compute_only.pp);
  for (int r = 0; r < compute_only.pp; ++r) plans[r] = planner.plan(r);

  Program out;
  out.pp = compute_only.pp;
  out.v = compute_only.v;
  out.microbatches = compute_only.microbatches;
  out.unit = compute_only.unit;
  out.ranks = Orderer(compute_only, std::move(plans)).run();
  return out;
}

}  // namespace zeropp::schedule
