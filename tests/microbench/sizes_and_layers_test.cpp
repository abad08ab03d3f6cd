// Collective size sweeps and the trainer-layer FLOP counts of zeropp-bench, checked by hand.
#include <gtest/gtest.h>

#include "microbench/layer_bench.hpp"
#include "microbench/options.hpp"
#include "microbench/suites.hpp"

namespace zeropp::microbench {
namespace {

TEST(CollectiveSizes, PowersOfTheStepAndGeometricMidpoints) {
  Options o;
  o.coll_min_bytes = 1024;
  o.coll_max_bytes = 8192;
  EXPECT_EQ(collective_sizes(o), (std::vector<std::size_t>{1024, 2048, 4096, 8192}));
  o.coll_points_per_step = 2;
  // 1024 * sqrt(2) = 1448.2 -> 1280 (256-byte multiple), 2048 * sqrt(2) = 2896.3 -> 2816, 4096 * sqrt(2) -> 5632.
  EXPECT_EQ(collective_sizes(o), (std::vector<std::size_t>{1024, 1280, 2048, 2816, 4096, 5632, 8192}));
}

TEST(LayerPassFlop, MatchesDesignFormulas) {
  // h = 512, s = 256, b = 2 by hand: 24 b s h^2 = 3,221,225,472; 4 b s^2 h = 268,435,456.
  const LayerShape g{512, 8, 256, 2};
  EXPECT_DOUBLE_EQ(layer_pass_flop(g, LayerPass::F), 3221225472.0 + 268435456.0);
  EXPECT_DOUBLE_EQ(layer_pass_flop(g, LayerPass::B), 3221225472.0 + 2 * 268435456.0);
  EXPECT_DOUBLE_EQ(layer_pass_flop(g, LayerPass::W), 3221225472.0);
  EXPECT_EQ(g.name(), "h:512/a:8/s:256/b:2");
}

TEST(Options, LayerHiddenMustBeAMultipleOfTheHeadDim) {
  std::vector<std::string> args{"bench", "--zeropp_layer_hidden=96", "--zeropp_layer_head_dim=64"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  EXPECT_THROW(parse_options(argc, argv.data()), std::invalid_argument);
}

}  // namespace
}  // namespace zeropp::microbench
