#include "e2e/model/fp8.hpp"

#include <cmath>

namespace zeropp::e2e {

namespace {

struct Fp8Bits {
  int mantissa;  // explicit mantissa bits
  int min_exp;   // exponent of the smallest normal number (1 - bias)
  float max;     // largest finite value
};

// OCP 8-bit floating point specification (E4M3: bias 7, the all-ones exponent with mantissa 111 is NaN, so the
// largest value is 1.75 * 2^8 = 448; E5M2: bias 15, IEEE-like, largest 1.75 * 2^15 = 57344).
Fp8Bits bits(Fp8Format f) { return f == Fp8Format::e4m3 ? Fp8Bits{3, -6, 448.0f} : Fp8Bits{2, -14, 57344.0f}; }

}  // namespace

float fp8_max(Fp8Format f) { return bits(f).max; }

float fp8_round(float x, Fp8Format f) {
  if (std::isnan(x)) return x;
  const Fp8Bits b = bits(f);
  const float a = std::fabs(x);
  if (a >= b.max) return std::copysign(b.max, x);  // saturating (satfinite), infinities included
  if (a == 0.0f) return x;
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1): the leading bit's exponent is e - 1
  const int lead = e - 1 < b.min_exp ? b.min_exp : e - 1;  // subnormals share the smallest normal's spacing
  const float step = std::ldexp(1.0f, lead - b.mantissa);
  // a / step is exact (a power of two); nearbyint rounds to nearest even in the default rounding mode.
  const float r = std::nearbyint(a / step) * step;
  return std::copysign(r > b.max ? b.max : r, x);
}

float fp8_amax(const float* x, std::int64_t n) {
  float m = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) {
    const float a = std::fabs(x[i]);
    if (a > m) m = a;
  }
  return m;
}

float fp8_scale(float amax, Fp8Format f) {
  if (!(amax > 0.0f) || !std::isfinite(amax)) return 1.0f;
  return fp8_max(f) / amax;
}

void fp8_quantize_dequantize(float* dst, const float* src, std::int64_t n, float scale, Fp8Format f) {
  const float inv = 1.0f / scale;
  for (std::int64_t i = 0; i < n; ++i) dst[i] = fp8_round(src[i] * scale, f) * inv;
}

}  // namespace zeropp::e2e
