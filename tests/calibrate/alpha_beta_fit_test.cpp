// The alpha-beta fit recovers the latency and bandwidth that generated exact synthetic times.
#include <gtest/gtest.h>

#include "cost_model/calibrate/alpha_beta_fit.hpp"
#include "cost_model/spec/error.hpp"

namespace zeropp::calibrate {
namespace {

using analytic::Collective;

// Times written out by hand from DESIGN.md section 4, independent of the code under test.
double hand_time(Collective c, int n, double bytes, double alpha, double beta) {
  switch (c) {
    case Collective::all_reduce:
      return 2.0 * (n - 1) * (alpha + bytes / (n * beta));
    case Collective::all_gather:
    case Collective::reduce_scatter:
      return (n - 1) * (alpha + bytes / (n * beta));
    case Collective::send_recv:
      return alpha + bytes / beta;
  }
  return 0;
}

std::vector<CollectiveSample> synthetic(Collective c, std::vector<int> ranks, double alpha, double beta) {
  std::vector<CollectiveSample> samples;
  for (int n : ranks)
    for (double bytes = 1024; bytes <= 64.0 * (1 << 20); bytes *= 4)
      samples.push_back({bytes, n, hand_time(c, n, bytes, alpha, beta)});
  return samples;
}

TEST(AlphaBetaFit, RecoversKnownLatencyAndBandwidthForEveryCollective) {
  for (Collective c :
       {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter, Collective::send_recv}) {
    const auto fit = fit_alpha_beta(c, synthetic(c, {2}, 1.7e-6, 12.5e9), "test");
    EXPECT_NEAR(fit.fit.latency, 1.7e-6, 1.7e-6 * 1e-9) << analytic::collective_name(c);
    EXPECT_NEAR(fit.fit.bandwidth, 12.5e9, 12.5e9 * 1e-9) << analytic::collective_name(c);
    EXPECT_FALSE(fit.latency_clamped);
  }
}

TEST(AlphaBetaFit, RecoversOneAlphaBetaFromSeveralGroupSizes) {
  const auto fit =
      fit_alpha_beta(Collective::all_reduce, synthetic(Collective::all_reduce, {2, 4, 8}, 5e-6, 2e11), "test");
  EXPECT_NEAR(fit.fit.latency, 5e-6, 5e-6 * 1e-9);
  EXPECT_NEAR(fit.fit.bandwidth, 2e11, 2e11 * 1e-9);
}

TEST(AlphaBetaFit, PredictionMatchesTheHandFormula) {
  const CollectiveFit fit{3e-6, 4e9, {}, {}};
  const CollectiveSample s{1 << 20, 4, 0};
  EXPECT_NEAR(predict_seconds(Collective::all_gather, fit, s), 3 * (3e-6 + (1 << 20) / (4 * 4e9)), 1e-15);
}

TEST(AlphaBetaFit, NegativeLatencyIsClampedToAPureBandwidthLine) {
  // Times exactly proportional to size, minus a constant: the free fit would put alpha below zero.
  std::vector<CollectiveSample> samples;
  for (double bytes : {1e6, 2e6, 4e6}) samples.push_back({bytes, 2, bytes / 1e9 - 1e-5});
  const auto fit = fit_alpha_beta(Collective::send_recv, samples, "test");
  EXPECT_TRUE(fit.latency_clamped);
  EXPECT_EQ(fit.fit.latency, 0);
  // t/M lies in [0.99, 0.9975] ns per byte, so the slope through the origin does too.
  EXPECT_GT(fit.fit.bandwidth, 1e9 / 0.9975);
  EXPECT_LT(fit.fit.bandwidth, 1e9 / 0.99);
}

TEST(AlphaBetaFit, RejectsOneSizeNonPositiveValuesAndFlatTimes) {
  EXPECT_THROW(fit_alpha_beta(Collective::all_reduce, {{1024, 2, 1e-6}, {1024, 2, 1.1e-6}}, "f"), SpecError);
  EXPECT_THROW(fit_alpha_beta(Collective::all_reduce, {{1024, 2, 0}, {2048, 2, 1e-6}}, "f"), SpecError);
  EXPECT_THROW(fit_alpha_beta(Collective::all_reduce, {{1024, 1, 1e-6}, {2048, 1, 1e-6}}, "f"), SpecError);
  try {
    fit_alpha_beta(Collective::all_reduce, {{1024, 2, 2e-6}, {1 << 20, 2, 1e-6}}, "collectives.intra.all_reduce");
    FAIL() << "times that shrink with size must not fit";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "collectives.intra.all_reduce");
  }
}

}  // namespace
}  // namespace zeropp::calibrate
