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
#include <cstddef>
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

// Independent additions in a batch, for the fast replay's levels (core/replay.hpp, through
// Sum<T>::CombineGathered): out[k] = A[ia[k]] + B[ib[k]] for k < n, each T's own operator+, so
// bit for bit what a loop of them gives (out may not overlap an operand read in the same
// call). Adjacent and FromZero are the same for x[k] + x[k + 1] and +0 + x[k], Chains for
// independent chains of additions (blocked tiles, strided lanes, a seq chain). The primary
// template is those loops. A scalar type with a vector form specialises it with kVector = true
// (precision/emulated.hpp); the replay only batches where kVector holds, and keeps its scalar
// order of evaluation elsewhere.
template <class T>
struct GatheredAdd {
  static constexpr bool kVector = false;
  static void Run(const T* A, const std::uint32_t* ia, const T* B, const std::uint32_t* ib, T* out,
                  std::size_t n) {
    for (std::size_t k = 0; k < n; ++k) out[k] = A[ia[k]] + B[ib[k]];
  }
  // out[k] = x[k] + x[k + 1], each T's own operator+.
  static void Adjacent(const T* x, T* out, std::size_t n) {
    for (std::size_t k = 0; k < n; ++k) out[k] = x[k] + x[k + 1];
  }
  // out[k] = +0 + x[k] (a Sum's first push from Identity), each T's own operator+.
  static void FromZero(const T* x, T* out, std::size_t n) {
    for (std::size_t k = 0; k < n; ++k) out[k] = ScalarTraits<T>::Zero() + x[k];
  }
  // `lanes` independent chains advanced together: for j < count, for w < lanes,
  //   acc[w] = acc[w] + x[first[w] + j * stride],
  // each T's own operator+. Every chain adds its inputs in its own order; no two lanes share a
  // state, so a specialisation may advance them in any interleaving (a vector of lanes, or one
  // lane after another).
  static void Chains(T* acc, const T* x, const std::uint64_t* first, std::size_t lanes,
                     std::uint64_t count, std::uint64_t stride) {
    for (std::uint64_t j = 0; j < count; ++j) {
      const std::uint64_t off = j * stride;
      for (std::size_t w = 0; w < lanes; ++w) acc[w] = acc[w] + x[first[w] + off];
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
