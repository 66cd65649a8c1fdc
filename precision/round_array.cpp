#include "precision/round_array.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/hash.hpp"

namespace carrier {
namespace {

// The storage type's pattern: T's unsigned integer of the same width and its fraction bits.
template <class T>
struct Storage;
template <>
struct Storage<double> {
  using Bits = std::uint64_t;
  static constexpr int kFractionBits = 52;
};
template <>
struct Storage<float> {
  using Bits = std::uint32_t;
  static constexpr int kFractionBits = 23;
};

// The binades [2^emin, 2^emax) of f as patterns of T: there the quantum is 2^(e-p+1), so
// rounding drops the constant `drop` = fraction bits - (p - 1) low bits of the pattern, and no
// rounding can overflow (max finite >= 2^emax, also for E4M3's top-NaN rule). A magnitude
// pattern m is inside when lo <= m < hi; both are below the sign bit, so the top bit of
// (m - lo) | (m + (sign bit - hi)) is set exactly when m is outside (a borrow test with no
// comparison, which vectorises on every x86-64). inf and NaN patterns are above hi. Empty
// (lo = hi = 0) when f does not fit T's normal range or has T's precision or more.
//
// `full` (bf16 and tf32 on float): f has T's exponent range, subnormals, inf, and neither
// saturation nor a NaN significand. Then the same pattern arithmetic is right everywhere but on
// NaN: T's subnormals have f's subnormal quantum times 2^-drop, zeros and infinities have no
// low bits, and a carry out of T's top binade lands on inf's pattern, which is the overflow
// result of every mode that rounds away from zero (the others truncate to f's max finite). So
// the range becomes [0, inf], one test (CPFloat's "same exponent" case).
template <class T>
struct FastRange {
  using Bits = typename Storage<T>::Bits;
  static constexpr int kFraction = Storage<T>::kFractionBits;
  static constexpr int kBias = (1 << (sizeof(T) * 8 - kFraction - 2)) - 1;  // 1023 or 127
  Bits lo = 0;
  Bits hi = 0;
  int drop = 0;
  bool full = false;

