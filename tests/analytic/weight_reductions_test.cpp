// Where each framework reduces the bias and norm-weight gradients (framework.hpp, weight_reductions) and the bytes
// the passes of their own add to W (time_model.cpp), counted by hand for a small GPT and a small Llama layer.
#include <gtest/gtest.h>

#include "cost_model/analytic/time_model.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/framework.hpp"
#include "cost_model/spec/names.hpp"
#include "estimate_fixtures.hpp"

namespace zeropp::analytic {
namespace {

ParallelSpec megatron_tp2(bool sequence_parallel, std::optional<TransformerImpl> impl) {
  ParallelSpec p;
  p.strategy = Strategy::three_d;
  p.schedule = ScheduleKind::one_f_one_b;
  p.tp = 2;
  p.zero_stage = 1;
  p.micro_batch = 2;
  p.micro_batches = p.unit = 4;
  p.sequence_parallel = sequence_parallel;
  p.framework = Framework::megatron;
  p.transformer_impl = impl;
  return p;
}

TEST(WeightReductions, EachFrameworksKernels) {
  ParallelSpec p;
  p.framework = Framework::megatron;
  EXPECT_TRUE(weight_reductions(p).bias_in_wgrad_gemm);  // TransformerEngine: BGRADB epilogue, fused norm backward
  EXPECT_TRUE(weight_reductions(p).norm_in_backward_kernel);
  p.transformer_impl = TransformerImpl::local;  // Megatron-LM of 2021: autograd sums, Apex's separate gamma pass
  EXPECT_FALSE(weight_reductions(p).bias_in_wgrad_gemm);
  EXPECT_FALSE(weight_reductions(p).norm_in_backward_kernel);
  p.transformer_impl.reset();
  for (Framework f : {Framework::deepspeed, Framework::fsdp1, Framework::fsdp2}) {
    p.framework = f;
    EXPECT_FALSE(weight_reductions(p).bias_in_wgrad_gemm) << to_string(f);
    EXPECT_FALSE(weight_reductions(p).norm_in_backward_kernel) << to_string(f);
  }
  p.framework = Framework::zeropp;  // InternEvo: fused_dense's linear_bias_wgrad, norms in PyTorch ops
  EXPECT_TRUE(weight_reductions(p).bias_in_wgrad_gemm);
  EXPECT_FALSE(weight_reductions(p).norm_in_backward_kernel);
}

// GPT, h 1024, 2 layers, b 2 x s 512 = 1024 tokens, tp 2, bf16 (e = 2), HBM 1 TB/s, GEMMs priced per FLOP (round
// cluster: the difference is the reductions alone). Per layer without SP: the biases read the outputs of QKV
// (3h/t = 1536 columns), up (4h/t = 2048), and of the row-parallel output and down projections (h = 1024 each,
// replicated): 2 x 1024 x 5632 = 11534336 bytes; the two LayerNorms read dy and x, 2 x 2e x 1024 x 1024 = 8388608.
// With SP the row-parallel biases and the norms see 1024/2 tokens: 2 x 1024 x 4608 + 4194304 = 13631488. The LM
// head's final norm: 2e x 1024 x 1024 = 4194304 bytes (2097152 with SP).
TEST(WeightReductions, PassesOfTheirOwnAddToW) {
  ClusterSpec c = test::round_cluster(1, 8);
  c.memory_bandwidth = 1e12;
  const ModelSpec gpt = test::gpt(2, 1024, 16, 512, 50000);
  for (const bool sp : {false, true}) {
    const ActionCosts te = action_costs(test::plan_of(gpt, c, megatron_tp2(sp, std::nullopt)));
    const ActionCosts local = action_costs(test::plan_of(gpt, c, megatron_tp2(sp, TransformerImpl::local)));
    const double layer = sp ? 13631488.0 : 19922944.0;
    EXPECT_NEAR(local.w - te.w, 2 * layer / 1e12, 1e-15) << "sp " << sp;
    EXPECT_NEAR(local.head_w - te.head_w, (sp ? 2097152.0 : 4194304.0) / 1e12, 1e-15) << "sp " << sp;
    EXPECT_DOUBLE_EQ(local.f, te.f);
    EXPECT_DOUBLE_EQ(local.b, te.b);
    // Stated explicitly, TransformerEngine is the default.
    EXPECT_DOUBLE_EQ(action_costs(test::plan_of(gpt, c, megatron_tp2(sp, TransformerImpl::transformer_engine))).w,
                     te.w);
  }
  // Llama has no biases: its two RMSNorms only, 2 x 2e x 1024 tokens x 1024 per layer.
  const ModelSpec llama = test::llama(2, 1024, 16, 16, 2816);
  ModelSpec llama_s = llama;
  llama_s.seq_len = 512;
  const ActionCosts te = action_costs(test::plan_of(llama_s, c, megatron_tp2(false, std::nullopt)));
  const ActionCosts local = action_costs(test::plan_of(llama_s, c, megatron_tp2(false, TransformerImpl::local)));
  EXPECT_NEAR(local.w - te.w, 2 * 8388608.0 / 1e12, 1e-15);
}

TEST(WeightReductions, TransformerImplIsMegatronsOption) {
  const nlohmann::json deepspeed = {{"strategy", "3d"}, {"framework", "deepspeed"}, {"transformer_impl", "local"}};
  EXPECT_THROW(validate(parallel_from_json(deepspeed, "parallel"), "parallel"), SpecError);
  try {
    validate(parallel_from_json(deepspeed, "parallel"), "parallel");
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "parallel.transformer_impl");
  }
  const nlohmann::json unknown = {{"strategy", "3d"}, {"transformer_impl", "apex"}};
  EXPECT_THROW(parallel_from_json(unknown, "parallel"), SpecError);
  // Given values round-trip through to_json; an absent key stays absent.
  const ParallelSpec local = parallel_from_json({{"strategy", "3d"}, {"transformer_impl", "local"}}, "parallel");
  EXPECT_EQ(local.transformer_impl, TransformerImpl::local);
  EXPECT_EQ(parallel_from_json(to_json(local), "parallel"), local);
  EXPECT_FALSE(to_json(parallel_from_json({{"strategy", "3d"}}, "parallel")).contains("transformer_impl"));
}

}  // namespace
}  // namespace zeropp::analytic
