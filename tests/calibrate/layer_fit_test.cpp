// The layer fit: in-layer GEMM rate and the memory bandwidth of the time model's memory-bound kernels,
// recovered from layer pass times the time model itself generated with known values.
#include <gtest/gtest.h>

#include "cost_model/calibrate/layer_fit.hpp"
#include "cost_model/spec/error.hpp"

namespace zeropp::calibrate {
namespace {

ClusterSpec cpu(double memory_bandwidth) {
  ClusterSpec c;
  c.name = "test";
  c.nodes = 1;
  c.gpus_per_node = 2;
  c.peak_flops[Dtype::fp32] = 100e9;
  c.memory_bytes = 1e9;
  c.intra = {5e9, 2e-6};
  c.gemm_efficiency = 0.5;
  c.memory_bandwidth = memory_bandwidth;
  return c;
}

std::vector<LayerSample> passes(int h, const ClusterSpec& truth) {
  std::vector<LayerSample> out;
  for (const char* p : {"F", "B", "W"}) {
    LayerSample s{std::string("layer/") + p, p, h, 4, 128, 1, 0};
    s.seconds = predict_layer_seconds(s, truth, Dtype::fp32);
    out.push_back(s);
  }
  return out;
}

TEST(LayerFit, WPassIsTheLinearGemmsAlone) {
  // W = 24 b s h^2 FLOPs (DESIGN.md section 4) at peak * efficiency, whatever the memory bandwidth.
  const LayerSample w{"w", "W", 256, 4, 128, 1, 0};
  EXPECT_NEAR(predict_layer_seconds(w, cpu(7e9), Dtype::fp32), 24.0 * 128 * 256 * 256 / (100e9 * 0.5), 1e-12);
}

TEST(LayerFit, RecoversTheGemmScaleAndBandwidthThatMadeTheTimes) {
  const ClusterSpec truth = apply_layer_fit(cpu(0), Dtype::fp32, LayerFit{0.8, 12e9, false});
  EXPECT_DOUBLE_EQ(truth.gemm_efficiency, 0.4);
  auto samples = passes(128, truth);
  const auto more = passes(256, truth);
  samples.insert(samples.end(), more.begin(), more.end());
  const LayerFit fit = fit_layer_passes(samples, cpu(0), Dtype::fp32, "memory_bandwidth");
  EXPECT_FALSE(fit.clamped);
  EXPECT_NEAR(fit.gemm_scale, 0.8, 1e-9);
  EXPECT_NEAR(fit.bandwidth, 12e9, 12e9 * 1e-9);
}

TEST(LayerFit, BandwidthNeverAboveTheBaseProfiles) {
  // Times made at 12 GB/s: a base that allows 24 GB/s recovers them; one that allows 6 GB/s holds the bandwidth at
  // 6 GB/s and lets the GEMM scale alone absorb the rest (slower GEMMs explain the time the kernels cannot).
  const ClusterSpec truth = apply_layer_fit(cpu(0), Dtype::fp32, LayerFit{0.8, 12e9, false});
  auto samples = passes(128, truth);
  const auto more = passes(256, truth);
  samples.insert(samples.end(), more.begin(), more.end());
  const LayerFit free = fit_layer_passes(samples, cpu(24e9), Dtype::fp32, "memory_bandwidth");
  EXPECT_FALSE(free.bandwidth_capped);
  EXPECT_NEAR(free.bandwidth, 12e9, 12e9 * 1e-9);
  const LayerFit capped = fit_layer_passes(samples, cpu(6e9), Dtype::fp32, "memory_bandwidth");
  EXPECT_TRUE(capped.bandwidth_capped);
  EXPECT_DOUBLE_EQ(capped.bandwidth, 6e9);
  EXPECT_GT(capped.gemm_scale, 0.8);  // the kernels now take longer, so the GEMMs must be faster than the truth's
  EXPECT_LT(capped.gemm_scale, 1.0 / 0.5);
}

TEST(LayerFit, ScalesTheTableAndCapsAtOne) {
  ClusterSpec c = cpu(0);
  c.gemm_table[Dtype::fp32] = {{1e6, 0.5}, {1e9, 0.9}};
  const ClusterSpec scaled = apply_layer_fit(c, Dtype::fp32, LayerFit{1.5, 3e9, false});
  EXPECT_DOUBLE_EQ(scaled.gemm_table.at(Dtype::fp32)[0].efficiency, 0.75);
  EXPECT_DOUBLE_EQ(scaled.gemm_table.at(Dtype::fp32)[1].efficiency, 1.0);
  EXPECT_DOUBLE_EQ(scaled.memory_bandwidth, 3e9);
}

TEST(LayerFit, GemmsOnlyWhenKernelsWouldCostNegativeTime) {
  // Times = the GEMMs alone at half the table's rate: no room for kernel time; the scale takes it all.
  auto samples = passes(128, apply_layer_fit(cpu(0), Dtype::fp32, LayerFit{0.5, 0, false}));
  const LayerFit fit = fit_layer_passes(samples, cpu(0), Dtype::fp32, "memory_bandwidth");
  EXPECT_NEAR(fit.gemm_scale, 0.5, 1e-9);
  EXPECT_EQ(fit.bandwidth, 0);
}

TEST(LayerFit, NeedsBothKindsOfPass) {
  auto samples = passes(128, cpu(12e9));
  auto w_only = samples;
  w_only.erase(w_only.begin(), w_only.begin() + 2);
  EXPECT_THROW(fit_layer_passes(w_only, cpu(0), Dtype::fp32, "memory_bandwidth"), SpecError);
  samples.pop_back();  // F and B only
  EXPECT_THROW(fit_layer_passes(samples, cpu(0), Dtype::fp32, "memory_bandwidth"), SpecError);
}

}  // namespace
}  // namespace zeropp::calibrate
