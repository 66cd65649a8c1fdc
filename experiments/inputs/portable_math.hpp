// experiments/inputs/portable_math.hpp: the input generators' own log, cos(2 pi u) and exp,
// written so that every machine computes the same bits (generator carrier-gen/2).
//
// Why not libm: glibc picks an implementation of log/cos/exp at load time (FMA or not), other
// libms round differently, and a compiler may call a vector libm; any of these changes the
// inputs, and so every error measured on them. These functions use only IEEE binary64 +, -, *,
// / and sqrt (each correctly rounded, so the same on every IEEE machine), exact bit
// manipulation (integer shifts, masks, adds on the representation) and constants written as
// hexadecimal literals. The project compiles with -ffp-contract=off, never -ffast-math, so the
// compiler may neither fuse a multiply-add nor reassociate: the operations run as written. On
// x86-64 doubles use SSE2 (FLT_EVAL_METHOD 0: no x87 excess precision; checked below); AArch64
// is the same. A vectorised loop calls the same inline function per lane: each lane performs
// the same operations in the same order, so the vector and scalar paths give the same bits
// (tested: tests/experiments/test_generators.cpp compares the block path in generators.cpp with
// a scalar call compiled in the test, for many values, near every reduction boundary too).
// Every function is branch free (selects only) so that GCC vectorises a loop over them
// (generators.cpp compiles the loop for the baseline ISA, AVX2 and AVX-512 and runs the best;
// each is tested against the scalar call); generators.cpp is compiled with -fno-math-errno
// (sqrt sets no errno) and -fno-trapping-math (a select may compute both sides), which change
// no value: they only allow the vector form.
//
// Accuracy (measured against long double by tests/experiments/test_generators.cpp, which
// asserts these bounds and prints the worst it saw):
//   PortableLog(x):    x a positive normal double; error <= 1 ulp.
//   PortableCos2Pi(u): |u| < 2^51; cos(2 pi u) with the reduction done exactly in u (u minus
//                      its nearest integer, quarter-period reflections by Sterbenz-exact
//                      subtractions), so the zeros at u = 1/4 and 3/4 are exact and values near
//                      them keep full relative accuracy; error <= 2 ulp.
//   PortableExp(x):    |x| <= 708 (a normal result); error <= 1 ulp.
// The polynomials are Taylor series truncated where the remainder is below 2^-60 relative on
// the reduced range (log: atanh series in s = f / (2 + f), |s| <= 0.172, to s^19; cos and sin
// of 2 pi t, |t| <= 1/8, to (2 pi t)^16 and ^17; exp on |r| <= ln2 / 2, to r^13), so the error
// is that of the rounding in the evaluation. The log follows the classic fdlibm arrangement
// (Sun's e_log.c: f - (hfsq - s (hfsq + R)) with ln 2 split in two).
#pragma once

#include <bit>
#include <cfloat>
#include <cstdint>

