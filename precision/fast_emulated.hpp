// precision/fast_emulated.hpp: FastEmulated<Tag, R>, Emulated<Tag, R> (precision/emulated.hpp)
// with its hot operations inline.
//
// Contract
//   Values    exactly Emulated's: a double that is a value of the format, +-inf or NaN, with
//             the same format and rounding rules (static tag or the thread's EmulationScope;
//             kDynamicRounding reads the scope's mode).
//   Results   every operation returns the bits Emulated<Tag, R> returns for the same operands
//             in the same thread context, and draws from the stochastic stream exactly when and
//             as often as Emulated does (tests/precision/test_fast_emulated.cpp checks both, on
//             every pair of fp8 values and on random and edge-case fp16/bf16/tf32/custom pairs,
//             in every mode). So a carrier over FastEmulated is a carrier over Emulated, faster.
//   How       + - * compute the double result inline (the sum with its exact TwoSum error where
//             the mode needs it, as Emulated does: rne with p <= 25 rounds the double sum once
//             more, which is innocuous by Figueroa's rule; every other mode rounds the
//             round-to-odd double, exact by Boldo & Melquiond), then round it to the format
//             inline when the result lies in a normal binade below the top one (with
//             constant masks for a predefined static tag and a static mode) (where no
//             overflow, underflow or subnormal rule can apply: the common case); everything
//             else — results near overflow or in the subnormal range, non-finite operands,
//             and all of stochastic rounding — calls Emulated's own out-of-line code, so those
//             cases are Emulated by construction. Exact zeros (a zero sum, product, quotient or
//             converted value) are inline too in the deterministic modes: Emulated rounds +-0 to
//             itself, and a zero sum's sign is its ZeroSum rule (-0 under rd), restated.
//             Conversion from double and from integers below 2^53, / (the double quotient
//             or its round-to-odd from the exact fma remainder, as Emulated) and exp (libm's
//             value where Emulated does not nudge it) round inline in the same normal-range
//             case; sqrt fma exp2 log always call Emulated's code.
//   Batches   GatheredAdd<FastEmulated<Tag, R>> (core/scalar.hpp's customisation point, used
//             by Sum's CombineGathered/FirstPushes in the fast replay), in every deterministic
//             mode, static or dynamic: eight additions per AVX-512F step where the CPU has it,
//             each lane exactly Add's operations (a step with any lane outside the inline range
//             is Add's, lane by lane); a chain of one lane (a seq chain) under rne or rz
//             keeps its sum in one SSE register and rounds it there (LatencyChain); tests
//             compare both with Emulated on every fp8 pair.
//   Formats   Emulated's emulable ones (p <= 26): fp8 e4m3/e5m2, fp16, bf16, tf32, fp32, custom.
//   Threads   as Emulated: values are doubles; operations read only the calling thread's
//             context.
#pragma once

#include <bit>
#include <cmath>
#include <compare>
#include <concepts>
#include <cstdint>
#include <limits>
#include <ostream>
#include <type_traits>

#if defined(__SSE2__) && !defined(__CUDACC__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
#define CARRIER_FAST_EMULATED_AVX512 1
#include <immintrin.h>
#else
#define CARRIER_FAST_EMULATED_AVX512 0
#endif

#include "core/scalar.hpp"
#include "precision/emulated.hpp"
#include "precision/format.hpp"
#include "precision/rounding.hpp"

namespace carrier {

namespace fast_emulated_detail {

// Rounds x to f with mode r (not kStochastic) when x's binade is normal
// in f and below the top one, where RoundToFormat's result is "drop the low 53 - p bits of the
// pattern, adding one quantum when the mode says up" (its own rule for that case, restated);
// returns false (out untouched) otherwise.
[[gnu::always_inline]] inline bool RoundNormal(double x, const Format& f, Rounding r, double* out) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  const std::uint64_t sign = bits & (std::uint64_t{1} << 63);
  const std::uint64_t mag = bits ^ sign;
  // e = biased - 1023 in [emin, emax), as one unsigned test (rejects 0, inf, NaN too)
  if ((mag >> 52) - static_cast<std::uint64_t>(f.emin + 1023) >=
      static_cast<std::uint64_t>(f.emax - f.emin))
    return false;
  const int drop = 53 - f.precision;  // in [27, 51] for 2 <= p <= 26
  const std::uint64_t mask = (std::uint64_t{1} << drop) - 1;
  const std::uint64_t rem = mag & mask;
  const std::uint64_t lo = mag - rem;
  const std::uint64_t half = std::uint64_t{1} << (drop - 1);
  const bool lo_odd = ((mag >> drop) & 1) != 0;
  const bool inexact = rem != 0;
  const bool negative = sign != 0;
  bool up;
  switch (r) {
    case Rounding::kNearestEven:
      up = (rem > half) | ((rem == half) & lo_odd);
      break;
    case Rounding::kNearestAway:
      up = rem >= half;
      break;
    case Rounding::kTowardZero:
      up = false;
      break;
    case Rounding::kUp:
      up = inexact & !negative;
      break;
    case Rounding::kDown:
      up = inexact & negative;
      break;
    case Rounding::kToOdd:
      up = inexact & !lo_odd;
      break;
    default:
      return false;
  }
  *out = std::bit_cast<double>(sign | (lo + (up ? std::uint64_t{1} << drop : 0)));
  return true;
}

// The normal-range shape (p, emin, emax) of the predefined static tags, as compile-time
// constants, so that a FastEmulated with a static tag and mode rounds with constant masks.
// Only these three fields enter RoundNormal's case; test_fast_emulated.cpp checks each against
// Tag::Get().
template <class Tag>
struct StaticShape {
  static constexpr bool kKnown = false;
};
template <int P, int Emin, int Emax>
struct ShapeOf {
  static constexpr bool kKnown = true;
  static constexpr int kP = P, kEmin = Emin, kEmax = Emax;
};
template <>
struct StaticShape<Fp8E4M3Tag> : ShapeOf<4, -6, 8> {};
template <>
struct StaticShape<Fp8E4M3SatTag> : ShapeOf<4, -6, 8> {};
template <>
struct StaticShape<Fp8E5M2Tag> : ShapeOf<3, -14, 15> {};
template <>
struct StaticShape<Fp16Tag> : ShapeOf<11, -14, 15> {};
template <>
struct StaticShape<BF16Tag> : ShapeOf<8, -126, 127> {};
template <>
struct StaticShape<TF32Tag> : ShapeOf<11, -126, 127> {};
template <>
struct StaticShape<Fp32Tag> : ShapeOf<24, -126, 127> {};

// RoundNormalStatic on x86-64 for round to nearest even: the same add-then-truncate on the
// pattern, computed in the SSE register that holds x (no trip through a general register and
// back). An rne add is that rounding alone (no TwoSum before it for p <= 25), so a sequential
// chain's latency drops; harness, bf16 sum at 2^20: seq 4.18 -> 3.55 ns/elem, pairwise 3.73 ->
// 2.69. The other modes keep the general-register form: their round-to-odd step works there
// already, and eight independent chains (blocked:64) ran 2x slower in the SSE form under rz
// (1.16 -> 2.33 ns/elem), the vector ports then carrying every lane's rounding.
// The range test is two comparisons of |x| with the binade bounds 2^Emin and 2^Emax, false for
// zero, double subnormals, inf and NaN as the exponent test is. The sign bit needs no separate
// handling: below the top binade no carry reaches it.
#if defined(__SSE2__) && !defined(__CUDACC__)
template <int P, int Emin, int Emax>
[[gnu::always_inline]] inline bool RoundNearestEvenSse2(double x, double* out) {
  constexpr int kDrop = 53 - P;
  constexpr std::uint64_t kMask = (std::uint64_t{1} << kDrop) - 1;
  constexpr std::uint64_t kHalf = std::uint64_t{1} << (kDrop - 1);
  const double ax = std::fabs(x);
  constexpr double kLow = format_detail::Pow2(Emin), kHigh = format_detail::Pow2(Emax);
  if (!(ax >= kLow && ax < kHigh)) return false;
  const __m128i bits = _mm_castpd_si128(_mm_set_sd(x));
  const __m128i lsb = _mm_and_si128(_mm_srli_epi64(bits, kDrop), _mm_set1_epi64x(1));
  const __m128i r = _mm_add_epi64(_mm_add_epi64(bits, _mm_set1_epi64x(kHalf - 1)), lsb);
  *out = _mm_cvtsd_f64(
      _mm_castsi128_pd(_mm_and_si128(r, _mm_set1_epi64x(static_cast<long long>(~kMask)))));
  return true;
}
#endif

// RoundNormal with the shape and mode fixed at compile time. The range test is one unsigned
// comparison of the biased exponent, which also rejects zero, double subnormals, inf and NaN.
template <int P, int Emin, int Emax, Rounding R>
inline bool RoundNormalStatic(double x, double* out) {
  static_assert(P >= 2 && P <= 26 && R != Rounding::kStochastic);
#if defined(__SSE2__) && !defined(__CUDACC__)
  if constexpr (R == Rounding::kNearestEven) return RoundNearestEvenSse2<P, Emin, Emax>(x, out);
#endif
  constexpr int kDrop = 53 - P;
  constexpr std::uint64_t kMask = (std::uint64_t{1} << kDrop) - 1;
  constexpr std::uint64_t kHalf = std::uint64_t{1} << (kDrop - 1);
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  const std::uint64_t sign = bits & (std::uint64_t{1} << 63);
  const std::uint64_t mag = bits ^ sign;
  if ((mag >> 52) - static_cast<std::uint64_t>(Emin + 1023) >=
      static_cast<std::uint64_t>(Emax - Emin))
    return false;
  // Rounding as an add-then-truncate on the pattern: a carry out of the dropped bits is the
  // step up to the next format value (and walks into the exponent field at a binade's end).
  std::uint64_t r;
  if constexpr (R == Rounding::kNearestEven) {
    r = (mag + (kHalf - 1) + ((mag >> kDrop) & 1)) & ~kMask;  // ties to the even neighbour
  } else if constexpr (R == Rounding::kNearestAway) {
    r = (mag + kHalf) & ~kMask;
  } else if constexpr (R == Rounding::kTowardZero) {
    r = mag & ~kMask;
  } else if constexpr (R == Rounding::kUp) {
    r = (mag + (sign == 0 ? kMask : 0)) & ~kMask;
  } else if constexpr (R == Rounding::kDown) {
    r = (mag + (sign != 0 ? kMask : 0)) & ~kMask;
  } else {  // to odd: inexact results get the last kept bit set
    r = (mag & ~kMask) | (((mag & kMask) != 0) ? (std::uint64_t{1} << kDrop) : 0);
  }
  *out = std::bit_cast<double>(sign | r);
  return true;
}

}  // namespace fast_emulated_detail

