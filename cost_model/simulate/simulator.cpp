#include "cost_model/simulate/simulator.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <utility>
#include <vector>

namespace zeropp::simulate {

using schedule::Action;
using schedule::ActionType;
using schedule::Program;

std::string_view name(MemoryPart p) {
  switch (p) {
    case MemoryPart::static_state:
      return "static";
    case MemoryPart::activations:
      return "activations";
    case MemoryPart::recompute:
      return "recompute";
    case MemoryPart::w_buffers:
      return "w_buffers";
    case MemoryPart::gathered_params:
      return "gathered_params";
    case MemoryPart::grad_buffers:
      return "grad_buffers";
  }
  return "?";
}

std::string_view name(Stream s) {
  switch (s) {
    case Stream::compute:
      return "compute";
    case Stream::p2p_next:
      return "p2p_next";
    case Stream::p2p_prev:
      return "p2p_prev";
    case Stream::intra:
      return "intra_collective";
    case Stream::inter:
      return "inter_collective";
  }
  return "?";
}

Stream stream_of(ActionType t) {
  switch (t) {
    case ActionType::SEND_F:
    case ActionType::RECV_B:
      return Stream::p2p_next;
    case ActionType::RECV_F:
    case ActionType::SEND_B:
      return Stream::p2p_prev;
    case ActionType::UNSHARD:
    case ActionType::REDUCE_GRAD:
      return Stream::intra;
    case ActionType::DP_SYNC:
      return Stream::inter;
    default:
      return Stream::compute;  // F, B, W, BW, RECOMPUTE, RESHARD, OPT_STEP
  }
}

double SimResult::bubble_fraction() const {
  if (ranks.empty() || makespan <= 0) return 0;
  double idle = 0;
  for (const RankSummary& r : ranks) idle += r.bubble;
  return idle / (makespan * static_cast<double>(ranks.size()));
}

std::vector<int> SimResult::peak_activation_microbatches() const {
  std::vector<int> out;
  out.reserve(ranks.size());
  for (const RankSummary& r : ranks) out.push_back(r.peak_activation_microbatches);
  return out;
}

namespace {

constexpr std::int32_t kNone = -1;

// Action types that are looked up by (stage, micro-batch) from other actions.
enum Table : int { tF, tB, tW, tBW, tRECOMPUTE, tSEND_F, tSEND_B, tRECV_F, tRECV_B, kTables };

int table_of(ActionType t) {
  switch (t) {
    case ActionType::F:
      return tF;
    case ActionType::B:
      return tB;
    case ActionType::W:
      return tW;
    case ActionType::BW:
      return tBW;
    case ActionType::RECOMPUTE:
      return tRECOMPUTE;
    case ActionType::SEND_F:
      return tSEND_F;
    case ActionType::SEND_B:
      return tSEND_B;
    case ActionType::RECV_F:
      return tRECV_F;
    case ActionType::RECV_B:
      return tRECV_B;
    default:
      return -1;
  }
}

std::string describe(const Action& a) { return schedule::to_string(a); }

// The program flattened into arrays, with its dependency graph. One engine serves many simulations (simulate()
// keeps one per thread): every run sizes and fills its arrays anew, and they keep their capacity in between.
class Engine {
 public:
  SimResult run(const Program& program, const ActionCosts& costs, const SimOptions& options) {
    program_ = &program;
    costs_ = &costs;
    result_ = SimResult{};
    extra_.clear();
    flatten();
    build_dependencies();
    build_successors();
    schedule_times();
    if (costs_->contention > 0) {
      stretch_for_contention();
      schedule_times();
    }
    summarize(options);
    return std::move(result_);
  }

  // The bytes its arrays hold between runs.
  std::size_t held_bytes() const {
    std::size_t bytes = action_.capacity() * sizeof(const Action*) + extra_.capacity() * sizeof(double) +
                        first_in_stream_.capacity() * sizeof(first_in_stream_[0]);
    for (const auto* v :
         {&rank_, &prev_in_stream_, &next_in_stream_, &dep_offset_, &deps_, &succ_offset_, &succ_, &indegree_, &ready_})
      bytes += v->capacity() * sizeof(std::int32_t);
    for (const auto& t : table_) bytes += t.capacity() * sizeof(std::int32_t);
    return bytes;
  }

