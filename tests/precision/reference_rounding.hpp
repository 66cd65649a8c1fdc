// tests/precision/reference_rounding.hpp: an independent oracle for RoundToFormat.
//
// Written separately from precision/rounding.cpp and sharing none of its code: it decodes the
// source encoding into (significand m, exponent x), rounds with the textbook guard and sticky
// bits (rounding.cpp compares the whole dropped remainder with a half in 0.64 fixed point,
// on the raw double pattern), applies the overflow table of the contract written out case by
// case, and re-encodes n * 2^q as a double. Integer arithmetic only. The source is any IEEE
// binary encoding up to 64 bits (fp32 for the exhaustive test, fp64 for double inputs).
//
// Result: the bits of the rounded value as a double, or kRefNaN for "some NaN".
#pragma once

#include <bit>
#include <cstdint>
#include <string>

#include "precision/format.hpp"
#include "precision/rounding.hpp"

namespace carrier::test {

enum class RefMode { kRne, kRna, kRz, kRu, kRd, kRo };

inline RefMode ToRefMode(Rounding r) {
  switch (r) {
    case Rounding::kNearestEven:
      return RefMode::kRne;
    case Rounding::kNearestAway:
      return RefMode::kRna;
    case Rounding::kTowardZero:
      return RefMode::kRz;
    case Rounding::kUp:
      return RefMode::kRu;
    case Rounding::kDown:
      return RefMode::kRd;
    default:
      return RefMode::kRo;
  }
}

struct RefFormat {
  int p;
  int emin;
  int emax;
  bool subnormals;
  bool has_inf;
  bool saturate;
  bool top_nan;
  std::uint64_t max_bits;  // largest finite value as double bits (set by MakeRefFormat)
};

inline constexpr std::uint64_t kRefNaN = 0x7ff8000000000000ULL;
inline constexpr std::uint64_t kRefInf = 0x7ff0000000000000ULL;

// n * 2^q as double bits (n < 2^54, q >= -1074, result within the double range).
inline std::uint64_t RefEncodeDouble(std::uint64_t n, int q) {
  if (n == 0) return 0;
  const int width = std::bit_width(n);
  const int lead = q + width - 1;
  if (lead < -1022) return n << (q + 1074);  // a double subnormal: its unit is 2^-1074
  std::uint64_t significand = width <= 53 ? n << (53 - width) : n >> (width - 53);
  return (static_cast<std::uint64_t>(lead + 1023) << 52) |
         (significand & ((std::uint64_t{1} << 52) - 1));
}

inline std::uint64_t RefMaxFinite(const RefFormat& f) {
  const std::uint64_t n_max = (std::uint64_t{1} << f.p) - 1 - (f.top_nan ? 1 : 0);
  return RefEncodeDouble(n_max, f.emax - f.p + 1);
}

// Reads only the Format's fields; none of its accessors.
inline RefFormat ToRefFormat(const Format& f) {
  RefFormat r{f.precision,
              f.emin,
              f.emax,
              f.subnormals,
              f.has_inf,
              f.saturate,
              f.top_significand_is_nan,
              0};
  r.max_bits = RefMaxFinite(r);
  return r;
}

// What the contract says an overflowing (or infinite) result becomes, sign not included.
inline std::uint64_t RefOverflow(RefMode mode, bool negative, const RefFormat& f) {
  bool to_max = false;
  switch (mode) {
    case RefMode::kRne:
    case RefMode::kRna:
      to_max = false;
      break;
    case RefMode::kRz:
    case RefMode::kRo:
      to_max = true;
      break;
    case RefMode::kRu:
      to_max = negative;
      break;
    case RefMode::kRd:
      to_max = !negative;
      break;
  }
  if (f.saturate || to_max) return f.max_bits;
  return f.has_inf ? kRefInf : kRefNaN;
}

// Marks a candidate beyond the largest finite value.
inline constexpr std::uint64_t kRefOverflow = ~std::uint64_t{0};

// n * 2^q as double bits, or kRefOverflow when it exceeds the format's largest finite value.
inline std::uint64_t RefCandidate(std::uint64_t n, int q, const RefFormat& f) {
  if (n == (std::uint64_t{1} << f.p)) {  // carried into the next binade
    n >>= 1;
    ++q;
  }
  if (n != 0) {
    const int lead = q + std::bit_width(n) - 1;
    const std::uint64_t n_max = (std::uint64_t{1} << f.p) - 1 - (f.top_nan ? 1 : 0);
    if (lead > f.emax || (lead == f.emax && n > n_max)) return kRefOverflow;
  }
  return RefEncodeDouble(n, q);
}

// The mode-independent half of the reference: |source| decoded and cut at the target
// quantum. The exhaustive test computes it once per magnitude and finishes it for every mode
// and both signs.
struct RefCore {
  enum Kind : std::uint8_t { kFinite, kZero, kInf, kNaN } kind;
  bool guard;        // first dropped bit
  bool sticky;       // any later dropped bit
  bool odd;          // n is odd
  std::uint64_t lo;  // RefCandidate(n, q): the neighbour toward zero
  std::uint64_t hi;  // RefCandidate(n + 1, q): the neighbour away from zero
};

template <int kSrcTrailing, int kSrcExponentBits>
RefCore RefDecode(std::uint64_t magnitude_bits, const RefFormat& f) {
  constexpr int kSrcBias = (1 << (kSrcExponentBits - 1)) - 1;
  constexpr std::uint64_t kExpAllOnes = (std::uint64_t{1} << kSrcExponentBits) - 1;
  const std::uint64_t exponent_field = (magnitude_bits >> kSrcTrailing) & kExpAllOnes;
  const std::uint64_t trailing = magnitude_bits & ((std::uint64_t{1} << kSrcTrailing) - 1);
  RefCore c{RefCore::kFinite, false, false, false, 0, 0};
  if (exponent_field == kExpAllOnes) {
    c.kind = trailing != 0 ? RefCore::kNaN : RefCore::kInf;
    return c;
  }
  if (exponent_field == 0 && trailing == 0) {
    c.kind = RefCore::kZero;
    return c;
  }

  // |value| = m * 2^x exactly.
  const std::uint64_t m =
      exponent_field != 0 ? (trailing | (std::uint64_t{1} << kSrcTrailing)) : trailing;
  const int x =
      static_cast<int>(exponent_field != 0 ? exponent_field : 1) - kSrcBias - kSrcTrailing;
  const int lead = x + std::bit_width(m) - 1;

  // The quantum 2^q of the target values around |value|.
  int q;
  if (lead >= f.emin) {
    q = lead - (f.p - 1);
  } else if (f.subnormals) {
    q = f.emin - (f.p - 1);
  } else {
    q = f.emin;  // only 0 and 2^emin below the normal range
  }

  // n = floor(|value| / 2^q); guard = first dropped bit; sticky = any later dropped bit.
  std::uint64_t n = 0;
  const int shift = q - x;
  if (shift <= 0) {
    n = m << (-shift);
  } else if (shift > 63) {
    c.sticky = true;  // m < 2^63, so the guard position 2^(shift-1) is above m
  } else {
    n = m >> shift;
    c.guard = ((m >> (shift - 1)) & 1) != 0;
    c.sticky = (m & ((std::uint64_t{1} << (shift - 1)) - 1)) != 0;
  }
  c.odd = (n & 1) != 0;
  c.lo = RefCandidate(n, q, f);
  c.hi = RefCandidate(n + 1, q, f);
  return c;
}

// The rounded value for one mode and sign, as double bits (kRefNaN for NaN).
template <RefMode kMode>
std::uint64_t RefFinish(const RefCore& c, bool negative, const RefFormat& f) {
  const std::uint64_t sign = negative ? std::uint64_t{1} << 63 : 0;
  switch (c.kind) {
    case RefCore::kNaN:
      return kRefNaN;
    case RefCore::kZero:
      return sign;
    case RefCore::kInf:
      if (f.saturate) return sign | f.max_bits;
      return f.has_inf ? (sign | kRefInf) : kRefNaN;
    case RefCore::kFinite:
      break;
  }
  // Whether to take the neighbour away from zero. Bitwise logic instead of branches: the
  // exhaustive test feeds consecutive patterns whose guard and sticky bits a branch predictor
  // cannot guess.
  const std::uint64_t g = c.guard, s = c.sticky, lsb = c.odd, neg = negative;
  std::uint64_t away = 0;
  switch (kMode) {
    case RefMode::kRne:
      away = g & (s | lsb);
      break;
    case RefMode::kRna:
      away = g;
      break;
    case RefMode::kRz:
      break;
    case RefMode::kRu:
      away = (g | s) & (neg ^ 1);
      break;
    case RefMode::kRd:
      away = (g | s) & neg;
      break;
    case RefMode::kRo:
      away = (g | s) & (lsb ^ 1);  // n | 1: an even n moves up, an odd one stays
      break;
  }
  const std::uint64_t magnitude = away ? c.hi : c.lo;
  if (magnitude == kRefOverflow) {
    const std::uint64_t over = RefOverflow(kMode, negative, f);
    return over == kRefNaN ? kRefNaN : (sign | over);
  }
  return sign | magnitude;
}

template <int kSrcTrailing, int kSrcExponentBits, RefMode kMode>
std::uint64_t RefRound(std::uint64_t src, const RefFormat& f) {
  constexpr int kSignShift = kSrcExponentBits + kSrcTrailing;
  const bool negative = ((src >> kSignShift) & 1) != 0;
  const std::uint64_t magnitude = src & ((std::uint64_t{1} << kSignShift) - 1);
  return RefFinish<kMode>(RefDecode<kSrcTrailing, kSrcExponentBits>(magnitude, f), negative, f);
}

// Runtime dispatch over the mode (the exhaustive test instantiates per mode instead).
template <int kSrcTrailing, int kSrcExponentBits>
std::uint64_t RefRoundAny(std::uint64_t src, const RefFormat& f, RefMode mode) {
  switch (mode) {
    case RefMode::kRne:
      return RefRound<kSrcTrailing, kSrcExponentBits, RefMode::kRne>(src, f);
    case RefMode::kRna:
      return RefRound<kSrcTrailing, kSrcExponentBits, RefMode::kRna>(src, f);
    case RefMode::kRz:
      return RefRound<kSrcTrailing, kSrcExponentBits, RefMode::kRz>(src, f);
    case RefMode::kRu:
      return RefRound<kSrcTrailing, kSrcExponentBits, RefMode::kRu>(src, f);
    case RefMode::kRd:
      return RefRound<kSrcTrailing, kSrcExponentBits, RefMode::kRd>(src, f);
    case RefMode::kRo:
      return RefRound<kSrcTrailing, kSrcExponentBits, RefMode::kRo>(src, f);
  }
  return kRefNaN;
}

inline std::uint64_t RefRoundFloat(std::uint32_t bits, const RefFormat& f, RefMode mode) {
  return RefRoundAny<23, 8>(bits, f, mode);
}
inline std::uint64_t RefRoundDouble(std::uint64_t bits, const RefFormat& f, RefMode mode) {
  return RefRoundAny<52, 11>(bits, f, mode);
}

// A RoundToFormat result agrees with the reference: the same bits, or both NaN.
inline bool RefAgrees(std::uint64_t want, double got) {
  const std::uint64_t got_bits = std::bit_cast<std::uint64_t>(got);
  if (want == kRefNaN) return got != got;
  return got_bits == want;
}

inline std::string Hex(std::uint64_t v, int digits) {
  static const char* kDigits = "0123456789abcdef";
  std::string s = "0x";
  for (int i = digits - 1; i >= 0; --i) s += kDigits[(v >> (4 * i)) & 0xF];
  return s;
}

}  // namespace carrier::test
