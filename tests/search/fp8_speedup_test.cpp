// Issue 20 item 4: the modelled FP8-over-BF16 speedup against published pairs of the same run with and without FP8
// (configs/validation/fp8_speedup/llm_foundry_h100.json: llm-foundry's MPT benchmarks on H100, TransformerEngine
// delayed scaling under PyTorch FSDP). Both runs predicted by the validation executor on the dgx-h100 profile as it is,
// nothing fitted. The stated tolerance: the modelled ratio within kTolerance (relative) of each published ratio.
#include "cost_model/search/fp8_speedup.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cost_model/spec/config.hpp"

namespace zeropp::search {
namespace {

constexpr double kTolerance = 0.10;

TEST(Fp8Speedup, LlmFoundryPairsOnH100) {
  const std::string path = (configs_dir() / "validation" / "fp8_speedup" / "llm_foundry_h100.json").string();
  const Fp8SpeedupReport r = run_fp8_speedup(path);
  ASSERT_EQ(r.pairs.size(), 5u);
  EXPECT_EQ(r.recipe, Fp8Recipe::te_delayed);
  double sum = 0, worst = 0;
  for (const Fp8SpeedupPair& p : r.pairs) {
    const double error = p.predicted_ratio() / p.published_ratio() - 1;
    sum += std::abs(error);
    worst = std::max(worst, std::abs(error));
    std::cout << fmt::format("{:10} published {:.3f} ({:.0f} / {:.0f})  modelled {:.3f} ({:.0f} / {:.0f})  {:+.1f}%\n",
                             p.name, p.published_ratio(), p.published_fp8, p.published_bf16, p.predicted_ratio(),
                             p.predicted_fp8, p.predicted_bf16, 100 * error);
    EXPECT_LE(std::abs(error), kTolerance) << p.name;
  }
  std::cout << fmt::format("mean |error| {:.1f}%, max {:.1f}%\n", 100 * sum / r.pairs.size(), 100 * worst);
}

}  // namespace
}  // namespace zeropp::search
