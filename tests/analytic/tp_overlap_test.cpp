// TP communication as each framework runs it (tp_overlap.hpp) and the one contention rule (contention.hpp): hand
// derivations on round numbers, written out from the link, the GEMM FLOPs and the SM counts, not from the library.
#include "cost_model/analytic/tp_overlap.hpp"

#include <gtest/gtest.h>

#include "cost_model/analytic/contention.hpp"
#include "cost_model/analytic/time_model.hpp"
#include "cost_model/spec/error.hpp"
#include "estimate_fixtures.hpp"

namespace zeropp::analytic {
namespace {

using test::gpt;
using test::plan_of;

// h = 1024, a = 16, s = 1024, 4 layers; tp = 2 with SP, b = 1: M = b s h x 2 bytes = 2,097,152.
constexpr double kM = 2097152;
// NVLink 100 GB/s, 1 us: an all-gather or reduce-scatter over 2 GPUs is (n-1)(alpha + M/(n beta)).
constexpr double kAg = 1e-6 + kM / (2 * 100e9);
// GEMMs per tp rank at 0.5 x 100 TFLOP/s = 50 TFLOP/s: QKV 2*1024*1536*1024, projection 2*1024*1024*512, up and
// down 2*1024*2048*1024.
constexpr double kQkv = 2.0 * 1024 * 1536 * 1024 / 50e12;
constexpr double kProj = 2.0 * 1024 * 1024 * 512 / 50e12;
constexpr double kUp = 2.0 * 1024 * 2048 * 1024 / 50e12;
constexpr double kDown = kUp;
// A GPU of 100 SMs, compute capability 9.0, NCCL kernels slowing compute by 20% beside them.
constexpr double kSms = 100, kNccl = 0.2;

Plan tp_plan(TpCommOverlap overlap, Framework framework = Framework::megatron) {
  ParallelSpec p;
  p.strategy = Strategy::three_d;
  p.schedule = ScheduleKind::one_f_one_b;
  p.zero_stage = 0;
  p.tp = 2;
  p.sequence_parallel = true;
  p.tp_comm_overlap = overlap;
  p.framework = framework;
  Plan plan = plan_of(gpt(4, 1024, 16, 1024, 8192), test::round_cluster(), p);
  plan.cluster.gpu = GpuOps{};
  plan.cluster.gpu->sm_count = {kSms, Provenance::nominal};
  plan.cluster.gpu->compute_capability = {9.0, Provenance::nominal};
  plan.cluster.gpu->nccl_contention = {kNccl, Provenance::published};
  return plan;
}

TEST(Contention, OneRuleByKernel) {
  const ClusterSpec c = tp_plan(TpCommOverlap::none).cluster;
  EXPECT_DOUBLE_EQ(contention_share(c, CommKernel::nccl), 0.2);
  EXPECT_DOUBLE_EQ(contention_share(c, CommKernel::userbuffers), 16 / kSms);
  EXPECT_DOUBLE_EQ(contention_share(c, CommKernel::ring_exchange), 1 / kSms);
  EXPECT_DOUBLE_EQ(contention_share(c, CommKernel::symmetric_memory), 0);
  EXPECT_DOUBLE_EQ(contention_seconds(c, CommKernel::nccl, 2.0), 0.4);
  // The SM margin holds for the whole operation: 1 s of GEMM on 84 of 100 SMs.
  EXPECT_DOUBLE_EQ(with_sm_margin(c, CommKernel::userbuffers, 1.0), 1.0 / 0.84);
  // No operation table (a CPU profile, an old file): nothing to price by.
  ClusterSpec bare = c;
  bare.gpu.reset();
  EXPECT_EQ(contention_share(bare, CommKernel::nccl), 0);
  EXPECT_EQ(contention_share(bare, CommKernel::userbuffers), 0);
}

// Megatron without --tp-comm-overlap: forward 2 AG + 2 RS exposed; backward the 2 output-gradient AGs exposed and
// the column-parallel pairs (re-gather beside dgrad, RS beside wgrad) hidden under GEMMs longer than them, each
// slowing its GEMM by 20% of the collective. Other frameworks wait for every collective.
TEST(TpOverlap, NonePerFramework) {
  const Plan megatron = tp_plan(TpCommOverlap::none);
  const LayerGemms g = layer_gemms(megatron.model, 1, 2);
  const auto seconds = [&](const Gemm& x) { return x.flops() / 50e12; };
  TpLayerSeconds t = tp_layer_seconds(megatron, g, seconds);
  EXPECT_NEAR(t.forward, 4 * kAg, 1e-15);
  ASSERT_LT(kAg, kQkv);
  EXPECT_NEAR(t.backward, 2 * kAg + 4 * kNccl * kAg, 1e-15);
  t = tp_layer_seconds(tp_plan(TpCommOverlap::none, Framework::fsdp2), g, seconds);
  EXPECT_NEAR(t.backward, 4 * kAg, 1e-15);
}

// The weight-gradient GEMMs the TP pricing runs collectives beside are the W action's own (grad_accumulation.hpp):
// they carry the bytes the plan's epilogue moves, so that an accumulating epilogue hides as much as it lasts.
TEST(TpOverlap, WeightGradientGemmsCarryTheEpilogueBytes) {
  for (const TpCommOverlap overlap : {TpCommOverlap::none, TpCommOverlap::userbuffers}) {
    const Plan plan = tp_plan(overlap);
    const LayerGemms g = layer_gemms(plan.model, 1, 2);
    const Gemm qkv = wgrad_gemm(g.gemm[LayerGemms::qkv]), up = wgrad_gemm(g.gemm[LayerGemms::up]);
    int accumulating = 0;  // (here the forward QKV GEMM has the weight gradient's shape: s = h = 1024)
    const auto seconds = [&](const Gemm& x) {
      if (x.store_bytes == 7) {
        ++accumulating;
        EXPECT_TRUE((x.m == qkv.m && x.n == qkv.n && x.k == qkv.k) || (x.m == up.m && x.n == up.n && x.k == up.k));
      }
      return x.flops() / 50e12;
    };
    tp_layer_seconds(plan, g, seconds, 7);
    EXPECT_EQ(accumulating, 2);
  }
}

// TransformerEngine's userbuffers on NVLink. Forward: the ring exchanges into QKV and up hide (each of the tp-1 = 1
// steps, kAg, beside a GEMM chunk of half the GEMM, longer than kAg) and slow the chunk by 1 SM of 100 for that
// time; the pipelined GEMM -> RS runs its GEMM on 84 SMs and leaves the last quarter's RS exposed (RS of M/4:
// alpha + M/(4 n beta)). Backward: the output-gradient AGs by ring exchange into the projection's dgrad (half of
// it, 10.7 us, is shorter than the 11.5 us step: the excess is exposed) and the down projection's (hidden), and the
// four bulk overlaps run their GEMMs on 84 SMs with the collectives hidden.
TEST(TpOverlap, UserbuffersWhenTheGemmsAreLonger) {
  const Plan plan = tp_plan(TpCommOverlap::userbuffers);
  const LayerGemms g = layer_gemms(plan.model, 1, 2);
  const TpLayerSeconds t = tp_layer_seconds(plan, g, [](const Gemm& x) { return x.flops() / 50e12; });
  const double rs_quarter = 1e-6 + kM / 4 / (2 * 100e9);
  const double margin = 1 / 0.84 - 1;
  ASSERT_LT(rs_quarter, kProj / 4 / 0.84);
  EXPECT_NEAR(t.forward, 2 * 0.01 * kAg + (kProj + kDown) * margin + 2 * rs_quarter, 1e-15);
  ASSERT_GT(kAg, kProj / 2);
  ASSERT_LT(kAg, kDown / 2);
  const double ring_proj = (kAg - kProj / 2) + 0.01 * kProj / 2;
  EXPECT_NEAR(t.backward, ring_proj + 0.01 * kAg + 2 * (kQkv + kUp) * margin, 1e-15);
}

// The same with a link so slow (1 MB/s, 1 ms) that every transfer outlasts its GEMM: the ring step exposes what
// outlasts its chunk; the pipeline's three middle RS chunks what outlasts theirs, and the last in full.
TEST(TpOverlap, UserbuffersWhenTheLinkIsSlower) {
  Plan plan = tp_plan(TpCommOverlap::userbuffers);
  plan.cluster.intra = {1e6, 1e-3};
  const LayerGemms g = layer_gemms(plan.model, 1, 2);
  const TpLayerSeconds t = tp_layer_seconds(plan, g, [](const Gemm& x) { return x.flops() / 50e12; });
  const double ag = 1e-3 + kM / (2 * 1e6);
  const double rs_quarter = 1e-3 + kM / 4 / (2 * 1e6);
  const auto ring = [&](double gemm) { return ag - gemm / 2 + 0.01 * gemm / 2; };
  const auto pipeline = [&](double gemm) {
    const double chunk = gemm / 4 / 0.84;
    return 4 * chunk - gemm + 3 * (rs_quarter - chunk) + rs_quarter;
  };
  EXPECT_NEAR(t.forward, ring(kQkv) + pipeline(kProj) + ring(kUp) + pipeline(kDown), 1e-12);
  const auto bulk = [&](double gemm) { return gemm / 0.84 - gemm + (ag - gemm / 0.84); };
  EXPECT_NEAR(t.backward, ring(kProj) + ring(kDown) + 2 * bulk(kQkv) + 2 * bulk(kUp), 1e-12);
}

// PyTorch's async TP: copy-engine transfers take no SMs, so an AG -> matmul pair hides for free when the chunk is
// longer than the step, and exposes the excess when not (the projection's, as above); matmul -> RS leaves its last
// push (one step, kAg) and the reduction of the 2 partials (read 2 x M/2, write M/2 at 1 TB/s) exposed, plus the
// first push's excess over the projection's second chunk.
TEST(TpOverlap, AsyncTp) {
  Plan plan = tp_plan(TpCommOverlap::async_tp, Framework::fsdp2);
  plan.cluster.memory_bandwidth = 1e12;
  const LayerGemms g = layer_gemms(plan.model, 1, 2);
  const TpLayerSeconds t = tp_layer_seconds(plan, g, [](const Gemm& x) { return x.flops() / 50e12; });
  const double reduce = 1.5 * kM / 1e12;
  const double proj_excess = kAg - kProj / 2;
  ASSERT_GT(proj_excess, 0);
  // Forward: proj -> RS and down -> RS; backward: AG -> proj dgrad, AG -> down dgrad, qkv -> RS, up -> RS.
  EXPECT_NEAR(t.forward, 2 * (kAg + reduce) + proj_excess, 1e-15);
  EXPECT_NEAR(t.backward, proj_excess + 2 * (kAg + reduce), 1e-15);
}

// Overlap is not free: with an instant link the plain path costs nothing, userbuffers still costs its SM margin.
TEST(TpOverlap, NeverFreeEvenWithAnInstantLink) {
  Plan plan = tp_plan(TpCommOverlap::none);
  plan.cluster.intra = {1e18, 0};
  const double plain = action_costs(plan).tp_f;
  plan.parallel.tp_comm_overlap = TpCommOverlap::userbuffers;
  EXPECT_GT(action_costs(plan).tp_f, plain);
}

// Who runs what: the framework's own overlap only, and userbuffers only with CUDA multicast (compute capability
// 9.0+) and a known SM count.
TEST(TpOverlap, AvailabilityByFrameworkAndGpu) {
  Plan plan = tp_plan(TpCommOverlap::userbuffers);
  EXPECT_NO_THROW(validate(plan));
  plan.cluster.gpu->compute_capability = {8.0, Provenance::nominal};
  try {
    validate(plan);
    ADD_FAILURE() << "userbuffers on compute capability 8.0 accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "parallel.tp_comm_overlap");
  }
  plan = tp_plan(TpCommOverlap::async_tp);  // framework megatron
  try {
    validate(plan);
    ADD_FAILURE() << "async_tp under Megatron accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "parallel.tp_comm_overlap");
    EXPECT_EQ(std::string(e.what()), "parallel.tp_comm_overlap=async_tp: framework megatron runs userbuffers");
  }
  plan.cluster.gpu->compute_capability = {8.0, Provenance::nominal};
  plan.parallel.framework = Framework::fsdp2;
  EXPECT_NO_THROW(validate(plan));
}

}  // namespace
}  // namespace zeropp::analytic
