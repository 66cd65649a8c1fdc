// precision/math_policy.hpp: the exp/log policies a carrier is templated on.
//
//   LibmExp      (core/exp_policy.hpp) std::exp / std::log of the compute scalar.
//   PortableExp  our own exp, exp2 and log for float and double, written with +, *, explicit
//                fma, IEEE division and exact power-of-two scaling only, so host and device
//                (and every compiler honouring -ffp-contract=off / --fmad=false) give identical
//                bits. This is what the bit-exact contract between a CUDA kernel and its CPU
//                replay rests on.
//   FastExp      exp(x) as exp2(x * log2(e)) with the constant folded in, as FlashAttention's
//                softmax does (exp2f of a pre-scaled score): a different function from exp, with
//                different rounding; on the host it calls std::exp2.
//
// PortableExp contract (float; the double version has the same structure):
//   exp(x) = 2^k * P(r), k = nearest integer to x*log2(e) (ties to even, via the 1.5*2^23
//   shifter), r = x - k*ln2 by two fma steps (Cody-Waite with an fma-exact high part),
//   P = Taylor polynomial of degree 7 (float) / 13 (double) by Horner with fma, and 2^k applied
//   as two exact power-of-two multiplications so subnormal results round once.
//   Special values: NaN -> NaN, +inf -> +inf, -inf -> +0; x > 89 (float) / 710 (double) -> +inf;
//   x < -104 / -746 -> +0. Max error over ALL fp32 inputs in [-104, 89]: measured by
//   tests/precision/test_math_policy.cpp and asserted there (kPortableExpMaxUlpF32).
//   log(x) = e*ln2 + log(m), m in [sqrt(1/2), sqrt(2)), log(m) = 2 atanh(s), s = (m-1)/(m+1),
//   by its odd series in fdlibm's split form; log(0) = -inf, log(x<0) = NaN, log(inf) = inf.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/platform.hpp"

