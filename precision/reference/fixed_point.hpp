// precision/reference/fixed_point.hpp: 128-bit integer helpers shared by the exact and fast
// reference tiers (no MPFR needed).
//
// Contract.
//   U128                 unsigned 128-bit integer (GCC/Clang __int128; the references are
//                        host-only code).
//   MulHi128(a, b)       floor(a * b / 2^128), exact.
//   MulQ127(a, b)        floor(a * b / 2^127), exact; with a, b read as Q1.127 fixed point
//                        (value = integer / 2^127, below 2) it is their product truncated to
//                        Q1.127, error in [0, 2^-127). Requires a * b < 2^255 (product < 2).
//   RoundNearestEven(mant, exp2, sticky, f)
//                        rounds the real number (mant + s) * 2^exp2, where s is 0 when sticky
//                        is false and some value in (0, 1) when it is true, to the nearest
//                        value of the binary format f (f.digits significand bits, smallest
//                        normal 2^f.emin, gradual underflow below it, unbounded exponent above;
//                        ties to even). Returns (significand, q) with result = significand *
//                        2^q exactly, significand <= 2^digits. A sticky value needs at least
//                        one discarded bit (mant wider than the format's quantum allows): the
//                        function checks that and throws std::logic_error otherwise.
//   ToBinary<T>(r, neg)  the rounded value as T (double or long double): exact, or +-inf when
//                        the exponent exceeds T's range, which is round-to-nearest's overflow.
//   RoundWindow<T>(mant, err, exp2)
//                        the correctly rounded T of every real in [(mant - err) 2^exp2,
//                        (mant + err) 2^exp2] when they all round to the same T (rounding is
//                        monotonic, so checking both ends suffices); nullopt otherwise.
// Cost: a few integer instructions; no allocation.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>

namespace carrier::reference {

__extension__ typedef unsigned __int128 U128;

inline U128 MakeU128(std::uint64_t hi, std::uint64_t lo) { return (U128{hi} << 64) | lo; }
inline std::uint64_t Hi64(U128 x) { return static_cast<std::uint64_t>(x >> 64); }
inline std::uint64_t Lo64(U128 x) { return static_cast<std::uint64_t>(x); }

// Number of significant bits of x (0 for 0).
inline int BitLength(U128 x) {
  const std::uint64_t hi = Hi64(x);
  if (hi != 0) return 128 - std::countl_zero(hi);
  return 64 - std::countl_zero(Lo64(x));
}

// The 256-bit product split into its high and low halves.
inline void Mul128x128(U128 a, U128 b, U128* hi, U128* lo) {
  const std::uint64_t a0 = Lo64(a), a1 = Hi64(a), b0 = Lo64(b), b1 = Hi64(b);
  const U128 p00 = U128{a0} * b0, p01 = U128{a0} * b1, p10 = U128{a1} * b0, p11 = U128{a1} * b1;
  const U128 mid = (p00 >> 64) + Lo64(p01) + Lo64(p10);
  *hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
  *lo = (mid << 64) | Lo64(p00);
}

inline U128 MulHi128(U128 a, U128 b) {
  U128 hi, lo;
  Mul128x128(a, b, &hi, &lo);
  return hi;
}

inline U128 MulQ127(U128 a, U128 b) {
  U128 hi, lo;
  Mul128x128(a, b, &hi, &lo);
  return (hi << 1) | (lo >> 127);
}

// A binary floating-point format as rounding needs it: significand bits and smallest normal
// exponent (2^emin); the exponent range above is not bounded here (ToBinary overflows to inf).
struct BinaryFormat {
  int digits;
  int emin;
};

template <class T>
constexpr BinaryFormat FormatOf() {
  return {std::numeric_limits<T>::digits, std::numeric_limits<T>::min_exponent - 1};
}

struct RoundedBinary {
  U128 significand = 0;
  int q = 0;  // the value is significand * 2^q
};

inline RoundedBinary RoundNearestEven(U128 mant, int exp2, bool sticky, BinaryFormat f) {
  if (mant == 0) {
    if (sticky) throw std::logic_error("RoundNearestEven: sticky bits without a significand");
    return {0, 0};
  }
  const int lead = exp2 + BitLength(mant) - 1;  // exponent of the leading bit
  const int q = std::max(lead - f.digits + 1, f.emin - f.digits + 1);
  const int k = q - exp2;  // bits below the result's quantum
  if (k <= 0) {
    if (sticky) throw std::logic_error("RoundNearestEven: sticky bits below an exact result");
    return {mant << (-k), q};
  }
  if (k > 128) return {0, q};  // below half the quantum: mant < 2^128 <= 2^(k-1)
  const U128 sig = k == 128 ? U128{0} : mant >> k;
  const U128 rem = k == 128 ? mant : mant & ((U128{1} << k) - 1);
  const U128 half = U128{1} << (k - 1);
  const bool up = rem > half || (rem == half && (sticky || (sig & 1) != 0));
  return {up ? sig + 1 : sig, q};
}

template <class T>
T ToBinary(const RoundedBinary& r, bool negative) {
  // The significand has at most digits + 1 bits (2^digits after a carry), so the conversion
  // is exact and only the scaling can overflow, to inf, as round-to-nearest does.
  const T magnitude = r.significand == 0 ? T(0) : std::ldexp(static_cast<T>(r.significand), r.q);
  return negative ? -magnitude : magnitude;
}

template <class T>
std::optional<T> RoundWindow(U128 mant, U128 err, int exp2) {
  if (err >= mant) return std::nullopt;  // the window reaches zero: sign and scale unknown
  if (Hi64(mant) >> 63) {                // keep mant + err below 2^128
    err = (err >> 1) + 1;
    mant >>= 1;
    ++exp2;
  }
  constexpr BinaryFormat f = FormatOf<T>();
  const T lo = ToBinary<T>(RoundNearestEven(mant - err, exp2, false, f), false);
  const T hi = ToBinary<T>(RoundNearestEven(mant + err, exp2, false, f), false);
  if (lo != hi) return std::nullopt;
  return lo;
}

}  // namespace carrier::reference
