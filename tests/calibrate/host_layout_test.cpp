// Multi-host collective runs mapped to the model's link levels by what the ring crossed (calibrate/host_layout.hpp,
// docs/multi-node.md): one GPU per host as measured, r > 1 per host derived per GPU (busbw / r), ambiguous layouts
// refused with the run to make.
#include <gtest/gtest.h>

#include <string>

#include "cost_model/calibrate/calibrate.hpp"
#include "cost_model/calibrate/host_layout.hpp"
#include "cost_model/calibrate/results_file.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"
#include "cost_model/spec/provenance.hpp"
#include "zeropp/source_dir.hpp"

namespace zeropp::calibrate {
namespace {

std::string data(const std::string& name) { return std::string(ZEROPP_SOURCE_DIR) + "/tests/data/nccl-tests/" + name; }

// The message of the SpecError `f` throws, or "(no error)".
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no error)";
}

Calibration calibrate_files(std::initializer_list<const char*> files) {
  BenchResults all;
  for (const char* f : files) all.append(load_results(data(f), {}));
  return calibrate(all, load_cluster("dgx-h100"), {});
}

TEST(HostLayout, OneRankPerHostIsTheInterLevelAsMeasured) {
  const InterMapping m = map_inter_run("inter/all_reduce", "f", "a.txt", {4, 1, true}, 45e9, 480e9, 50e9);
  EXPECT_EQ(m.divisor, 1);
  EXPECT_TRUE(m.keep_table);
  EXPECT_TRUE(m.note.empty());
  // Results that do not say (Google Benchmark JSON of another program), or --link inter on one host: as measured.
  EXPECT_EQ(map_inter_run("x", "f", "a", {1, 1, false}, 300e9, 480e9, 50e9).divisor, 1);
  EXPECT_EQ(map_inter_run("x", "f", "a", {1, 8, true}, 300e9, 480e9, 50e9).divisor, 1);
}

TEST(HostLayout, SeveralRanksPerHostArePerGpuDerived) {
  const InterMapping m = map_inter_run("inter/all_reduce", "f", "a.txt", {2, 8, true}, 346.7e9, 480e9, 50e9);
  EXPECT_EQ(m.divisor, 8);
  EXPECT_FALSE(m.keep_table);
  EXPECT_NE(m.note.find("43.34 GB/s per GPU"), std::string::npos) << m.note;
}

TEST(HostLayout, AmbiguousLayoutsSayWhichRunToMake) {
  // Hosts with different rank counts.
  EXPECT_NE(error_of([] {
              map_inter_run("inter/all_reduce", "f", "a.txt", {2, 0, true}, 300e9, 480e9, 50e9);
            }).find("different numbers of ranks"),
            std::string::npos);
  // busbw near the NVLink figure: NVLink may bound the ring.
  const std::string near = error_of([] {
    map_inter_run("inter/all_reduce", "f", "a.txt", {2, 8, true}, 440e9, 480e9, 50e9);
  });
  EXPECT_NE(near.find("NVLink may bound it"), std::string::npos) << near;
  EXPECT_NE(near.find("one GPU per node"), std::string::npos) << near;
  // busbw / r above the NIC: a tree or SHARP all-reduce, or shared NICs.
  const std::string nic = error_of([] {
    map_inter_run("inter/all_reduce", "f", "a.txt", {2, 4, true}, 400e9, 480e9, 50e9);
  });
  EXPECT_NE(nic.find("above the profile's NIC rate"), std::string::npos) << nic;
}

// The usual cluster-team run, 2 hosts x 8 H100 at busbw 346.7 GB/s: the inter entry holds 346.7 / 8 per GPU (not
// 346.7, 7x the network), its latency as measured, no table; the entry's provenance says it was derived.
TEST(HostLayout, TwoHostsOfEightCalibrateThePerGpuNetwork) {
  const Calibration c = calibrate_files({"all_reduce_2hosts_8gpu.txt"});
  const CollectiveFit& fit = c.profile.collectives.at("inter").at("all_reduce");
  EXPECT_NEAR(fit.bandwidth / 1e9, 346.7 / 8, 0.01 * 346.7 / 8);
  EXPECT_NEAR(fit.latency * 1e6, 8.0, 0.1);
  EXPECT_TRUE(fit.table.empty());
  const std::string source = c.profile.provenance.entries.at("collectives.inter.all_reduce").source;
  EXPECT_NE(source.find("derived: busbw / 8 GPUs per host"), std::string::npos) << source;
  bool noted = false;
  for (const auto& n : c.notes)
    noted = noted || n.find("derived from a ring over 2 hosts of 8 GPUs") != std::string::npos;
  EXPECT_TRUE(noted);
  // The other inter entries keep the base's (published 47 GB/s).
  EXPECT_EQ(c.profile.collectives.at("inter").at("all_gather").bandwidth, 47e9);
}

TEST(HostLayout, OneGpuPerHostIsTakenAsMeasured) {
  const Calibration c = calibrate_files({"all_reduce_4hosts_1gpu.txt"});
  const CollectiveFit& fit = c.profile.collectives.at("inter").at("all_reduce");
  EXPECT_NEAR(fit.bandwidth / 1e9, 45, 0.45);
  EXPECT_EQ(fit.table_ranks, 4);
}

TEST(HostLayout, UnevenHostsAreRefused) {
  const std::string e = error_of([] { calibrate_files({"all_reduce_uneven_hosts.txt"}); });
  EXPECT_NE(e.find("all_reduce_uneven_hosts.txt"), std::string::npos) << e;
  EXPECT_NE(e.find("run it with one GPU per node"), std::string::npos) << e;
}

TEST(HostLayout, MixedLayoutsInOneFitAreRefused) {
  const std::string e = error_of([] { calibrate_files({"all_reduce_2hosts_8gpu.txt", "all_reduce_4hosts_1gpu.txt"}); });
  EXPECT_NE(e.find("mixes runs over different hosts"), std::string::npos) << e;
}

}  // namespace
}  // namespace zeropp::calibrate
