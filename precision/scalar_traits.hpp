// precision/scalar_traits.hpp: Half and BFloat16 as compute scalars, and every ScalarTraits
// specialisation of the precision layer in one include (EmulatedOracle's and Mpfr's live with their
// types, in emulated_oracle.hpp and mpfr_scalar.hpp, so that each of those headers is usable
// alone).
//
// Contract for Half and BFloat16 arithmetic (free operators and functions in namespace
// carrier, found by ADL):
//   + - * / and sqrt convert both operands to float (exact), compute in float, and round the
//     float result once to the 16-bit type, ties to even (Half(float) / BFloat16(float)).
//     That is exactly CUDA's __half / __nv_bfloat16 operator semantics on the host (cuda_fp16.hpp
//     and cuda_bf16.hpp: __hadd etc. are __float2half(fa + fb) there), and it is the correctly
//     rounded result: float has q = 24 >= 2p + 2 bits for p = 11 (fp16) and p = 8 (bf16), so
//     the double rounding is innocuous (Figueroa, SIGNUM 1995). Unary - flips the sign bit
//     (exact, NaN stays NaN). Subnormals are kept, overflow gives +-inf, NaN results are the
//     canonical 0x7FFF.
//   fma(a, b, c) rounds once: a*b is exact in double, the sum is turned into its round-to-odd
//     double (TwoSum), which then rounds correctly to 16 bits (what __hfma does on a GPU).
//   exp, exp2, log: the float function of the float value, rounded to 16 bits (as CUDA's
//     hexp/hlog compute through float); within about one 16-bit ulp, not always correctly
//     rounded.
//   Comparisons are those of the float values (IEEE: NaN unordered, +0 == -0).
// The operators are constrained templates, so a later non-template operator for Half in
// half.hpp would take precedence instead of clashing.
// Assumes no FMA contraction and no -ffast-math (the project's flags), like every carrier.
#pragma once

#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstring>

#include "core/platform.hpp"
#include "core/scalar.hpp"
#include "precision/bfloat16.hpp"
#include "precision/emulated_oracle.hpp"
#include "precision/half.hpp"
#include "precision/mpfr_scalar.hpp"