template <class Tag, Rounding R = Rounding::kNearestEven>
class FastEmulated {
 public:
  using FormatTag = Tag;
  using Slow = Emulated<Tag, R>;  // the definition
  static constexpr Rounding kRounding = R;

  FastEmulated() = default;  // +0
  explicit FastEmulated(double x) : v_(FromDouble(x)) {}
  explicit FastEmulated(float x) : FastEmulated(static_cast<double>(x)) {}
  explicit FastEmulated(long double x) : v_(Slow(x).Value()) {}
  // Counts (Welford's n): below 2^53 in magnitude Emulated converts the exact double of n with
  // one Round (emulated.cpp FromMagnitude), which FromDouble is; larger ones are its own.
  template <std::integral I>
  [[gnu::always_inline]] explicit FastEmulated(I n) : v_(FromIntegerValue(n)) {}
  template <class Tag2, Rounding R2>
  explicit FastEmulated(const FastEmulated<Tag2, R2>& x) : FastEmulated(x.Value()) {}
  template <class Tag2, Rounding R2>
  explicit FastEmulated(const Emulated<Tag2, R2>& x) : FastEmulated(x.Value()) {}

  static FastEmulated FromFormatValue(double v) {
    FastEmulated e;
    e.v_ = v;
    return e;
  }

  double Value() const { return v_; }
  explicit operator double() const { return v_; }
  explicit operator long double() const { return v_; }
  explicit operator float() const { return static_cast<float>(v_); }
  Slow ToSlow() const { return Slow::FromFormatValue(v_); }

  static const Format& GetFormat() { return Slow::GetFormat(); }
  static Rounding GetRounding() { return Slow::GetRounding(); }

  [[gnu::always_inline]] friend FastEmulated operator+(FastEmulated a, FastEmulated b) {
    return Add(a.v_, b.v_);
  }
  [[gnu::always_inline]] friend FastEmulated operator-(FastEmulated a, FastEmulated b) {
    return Add(a.v_, -b.v_);
  }
  [[gnu::always_inline]] friend FastEmulated operator*(FastEmulated a, FastEmulated b) {
    const double p = a.v_ * b.v_;  // exact for values of an emulable format
    double out;
    if constexpr (kStatic) {
      using S = fast_emulated_detail::StaticShape<Tag>;
      if (fast_emulated_detail::RoundNormalStatic<S::kP, S::kEmin, S::kEmax, R>(p, &out))
        return FromFormatValue(out);
    } else {
      const Rounding r = Mode();
      if (r != Rounding::kStochastic && fast_emulated_detail::RoundNormal(p, Fmt(), r, &out))
        return FromFormatValue(out);
    }
    // An exact zero product (a zero operand): Emulated rounds it to itself, sign included, in
    // every deterministic mode (RoundToFormat returns +-0 unchanged).
    if (p == 0 && Deterministic()) return FromFormatValue(p);
    return SlowMul(a.v_, b.v_);
  }
  // Emulated's Div (emulated.cpp) with the rounding inline where RoundNormal applies: the
  // double quotient (rne with p <= 25: rounded once more, innocuous) or its round-to-odd
  // from the exact remainder; zero, infinite and NaN quotients go to Emulated's code.
  [[gnu::always_inline]] friend FastEmulated operator/(FastEmulated a, FastEmulated b) {
    const double q = a.v_ / b.v_;
    double out;
    if constexpr (kStatic) {
      using S = fast_emulated_detail::StaticShape<Tag>;
      double v = q;
      if constexpr (!(R == Rounding::kNearestEven && S::kP <= 25)) v = OddQuotient(q, a.v_, b.v_);
      if (fast_emulated_detail::RoundNormalStatic<S::kP, S::kEmin, S::kEmax, R>(v, &out))
        return FromFormatValue(out);
    } else {
      const Rounding r = Mode();
      if (r != Rounding::kStochastic) {
        const carrier::Format& f = Fmt();
        const double v =
            (r == Rounding::kNearestEven && f.precision <= 25) ? q : OddQuotient(q, a.v_, b.v_);
        if (fast_emulated_detail::RoundNormal(v, f, r, &out)) return FromFormatValue(out);
      }
    }
    if (q == 0 && Deterministic()) return FromFormatValue(q);  // Emulated: Round(+-0) = +-0
    return SlowDiv(a.v_, b.v_);
  }
  friend FastEmulated operator-(FastEmulated a) { return FromFormatValue(-a.v_); }
  friend FastEmulated operator+(FastEmulated a) { return a; }
  FastEmulated& operator+=(FastEmulated b) { return *this = *this + b; }
  FastEmulated& operator-=(FastEmulated b) { return *this = *this - b; }
  FastEmulated& operator*=(FastEmulated b) { return *this = *this * b; }
  FastEmulated& operator/=(FastEmulated b) { return *this = *this / b; }

