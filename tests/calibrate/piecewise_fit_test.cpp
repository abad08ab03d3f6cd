// Piecewise alpha-beta: recovers the two lines that generated exact synthetic times, keeps one line when one
// fits, and the time model (analytic::collective_time) picks each size's segment.
#include <gtest/gtest.h>

#include <cmath>

#include "cost_model/calibrate/piecewise_fit.hpp"

namespace zeropp::calibrate {
namespace {

using analytic::Collective;

// send_recv by hand (DESIGN.md section 4): alpha + M / beta.
double p2p(double bytes, double alpha, double beta) { return alpha + bytes / beta; }

// 1 KiB .. 64 MiB in steps of 2: below 512 KiB a fast line, above it a slow one (MPI shared memory's shape).
std::vector<CollectiveSample> two_regimes() {
  std::vector<CollectiveSample> s;
  for (double bytes = 1024; bytes <= 64.0 * (1 << 20); bytes *= 2) {
    const double t = bytes <= 512.0 * 1024 ? p2p(bytes, 2e-6, 10e9) : p2p(bytes, 50e-6, 3e9);
    s.push_back({bytes, 2, t});
  }
  return s;
}

TEST(PiecewiseFit, RecoversTwoSizeRegimes) {
  const auto samples = two_regimes();
  const CollectiveFit fit = fit_piecewise(Collective::send_recv, samples, "test");
  ASSERT_EQ(fit.segments.size(), 2u);
  EXPECT_NEAR(fit.segments[0].latency, 2e-6, 2e-6 * 1e-6);
  EXPECT_NEAR(fit.segments[0].bandwidth, 10e9, 10e9 * 1e-6);
  EXPECT_NEAR(fit.segments[1].latency, 50e-6, 50e-6 * 1e-6);
  EXPECT_NEAR(fit.segments[1].bandwidth, 3e9, 3e9 * 1e-6);
  // The cut lies between 512 KiB and 1 MiB (their geometric mean); the last segment ends at the largest size.
  EXPECT_NEAR(fit.segments[0].max_bytes, std::sqrt(512.0 * 1024 * 1024 * 1024), 1.0);
  EXPECT_EQ(fit.segments[1].max_bytes, 64.0 * (1 << 20));
  for (const auto& s : samples)
    EXPECT_NEAR(predict_piecewise(Collective::send_recv, fit, s), s.seconds, s.seconds * 1e-6);
  // Above the last segment the last line extrapolates.
  EXPECT_NEAR(predict_piecewise(Collective::send_recv, fit, {256.0 * (1 << 20), 2, 0}),
              p2p(256.0 * (1 << 20), 50e-6, 3e9), 1e-9);
}

TEST(PiecewiseFit, OneLineWhenOneLineFits) {
  std::vector<CollectiveSample> s;
  for (double bytes = 1024; bytes <= 1 << 24; bytes *= 2) s.push_back({bytes, 2, 2.0 * (1.5e-6 + bytes / (2 * 8e9))});
  const CollectiveFit fit = fit_piecewise(Collective::all_reduce, s, "test");
  EXPECT_TRUE(fit.segments.empty());
  EXPECT_NEAR(fit.latency, 1.5e-6, 1e-12);
  EXPECT_NEAR(fit.bandwidth, 8e9, 8e9 * 1e-9);
}

TEST(PiecewiseFit, TooFewSizesToCutKeepsTheLine) {
  auto s = two_regimes();
  s.resize(5);  // 1..16 KiB plus nothing slow: a line fits; and 5 < 2 * min_points cannot be cut anyway
  s.back().seconds *= 1.5;
  const CollectiveFit fit = fit_piecewise(Collective::send_recv, s, "test");
  EXPECT_TRUE(fit.segments.empty());
}

}  // namespace
}  // namespace zeropp::calibrate