namespace carrier {

template <class H>
concept Binary16Scalar = std::same_as<H, Half> || std::same_as<H, BFloat16>;

namespace binary16_arith {

CARRIER_HD inline std::uint64_t Bits(double d) {
  std::uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}
CARRIER_HD inline double FromBits(std::uint64_t u) {
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
}

// hi = RN(x) != 0 or x itself, err = x - hi exactly: the round-to-odd double of x.
CARRIER_HD inline double RoundToOdd(double hi, double err) {
  if (err == 0) return hi;
  std::uint64_t bits = Bits(hi);
  if ((bits & 1) != 0) return hi;
  return FromBits(((err > 0) == (hi > 0)) ? bits + 1 : bits - 1);
}

// a + b as the round-to-odd double (Knuth's TwoSum; a + b must not overflow).
CARRIER_HD inline double SumToOdd(double a, double b) {
  const double hi = a + b;
  if (hi == 0) return hi;
  const double bb = hi - a;
  const double err = (a - (hi - bb)) + (b - bb);
  return RoundToOdd(hi, err);
}

// n as the round-to-odd double: exact below 2^53, else split into two exact halves.
CARRIER_HD inline double CountToOdd(std::uint64_t n) {
  if (n < (std::uint64_t{1} << 53)) return static_cast<double>(n);
  return SumToOdd(static_cast<double>(n >> 32) * 4294967296.0,
                  static_cast<double>(n & 0xffffffffULL));
}

}  // namespace binary16_arith

template <Binary16Scalar H>
CARRIER_HD H operator+(H a, H b) {
  return H(a.ToFloat() + b.ToFloat());
}
template <Binary16Scalar H>
CARRIER_HD H operator-(H a, H b) {
  return H(a.ToFloat() - b.ToFloat());
}
template <Binary16Scalar H>
CARRIER_HD H operator*(H a, H b) {
  return H(a.ToFloat() * b.ToFloat());
}
template <Binary16Scalar H>
CARRIER_HD H operator/(H a, H b) {
  return H(a.ToFloat() / b.ToFloat());
}
template <Binary16Scalar H>
CARRIER_HD H operator-(H a) {
  return H::FromBits(static_cast<std::uint16_t>(a.bits ^ 0x8000u));
}
template <Binary16Scalar H>
CARRIER_HD H operator+(H a) {
  return a;
}
template <Binary16Scalar H>
CARRIER_HD H& operator+=(H& a, H b) {
  return a = a + b;
}
template <Binary16Scalar H>
CARRIER_HD H& operator-=(H& a, H b) {
  return a = a - b;
}
template <Binary16Scalar H>
CARRIER_HD H& operator*=(H& a, H b) {
  return a = a * b;
}
template <Binary16Scalar H>
CARRIER_HD H& operator/=(H& a, H b) {
  return a = a / b;
}

template <Binary16Scalar H>
CARRIER_HD bool operator==(H a, H b) {
  return a.ToFloat() == b.ToFloat();
}
// Written out rather than as <=>: std::partial_ordering is not usable in device code.
template <Binary16Scalar H>
CARRIER_HD bool operator<(H a, H b) {
  return a.ToFloat() < b.ToFloat();
}
template <Binary16Scalar H>
CARRIER_HD bool operator<=(H a, H b) {
  return a.ToFloat() <= b.ToFloat();
}
template <Binary16Scalar H>
CARRIER_HD bool operator>(H a, H b) {
  return a.ToFloat() > b.ToFloat();
}
template <Binary16Scalar H>
CARRIER_HD bool operator>=(H a, H b) {
  return a.ToFloat() >= b.ToFloat();
}

template <Binary16Scalar H>
CARRIER_HD H sqrt(H a) {
  return H(std::sqrt(a.ToFloat()));
}
template <Binary16Scalar H>
CARRIER_HD H abs(H a) {
  return H::FromBits(static_cast<std::uint16_t>(a.bits & 0x7FFFu));
}
template <Binary16Scalar H>
CARRIER_HD H fabs(H a) {
  return abs(a);
}
template <Binary16Scalar H>
CARRIER_HD H exp(H a) {
  return H(std::exp(a.ToFloat()));
}
template <Binary16Scalar H>
CARRIER_HD H exp2(H a) {
  return H(std::exp2(a.ToFloat()));
}
template <Binary16Scalar H>
CARRIER_HD H log(H a) {
  return H(std::log(a.ToFloat()));
}
template <Binary16Scalar H>
CARRIER_HD H fma(H a, H b, H c) {
  const double x = a.ToDouble(), y = b.ToDouble(), z = c.ToDouble();
  const double p = x * y;  // exact: two 11-bit (or 8-bit) significands, no under/overflow
  if (!std::isfinite(p) || !std::isfinite(z)) return H(p + z);  // inf or NaN: IEEE
  return H(binary16_arith::SumToOdd(p, z));
}

namespace binary16_arith {

// ScalarTraits for a 16-bit IEEE-style layout with the given exponent field and 1.0 patterns.
template <class H, std::uint16_t kExponentMask, std::uint16_t kOneBits>
struct Traits {
  CARRIER_HD static constexpr H Zero() { return H::FromBits(0x0000); }
  CARRIER_HD static constexpr H NegZero() { return H::FromBits(0x8000); }
  CARRIER_HD static constexpr H One() { return H::FromBits(kOneBits); }
  CARRIER_HD static constexpr H Infinity() { return H::FromBits(kExponentMask); }
  // The canonical NaN every conversion produces (CUDA's too).
  CARRIER_HD static constexpr H QuietNaN() { return H::FromBits(0x7FFF); }
  // Rounded once (to nearest even), exact while n < 2^p; large counts overflow to inf.
  CARRIER_HD static H FromCount(std::uint64_t n) { return H(CountToOdd(n)); }
  CARRIER_HD static bool IsNaN(H x) { return (x.bits & 0x7FFFu) > kExponentMask; }
  CARRIER_HD static bool IsInf(H x) { return (x.bits & 0x7FFFu) == kExponentMask; }
  CARRIER_HD static bool IsFinite(H x) { return (x.bits & kExponentMask) != kExponentMask; }
  CARRIER_HD static bool SignBit(H x) { return (x.bits & 0x8000u) != 0; }
  CARRIER_HD static H Abs(H x) { return H::FromBits(static_cast<std::uint16_t>(x.bits & 0x7FFFu)); }
  CARRIER_HD static H Sqrt(H x) { return sqrt(x); }
  // Identical bits, except that any NaN equals any NaN.
  static bool BitEqual(H a, H b) {
    if (IsNaN(a) || IsNaN(b)) return IsNaN(a) && IsNaN(b);
    return a.bits == b.bits;
  }
};

}  // namespace binary16_arith

template <>
struct ScalarTraits<Half> : binary16_arith::Traits<Half, 0x7C00, 0x3C00> {};
template <>
struct ScalarTraits<BFloat16> : binary16_arith::Traits<BFloat16, 0x7F80, 0x3F80> {};

}  // namespace carrier