  friend bool operator==(FastEmulated a, FastEmulated b) { return a.v_ == b.v_; }
  friend std::partial_ordering operator<=>(FastEmulated a, FastEmulated b) { return a.v_ <=> b.v_; }

  friend FastEmulated sqrt(FastEmulated a) { return Wrap(sqrt(a.ToSlow())); }
  friend FastEmulated fma(FastEmulated a, FastEmulated b, FastEmulated c) {
    return Wrap(fma(a.ToSlow(), b.ToSlow(), c.ToSlow()));
  }
  friend FastEmulated abs(FastEmulated a) { return FromFormatValue(std::fabs(a.v_)); }
  friend FastEmulated fabs(FastEmulated a) { return FromFormatValue(std::fabs(a.v_)); }
  // Emulated's Exp (emulated.cpp): libm's y = exp(x), nudged toward the exact value only when
  // y's low 52 - p bits are all zero (it could then sit on a format value or midpoint); any
  // other finite nonzero y in the normal range is rounded inline, the rest (that nudge, x = 0,
  // specials, overflow and underflow) by Emulated's code.
  friend FastEmulated exp(FastEmulated a) {
    double out;
    // exp(+-0) = 1 exactly, which Emulated rounds (to itself) in the deterministic modes: a
    // carrier's rescale exp(m - m) is this case.
    if (a.v_ == 0 && Mode() != Rounding::kStochastic) {
      if constexpr (kStatic) {
        using S = fast_emulated_detail::StaticShape<Tag>;
        if (fast_emulated_detail::RoundNormalStatic<S::kP, S::kEmin, S::kEmax, R>(1.0, &out))
          return FromFormatValue(out);
      } else {
        if (fast_emulated_detail::RoundNormal(1.0, Fmt(), Mode(), &out))
          return FromFormatValue(out);
      }
    }
    const double y = std::exp(a.v_);
    if constexpr (kStatic) {
      using S = fast_emulated_detail::StaticShape<Tag>;
      constexpr std::uint64_t kLow = (std::uint64_t{1} << (52 - S::kP)) - 1;
      if ((std::bit_cast<std::uint64_t>(y) & kLow) != 0 &&
          fast_emulated_detail::RoundNormalStatic<S::kP, S::kEmin, S::kEmax, R>(y, &out))
        return FromFormatValue(out);
    } else {
      const Rounding r = Mode();
      if (r != Rounding::kStochastic) {
        const carrier::Format& f = Fmt();
        const std::uint64_t low = (std::uint64_t{1} << (52 - f.precision)) - 1;
        if ((std::bit_cast<std::uint64_t>(y) & low) != 0 &&
            fast_emulated_detail::RoundNormal(y, f, r, &out))
          return FromFormatValue(out);
      }
    }
    return Wrap(exp(a.ToSlow()));
  }
  friend FastEmulated exp2(FastEmulated a) { return Wrap(exp2(a.ToSlow())); }
  friend FastEmulated log(FastEmulated a) { return Wrap(log(a.ToSlow())); }

  friend std::ostream& operator<<(std::ostream& os, FastEmulated a) { return os << a.v_; }

 private:
  template <class>
  friend struct GatheredAdd;  // its chains call AddIn with the mode and format read once

  static FastEmulated Wrap(Slow s) { return FromFormatValue(s.Value()); }
  [[gnu::noinline]] static FastEmulated SlowDiv(double a, double b) {
    return Wrap(Slow::FromFormatValue(a) / Slow::FromFormatValue(b));
  }
  // Div's round-to-odd double of a / b from q = fl(a / b): q itself when the remainder
  // a - q b (exact by fma) is zero, else q stepped to odd toward the exact quotient.
  static double OddQuotient(double q, double a, double b) {
    const double r = std::fma(-q, b, a);
    const double err = (r == 0) ? 0.0 : (((r > 0) == (b > 0)) ? 1.0 : -1.0);
    return emulated_detail::RoundToOdd(q, err);
  }
  template <std::integral I>
  [[gnu::always_inline]] static double FromIntegerValue(I n) {
    constexpr std::uint64_t kExact = std::uint64_t{1} << 53;
    if constexpr (std::is_signed_v<I>) {
      if (n > -static_cast<std::int64_t>(kExact) && n < static_cast<std::int64_t>(kExact))
        return FromDouble(static_cast<double>(n));
    } else {
      if (static_cast<std::uint64_t>(n) < kExact) return FromDouble(static_cast<double>(n));
    }
    return Slow(n).Value();
  }
  [[gnu::noinline]] static FastEmulated SlowMul(double a, double b) {
    return Wrap(Slow::FromFormatValue(a) * Slow::FromFormatValue(b));
  }

  static Rounding Mode() {
    if constexpr (R == kDynamicRounding) {
      return ThreadEmulationContext().rounding;
    } else {
      return R;
    }
  }
  // Not stochastic rounding (whose every operation draws from the stream, zeros included).
  static bool Deterministic() {
    if constexpr (R == kDynamicRounding) {
      return Mode() != Rounding::kStochastic;
    } else {
      return R != Rounding::kStochastic;
    }
  }
  static const carrier::Format& Fmt() {
    if constexpr (std::is_same_v<Tag, DynamicFormatTag>) {
      return DynamicFormatTag::Get();
    } else {
      return emulated_detail::StaticFormat<Tag>();
    }
  }

  // Emulated's conversion (emulated.cpp FromDouble: RoundToFormat in the mode in force) with
  // the normal-range case inline, as in Add; the rest, stochastic rounding included (it draws
  // from the stream), is Emulated's own code.
  [[gnu::always_inline]] static double FromDouble(double x) {
    double out;
    if constexpr (kStatic) {
      using S = fast_emulated_detail::StaticShape<Tag>;
      if (fast_emulated_detail::RoundNormalStatic<S::kP, S::kEmin, S::kEmax, R>(x, &out))
        return out;
    } else {
      const Rounding r = Mode();
      if (r != Rounding::kStochastic && fast_emulated_detail::RoundNormal(x, Fmt(), r, &out))
        return out;
    }
    if (x == 0 && Deterministic()) return x;  // +-0: RoundToFormat's own result
    return Slow(x).Value();
  }

  static constexpr double kInfinity = std::numeric_limits<double>::infinity();
  // Static tag with a known shape and a static deterministic mode: constant masks.
  static constexpr bool kStatic = fast_emulated_detail::StaticShape<Tag>::kKnown &&
                                  R != kDynamicRounding && R != Rounding::kStochastic;

