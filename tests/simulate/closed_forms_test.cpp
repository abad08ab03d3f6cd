// Issue 3, point 5: with uniform costs and free communication, the simulated bubbles and in-flight micro-batches
// of the generated schedules equal the closed forms of DESIGN.md section 4 exactly. Each schedule is simulated
// twice, compute-only and lowered (p2p actions added), which must agree. The closed forms are written out here
// from (p, v, B, F, B, W), not taken from the analytic module.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "cost_model/schedule/generate.hpp"
#include "cost_model/simulate/costs.hpp"
#include "cost_model/simulate/simulator.hpp"

namespace zeropp::simulate {
namespace {

using schedule::generate;
using schedule::LoweringOptions;
using schedule::ScheduleConfig;

struct Costs {
  double f, b, w;
};
// Equal costs, the textbook case; and two uneven ones (backward twice the forward, as in transformers).
const std::vector<Costs> kCosts = {{1, 1, 1}, {1, 1.25, 0.75}, {2, 3, 1}};

struct Runs {
  SimResult compute_only;
  SimResult lowered;
};

ScheduleConfig config(ScheduleKind kind, int p, int v, int B, bool split) {
  ScheduleConfig cfg;
  cfg.kind = kind;
  cfg.pp = p;
  cfg.v = v;
  cfg.microbatches = B;
  cfg.split_backward = split;
  return cfg;
}

Runs run(const ScheduleConfig& cfg, const Costs& c) {
  const schedule::Program program = generate(cfg);
  const ActionCosts costs = ActionCosts::uniform(cfg.pp, cfg.v, c.f, c.b, c.w);
  LoweringOptions lowering;
  lowering.opt_step = true;
  return {simulate(program, costs), simulate(schedule::lower(program, lowering), costs)};
}

std::string label(const ScheduleConfig& cfg, const Costs& c) {
  return "p=" + std::to_string(cfg.pp) + " v=" + std::to_string(cfg.v) + " B=" + std::to_string(cfg.microbatches) +
         " F=" + std::to_string(c.f) + " B=" + std::to_string(c.b) + " W=" + std::to_string(c.w);
}

// Every rank idles exactly `bubble`; both programs agree on the whole timeline summary.
void expect_bubble(const Runs& r, double bubble, double makespan, const std::string& what) {
  for (const SimResult* s : {&r.compute_only, &r.lowered}) {
    EXPECT_DOUBLE_EQ(s->makespan, makespan) << what;
    for (int rank = 0; rank < s->pp; ++rank) {
      EXPECT_DOUBLE_EQ(s->ranks[rank].bubble, bubble) << what << " rank " << rank;
      EXPECT_DOUBLE_EQ(s->ranks[rank].exposed_comm, 0) << what << " rank " << rank;
    }
  }
  EXPECT_EQ(r.compute_only.peak_activation_microbatches(), r.lowered.peak_activation_microbatches()) << what;
}

TEST(ClosedForms, OneFOneBFused) {
  for (int p : {1, 2, 3, 4, 6, 8}) {
    for (int B : {p, p + 1, 2 * p, 3 * p + 2}) {
      for (const Costs& c : kCosts) {
        const auto cfg = config(ScheduleKind::one_f_one_b, p, 1, B, /*split=*/false);
        const Runs r = run(cfg, c);
        const double step = c.f + c.b + c.w;
        expect_bubble(r, (p - 1) * step, (B + p - 1) * step, "1F1B " + label(cfg, c));
        for (int rank = 0; rank < p; ++rank) {
          EXPECT_EQ(r.compute_only.ranks[rank].peak_activation_microbatches, p - rank) << label(cfg, c);
        }
      }
    }
  }
}

TEST(ClosedForms, GPipeFused) {
  for (int p : {1, 2, 4, 5}) {
    for (int B : {1, p, 2 * p + 1}) {
      for (const Costs& c : kCosts) {
        const auto cfg = config(ScheduleKind::gpipe, p, 1, B, /*split=*/false);
        const Runs r = run(cfg, c);
        const double step = c.f + c.b + c.w;
        expect_bubble(r, (p - 1) * step, (B + p - 1) * step, "GPipe " + label(cfg, c));
        for (int rank = 0; rank < p; ++rank) {
          EXPECT_EQ(r.compute_only.ranks[rank].peak_activation_microbatches, B) << label(cfg, c);
        }
      }
    }
  }
}

// Megatron's interleaved 1F1B with v chunks of per-chunk cost f, b, w: bubble (p-1)(f+b+w), i.e. the
// (p-1)(F+B+W)/v of a rank's whole-stage costs F = v f, ...; when p divides B.
TEST(ClosedForms, InterleavedFused) {
  for (int p : {2, 3, 4}) {
    for (int v : {2, 3, 4}) {
      for (int B : {p, 2 * p, 3 * p}) {
        for (const Costs& c : kCosts) {
          const auto cfg = config(ScheduleKind::interleaved, p, v, B, /*split=*/false);
          const Runs r = run(cfg, c);
          const double step = c.f + c.b + c.w;
          const double F = v * c.f, Bb = v * c.b, W = v * c.w;
          expect_bubble(r, (p - 1) * (F + Bb + W) / v, B * v * step + (p - 1) * step, "interleaved " + label(cfg, c));
          for (int rank = 0; rank < p; ++rank) {
            const int expected = std::min((v - 1) * p + 2 * (p - 1 - rank) + 1, B * v);
            EXPECT_EQ(r.compute_only.ranks[rank].peak_activation_microbatches, expected)
                << label(cfg, c) << " rank " << rank;
          }
        }
      }
    }
  }
}

// ZB-H1: every rank idles (p-1)(F+B-W); in-flight micro-batches as 1F1B (p - r, at most p).
TEST(ClosedForms, ZeroBubbleH1) {
  for (int p : {1, 2, 3, 4, 6, 8}) {
    for (int B : {p, 2 * p, 3 * p + 1}) {
      for (const Costs& c : kCosts) {
        const auto cfg = config(ScheduleKind::zb_h1, p, 1, B, /*split=*/true);
        const Runs r = run(cfg, c);
        const double bubble = (p - 1) * (c.f + c.b - c.w);
        expect_bubble(r, bubble, B * (c.f + c.b + c.w) + bubble, "ZB-H1 " + label(cfg, c));
        for (int rank = 0; rank < p; ++rank) {
          EXPECT_EQ(r.compute_only.ranks[rank].peak_activation_microbatches, p - rank) << label(cfg, c);
        }
      }
    }
  }
}

// ZB-H2: with F = B = W the closed form (p-1)(F+B-2W) is zero: rank 0 never idles from its first F to its last W
// once B >= 2p-1 micro-batches fill the warm-up; the makespan exceeds a rank's work by the (p-1)F the last rank
// waits for its first input. At most 2p-1 micro-batches in flight (2(p-1-r)+1 on rank r).
TEST(ClosedForms, ZeroBubbleH2) {
  for (int p : {1, 2, 3, 4, 6}) {
    for (int B : {2 * p - 1, 2 * p, 4 * p}) {
      const Costs c{1, 1, 1};
      const auto cfg = config(ScheduleKind::zb_h2, p, 1, B, /*split=*/true);
      const Runs r = run(cfg, c);
      const double work = B * (c.f + c.b + c.w);
      for (const SimResult* s : {&r.compute_only, &r.lowered}) {
        EXPECT_DOUBLE_EQ(s->makespan, work + (p - 1) * c.f) << label(cfg, c);
        // Rank 0 starts at 0 and ends last-but-idle-free: its busy time spans [0, work + (p-1)(F+B-2W)].
        const std::size_t last = s->id(0, static_cast<int>(s->rank_offset[1] - s->rank_offset[0]) - 1);
        double end0 = 0;
        for (std::size_t id = s->id(0, 0); id <= last; ++id) end0 = std::max(end0, s->end[id]);
        EXPECT_DOUBLE_EQ(end0 - s->ranks[0].compute, (p - 1) * (c.f + c.b - 2 * c.w)) << label(cfg, c);
      }
      for (int rank = 0; rank < p; ++rank) {
        const int peak = r.compute_only.ranks[rank].peak_activation_microbatches;
        EXPECT_LE(peak, 2 * p - 1) << label(cfg, c);
        EXPECT_EQ(peak, std::min(2 * (p - 1 - rank) + 1, B)) << label(cfg, c) << " rank " << rank;
      }
    }
  }
}

// ZeroPP (DESIGN.md section 5): per unit of U micro-batches, rank r holds at most its warm-up forwards plus one,
// min(2(p-1-r) + (v-1)U + 1, U v) chunk micro-batches; activations are released at the end of each unit, so the
// peak does not grow with B.
TEST(ClosedForms, ZeroPPInFlightFollowsTheUnit) {
  for (int p : {2, 4}) {
    for (int v : {1, 2, 3}) {
      for (int U : {1, 2, p, 2 * p}) {
        for (int units : {1, 3}) {
          const int B = U * units;
          ScheduleConfig cfg = config(ScheduleKind::zeropp, p, v, B, /*split=*/true);
          cfg.unit = U;
          const Runs r = run(cfg, {1, 1, 1});
          for (int rank = 0; rank < p; ++rank) {
            EXPECT_EQ(r.compute_only.ranks[rank].peak_activation_microbatches,
                      std::min(2 * (p - 1 - rank) + (v - 1) * U + 1, U * v))
                << label(cfg, {1, 1, 1}) << " U=" << U << " rank " << rank;
          }
          // Every rank does all of its work; nothing is lost or duplicated by the simulation.
          for (int rank = 0; rank < p; ++rank) {
            EXPECT_DOUBLE_EQ(r.compute_only.ranks[rank].compute, 3.0 * v * B);
            EXPECT_DOUBLE_EQ(r.compute_only.ranks[rank].bubble + r.compute_only.ranks[rank].compute,
                             r.compute_only.makespan);
          }
        }
      }
    }
  }
}

// Looped breadth-first holds every chunk micro-batch of the iteration before its first backward.
TEST(ClosedForms, BreadthFirstHoldsAllChunkMicrobatches) {
  for (int p : {2, 4}) {
    for (int v : {1, 2, 3}) {
      for (int B : {p, 2 * p}) {
        const auto cfg = config(ScheduleKind::bfs, p, v, B, /*split=*/false);
        const Runs r = run(cfg, {1, 1, 1});
        for (int rank = 0; rank < p; ++rank) {
          EXPECT_EQ(r.compute_only.ranks[rank].peak_activation_microbatches, B * v) << label(cfg, {1, 1, 1});
        }
      }
    }
  }
}

}  // namespace
}  // namespace zeropp::simulate