namespace carrier {

// Documented bounds, measured exhaustively (fp32) by the tests, in ulps of the result.
inline constexpr double kPortableExpMaxUlpF32 = 1.0;
inline constexpr double kPortableLogMaxUlpF32 = 1.0;

namespace portable_detail {

CARRIER_HD inline float Pow2F(int j) {  // 2^j for j in [-126, 127], exact
  return std::bit_cast<float>(static_cast<std::uint32_t>(j + 127) << 23);
}
CARRIER_HD inline double Pow2D(int j) {  // 2^j for j in [-1022, 1023], exact
  return std::bit_cast<double>(static_cast<std::uint64_t>(j + 1023) << 52);
}

CARRIER_HD inline float ExpF(float x) {
  if (x != x) return x + x;
  if (x > 89.0f) return std::numeric_limits<float>::infinity();
  if (x < -104.0f) return 0.0f;
  constexpr float kLog2e = 1.44269504088896340736f;
  constexpr float kShift = 12582912.0f;               // 1.5 * 2^23: adding it rounds to an integer
  constexpr float kLn2Hi = 0.693147182464599609375f;  // fl(ln 2)
  constexpr float kLn2Lo =
      static_cast<float>(0.6931471805599453094172321 - 0.693147182464599609375);
  const float kf = (x * kLog2e + kShift) - kShift;
  float r = std::fma(-kf, kLn2Hi, x);
  r = std::fma(-kf, kLn2Lo, r);
  float p = 1.0f / 5040.0f;
  p = std::fma(p, r, 1.0f / 720.0f);
  p = std::fma(p, r, 1.0f / 120.0f);
  p = std::fma(p, r, 1.0f / 24.0f);
  p = std::fma(p, r, 1.0f / 6.0f);
  p = std::fma(p, r, 0.5f);
  p = std::fma(p, r, 1.0f);
  p = std::fma(p, r, 1.0f);
  const int k = static_cast<int>(kf);
  const int k1 = k / 2;
  return (p * Pow2F(k1)) * Pow2F(k - k1);
}

CARRIER_HD inline double ExpD(double x) {
  if (x != x) return x + x;
  if (x > 710.0) return std::numeric_limits<double>::infinity();
  if (x < -746.0) return 0.0;
  constexpr double kLog2e = 1.44269504088896340735992468100189214;
  constexpr double kShift = 6755399441055744.0;     // 1.5 * 2^52
  constexpr double kLn2Hi = 0x1.62e42fefa39efp-1;   // fl(ln 2)
  constexpr double kLn2Lo = 0x1.abc9e3b39803fp-56;  // ln 2 - kLn2Hi
  const double kf = (x * kLog2e + kShift) - kShift;
  double r = std::fma(-kf, kLn2Hi, x);
  r = std::fma(-kf, kLn2Lo, r);
  constexpr double kInvFact[] = {1.0 / 6227020800.0,
                                 1.0 / 479001600.0,
                                 1.0 / 39916800.0,
                                 1.0 / 3628800.0,
                                 1.0 / 362880.0,
                                 1.0 / 40320.0,
                                 1.0 / 5040.0,
                                 1.0 / 720.0,
                                 1.0 / 120.0,
                                 1.0 / 24.0,
                                 1.0 / 6.0,
                                 0.5,
                                 1.0,
                                 1.0};
  double p = kInvFact[0];
  for (int i = 1; i < 14; ++i) p = std::fma(p, r, kInvFact[i]);
  const int k = static_cast<int>(kf);
  const int k1 = k / 2;
  return (p * Pow2D(k1)) * Pow2D(k - k1);
}

CARRIER_HD inline float LogF(float x) {
  if (x != x) return x + x;
  if (x < 0.0f) return std::numeric_limits<float>::quiet_NaN();
  if (x == 0.0f) return -std::numeric_limits<float>::infinity();
  if (x == std::numeric_limits<float>::infinity()) return x;
  int e = 0;
  if (x < 0x1.0p-126f) {  // subnormal: scale into the normal range exactly
    x *= 0x1.0p23f;
    e = -23;
  }
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  e += static_cast<int>(bits >> 23) - 127;
  float m = std::bit_cast<float>((bits & 0x007fffffu) | 0x3f800000u);  // [1, 2)
  if (m > 1.41421356237309504880f) {
    m *= 0.5f;
    e += 1;
  }
  // fdlibm's split: log(1 + f) = f - (hfsq - s*(hfsq + R)), s = f/(2 + f), R = the atanh
  // series beyond its first term. f = m - 1 is exact (Sterbenz), and ln2_hi has trailing zero
  // bits so e*ln2_hi is exact.
  const float f = m - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s;
  float q = 2.0f / 11.0f;
  q = std::fma(q, z, 2.0f / 9.0f);
  q = std::fma(q, z, 2.0f / 7.0f);
  q = std::fma(q, z, 2.0f / 5.0f);
  q = std::fma(q, z, 2.0f / 3.0f);
  const float r = z * q;
  const float hfsq = 0.5f * f * f;
  constexpr float kLn2Hi = 6.9313812256e-01f;  // 0x3f317180
  constexpr float kLn2Lo = 9.0580006145e-06f;  // 0x3717f7d1
  const float ef = static_cast<float>(e);
  return ef * kLn2Hi - ((hfsq - (s * (hfsq + r) + ef * kLn2Lo)) - f);
}

CARRIER_HD inline double LogD(double x) {
  if (x != x) return x + x;
  if (x < 0.0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0.0) return -std::numeric_limits<double>::infinity();
  if (x == std::numeric_limits<double>::infinity()) return x;
  int e = 0;
  if (x < 0x1.0p-1022) {
    x *= 0x1.0p52;
    e = -52;
  }
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  e += static_cast<int>(bits >> 52) - 1023;
  double m = std::bit_cast<double>((bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL);
  if (m > 1.41421356237309504880) {
    m *= 0.5;
    e += 1;
  }
  const double f = m - 1.0;
  const double s = f / (2.0 + f);
  const double z = s * s;
  double q = 2.0 / 23.0;
  for (int k = 21; k >= 3; k -= 2) q = std::fma(q, z, 2.0 / k);
  const double r = z * q;
  const double hfsq = 0.5 * f * f;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 0x3fe62e42fee00000
  constexpr double kLn2Lo = 1.90821492927058770002e-10;  // 0x3dea39ef35793c76
  const double ef = static_cast<double>(e);
  return ef * kLn2Hi - ((hfsq - (s * (hfsq + r) + ef * kLn2Lo)) - f);
}

}  // namespace portable_detail

struct PortableExp {
  static constexpr const char* kName = "portable";
  template <class T>
  CARRIER_HD static T Exp(T x) {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                  "PortableExp is defined for float and double compute");
    if constexpr (std::is_same_v<T, float>) {
      return portable_detail::ExpF(x);
    } else {
      return portable_detail::ExpD(x);
    }
  }
  // exp2 through exp: 2^x = exp(x ln 2), one extra rounding.
  template <class T>
  CARRIER_HD static T Exp2(T x) {
    return Exp<T>(x * static_cast<T>(0.6931471805599453094172321));
  }
  template <class T>
  CARRIER_HD static T Log(T x) {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                  "PortableExp is defined for float and double compute");
    if constexpr (std::is_same_v<T, float>) {
      return portable_detail::LogF(x);
    } else {
      return portable_detail::LogD(x);
    }
  }
};

struct FastExp {
  static constexpr const char* kName = "fast";
  template <class T>
  CARRIER_HD static T Exp(T x) {
    using std::exp2;
    return exp2(x * static_cast<T>(1.44269504088896340735992468100189214));
  }
  template <class T>
  CARRIER_HD static T Log(T x) {
    using std::log;
    return log(x);
  }
};

}  // namespace carrier
