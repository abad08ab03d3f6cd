// Validation against Narayanan et al. 2021, Table 1: the rows load as published, and the errors the model
// actually reaches on the one A100 profile stay within the ceiling measured when this test was written.
#include "cost_model/analytic/validation.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "cost_model/spec/error.hpp"

namespace zeropp::analytic {
namespace {

// Measured when written (zeropp validate on configs/clusters/dgx-a100-80gb.json: datasheet peaks, HBM and links,
// gemm_efficiency left at its 0.75 default): mean |error| 14.4%, max 18.8%, every row over-predicted. The
// ceilings sit just above them, so the test catches a regression; a better profile lowers the errors and passes.
constexpr double kMeanCeiling = 0.15;
constexpr double kMaxCeiling = 0.19;
// The same without the memory-bound kernels (memory_bandwidth = 0): mean 36.3%, max 70.8%.

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
}

}  // namespace
}  // namespace zeropp::analytic
