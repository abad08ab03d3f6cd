// The simulator's peak memory by part and when it occurs (simulate::PeakMemory), hand-traced on one rank.
#include <gtest/gtest.h>

#include "cost_model/schedule/action.hpp"
#include "cost_model/simulate/costs.hpp"
#include "cost_model/simulate/simulator.hpp"

namespace zeropp::simulate {
namespace {

using schedule::parse_program;

double part(const PeakMemory& p, MemoryPart m) { return p.bytes[static_cast<int>(m)]; }

// One rank, two micro-batches, every action 1 s: F0 [0,1] F1 [1,2] B1 [2,3] B0 [3,4] W1 [4,5] W0 [5,6]. Static 100,
// activations 10 per micro-batch until its B, 4 for a deferred W from its B to its W, the stage's unsharded
// gradients (`grad`) from the first W until a REDUCE_GRAD that never comes.
ActionCosts costs(double grad) {
  ActionCosts c = ActionCosts::uniform(1, 1, 1, 1, 1);
  c.static_bytes[0] = 100;
  c.stages[0].activation_bytes = 10;
  c.stages[0].w_buffer_bytes = 4;
  c.stages[0].grad_buffer_bytes = grad;
  return c;
}

TEST(PeakMemory, ActivationsPeakAtTheSecondForward) {
  const auto program = parse_program("0F0 0F1 0B1 0B0 0W1 0W0\n", 1, 1, 2);
  const SimResult r = simulate(program, costs(7));
  // 100 + 10 + 10 at the start of F1 (t = 1); later: 100 + 4 + 4 (after both Bs) + 7 (gradients) = 115 < 120.
  const PeakMemory& p = r.ranks[0].peak;
  EXPECT_DOUBLE_EQ(r.ranks[0].peak_memory_bytes, 120);
  EXPECT_DOUBLE_EQ(part(p, MemoryPart::static_state), 100);
  EXPECT_DOUBLE_EQ(part(p, MemoryPart::activations), 20);
  EXPECT_DOUBLE_EQ(part(p, MemoryPart::w_buffers), 0);
  EXPECT_DOUBLE_EQ(p.time, 1);
  EXPECT_EQ(p.action_index, 1);
  EXPECT_TRUE(p.at_start);
  EXPECT_EQ(schedule::to_string(p.action), "0F1");
}

TEST(PeakMemory, GradientBuffersPeakAtTheFirstW) {
  const auto program = parse_program("0F0 0F1 0B1 0B0 0W1 0W0\n", 1, 1, 2);
  const SimResult r = simulate(program, costs(30));
  // At the start of W1 (t = 4): both Bs have ended (their W buffers 4 + 4 held), the gradients (30) allocated.
  const PeakMemory& p = r.ranks[0].peak;
  EXPECT_DOUBLE_EQ(r.ranks[0].peak_memory_bytes, 138);
  EXPECT_DOUBLE_EQ(part(p, MemoryPart::static_state), 100);
  EXPECT_DOUBLE_EQ(part(p, MemoryPart::activations), 0);
  EXPECT_DOUBLE_EQ(part(p, MemoryPart::w_buffers), 8);
  EXPECT_DOUBLE_EQ(part(p, MemoryPart::grad_buffers), 30);
  EXPECT_DOUBLE_EQ(p.time, 4);
  EXPECT_EQ(schedule::to_string(p.action), "0W1");
  double sum = 0;
  for (double b : p.bytes) sum += b;
  EXPECT_DOUBLE_EQ(sum, r.ranks[0].peak_memory_bytes);
}

// Nothing allocated beyond the static state: the peak is the start, before any action.
TEST(PeakMemory, StaticOnly) {
  const auto program = parse_program("0F0 0BW0\n", 1, 1, 1);
  ActionCosts c = ActionCosts::uniform(1, 1, 1, 1, 1);
  c.static_bytes[0] = 5;
  c.stages[0].activation_bytes = 0;
  const SimResult r = simulate(program, c);
  EXPECT_EQ(r.ranks[0].peak.action_index, -1);
  EXPECT_DOUBLE_EQ(part(r.ranks[0].peak, MemoryPart::static_state), 5);
}

}  // namespace
}  // namespace zeropp::simulate
