// core/scalar.hpp: what a carrier may ask of its compute scalar T.
//
// Carriers are written against ScalarTraits<T> and the arithmetic operators only, so that the
// precision layer can plug in emulated formats and MPFR by specialising ScalarTraits. The
// primary template covers float, double and long double.
//
// Contract of BitEqual: true when the two values have identical bits, except that any NaN
// equals any NaN (payloads are not part of carrier's special-values contract).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/platform.hpp"

namespace carrier {

template <class T>
struct ScalarTraits {
  static_assert(std::is_floating_point_v<T>,
                "ScalarTraits<T> must be specialised for non-builtin scalars");
  CARRIER_HD static constexpr T Zero() { return T(0); }
  CARRIER_HD static constexpr T NegZero() { return -T(0); }
  CARRIER_HD static constexpr T One() { return T(1); }
  CARRIER_HD static constexpr T Infinity() { return std::numeric_limits<T>::infinity(); }
  CARRIER_HD static constexpr T QuietNaN() { return std::numeric_limits<T>::quiet_NaN(); }
  CARRIER_HD static T FromCount(std::uint64_t n) { return static_cast<T>(n); }
  CARRIER_HD static bool IsNaN(T x) { return x != x; }
  CARRIER_HD static bool IsInf(T x) { return x == Infinity() || x == -Infinity(); }
  CARRIER_HD static bool IsFinite(T x) { return !IsNaN(x) && !IsInf(x); }
  CARRIER_HD static bool SignBit(T x) {
    using std::signbit;
    return signbit(x);
  }
  CARRIER_HD static T Abs(T x) {
    using std::fabs;
    return fabs(x);
  }
  CARRIER_HD static T Sqrt(T x) {
    using std::sqrt;
    return sqrt(x);
  }
  static bool BitEqual(T a, T b) {
    if (IsNaN(a) || IsNaN(b)) return IsNaN(a) && IsNaN(b);
    if constexpr (std::is_same_v<T, long double>) {
      // x87 long double has 6 padding bytes: compare value and sign instead of raw bytes.
      return a == b && SignBit(a) == SignBit(b);
    } else {
      unsigned char ba[sizeof(T)], bb[sizeof(T)];
      std::memcpy(ba, &a, sizeof(T));
      std::memcpy(bb, &b, sizeof(T));
      return std::memcmp(ba, bb, sizeof(T)) == 0;
    }
  }
};

// Integers inside states (counts, indices) compare by value.
template <class T>
bool FieldBitEqual(const T& a, const T& b) {
  if constexpr (std::is_integral_v<T>) {
    return a == b;
  } else if constexpr (std::is_array_v<T>) {
    for (std::size_t i = 0; i < std::extent_v<T>; ++i)
      if (!FieldBitEqual(a[i], b[i])) return false;
    return true;
  } else {
    return ScalarTraits<T>::BitEqual(a, b);
  }
}

}  // namespace carrier