  // Emulated's Add (emulated.cpp), with the rounding inline where RoundNormal applies. No
  // finiteness or zero test first: RoundNormal's exponent range rejects zero, inf and NaN
  // (and TwoSum's NaN error term on an infinite sum is then never used).
  [[gnu::always_inline]] static FastEmulated Add(double a, double b) {
#if defined(__GNUC__)
    // A carrier's first push, Identity + x: a is +0 known at compile time (after inlining).
    // Then the exact sum is b, a value of the format, and every deterministic mode returns it
    // unchanged when it is finite and nonzero; a -0 operand gives the ZeroSum rule's sign
    // (-0 under rd, else +0), which b + 0.0 gives in the host's rne (and b under rd); inf and
    // NaN take the general path below. The test costs nothing where a is not a constant.
    if (__builtin_constant_p(a) && a == 0 && !std::signbit(a) && Deterministic() &&
        std::fabs(b) < kInfinity) {
      return FromFormatValue(Mode() == Rounding::kDown ? b : b + 0.0);
    }
#endif
    if constexpr (kStatic) {
      using S = fast_emulated_detail::StaticShape<Tag>;
      const double hi = a + b;
      double out;
      double v = hi;
      if constexpr (!(R == Rounding::kNearestEven && S::kP <= 25)) {
        const double bb = hi - a;  // TwoSum: err = (a + b) - hi exactly
        const double err = (a - (hi - bb)) + (b - bb);
        v = emulated_detail::RoundToOdd(hi, err);
      }
      if (fast_emulated_detail::RoundNormalStatic<S::kP, S::kEmin, S::kEmax, R>(v, &out))
        return FromFormatValue(out);
      return ZeroOrSlowAdd(a, b, hi, R);
    } else {
      return AddIn(a, b, Mode(), Fmt());
    }
  }
  // Add's case for a format or mode known at run time, given them: r and f must be the mode
  // and format in force (Mode(), Fmt()). GatheredAdd's chains read them once per call instead
  // of once per addition (two thread-local reads, and a switch on the mode in RoundNormal).
  [[gnu::always_inline]] static FastEmulated AddIn(double a, double b, Rounding r,
                                                   const carrier::Format& f) {
    const double hi = a + b;
    if (r != Rounding::kStochastic) {
      double out;
      double v = hi;
      if (!(r == Rounding::kNearestEven && f.precision <= 25)) {
        const double bb = hi - a;
        const double err = (a - (hi - bb)) + (b - bb);
        v = emulated_detail::RoundToOdd(hi, err);
      }
      if (fast_emulated_detail::RoundNormal(v, f, r, &out)) return FromFormatValue(out);
    }
    return ZeroOrSlowAdd(a, b, hi, r);
  }
  // An exact zero sum hi = a + b (the double sum of two format values is zero only when the
  // exact one is: Welford's 0 + 0 and Kahan's vanishing corrections): Emulated's ZeroSum, which
  // RoundToFormat returns unchanged; -0 under rd, else the double sum's own sign. Otherwise
  // (and under stochastic rounding) Emulated's addition.
  [[gnu::always_inline]] static FastEmulated ZeroOrSlowAdd(double a, double b, double hi,
                                                           Rounding r) {
    if (hi == 0 && r != Rounding::kStochastic) {
      if (r == Rounding::kDown)
        return FromFormatValue((std::signbit(a) || std::signbit(b)) ? -0.0 : 0.0);
      return FromFormatValue(hi);
    }
    return SlowAdd(a, b);
  }
  // The rare cases, out of line so that the inline part stays small.
  [[gnu::noinline]] static FastEmulated SlowAdd(double a, double b) {
    return Wrap(Slow::FromFormatValue(a) + Slow::FromFormatValue(b));
  }

  double v_ = 0.0;
};

// Fast twins of the predefined names, and of the CLI's dynamic type.
using FastEmulatedFp16 = FastEmulated<Fp16Tag>;
using FastEmulatedBF16 = FastEmulated<BF16Tag>;
using FastEmulatedDynamic = FastEmulated<DynamicFormatTag, kDynamicRounding>;

template <class Tag, Rounding R>
struct ScalarTraits<FastEmulated<Tag, R>> {
  using T = FastEmulated<Tag, R>;
  static T Zero() { return T::FromFormatValue(0.0); }
  static T NegZero() { return T::FromFormatValue(-0.0); }
  static T One() { return T::FromFormatValue(1.0); }
  static T Infinity() { return T::FromFormatValue(std::numeric_limits<double>::infinity()); }
  static T QuietNaN() { return T::FromFormatValue(std::numeric_limits<double>::quiet_NaN()); }
  static T FromCount(std::uint64_t n) { return T(n); }
  static bool IsNaN(T x) { return std::isnan(x.Value()); }
  static bool IsInf(T x) { return std::isinf(x.Value()); }
  static bool IsFinite(T x) { return std::isfinite(x.Value()); }
  static bool SignBit(T x) { return std::signbit(x.Value()); }
  static T Abs(T x) { return abs(x); }
  static T Sqrt(T x) { return sqrt(x); }
  static bool BitEqual(T a, T b) { return ScalarTraits<double>::BitEqual(a.Value(), b.Value()); }
};

// ---- Batched additions (GatheredAdd, core/scalar.hpp) ----
//
// Eight additions per step with AVX-512F where the CPU has it (runtime check; the build stays
// baseline x86-64), for every FastEmulated in a deterministic mode (static or dynamic tag and
// mode: the format and mode are read once per batch, as each operation would read them):
// gather both operands, add, and for every mode but rne with p <= 25 the TwoSum error and the
// round-to-odd step, then RoundNormal's add-then-truncate on the eight patterns. The same
// operations as Add on each lane, so the same bits. A step in which any lane's result is
// outside RoundNormal's range (a zero, subnormal or near-overflow sum, inf or NaN) is done by
// Add itself, lane by lane, as is the tail below eight; stochastic rounding is Add's alone.
// Chains (independent chains of additions) puts one chain in each lane and keeps up to four
// vectors of chains in flight; fewer than eight chains run in scalar code, with a dynamic mode
// fixed once per call.

