// ClusterSpec's measured collective tables (CollectiveFit::table): JSON in and out, validation, and the time
// analytic::collective_time takes from them: the line through the neighbouring sizes for a group of the table's
// size, the largest size's bus bandwidth above it, and the fit below it and for other group sizes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cost_model/analytic/collectives.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"

namespace zeropp {
namespace {

using analytic::Collective;

nlohmann::json cluster_with(const nlohmann::json& all_gather) {
  nlohmann::json c = nlohmann::json::parse(R"({"name": "t", "nodes": 1, "gpus_per_node": 4,
    "peak_tflops": {"fp32": 0.1}, "memory_gib": 1, "intra": {"bandwidth_GBps": 5, "latency_us": 2}})");
  c["collectives"]["intra"]["all_gather"] = all_gather;
  return c;
}

// Measured on 2 ranks: 10 us at 1 MB, 30 us at 2 MB (a cliff between them), 50 us at 4 MB. The line: 1 us per
// step, 100 GB/s.
const nlohmann::json kTable = nlohmann::json::parse(R"({"latency_us": 1, "bandwidth_GBps": 100, "table_ranks": 2,
  "table": [{"bytes": 1e6, "time_us": 10}, {"bytes": 2e6, "time_us": 30}, {"bytes": 4e6, "time_us": 50}]})");

TEST(CollectiveTable, JsonRoundTrip) {
  const ClusterSpec c = cluster_from_json(cluster_with(kTable));
  const CollectiveFit& fit = c.collectives.at("intra").at("all_gather");
  ASSERT_EQ(fit.table.size(), 3u);
  EXPECT_EQ(fit.table_ranks, 2);
  EXPECT_DOUBLE_EQ(fit.table[1].bytes, 2e6);
  EXPECT_DOUBLE_EQ(fit.table[1].seconds, 30e-6);
  EXPECT_EQ(cluster_from_json(to_json(c)), c);
}

TEST(CollectiveTable, InterpolatesBetweenSizesForItsGroupSize) {
  const ClusterSpec c = cluster_from_json(cluster_with(kTable));
  auto t = [&](int n, double bytes) { return analytic::collective_time(c, Collective::all_gather, n, 1, bytes); };
  // At the measured sizes, the measurement.
  EXPECT_NEAR(t(2, 1e6), 10e-6, 1e-15);
  EXPECT_NEAR(t(2, 4e6), 50e-6, 1e-15);
  // 1.5 MB: halfway along the line from (1 MB, 10 us) to (2 MB, 30 us) = 20 us; 3 MB: halfway to 50 us = 40 us.
  EXPECT_NEAR(t(2, 1.5e6), 20e-6, 1e-15);
  EXPECT_NEAR(t(2, 3e6), 40e-6, 1e-15);
  // Above the table: the largest size's bus bandwidth, 4 MB per 50 us: 8 MB in 100 us.
  EXPECT_NEAR(t(2, 8e6), 100e-6, 1e-15);
  // Below it: the fit. all_gather on 2 ranks: (n-1)(alpha + M/(n beta)) = 1 us + 0.5 MB / (2 * 100 GB/s).
  EXPECT_NEAR(t(2, 0.5e6), 1e-6 + 0.5e6 / 200e9, 1e-15);
  // Another group size: the fit, 3 (1 us + 1.5 MB / (4 * 100 GB/s)).
  EXPECT_NEAR(t(4, 1.5e6), 3 * (1e-6 + 1.5e6 / 400e9), 1e-15);
}

TEST(CollectiveTable, RejectsBadTables) {
  auto field_of = [](const nlohmann::json& fit) {
    try {
      cluster_from_json(cluster_with(fit));
    } catch (const SpecError& e) {
      return e.field();
    }
    return std::string("accepted");
  };
  nlohmann::json unordered = kTable;
  unordered["table"][2]["bytes"] = 1.5e6;
  EXPECT_EQ(field_of(unordered), "cluster.collectives.intra.all_gather.table[2].bytes");
  nlohmann::json zero_time = kTable;
  zero_time["table"][0]["time_us"] = 0;
  EXPECT_EQ(field_of(zero_time), "cluster.collectives.intra.all_gather.table[0].time_us");
  nlohmann::json one_rank = kTable;
  one_rank["table_ranks"] = 1;
  EXPECT_EQ(field_of(one_rank), "cluster.collectives.intra.all_gather.table_ranks");
  nlohmann::json no_table = kTable;
  no_table.erase("table");
  EXPECT_EQ(field_of(no_table), "cluster.collectives.intra.all_gather.table_ranks");
  nlohmann::json typo = kTable;
  typo["table"][0]["time_s"] = 1;
  EXPECT_NE(field_of(typo), "accepted");
}

}  // namespace
}  // namespace zeropp
