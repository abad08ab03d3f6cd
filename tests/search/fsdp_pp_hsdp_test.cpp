// Issue 20, item 3: FSDP2 under a pipeline (zero3 with pp > 1: torchtitan's 3-D with tp > 1) and HSDP (zero3 with
// dp_shard < dp), against hand derivations of their bytes and memory and against the simulator's own count of the
// actions it runs (spec/strategy.hpp says what each does and where that comes from).
#include <gtest/gtest.h>

#include "cost_model/analytic/collectives.hpp"
#include "cost_model/analytic/comm_volume.hpp"
#include "cost_model/analytic/memory.hpp"
#include "cost_model/analytic/params.hpp"
#include "cost_model/analytic/time_model.hpp"
#include "cost_model/schedule/plan_program.hpp"
#include "cost_model/search/simulated_estimate.hpp"
#include "cost_model/search/simulated_timing.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/strategy.hpp"
#include "search_fixtures.hpp"

namespace zeropp::search {
namespace {

// GPT-3 1.3B on `nodes` DGX A100 nodes, zero3 written as the search writes it (z = 8 per node, dp = nodes).
Plan fsdp_plan(int nodes, int dp_shard, int B = 4) {
  Plan plan{load_model("gpt3-1.3b"), load_cluster("dgx-a100-80gb"), {}};
  ParallelSpec& p = plan.parallel;
  p.strategy = Strategy::zero3;
  p.zero_stage = 3;
  p.z = 8;
  p.dp = nodes;
  p.dp_shard = dp_shard;
  p.schedule = ScheduleKind::one_f_one_b;
  p.micro_batches = B;
  p.unit = B;
  return plan;
}

// torchtitan's 3-D: tp 2, pp 2, dp 4 on 16 GPUs, 1F1B, FSDP over the 4 dp ranks of each (TP rank, stage).
Plan three_d_plan(int dp_shard, int v = 1) {
  Plan plan{load_model("gpt3-1.3b"), load_cluster("dgx-a100-80gb"), {}};
  ParallelSpec& p = plan.parallel;
  p.strategy = Strategy::zero3;
  p.zero_stage = 3;
  p.tp = 2;
  p.sequence_parallel = true;
  p.pp = 2;
  p.dp = 4;
  p.dp_shard = dp_shard;
  p.v = v;
  p.schedule = v > 1 ? ScheduleKind::interleaved : ScheduleKind::one_f_one_b;
  p.micro_batches = 4;
  p.unit = 4;
  return plan;
}

double ring(int n) { return (n - 1.0) / n; }

// GPT-3's tied word embedding under PP: the first and the last stage all-reduce their copies' gradient (2 ranks,
// each sends its V*h/tp elements once, on the ZeRO-3 shard of S GPUs, in fp32): part of `dp` on both end ranks.
double tied_embedding_sync(const Plan& plan, int S) {
  return static_cast<double>(plan.model.vocab) * plan.model.hidden / plan.parallel.tp / S * 4;
}

TEST(Hsdp, DataParallelPictureAndGroupsByHand) {
  // 4 nodes, dp_shard 2: shard groups of 8 x 2 = 16 GPUs (two nodes), 2 replicas.
  Plan plan = fsdp_plan(4, 2);
  DataParallelSync d = data_parallel_sync(plan.parallel);
  EXPECT_EQ(d.shard_group, 16);
  EXPECT_EQ(d.replicas, 2);
  EXPECT_EQ(d.mode, DpSyncMode::all_reduce);
  EXPECT_EQ(d.optimizer_shards, 16);
  EXPECT_TRUE(d.layer_wise);
  EXPECT_TRUE(d.sync_every_micro_batch);
  analytic::Group g = analytic::shard_group(plan.parallel);
  EXPECT_EQ(g.size * g.stride, 16);  // the block of two nodes it occupies
  EXPECT_TRUE(analytic::group_crosses_nodes(plan.cluster, g.size, g.stride));
  g = analytic::dp_sync_group(plan.parallel);
  EXPECT_EQ(g.size, 2);
  EXPECT_EQ(g.stride, 16);  // the same GPU of the other shard group
  // dp_shard 1: shard inside the node (the classic HSDP), 4 replicas a node apart.
  plan = fsdp_plan(4, 1);
  g = analytic::shard_group(plan.parallel);
  EXPECT_EQ(g.size, 8);
  EXPECT_EQ(g.stride, 1);
  EXPECT_FALSE(analytic::group_crosses_nodes(plan.cluster, g.size, g.stride));
  g = analytic::dp_sync_group(plan.parallel);
  EXPECT_EQ(g.size, 4);
  EXPECT_EQ(g.stride, 8);
  // dp_shard = dp is plain FSDP: one group of every GPU, nothing after it.
  plan = fsdp_plan(4, 4);
  d = data_parallel_sync(plan.parallel);
  EXPECT_EQ(d.shard_group, 32);
  EXPECT_EQ(d.mode, DpSyncMode::none);
  EXPECT_EQ(analytic::comm_bytes(plan).dp, 0);
  EXPECT_DOUBLE_EQ(analytic::comm_bytes(plan).zero, analytic::comm_bytes(fsdp_plan(4, 0)).zero);
}

TEST(Hsdp, BytesAndMemoryByHand) {
  const int B = 4;
  const Plan plan = fsdp_plan(4, 2, B);
  const double psi = static_cast<double>(analytic::rank_params(plan.model, 1, 1, 0).total());
  // FSDP2 with bf16: parameters gathered in bf16 (2 B), gradients reduced in fp32 (4 B); fp32 shards of the
  // parameters and gradients and Adam's two fp32 moments, all over the 16 GPUs of the shard group.
  const analytic::MemoryBytes m = analytic::memory_bytes(plan);
  EXPECT_DOUBLE_EQ(m.params, 4 * psi / 16);
  EXPECT_DOUBLE_EQ(m.grads, 4 * psi / 16);
  EXPECT_DOUBLE_EQ(m.optimizer, 8 * psi / 16);
  // Per micro-batch: gather for F and for B (2 x 2 B) and reduce-scatter (4 B) in the group of 16, then the 1/16
  // shard all-reduced (2 x 4 B) across the 2 replicas.
  const analytic::CommBytes c = analytic::comm_bytes(plan);
  EXPECT_NEAR(c.zero, B * (2 * 2 + 4) * psi * ring(16), 1e-6 * c.zero);
  EXPECT_NEAR(c.dp, B * 2 * 4 * (psi / 16) * ring(2), 1e-6 * c.dp);
}

TEST(FsdpUnderPp, BytesAndMemoryByHand) {
  for (int dp_shard : {0, 2}) {
    const Plan plan = three_d_plan(dp_shard);
    const int S = dp_shard == 0 ? 4 : 2, replicas = 4 / S;
    for (int r = 0; r < 2; ++r) {
      const double psi = static_cast<double>(analytic::rank_params(plan.model, 2, 1, r, 2).total());
      // One all-gather (2 B) and one reduce-scatter (4 B) per iteration in the shard group; HSDP adds one
      // all-reduce of the shard (2 x 4 B) across the replicas.
      const analytic::CommBytes c = analytic::comm_bytes(plan, r);
      EXPECT_NEAR(c.zero, (2 + 4) * psi * ring(S), 1e-6 * c.zero) << dp_shard;
      EXPECT_NEAR(c.dp, (replicas > 1 ? 2 * 4 * (psi / S) * ring(replicas) : 0) + tied_embedding_sync(plan, S),
                  1e-6 * psi)
          << dp_shard;
      // Model states over the shard group; the stage stays gathered (2 B) with its fp32 gradients accumulated
      // unsharded (4 B) through the iteration.
      const analytic::MemoryBytes m = analytic::memory_bytes(plan, r);
      EXPECT_DOUBLE_EQ(m.params + m.grads + m.optimizer, 16 * psi / S) << dp_shard;
      EXPECT_DOUBLE_EQ(m.buffers, (2 + 4) * psi) << dp_shard;
    }
  }
}

// The program gathers each chunk once and reduce-scatters it once per iteration (HSDP: one DP_SYNC after it), and
// the simulator's bytes, counted action by action, are the closed form's.
TEST(FsdpUnderPp, SimulatorCountsTheClosedFormsBytes) {
  for (int v : {1, 2})
    for (int dp_shard : {0, 2}) {
      const Plan plan = three_d_plan(dp_shard, v);
      const schedule::Program program = schedule::program_for(plan);
      for (const schedule::RankProgram& rank : program.ranks) {
        int unshards = 0, reduces = 0, syncs = 0;
        for (const schedule::Action& a : rank) {
          unshards += a.type == schedule::ActionType::UNSHARD;
          reduces += a.type == schedule::ActionType::REDUCE_GRAD;
          syncs += a.type == schedule::ActionType::DP_SYNC;
        }
        EXPECT_EQ(unshards, v);
        EXPECT_EQ(reduces, v);
        EXPECT_EQ(syncs, dp_shard == 2 ? v : 0);
      }
      const simulate::SimResult sim = simulate_plan(plan);
      const int S = dp_shard == 0 ? 4 : 2;
      for (int r = 0; r < 2; ++r) {
        const analytic::CommBytes c = analytic::comm_bytes(plan, r);
        EXPECT_NEAR(sim.ranks[r].comm_bytes.zero * ring(S), c.zero, 1e-9 * c.zero) << v << " " << dp_shard;
        if (dp_shard == 2) {  // the tied embedding's all-reduce runs after the step, outside the DP_SYNCs
          EXPECT_NEAR(sim.ranks[r].comm_bytes.dp * 2 * ring(2), c.dp - tied_embedding_sync(plan, S), 1e-9 * c.dp);
        }
      }
      // The simulated peak holds what the closed form counts by hand: the static states and the gathered stage
      // with its unsharded gradients, and activations on top.
      const SimulatedEstimate e = simulated_estimate(plan);
      const analytic::MemoryBytes m = analytic::memory_bytes(plan, 0);
      EXPECT_GT(e.estimate.memory_bytes.peak, m.params + m.grads + m.optimizer + m.buffers);
      EXPECT_NEAR(e.estimate.memory_bytes.peak, analytic::memory_bytes(plan).peak,
                  0.01 * analytic::memory_bytes(plan).peak);
    }
}

// HSDP without PP: FSDP2 all-reduces each layer's reduce-scattered shard across the replicas after every
// micro-batch; the simulator runs L x B of them and moves B x the shard.
TEST(Hsdp, SimulatorAllReducesEveryMicroBatch) {
  const int B = 3;
  const Plan plan = fsdp_plan(2, 1, B);
  const simulate::SimResult sim = simulate_plan(plan);
  const analytic::CommBytes c = analytic::comm_bytes(plan);
  EXPECT_NEAR(sim.ranks[0].comm_bytes.dp * 2 * ring(2), c.dp, 1e-9 * c.dp);
  EXPECT_NEAR(sim.ranks[0].comm_bytes.zero * ring(8), c.zero, 1e-9 * c.zero);
  // Closed form and simulator agree on the iteration within the closed form's overlap approximations.
  const SimulatedEstimate e = simulated_estimate(plan);
  EXPECT_NEAR(e.estimate.time_s.iteration, e.closed_form.time_s.iteration, 0.1 * e.closed_form.time_s.iteration);
  // The model states are split 8 ways instead of 16: the peak grows by their difference, 16 B x psi (1/8 - 1/16).
  const SimulatedEstimate plain = simulated_estimate(fsdp_plan(2, 0, B));
  const double psi = static_cast<double>(analytic::rank_params(plan.model, 1, 1, 0).total());
  EXPECT_NEAR(e.estimate.memory_bytes.peak - plain.estimate.memory_bytes.peak, 16 * psi * (1.0 / 8 - 1.0 / 16),
              1e-6 * e.estimate.memory_bytes.peak);
}

TEST(FsdpUnderPp, ClosedFormNearTheSimulator) {
  for (int v : {1, 2}) {
    const SimulatedEstimate e = simulated_estimate(three_d_plan(2, v));
    EXPECT_NEAR(e.estimate.time_s.iteration, e.closed_form.time_s.iteration, 0.15 * e.closed_form.time_s.iteration)
        << v;
  }
}

// Bad input: one line naming the option and the rule.
TEST(FsdpUnderPp, RulesRefuseWhatNoFrameworkRuns) {
  Plan plan = fsdp_plan(4, 3);
  EXPECT_THROW(validate(plan), SpecError);
  try {
    validate(plan);
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "parallel.dp_shard");
    EXPECT_NE(std::string(e.what()).find("parallel.dp_shard=3 does not divide parallel.dp=4"), std::string::npos)
        << e.what();
  }
  const auto message = [](const Plan& p) {
    try {
      validate(p);
    } catch (const SpecError& e) {
      return e.field() + ": " + e.what();
    }
    return std::string("accepted");
  };
  plan = fsdp_plan(4, 2);
  plan.parallel.framework = Framework::deepspeed;
  EXPECT_NE(message(plan).find("parallel.dp_shard: parallel.dp_shard=2 < parallel.dp=4 (HSDP) needs "
                               "parallel.framework=fsdp2"),
            std::string::npos)
      << message(plan);
  plan = three_d_plan(0);
  plan.parallel.tp = 1;
  plan.parallel.sequence_parallel = false;
  plan.parallel.z = 2;
  plan.parallel.framework = Framework::deepspeed;
  EXPECT_NE(message(plan).find("parallel.pp: parallel.pp=2 with parallel.strategy=zero3 needs "
                               "parallel.framework=fsdp2"),
            std::string::npos)
      << message(plan);
  plan = three_d_plan(0);
  plan.parallel.schedule = ScheduleKind::zb_h1;
  EXPECT_NE(message(plan).find("parallel.schedule: parallel.schedule=zb_h1 is not allowed with "
                               "parallel.strategy=zero3 and parallel.pp=2"),
            std::string::npos)
      << message(plan);
  plan = three_d_plan(1);  // z = 1, cp = 1, dp_shard = 1: a shard group of one GPU
  EXPECT_NE(message(plan).find("parallel.dp_shard: parallel.dp_shard=1 leaves a shard group of one GPU"),
            std::string::npos)
      << message(plan);
  Plan other = fsdp_plan(4, 2);
  other.parallel.strategy = Strategy::zero3_pp;
  other.parallel.zero_stage = 1;
  EXPECT_NE(message(other).find("parallel.dp_shard: parallel.dp_shard=2 is not allowed with "
                                "parallel.strategy=zero3_pp"),
            std::string::npos)
      << message(other);
  EXPECT_EQ(message(fsdp_plan(4, 2)), "accepted");
  EXPECT_EQ(message(three_d_plan(2, 2)), "accepted");
}

}  // namespace
}  // namespace zeropp::search
