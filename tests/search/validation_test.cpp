// Validation against published runs (configs/validation/): the rows load as published, the errors the model reaches
// stay within the ceilings measured when this test was written, the leave-one-out procedure recovers a known value,
// and each framework's kernel_efficiency (spec/framework.hpp) is the value its joint fit gives.
#include "cost_model/search/validation.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "cost_model/spec/error.hpp"
#include "cost_model/spec/framework.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/strategy.hpp"

namespace zeropp::search {
namespace {

// Measured when written (issue 19, 2026-11-26: `zeropp validate` on dgx-a100-80gb with its operation table, no
// per-GPU value fitted, Megatron's kernel_efficiency fitted on Table 1 and the Megatron-Core H100 table together,
// each set's attention kernel priced as it ran; rows timed by the schedule simulator; the unfused score GEMMs'
// traffic counted once), and measured again 2026-11-27 after the weight-gradient accumulation was priced as each
// framework executes it (analytic/grad_accumulation.hpp: these 2021 runs add each fp16 weight gradient into
// main_grad in a kernel of their own, grad_accumulation_fusion false) and Megatron's value refitted to 0.8088: as
// given mean |error| 2.02%, max 8.33% (76.1B); leave-one-out (kernel_efficiency refitted on the other nine rows)
// mean 2.04%, max 8.33% (76.1B). The ceilings sit just above them, so the test fails if the model regresses; a
// better model lowers the errors and passes. The goal (3% / 6%) is met on the mean, not on the max: the 76.1B row
// (pp 4, v 3) comes out 8% fast. Measured again 2026-11-27 after the bias and layer-norm weight gradients were priced
// as these runs reduced them (spec/framework.hpp, weight_reductions: transformer_impl local, passes of their own)
// and Megatron's value refitted to 0.8204 (0.8206 with the optimizer step's gradient-norm read): as given 2.06% /
// 8.43%, leave-one-out 2.22% / 8.44% (76.1B): the replicated row-parallel biases and norms cost the tp 8 rows a little
// more than the tp 1-4 ones, which the data do not ask for; the ceilings follow the measurement. (History: before the
// accumulation 2.53% / 8.35%, LOO 2.90% / 9.10%, with 0.7920;
// as given 2.67% / 7.44% with Megatron's 0.7834, fitted while the H100 set was priced at FlashAttention-3's rates
// instead of cuDNN's; before the score traffic was counted once, 4.35% / 9.94% with the three small rows 6-10% slow;
// gemm_efficiency fitted on this table alone with free overlap, 0.6328: LOO 2.4% / 6.1%.)
constexpr double kMeanCeiling = 0.021;
constexpr double kMaxCeiling = 0.085;
constexpr double kLooMeanCeiling = 0.023;
constexpr double kLooMaxCeiling = 0.085;
// framework.hpp's fitted values are written with four digits; the joint fits must stay that close to them.
constexpr double kFrameworkFitTolerance = 0.001;

TEST(Validation, NarayananRowsLoadWithTheScriptsLayouts) {
  const ValidationReport r = load_validation("narayanan2021");
  ASSERT_EQ(r.rows.size(), 10u);
  EXPECT_EQ(r.cluster, "dgx-a100-80gb");
  // 1.7B: tp 1, pp 1, 32 GPUs -> dp 32; MBS 16, GBS 512 -> 1 micro-batch.
  const auto& first = r.rows.front().plan.parallel;
  EXPECT_EQ(first.dp, 32);
  EXPECT_EQ(first.micro_batch, 16);
  EXPECT_EQ(first.micro_batches, 1);
  // 1T: tp 8, pp 64, 3072 GPUs -> dp 6; MBS 1, GBS 3072 -> 512 micro-batches; no interleaving.
  const auto& last = r.rows.back().plan.parallel;
  EXPECT_EQ(last.dp, 6);
  EXPECT_EQ(last.micro_batches, 512);
  EXPECT_EQ(last.v, 1);
  // 145.6B: 80 layers / (pp 8 x 5 layers per virtual stage) = 2 chunks.
  EXPECT_EQ(r.rows[6].plan.parallel.v, 2);
  EXPECT_EQ(r.rows[6].plan.parallel.schedule, ScheduleKind::interleaved);
  for (const auto& row : r.rows) {
    EXPECT_EQ(row.plan.parallel.recompute, Recompute::full);
    EXPECT_EQ(row.plan.parallel.dtype, Dtype::fp16);
    EXPECT_EQ(row.plan.cluster.name, "dgx-a100-80gb");
    EXPECT_EQ(row.plan.model.attention_kind(), AttentionKind::unfused);  // the 2021 runs had no FlashAttention
  }
}

TEST(Validation, ErrorsAreComputedAndWithinTheMeasuredCeiling) {
  ValidationReport r = load_validation("narayanan2021");
  run_validation(r);
  double sum = 0, worst = 0;
  for (const auto& row : r.rows) {
    ASSERT_GT(row.predicted_tflops, 0);
    EXPECT_LT(row.predicted_tflops, 312 * 4.0 / 3);  // below the A100 peak (their count adds a recomputed forward)
    EXPECT_DOUBLE_EQ(row.error, (row.predicted_tflops - row.published_tflops) / row.published_tflops);
    sum += std::abs(row.error);
    worst = std::max(worst, std::abs(row.error));
  }
  EXPECT_DOUBLE_EQ(r.mean_abs_error, sum / r.rows.size());
  EXPECT_DOUBLE_EQ(r.max_abs_error, worst);
  EXPECT_LE(r.mean_abs_error, kMeanCeiling);
  EXPECT_LE(r.max_abs_error, kMaxCeiling);
}

TEST(Validation, LeaveOneOutErrorsAreWithinTheMeasuredCeiling) {
  ValidationReport r = load_validation("narayanan2021");
  run_validation(r);
  run_cross_validation(r);
  ASSERT_TRUE(r.cross_validated);
  double sum = 0, worst = 0;
  for (const auto& row : r.rows) {
    // Every fold's value comes from nine rows; it predicts the tenth as the model would with it.
    EXPECT_NEAR(row.loo_predicted_tflops, predict_tflops(row, row.loo_efficiency), 1e-9) << row.name;
    EXPECT_DOUBLE_EQ(row.loo_error, row.loo_predicted_tflops / row.published_tflops - 1);
    sum += std::abs(row.loo_error);
    worst = std::max(worst, std::abs(row.loo_error));
  }
  EXPECT_NEAR(r.loo_mean_abs_error, sum / r.rows.size(), 1e-12);
  EXPECT_DOUBLE_EQ(r.loo_max_abs_error, worst);
  EXPECT_LE(r.loo_mean_abs_error, kLooMeanCeiling);
  EXPECT_LE(r.loo_max_abs_error, kLooMaxCeiling);
  // Out-of-sample is never better than in-sample on the same rows: each fold's value is worse for its own row.
  EXPECT_GE(r.loo_mean_abs_error, r.fit.mean_abs_error);
}

// framework.hpp's kernel_efficiency values are the joint fits of `zeropp validate --fit-framework`: Megatron on
// Narayanan 2021 (A100) and Megatron-Core (H100) together, PyTorch FSDP on llm-foundry's MPT sets (A100, H100).
// Each set predicted with the value fitted on the other (leave-one-set-out) is recomputed here and held to the
// ceilings measured when written, after each set's attention kernel was priced as it ran (spec/attention_kernel.hpp;
// issue 19), and again after the H100 operation table took the H100 measurement (results/measured/h100-80gb-hbm3:
// matmul_efficiency, the sm90 tile, the exposed GEMM epilogue store, measured attention points): megatron: H100 set
// 7.16% mean / 22.10% max from the A100 fit, A100 set 2.54% / 8.26% from the H100 fit (before the measurement 7.3% /
// 20.5% and 2.8% / 6.6%: the maxima rose with the measured entries, the 32B H100 row, already 20% slow from its
// gradient reduce-scatter, 2 points slower; the ceilings follow the measurement); PyTorch FSDP (the MPT sets run
// FSDP1: fsdp1, whose value fsdp2 shares): A100 8.44% / 18.35%, H100 7.77% / 17.97% (before 16.8% / 27.4% and
// 13.8% / 27.1%; 24.9% / 34.7% and 23.2% / 45.4% under FlashAttention-3's rates): the fits transfer across GPUs
// only that well. Measured again 2026-11-27 after the weight-gradient accumulation was priced as each framework
// executes it (analytic/grad_accumulation.hpp) and Megatron's value refitted (0.7920 -> 0.8088): H100 set 7.93% /
// 23.38% from the A100 fit (0.8085), A100 set 3.43% / 11.37% from the H100 fit (0.8393): both sets slowed, the H100
// one more (the fp32 main_grad's read and write exposed after the wgrad GEMMs' main loop on the H100, under it on
// the A100), so each set's fit transfers to the other less well than before; the ceilings follow the measurement.
// The FSDP sets did not move beyond rounding (8.4% / 18.3% and 7.8% / 18.0% as `validate --fit-framework` prints).
// Measured again 2026-11-27 after the bias and norm-weight gradients were priced where each framework reduces them
// (spec/framework.hpp, weight_reductions) and the values refitted (megatron 0.8088 -> 0.8204, fsdp 0.7448 ->
// 0.7497): megatron H100 set 7.67% / 22.97% (A100 fit 0.8171), A100 set 2.70% / 10.32% (H100 fit 0.8393); FSDP A100
// 7.78% / 17.06%, H100 7.52% / 18.18%; with the optimizer step's gradient-norm read (values 0.8206 / 0.7498):
// megatron 7.7% / 23.0% and 2.7% / 10.3%, FSDP 7.8% / 17.1% and 7.4% / 17.8%.
TEST(Validation, FrameworksHoldTheirJointFits) {
  struct Case {
    Framework framework;
    std::vector<std::string> sets;
    std::vector<double> loso_mean_ceiling, loso_max_ceiling;
  };
  const Case cases[] = {{Framework::megatron, {"megatron_core_h100", "narayanan2021"}, {0.080, 0.035}, {0.234, 0.114}},
                        {Framework::fsdp1, {"mpt_fsdp_a100", "mpt_fsdp_h100"}, {0.085, 0.078}, {0.184, 0.181}}};
  for (const Case& c : cases) {
    std::vector<ValidationReport> sets;
    for (const auto& name : c.sets) sets.push_back(load_validation(name));
    for (const auto& set : sets) EXPECT_EQ(framework_of(set.rows.front().plan.parallel), c.framework);
    const FrameworkFit fit = fit_framework(sets);
    if (is_fsdp(c.framework)) {  // one value for both FSDP versions
      EXPECT_EQ(framework_kernel_efficiency(Framework::fsdp1), framework_kernel_efficiency(Framework::fsdp2));
    }
    EXPECT_NEAR(framework_kernel_efficiency(c.framework), fit.all.value, kFrameworkFitTolerance)
        << "spec/framework.cpp and `zeropp validate --fit-framework " << to_string(c.framework) << "` drifted apart";
    ASSERT_EQ(fit.leave_one_set_out.size(), sets.size());
    for (std::size_t i = 0; i < sets.size(); ++i) {
      const SetTransfer& t = fit.leave_one_set_out[i];
      EXPECT_LE(t.mean_abs_error, c.loso_mean_ceiling[i]) << c.sets[i];
      EXPECT_LE(t.max_abs_error, c.loso_max_ceiling[i]) << c.sets[i];
      // The value each set is predicted with never saw that set: it is the other set's own fit.
      ValidationReport other = sets[1 - i];
      run_cross_validation(other);
      EXPECT_NEAR(t.value, other.fit.value, 1e-6) << c.sets[i];
    }
  }
}

// Rows whose "published" values the model itself generated with gemm_efficiency 0.6: the truth is known, so the
// fit must return 0.6 and every leave-one-out prediction must be exact.
TEST(Validation, CrossValidationRecoversAKnownEfficiency) {
  ValidationReport r = load_validation("narayanan2021");
  for (auto& row : r.rows) row.published_tflops = predict_tflops(row, 0.6);
  run_cross_validation(r);
  EXPECT_NEAR(r.fit.value, 0.6, 1e-5);
  EXPECT_LT(r.fit.mean_abs_error, 1e-5);
  for (const auto& row : r.rows) {
    EXPECT_NEAR(row.loo_efficiency, 0.6, 1e-5) << row.name;
    EXPECT_LT(std::abs(row.loo_error), 1e-5) << row.name;
  }
  EXPECT_LT(r.loo_max_abs_error, 1e-5);
}

TEST(Validation, PredictionsRiseWithGemmEfficiency) {
  const ValidationReport r = load_validation("narayanan2021");
  for (const auto& row : r.rows) {
    EXPECT_LT(predict_tflops(row, 0.5), predict_tflops(row, 0.6)) << row.name;
    EXPECT_LT(predict_tflops(row, 0.6), predict_tflops(row, 0.7)) << row.name;
  }
}

TEST(Validation, AGemmTableLeavesNoEfficiencyToFit) {
  ValidationReport r = load_validation("narayanan2021");
  r.rows[3].plan.cluster.gemm_table[Dtype::fp16] = {{1e9, 0.5}, {1e12, 0.8}};
  try {
    run_cross_validation(r);
    ADD_FAILURE() << "no error";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "validation.cluster.gemm_table");
  }
}

TEST(Validation, MemoryBoundKernelsCostTime) {
  ValidationReport with_hbm = load_validation("narayanan2021");
  ASSERT_GT(with_hbm.rows.front().plan.cluster.memory_bandwidth, 0);
  ValidationReport without = with_hbm;
  for (auto& row : without.rows) row.plan.cluster.memory_bandwidth = 0;  // GEMMs and communication only
  run_validation(with_hbm);
  run_validation(without);
  for (std::size_t i = 0; i < with_hbm.rows.size(); ++i)
    EXPECT_LT(with_hbm.rows[i].predicted_tflops, without.rows[i].predicted_tflops) << with_hbm.rows[i].name;
}

TEST(Validation, BadRowsNameTheField) {
  const auto base = nlohmann::json::parse(R"({"cluster": "dgx-a100-80gb", "seq_len": 2048, "vocab": 51200,
    "dtype": "fp16", "recompute": "full", "rows": [{"name": "x", "heads": 24, "hidden": 2304, "layers": 24,
    "tp": 1, "pp": 1, "gpus": 32, "global_batch": 512, "micro_batch": 16, "v": 1, "dp_overlap": true,
    "tflops_per_gpu": 137}]})");
  EXPECT_NO_THROW(load_validation_json(base, "test"));
  auto typo = base;
  typo["rows"][0]["micro_batchs"] = 16;
  try {
    load_validation_json(typo, "test");
    ADD_FAILURE() << "no error";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "validation.rows[0].micro_batchs");
  }
  auto uneven = base;
  uneven["rows"][0]["global_batch"] = 500;
  try {
    load_validation_json(uneven, "test");
    ADD_FAILURE() << "no error";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "validation.rows[0].global_batch");
  }
  // 4294969344 = 2^32 + 2048 once read as an int: silently 2048. Now refused by name.
  auto huge = base;
  huge["seq_len"] = 4294969344LL;
  try {
    load_validation_json(huge, "test");
    ADD_FAILURE() << "no error";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "validation.seq_len");
    EXPECT_STREQ(e.what(), "validation.seq_len=4294969344 must be a positive integer up to 2147483647");
  }
  auto published = base;
  published["rows"][0]["tflops_per_gpu"] = 1e308;
  try {
    load_validation_json(published, "test");
    ADD_FAILURE() << "no error";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "validation.rows[0].tflops_per_gpu");
  }
}

}  // namespace
}  // namespace zeropp::search

