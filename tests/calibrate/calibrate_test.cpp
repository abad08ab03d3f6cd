// calibrate(): from synthetic benchmark results to a profile, with the held-out error computed by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "cost_model/calibrate/calibrate.hpp"
#include "cost_model/calibrate/optimizer_fit.hpp"
#include "cost_model/spec/error.hpp"

namespace zeropp::calibrate {
namespace {

ClusterSpec base_cluster() {
  ClusterSpec c;
  c.name = "base";
  c.nodes = 1;
  c.gpus_per_node = 2;
  c.peak_flops[Dtype::fp32] = 100e9;
  c.memory_bytes = 1e9;
  c.intra = {1e9, 1e-6};
  return c;
}

BenchResult collective(const std::string& op, double bytes, double seconds) {
  BenchResult r;
  r.name = op + "/mpi/intra/bytes:" + std::to_string(static_cast<long>(bytes));
  r.parts = {op, "mpi", "intra"};
  r.seconds = seconds;
  r.counters = {{"bytes", bytes}, {"ranks", 2}};
  r.source = "synthetic";
  return r;
}

BenchResult gemm(double flop, double seconds) {
  BenchResult r;
  r.name = "gemm/eigen/fp32/square/flop:" + std::to_string(static_cast<long>(flop));
  r.parts = {"gemm", "eigen", "fp32", "square"};
  r.seconds = seconds;
  r.counters = {{"flop", flop}};
  r.source = "synthetic";
  return r;
}

TEST(HeldOutMask, EveryThirdFromTheSecondNeverTheEnds) {
  EXPECT_EQ(held_out_mask(7), (std::vector<bool>{false, true, false, false, true, false, false}));
  EXPECT_EQ(held_out_mask(5), (std::vector<bool>{false, true, false, false, false}));
  EXPECT_EQ(held_out_mask(2), (std::vector<bool>{false, false}));
}

TEST(Calibrate, ExactAlphaBetaDataGivesTheProfileAndNoHeldOutError) {
  // send_recv with alpha 2 us and beta 5 GB/s; all_reduce on 2 ranks with alpha 1 us and busbw 4 GB/s:
  // t = 2 * (1e-6 + M / (2 * 4e9)).
  BenchResults results;
  for (double m = 1024; m <= (1 << 24); m *= 4) {
    results.results.push_back(collective("send_recv", m, 2e-6 + m / 5e9));
    results.results.push_back(collective("all_reduce", m, 2 * (1e-6 + m / 8e9)));
  }
  const Calibration c = calibrate(results, base_cluster(), {.name = "local"});
  EXPECT_EQ(c.profile.name, "local");
  const auto& fits = c.profile.collectives.at("intra");
  EXPECT_NEAR(fits.at("send_recv").latency, 2e-6, 1e-15 * 1e3);
  EXPECT_NEAR(fits.at("send_recv").bandwidth, 5e9, 5e9 * 1e-9);
  EXPECT_NEAR(fits.at("all_reduce").latency, 1e-6, 1e-15 * 1e3);
  EXPECT_NEAR(fits.at("all_reduce").bandwidth, 4e9, 4e9 * 1e-9);
  // The bare intra link is the send_recv fit.
  EXPECT_NEAR(c.profile.intra.latency, 2e-6, 1e-15 * 1e3);
  EXPECT_NEAR(c.profile.intra.bandwidth, 5e9, 5e9 * 1e-9);
  ASSERT_EQ(c.fits.size(), 2u);
  for (const auto& f : c.fits) {
    EXPECT_EQ(f.points, 8u);    // 2^10 .. 2^24 bytes in steps of 4
    EXPECT_EQ(f.held_out, 2u);  // indices 1 and 4 of 8
    EXPECT_LT(f.held_out_max_error, 1e-9);
    EXPECT_LT(f.fit_rms_error, 1e-9);
  }
  EXPECT_LT(c.worst_held_out_error(), 1e-9);
}

TEST(Calibrate, AHeldOutPointOffByTenPercentScoresOneElevenths) {
  // Exact data except the held-out second size, measured 10% slow: the fit without it predicts the exact time,
  // so the error is |t - 1.1 t| / (1.1 t) = 1/11.
  BenchResults results;
  int i = 0;
  for (double m = 1024; m <= (1 << 24); m *= 4, ++i) {
    const double exact = 2e-6 + m / 5e9;
    results.results.push_back(collective("send_recv", m, i == 1 ? 1.1 * exact : exact));
  }
  const Calibration c = calibrate(results, base_cluster(), {.name = "local"});
  ASSERT_EQ(c.held_out.size(), 2u);
  EXPECT_NEAR(c.held_out[0].error(), 1.0 / 11.0, 1e-9);
  EXPECT_NEAR(c.held_out[1].error(), 0.0, 1e-9);
  EXPECT_NEAR(c.fits[0].held_out_max_error, 1.0 / 11.0, 1e-9);
  EXPECT_NEAR(c.fits[0].held_out_mean_error, 1.0 / 22.0, 1e-9);
}

TEST(Calibrate, GemmTableInterpolatesHeldOutSizesInLogFlops) {
  // Efficiency 0.2 at 1e6 FLOP rising by 0.1 per factor 4: e(f) = 0.2 + 0.1 * log4(f / 1e6), exactly what
  // piecewise-linear interpolation in log FLOPs reproduces, so the held-out sizes are predicted exactly.
  BenchResults results;
  for (int k = 0; k < 6; ++k) {
    const double flop = 1e6 * std::pow(4.0, k);
    results.results.push_back(gemm(flop, flop / (100e9 * (0.2 + 0.1 * k))));
  }
  const Calibration c = calibrate(results, base_cluster(), {.name = "local"});
  const auto& table = c.profile.gemm_table.at(Dtype::fp32);
  ASSERT_EQ(table.size(), 6u);
  EXPECT_NEAR(table.front().efficiency, 0.2, 1e-12);
  EXPECT_NEAR(table.back().efficiency, 0.7, 1e-12);
  // The table is the fp32 GEMMs' entry; gemm_efficiency, which the other dtypes use, stays the base's.
  EXPECT_EQ(c.profile.gemm_efficiency, base_cluster().gemm_efficiency);
  ASSERT_EQ(c.held_out.size(), 2u);  // indices 1 and 4
  for (const auto& p : c.held_out) EXPECT_LT(p.error(), 1e-9) << p.label;
}

TEST(Calibrate, CollectiveSizesOutsideTheRangeAreLeftOut) {
  // A slow large size that would bend the line is outside [0, 1 MiB] and does not count.
  BenchResults results;
  for (double m = 1024; m <= (1 << 20); m *= 4) results.results.push_back(collective("send_recv", m, 2e-6 + m / 5e9));
  results.results.push_back(collective("send_recv", 1 << 26, 10 * (2e-6 + (1 << 26) / 5e9)));
  const Calibration c = calibrate(results, base_cluster(), {.name = "x", .min_bytes = 0, .max_bytes = 1 << 20});
  EXPECT_EQ(c.fits.at(0).points, 6u);
  EXPECT_NEAR(c.profile.collectives.at("intra").at("send_recv").bandwidth, 5e9, 5e9 * 1e-9);
}

BenchResult layer_gemm(const std::string& shape, long h, double flop, double seconds) {
  BenchResult r = gemm(flop, seconds);
  r.name = "gemm/eigen/fp32/" + shape + "/h:" + std::to_string(h) + "/tokens:64";
  r.parts = {"gemm", "eigen", "fp32", shape};
  r.args = {{"h", std::to_string(h)}, {"tokens", "64"}};
  return r;
}

TEST(Calibrate, GemmSizesAreHeldOutWholeAndScoredPerPass) {
  // Three layer sizes (h = 1, 2, 3 in units of 1e6 FLOP per GEMM), two GEMMs per pass, 50% efficiency
  // everywhere except the middle (held-out) size's F GEMMs: one at 50%, one at 25%, so that pass takes
  // 1.5x the predicted time: error |t - 1.5t| / 1.5t = 1/3. Its B pass is exact.
  BenchResults results;
  for (long h : {1, 2, 3}) {
    const double flop = 1e7 * std::pow(4.0, static_cast<double>(h));  // distinct bins per size
    const double t = flop / (0.5 * 100e9);
    results.results.push_back(layer_gemm("qkv_F", h, flop, t));
    results.results.push_back(layer_gemm("mlp_up_F", h, flop, h == 2 ? 2 * t : t));
    results.results.push_back(layer_gemm("qkv_B", h, flop, t));
    results.results.push_back(layer_gemm("mlp_up_B", h, flop, t));
  }
  const Calibration c = calibrate(results, base_cluster(), {.name = "x"});
  ASSERT_EQ(c.held_out.size(), 2u);
  EXPECT_EQ(c.held_out[0].label, "h:2/tokens:64 B");
  EXPECT_NEAR(c.held_out[0].error(), 0.0, 1e-12);
  EXPECT_EQ(c.held_out[1].label, "h:2/tokens:64 F");
  EXPECT_NEAR(c.held_out[1].error(), 1.0 / 3.0, 1e-12);
}

BenchResult optimizer(double params, double seconds) {
  BenchResult r;
  r.name = "optimizer/trainer/fp32/params:" + std::to_string(static_cast<long>(params));
  r.parts = {"optimizer", "trainer", "fp32"};
  r.args = {{"params", std::to_string(static_cast<long>(params))}};
  r.seconds = seconds;
  r.counters = {{"params", params}};
  r.source = "synthetic";
  return r;
}

TEST(Calibrate, OptimizerRateFromTheStepTimes) {
  // 10 ns per parameter at every size: rate 1e8 params/s, held-out size 2^22 (index 1 of 4) exact.
  BenchResults results;
  for (double p = 1 << 20; p <= (1 << 26); p *= 4) results.results.push_back(optimizer(p, p * 10e-9));
  const Calibration c = calibrate(results, base_cluster(), {.name = "local"});
  EXPECT_NEAR(c.profile.optimizer_rate, 1e8, 1e-3);
  ASSERT_EQ(c.held_out.size(), 1u);
  EXPECT_EQ(c.held_out[0].label, "optimizer/trainer/fp32/params:4194304");
  EXPECT_NEAR(c.held_out[0].error(), 0, 1e-12);
  ASSERT_EQ(c.fits.size(), 1u);
  EXPECT_EQ(c.fits[0].what, "optimizer");
}

TEST(Calibrate, OptimizerRateMinimisesTheRelativeError) {
  // One size measured at 1 and at 2 ns per parameter. With x ns per parameter predicted, the squared relative
  // errors (x/1 - 1)^2 + (x/2 - 1)^2 are smallest at x = 1.2 (derivative 2(x - 1) + (x/2 - 1) = 0): rate 1e9/1.2.
  EXPECT_NEAR(fit_optimizer_rate({{1e6, 1e-3}, {1e6, 2e-3}}, "f"), 1e9 / 1.2, 1e-3);
  EXPECT_THROW(fit_optimizer_rate({}, "f"), SpecError);
  EXPECT_THROW(fit_optimizer_rate({{1e6, 0}}, "f"), SpecError);
}

TEST(Calibrate, AGemmAboveTheGpuPeakIsAnErrorNamingThePeak) {
  BenchResults results;
  results.results.push_back(gemm(1e6, 1e-5));  // 100 GFLOP/s: at the 100 GFLOP/s peak, accepted
  results.results.push_back(gemm(4e6, 2e-5));  // 200 GFLOP/s
  try {
    calibrate(results, base_cluster(), {.name = "x"});
    FAIL() << "200 GFLOP/s against a 100 GFLOP/s GPU peak must be rejected";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "cluster.peak_tflops.fp32");
  }
}

TEST(Calibrate, AGemmAboveTheCpuPeakRaisesItWithAWarning) {
  ClusterSpec cpu = base_cluster();
  cpu.device = Device::cpu;
  BenchResults results;
  results.results.push_back(gemm(1e6, 2e-5));  // 50 GFLOP/s
  results.results.push_back(gemm(4e6, 2e-5));  // 200 GFLOP/s: the new peak
  const Calibration c = calibrate(results, cpu, {.name = "x"});
  EXPECT_DOUBLE_EQ(c.profile.peak(Dtype::fp32), 200e9);
  const auto& table = c.profile.gemm_table.at(Dtype::fp32);
  ASSERT_EQ(table.size(), 2u);
  EXPECT_NEAR(table[0].efficiency, 0.25, 1e-12);
  EXPECT_DOUBLE_EQ(table[1].efficiency, 1.0);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0], "cluster.peak_tflops.fp32 raised from 0.1 to 0.2 TFLOP/s: " + results.results[1].name +
                               " ran faster than the stated peak of this CPU profile");

  // Below the peak a CPU profile keeps its peak and warns of nothing.
  results.results.pop_back();
  const Calibration below = calibrate(results, cpu, {.name = "x"});
  EXPECT_DOUBLE_EQ(below.profile.peak(Dtype::fp32), 100e9);
  EXPECT_TRUE(below.warnings.empty());
}

