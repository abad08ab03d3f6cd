// What `zeropp calibrate` says about the profile it writes (ClusterSpec::provenance): fitted parts are calibrated.
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cost_model/calibrate/calibrate.hpp"

namespace zeropp::calibrate {
namespace {

ClusterSpec published_base() {
  ClusterSpec c;
  c.name = "base";
  c.gpus_per_node = 2;
  c.peak_flops[Dtype::fp32] = 100e9;
  c.memory_bytes = 1e9;
  c.intra = {1e9, 1e-6};
  c.collectives["intra"]["all_reduce"] = {1e-6, 2e9};
  c.provenance = {.gemm = Provenance::nominal, .collectives = Provenance::published};
  return c;
}

// "<parts>/<size>" as zeropp-bench names runs; the size keeps each run's name apart.
BenchResult result(std::vector<std::string> parts, const std::string& size, double seconds,
                   std::map<std::string, double> counters) {
  BenchResult r;
  for (const auto& p : parts) r.name += p + "/";
  r.name += size;
  r.parts = std::move(parts);
  r.seconds = seconds;
  r.counters = std::move(counters);
  r.source = "synthetic";
  return r;
}

// send_recv at alpha 2 us, beta 5 GB/s; square fp32 GEMMs at 50 GFLOP/s (half the peak).
BenchResults collectives() {
  BenchResults out;
  for (double m = 1024; m <= (1 << 24); m *= 4)
    out.results.push_back(result({"send_recv", "mpi", "intra"}, "bytes:" + std::to_string(static_cast<long>(m)),
                                 2e-6 + m / 5e9, {{"bytes", m}, {"ranks", 2}}));
  return out;
}
BenchResults gemms() {
  BenchResults out;
  for (double f = 1e6; f <= 1e10; f *= 10)
    out.results.push_back(result({"gemm", "eigen", "fp32", "square"}, "flop:" + std::to_string(static_cast<long>(f)),
                                 f / 50e9, {{"flop", f}}));
  return out;
}

TEST(CalibrateProvenance, FittedPartsAreCalibrated) {
  const Calibration both = [] {
    BenchResults all = collectives();
    for (auto& r : gemms().results) all.results.push_back(r);
    return calibrate(all, published_base(), {.name = "x"});
  }();
  EXPECT_EQ(both.profile.provenance.collectives, Provenance::calibrated);
  EXPECT_EQ(both.profile.provenance.gemm, Provenance::calibrated);
  // Collectives only: the GEMM figures stay the base's.
  EXPECT_EQ(calibrate(collectives(), published_base(), {.name = "x"}).profile.provenance,
            (ClusterProvenance{.gemm = Provenance::nominal, .collectives = Provenance::calibrated}));
}

// GEMMs only: the base's published collective table is dropped, so the profile falls back to its link rates,
// which are nominal.
TEST(CalibrateProvenance, DroppedPublishedCollectivesFallBackToNominal) {
  const Calibration c = calibrate(gemms(), published_base(), {.name = "x"});
  EXPECT_TRUE(c.profile.collectives.empty());
  EXPECT_EQ(c.profile.provenance,
            (ClusterProvenance{.gemm = Provenance::calibrated, .collectives = Provenance::nominal}));
}

}  // namespace
}  // namespace zeropp::calibrate