namespace fast_emulated_detail {

// body.template operator()<M>() with M = r as a compile-time mode; false (body not called) for
// stochastic rounding.
template <class Body>
bool InDeterministicMode(Rounding r, Body&& body) {
  switch (r) {
    case Rounding::kNearestEven:
      body.template operator()<Rounding::kNearestEven>();
      return true;
    case Rounding::kNearestAway:
      body.template operator()<Rounding::kNearestAway>();
      return true;
    case Rounding::kTowardZero:
      body.template operator()<Rounding::kTowardZero>();
      return true;
    case Rounding::kUp:
      body.template operator()<Rounding::kUp>();
      return true;
    case Rounding::kDown:
      body.template operator()<Rounding::kDown>();
      return true;
    case Rounding::kToOdd:
      body.template operator()<Rounding::kToOdd>();
      return true;
    default:
      return false;
  }
}

// Whether the vector form runs: where the CPU has AVX-512F, unless a test switched it off.
inline bool& GatheredAddVectorisedFlag() {
#if CARRIER_FAST_EMULATED_AVX512
  static bool on = __builtin_cpu_supports("avx512f");
#else
  static bool on = false;
#endif
  return on;
}

#if CARRIER_FAST_EMULATED_AVX512
#define CARRIER_AVX512F __attribute__((target("avx512f")))  // NOLINT

// RoundNormal's case for eight values at once: |x| in [2^emin, 2^emax) on every lane (else
// false), then the add-then-truncate of the pattern with `drop` = 53 - p low bits.
struct VectorShape {
  __m512d low, high;
  __m512i keep, mask, half_minus_1, half, unit;
  __m128i drop;
  explicit CARRIER_AVX512F VectorShape(const Format& f) {
    const int d = 53 - f.precision;
    const std::uint64_t m = (std::uint64_t{1} << d) - 1;
    low = _mm512_set1_pd(format_detail::Pow2(f.emin));
    high = _mm512_set1_pd(format_detail::Pow2(f.emax));
    keep = _mm512_set1_epi64(static_cast<long long>(~m));
    mask = _mm512_set1_epi64(static_cast<long long>(m));
    half_minus_1 = _mm512_set1_epi64(static_cast<long long>((m >> 1)));
    half = _mm512_set1_epi64(static_cast<long long>((m >> 1) + 1));
    unit = _mm512_set1_epi64(static_cast<long long>(m + 1));
    drop = _mm_cvtsi32_si128(d);
  }
};

// Whether every lane's magnitude lies in [low, high) (false for NaN).
CARRIER_AVX512F inline bool AllInRange8(__m512d magnitude, __m512d low, __m512d high) {
  return (_mm512_cmp_pd_mask(magnitude, low, _CMP_GE_OQ) &
          _mm512_cmp_pd_mask(magnitude, high, _CMP_LT_OQ)) == 0xff;
}

template <Rounding R>
CARRIER_AVX512F inline bool RoundNormal8(__m512i bits, const VectorShape& v, __m512d* out) {
  const __m512i sign = _mm512_andnot_si512(_mm512_set1_epi64(0x7fffffffffffffffLL), bits);
  const __m512i mag = _mm512_xor_si512(bits, sign);
  if (!AllInRange8(_mm512_castsi512_pd(mag), v.low, v.high)) return false;
  __m512i r;
  if constexpr (R == Rounding::kNearestEven) {
    const __m512i lsb = _mm512_and_si512(_mm512_srl_epi64(mag, v.drop), _mm512_set1_epi64(1));
    r = _mm512_and_si512(_mm512_add_epi64(_mm512_add_epi64(mag, v.half_minus_1), lsb), v.keep);
  } else if constexpr (R == Rounding::kNearestAway) {
    r = _mm512_and_si512(_mm512_add_epi64(mag, v.half), v.keep);
  } else if constexpr (R == Rounding::kTowardZero) {
    r = _mm512_and_si512(mag, v.keep);
  } else if constexpr (R == Rounding::kUp || R == Rounding::kDown) {
    // up in magnitude: positive lanes under ru, negative ones under rd
    const __mmask8 neg = _mm512_test_epi64_mask(sign, sign);
    const __mmask8 away = R == Rounding::kUp ? static_cast<__mmask8>(~neg) : neg;
    r = _mm512_and_si512(_mm512_mask_add_epi64(mag, away, mag, v.mask), v.keep);
  } else {  // to odd: inexact results get the last kept bit set
    const __mmask8 inexact = _mm512_test_epi64_mask(mag, v.mask);
    const __m512i kept = _mm512_and_si512(mag, v.keep);
    r = _mm512_mask_or_epi64(kept, inexact, kept, v.unit);
  }
  *out = _mm512_castsi512_pd(_mm512_or_si512(r, sign));
  return true;
}

// a + b per lane as Add computes it (kOdd: the TwoSum round-to-odd sum first, as Add does for
// every mode but rne with p <= 25), rounded by RoundNormal8; false when a lane is out of range.
template <Rounding R, bool kOdd>
CARRIER_AVX512F inline bool AddRound8(__m512d a, __m512d b, const VectorShape& shape,
                                      __m512d* out) {
  const __m512d hi = _mm512_add_pd(a, b);
  __m512i bits = _mm512_castpd_si512(hi);
  if constexpr (kOdd) {
    // TwoSum's exact error, then emulated_detail::RoundToOdd in the form "truncate, then set
    // the last bit when inexact": a nonzero error of the other sign than hi means hi lies past
    // the exact sum, one pattern down in magnitude truncates it; the odd step is then the
    // OR of 1. (Same result in each case of RoundToOdd: odd hi stays; even hi steps toward
    // the error.)
    const __m512d bb = _mm512_sub_pd(hi, a);
    const __m512d err =
        _mm512_add_pd(_mm512_sub_pd(a, _mm512_sub_pd(hi, bb)), _mm512_sub_pd(b, bb));
    const __mmask8 inexact = _mm512_cmp_pd_mask(err, _mm512_setzero_pd(), _CMP_NEQ_UQ);
    const __m512i past = _mm512_srai_epi64(_mm512_xor_si512(_mm512_castpd_si512(err), bits), 63);
    bits = _mm512_mask_add_epi64(bits, inexact, bits, past);
    bits = _mm512_mask_or_epi64(bits, inexact, bits, _mm512_set1_epi64(1));
  }
  return RoundNormal8<R>(bits, shape, out);
}

// Additions [0, n - n % 8) of GatheredAdd's contract on the values' doubles in mode R (kOdd:
// round the TwoSum round-to-odd sum, as Add does for every mode but rne with p <= 25); a step
// whose lanes are not all in range calls `scalar(k)` for each of its eight k.
template <Rounding R, bool kOdd, class Scalar>
CARRIER_AVX512F std::size_t AddGatheredAvx512(const double* A, const std::uint32_t* ia,
                                              const double* B, const std::uint32_t* ib, double* out,
                                              std::size_t n, const Format& f, Scalar scalar) {
  const VectorShape shape(f);
  // Eight operand pairs that are adjacent doubles in one run (a[j] at A[i + 2j], b[j] right
  // after it: a pairwise level's usual case) are two loads and two permutes, not two gathers.
  // The test is in 64-bit lanes (no index arithmetic wraps), on the addresses' distance.
  const std::int64_t bytes = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(B) -
                                                       reinterpret_cast<std::uintptr_t>(A));
  const bool whole = bytes % 8 == 0;  // B lies a whole number of doubles from A
  const __m512i b_to_a = _mm512_set1_epi64(static_cast<long long>(bytes / 8 - 1));
  const __m512i steps = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
  const __m512i odd = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
  std::size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m256i iav = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ia + k));
    const __m256i ibv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ib + k));
    const __m512i ia64 = _mm512_cvtepu32_epi64(iav);
    const __m512i run = _mm512_add_epi64(_mm512_set1_epi64(static_cast<long long>(ia[k])), steps);
    const __mmask8 adjacent = static_cast<__mmask8>(
        _mm512_cmpeq_epi64_mask(ia64, run) &
        _mm512_cmpeq_epi64_mask(_mm512_add_epi64(_mm512_cvtepu32_epi64(ibv), b_to_a), ia64));
    __m512d a, b;
    if (whole && adjacent == 0xff) {
      const __m512d lo = _mm512_loadu_pd(A + ia[k]);
      const __m512d up = _mm512_loadu_pd(A + ia[k] + 8);
      a = _mm512_permutex2var_pd(lo, steps, up);
      b = _mm512_permutex2var_pd(lo, odd, up);
    } else {
      a = _mm512_i32gather_pd(iav, A, 8);
      b = _mm512_i32gather_pd(ibv, B, 8);
    }
    __m512d rounded;
    if (!AddRound8<R, kOdd>(a, b, shape, &rounded)) {
      for (std::size_t j = k; j < k + 8; ++j) scalar(j);
      continue;
    }
    _mm512_storeu_pd(out + k, rounded);
  }
  return k;
}