TEST(Calibrate, MissingPeakOrCountersOrNothingToFitAreErrors) {
  BenchResults gemms;
  gemms.results.push_back(gemm(1e6, 1e-4));
  gemms.results.push_back(gemm(4e6, 4e-4));
  ClusterSpec bf16_only = base_cluster();
  bf16_only.peak_flops = {{Dtype::bf16, 1e12}};
  EXPECT_THROW(calibrate(gemms, bf16_only, {.name = "x"}), SpecError);

  BenchResults no_bytes;
  no_bytes.results.push_back(collective("all_gather", 1024, 1e-6));
  no_bytes.results.back().counters.erase("bytes");
  EXPECT_THROW(calibrate(no_bytes, base_cluster(), {.name = "x"}), SpecError);

  BenchResults bad_level;
  bad_level.results.push_back(collective("all_gather", 1024, 1e-6));
  bad_level.results.back().parts[2] = "rack";
  EXPECT_THROW(calibrate(bad_level, base_cluster(), {.name = "x"}), SpecError);

  EXPECT_THROW(calibrate(BenchResults{}, base_cluster(), {.name = "x"}), SpecError);
}

// A result that cannot be a measurement is refused naming the file and the benchmark, never dropped in silence
// (bytes: -4 fell below --min-bytes and vanished from the fit).
TEST(Calibrate, ImpossibleCountersAndArgumentsAreErrors) {
  const auto error_of = [](BenchResult r) -> std::pair<std::string, std::string> {
    BenchResults results;
    results.results.push_back(std::move(r));
    try {
      calibrate(results, base_cluster(), {.name = "x"});
    } catch (const SpecError& e) {
      return {e.field(), e.what()};
    }
    return {"", "(no error)"};
  };
  BenchResult negative = collective("all_gather", 1024, 1e-6);
  negative.counters["bytes"] = -4;
  EXPECT_EQ(error_of(negative),
            std::make_pair(std::string("synthetic:all_gather/mpi/intra/bytes:1024.bytes"),
                           std::string("synthetic:all_gather/mpi/intra/bytes:1024: the counter bytes=-4 must be a "
                                       "finite number in (0, 1e+18]")));
  BenchResult nan_ranks = collective("all_gather", 1024, 1e-6);
  nan_ranks.counters["ranks"] = std::nan("");
  EXPECT_EQ(error_of(nan_ranks).first, "synthetic:all_gather/mpi/intra/bytes:1024.ranks");
  BenchResult no_flop = gemm(1e6, 1e-4);
  no_flop.counters["flop"] = 0;
  EXPECT_EQ(error_of(no_flop).first, "synthetic:gemm/eigen/fp32/square/flop:1000000.flop");
  BenchResult params = optimizer(1e6, 1e-3);
  params.args["params"] = "nan";
  EXPECT_EQ(error_of(params).second, "synthetic:" + params.name + ": params:nan must be a finite number in (0, 1e+15]");
}

}  // namespace
}  // namespace zeropp::calibrate