 private:
  const Program* program_ = nullptr;
  const ActionCosts* costs_ = nullptr;
  SimResult result_;
  int stages_ = 0;
  int microbatches_ = 0;

  // Per action (flat id).
  std::vector<const Action*> action_;
  std::vector<std::int32_t> rank_;
  std::vector<std::int32_t> prev_in_stream_;
  std::vector<std::int32_t> next_in_stream_;
  std::vector<std::int32_t> dep_offset_;  // CSR: deps of action i are deps_[dep_offset_[i] .. dep_offset_[i+1])
  std::vector<std::int32_t> deps_;
  // Per rank and stream: the first action of the stream.
  std::vector<std::array<std::int32_t, kStreams>> first_in_stream_;
  // Lookups by (stage * B + micro-batch), one per Table.
  std::array<std::vector<std::int32_t>, kTables> table_;
  // Seconds added to each action by compute/communication contention (empty: none).
  std::vector<double> extra_;
  // The data edges reversed (CSR, like dep_offset_/deps_): the actions that wait for action i are
  // succ_[succ_offset_[i] .. succ_offset_[i+1]). Built once; schedule_times() runs twice with contention.
  std::vector<std::int32_t> succ_offset_;
  std::vector<std::int32_t> succ_;
  // schedule_times(): unfinished predecessors per action, and the actions whose predecessors have all finished.
  std::vector<std::int32_t> indegree_;
  std::vector<std::int32_t> ready_;

  std::int32_t lookup(int table, int stage, int mb) const {
    if (stage < 0 || stage >= stages_) return kNone;
    return table_[table][static_cast<std::size_t>(stage) * microbatches_ + mb];
  }

  [[noreturn]] void fail(std::int32_t id, const std::string& why) const {
    const int r = rank_[id];
    const int index = id - result_.rank_offset[r];
    throw SimulationError(
        r, index,
        "rank " + std::to_string(r) + " action " + std::to_string(index) + " (" + describe(*action_[id]) + "): " + why);
  }

  std::string where(std::int32_t id) const {
    const int r = rank_[id];
    return describe(*action_[id]) + " (rank " + std::to_string(r) + " action " +
           std::to_string(id - result_.rank_offset[r]) + ")";
  }

  // Pass 1: flat arrays, stream order, (stage, micro-batch) tables; checks ranges and duplicates.
  void flatten() {
    const int pp = program_->pp;
    stages_ = program_->stages();
    microbatches_ = program_->microbatches;
    if (pp < 1 || program_->v < 1 || microbatches_ < 1 || static_cast<int>(program_->ranks.size()) != pp) {
      throw SimulationError(0, 0,
                            "program shape: pp=" + std::to_string(pp) + " v=" + std::to_string(program_->v) +
                                " B=" + std::to_string(microbatches_) + " with " +
                                std::to_string(program_->ranks.size()) + " rank programs");
    }
    costs_->check(*program_);
    std::size_t n = 0;
    result_.pp = pp;
    result_.rank_offset.assign(pp + 1, 0);
    for (int r = 0; r < pp; ++r) {
      n += program_->ranks[r].size();
      if (n > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max() / 2)) {
        throw SimulationError(r, 0, "program too large for 32-bit action ids");
      }
      result_.rank_offset[r + 1] = static_cast<std::int32_t>(n);
    }
    action_.resize(n);
    rank_.resize(n);
    prev_in_stream_.assign(n, kNone);
    next_in_stream_.assign(n, kNone);
    result_.stream.resize(n);
    first_in_stream_.assign(pp, {kNone, kNone, kNone, kNone, kNone});
    for (auto& t : table_) t.assign(static_cast<std::size_t>(stages_) * microbatches_, kNone);

