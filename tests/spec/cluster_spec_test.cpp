#include <cmath>
#include <random>
#include <utility>

#include <limits>

#include <gtest/gtest.h>

#include "cost_model/spec/config.hpp"
#include "cost_model/spec/limits.hpp"
#include "cost_model/spec/units.hpp"
#include "tests/spec/expect_spec_error.hpp"

namespace zeropp {
namespace {

using nlohmann::json;

json small_cluster() {
  return {{"name", "c"},
          {"nodes", 4},
          {"gpus_per_node", 8},
          {"peak_tflops", {{"bf16", 312}, {"fp32", 19.5}}},
          {"memory_gib", 80},
          {"intra", {{"bandwidth_GBps", 300}, {"latency_us", 3.4}}},
          {"inter", {{"bandwidth_GBps", 25}, {"latency_us", 14}}}};
}

TEST(ClusterSpec, ConvertsJsonUnitsToSi) {
  const ClusterSpec c = cluster_from_json(small_cluster());
  EXPECT_EQ(c.world(), 32);
  EXPECT_EQ(c.peak(Dtype::bf16), 312e12);
  EXPECT_EQ(c.peak(Dtype::fp32), 19.5e12);
  EXPECT_EQ(c.memory_bytes, 80.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(c.intra.bandwidth, 300e9);
  EXPECT_EQ(c.intra.latency, 3.4e-6);
  EXPECT_EQ(c.inter.bandwidth, 25e9);
  EXPECT_EQ(c.inter.latency, 14e-6);
  EXPECT_EQ(c.gemm_efficiency, ClusterSpec{}.gemm_efficiency);  // absent: the documented default
  EXPECT_EQ(c.flash_attention_efficiency.forward, 0.6);         // absent: the documented defaults
  EXPECT_EQ(c.flash_attention_efficiency.backward, 0.5);
  EXPECT_EQ(c.memory_bandwidth, 0);  // absent: unknown
}

TEST(ClusterSpec, MissingPeakNamesTheField) {
  const ClusterSpec c = cluster_from_json(small_cluster());
  EXPECT_SPEC_ERROR(c.peak(Dtype::fp16), "cluster.peak_tflops.fp16",
                    "cluster.peak_tflops.fp16 is not given for cluster \"c\"");
}

json calibrated_cluster() {
  json j = small_cluster();
  j["gemm_efficiency"] = 0.8;
  j["flash_attention_efficiency"] = {{"forward", 0.7}, {"backward", 0.45}};
  j["memory_bandwidth_GBps"] = 2039;
  j["collectives"] = {{"intra",
                       {{"all_reduce", {{"latency_us", 11.25}, {"bandwidth_GBps", 231.7}}},
                        {"send_recv", {{"latency_us", 4.5}, {"bandwidth_GBps", 150}}}}},
                      {"inter", {{"all_gather", {{"latency_us", 30}, {"bandwidth_GBps", 46.3}}}}}};
  j["gemm_table"] = {{"bf16", {{{"flops", 1e9}, {"efficiency", 0.31}}, {{"flops", 1e12}, {"efficiency", 0.82}}}}};
  return j;
}

TEST(ClusterSpec, ReadsCalibratedTables) {
  const ClusterSpec c = cluster_from_json(calibrated_cluster());
  EXPECT_EQ(c.collectives.at("intra").at("all_reduce").bandwidth, 231.7e9);
  EXPECT_EQ(c.collectives.at("intra").at("all_reduce").latency, 11.25e-6);
  EXPECT_EQ(c.collectives.at("inter").at("all_gather").bandwidth, 46.3e9);
  ASSERT_EQ(c.gemm_table.at(Dtype::bf16).size(), 2u);
  EXPECT_EQ(c.gemm_table.at(Dtype::bf16)[1].efficiency, 0.82);
  EXPECT_EQ(c.memory_bandwidth, 2039e9);
  EXPECT_EQ(c.flash_attention_efficiency.forward, 0.7);
  EXPECT_EQ(c.flash_attention_efficiency.backward, 0.45);
}

TEST(ClusterSpec, RoundTripsIncludingCalibration) {
  for (const json& j : {small_cluster(), calibrated_cluster()}) {
    const ClusterSpec c = cluster_from_json(j);
    EXPECT_EQ(cluster_from_json(to_json(c)), c);
    // The text form is stable too: what calibrate writes reads back to the same file.
    EXPECT_EQ(to_json(cluster_from_json(to_json(c))), to_json(c));
  }
}

// Values that did not come from JSON (a fitted bandwidth in bytes/s) survive to_json -> from_json to within one
// ulp, and exactly whenever the JSON unit can express them (most values; every value read from JSON).
TEST(ClusterSpec, UnitConversionIsExactOrWithinOneUlp) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mantissa(1.0, 10.0);
  for (const auto& [unit, scale] :
       {std::pair{detail::kGBps, 1e10}, std::pair{detail::kMicroseconds, 1e-6}, std::pair{detail::kTflops, 1e14}}) {
    int exact = 0;
    constexpr int kTrials = 2000;
    for (int i = 0; i < kTrials; ++i) {
      const double si = mantissa(rng) * scale;
      const double back = detail::from_unit(detail::to_unit(si, unit), unit);
      EXPECT_LE(std::abs(back - si), std::nextafter(si, 2 * si) - si);
      exact += back == si;
      // Anything read from a config converts back to the same SI value (the JSON text may pick another of the
      // doubles that convert to it).
      const double from_config = detail::from_unit(mantissa(rng), unit);
      EXPECT_EQ(detail::from_unit(detail::to_unit(from_config, unit), unit), from_config);
    }
    EXPECT_GT(exact, kTrials / 2);
  }
}

TEST(ClusterSpec, RejectsBadValues) {
  json j = small_cluster();
  j["inter"]["bandwidth_GBps"] = -25;
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.inter.bandwidth_GBps",
                    "cluster.inter.bandwidth_GBps=-25 must be > 0 (cluster.nodes=4)");
  j = small_cluster();
  j["intra"]["latency_us"] = -1;
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.intra.latency_us", "cluster.intra.latency_us=-1 must be >= 0");
  j = small_cluster();
  j["peak_tflops"]["bf16"] = 0;
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.peak_tflops.bf16", "cluster.peak_tflops.bf16=0 must be > 0");
  j = small_cluster();
  j["peak_tflops"] = json::object();
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.peak_tflops",
                    "cluster.peak_tflops must give at least one of bf16, fp16, fp32");
  j = small_cluster();
  j["memory_gib"] = 0;
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.memory_gib", "cluster.memory_gib=0 must be > 0");
  j = small_cluster();
  j["memory_bandwidth_GBps"] = -1;
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.memory_bandwidth_GBps",
                    "cluster.memory_bandwidth_GBps=-1 must be >= 0 (0 or absent: unknown)");
  j = small_cluster();
  j["gemm_efficiency"] = 1.2;
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.gemm_efficiency", "cluster.gemm_efficiency=1.2 must be in (0, 1]");
  j = small_cluster();
  j["flash_attention_efficiency"] = {{"forward", 0.6}, {"backward", 0}};
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.flash_attention_efficiency.backward",
                    "cluster.flash_attention_efficiency.backward=0 must be in (0, 1]");
  j["flash_attention_efficiency"] = {{"forward", 0.6}};
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.flash_attention_efficiency.backward",
                    "cluster.flash_attention_efficiency.backward is required");
  j["flash_attention_efficiency"] = {{"forward", 0.6}, {"backward", 0.5}, {"causal", true}};
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.flash_attention_efficiency.causal",
                    "cluster.flash_attention_efficiency.causal: unknown key (allowed: forward, backward)");
  j = small_cluster();
  j["nodes"] = 0;
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.nodes", "cluster.nodes=0 must be > 0");
}

