// Context parallelism (issue 20, item 2; spec/context_parallel.hpp): the rules, and the time, bytes and memory of
// ring attention and Ulysses against values derived by hand on the round cluster (100 TFLOP/s at 0.5, NVLink
// 100 GB/s + 1 us, network 10 GB/s + 10 us, no HBM term).
#include <gtest/gtest.h>

#include "cost_model/analytic/collectives.hpp"
#include "cost_model/analytic/comm_volume.hpp"
#include "cost_model/analytic/memory.hpp"
#include "cost_model/analytic/time_model.hpp"
#include "cost_model/spec/error.hpp"
#include "estimate_fixtures.hpp"

namespace zeropp::analytic {
namespace {

using test::gpt;
using test::plan_of;
using test::round_cluster;

// 4 layers, h = 1024, a = 16 (head dim 64), s = 1024, V = 8192, flash attention without dropout.
ModelSpec flash_gpt(int seq = 1024) {
  ModelSpec m = gpt(4, 1024, 16, seq, 8192);
  m.attention = AttentionKind::flash;
  m.dropout = false;
  return m;
}

ClusterSpec cluster(int gpus_per_node = 8) {
  ClusterSpec c = round_cluster(4, gpus_per_node);
  c.flash_attention_efficiency = {0.5, 0.5};
  return c;
}

ParallelSpec split(int tp, int cp, CpKind kind = CpKind::ring) {
  ParallelSpec p;
  p.strategy = Strategy::three_d;
  p.schedule = ScheduleKind::one_f_one_b;
  p.tp = tp;
  p.sequence_parallel = tp > 1;
  p.cp = cp;
  p.cp_kind = kind;
  p.zero_stage = 1;
  return p;
}

std::string error_of(const Plan& plan) {
  try {
    validate(plan);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

TEST(ContextParallel, RulesAreOneLineErrors) {
  EXPECT_EQ(error_of(plan_of(flash_gpt(), cluster(), split(1, 2))), "");
  EXPECT_EQ(error_of(plan_of(flash_gpt(), cluster(), split(1, 3))),
            "parallel.cp=3 does not split model.seq_len=1024 into 2*cp=6 chunks (ring attention's causal load "
            "balancing gives each CP rank two)");
  ModelSpec unfused = flash_gpt();
  unfused.attention = AttentionKind::unfused;
  EXPECT_EQ(error_of(plan_of(unfused, cluster(), split(1, 2))),
            "parallel.cp=2 needs model.attention=flash: context parallelism runs in the fused attention kernel "
            "(Transformer Engine's), not the unfused one");
  // Ulysses: 16 heads over tp 4 leave 4 per TP rank: cp 4 splits them, cp 8 does not.
  EXPECT_EQ(error_of(plan_of(flash_gpt(), cluster(), split(4, 4, CpKind::ulysses))), "");
  EXPECT_EQ(error_of(plan_of(flash_gpt(), cluster(), split(4, 8, CpKind::ulysses))),
            "parallel.cp=8 does not divide the 4 heads and 4 key/value heads of a TP rank (parallel.cp_kind=ulysses "
            "moves whole heads)");
  // The world counts cp.
  EXPECT_EQ(split(2, 4).world(), 8);
}

// A CP rank does the token-wise work of s/cp tokens and 1/cp of the causal attention: with a scalar GEMM efficiency
// every part of F, B and W is linear in the tokens except attention, quadratic, so the whole halves at cp = 2.
TEST(ContextParallel, ComputeIsSplitEvenly) {
  const ActionCosts one = action_costs(plan_of(flash_gpt(), cluster(), split(1, 1)));
  const ActionCosts two = action_costs(plan_of(flash_gpt(), cluster(), split(1, 2)));
  EXPECT_NEAR(two.f, one.f / 2, 1e-12 * one.f);
  EXPECT_NEAR(two.b, one.b / 2, 1e-12 * one.b);
  EXPECT_NEAR(two.w, one.w / 2, 1e-12 * one.w);
  EXPECT_NEAR(two.head_f, one.head_f / 2, 1e-12 * one.head_f);
  EXPECT_EQ(one.cp_f, 0);
  EXPECT_EQ(one.cp_b, 0);
}

// Ring, tp = 1, cp = 2 inside a node. A rank's K and V: 2 x 512 tokens x 1024 x 2 B = 2,097,152 B; a send takes
// 1 us + 20.97152 us. Its attention forward: half of 4 b s'^2 h (s' = 512) = 536,870,912 flops, times cp = 2:
// 1,073,741,824 at 50 TFLOP/s = 21.47483648 us, 10.73741824 us per step; exposed 21.97152 - 10.73741824 =
// 11.23410176 us per layer. Backward: 2.5 x the forward = 53.6870912 us, 26.8435456 per step; KV with dKV (4 MiB)
// takes 1 + 41.94304 us: exposed 42.94304 - 26.8435456 = 16.0994944, plus the last dKV back (21.97152):
// 38.0710144 us per layer. Four layers.
TEST(ContextParallel, RingHidesWhatTheAttentionStepsCover) {
  const ActionCosts a = action_costs(plan_of(flash_gpt(), cluster(), split(1, 2)));
  EXPECT_NEAR(a.cp_f, 4 * 11.23410176e-6, 1e-15);
  EXPECT_NEAR(a.cp_b, 4 * 38.0710144e-6, 1e-15);
  // Counted with the intra-layer communication (no TP here).
  EXPECT_NEAR(a.tp_f, a.cp_f, 1e-18);
  EXPECT_NEAR(a.tp_b, a.cp_b, 1e-18);
}

// A CP group wider than a node is priced on the network. tp = 8, cp = 2 on 8-GPU nodes: the two CP ranks are 8 apart
// (Megatron's tp-cp order), in two nodes. K and V of a TP rank: 2 x 512 x 128 x 2 B = 262,144 B: 10 us + 26.2144 us
// across nodes, 1 us + 2.62144 us inside a 16-GPU node. The forward's step: 21.47483648 us / 8 / 2 = 1.34217728 us.
TEST(ContextParallel, GroupLeavingTheNodeUsesTheNetwork) {
  const Plan across = plan_of(flash_gpt(), cluster(8), split(8, 2));
  const Plan inside = plan_of(flash_gpt(), cluster(16), split(8, 2));
  EXPECT_TRUE(group_crosses_nodes(across.cluster, cp_group(across.parallel).size, cp_group(across.parallel).stride));
  EXPECT_FALSE(group_crosses_nodes(inside.cluster, cp_group(inside.parallel).size, cp_group(inside.parallel).stride));
  EXPECT_NEAR(action_costs(across).cp_f, 4 * (36.2144e-6 - 1.34217728e-6), 1e-15);
  EXPECT_NEAR(action_costs(inside).cp_f, 4 * (3.62144e-6 - 1.34217728e-6), 1e-15);
}

// Ulysses, tp = 1, cp = 2: Q, K, V of 512 tokens (3 x 1024 wide, 3,145,728 B), half of it sent: 1 + 15.72864 us;
// the output (1,048,576 B), half sent: 1 + 5.24288 us. 22.97152 us per layer each way, nothing hidden.
TEST(ContextParallel, UlyssesAllToAllsAreExposed) {
  const ActionCosts a = action_costs(plan_of(flash_gpt(), cluster(), split(1, 2, CpKind::ulysses)));
  EXPECT_NEAR(a.cp_f, 4 * 22.97152e-6, 1e-15);
  EXPECT_NEAR(a.cp_b, 4 * 22.97152e-6, 1e-15);
}

// Bytes per iteration (B = 1), four layers. Ring: (3cp - 2) = 4 blocks of 2,097,152 B per layer (cp-1 forward, cp-1
// with their gradients, the last dKV), 5 with full recompute. Ulysses: Q, K, V and the output, half sent, forward
// and backward: 2 x 512 x 4096 x 2 B / 2 x 2 = 4,194,304 B per layer. Without CP: none, and none written.
TEST(ContextParallel, BytesByHand) {
  EXPECT_DOUBLE_EQ(comm_bytes(plan_of(flash_gpt(), cluster(), split(1, 2))).cp, 4 * 4 * 2097152.0);
  ParallelSpec full = split(1, 2);
  full.recompute = Recompute::full;
  EXPECT_DOUBLE_EQ(comm_bytes(plan_of(flash_gpt(), cluster(), full)).cp, 4 * 5 * 2097152.0);
  EXPECT_DOUBLE_EQ(comm_bytes(plan_of(flash_gpt(), cluster(), split(1, 2, CpKind::ulysses))).cp, 4 * 4194304.0);
  const CommBytes none = comm_bytes(plan_of(flash_gpt(), cluster(), split(1, 1)));
  EXPECT_EQ(none.cp, 0);
  EXPECT_DOUBLE_EQ(none.total, none.tp + none.pp + none.dp + none.zero);
}

// Activations of a CP rank are those of its s/cp tokens; the CP ranks hold the model and share the distributed
// optimizer's states with data parallelism (ZeRO-1 over dp x cp).
TEST(ContextParallel, MemoryOfARank) {
  const MemoryBytes two = memory_bytes(plan_of(flash_gpt(1024), cluster(), split(1, 2)), 0);
  const MemoryBytes half_seq = memory_bytes(plan_of(flash_gpt(512), cluster(), split(1, 1)), 0);
  const MemoryBytes one = memory_bytes(plan_of(flash_gpt(1024), cluster(), split(1, 1)), 0);
  EXPECT_DOUBLE_EQ(two.activations, half_seq.activations);
  EXPECT_NEAR(two.activations, one.activations / 2, 1e-9 * one.activations);
  EXPECT_DOUBLE_EQ(two.params, one.params);
  EXPECT_DOUBLE_EQ(two.optimizer, one.optimizer / 2);
}

}  // namespace
}  // namespace zeropp::analytic