// x[k] + x[k + 1] for k in [0, n - n % 8), as AddGatheredAvx512 (two overlapping loads).
template <Rounding R, bool kOdd, class Scalar>
CARRIER_AVX512F std::size_t AdjacentAvx512(const double* x, double* out, std::size_t n,
                                           const Format& f, Scalar scalar) {
  const VectorShape shape(f);
  std::size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    __m512d rounded;
    if (!AddRound8<R, kOdd>(_mm512_loadu_pd(x + k), _mm512_loadu_pd(x + k + 1), shape, &rounded)) {
      for (std::size_t j = k; j < k + 8; ++j) scalar(j);
      continue;
    }
    _mm512_storeu_pd(out + k, rounded);
  }
  return k;
}

// The 8 x 8 transpose of r[0..8) (r[w][s] -> r[s][w]): pairs of rows interleaved, then 128-bit
// and 256-bit blocks exchanged.
[[gnu::always_inline]] CARRIER_AVX512F inline void Transpose8x8(__m512d* r) {
  __m512d t[8], u[8];
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm512_unpacklo_pd(r[k], r[k + 1]);
    t[k + 1] = _mm512_unpackhi_pd(r[k], r[k + 1]);
  }
  for (int k = 0; k < 8; k += 4) {
    u[k] = _mm512_shuffle_f64x2(t[k], t[k + 2], 0x88);
    u[k + 1] = _mm512_shuffle_f64x2(t[k + 1], t[k + 3], 0x88);
    u[k + 2] = _mm512_shuffle_f64x2(t[k], t[k + 2], 0xdd);
    u[k + 3] = _mm512_shuffle_f64x2(t[k + 1], t[k + 3], 0xdd);
  }
  for (int k = 0; k < 4; ++k) {
    r[k] = _mm512_shuffle_f64x2(u[k], u[k + 4], 0x88);
    r[k + 4] = _mm512_shuffle_f64x2(u[k], u[k + 4], 0xdd);
  }
}

// One step of one group of ChainsAvx512: a += b on its eight lanes, or, where a lane leaves
// the range, the group's eight operations themselves (`step(lane, j)` for lanes base ..
// base + 7 of the call) from the states stored in acc.
template <Rounding R, bool kOdd, class Step>
[[gnu::always_inline]] CARRIER_AVX512F inline void ChainStep(__m512d& a, __m512d b,
                                                             const VectorShape& shape, double* acc,
                                                             std::size_t base, Step& step,
                                                             std::uint64_t j) {
  __m512d rounded;
  if (AddRound8<R, kOdd>(a, b, shape, &rounded)) {
    a = rounded;
    return;
  }
  _mm512_storeu_pd(acc + base, a);
  for (std::size_t w = 0; w < 8; ++w) step(base + w, j);
  a = _mm512_loadu_pd(acc + base);
}

// G groups of eight independent chains (GatheredAdd::Chains' lanes first[0 .. 8 G)), one vector
// step per group and input row: lane w adds x[first[w] + j stride] to acc[w] for j < count, as
// AddRound8 rounds it. The groups' steps alternate, so that G chains of vector additions are
// in flight at once (a step is a chain of about ten dependent operations). A row is one load
// per group where the lanes' inputs are adjacent (strided rows); eight rows of stride-1 chains
// (blocked tiles) are eight loads and a transpose; the rest are gathers (2-3x the loads' time
// per row on the development machine). A step with a lane out of range is `step(w, j)`, the
// operation itself, for each lane of its group.
template <Rounding R, bool kOdd, std::size_t G, class Step>
CARRIER_AVX512F void ChainsAvx512(double* acc, const double* x, const std::uint64_t* first,
                                  std::uint64_t count, std::uint64_t stride, const Format& f,
                                  Step step) {
  const VectorShape shape(f);
  bool adjacent = true;
  for (std::size_t i = 0; i < G; ++i)
    for (std::size_t w = 1; w < 8; ++w) adjacent = adjacent && first[8 * i + w] == first[8 * i] + w;
  __m512d a[G];
  for (std::size_t i = 0; i < G; ++i) a[i] = _mm512_loadu_pd(acc + 8 * i);
  std::uint64_t j = 0;
  if (adjacent) {
    for (; j < count; ++j)
      for (std::size_t i = 0; i < G; ++i)
        ChainStep<R, kOdd>(a[i], _mm512_loadu_pd(x + first[8 * i] + j * stride), shape, acc, 8 * i,
                           step, j);
  } else if (stride == 1) {
    for (; j + 8 <= count; j += 8) {
      __m512d rows[G][8];
      for (std::size_t i = 0; i < G; ++i) {
        for (std::size_t w = 0; w < 8; ++w) rows[i][w] = _mm512_loadu_pd(x + first[8 * i + w] + j);
        Transpose8x8(rows[i]);
      }
      for (std::uint64_t s = 0; s < 8; ++s)
        for (std::size_t i = 0; i < G; ++i)
          ChainStep<R, kOdd>(a[i], rows[i][s], shape, acc, 8 * i, step, j + s);
    }
  }
  for (; j < count; ++j) {
    const __m512i off = _mm512_set1_epi64(static_cast<long long>(j * stride));
    for (std::size_t i = 0; i < G; ++i) {
      const __m512i at = _mm512_add_epi64(_mm512_loadu_si512(first + 8 * i), off);
      ChainStep<R, kOdd>(a[i], _mm512_i64gather_pd(at, x, 8), shape, acc, 8 * i, step, j);
    }
  }
  for (std::size_t i = 0; i < G; ++i) _mm512_storeu_pd(acc + 8 * i, a[i]);
}

// body.template operator()<R, kOdd>() for the mode in force (0 for stochastic rounding, which
// is Add's alone): kOdd where Add rounds TwoSum's round-to-odd sum (every mode but rne with
// p <= 25).
template <class Body>
std::size_t InMode(Rounding r, const Format& f, Body&& body) {
  std::size_t k = 0;
  InDeterministicMode(r, [&]<Rounding M>() {
    if constexpr (M == Rounding::kNearestEven) {
      k = f.precision <= 25 ? body.template operator()<M, false>()
                            : body.template operator()<M, true>();
    } else {
      k = body.template operator()<M, true>();
    }
  });
  return k;
}

// FromZero's [0, n - n % 8): a value of the format added to +0 is itself when it is in
// RoundNormal's range (nonzero, finite, not subnormal); a step with another lane calls
// `scalar(k)` for each of its eight k.
template <class Scalar>
CARRIER_AVX512F std::size_t FromZeroAvx512(const double* x, double* out, std::size_t n,
                                           const Format& f, Scalar scalar) {
  const __m512d low = _mm512_set1_pd(format_detail::Pow2(f.emin));
  const __m512d high = _mm512_set1_pd(format_detail::Pow2(f.emax));
  std::size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m512d v = _mm512_loadu_pd(x + k);
    if (!AllInRange8(_mm512_abs_pd(v), low, high)) {
      for (std::size_t j = k; j < k + 8; ++j) scalar(j);
      continue;
    }
    _mm512_storeu_pd(out + k, v);
  }
  return k;
}