    std::int32_t id = 0;
    for (int r = 0; r < pp; ++r) {
      std::array<std::int32_t, kStreams> last{kNone, kNone, kNone, kNone, kNone};
      for (const Action& a : program_->ranks[r]) {
        action_[id] = &a;
        rank_[id] = r;
        if (a.stage < 0 || a.stage >= stages_) {
          fail(id, "stage " + std::to_string(a.stage) + " is outside [0, pp*v=" + std::to_string(stages_) + ")");
        }
        if (a.stage % pp != r && a.type != ActionType::OPT_STEP) {
          fail(id, "stage " + std::to_string(a.stage) + " belongs to rank " + std::to_string(a.stage % pp));
        }
        const bool needs_mb = table_of(a.type) >= 0;
        if (needs_mb && (a.microbatch < 0 || a.microbatch >= microbatches_)) {
          fail(id, "micro-batch " + std::to_string(a.microbatch) +
                       " is outside [0, B=" + std::to_string(microbatches_) + ")");
        }
        if (needs_mb) {
          std::int32_t& slot =
              table_[table_of(a.type)][static_cast<std::size_t>(a.stage) * microbatches_ + a.microbatch];
          if (slot != kNone) fail(id, "duplicates " + where(slot));
          slot = id;
        }
        const Stream s = stream_of(a.type);
        const int k = static_cast<int>(s);
        result_.stream[id] = s;
        if (last[k] == kNone) {
          first_in_stream_[r][k] = id;
        } else {
          prev_in_stream_[id] = last[k];
          next_in_stream_[last[k]] = id;
        }
        last[k] = id;
        ++id;
      }
    }
  }

