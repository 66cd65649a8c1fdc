// precision/float128.hpp: Float128, IEEE 754 binary128 as a compute scalar (Boost.Multiprecision's
// float128 over GCC's __float128 and libquadmath). Compiled only where the build defines
// CARRIER_HAVE_FLOAT128 (experiments/CMakeLists.txt: GCC or Clang with libquadmath, never in
// README command (a)'s main-job build); without it this header is empty.
//
// Contract.
//   Value     binary128: p = 113 bits (the implicit bit included), emin = -16382, emax = 16383,
//             subnormals, +-0, +-inf and NaN; unit roundoff u = 2^-113 (round to nearest even
//             is the only mode: the hardware has no binary128, so every operation is GCC's soft
//             float, which rounds to nearest even).
//   Ops       + - * / and sqrt are correctly rounded (GCC's soft-fp, as Boost's float128_backend
//             calls the __float128 operators and sqrtq): a carrier over Float128 computes, step
//             for step, exactly what a loop over __float128 computes. exp, exp2, log found by ADL
//             are libquadmath's expq, exp2q, logq: faithful, not proven correctly rounded.
//   In/out    a double converts exactly (53 <= 113 bits, the exponent range contains double's);
//             to long double rounds to nearest (64 bits). SplitToLongDouble gives the exact
//             value as two long doubles, hi = RN64(x) and lo = x - hi (exact: x has at most 113
//             significant bits, hi takes the top 64, the remainder fits in 49), which is how a
//             replay's result reaches the error measurement without losing bits.
//   Threads   no state: libquadmath's functions are pure.
// Assumes no FMA contraction and no -ffast-math (the project's flags), like every carrier.
#pragma once

#if defined(CARRIER_HAVE_FLOAT128) && CARRIER_HAVE_FLOAT128

#include <boost/multiprecision/float128.hpp>
#include <cstdint>
#include <cstring>

#include "core/scalar.hpp"

namespace carrier {

using Float128 = boost::multiprecision::float128;

inline constexpr int kFloat128Precision = 113;  // p, the implicit bit included

// hi + lo == x exactly (see the contract); for inf and NaN lo = 0.
inline void SplitToLongDouble(const Float128& x, long double& hi, long double& lo) {
  hi = static_cast<long double>(x);
  lo = 0;
  if (boost::multiprecision::isfinite(x) && boost::multiprecision::isfinite(Float128(hi)))
    lo = static_cast<long double>(x - Float128(hi));
}

template <>
struct ScalarTraits<Float128> {
  static Float128 Zero() { return Float128(0); }
  static Float128 NegZero() { return -Float128(0); }
  static Float128 One() { return Float128(1); }
  static Float128 Infinity() { return std::numeric_limits<Float128>::infinity(); }
  static Float128 QuietNaN() { return std::numeric_limits<Float128>::quiet_NaN(); }
  static Float128 FromCount(std::uint64_t n) { return Float128(n); }  // exact: 64 <= 113 bits
  static bool IsNaN(const Float128& x) { return boost::multiprecision::isnan(x); }
  static bool IsInf(const Float128& x) { return boost::multiprecision::isinf(x); }
  static bool IsFinite(const Float128& x) { return boost::multiprecision::isfinite(x); }
  static bool SignBit(const Float128& x) { return boost::multiprecision::signbit(x) != 0; }
  static Float128 Abs(const Float128& x) { return boost::multiprecision::fabs(x); }
  static Float128 Sqrt(const Float128& x) { return boost::multiprecision::sqrt(x); }
  // Identical bits (binary128 has no padding); any NaN equals any NaN.
  static bool BitEqual(const Float128& a, const Float128& b) {
    if (IsNaN(a) || IsNaN(b)) return IsNaN(a) && IsNaN(b);
    const auto va = a.backend().value(), vb = b.backend().value();
    return std::memcmp(&va, &vb, sizeof va) == 0;
  }
};

}  // namespace carrier

#endif  // CARRIER_HAVE_FLOAT128