#undef CARRIER_AVX512F
#endif  // CARRIER_FAST_EMULATED_AVX512

}  // namespace fast_emulated_detail

// One chain of additions a = a + x[j * stride], j < count (a seq chain: GatheredAdd's Chains
// with one lane), where each addition waits for the one before, so its latency is the time per
// element: the double sum, the rounding, then the next sum. For two modes Add's inline case is
// computed here without the trip of the sum through a general register and back (and, for rne,
// without the zeroing move of RoundNearestEvenSse2's _mm_set_sd, which sits on the chain):
//  - rne with p <= 25 (Add rounds the double sum hi itself, no TwoSum): RoundNormalStatic's
//    add-then-truncate on the pattern, in the SSE register that holds hi;
//  - rz where TwoSum's error is zero (RoundToOdd then returns hi): hi's pattern with its low
//    53 - p bits cleared, one AND in that register; the TwoSum and the range test are off the
//    chain (the branch on them is predicted).
// Both apply where hi lies in RoundNormal's range, [2^emin, 2^emax) in magnitude (which rejects
// zero, inf and NaN); every other step is `step`, Add itself. Returns false (acc untouched)
// for the other modes. Harness (bf16, 2^20 uniform values, seq): rne 3.85 -> 3.1-3.2 ns/elem,
// rz 3.7 -> 2.0.
namespace fast_emulated_detail {
#if CARRIER_FAST_EMULATED_AVX512
// LatencyChain's rne loop with AVX-512VL's three-input logic, one integer operation shorter on
// the chain: the rounding as round-half-away, t = (bits + half) & ~mask, then on a tie
// ((bits & mask) == half: the dropped bits are exactly half a quantum) the kept last bit
// cleared, t & ~(tie & ulp). On a tie t is lo + ulp with lo the truncation: lo even makes that
// lo | ulp, whose clearing gives lo; lo odd makes it even (its carry clears that bit, also when
// it walks into the exponent), which the clearing leaves. So the result is RoundNormal's rne.
// The tie test runs beside the add, so three dependent integer operations follow the sum
// instead of four. Harness: bf16 rne seq 3.0-3.2 -> 2.6-2.7 ns/elem.
template <class Step>
__attribute__((target("avx512f,avx512vl"))) inline double NearestEvenChainAvx512Vl(  // NOLINT
    double acc, const double* x, std::uint64_t count, std::uint64_t stride, const Format& f,
    double low, double high, Step step) {
  const int drop = 53 - f.precision;
  const __m128i ulp = _mm_set1_epi64x(std::int64_t{1} << drop);
  const __m128i half = _mm_set1_epi64x(std::int64_t{1} << (drop - 1));
  const __m128i mask = _mm_set1_epi64x((std::int64_t{1} << drop) - 1);
  const __m128i keep = _mm_set1_epi64x(~((std::int64_t{1} << drop) - 1));
  __m128d a = _mm_set_sd(acc);  // only the low lane is read
  for (std::uint64_t j = 0; j < count; ++j) {
    const __m128d b = _mm_load_sd(x + j * stride);
    const __m128d hi = _mm_add_sd(a, b);
    const double m = std::fabs(_mm_cvtsd_f64(hi));
    if (m >= low && m < high) [[likely]] {
      const __m128i bits = _mm_castpd_si128(hi);
      const __m128i t = _mm_and_si128(_mm_add_epi64(bits, half), keep);
      const __m128i tie = _mm_cmpeq_epi64(_mm_and_si128(bits, mask), half);
      a = _mm_castsi128_pd(_mm_ternarylogic_epi64(t, tie, ulp, 0x70));  // t & ~(tie & ulp)
    } else {
      a = _mm_set_sd(step(_mm_cvtsd_f64(a), _mm_cvtsd_f64(b), f));
    }
  }
  return _mm_cvtsd_f64(a);
}
// Whether NearestEvenChainAvx512Vl runs: the CPU has AVX-512VL and the vector forms are on
// (UseGatheredAddVectorised; tests run both).
inline bool LatencyVectorRuns() {
  static const bool vl = __builtin_cpu_supports("avx512vl");
  return vl && GatheredAddVectorisedFlag();
}
#endif

template <Rounding M, class Step>
[[gnu::always_inline]] inline bool LatencyChain(double* acc, const double* x, std::uint64_t count,
                                                std::uint64_t stride, const Format& f, Step step) {
#if defined(__SSE2__) && !defined(__CUDACC__)
  constexpr bool kRne = M == Rounding::kNearestEven;
  if constexpr (kRne || M == Rounding::kTowardZero) {
    if (kRne && f.precision > 25) return false;
    // RoundNormal's range; Format keeps -1022 <= emin <= emax <= 1023, so both are normal.
    const double low = format_detail::Pow2(f.emin), high = format_detail::Pow2(f.emax);
#if CARRIER_FAST_EMULATED_AVX512
    if (kRne && LatencyVectorRuns()) {
      *acc = NearestEvenChainAvx512Vl(*acc, x, count, stride, f, low, high, step);
      return true;
    }
#endif
    const int drop = 53 - f.precision;
    const __m128i keep = _mm_set1_epi64x(static_cast<long long>(~((std::uint64_t{1} << drop) - 1)));
    const __m128i half = _mm_set1_epi64x((std::int64_t{1} << (drop - 1)) - 1);  // minus one
    const __m128i one = _mm_set1_epi64x(1), shift = _mm_cvtsi32_si128(drop);
    __m128d a = _mm_set_sd(*acc);  // only the low lane is read
    for (std::uint64_t j = 0; j < count; ++j) {
      const __m128d b = _mm_load_sd(x + j * stride);
      const __m128d hi = _mm_add_sd(a, b);
      const double m = std::fabs(_mm_cvtsd_f64(hi));
      bool inline_case = m >= low && m < high;
      if constexpr (!kRne) {
        const __m128d bb = _mm_sub_sd(hi, a);
        const __m128d err = _mm_add_sd(_mm_sub_sd(a, _mm_sub_sd(hi, bb)), _mm_sub_sd(b, bb));
        inline_case = inline_case && _mm_cvtsd_f64(err) == 0;
      }
      if (inline_case) [[likely]] {
        const __m128i bits = _mm_castpd_si128(hi);
        if constexpr (kRne) {
          const __m128i lsb = _mm_and_si128(_mm_srl_epi64(bits, shift), one);
          a = _mm_castsi128_pd(_mm_and_si128(_mm_add_epi64(_mm_add_epi64(bits, half), lsb), keep));
        } else {
          a = _mm_castsi128_pd(_mm_and_si128(bits, keep));
        }
      } else {
        a = _mm_set_sd(step(_mm_cvtsd_f64(a), _mm_cvtsd_f64(b), f));
      }
    }
    *acc = _mm_cvtsd_f64(a);
    return true;
  }
#endif
  return false;
}
}  // namespace fast_emulated_detail

// For tests: run the scalar loop (false) or, where the CPU has it, the vector form (true);
// returns whether the vector form now runs. Not thread-safe: call it outside any replay.
inline bool UseGatheredAddVectorised(bool on) {
  bool& flag = fast_emulated_detail::GatheredAddVectorisedFlag();
#if CARRIER_FAST_EMULATED_AVX512
  flag = on && __builtin_cpu_supports("avx512f");
#else
  flag = false;
#endif
  return flag;
}