  // Pass 2: data dependencies (see simulator.hpp) and bytes per category.
  void build_dependencies() {
    const std::size_t n = action_.size();
    dep_offset_.assign(n + 1, 0);
    deps_.clear();
    deps_.reserve(2 * n);
    result_.ranks.assign(program_->pp, RankSummary{});
    std::vector<std::int32_t> last_unshard(stages_, kNone);
    std::vector<std::int32_t> last_grad(stages_, kNone);    // latest W/BW
    std::vector<std::int32_t> last_reduce(stages_, kNone);  // latest REDUCE_GRAD
    const int last_stage = stages_ - 1;
    const int limit = costs_->gathered_limit;

    auto need = [&](std::int32_t id, std::int32_t dep, const char* what, int stage, int mb) {
      if (dep == kNone) {
        fail(id, std::string("needs ") + std::to_string(stage) + what + std::to_string(mb) +
                     ", which no rank's program contains");
      }
      deps_.push_back(dep);
    };
    auto optional = [&](std::int32_t dep) {
      if (dep != kNone) deps_.push_back(dep);
    };

    for (int r = 0; r < program_->pp; ++r) {
      RankSummary& summary = result_.ranks[r];
      std::array<std::int32_t, kStreams> last{kNone, kNone, kNone, kNone, kNone};
      std::vector<std::int32_t> reshards;  // this rank's RESHARDs so far, for the gathered-buffer limit
      int unshards = 0;
      for (std::int32_t id = result_.rank_offset[r]; id < result_.rank_offset[r + 1]; ++id) {
        const Action& a = *action_[id];
        const int s = a.stage, m = a.microbatch;
        const StageCost& c = costs_->stages[s];
        switch (a.type) {
          case ActionType::F:
            if (s > 0) {
              const std::int32_t recv = lookup(tRECV_F, s, m);
              if (recv != kNone) {
                deps_.push_back(recv);
              } else {
                const std::int32_t prev = lookup(tF, s - 1, m);
                need(id, prev, "F", s - 1, m);
                if (rank_[prev] != r) result_.ranks[rank_[prev]].comm_bytes.pp += costs_->stages[s - 1].send_f.bytes;
              }
            }
            optional(last_unshard[s]);
            break;
          case ActionType::B:
          case ActionType::BW:
            need(id, lookup(tF, s, m), "F", s, m);
            optional(lookup(tRECOMPUTE, s, m));
            if (s < last_stage) {
              const std::int32_t recv = lookup(tRECV_B, s, m);
              if (recv != kNone) {
                deps_.push_back(recv);
              } else {
                std::int32_t next = lookup(tB, s + 1, m);
                if (next == kNone) next = lookup(tBW, s + 1, m);
                need(id, next, "B", s + 1, m);
                if (rank_[next] != r) result_.ranks[rank_[next]].comm_bytes.pp += costs_->stages[s + 1].send_b.bytes;
              }
            }
            optional(last_unshard[s]);
            if (a.type == ActionType::BW) last_grad[s] = id;
            break;
          case ActionType::W:
            need(id, lookup(tB, s, m), "B", s, m);
            last_grad[s] = id;
            break;
          case ActionType::RECOMPUTE:
            need(id, lookup(tF, s, m), "F", s, m);
            optional(last_unshard[s]);
            break;
          case ActionType::SEND_F:
            need(id, lookup(tF, s, m), "F", s, m);
            summary.comm_bytes.pp += c.send_f.bytes;
            break;
          case ActionType::SEND_B: {
            std::int32_t b = lookup(tB, s, m);
            if (b == kNone) b = lookup(tBW, s, m);
            need(id, b, "B", s, m);
            summary.comm_bytes.pp += c.send_b.bytes;
            break;
          }
          case ActionType::RECV_F:
            if (s == 0) fail(id, "stage 0 has no previous stage to receive from");
            need(id, lookup(tSEND_F, s - 1, m), "SEND_F", s - 1, m);
            break;
          case ActionType::RECV_B:
            if (s == last_stage) fail(id, "the last stage has no next stage to receive from");
            need(id, lookup(tSEND_B, s + 1, m), "SEND_B", s + 1, m);
            break;
          case ActionType::UNSHARD:
            if (limit > 0 && unshards >= limit) {
              const int freeing = unshards - limit;
              if (freeing >= static_cast<int>(reshards.size())) {
                fail(id, "more than " + std::to_string(limit) + " gathered buffers: RESHARD number " +
                             std::to_string(freeing) + " of the rank must come before it");
              }
              deps_.push_back(reshards[freeing]);
            }
            ++unshards;
            last_unshard[s] = id;
            summary.comm_bytes.zero += c.unshard.bytes;
            break;
          case ActionType::RESHARD:
            optional(last_unshard[s]);
            reshards.push_back(id);
            break;
          case ActionType::REDUCE_GRAD:
            optional(last_grad[s]);
            last_reduce[s] = id;
            summary.comm_bytes.zero += c.reduce_grad.bytes;
            break;
          case ActionType::DP_SYNC:
            optional(last_reduce[s] != kNone ? last_reduce[s] : last_grad[s]);
            summary.comm_bytes.dp += c.dp_sync.bytes;
            break;
          case ActionType::OPT_STEP:
            for (int k = 1; k < kStreams; ++k) optional(last[k]);  // compute is ordered by its stream already
            summary.comm_bytes.dp += costs_->opt_step[r].bytes;
            break;
        }
        last[static_cast<int>(result_.stream[id])] = id;
        dep_offset_[id + 1] = static_cast<std::int32_t>(deps_.size());
      }
    }
    for (const RankSummary& rs : result_.ranks) {
      result_.comm_bytes.pp += rs.comm_bytes.pp;
      result_.comm_bytes.zero += rs.comm_bytes.zero;
      result_.comm_bytes.dp += rs.comm_bytes.dp;
    }
  }

  double base_duration(std::int32_t id) const {
    const Action& a = *action_[id];
    const StageCost& c = costs_->stages[a.stage];
    switch (a.type) {
      case ActionType::F:
      case ActionType::B:
      case ActionType::W:
      case ActionType::BW:
      case ActionType::RECOMPUTE:
        return c.compute_seconds(a.type);
      case ActionType::SEND_F:
        return c.send_f.seconds;
      case ActionType::SEND_B:
        return c.send_b.seconds;
      case ActionType::UNSHARD:
        return c.unshard.seconds;
      case ActionType::REDUCE_GRAD:
        return c.reduce_grad.seconds;
      case ActionType::DP_SYNC:
        return c.dp_sync.seconds;
      case ActionType::OPT_STEP:
        return costs_->opt_step[rank_[id]].seconds;
      case ActionType::RESHARD:
      case ActionType::RECV_F:
      case ActionType::RECV_B:
        return 0;
    }
    return 0;
  }

