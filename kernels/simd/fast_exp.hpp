// kernels/simd/fast_exp.hpp: VectorFastExp, the `fast` exp policy of the SIMD kernels, as a
// scalar ExpPolicy (core/exp_policy.hpp), so that ReplayOracle of a kernel that used it gives the
// same bits (the vector version in carriers-inl.h performs exactly these operations).
//
// Contract (float): exp(x) = 2^k * P(f), t = fl(x * log2 e) (one rounding, FlashAttention's
// exp2 of a pre-scaled argument), k = nearest integer to t (ties to even), f = t - k (exact,
// |f| <= 1/2), P = the degree-6 Taylor polynomial of 2^f by Horner with fma, and 2^k applied by
// adding k to the exponent field (no second scaling step, no subnormal results).
//   Special values and range: NaN -> NaN; x > 88.72 -> +inf (slightly early: exp(88.72) is
//   3.39e38, still finite); x < -87 -> +0 (results below 2^-125 flush to zero); -inf -> +0;
//   exp(0) == 1 exactly. Accuracy against exp in double, measured over every float in
//   [-87, 88.72]: at most 64.1 ulp (near 88.7: the rounding of t = x log2 e is amplified by
//   |t|), at most 8.2 ulp for |x| <= 10. tests/kernels/test_simd.cpp samples the range, prints
//   the worst error and asserts kVectorFastExpMaxUlpF32.
// double: identical to PortableExp (no faster double exp is provided).
// Log is PortableExp's. Cost: about 19 vector operations per exp against about 28 for portable.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "precision/math_policy.hpp"

namespace carrier::simd {

inline constexpr double kVectorFastExpMaxUlpF32 = 65.0;

namespace fast_exp_detail {

// ln(2)^k / k!, k = 0..6, rounded to float.
inline constexpr float kC[7] = {1.0f,
                                0.693147180559945309f,
                                0.240226506959100712f,
                                0.0555041086648215800f,
                                0.00961812910762847716f,
                                0.00133335581464284434f,
                                0.000154035303933816099f};
inline constexpr float kLog2e = 1.44269504088896340736f;
inline constexpr float kShift = 12582912.0f;  // 1.5 * 2^23
inline constexpr float kHi = 88.72f;
inline constexpr float kLo = -87.0f;

inline float ExpF(float x) {
  if (x != x) return x + x;
  if (x > kHi) return std::numeric_limits<float>::infinity();
  if (x < kLo) return 0.0f;
  const float t = x * kLog2e;
  const float kf = (t + kShift) - kShift;
  const float f = t - kf;
  float p = kC[6];
  for (int i = 5; i >= 0; --i) p = std::fma(p, f, kC[i]);
  const std::int32_t k = static_cast<std::int32_t>(kf);
  // Adding k to the exponent field (unsigned wrap-around: k may be negative).
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(p) +
                              (static_cast<std::uint32_t>(k) << 23));
}

}  // namespace fast_exp_detail

struct VectorFastExp {
  static constexpr const char* kName = "vecfast";
  template <class T>
  static T Exp(T x) {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                  "VectorFastExp is defined for float and double compute");
    if constexpr (std::is_same_v<T, float>) {
      return fast_exp_detail::ExpF(x);
    } else {
      return PortableExp::Exp<T>(x);
    }
  }
  template <class T>
  static T Log(T x) {
    return PortableExp::Log<T>(x);
  }
};

}  // namespace carrier::simd
