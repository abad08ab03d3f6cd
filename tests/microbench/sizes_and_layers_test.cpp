// Collective size sweeps and the trainer-layer FLOP counts of zeropp-bench, checked by hand.
#include <gtest/gtest.h>

#include "microbench/attention_bench.hpp"
#include "microbench/kernel_bench.hpp"
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

TEST(AttentionFlop, ByHand) {
  // s = 2048, 32 heads of 128 (h = 4096), b = 1: 4 b s^2 h = 4 * 2048^2 * 4096 = 68,719,476,736; backward twice
  // that. Causal (executed) count: half the forward, 2.5x that backward: 34,359,738,368 and 85,899,345,920.
  const auto cases = attention_cases({32, 16}, {8, 16}, 2048, 128, 1);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_DOUBLE_EQ(attention_flop(cases[0], false, false), 68719476736.0);
  EXPECT_DOUBLE_EQ(attention_flop(cases[0], true, false), 137438953472.0);
  EXPECT_DOUBLE_EQ(attention_flop(cases[0], false, true), 34359738368.0);
  EXPECT_DOUBLE_EQ(attention_flop(cases[0], true, true), 85899345920.0);
  EXPECT_DOUBLE_EQ(attention_flop(cases[1], false, false), 68719476736.0 / 2);  // 16 heads
  EXPECT_EQ(cases[0].name("bf16", true), "attention/trainer/bf16/flash/B/h:4096/a:32/kv:8/s:2048/b:1");
  AttentionCase unfused = cases[1];
  unfused.unfused = true;
  EXPECT_EQ(unfused.name("bf16", false), "attention/trainer/bf16/unfused/F/h:2048/a:16/kv:16/s:2048/b:1");
  EXPECT_EQ(attention_cases({4}, {}, 64, 16, 2)[0].kv_heads, 4);  // no kv list: as many as heads
}

// A flash kernel named by --zeropp_attention_kernels: in the case's name, and refused when the backend lacks it.
TEST(AttentionKernels, NamedAndSelected) {
  auto kernel = [](std::string name) {
    auto k = std::make_shared<FlashKernelRun>();
    k->name = std::move(name);
    return std::shared_ptr<const FlashKernelRun>(k);
  };
  const std::vector available{kernel("mma"), kernel("wmma")};
  AttentionCase c = attention_cases({32}, {8}, 2048, 128, 1)[0];
  c.kernel = available[0];
  EXPECT_EQ(c.name("bf16", false), "attention/trainer/bf16/flash-mma/F/h:4096/a:32/kv:8/s:2048/b:1");
  const auto chosen = select_flash_kernels(available, {"wmma", "mma"}, "cuda");
  ASSERT_EQ(chosen.size(), 2u);
  EXPECT_EQ(chosen[0]->name, "wmma");
  EXPECT_EQ(chosen[1]->name, "mma");
  EXPECT_TRUE(select_flash_kernels(available, {}, "cuda").empty());
  try {
    select_flash_kernels(available, {"scalar"}, "cuda");
    FAIL() << "an unknown kernel was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--zeropp_attention_kernels: scalar is not a flash kernel of the cuda backend (mma, wmma)");
  }
  EXPECT_THROW(select_flash_kernels({}, {"mma"}, "cpu"), std::invalid_argument);
}

// The column sums of the weight passes are cases only for a backend's named kernels, each in the name; their bytes
// are the fewest they must move (bf16 activations: e = 2).
TEST(KernelCases, ColumnSumsPerNamedKernelWithTheirBytes) {
  const auto without = kernel_cases({8}, {16}, {});
  for (const KernelCase& c : without) EXPECT_EQ(c.kernel, nullptr) << c.op;
  auto kernel = [](std::string name) {
    auto k = std::make_shared<ColumnSumsRun>();
    k->name = std::move(name);
    return std::shared_ptr<const ColumnSumsRun>(k);
  };
  const auto with = kernel_cases({8}, {16}, {}, {kernel("scalar"), kernel("vec16")});
  ASSERT_EQ(with.size(), without.size() + 6);
  std::vector<std::string> names;
  for (const KernelCase& c : with)
    if (c.kernel) names.push_back(c.name("cuda", "bf16"));
  EXPECT_EQ(
      names,
      (std::vector<std::string>{
          "kernel/cuda/bf16/bias_W-scalar/rows:8/cols:16", "kernel/cuda/bf16/bias_W-vec16/rows:8/cols:16",
          "kernel/cuda/bf16/layernorm_W-scalar/rows:8/cols:16", "kernel/cuda/bf16/layernorm_W-vec16/rows:8/cols:16",
          "kernel/cuda/bf16/rmsnorm_W-scalar/rows:8/cols:16", "kernel/cuda/bf16/rmsnorm_W-vec16/rows:8/cols:16"}));
  // [8, 16] bf16: dy 256 B; x 256 B; mean and rstd 32 B each; dw and db 64 B each (fp32).
  EXPECT_EQ(kernel_case_bytes({"bias_W", 8, 16, nullptr}, 2), 256 + 64);
  EXPECT_EQ(kernel_case_bytes({"layernorm_W", 8, 16, nullptr}, 2), 512 + 64 + 128);
  EXPECT_EQ(kernel_case_bytes({"rmsnorm_W", 8, 16, nullptr}, 2), 512 + 32 + 64);
}

TEST(Options, AttentionKvHeadsPairWithHeads) {
  auto parse = [](std::vector<std::string> args) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int argc = static_cast<int>(args.size());
    return parse_options(argc, argv.data());
  };
  EXPECT_EQ(parse({"bench", "--zeropp_attention_heads=32,16", "--zeropp_attention_kv_heads=8,16"}).attention_kv_heads,
            (std::vector<long>{8, 16}));
  EXPECT_THROW(parse({"bench", "--zeropp_attention_heads=32,16", "--zeropp_attention_kv_heads=8"}),
               std::invalid_argument);  // one kv count for two head counts
  EXPECT_THROW(parse({"bench", "--zeropp_attention_heads=32", "--zeropp_attention_kv_heads=5"}),
               std::invalid_argument);  // 5 does not divide 32
  EXPECT_THROW(parse({"bench", "--zeropp_attention_heads=0"}), std::invalid_argument);
  EXPECT_EQ(parse({"bench", "--zeropp_attention_kernels=mma,wmma"}).attention_kernels,
            (std::vector<std::string>{"mma", "wmma"}));
  EXPECT_THROW(parse({"bench", "--zeropp_attention_kernels=mma,,wmma"}), std::invalid_argument);  // an empty name
}

}  // namespace
}  // namespace zeropp::microbench