  // Seconds between the end of `dep` and the moment `id` may start: the implicit p2p transfer of a
  // compute-only program when producer and consumer sit on different ranks, else nothing.
  double delay(std::int32_t id, std::int32_t dep) const {
    if (rank_[id] == rank_[dep]) return 0;
    const ActionType t = action_[id]->type, d = action_[dep]->type;
    if (t == ActionType::F && d == ActionType::F) return costs_->stages[action_[dep]->stage].send_f.seconds;
    if ((t == ActionType::B || t == ActionType::BW) && (d == ActionType::B || d == ActionType::BW)) {
      return costs_->stages[action_[dep]->stage].send_b.seconds;
    }
    return 0;
  }

  // The W/BW whose gradients a bucketed DP_SYNC streams out (its only dependency), or kNone.
  std::int32_t bucketed_grad_source(std::int32_t id) const {
    const Action& a = *action_[id];
    if (a.type != ActionType::DP_SYNC || costs_->stages[a.stage].dp_sync_buckets <= 1) return kNone;
    if (dep_offset_[id + 1] - dep_offset_[id] != 1) return kNone;
    const std::int32_t dep = deps_[dep_offset_[id]];
    const ActionType t = action_[dep]->type;
    return t == ActionType::W || t == ActionType::BW ? dep : kNone;
  }

  double duration(std::int32_t id) const { return base_duration(id) + (extra_.empty() ? 0.0 : extra_[id]); }

  // The successor lists, counted into succ_offset_[dep + 2] so that filling advances succ_offset_[dep + 1] from
  // dep's first slot to its last: no cursor array beside it. Successors stay in increasing id order.
  void build_successors() {
    const std::size_t n = action_.size();
    succ_offset_.assign(n + 2, 0);
    for (const std::int32_t dep : deps_) ++succ_offset_[dep + 2];
    for (std::size_t i = 2; i < n + 2; ++i) succ_offset_[i] += succ_offset_[i - 1];
    succ_.resize(deps_.size());
    for (std::size_t i = 0; i < n; ++i) {
      for (std::int32_t e = dep_offset_[i]; e < dep_offset_[i + 1]; ++e) {
        succ_[succ_offset_[deps_[e] + 1]++] = static_cast<std::int32_t>(i);
      }
    }
    succ_offset_.pop_back();  // n + 1 entries: [succ_offset_[i], succ_offset_[i+1]) as for deps
  }

  // Pass 3: Kahn's order over stream and data edges; each action starts at the latest of its predecessors.
  void schedule_times() {
    const std::size_t n = action_.size();
    std::vector<std::int32_t>& indegree = indegree_;
    std::vector<std::int32_t>& ready = ready_;
    indegree.resize(n);
    ready.clear();
    ready.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      indegree[i] = dep_offset_[i + 1] - dep_offset_[i] + (prev_in_stream_[i] != kNone ? 1 : 0);
      if (indegree[i] == 0) ready.push_back(static_cast<std::int32_t>(i));
    }
    std::vector<double>& start = result_.start;
    std::vector<double>& end = result_.end;
    start.resize(n);  // every action is written below before it is read (a deadlock throws first)
    end.resize(n);
    std::size_t done = 0;
    double makespan = 0;
    while (!ready.empty()) {
      const std::int32_t u = ready.back();
      ready.pop_back();
      ++done;
      const double stream_free = prev_in_stream_[u] != kNone ? end[prev_in_stream_[u]] : 0.0;
      const ActionType t = action_[u]->type;
      if (t == ActionType::RECV_F || t == ActionType::RECV_B) {
        // The transfer is timed on the sender's stream; the receive spans the part of it after it was posted.
        const std::int32_t send = deps_[dep_offset_[u]];
        start[u] = std::max(stream_free, start[send]);
        end[u] = std::max(stream_free, end[send]);
      } else if (const std::int32_t grad = bucketed_grad_source(u); grad != kNone) {
        // Buckets of the gradients become ready evenly over the W/BW, and go out one after another: the first
        // can leave after 1/n of it, the last after its end (see StageCost::dp_sync_buckets).
        const double n = costs_->stages[action_[u]->stage].dp_sync_buckets;
        const double d = duration(u);
        start[u] = std::max(stream_free, start[grad] + (end[grad] - start[grad]) / n);
        end[u] = std::max(start[u] + d, end[grad] + d / n);
      } else {
        double s = stream_free;
        for (std::int32_t e = dep_offset_[u]; e < dep_offset_[u + 1]; ++e) {
          s = std::max(s, end[deps_[e]] + delay(u, deps_[e]));
        }
        start[u] = s;
        end[u] = s + duration(u);
      }
      makespan = std::max(makespan, end[u]);
      auto release = [&](std::int32_t v) {
        if (--indegree[v] == 0) ready.push_back(v);
      };
      if (next_in_stream_[u] != kNone) release(next_in_stream_[u]);
      for (std::int32_t e = succ_offset_[u]; e < succ_offset_[u + 1]; ++e) release(succ_[e]);
    }
    if (done != n) report_deadlock(indegree);
    result_.makespan = makespan;
  }