namespace zeropp::search {
namespace {

// The Megatron-Core H100 set (configs/validation/megatron_core_h100.json): the table's layouts with the stated
// assumptions (b 1, v 2 where L/pp is even, no recomputation, distributed optimizer, SP with TP-comm overlap where
// tp > 1, param-gather overlap, FlashAttention), throughput counted as model FLOPs.
TEST(Validation, MegatronCoreH100RowsLoadWithTheStatedAssumptions) {
  const ValidationReport r = load_validation("megatron_core_h100");
  ASSERT_EQ(r.rows.size(), 9u);
  EXPECT_EQ(r.flops, PublishedFlops::model);
  EXPECT_EQ(r.cluster, "dgx-h100");
  for (const auto& row : r.rows) {
    const ParallelSpec& p = row.plan.parallel;
    EXPECT_EQ(p.dp, 48) << row.name;
    EXPECT_EQ(p.zero_stage, 1) << row.name;
    EXPECT_EQ(p.sequence_parallel, p.tp > 1) << row.name;
    EXPECT_EQ(p.tp_comm_overlap, p.tp > 1 ? TpCommOverlap::userbuffers : TpCommOverlap::none) << row.name;
    EXPECT_TRUE(p.overlap_param_gather) << row.name;
    EXPECT_EQ(p.recompute, Recompute::none) << row.name;
    EXPECT_EQ(row.plan.model.attention_kind(), AttentionKind::flash) << row.name;
    EXPECT_EQ(row.plan.model.seq_len, 4096);
  }
  // Every pp > 1 row interleaved (Megatron-Core r0.8 overlaps p2p only so): 70B: 84 layers / pp 2 = 42 per rank,
  // v 2 assumed; 119B: 92 / 4 = 23 per rank and 462B: 112 / 16 = 7, prime: one layer per virtual stage, v 23 and
  // v 7, the interleaved schedule. 192 x 2 / 48 = 8 micro-batches.
  EXPECT_EQ(r.rows[4].plan.parallel.v, 2);
  EXPECT_EQ(r.rows[4].plan.parallel.micro_batches, 8);
  EXPECT_EQ(r.rows[5].plan.parallel.v, 23);
  EXPECT_EQ(r.rows[8].plan.parallel.v, 7);
  for (const auto& row : r.rows)
    EXPECT_EQ(row.plan.parallel.schedule,
              row.plan.parallel.pp > 1 ? ScheduleKind::interleaved : ScheduleKind::one_f_one_b)
        << row.name;
}

// Measured when written (issue 19, 2026-11-26, `zeropp validate --set <set>`; the framework's kernel_efficiency
// refitted on the other rows for leave-one-out): far from the 3% / 6% the model aims for, and pinned so that a change
// that makes them worse fails; they are not a claim of accuracy.
//   megatron_core_h100  LOO 8.74% mean / 22.14% (32B) max since the H100 table took the measurement
//                       (results/measured/h100-80gb-hbm3; before 8.23% / 20.70% (1.7B)): small models come out
//                       fast (1.7B 18%, 7.1B 10%), the pp = 1 32B row slow (its fp32 gradient reduce-scatter
//                       outlasts the one micro-batch backward it overlaps). (8.36% / 22.55% with FlashAttention-3's
//                       rates where cuDNN ran; before 119B and 462B
//                       were interleaved as run: 11.77% / 27.82%.)
//   mpt_fsdp_a100       LOO 8.19% / 15.28% (1b at 8192): full-recompute rows slow, long non-recompute rows fast
//                       (8.18% / 15.21% before; 8.14% / 15.03% before FSDP1's copies were priced, issue 19 item 2).
//   mpt_fsdp_h100       LOO 5.73% / 12.64% (13b at 2048) since the measured H100 table (8.93% / 16.92% (30b on 32
//                       GPUs) before): as on the A100 (11.85% / 22.48% with FlashAttention-3's
//                       rates where llm-foundry ran FlashAttention-2).
//   Since the bias and norm-weight gradients are priced where each framework reduces them (2026-11-27,
//   spec/framework.hpp, weight_reductions): megatron_core_h100 unchanged (TransformerEngine reduces them in kernels
//   that run anyway); mpt_fsdp_a100 7.63% / 14.95%; mpt_fsdp_h100 5.42% / 13.33% (13b at 2048); mtnlg 4.99% / 5.96%.
//   mtnlg_deepspeed_a100  LOO 5.01% / 5.99% (2240 GPUs): one efficiency fitted on two of the three rows predicts the
//                       third within 6%, but the fit (0.61) is far below Megatron's 0.79 that DeepSpeed plans use:
//                       the set's rows come out 24-32% fast as given, and the loss from 2240 to 3360 GPUs (10%
//                       published) is predicted at 5%.
TEST(Validation, OtherSetsWithinTheirMeasuredCeilings) {
  struct Case {
    const char* set;
    double loo_mean, loo_max;
  };
  for (const Case& c : {Case{"megatron_core_h100", 0.088, 0.222}, Case{"mpt_fsdp_a100", 0.082, 0.153},
                        Case{"mpt_fsdp_h100", 0.058, 0.134}, Case{"mtnlg_deepspeed_a100", 0.051, 0.060}}) {
    ValidationReport r = load_validation(c.set);
    run_validation(r);
    run_cross_validation(r);
    EXPECT_EQ(r.fitted, "kernel_efficiency") << c.set;
    EXPECT_LE(r.loo_mean_abs_error, c.loo_mean) << c.set;
    EXPECT_LE(r.loo_max_abs_error, c.loo_max) << c.set;
  }
}

// llm-foundry's MPT sets: pure FSDP (zero3) over the row's GPUs, tokens per second compared as published.
TEST(Validation, MptRowsLoadAsRun) {
  const ValidationReport r = load_validation("mpt_fsdp_h100");
  EXPECT_EQ(r.flops, PublishedFlops::tokens);
  ASSERT_EQ(r.rows.size(), 12u);
  for (const auto& row : r.rows) {
    const ParallelSpec& p = row.plan.parallel;
    EXPECT_EQ(p.strategy, Strategy::zero3) << row.name;
    EXPECT_EQ(framework_of(p), Framework::fsdp1) << row.name;  // Composer's FSDP of FlatParameters
    EXPECT_EQ(p.zero_stage, 3) << row.name;
    EXPECT_EQ(p.z * p.dp, p.world()) << row.name;
    EXPECT_FALSE(row.plan.model.has_dropout()) << row.name;
  }
  // 3b at 2048 tokens on 32 GPUs: MicroBatchSize 6, GradAccum 3: z 8, dp 4, B = 576 / (6 x 32) = 3.
  const ParallelSpec& p = r.rows[3].plan.parallel;
  EXPECT_EQ(p.z, 8);
  EXPECT_EQ(p.dp, 4);
  EXPECT_EQ(p.micro_batch, 6);
  EXPECT_EQ(p.micro_batches, 3);
  EXPECT_EQ(r.rows[4].plan.model.seq_len, 8192);
  EXPECT_EQ(r.rows[6].plan.parallel.recompute, Recompute::full);
  // Tokens per second: predicted from the iteration time and the tokens of the global batch.
  ValidationReport one = r;
  one.rows.resize(1);
  run_validation(one);
  EXPECT_GT(one.rows[0].predicted_tflops, 1000);
}

TEST(Validation, UnknownPublishedFlopsCountIsRefused) {
  nlohmann::json j = nlohmann::json::parse(R"({"cluster": "dgx-h100", "seq_len": 4096, "vocab": 131072,
      "dtype": "bf16", "recompute": "none", "published_flops": "hardware", "rows": []})");
  try {
    load_validation_json(j, "test.json");
    ADD_FAILURE() << "no error";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "validation.published_flops");
  }
}

}  // namespace
}  // namespace zeropp::search
