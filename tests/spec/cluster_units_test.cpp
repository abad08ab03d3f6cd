// Cluster units and sources: the implausible-value warnings (cluster_warnings.hpp), memory in MiB, the fp8 peak,
// provenance, and today's machines in the zoo.
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cost_model/spec/cluster_warnings.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/names.hpp"
#include "tests/spec/captured_diagnostics.hpp"
#include "tests/spec/expect_spec_error.hpp"

namespace zeropp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Two nodes of 8 with plausible units: H100-like, memory as nvidia-smi reports it.
json plausible() {
  return {{"name", "c"},
          {"nodes", 2},
          {"gpus_per_node", 8},
          {"peak_tflops", {{"bf16", 989}}},
          {"memory_mib", 81559},
          {"intra", {{"bandwidth_GBps", 450}, {"latency_us", 3.4}}},
          {"inter", {{"bandwidth_GBps", 50}, {"latency_us", 14}}}};
}

TEST(ClusterWarnings, PlausibleValuesSayNothing) {
  EXPECT_TRUE(cluster_warnings(plausible()).empty());
  json j = plausible();
  j["intra"]["bandwidth_GBps"] = 900;  // NVLink 5 per direction, on a Blackwell-class GPU: the fastest, not above it
  j["peak_tflops"]["bf16"] = 2250;
  j["inter"]["bandwidth_GBps"] = 25;   // 200 Gb/s HDR
  j.erase("memory_mib");
  j["memory_gib"] = 79.6474609375;
  EXPECT_TRUE(cluster_warnings(j).empty());
}

TEST(ClusterWarnings, NvlinkAboveAnyShippingRate) {
  json j = plausible();
  j["intra"]["bandwidth_GBps"] = 1800;  // NVLink 5's 1.8 TB/s counts both directions
  EXPECT_EQ(cluster_warnings(j),
            std::vector<std::string>{"cluster.intra.bandwidth_GBps=1800 is above 900 GB/s, the fastest GPU link's rate "
                                     "per direction (NVLink 5): it looks bidirectional or in Gb/s (the key is GB/s per "
                                     "GPU per direction)"});
}

// NVLink 4 is sold as "900 GB/s" (both directions): on an H100-class GPU (bf16 peak 989) that is twice the
// per-direction rate the key wants; NVLink 3's "600 GB/s" likewise on an A100 (312). Issue 21, point 7.
TEST(ClusterWarnings, BidirectionalNvlinkFigureForItsGeneration) {
  json j = plausible();
  j["intra"]["bandwidth_GBps"] = 900;
  EXPECT_EQ(
      cluster_warnings(j),
      std::vector<std::string>{"cluster.intra.bandwidth_GBps=900 is NVLink 4 (H100, H200)'s bidirectional figure "
                               "for a GPU of 989 TFLOP/s bf16: the key is GB/s per GPU per direction, 450 there"});
  j["intra"]["bandwidth_GBps"] = 600;
  j["peak_tflops"]["bf16"] = 312;
  EXPECT_EQ(cluster_warnings(j).size(), 1u);
  j["intra"]["bandwidth_GBps"] = 300;  // A100's per-direction rate
  EXPECT_TRUE(cluster_warnings(j).empty());
}

TEST(ClusterWarnings, NicRateInGbps) {
  for (const double gbps : {100.0, 200.0, 400.0, 800.0}) {
    json j = plausible();
    j["inter"]["bandwidth_GBps"] = gbps;
    const auto w = cluster_warnings(j, "c");
    ASSERT_EQ(w.size(), 1u) << gbps;
    EXPECT_EQ(w[0], fmt::format("c.inter.bandwidth_GBps={:g} equals a NIC rate in Gb/s: it looks like Gb/s; {:g} "
                                "Gb/s = {:g} GB/s (the key is GB/s per GPU per direction)",
                                gbps, gbps, gbps / 8));
  }
}