// The vector form for every FastEmulated; stochastic rounding runs Add one operation at a time.
// Each batch: the vector part [0, k) where it runs (its out-of-range steps and the tail by
// `one`, the operation itself), then the rest by `one`.
template <class Tag, Rounding R>
struct GatheredAdd<FastEmulated<Tag, R>> {
  using T = FastEmulated<Tag, R>;
  static constexpr bool kVector = R != Rounding::kStochastic;
  static void Run(const T* A, const std::uint32_t* ia, const T* B, const std::uint32_t* ib, T* out,
                  std::size_t n) {
    auto one = [&](std::size_t j) { out[j] = A[ia[j]] + B[ib[j]]; };
    std::size_t k = 0;
#if CARRIER_FAST_EMULATED_AVX512
    if (VectorRuns()) {
      const Format& f = T::GetFormat();
      k = fast_emulated_detail::InMode(T::GetRounding(), f, [&]<Rounding M, bool kOdd>() {
        return fast_emulated_detail::AddGatheredAvx512<M, kOdd>(Doubles(A), ia, Doubles(B), ib,
                                                                Doubles(out), n, f, one);
      });
    }
#endif
    for (; k < n; ++k) one(k);
  }
  static void Adjacent(const T* x, T* out, std::size_t n) {
    auto one = [&](std::size_t j) { out[j] = x[j] + x[j + 1]; };
    std::size_t k = 0;
#if CARRIER_FAST_EMULATED_AVX512
    if (VectorRuns()) {
      const Format& f = T::GetFormat();
      k = fast_emulated_detail::InMode(T::GetRounding(), f, [&]<Rounding M, bool kOdd>() {
        return fast_emulated_detail::AdjacentAvx512<M, kOdd>(Doubles(x), Doubles(out), n, f, one);
      });
    }
#endif
    for (; k < n; ++k) one(k);
  }
  // Groups of eight lanes in vectors where they run; the other lanes (fewer than eight: a seq
  // chain, pairwise's sibling leaves) in scalar code, in the mode in force as a compile-time
  // mode where T's is dynamic (FastEmulated<Tag, M>: the same operation with the switch on the
  // mode decided once per call instead of once per addition).
  static void Chains(T* acc, const T* x, const std::uint64_t* first, std::size_t lanes,
                     std::uint64_t count, std::uint64_t stride) {
    std::size_t w = 0;
#if CARRIER_FAST_EMULATED_AVX512
    if (VectorRuns() && lanes >= 8 && count > 0) {
      const Format& f = T::GetFormat();
      w = fast_emulated_detail::InMode(T::GetRounding(), f, [&]<Rounding M, bool kOdd>() {
        std::size_t g = 0;
        auto step = [&](std::size_t lane, std::uint64_t j) {
          acc[g + lane] = acc[g + lane] + x[first[g + lane] + j * stride];
        };
        using fast_emulated_detail::ChainsAvx512;
        for (; g + 32 <= lanes; g += 32)
          ChainsAvx512<M, kOdd, 4>(Doubles(acc + g), Doubles(x), first + g, count, stride, f, step);
        for (; g + 16 <= lanes; g += 16)
          ChainsAvx512<M, kOdd, 2>(Doubles(acc + g), Doubles(x), first + g, count, stride, f, step);
        for (; g + 8 <= lanes; g += 8)
          ChainsAvx512<M, kOdd, 1>(Doubles(acc + g), Doubles(x), first + g, count, stride, f, step);
        return g;
      });
    }
#endif
    if (w == lanes) return;
    if constexpr (R == kDynamicRounding) {
      // stochastic rounding: T's own operation below, in the primary template's order
      if (fast_emulated_detail::InDeterministicMode(T::GetRounding(), [&]<Rounding M>() {
            ChainsAs<M>(acc, x, first, w, lanes, count, stride);
          }))
        return;
    }
    ChainsAs<R>(acc, x, first, w, lanes, count, stride);
  }
  static void FromZero(const T* x, T* out, std::size_t n) {
    auto one = [&](std::size_t j) { out[j] = T() + x[j]; };
    std::size_t k = 0;
#if CARRIER_FAST_EMULATED_AVX512
    if (VectorRuns())
      k = fast_emulated_detail::FromZeroAvx512(Doubles(x), Doubles(out), n, T::GetFormat(), one);
#endif
    for (; k < n; ++k) one(k);
  }

 private:
  static bool VectorRuns() {
    return fast_emulated_detail::GatheredAddVectorisedFlag() &&
           T::GetRounding() != Rounding::kStochastic;
  }
  // a + b as FastEmulated<Tag, M> adds (T's own addition where M is T's mode), f being the
  // format in force.
  template <Rounding M>
  [[gnu::always_inline]] static double AddAs(double a, double b, const Format& f) {
    using U = FastEmulated<Tag, M>;
    if constexpr (U::kStatic || M == Rounding::kStochastic || M == kDynamicRounding) {
      return (U::FromFormatValue(a) + U::FromFormatValue(b)).Value();
    } else {
      return U::AddIn(a, b, M, f).Value();
    }
  }
  // AddAs out of line: LatencyChain's step outside its inline case.
  template <Rounding M>
  [[gnu::noinline]] static double StepAs(double a, double b, const Format& f) {
    return AddAs<M>(a, b, f);
  }
  // Chains' lanes [lo, hi) in FastEmulated<Tag, M>'s additions (T's own where M is T's mode);
  // one or two lanes keep their states in registers (a seq chain, sibling leaves).
  template <Rounding M>
  static void ChainsAs(T* acc, const T* x, const std::uint64_t* first, std::size_t lo,
                       std::size_t hi, std::uint64_t count, std::uint64_t stride) {
    const Format& f = T::GetFormat();  // a dynamic tag's, read once
    if (hi - lo <= 2) {
      const T* p = x + first[lo];
      const T* q = x + first[hi - 1];
      double a = acc[lo].Value(), b = acc[hi - 1].Value();
      if (hi - lo == 1) {
        if (!fast_emulated_detail::LatencyChain<M>(&a, Doubles(p), count, stride, f, StepAs<M>))
          for (std::uint64_t j = 0; j < count; ++j) a = AddAs<M>(a, p[j * stride].Value(), f);
      } else {
        for (std::uint64_t j = 0; j < count; ++j) {
          a = AddAs<M>(a, p[j * stride].Value(), f);
          b = AddAs<M>(b, q[j * stride].Value(), f);
        }
        acc[hi - 1] = T::FromFormatValue(b);
      }
      acc[lo] = T::FromFormatValue(a);
      return;
    }
    for (std::uint64_t j = 0; j < count; ++j) {
      const std::uint64_t off = j * stride;
      for (std::size_t w = lo; w < hi; ++w)
        acc[w] = T::FromFormatValue(AddAs<M>(acc[w].Value(), x[first[w] + off].Value(), f));
    }
  }
  // The values' doubles (a FastEmulated is one double).
  template <class V>
  static auto* Doubles(V* v) {
    static_assert(sizeof(T) == sizeof(double) && std::is_standard_layout_v<T>);
    using D = std::conditional_t<std::is_const_v<V>, const double, double>;
    return reinterpret_cast<D*>(v);
  }
};

}  // namespace carrier