TEST(ClusterSpec, RejectsUnknownKeysAtEveryLevel) {
  json j = small_cluster();
  j["inter"]["bandwidth_gbps"] = 25;
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.inter.bandwidth_gbps",
                    "cluster.inter.bandwidth_gbps: unknown key (allowed: bandwidth_GBps, latency_us)");
  j = small_cluster();
  j["peak_tflops"]["tf32"] = 156;
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.peak_tflops.tf32",
                    "cluster.peak_tflops.tf32: unknown key (allowed: bf16, fp16, fp32, fp8)");
  j = calibrated_cluster();
  j["collectives"]["intra"]["allreduce"] = {{"latency_us", 1}, {"bandwidth_GBps", 1}};
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.collectives.intra.allreduce",
                    "cluster.collectives.intra.allreduce: unknown key (allowed: all_reduce, all_gather, "
                    "reduce_scatter, send_recv)");
  j = calibrated_cluster();
  j["collectives"]["nvlink"] = json::object();
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.collectives.nvlink",
                    "cluster.collectives.nvlink: unknown key (allowed: intra, inter)");
}

TEST(ClusterSpec, RejectsBadGemmTables) {
  json j = calibrated_cluster();
  j["gemm_table"]["bf16"][1]["flops"] = 1e8;
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.gemm_table.bf16[1].flops",
                    "cluster.gemm_table.bf16[1].flops=100000000 must be greater than cluster.gemm_table.bf16[0].flops="
                    "1000000000 (points in increasing flops)");
  j = calibrated_cluster();
  j["gemm_table"]["bf16"][0]["efficiency"] = 0;
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.gemm_table.bf16[0].efficiency",
                    "cluster.gemm_table.bf16[0].efficiency=0 must be in (0, 1]");
  j = calibrated_cluster();
  j["gemm_table"]["bf16"] = json::object();
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.gemm_table.bf16",
                    "cluster.gemm_table.bf16: expected an array, got object {}");
  j = calibrated_cluster();
  j["collectives"]["inter"]["all_gather"]["bandwidth_GBps"] = 0;
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.collectives.inter.all_gather.bandwidth_GBps",
                    "cluster.collectives.inter.all_gather.bandwidth_GBps=0 must be > 0");
}