  // Contention, a first-order correction: each compute action (F, B, W, BW, RECOMPUTE) is stretched by
  // contention x the seconds the rank's communication streams (p2p, intra, inter) were busy during it in the
  // uncontended timeline just computed; schedule_times() then runs again with the stretched durations. (Stretching
  // moves the overlaps; the second pass does not iterate to a fixed point.)
  void stretch_for_contention() {
    extra_.assign(action_.size(), 0);
    const std::vector<double>& start = result_.start;
    const std::vector<double>& end = result_.end;
    for (int r = 0; r < program_->pp; ++r) {
      // The union of the two collective streams' busy intervals, in time order (each stream's are already).
      std::vector<std::pair<double, double>> busy;
      for (Stream s : {Stream::p2p_next, Stream::p2p_prev, Stream::intra, Stream::inter}) {
        for (std::int32_t id = first_in_stream_[r][static_cast<int>(s)]; id != kNone; id = next_in_stream_[id]) {
          if (end[id] > start[id]) busy.emplace_back(start[id], end[id]);
        }
      }
      std::sort(busy.begin(), busy.end());
      std::vector<std::pair<double, double>> merged;
      for (const auto& iv : busy) {
        if (!merged.empty() && iv.first <= merged.back().second) {
          merged.back().second = std::max(merged.back().second, iv.second);
        } else {
          merged.push_back(iv);
        }
      }
      std::size_t j = 0;
      for (std::int32_t id = first_in_stream_[r][static_cast<int>(Stream::compute)]; id != kNone;
           id = next_in_stream_[id]) {
        if (!schedule::is_compute(action_[id]->type)) continue;
        while (j < merged.size() && merged[j].second <= start[id]) ++j;
        double overlap = 0;
        for (std::size_t k = j; k < merged.size() && merged[k].first < end[id]; ++k) {
          overlap += std::min(end[id], merged[k].second) - std::max(start[id], merged[k].first);
        }
        extra_[id] = costs_->contention * overlap;
      }
    }
  }

  // Some actions never became ready: name the first stuck action of the first stuck rank and what it waits for.
  [[noreturn]] void report_deadlock(const std::vector<std::int32_t>& indegree) const {
    for (int r = 0; r < program_->pp; ++r) {
      for (std::int32_t id = result_.rank_offset[r]; id < result_.rank_offset[r + 1]; ++id) {
        if (indegree[id] == 0) continue;
        // The earliest stuck action in program order: its own predecessors on the stream have run, so what
        // blocks it is a data dependency (or its stream predecessor, when that one is stuck too).
        std::string waits;
        const std::int32_t prev = prev_in_stream_[id];
        if (prev != kNone && indegree[prev] != 0) {
          waits = where(prev) + " before it on the " + std::string(name(result_.stream[id])) + " stream";
        }
        for (std::int32_t e = dep_offset_[id]; e < dep_offset_[id + 1] && waits.empty(); ++e) {
          if (indegree[deps_[e]] != 0) waits = where(deps_[e]);
        }
        fail(id, "deadlock: waits for " + (waits.empty() ? std::string("an action that never runs") : waits) +
                     ", which can never run");
      }
    }
    throw SimulationError(0, 0, "deadlock: some actions never ran");
  }

