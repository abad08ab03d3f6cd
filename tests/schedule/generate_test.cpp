// Generator parameters, the recompute rule, and the bubbles the hand-made schedules are built for, timed by a
// small dependency-driven evaluator independent of the simulator (free communication, fixed costs per type).
#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>
#include <iostream>
#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "cost_model/schedule/generate.hpp"
#include "schedule_test_util.hpp"

namespace zeropp::schedule {
namespace {

using testing::count;

struct Costs {
  double f, b, w;
};
struct Timing {
  double makespan = 0;
  std::vector<double> busy, first, last;
};

// Runs each rank's compute actions in order, every action as soon as its rank is free and its inputs exist:
// F(s,m) after F(s-1,m); B(s,m) after F(s,m) and B(s+1,m); W after B. A BW costs b + w.
Timing time_program(const Program& prog, Costs c) {
  const int p = prog.pp;
  std::map<std::tuple<int, int, int>, double> done;  // (kind 0=F 1=B, stage, mb) -> end
  std::vector<std::size_t> pc(p, 0);
  Timing t;
  t.busy.assign(p, 0);
  t.first.assign(p, -1);
  t.last.assign(p, 0);
  std::vector<double> free_at(p, 0);
  bool progress = true;
  while (progress) {
    progress = false;
    for (int r = 0; r < p; ++r) {
      while (pc[r] < prog.ranks[r].size()) {
        const Action& a = prog.ranks[r][pc[r]];
        std::vector<std::tuple<int, int, int>> deps;
        double cost = 0;
        switch (a.type) {
          case ActionType::F:
            if (a.stage > 0) deps.emplace_back(0, a.stage - 1, a.microbatch);
            cost = c.f;
            break;
          case ActionType::B:
          case ActionType::BW:
            deps.emplace_back(0, a.stage, a.microbatch);
            if (a.stage < prog.stages() - 1) deps.emplace_back(1, a.stage + 1, a.microbatch);
            cost = a.type == ActionType::B ? c.b : c.b + c.w;
            break;
          case ActionType::W:
            deps.emplace_back(1, a.stage, a.microbatch);
            cost = c.w;
            break;
          default:
            ADD_FAILURE() << "unexpected " << to_string(a);
            return t;
        }
        double start = free_at[r];
        bool ready = true;
        for (const auto& d : deps) {
          const auto it = done.find(d);
          if (it == done.end()) {
            ready = false;
            break;
          }
          start = std::max(start, it->second);
        }
        if (!ready) break;
        const double end = start + cost;
        if (a.type == ActionType::F) done[{0, a.stage, a.microbatch}] = end;
        if (a.type == ActionType::B || a.type == ActionType::BW) done[{1, a.stage, a.microbatch}] = end;
        if (t.first[r] < 0) t.first[r] = start;
        free_at[r] = t.last[r] = end;
        t.busy[r] += cost;
        ++pc[r];
        progress = true;
      }
    }
  }
  for (int r = 0; r < p; ++r) EXPECT_EQ(pc[r], prog.ranks[r].size()) << "stuck";
  t.makespan = *std::max_element(t.last.begin(), t.last.end());
  return t;
}

ScheduleConfig config(ScheduleKind kind, int p, int B, int v = 1) {
  ScheduleConfig cfg;
  cfg.kind = kind;
  cfg.pp = p;
  cfg.v = v;
  cfg.microbatches = B;
  return cfg;
}

const Costs kCosts[] = {{1, 1, 1}, {2, 3, 1.5}, {1, 2, 1}, {1, 3, 1}, {2, 2, 1.5}, {3, 1, 1}};

TEST(Bubbles, OneFOneBFusedIsPMinus1TimesFPlusBPlusW) {
  for (const Costs& c : kCosts) {
    for (int p : {2, 4, 7}) {
      ScheduleConfig cfg = config(ScheduleKind::one_f_one_b, p, 3 * p);
      cfg.split_backward = false;
      const Timing t = time_program(generate(cfg), c);
      for (int r = 0; r < p; ++r) EXPECT_DOUBLE_EQ(t.makespan - t.busy[r], (p - 1) * (c.f + c.b + c.w));
    }
  }
}

// With B and W split and W right after its B, a B waits only for the next stage's B: the bubble shrinks to
// (p-1)(F+B). The classic (p-1)(F+B+W) needs split_backward=false.
TEST(Bubbles, OneFOneBSplitIsPMinus1TimesFPlusB) {
  for (const Costs& c : kCosts) {
    for (int p : {2, 4, 7}) {
      const Timing t = time_program(generate(config(ScheduleKind::one_f_one_b, p, 3 * p)), c);
      for (int r = 0; r < p; ++r) EXPECT_DOUBLE_EQ(t.makespan - t.busy[r], (p - 1) * (c.f + c.b));
    }
  }
}

TEST(Bubbles, ZbH1IsPMinus1TimesFPlusBMinusW) {
  for (const Costs& c : kCosts) {
    for (int p : {2, 3, 4, 8}) {
      for (int B : {p, 2 * p + 1, 4 * p}) {
        const Timing t = time_program(generate(config(ScheduleKind::zb_h1, p, B)), c);
        for (int r = 0; r < p; ++r) {
          EXPECT_DOUBLE_EQ(t.makespan - t.busy[r], (p - 1) * (c.f + c.b - c.w)) << p << " " << B << " r" << r;
        }
      }
    }
  }
}

// ZB-H2 (B >= 2p-1): rank 0 idles (p-1)(F+B-2W) between its first and last action; the makespan exceeds the
// per-rank work by (p-1)·max(F, F+B-2W), the last rank being unable to start before (p-1)F.
TEST(Bubbles, ZbH2IsPMinus1TimesFPlusBMinus2W) {
  for (const Costs& c : kCosts) {
    for (int p : {2, 3, 4, 8}) {
      for (int B : {2 * p - 1, 3 * p}) {
        const Timing t = time_program(generate(config(ScheduleKind::zb_h2, p, B)), c);
        const double span0 = t.last[0] - t.first[0] - t.busy[0];
        EXPECT_DOUBLE_EQ(span0, (p - 1) * (c.f + c.b - 2 * c.w)) << p << " " << B;
        EXPECT_DOUBLE_EQ(t.makespan - t.busy[0], (p - 1) * std::max(c.f, c.f + c.b - 2 * c.w)) << p << " " << B;
      }
    }
  }
}

// Interleaved with B a multiple of p and per-chunk costs f, b, w (a chunk is 1/v of a stage): the bubble is
// (p-1)(f+b+w) = (p-1)(F+B+W)/v in stage costs, for the fused backward.
TEST(Bubbles, InterleavedIsOneVthOfOneFOneB) {
  for (const Costs& c : kCosts) {
    for (int p : {2, 4}) {
      for (int v : {2, 3}) {
        ScheduleConfig cfg = config(ScheduleKind::interleaved, p, 2 * p, v);
        cfg.split_backward = false;
        const Timing t = time_program(generate(cfg), c);
        for (int r = 0; r < p; ++r) EXPECT_DOUBLE_EQ(t.makespan - t.busy[r], (p - 1) * (c.f + c.b + c.w));
      }
    }
  }
}

// Recompute (DESIGN.md section 5): Megatron's schedules (GPipe, 1F1B, interleaved, BFS, ZB-H1/H2) recompute in
// every stage, the last included, and so at pp = 1; only ZeroPP exempts the last chunk of the last rank.
TEST(Generate, RecomputeRule) {
  for (ScheduleKind kind : {ScheduleKind::one_f_one_b, ScheduleKind::zb_h1, ScheduleKind::zb_h2, ScheduleKind::gpipe}) {
    ScheduleConfig cfg = config(kind, 3, 5);
    cfg.recompute = true;
    const Program prog = generate(cfg);
    EXPECT_EQ(count(prog.ranks[0], ActionType::RECOMPUTE), 5);
    EXPECT_EQ(count(prog.ranks[2], ActionType::RECOMPUTE), 5);
    cfg.pp = 1;  // the only stage is the last: it recomputes too
    EXPECT_EQ(count(generate(cfg).ranks[0], ActionType::RECOMPUTE), 5);
  }
  ScheduleConfig cfg = config(ScheduleKind::zeropp, 3, 6, 2);
  cfg.unit = 4;
  cfg.recompute = true;
  const Program prog = generate(cfg);
  EXPECT_EQ(count(prog.ranks[2], ActionType::RECOMPUTE), 6);   // stage 2 only; stage 5 is the last
  EXPECT_EQ(count(prog.ranks[1], ActionType::RECOMPUTE), 12);  // stages 1 and 4
}

TEST(Generate, FusedBackwardEmitsBWAndNoW) {
  ScheduleConfig cfg = config(ScheduleKind::zeropp, 2, 4, 2);
  cfg.unit = 2;
  cfg.split_backward = false;
  const Program prog = generate(cfg);
  EXPECT_EQ(count(prog, ActionType::W), 0);
  EXPECT_EQ(count(prog, ActionType::B), 0);
  EXPECT_EQ(count(prog, ActionType::BW), 2 * 2 * 4);
}

TEST(Generate, ProgramShape) {
  ScheduleConfig cfg = config(ScheduleKind::zeropp, 3, 10, 2);
  cfg.unit = 0;  // one unit of all micro-batches
  const Program prog = generate(cfg);
  EXPECT_EQ(prog.pp, 3);
  EXPECT_EQ(prog.v, 2);
  EXPECT_EQ(prog.microbatches, 10);
  EXPECT_EQ(prog.unit, 10);
  EXPECT_EQ(prog.stages(), 6);
  EXPECT_EQ(prog.rank_of_stage(4), 1);
  EXPECT_EQ(generate(config(ScheduleKind::one_f_one_b, 2, 3)).unit, 0);
}

void expect_invalid(const ScheduleConfig& cfg, const std::string& field) {
  try {
    generate(cfg);
    ADD_FAILURE() << "accepted; expected an error naming " << field;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(Generate, RejectsInvalidParameters) {
  expect_invalid(config(ScheduleKind::one_f_one_b, 0, 4), "pp=0");
  expect_invalid(config(ScheduleKind::one_f_one_b, 2, 0), "microbatches=0");
  expect_invalid(config(ScheduleKind::interleaved, 2, 4, 0), "v=0");
  expect_invalid(config(ScheduleKind::one_f_one_b, 2, 4, 2), "v=2");
  expect_invalid(config(ScheduleKind::zb_h1, 2, 4, 3), "v=3");
  ScheduleConfig cfg = config(ScheduleKind::zeropp, 2, 4, 2);
  cfg.unit = 5;
  expect_invalid(cfg, "unit=5");
  cfg.unit = -1;
  expect_invalid(cfg, "unit=-1");
  cfg = config(ScheduleKind::zb_h2, 2, 4);
  cfg.split_backward = false;
  expect_invalid(cfg, "split_backward");
}

// Generation is linear: a 1024-rank x 1024-micro-batch ZeroPP iteration (v=2, U=8: 6.3 million compute actions)
// takes well under a second in a release build. The check only has to catch a quadratic slip, and must not depend
// on the machine's speed or the build type, so it compares times within this run: that program against one with
// 16x fewer micro-batches and one with 16x fewer ranks. Linear generation takes ~16x as long as either, up to
// ~2.5x more where the large program's memory misses the caches and the small one's does not (29-37x measured on
// a 2-core AMD EPYC VM with 32 MiB of L3); a slip quadratic in the micro-batches or the ranks 256x. The bound,
// 100x, sits between the two with a factor ~2.6 on either side. Each size is timed as the fastest of three runs
// on this thread's CPU clock (CLOCK_THREAD_CPUTIME_ID), so that neither an interruption nor a loaded machine, which
// takes the CPU away from the test and would stretch wall-clock times unevenly, counts.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

TEST(Generate, LargeZeroPPProgramIsCheap) {
  auto fastest_of_three = [](int p, int B, std::size_t& actions) {
    ScheduleConfig cfg = config(ScheduleKind::zeropp, p, B, 2);
    cfg.unit = 8;
    double best = 0;
    for (int run = 0; run < 3; ++run) {
      const double t0 = thread_cpu_seconds();
      const Program prog = generate(cfg);
      const double seconds = thread_cpu_seconds() - t0;
      best = run == 0 ? seconds : std::min(best, seconds);
      actions = 0;
      for (const RankProgram& rp : prog.ranks) actions += rp.size();
    }
    return best;
  };
  std::size_t actions = 0, fewer_batches_actions = 0, fewer_ranks_actions = 0;
  const double seconds = fastest_of_three(1024, 1024, actions);
  const double fewer_batches = fastest_of_three(1024, 64, fewer_batches_actions);
  const double fewer_ranks = fastest_of_three(64, 1024, fewer_ranks_actions);
  EXPECT_EQ(actions, 1024u * 1024u * 2u * 3u);
  EXPECT_EQ(fewer_batches_actions, actions / 16);
  EXPECT_EQ(fewer_ranks_actions, actions / 16);
  std::cout << "[ timing ] generate zeropp v=2 U=8, p=1024 B=1024: " << actions << " actions in " << seconds << " s; x"
            << seconds / fewer_batches << " the time of B=64, x" << seconds / fewer_ranks
            << " that of p=64 (linear: ~16)\n";
  EXPECT_LT(seconds / fewer_batches, 100.0);
  EXPECT_LT(seconds / fewer_ranks, 100.0);
}

}  // namespace
}  // namespace zeropp::schedule