// A link the cluster never uses need not be described: one node has no network.
TEST(ClusterSpec, SingleNodeNeedsNoNetwork) {
  json j = small_cluster();
  j["nodes"] = 1;
  j.erase("inter");
  const ClusterSpec c = cluster_from_json(j);
  EXPECT_EQ(c.inter.bandwidth, 0);
  EXPECT_EQ(cluster_from_json(to_json(c)), c);
  j["nodes"] = 2;
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.inter", "cluster.inter is required");
}

// Every number finite and plausible (cluster_json.cpp's ranges): peak_tflops 1e308 once overflowed to infinity
// and printed null.
TEST(ClusterSpec, NumbersAreFiniteAndPlausible) {
  json j = small_cluster();
  j["nodes"] = std::numeric_limits<int>::max();
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster",
                    "cluster: world nodes*gpus_per_node=2147483647*8 exceeds the limit of 16777216 GPUs");
  j = small_cluster();
  j["peak_tflops"]["bf16"] = 1e308;
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.peak_tflops.bf16",
                    "cluster.peak_tflops.bf16=1e+308 must be a finite number in [1e-06, 1e+06]");
  j = small_cluster();
  j["memory_gib"] = 1e300;
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.memory_gib",
                    "cluster.memory_gib=1e+300 must be a finite number in (0, 1.04858e+06]");
  j = small_cluster();
  j["inter"]["latency_us"] = 1e200;
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.inter.latency_us",
                    "cluster.inter.latency_us=1e+200 must be a finite number in [0, 1e+09]");
  // Too small is as implausible: bytes / 1e-300 GB/s is an infinite time.
  j = small_cluster();
  j["inter"]["bandwidth_GBps"] = 1e-300;
  EXPECT_SPEC_ERROR(cluster_from_json(j), "cluster.inter.bandwidth_GBps",
                    "cluster.inter.bandwidth_GBps=1e-300 must be a finite number in [1e-06, 1e+06]");
  // A value built in code (a calibrated profile) is checked the same way: NaN is no bandwidth.
  ClusterSpec c = cluster_from_json(small_cluster());
  c.inter.bandwidth = std::nan("");
  EXPECT_SPEC_ERROR(validate(c), "cluster.inter.bandwidth_GBps",
                    "cluster.inter.bandwidth_GBps=nan must be a finite number in [1e-06, 1e+06]");
  c = cluster_from_json(small_cluster());
  c.optimizer_rate = std::numeric_limits<double>::infinity();
  EXPECT_SPEC_ERROR(validate(c), "cluster.optimizer_Mparams_per_s",
                    "cluster.optimizer_Mparams_per_s=inf must be a finite number in [1e-06, 1e+09]");
}