  // Pass 4, per rank: merge the start/end events of its streams in time order to get the compute / exposed
  // communication / idle split, memory over time and in-flight micro-batches. Frees before allocations at equal
  // times, so a B that ends when the next F starts does not count both micro-batches.
  void summarize(const SimOptions& options) {
    const std::vector<double>& start = result_.start;
    const std::vector<double>& end = result_.end;
    std::vector<char> grad_allocated(stages_, 0);
    if (options.memory_timeline) result_.memory.assign(program_->pp, {});
    for (int r = 0; r < program_->pp; ++r) {
      RankSummary& summary = result_.ranks[r];
      std::array<std::int32_t, kStreams> cursor = first_in_stream_[r];
      std::array<char, kStreams> at_end{};  // 0: next event is the action's start, 1: its end
      // Each stream's next event time (its cursor's start or end), kept beside the cursor so that picking the
      // next event reads five values in place instead of five actions' times.
      std::array<double, kStreams> next_time{};
      for (int k = 0; k < kStreams; ++k) next_time[k] = cursor[k] != kNone ? start[cursor[k]] : 0.0;
      double memory = costs_->static_bytes[r];
      double peak = memory;
      Parts parts{};
      parts[static_cast<int>(MemoryPart::static_state)] = memory;
      summary.peak = PeakMemory{};
      summary.peak.bytes = parts;
      int inflight = 0, peak_inflight = 0;
      int busy_compute = 0, busy_comm = 0;
      double last_time = 0, compute = 0, exposed = 0;
      std::vector<MemoryPoint>* timeline = options.memory_timeline ? &result_.memory[r] : nullptr;
      if (timeline) timeline->push_back({0, memory});
      while (true) {
        int pick = -1;
        double best = 0;
        for (int k = 0; k < kStreams; ++k) {
          if (cursor[k] == kNone) continue;
          const double t = next_time[k];
          if (pick < 0 || t < best || (t == best && at_end[k] && !at_end[pick])) {
            pick = k;
            best = t;
          }
        }
        if (pick < 0) break;
        const double dt = best - last_time;
        if (busy_compute > 0) {
          compute += dt;
        } else if (busy_comm > 0) {
          exposed += dt;
        }
        last_time = best;
        const std::int32_t id = cursor[pick];
        const Action& a = *action_[id];
        const bool is_compute_stream = pick == static_cast<int>(Stream::compute);
        const double before = memory;
        const bool starting = !at_end[pick];
        if (starting) {
          (is_compute_stream ? busy_compute : busy_comm) += 1;
          memory += on_start(a, grad_allocated, inflight, parts);
          at_end[pick] = 1;
          next_time[pick] = end[id];
        } else {
          (is_compute_stream ? busy_compute : busy_comm) -= 1;
          memory += on_end(a, grad_allocated, inflight, parts);
          at_end[pick] = 0;
          cursor[pick] = next_in_stream_[id];
          if (cursor[pick] != kNone) next_time[pick] = start[cursor[pick]];
        }
        if (memory > peak) {
          peak = memory;
          summary.peak = {parts, best, id - result_.rank_offset[r], starting, a};
        }
        peak_inflight = std::max(peak_inflight, inflight);
        if (timeline && memory != before) {
          if (timeline->back().time == best) {
            timeline->back().bytes = memory;
          } else {
            timeline->push_back({best, memory});
          }
        }
      }
      summary.compute = compute;
      summary.exposed_comm = exposed;
      summary.bubble = std::max(0.0, result_.makespan - compute - exposed);
      summary.peak_memory_bytes = peak;
      summary.peak_activation_microbatches = peak_inflight;
    }
  }

