// ClusterSpec's piecewise collective fits (CollectiveFit::segments): JSON in and out, validation, and the
// segment analytic::collective_time uses for each size. The old single-line JSON keeps working.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cost_model/analytic/collectives.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"

namespace zeropp {
namespace {

nlohmann::json cluster_with(const nlohmann::json& all_reduce) {
  nlohmann::json c = nlohmann::json::parse(R"({"name": "t", "nodes": 1, "gpus_per_node": 2,
    "peak_tflops": {"fp32": 0.1}, "memory_gib": 1, "intra": {"bandwidth_GBps": 5, "latency_us": 2},
    "inter": {"bandwidth_GBps": 0, "latency_us": 0}})");
  c["collectives"]["intra"]["all_reduce"] = all_reduce;
  return c;
}

const nlohmann::json kTwoSegments = nlohmann::json::parse(R"({"latency_us": 3, "bandwidth_GBps": 4,
  "segments": [{"max_bytes": 1048576, "latency_us": 1, "bandwidth_GBps": 10},
               {"max_bytes": 67108864, "latency_us": 20, "bandwidth_GBps": 2}]})");

TEST(CollectiveSegments, JsonRoundTripAndSegmentChoice) {
  const ClusterSpec c = cluster_from_json(cluster_with(kTwoSegments));
  const CollectiveFit& fit = c.collectives.at("intra").at("all_reduce");
  ASSERT_EQ(fit.segments.size(), 2u);
  EXPECT_DOUBLE_EQ(fit.segments[1].max_bytes, 67108864);
  EXPECT_DOUBLE_EQ(fit.segments[1].latency, 20e-6);
  EXPECT_DOUBLE_EQ(fit.segments[1].bandwidth, 2e9);
  EXPECT_EQ(cluster_from_json(to_json(c)), c);

  // all_reduce on 2 ranks by hand: 2(n-1)(alpha + M/(n beta)) = 2 alpha + M / beta.
  using analytic::Collective;
  EXPECT_NEAR(analytic::collective_time(c, Collective::all_reduce, 2, 1, 1048576), 2e-6 + 1048576 / 10e9, 1e-15);
  EXPECT_NEAR(analytic::collective_time(c, Collective::all_reduce, 2, 1, 1048577), 40e-6 + 1048577 / 2e9, 1e-15);
  EXPECT_NEAR(analytic::collective_time(c, Collective::all_reduce, 2, 1, 1e9), 40e-6 + 1e9 / 2e9, 1e-15);
}

TEST(CollectiveSegments, SingleLineJsonStillWorks) {
  const ClusterSpec c = cluster_from_json(cluster_with({{"latency_us", 3}, {"bandwidth_GBps", 4}}));
  EXPECT_TRUE(c.collectives.at("intra").at("all_reduce").segments.empty());
  EXPECT_NEAR(analytic::collective_time(c, analytic::Collective::all_reduce, 2, 1, 4e6), 6e-6 + 4e6 / 4e9, 1e-15);
  EXPECT_FALSE(to_json(c)["collectives"]["intra"]["all_reduce"].contains("segments"));
}

TEST(CollectiveSegments, RejectsUnorderedSegmentsAndUnknownKeys) {
  nlohmann::json bad = kTwoSegments;
  bad["segments"][1]["max_bytes"] = 1024;
  try {
    cluster_from_json(cluster_with(bad));
    FAIL() << "decreasing max_bytes accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "cluster.collectives.intra.all_reduce.segments[1].max_bytes");
  }
  nlohmann::json typo = kTwoSegments;
  typo["segments"][0]["max_byte"] = 1;
  EXPECT_THROW(cluster_from_json(cluster_with(typo)), SpecError);
}

}  // namespace
}  // namespace zeropp