// The operation table (gpu_ops.hpp): absent by default (and from the JSON written back), read and written back
// entry by entry with its provenance, bad entries refused by name; the old top-level comm_compute_contention says
// where it went.
TEST(ClusterSpec, GpuOperationTable) {
  json j = small_cluster();
  EXPECT_FALSE(cluster_from_json(j).gpu.has_value());
  EXPECT_FALSE(to_json(cluster_from_json(j)).contains("gpu"));
  j["gpu"] = json::parse(R"({"sm_count": {"value": 132, "provenance": "nominal"},
      "nccl_contention": {"value": 0.189, "provenance": "published"},
      "attention": {"flash2": {"provenance": "measured",
          "forward": [{"head_dim": 128, "seq_len": 1024, "causal": true, "tflops": 50},
                      {"head_dim": 128, "seq_len": 4096, "causal": true, "tflops": 60, "provenance": "published"}],
          "backward": [{"head_dim": 128, "seq_len": 1024, "causal": false, "tflops": 40}]}}})");
  const ClusterSpec c = cluster_from_json(j);
  ASSERT_TRUE(c.gpu.has_value());
  EXPECT_EQ(c.gpu->sm_count.value, 132);
  EXPECT_EQ(c.gpu->nccl_contention.provenance, Provenance::published);
  EXPECT_EQ(c.gpu->attention.at(AttentionKernel::flash2).provenance, Provenance::measured);
  // A point without its own provenance has its table's; one that states its own keeps it, and is written back.
  EXPECT_EQ(c.gpu->attention.at(AttentionKernel::flash2).forward[0].provenance, Provenance::measured);
  EXPECT_EQ(c.gpu->attention.at(AttentionKernel::flash2).forward[1].provenance, Provenance::published);
  EXPECT_FALSE(to_json(c)["gpu"]["attention"]["flash2"]["forward"][0].contains("provenance"));
  EXPECT_EQ(to_json(c)["gpu"]["attention"]["flash2"]["forward"][1]["provenance"], "published");
  EXPECT_FALSE(c.gpu->attention.contains(AttentionKernel::cudnn));
  EXPECT_FALSE(c.gpu->matmul_efficiency.known());
  EXPECT_EQ(cluster_from_json(to_json(c)), c);
  // Half way in log2(seq) between 1024 and 4096; the nearest head dim is used; clamped at the ends.
  const AttentionTable& t = c.gpu->attention.at(AttentionKernel::flash2);
  EXPECT_NEAR(attention_tflops(t.forward, 128, 2048, true), 55, 1e-12);
  EXPECT_NEAR(attention_tflops(t.forward, 64, 2048, true), 55, 1e-12);
  EXPECT_EQ(attention_tflops(t.forward, 128, 65536, true), 60);

  json bad = j;
  bad["gpu"]["sm_cnt"] = json::parse(R"({"value": 1, "provenance": "nominal"})");
  EXPECT_SPEC_ERROR(cluster_from_json(bad), "cluster.gpu.sm_cnt",
                    "cluster.gpu.sm_cnt: unknown key (allowed: sm_count, compute_capability, nccl_contention, "
                    "matmul_efficiency, fp8_matmul_efficiency, gemm_tile_rows, gemm_tile_cols, "
                    "gemm_epilogue_exposed, hbm_efficiency, power_limit_w, attention)");
  bad = j;
  bad["gpu"]["nccl_contention"]["value"] = 1.5;
  EXPECT_SPEC_ERROR(cluster_from_json(bad), "cluster.gpu.nccl_contention.value",
                    "cluster.gpu.nccl_contention.value=1.5 must be a finite number in [1e-06, 1]");
  bad = j;
  bad["gpu"]["sm_count"]["provenance"] = "guessed";
  EXPECT_THROW(cluster_from_json(bad), SpecError);
  bad = j;
  bad["gpu"]["attention"]["flash2"]["forward"][1]["provenance"] = "guessed";
  try {
    cluster_from_json(bad);
    ADD_FAILURE() << "a point's unknown provenance was accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "cluster.gpu.attention.flash2.forward[1].provenance");
  }
  bad = j;
  bad["gpu"]["gemm_epilogue_exposed"] = json::parse(R"({"value": 2, "provenance": "measured"})");
  EXPECT_SPEC_ERROR(cluster_from_json(bad), "cluster.gpu.gemm_epilogue_exposed.value",
                    "cluster.gpu.gemm_epilogue_exposed.value=2 must be a finite number in [1e-06, 1]");
  bad = j;
  std::swap(bad["gpu"]["attention"]["flash2"]["forward"][0], bad["gpu"]["attention"]["flash2"]["forward"][1]);
  EXPECT_SPEC_ERROR(cluster_from_json(bad), "cluster.gpu.attention.flash2.forward[1]",
                    "cluster.gpu.attention.flash2.forward[1]: points must be in increasing (causal, head_dim, "
                    "seq_len), each once");
  bad = j;
  bad["gpu"]["attention"]["unfused"] = bad["gpu"]["attention"]["flash2"];
  EXPECT_SPEC_ERROR(cluster_from_json(bad), "cluster.gpu.attention.unfused",
                    "cluster.gpu.attention.unfused: unknown key (allowed: flash2, flash3, cudnn)");
  bad = j;
  bad["gpu"]["attention"]["flash2"]["backward"] = json::array();
  EXPECT_SPEC_ERROR(cluster_from_json(bad), "cluster.gpu.attention.flash2.backward",
                    "cluster.gpu.attention.flash2.backward: at least one point");
  bad = j;
  bad["gpu"]["attention"]["flash2"]["forward"][1]["tflops"] = 1e4;  // above the 16-bit peak
  EXPECT_THROW(cluster_from_json(bad), SpecError);
  bad = j;
  bad["gpu"]["gemm_tile_rows"] = json::parse(R"({"value": 128, "provenance": "nominal"})");
  EXPECT_SPEC_ERROR(cluster_from_json(bad), "cluster.gpu.gemm_tile_cols",
                    "cluster.gpu.gemm_tile_rows and cluster.gpu.gemm_tile_cols are given together or not at all");
  bad = small_cluster();
  bad["comm_compute_contention"] = 0.189;
  EXPECT_SPEC_ERROR(cluster_from_json(bad), "cluster.comm_compute_contention",
                    "cluster.comm_compute_contention is now cluster.gpu.nccl_contention: {\"value\": ..., "
                    "\"provenance\": ...}");
}

}  // namespace
}  // namespace zeropp