  bool has(int table, int stage, int mb) const { return lookup(table, stage, mb) != kNone; }

  using Parts = std::array<double, kMemoryParts>;

  // Adds `bytes` to `part` of `parts` and returns them: every memory change is booked to one part.
  static double book(Parts& parts, MemoryPart part, double bytes) {
    parts[static_cast<int>(part)] += bytes;
    return bytes;
  }

  // Memory allocated when action `a` starts (bytes); updates the in-flight micro-batch count.
  double on_start(const Action& a, std::vector<char>& grad_allocated, int& inflight, Parts& parts) const {
    const StageCost& c = costs_->stages[a.stage];
    switch (a.type) {
      case ActionType::F:
        ++inflight;
        return book(parts, MemoryPart::activations,
                    has(tRECOMPUTE, a.stage, a.microbatch) ? c.checkpoint_bytes : c.activation_bytes);
      case ActionType::RECOMPUTE:
        return book(parts, MemoryPart::recompute, c.recompute_bytes);
      case ActionType::W:
      case ActionType::BW:
        if (!grad_allocated[a.stage]) {
          grad_allocated[a.stage] = 1;
          return book(parts, MemoryPart::grad_buffers, c.grad_buffer_bytes);
        }
        return 0;
      case ActionType::UNSHARD:
        return book(parts, MemoryPart::gathered_params, c.gathered_param_bytes);
      default:
        return 0;
    }
  }

  // Frees, by part, what a micro-batch holds of a stage until its B ends: the activations, or, when it is
  // recomputed, the checkpoint plus the one layer rebuilt at a time.
  double free_until_b(const Action& a, Parts& parts) const {
    const StageCost& c = costs_->stages[a.stage];
    if (!has(tRECOMPUTE, a.stage, a.microbatch)) return book(parts, MemoryPart::activations, -c.activation_bytes);
    return book(parts, MemoryPart::activations, -c.checkpoint_bytes) +
           book(parts, MemoryPart::recompute, -c.recompute_bytes);
  }

  // Memory change when action `a` ends (negative: freed).
  double on_end(const Action& a, std::vector<char>& grad_allocated, int& inflight, Parts& parts) const {
    const StageCost& c = costs_->stages[a.stage];
    switch (a.type) {
      case ActionType::B:
        --inflight;
        // What W still needs (inputs and output gradients of the weight GEMMs) stays until W ends.
        return book(parts, MemoryPart::w_buffers, has(tW, a.stage, a.microbatch) ? c.w_buffer_bytes : 0) +
               free_until_b(a, parts);
      case ActionType::BW:
        --inflight;
        return free_until_b(a, parts);
      case ActionType::W:
        return book(parts, MemoryPart::w_buffers, -c.w_buffer_bytes);
      case ActionType::RESHARD:
        return book(parts, MemoryPart::gathered_params, -c.gathered_param_bytes);
      case ActionType::REDUCE_GRAD:
        if (grad_allocated[a.stage]) {
          grad_allocated[a.stage] = 0;
          return book(parts, MemoryPart::grad_buffers, -c.grad_buffer_bytes);
        }
        return 0;
      default:
        return 0;
    }
  }
};

}  // namespace

SimResult simulate(const Program& program, const ActionCosts& costs, const SimOptions& options) {
  // One engine per thread, kept: a search simulates thousands of programs one after another, and arrays allocated
  // afresh for each are fresh pages the kernel faults in and zeroes every time (measured 2026-11-26 on the 2-vCPU
  // VM: about a third of the CPU time of a 236,736-action ZeroPP simulation, BM_SimulateZeroPP/64/2/256/16, went to
  // the kernel). What a very large program leaves behind (over kKeepBytes) is freed after its run.
  constexpr std::size_t kKeepBytes = std::size_t{64} << 20;
  thread_local Engine engine;
  const auto trim = [] {
    if (engine.held_bytes() > kKeepBytes) engine = Engine{};
  };
  try {
    SimResult result = engine.run(program, costs, options);
    trim();
    return result;
  } catch (...) {
    trim();
    throw;
  }
}

}  // namespace zeropp::simulate
