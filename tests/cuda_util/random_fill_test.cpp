// The device-drawn benchmark inputs (cuda_util/random_fill.hpp): the hash's values on the host (no GPU needed),
// and the kernel writing exactly those values, rounded to bf16, on a GPU (skipped without one).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cuda_util/bf16_convert.hpp"
#include "cuda_util/device_buffer.hpp"
#include "cuda_util/local_device.hpp"
#include "cuda_util/random_fill.hpp"

namespace zeropp::cuda_util {
namespace {

TEST(UniformHash, InOpenIntervalNeverZeroAndBalanced) {
  const int n = 1 << 20;
  double sum = 0, sum_sq = 0;
  for (int i = 0; i < n; ++i) {
    const float x = uniform_hash(7, static_cast<std::uint64_t>(i));
    ASSERT_GT(x, -1.0f) << i;
    ASSERT_LT(x, 1.0f) << i;
    ASSERT_NE(x, 0.0f) << i;
    sum += x;
    sum_sq += static_cast<double>(x) * x;
  }
  // Uniform on (-1, 1): mean 0 and variance 1/3; with 2^20 draws the mean's standard error is 5.6e-4.
  EXPECT_NEAR(sum / n, 0.0, 5e-3);
  EXPECT_NEAR(sum_sq / n, 1.0 / 3.0, 5e-3);
}

TEST(UniformHash, SeedAndIndexBothMatter) {
  EXPECT_EQ(uniform_hash(1, 5), uniform_hash(1, 5));
  EXPECT_NE(uniform_hash(1, 5), uniform_hash(2, 5));
  EXPECT_NE(uniform_hash(1, 5), uniform_hash(1, 6));
}

TEST(RandomFillOnDevice, WritesTheHashRoundedToBf16) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device: the fill kernel runs only on a GPU";
  select_local_device(0);
  const std::size_t n = 3'000'001;  // more than one launch's worth: the grid-stride loop is covered
  DeviceBuffer<__nv_bfloat16> out(n);
  DeviceBuffer<float> wide(n);
  poison_bf16(out.data(), n, nullptr);
  fill_uniform_bf16(out.data(), n, 42, nullptr);
  bf16_to_float(out.data(), wide.data(), n, nullptr);
  const std::vector<float> got = wide.download();
  for (std::size_t i = 0; i < n; ++i) {
    // bf16 keeps 8 significant bits: within 2^-8 relative of the fp32 value (round to nearest).
    const float want = uniform_hash(42, i);
    ASSERT_TRUE(std::isfinite(got[i])) << i;
    ASSERT_LE(std::abs(got[i] - want), std::abs(want) * 0x1p-8f) << i;
  }
}

}  // namespace
}  // namespace zeropp::cuda_util
