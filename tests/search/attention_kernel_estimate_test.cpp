// The attention kernel reaches the simulator and the closed form alike (they share the per-operation cost,
// analytic/time_model.cpp): for each kernel the H100 profile lists, pure ZeRO-3 of a Llama layer stack simulated
// layer by layer charges the same compute as the closed form; and the kernels' order follows their published
// rates (FlashAttention-2 slowest on H100, Shah et al. 2024 Figs. 5-6).
#include <gtest/gtest.h>

#include "cost_model/search/simulated_estimate.hpp"
#include "cost_model/spec/attention_kernel.hpp"
#include "cost_model/spec/names.hpp"

namespace zeropp::search {
namespace {

// Llama 3 8B (head dim 128, flash attention) at 8192 tokens, pure ZeRO-3 over one DGX H100, 2 micro-batches of 1,
// no NCCL contention (the executors then charge compute identically).
Plan llama_zero3(std::optional<AttentionKernel> kernel) {
  Plan plan;
  plan.model = load_model("llama3-8b", {.seq_len = 8192});
  plan.cluster = load_cluster("dgx-h100");
  plan.cluster.gpu->nccl_contention = {};
  ParallelSpec& p = plan.parallel;
  p.strategy = Strategy::zero3;
  p.framework = Framework::fsdp2;
  p.schedule = ScheduleKind::one_f_one_b;
  p.zero_stage = 3;
  p.z = 8;
  p.micro_batch = 1;
  p.micro_batches = 2;
  p.recompute = Recompute::full;
  p.attention_kernel = kernel;
  return plan;
}

TEST(AttentionKernelEstimate, ClosedFormAndSimulatorAgreeForEachKernel) {
  double compute[3] = {};
  int i = 0;
  for (const AttentionKernel k : {AttentionKernel::flash2, AttentionKernel::cudnn, AttentionKernel::flash3}) {
    const SimulatedEstimate s = simulated_estimate(llama_zero3(k));
    ASSERT_TRUE(s.simulated) << to_string(k);
    EXPECT_NEAR(s.estimate.time_s.compute, s.closed_form.time_s.compute, 1e-9 * s.closed_form.time_s.compute)
        << to_string(k);
    compute[i++] = s.estimate.time_s.compute;
  }
  // At 8192 tokens, head dim 128, causal: FlashAttention-2 333, cuDNN 529, FlashAttention-3 602 TFLOP/s forward.
  EXPECT_GT(compute[0], compute[1]);
  EXPECT_GT(compute[1], compute[2]);
  // The plan without a kernel runs FSDP2's default on H100: PyTorch SDPA's flash backend, FlashAttention-2.
  EXPECT_EQ(simulated_estimate(llama_zero3(std::nullopt)).estimate.time_s.compute, compute[0]);
}

}  // namespace
}  // namespace zeropp::search