TEST(ClusterWarnings, MemoryInMarketingGigabytes) {
  json j = plausible();
  j.erase("memory_mib");
  j["memory_gib"] = 80;
  EXPECT_EQ(cluster_warnings(j),
            std::vector<std::string>{"cluster.memory_gib=80 equals the marketing figure \"80 GB\": 80 GB of 1e9 bytes "
                                     "is 74.5 GiB, and GPUs report other sizes (H100 80GB: 79.65 GiB); give "
                                     "nvidia-smi's memory.total as memory_mib (H100 80GB: 81559)"});
  for (const double gb : {141.0, 180.0, 192.0}) {
    j["memory_gib"] = gb;
    EXPECT_EQ(cluster_warnings(j).size(), 1u) << gb;
  }
  // The same 80 GiB as nvidia-smi's MiB (the A100 80GB's 81920) is exact: no warning.
  j.erase("memory_gib");
  j["memory_mib"] = 81920;
  EXPECT_TRUE(cluster_warnings(j).empty());
}

TEST(ClusterWarnings, AllThreeAtOnce) {
  json j = plausible();
  j["intra"]["bandwidth_GBps"] = 7200;  // 900 GB/s written in Gb/s
  j["inter"]["bandwidth_GBps"] = 400;
  j.erase("memory_mib");
  j["memory_gib"] = 141;
  EXPECT_EQ(cluster_warnings(j).size(), 3u);
}

// The zoo is written in unambiguous units: loading every cluster says nothing.
TEST(ClusterWarnings, TheZooEmitsNone) {
  CapturedDiagnostics said;
  for (const auto& name : zoo_clusters()) load_cluster(name);
  EXPECT_EQ(said.lines(), std::vector<std::string>{});
}

TEST(ClusterWarnings, LoadingAFileWarnsNamingIt) {
  const fs::path path = fs::temp_directory_path() / ("zeropp-units-" + std::to_string(::getpid()) + ".json");
  json j = plausible();
  j["inter"]["bandwidth_GBps"] = 400;
  std::ofstream(path) << j.dump();
  CapturedDiagnostics said;
  const ClusterSpec c = load_cluster(path.string());
  fs::remove(path);
  EXPECT_EQ(c.inter.bandwidth, 400e9);  // a warning, not an error: the value is used as written
  ASSERT_EQ(said.lines().size(), 1u);
  EXPECT_EQ(said.lines()[0], "warning: " + path.string() +
                                 ": cluster.inter.bandwidth_GBps=400 equals a NIC rate in Gb/s: it looks like Gb/s; "
                                 "400 Gb/s = 50 GB/s (the key is GB/s per GPU per direction)");
}

TEST(ClusterMemory, MibOrGibNotBoth) {
  const ClusterSpec c = cluster_from_json(plausible());
  EXPECT_EQ(c.memory_bytes, 81559.0 * 1024 * 1024);
  json both = plausible();
  both["memory_gib"] = 79.6474609375;
  EXPECT_SPEC_ERROR(cluster_from_json(both), "cluster.memory_mib",
                    "cluster.memory_gib and cluster.memory_mib give the same size: give one");
  json zero = plausible();
  zero["memory_mib"] = 0;
  EXPECT_SPEC_ERROR(cluster_from_json(zero), "cluster.memory_mib", "cluster.memory_mib=0 must be > 0");
  json none = plausible();
  none.erase("memory_mib");
  EXPECT_SPEC_ERROR(cluster_from_json(none), "cluster.memory_gib", "cluster.memory_gib is required");
}

// A size that would warn as memory_gib is written back as memory_mib, so a profile `zeropp calibrate` writes from
// the A100 base reads back silently and exactly.
TEST(ClusterMemory, WrittenSoThatReadingBackDoesNotWarn) {
  json j = plausible();
  j["memory_mib"] = 81920;  // 80 GiB
  const ClusterSpec c = cluster_from_json(j);
  const json out = to_json(c);
  EXPECT_EQ(out.at("memory_mib"), 81920.0);
  EXPECT_FALSE(out.contains("memory_gib"));
  EXPECT_TRUE(cluster_warnings(out).empty());
  EXPECT_EQ(cluster_from_json(out), c);
  const json h100 = to_json(cluster_from_json(plausible()));
  EXPECT_EQ(h100.at("memory_gib"), 79.6474609375);
}

