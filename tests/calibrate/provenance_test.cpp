// What `zeropp calibrate` says about the profile it writes (ClusterSpec::provenance): what was measured replaces its
// entry and is calibrated; every other entry keeps the base's value and provenance.
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cost_model/calibrate/calibrate.hpp"
#include "cost_model/calibrate/results_file.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/provenance.hpp"
#include "zeropp/source_dir.hpp"

namespace zeropp::calibrate {
namespace {

ClusterSpec published_base() {
  ClusterSpec c;
  c.name = "base";
  c.gpus_per_node = 2;
  c.peak_flops[Dtype::fp32] = 100e9;
  c.memory_bytes = 1e9;
  c.intra = {1e9, 1e-6};
  c.collectives["intra"]["all_reduce"] = {1e-6, 2e9, {}, {}};
  c.provenance = {.gemm = Provenance::nominal, .collectives = Provenance::published, .entries = {}, .base = {}};
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

TEST(CalibrateProvenance, MeasuredEntriesAreCalibratedTheRestKeepTheBase) {
  const Calibration both = [] {
    BenchResults all = collectives();
    for (auto& r : gemms().results) all.results.push_back(r);
    return calibrate(all, published_base(), {.name = "x"});
  }();
  const ClusterSpec& p = both.profile;
  EXPECT_EQ(p.provenance.base, "base");
  EXPECT_EQ(provenance_of(p, "collectives.intra.send_recv"), Provenance::calibrated);
  EXPECT_EQ(provenance_of(p, "intra"), Provenance::calibrated);  // the send_recv line is the bare link
  EXPECT_EQ(provenance_of(p, "gemm_table.fp32"), Provenance::calibrated);
  EXPECT_EQ(p.provenance.entries.at("gemm_table.fp32").source, "synthetic");
  // Not measured: the base's published all_reduce fit, value and provenance.
  EXPECT_EQ(p.collectives.at("intra").at("all_reduce"), published_base().collectives.at("intra").at("all_reduce"));
  EXPECT_EQ(provenance_of(p, "collectives.intra.all_reduce"), Provenance::published);
  EXPECT_EQ(provenance_text(p, "collectives.intra.all_reduce"), "published (base base)");
  // The group defaults stay the base's: they describe the entries not listed.
  EXPECT_EQ(p.provenance.gemm, Provenance::nominal);
  EXPECT_EQ(p.provenance.collectives, Provenance::published);
  EXPECT_EQ(provenance_summary(p, "collectives"), "calibrated+published");
}

// GEMMs only: the base's published collective table stays, with its provenance (it was dropped before, which fell
// back to the nominal link rates: measuring GEMMs changed the collectives).
TEST(CalibrateProvenance, GemmsOnlyKeepThePublishedCollectives) {
  const Calibration c = calibrate(gemms(), published_base(), {.name = "x"});
  EXPECT_EQ(c.profile.collectives, published_base().collectives);
  EXPECT_EQ(c.profile.intra, published_base().intra);
  EXPECT_EQ(provenance_of(c.profile, "collectives.intra.all_reduce"), Provenance::published);
  EXPECT_EQ(provenance_of(c.profile, "gemm_table.fp32"), Provenance::calibrated);
  // The fp32 table is this dtype's; gemm_efficiency, which other dtypes use, stays the base's.
  EXPECT_EQ(c.profile.gemm_efficiency, published_base().gemm_efficiency);
}

// Issue 21's case: calibrating intra all_reduce alone from an 8-GPU file leaves the H100 profile's published intra
// all_gather 350 / reduce_scatter 360 and inter 47 GB/s as they were.
TEST(CalibrateProvenance, OneCollectiveLeavesTheOthers) {
  const ClusterSpec base = load_cluster("dgx-h100");
  BenchResults all;
  all.append(load_results(std::string(ZEROPP_SOURCE_DIR) + "/tests/data/nccl-tests/all_reduce_8gpu.txt", {}));
  const Calibration c = calibrate(all, base, {});
  for (const char* name : {"all_gather", "reduce_scatter"})
    EXPECT_EQ(c.profile.collectives.at("intra").at(name), base.collectives.at("intra").at(name)) << name;
  EXPECT_EQ(c.profile.collectives.at("inter"), base.collectives.at("inter"));
  EXPECT_NEAR(c.profile.collectives.at("intra").at("all_reduce").bandwidth / 1e9, 360, 3.6);
  EXPECT_EQ(provenance_text(c.profile, "collectives.intra.all_reduce"), "calibrated (all_reduce_8gpu.txt)");
  EXPECT_EQ(provenance_text(c.profile, "collectives.intra.all_gather"), "published (base dgx-h100)");
  // The entries survive the profile's JSON.
  const ClusterSpec back = cluster_from_json(to_json(c.profile));
  EXPECT_EQ(back.provenance, c.profile.provenance);
}

TEST(Provenance, NominalProfilesAreNamed) {
  EXPECT_EQ(nominal_warning(load_cluster("dgx-h100"), Dtype::bf16), "");
  // H200's operation table and collectives are published (issue 19): not nominal. B200's collectives are nominal.
  EXPECT_EQ(nominal_warning(load_cluster("dgx-h200"), Dtype::bf16), "");
  const std::string b200 = nominal_warning(load_cluster("dgx-b200"), Dtype::bf16);
  EXPECT_NE(b200.find("cluster \"dgx-b200\" is NOMINAL: its inter and intra collectives"), std::string::npos) << b200;
  // A profile whose GEMM figures are nominal says so.
  ClusterSpec guessed = load_cluster("dgx-h200");
  guessed.provenance.gemm = Provenance::nominal;
  const std::string h200 = nominal_warning(guessed, Dtype::bf16);
  EXPECT_NE(h200.find("cluster \"dgx-h200\" is NOMINAL"), std::string::npos) << h200;
  EXPECT_NE(h200.find("gemm_efficiency"), std::string::npos) << h200;
  // A calibrated GEMM table is not nominal.
  ClusterSpec measured = load_cluster("dgx-h200");
  measured.gemm_table[Dtype::bf16] = {{1e9, 0.7}};
  measured.provenance.entries["gemm_table.bf16"] = {Provenance::calibrated, "gemm.json"};
  EXPECT_EQ(nominal_warning(measured, Dtype::bf16).find("GEMM"), std::string::npos);
}

}  // namespace
}  // namespace zeropp::calibrate