namespace carrier::inputs {

static_assert(FLT_EVAL_METHOD == 0, "carrier-gen/2 needs doubles evaluated in binary64");

namespace portable_detail {

inline std::uint64_t Bits(double x) { return std::bit_cast<std::uint64_t>(x); }
inline double FromBits(std::uint64_t b) { return std::bit_cast<double>(b); }
// A small signed integer (|k| < 2^51) as a double, exactly, without an int-to-float conversion
// instruction (which SSE2 lacks for 64-bit lanes): 2^52 + 2^51 + k has k in its low bits.
inline double SmallIntToDouble(std::int64_t k) {
  return FromBits(Bits(0x1.8p52) + static_cast<std::uint64_t>(k)) - 0x1.8p52;
}

// ln 2 = kLn2Hi + kLn2Lo, kLn2Hi with 32 significant bits (k kLn2Hi is exact for |k| < 2^21).
inline constexpr double kLn2Hi = 0x1.62e42feep-1;
inline constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
inline constexpr double kInvLn2 = 0x1.71547652b82fep+0;

}  // namespace portable_detail

// ln x for a positive normal double x (error <= 1 ulp).
inline double PortableLog(double x) {
  using namespace portable_detail;
  // x = 2^k m with m in [sqrt(2)/2, sqrt(2)): adding 1.0's exponent minus sqrt(2)/2's top bits
  // carries into the exponent exactly when the mantissa is at or above sqrt(2)'s.
  const std::uint64_t shifted = Bits(x) + (0x3ff0000000000000ULL - 0x3fe6a09e00000000ULL);
  const std::int64_t k = static_cast<std::int64_t>(shifted >> 52) - 1023;
  const double m = FromBits((shifted & 0x000fffffffffffffULL) + 0x3fe6a09e00000000ULL);
  const double f = m - 1.0;  // exact (Sterbenz)
  const double s = f / (2.0 + f);
  const double z = s * s;
  // R = 2 z / 3 + 2 z^2 / 5 + ... + 2 z^9 / 19 (ln(1 + f) = 2 atanh(s) = 2 s + s R).
  const double r =
      z *
      (0x1.5555555555555p-1 +
       z * (0x1.999999999999ap-2 +
            z * (0x1.2492492492492p-2 +
                 z * (0x1.c71c71c71c71cp-3 +
                      z * (0x1.745d1745d1746p-3 +
                           z * (0x1.3b13b13b13b14p-3 +
                                z * (0x1.1111111111111p-3 +
                                     z * (0x1.e1e1e1e1e1e1ep-4 + z * 0x1.af286bca1af28p-4))))))));
  const double hfsq = 0.5 * f * f;
  const double dk = SmallIntToDouble(k);
  return dk * kLn2Hi - ((hfsq - (s * (hfsq + r) + dk * kLn2Lo)) - f);
}

// cos(2 pi u) for |u| < 2^51 (error <= 2 ulp; the reduction in u is exact).
inline double PortableCos2Pi(double u) {
  using namespace portable_detail;
  const double nearest = (u + 0x1.8p52) - 0x1.8p52;  // u's nearest integer (ties to even)
  const double a = FromBits(Bits(u - nearest) & 0x7fffffffffffffffULL);  // in [0, 1/2], exact
  // cos(2 pi a) = cos(2 pi a)          for a <= 1/8,
  //             = sin(2 pi (1/4 - a))  for 1/8 < a <= 3/8,
  //             = -cos(2 pi (1/2 - a)) for a > 3/8; each argument is exact and at most 1/8.
  const bool middle = (a > 0.125) & (a <= 0.375);
  const bool upper = a > 0.375;
  // t = 0.25 - a, 0.5 - a or -a (cos is even): one subtraction from a chosen constant.
  const double t = (upper ? 0.5 : (middle ? 0.25 : 0.0)) - a;
  const double t2 = t * t;
  // cos(2 pi t) = 1 - t^2 (C1 - t^2 (C2 - ...)), Ck = (2 pi)^2k / (2k)!.
  const double c = 1.0 - t2 * (0x1.3bd3cc9be45dep+4 -
                               t2 * (0x1.03c1f081b5ac4p+6 -
                                     t2 * (0x1.55d3c7e3cbffap+6 -
                                           t2 * (0x1.e1f506891babbp+5 -
                                                 t2 * (0x1.a6d1f2a204a8cp+4 -
                                                       t2 * (0x1.f9d38a3763cc3p+2 -
                                                             t2 * (0x1.b6e24f44b128fp+0 -
                                                                   t2 * 0x1.20c62c2f2d7f5p-2)))))));
  // sin(2 pi t) = t (S0 - t^2 (S1 - ...)), Sk = (2 pi)^(2k+1) / (2k+1)!.
  const double s = t * (0x1.921fb54442d18p+2 -
                        t2 * (0x1.4abbce625be53p+5 -
                              t2 * (0x1.466bc6775aae2p+6 -
                                    t2 * (0x1.32d2cce62bd86p+6 -
                                          t2 * (0x1.50783487ee782p+5 -
                                                t2 * (0x1.e3074fde8871fp+3 -
                                                      t2 * (0x1.e8f434d018d63p+1 -
                                                            t2 * (0x1.6fadb9f155744p-1 -
                                                                  t2 * 0x1.aaec32af93359p-4))))))));
  return middle ? s : (upper ? -c : c);
}

// e^x for |x| <= 708 (error <= 1 ulp).
inline double PortableExp(double x) {
  using namespace portable_detail;
  // k = x / ln 2 to the nearest integer, read from the low bits of 1.5 2^52 + x / ln 2.
  const double shifted = x * kInvLn2 + 0x1.8p52;
  const double dk = shifted - 0x1.8p52;
  const std::int64_t k =
      static_cast<std::int64_t>(Bits(shifted) & 0x000fffffffffffffULL) - (std::int64_t{1} << 51);
  const double r = (x - dk * kLn2Hi) - dk * kLn2Lo;  // |r| <= ln 2 / 2 (plus a few ulp)
  // e^r = 1 + (r + r^2 (1/2! + r (1/3! + ... + r / 13!))).
  const double p =
      0x1.0p-1 +
      r * (0x1.5555555555555p-3 +
           r * (0x1.5555555555555p-5 +
                r * (0x1.1111111111111p-7 +
                     r * (0x1.6c16c16c16c17p-10 +
                          r * (0x1.a01a01a01a01ap-13 +
                               r * (0x1.a01a01a01a01ap-16 +
                                    r * (0x1.71de3a556c734p-19 +
                                         r * (0x1.27e4fb7789f5cp-22 +
                                              r * (0x1.ae64567f544e4p-26 +
                                                   r * (0x1.1eed8eff8d898p-29 +
                                                        r * 0x1.6124613a86d09p-33))))))))));
  const double er = 1.0 + (r + r * r * p);
  return er * FromBits(static_cast<std::uint64_t>(k + 1023) << 52);  // exact: a power of two
}

// The i-th uniform of a SplitMix64 stream, (hash >> 11) 2^-53, without a 64-bit int-to-float
// conversion (SSE2 has none for vectors): the 53 bits as 27 high and 26 low, each exact.
inline double UnitFromHash(std::uint64_t hash) {
  using portable_detail::Bits;
  using portable_detail::FromBits;
  const std::uint64_t a = hash >> 11;
  const double hi = FromBits(Bits(0x1.0p52) | (a >> 26)) - 0x1.0p52;
  const double lo = FromBits(Bits(0x1.0p52) | (a & 0x3ffffffULL)) - 0x1.0p52;
  return (hi * 0x1.0p26 + lo) * 0x1.0p-53;  // exact: 53 bits
}

// Box-Muller's cosine branch on uniforms u1, u2 in [0, 1), u1 raised to 2^-53 when 0: one N(0,1)
// value.
inline double BoxMuller(double u1, double u2) {
  const double v1 = u1 > 0x1.0p-53 ? u1 : 0x1.0p-53;
  return __builtin_sqrt(-2.0 * PortableLog(v1)) * PortableCos2Pi(u2);
}

}  // namespace carrier::inputs