TEST(ClusterPeaks, Fp8IsListedNotATrainingDtype) {
  json j = plausible();
  j["peak_tflops"]["fp8"] = 1979;
  const ClusterSpec c = cluster_from_json(j);
  EXPECT_EQ(c.fp8_peak_flops, 1979e12);
  EXPECT_EQ(c.peak_flops.size(), 1u);  // bf16 only: fp8 is no Dtype
  EXPECT_EQ(cluster_from_json(to_json(c)), c);
  EXPECT_EQ(to_json(c).at("peak_tflops").at("fp8"), 1979.0);
  j["peak_tflops"] = {{"fp8", 1979}};  // a training dtype's peak is still required
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.peak_tflops",
                    "cluster.peak_tflops must give at least one of bf16, fp16, fp32");
  j["peak_tflops"] = {{"bf16", 989}, {"fp8", -1}};
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.peak_tflops.fp8",
                    "cluster.peak_tflops.fp8=-1 must be >= 0 (0 or absent: not stated)");
  EXPECT_THROW(dtype_from_string("fp8", "dtype"), SpecError);
}

TEST(ClusterProvenance, NominalUnlessStated) {
  EXPECT_EQ(cluster_from_json(plausible()).provenance, ClusterProvenance{});
  json j = plausible();
  j["provenance"] = {{"collectives", "published"}};
  const ClusterSpec c = cluster_from_json(j);
  EXPECT_EQ(c.provenance.collectives, Provenance::published);
  EXPECT_EQ(c.provenance.gemm, Provenance::nominal);
  EXPECT_EQ(to_json(c).at("provenance"), (json{{"gemm", "nominal"}, {"collectives", "published"}}));
  EXPECT_EQ(cluster_from_json(to_json(c)), c);
  j["provenance"] = {{"gemm", "guessed"}};
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.provenance.gemm",
                    "cluster.provenance.gemm=\"guessed\" must be one of nominal, published, calibrated, measured");
  j["provenance"] = {{"network", "published"}};
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.provenance.network",
                    "cluster.provenance.network: unknown key (allowed: gemm, collectives, base, entries)");
}

// Today's machines, with the figures their comments cite.
TEST(ClusterZoo, TodaysMachines) {
  const ClusterSpec h100 = load_cluster("dgx-h100");
  EXPECT_EQ(h100.provenance.collectives, Provenance::published);
  // Its GEMM rate (gpu.matmul_efficiency) measured on an H100: results/measured/h100-80gb-hbm3.
  EXPECT_EQ(h100.provenance.gemm, Provenance::measured);
  EXPECT_EQ(h100.fp8_peak_flops, 1979e12);
  EXPECT_EQ(load_cluster("dgx-h200").fp8_peak_flops, 1979e12);
  EXPECT_EQ(load_cluster("dgx-a100-80gb").memory_bytes, 80.0 * (1 << 30));  // 81920 MiB, as before
  const ClusterSpec b200 = load_cluster("dgx-b200");
  EXPECT_EQ(b200.gpus_per_node, 8);
  EXPECT_EQ(b200.peak(Dtype::bf16), 2250e12);
  EXPECT_EQ(b200.fp8_peak_flops, 4500e12);
  EXPECT_EQ(b200.memory_bytes, 183359.0 * (1 << 20));
  EXPECT_EQ(b200.intra.bandwidth, 900e9);
  EXPECT_EQ(b200.inter.bandwidth, 50e9);
  const ClusterSpec nvl72 = load_cluster("gb200-nvl72");
  EXPECT_EQ(nvl72.gpus_per_node, 72);  // the NVLink domain is the intra-node level
  EXPECT_EQ(nvl72.peak(Dtype::bf16), 2500e12);
  EXPECT_EQ(nvl72.fp8_peak_flops, 5000e12);
  EXPECT_EQ(nvl72.memory_bytes, 189471.0 * (1 << 20));
  EXPECT_EQ(nvl72.intra.bandwidth, 900e9);
  // GEMMs from the operation table's published MAMF; collectives on the nominal link rates.
  EXPECT_EQ(nvl72.provenance, (ClusterProvenance{Provenance::published, Provenance::nominal, {}, {}}));
  EXPECT_EQ(nvl72.gpu->matmul_efficiency.provenance, Provenance::published);
  const ClusterSpec cpu = load_cluster("local-cpu");
  EXPECT_EQ(cpu.provenance.collectives, Provenance::calibrated);
  EXPECT_EQ(cpu.provenance.gemm, Provenance::calibrated);
}

}  // namespace
}  // namespace zeropp
