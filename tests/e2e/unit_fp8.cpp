// FP8 emulation (e2e/model/fp8.hpp): the E4M3 / E5M2 rounding against hand values and against a brute-force
// search over every code of each format, the current scale, and FP8 training on the single-rank reference: on
// (its losses differ from the fp32 run's) and training (the loss falls).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "e2e/backend/cpu_backend.hpp"
#include "e2e/data/token_batch.hpp"
#include "e2e/model/fp8.hpp"
#include "e2e/model/reference.hpp"
#include "tests/e2e/unit_test_util.hpp"

namespace zeropp::e2e {
namespace {

TEST(Fp8, E4M3HandValues) {
  const Fp8Format f = Fp8Format::e4m3;
  EXPECT_EQ(fp8_max(f), 448.0f);  // 1.75 * 2^8 (S.1111.110; S.1111.111 is NaN)
  EXPECT_EQ(fp8_round(448.0f, f), 448.0f);
  EXPECT_EQ(fp8_round(464.0f, f), 448.0f);  // saturating: past the max (480 would be the next step)
  EXPECT_EQ(fp8_round(1e9f, f), 448.0f);
  EXPECT_EQ(fp8_round(-std::numeric_limits<float>::infinity(), f), -448.0f);
  EXPECT_EQ(fp8_round(1.0625f, f), 1.0f);         // tie between 1 (mantissa 000) and 1.125 (001): even
  EXPECT_EQ(fp8_round(1.1875f, f), 1.25f);        // tie between 1.125 (001) and 1.25 (010): even
  EXPECT_EQ(fp8_round(1.07f, f), 1.125f);         // nearest
  EXPECT_EQ(fp8_round(-3.3f, f), -3.25f);         // spacing 0.25 in [2, 4)
  EXPECT_EQ(fp8_round(0.015625f, f), 0.015625f);  // 2^-6: smallest normal
  EXPECT_EQ(fp8_round(std::ldexp(1.0f, -9), f), std::ldexp(1.0f, -9));   // smallest subnormal
  EXPECT_EQ(fp8_round(std::ldexp(1.0f, -10), f), 0.0f);                  // half of it: tie to even (0)
  EXPECT_EQ(fp8_round(std::ldexp(3.0f, -10), f), std::ldexp(1.0f, -8));  // 1.5 steps: tie to even (2 steps)
  EXPECT_EQ(fp8_round(std::ldexp(0.75f, -9), f), std::ldexp(1.0f, -9));
  EXPECT_EQ(fp8_round(std::ldexp(5.0f, -9), f), std::ldexp(5.0f, -9));  // subnormal 0.101 * 2^-6
  EXPECT_TRUE(std::isnan(fp8_round(std::nanf(""), f)));
}

TEST(Fp8, E5M2HandValues) {
  const Fp8Format f = Fp8Format::e5m2;
  EXPECT_EQ(fp8_max(f), 57344.0f);  // 1.75 * 2^15
  EXPECT_EQ(fp8_round(57344.0f, f), 57344.0f);
  EXPECT_EQ(fp8_round(61440.0f, f), 57344.0f);  // the tie with 65536 (inf in E5M2) saturates
  EXPECT_EQ(fp8_round(std::numeric_limits<float>::infinity(), f), 57344.0f);
  EXPECT_EQ(fp8_round(1.125f, f), 1.0f);                                  // tie between 1 (00) and 1.25 (01): even
  EXPECT_EQ(fp8_round(1.375f, f), 1.5f);                                  // tie between 1.25 (01) and 1.5 (10): even
  EXPECT_EQ(fp8_round(-0.3f, f), -0.3125f);                               // spacing 2^-4 in [0.25, 0.5)
  EXPECT_EQ(fp8_round(std::ldexp(1.0f, -16), f), std::ldexp(1.0f, -16));  // smallest subnormal
  EXPECT_EQ(fp8_round(std::ldexp(1.0f, -17), f), 0.0f);                   // tie to even (0)
  EXPECT_EQ(fp8_round(std::ldexp(3.0f, -17), f), std::ldexp(1.0f, -15));  // tie to even (2 steps)
}

// Every finite value of a format, decoded from its 8-bit codes (OCP FP8 specification), with the code's last bit.
struct Code {
  float value;
  bool odd;
};
std::vector<Code> all_codes(Fp8Format f) {
  const int mbits = f == Fp8Format::e4m3 ? 3 : 2, bias = f == Fp8Format::e4m3 ? 7 : 15;
  const int emax = (1 << (7 - mbits)) - 1;
  std::vector<Code> out;
  for (int e = 0; e <= emax; ++e)
    for (int m = 0; m < (1 << mbits); ++m) {
      if (f == Fp8Format::e4m3 && e == emax && m == (1 << mbits) - 1) continue;  // NaN
      if (f == Fp8Format::e5m2 && e == emax) continue;                           // inf, NaN
      const float v = e == 0 ? std::ldexp(static_cast<float>(m), 1 - bias - mbits)
                             : std::ldexp(1.0f + static_cast<float>(m) / static_cast<float>(1 << mbits), e - bias);
      out.push_back({v, (m & 1) != 0});
    }
  return out;
}

TEST(Fp8, RoundingIsTheNearestCodeTiesToEven) {
  std::mt19937 rng(7);
  for (Fp8Format f : {Fp8Format::e4m3, Fp8Format::e5m2}) {
    const std::vector<Code> codes = all_codes(f);
    std::vector<float> xs;
    for (const Code& c : codes) {  // every code, every midpoint (a tie) and points around them
      xs.push_back(c.value);
      for (const Code& d : codes)
        if (d.value > c.value) {
          xs.push_back(0.5f * (c.value + d.value));
          break;
        }
    }
    std::uniform_real_distribution<float> log2x(-20.0f, 17.0f);
    for (int i = 0; i < 20000; ++i) xs.push_back(std::exp2(log2x(rng)));
    for (float x : xs) {
      // The brute-force answer: the nearest code, the even one on a tie, the max beyond it.
      float best = 0, dist = std::numeric_limits<float>::infinity();
      bool best_odd = false;
      for (const Code& c : codes) {
        const float d = std::fabs(c.value - x);
        if (d < dist || (d == dist && best_odd && !c.odd)) {
          best = c.value;
          dist = d;
          best_odd = c.odd;
        }
      }
      if (x > fp8_max(f)) best = fp8_max(f);
      ASSERT_EQ(fp8_round(x, f), best) << "x " << x;
      ASSERT_EQ(fp8_round(-x, f), -best) << "x " << -x;
    }
  }
}

TEST(Fp8, CurrentScaleAndQuantizeDequantize) {
  EXPECT_EQ(fp8_scale(2.0f, Fp8Format::e4m3), 224.0f);
  EXPECT_EQ(fp8_scale(0.0f, Fp8Format::e4m3), 1.0f);  // an all-zero tensor: scale 1 (TE and torchao clamp amax)
  const std::vector<float> x{2.0f, -1.0f, 0.3f, 0.0f};
  const float amax = fp8_amax(x.data(), 4);
  EXPECT_EQ(amax, 2.0f);
  std::vector<float> y(4);
  fp8_quantize_dequantize(y.data(), x.data(), 4, fp8_scale(amax, Fp8Format::e4m3), Fp8Format::e4m3);
  EXPECT_EQ(y[0], 2.0f);   // the amax maps to 448 exactly and back
  EXPECT_EQ(y[1], -1.0f);  // 224: exact
  // 0.3 * 224 = 67.2 rounds to 64 (spacing 8 in [64, 128): 3 mantissa bits), dequantized 64 / 224.
  EXPECT_EQ(y[2], 64.0f * (1.0f / 224.0f));
  EXPECT_EQ(y[3], 0.0f);
}

// The single-rank reference with FP8 linear layers: its losses differ from the fp32 run's (the quantization is on),
// by little, and it trains (SyntheticLossFalls' model and task in unit_model.cpp).
TEST(Fp8, ReferenceTrainsAndDiffersFromFp32) {
  CpuBackend be;
  const GptConfig g = testing::synthetic_task_model();
  const SyntheticData data(g.V, 17, 0.1);
  auto losses = [&](bool fp8) {
    ReferenceConfig rc;
    rc.model = g;
    rc.model.fp8.enabled = fp8;
    rc.micro_batch = 4;
    rc.microbatches = 2;
    rc.optim.lr = 3e-3f;
    rc.optim.weight_decay = 0.0f;
    ReferenceTrainer t(be, rc, data);
    std::vector<double> l;
    for (int i = 0; i < 40; ++i) l.push_back(t.step().loss);
    return l;
  };
  const std::vector<double> f32 = losses(false), f8 = losses(true);
  EXPECT_NE(f8[0], f32[0]);  // the forward already runs FP8 GEMMs
  EXPECT_NEAR(f8[0], f32[0], 0.02);
  EXPECT_LT(f8.back(), 0.6 * f8.front()) << "first " << f8.front() << " last " << f8.back();
  EXPECT_NEAR(f8.back(), f32.back(), 0.1 * f32.back());
}

}  // namespace
}  // namespace zeropp::e2e