  explicit FastRange(const Format& f) {
    drop = kFraction - (f.precision - 1);
    if (drop <= 0 || f.emin < 1 - kBias || f.emax > kBias) return;
    lo = static_cast<Bits>(f.emin + kBias) << kFraction;
    hi = static_cast<Bits>(f.emax + kBias) << kFraction;
    full = f.emin == 1 - kBias && f.emax == kBias && f.subnormals && f.has_inf && !f.saturate &&
           !f.top_significand_is_nan;
    if (full) {
      lo = 0;
      hi = (static_cast<Bits>(2 * kBias + 1) << kFraction) + 1;  // inf's pattern + 1
    }
  }
  bool Empty() const { return lo == hi; }
};

// StochasticRandomBits(seed, index) = Mix(Mix(seed ^ kSeedSalt) + (index + 1) * gamma) with the
// seed's half hoisted out of the loop. The salt is rounding.cpp's; the tests compare every
// stochastic result with RoundStochastic, so a change there shows up as a failure here.
constexpr std::uint64_t kSeedSalt = 0x6a09e667f3bcc909ULL;

// Elements per block: the fast pass runs over a block without a branch (so the compiler
// vectorises it), then the block is scanned again only if one of its elements was outside the
// range. Small enough that the re-scan (and the copy an in-place call needs) stays in L1.
constexpr std::size_t kBlock = 256;

// The general path: the scalar routine itself (the result fits T: see the header).
template <Rounding kMode, class T>
T RoundScalar(T x, const Format& f, std::uint64_t seed, std::uint64_t index) {
  if constexpr (kMode == Rounding::kStochastic) {
    return static_cast<T>(RoundStochastic(static_cast<double>(x), f, seed, index));
  } else {
    return static_cast<T>(RoundToFormat(static_cast<double>(x), f, kMode));
  }
}

// kFull: range.full, so only the upper test is needed (lo is 0).
template <Rounding kMode, bool kFull, class T>
void RoundLoop(const T* in, T* out, std::size_t n, const Format& f, const FastRange<T>& range,
               std::uint64_t seed, std::uint64_t counter) {
  using Bits = typename Storage<T>::Bits;
  constexpr int kTop = static_cast<int>(sizeof(Bits) * 8) - 1;
  constexpr Bits kSign = Bits{1} << kTop;
  const int drop = range.drop;
  const Bits lo = range.lo, above = kSign - range.hi;
  const Bits mask = (Bits{1} << drop) - 1;
  const Bits half = Bits{1} << (drop - 1);
  const std::uint64_t seed_hash = SplitMix64Mix(seed ^ kSeedSalt);
  T saved[kBlock];

  for (std::size_t start = 0; start < n; start += kBlock) {
    const std::size_t m = n - start < kBlock ? n - start : kBlock;
    const T* src = in + start;
    T* dst = out + start;
    if (src == dst) {  // in place: keep the inputs for the re-scan
      std::memcpy(saved, src, m * sizeof(T));
      src = saved;
    }
    Bits outside = 0;
    // RoundBits' arithmetic with drop fixed, written without branches or comparisons:
    // lo = mag - rem, the neighbour away from zero is lo + 2^drop, and the carry of an addition
    // walks into the exponent field as the value moves into the next binade. Elements outside
    // the range get a meaningless pattern here and are redone below.
    for (std::size_t j = 0; j < m; ++j) {
      const Bits bits = std::bit_cast<Bits>(src[j]);
      const Bits sign = bits & kSign;
      const Bits mag = bits ^ sign;
      const Bits negative = Bits{0} - (bits >> kTop);  // all ones for x < 0
      const Bits lo_odd = (mag >> drop) & 1;
      outside |= kFull ? mag + above : (mag - lo) | (mag + above);
      Bits result;
      if constexpr (kMode == Rounding::kNearestEven) {
        result = (mag + (half - 1) + lo_odd) & ~mask;
      } else if constexpr (kMode == Rounding::kNearestAway) {
        result = (mag + half) & ~mask;
      } else if constexpr (kMode == Rounding::kTowardZero) {
        result = mag & ~mask;
      } else if constexpr (kMode == Rounding::kUp) {
        result = (mag + (mask & ~negative)) & ~mask;
      } else if constexpr (kMode == Rounding::kDown) {
        result = (mag + (mask & negative)) & ~mask;
      } else if constexpr (kMode == Rounding::kToOdd) {
        // Inexact (rem + mask carries into bit `drop` iff rem != 0): the neighbour whose last
        // bit is 1, which is lo itself when lo is odd.
        result = (mag & ~mask) | ((((mag & mask) + mask) >> drop) << drop);
      } else {
        // Up with probability rem / 2^drop: the discarded bits as 0.64 fixed point against the
        // 64 random bits of element start + j.
        const std::uint64_t random =
            SplitMix64Mix(seed_hash + (counter + start + j + 1) * kSplitMix64Gamma);
        const std::uint64_t frac64 = static_cast<std::uint64_t>(mag & mask) << (64 - drop);
        result = (mag & ~mask) + (static_cast<Bits>(random < frac64) << drop);
      }
      dst[j] = std::bit_cast<T>(static_cast<Bits>(sign | result));
    }
    if ((outside >> kTop) == 0) [[likely]]
      continue;
    // Subnormal results, the underflow gap, the top binade, +-0, inf, NaN.
    for (std::size_t j = 0; j < m; ++j) {
      const Bits mag = std::bit_cast<Bits>(src[j]) & ~kSign;
      if (((mag - lo) | (mag + above)) >> kTop)
        dst[j] = RoundScalar<kMode>(src[j], f, seed, counter + start + j);
    }
  }
}

template <Rounding kMode, class T>
void RoundMode(const T* in, T* out, std::size_t n, const Format& f, std::uint64_t seed,
               std::uint64_t counter) {
  const FastRange<T> range(f);
  if (range.Empty()) {
    for (std::size_t i = 0; i < n; ++i) out[i] = RoundScalar<kMode>(in[i], f, seed, counter + i);
  } else if (range.full) {
    RoundLoop<kMode, true>(in, out, n, f, range, seed, counter);
  } else {
    RoundLoop<kMode, false>(in, out, n, f, range, seed, counter);
  }
}

template <class T>
void Dispatch(std::span<const T> in, std::span<T> out, const Format& f, Rounding r,
              std::uint64_t seed, std::uint64_t counter) {
  if (in.size() != out.size())
    throw std::invalid_argument("RoundArray: input has " + std::to_string(in.size()) +
                                " elements, output " + std::to_string(out.size()));
  const T* src = in.data();
  T* dst = out.data();
  const std::size_t n = in.size();
  switch (r) {
    case Rounding::kNearestEven:
      return RoundMode<Rounding::kNearestEven>(src, dst, n, f, seed, counter);
    case Rounding::kNearestAway:
      return RoundMode<Rounding::kNearestAway>(src, dst, n, f, seed, counter);
    case Rounding::kTowardZero:
      return RoundMode<Rounding::kTowardZero>(src, dst, n, f, seed, counter);
    case Rounding::kUp:
      return RoundMode<Rounding::kUp>(src, dst, n, f, seed, counter);
    case Rounding::kDown:
      return RoundMode<Rounding::kDown>(src, dst, n, f, seed, counter);
    case Rounding::kToOdd:
      return RoundMode<Rounding::kToOdd>(src, dst, n, f, seed, counter);
    case Rounding::kStochastic:
      return RoundMode<Rounding::kStochastic>(src, dst, n, f, seed, counter);
  }
  throw std::invalid_argument("RoundArray: unknown rounding mode " +
                              std::to_string(static_cast<int>(r)));
}

}  // namespace

bool RoundsWithinFloat(const Format& f) {
  if (ValuesWithin(f, Fp32())) return true;  // inf, NaN and max finite are floats too
  // A superset rounds a float to itself, except that saturation sends inf to max finite.
  const double max = f.MaxFinite();
  return ValuesWithin(Fp32(), f) && (!f.saturate || static_cast<float>(max) == max);
}

void RoundArray(std::span<const double> in, std::span<double> out, const Format& f, Rounding r,
                std::uint64_t seed, std::uint64_t counter) {
  Dispatch(in, out, f, r, seed, counter);
}

void RoundArray(std::span<const float> in, std::span<float> out, const Format& f, Rounding r,
                std::uint64_t seed, std::uint64_t counter) {
  if (!RoundsWithinFloat(f))
    throw std::invalid_argument(
        "format '" + f.name +
        "': its rounded values are not all binary32 values (neither a subset of fp32's nor a "
        "superset): round float64 input instead");
  Dispatch(in, out, f, r, seed, counter);
}

}  // namespace carrier
