// Validation against Narayanan et al. 2021, Table 1: the rows load as published, the errors the model reaches on
// the one A100 profile stay within the ceilings measured when this test was written, the leave-one-out procedure
// recovers a known efficiency, and the profile's gemm_efficiency is the value the fit gives.
#include "cost_model/search/validation.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "cost_model/spec/error.hpp"

namespace zeropp::search {
namespace {

// Measured when written (zeropp validate on configs/clusters/dgx-a100-80gb.json: datasheet peaks and HBM,
// published busbw collectives, gemm_efficiency 0.6328 as fitted; rows timed by the schedule simulator, the
// executor every command uses, Megatron's gradient reduce-scatter bucketed under the last backward,
// 2026-11-23): profile as given mean |error| 2.07%, max 5.42% (1T); leave-one-out mean 2.38%, max 6.11% (1T).
// The ceilings sit just above them, so the test fails if the model regresses; a better model lowers the errors
// and passes. (History: one gradient sync after the backward, 0.658: LOO 3.43% / 8.43%; the closed form with
// 0.648: LOO 4.0% / 8.85%; datasheet links and the 0.75 default gave 14.4% / 18.8%, every row over-predicted.)
constexpr double kMeanCeiling = 0.022;
constexpr double kMaxCeiling = 0.056;
constexpr double kLooMeanCeiling = 0.025;
constexpr double kLooMaxCeiling = 0.062;
// The profile's gemm_efficiency is written with three digits; the fit must stay that close to it.
constexpr double kProfileFitTolerance = 0.001;

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
    EXPECT_LT(row.predicted_tflops, 312);  // below the A100 peak
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

TEST(Validation, ProfileHoldsTheFittedEfficiency) {
  ValidationReport r = load_validation("narayanan2021");
  run_cross_validation(r);
  EXPECT_NEAR(r.profile_efficiency, r.fit.value, kProfileFitTolerance)
      << "configs/clusters/dgx-a100-80gb.json gemm_efficiency and the fit of `zeropp validate` drifted apart";
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

TEST(Validation, MemoryBoundKernelsBringPredictionsCloser) {
  ValidationReport with_hbm = load_validation("narayanan2021");
  ASSERT_GT(with_hbm.rows.front().plan.cluster.memory_bandwidth, 0);
  ValidationReport without = with_hbm;
  for (auto& row : without.rows) row.plan.cluster.memory_bandwidth = 0;  // GEMMs and communication only
  run_validation(with_hbm);
  run_validation(without);
  for (std::size_t i = 0; i < with_hbm.rows.size(); ++i)
    EXPECT_LT(with_hbm.rows[i].predicted_tflops, without.rows[i].predicted_tflops) << with_hbm.rows[i].name;
  EXPECT_LT(with_hbm.mean_abs_error, without.mean_abs_error);
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
  // 70B: 84 layers / pp 2 = 42 per rank, even: v 2; 462B: 112 / 16 = 7: no interleaving. 192 x 2 / 48 = 8.
  EXPECT_EQ(r.rows[4].plan.parallel.v, 2);
  EXPECT_EQ(r.rows[4].plan.parallel.micro_batches, 8);
  EXPECT_EQ(r.rows[8].plan.parallel.v, 1);
}

// Measured when written (2026-11-23, zeropp validate --set megatron_core_h100, the dgx-h100 profile's
// gemm_efficiency 0.5781 fitted on this set): in-sample mean 7.47%, max 17.7% (16B); leave-one-out mean 7.66%, max
// 17.95% (16B), far from the 3% / 6% the model aims for: the pp = 1 rows with TP come out 12-18% slow, the pp > 1
// rows within -8..+9%. (Before the bucketed gradient sync, on the unfitted 0.75: LOO 12.4% / 25.0%.) The ceilings
// pin today's errors so a change that makes them worse fails; they are not a claim of accuracy.
TEST(Validation, MegatronCoreH100ErrorsWithinTheMeasuredCeiling) {
  ValidationReport r = load_validation("megatron_core_h100");
  run_validation(r);
  run_cross_validation(r);
  EXPECT_LE(r.mean_abs_error, 0.076);
  EXPECT_LE(r.loo_mean_abs_error, 0.078);
  EXPECT_LE(r.loo_max_abs_error, 0.181);
  EXPECT_NEAR(r.profile_efficiency, r.fit.value, kProfileFitTolerance)
      << "configs/clusters/dgx-h100.json gemm_efficiency and the fit of `zeropp validate --set megatron_core_h100` "
         "drifted apart";
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
