// precision/emulated.hpp: Emulated<Tag, R>, EmulatedOracle<Tag, R> (precision/emulated_oracle.hpp)
// with its hot operations inline.
//
// Contract
//   Values    exactly EmulatedOracle's: a double that is a value of the format, +-inf or NaN, with
//             the same format and rounding rules (static tag or the thread's EmulationScope;
//             kDynamicRounding reads the scope's mode).
//   Results   every operation returns the bits EmulatedOracle<Tag, R> returns for the same operands
//             in the same thread context, and draws from the stochastic stream exactly when and
//             as often as EmulatedOracle does (tests/precision/test_fast_emulated.cpp checks both,
//             on every pair of fp8 values and on random and edge-case fp16/bf16/tf32/custom pairs,
//             in every mode). So a carrier over Emulated is a carrier over EmulatedOracle, faster.
//   How       + - * compute the double result inline (the sum with its exact TwoSum error where
//             the mode needs it, as EmulatedOracle does: rne with p <= 25 rounds the double sum
//             once more, which is innocuous by Figueroa's rule; every other mode rounds the
//             round-to-odd double, exact by Boldo & Melquiond), then round it to the format
//             inline when the result lies in a normal binade below the top one (with
//             constant masks for a predefined static tag and a static mode) (where no
//             overflow, underflow or subnormal rule can apply: the common case); everything
//             else — results near overflow or in the subnormal range, non-finite operands,
//             and all of stochastic rounding — calls EmulatedOracle's own out-of-line code, so
//             those cases are EmulatedOracle by construction. Exact zeros (a zero sum, product,
//             quotient or converted value) are inline too in the deterministic modes:
//             EmulatedOracle rounds +-0 to itself, and a zero sum's sign is its ZeroSum rule (-0
//             under rd), restated. Conversion from double and from integers below 2^53, / (the
//             double quotient or its round-to-odd from the exact fma remainder, as EmulatedOracle)
//             and exp (libm's value where EmulatedOracle does not nudge it) round inline in the
//             same normal-range case; sqrt fma exp2 log always call EmulatedOracle's code.
//   Batches   GatheredAdd<Emulated<Tag, R>> (core/scalar.hpp's customisation point, used
//             by Sum's CombineGathered/FirstPushes in the fast replay), in every deterministic
//             mode, static or dynamic: eight additions per AVX-512F step where the CPU has it,
//             each lane exactly Add's operations (a step with any lane outside the inline range
//             is Add's, lane by lane); a chain of one lane (a seq chain) under rne or rz
//             keeps its sum in one SSE register and rounds it there (LatencyChain); tests
//             compare both with EmulatedOracle on every fp8 pair.
//   Formats   EmulatedOracle's emulable ones (p <= 26): fp8 e4m3/e5m2, fp16, bf16, tf32, fp32,
//   custom. Threads   as EmulatedOracle: values are doubles; operations read only the calling
//   thread's
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

#include "core/cpu_features.hpp"
#include "core/scalar.hpp"
#include "precision/emulated_oracle.hpp"
#include "precision/emulated_x86.hpp"
#include "precision/format.hpp"
#include "precision/rounding.hpp"

namespace carrier {

namespace emulated_detail {

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
// constants, so that a Emulated with a static tag and mode rounds with constant masks.
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

// RoundNormal with the shape and mode fixed at compile time. The range test is one unsigned
// comparison of the biased exponent, which also rejects zero, double subnormals, inf and NaN.
template <int P, int Emin, int Emax, Rounding R>
inline bool RoundNormalStatic(double x, double* out) {
  static_assert(P >= 2 && P <= 26 && R != Rounding::kStochastic);
#if defined(__SSE2__) && !defined(__CUDACC__)
  if constexpr (R == Rounding::kNearestEven)
    return RoundNearestEvenSse2<P, Emin, Emax>(x, out);  // emulated_x86.hpp
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

}  // namespace emulated_detail

template <class Tag, Rounding R = Rounding::kNearestEven>
class Emulated {
 public:
  using FormatTag = Tag;
  using Oracle = EmulatedOracle<Tag, R>;  // the definition
  static constexpr Rounding kRounding = R;

  Emulated() = default;  // +0
  explicit Emulated(double x) : v_(FromDouble(x)) {}
  explicit Emulated(float x) : Emulated(static_cast<double>(x)) {}
  explicit Emulated(long double x) : v_(Oracle(x).Value()) {}
  // Counts (Welford's n): below 2^53 in magnitude EmulatedOracle converts the exact double of n
  // with one Round (emulated_oracle.cpp FromMagnitude), which FromDouble is; larger ones are its
  // own.
  template <std::integral I>
  [[gnu::always_inline]] explicit Emulated(I n) : v_(FromIntegerValue(n)) {}
  template <class Tag2, Rounding R2>
  explicit Emulated(const Emulated<Tag2, R2>& x) : Emulated(x.Value()) {}
  template <class Tag2, Rounding R2>
  explicit Emulated(const EmulatedOracle<Tag2, R2>& x) : Emulated(x.Value()) {}

  static Emulated FromFormatValue(double v) {
    Emulated e;
    e.v_ = v;
    return e;
  }

  double Value() const { return v_; }
  explicit operator double() const { return v_; }
  explicit operator long double() const { return v_; }
  explicit operator float() const { return static_cast<float>(v_); }
  Oracle ToOracle() const { return Oracle::FromFormatValue(v_); }

  static const Format& GetFormat() { return Oracle::GetFormat(); }
  static Rounding GetRounding() { return Oracle::GetRounding(); }

  [[gnu::always_inline]] friend Emulated operator+(Emulated a, Emulated b) {
    return Add(a.v_, b.v_);
  }
  [[gnu::always_inline]] friend Emulated operator-(Emulated a, Emulated b) {
    return Add(a.v_, -b.v_);
  }
  [[gnu::always_inline]] friend Emulated operator*(Emulated a, Emulated b) {
    const double p = a.v_ * b.v_;  // exact for values of an emulable format
    double out;
    if constexpr (kStatic) {
      using S = emulated_detail::StaticShape<Tag>;
      if (emulated_detail::RoundNormalStatic<S::kP, S::kEmin, S::kEmax, R>(p, &out))
        return FromFormatValue(out);
    } else {
      const Rounding r = Mode();
      if (r != Rounding::kStochastic && emulated_detail::RoundNormal(p, Fmt(), r, &out))
        return FromFormatValue(out);
    }
    // An exact zero product (a zero operand): EmulatedOracle rounds it to itself, sign included, in
    // every deterministic mode (RoundToFormat returns +-0 unchanged).
    if (p == 0 && Deterministic()) return FromFormatValue(p);
    return SlowMul(a.v_, b.v_);
  }
  // EmulatedOracle's Div (emulated_oracle.cpp) with the rounding inline where RoundNormal applies:
  // the double quotient (rne with p <= 25: rounded once more, innocuous) or its round-to-odd from
  // the exact remainder; zero, infinite and NaN quotients go to EmulatedOracle's code.
  [[gnu::always_inline]] friend Emulated operator/(Emulated a, Emulated b) {
    const double q = a.v_ / b.v_;
    double out;
    if constexpr (kStatic) {
      using S = emulated_detail::StaticShape<Tag>;
      double v = q;
      if constexpr (!(R == Rounding::kNearestEven && S::kP <= 25)) v = OddQuotient(q, a.v_, b.v_);
      if (emulated_detail::RoundNormalStatic<S::kP, S::kEmin, S::kEmax, R>(v, &out))
        return FromFormatValue(out);
    } else {
      const Rounding r = Mode();
      if (r != Rounding::kStochastic) {
        const carrier::Format& f = Fmt();
        const double v =
            (r == Rounding::kNearestEven && f.precision <= 25) ? q : OddQuotient(q, a.v_, b.v_);
        if (emulated_detail::RoundNormal(v, f, r, &out)) return FromFormatValue(out);
      }
    }
    if (q == 0 && Deterministic()) return FromFormatValue(q);  // EmulatedOracle: Round(+-0) = +-0
    return SlowDiv(a.v_, b.v_);
  }
  friend Emulated operator-(Emulated a) { return FromFormatValue(-a.v_); }
  friend Emulated operator+(Emulated a) { return a; }
  Emulated& operator+=(Emulated b) { return *this = *this + b; }
  Emulated& operator-=(Emulated b) { return *this = *this - b; }
  Emulated& operator*=(Emulated b) { return *this = *this * b; }
  Emulated& operator/=(Emulated b) { return *this = *this / b; }

  friend bool operator==(Emulated a, Emulated b) { return a.v_ == b.v_; }
  friend std::partial_ordering operator<=>(Emulated a, Emulated b) { return a.v_ <=> b.v_; }

  friend Emulated sqrt(Emulated a) { return Wrap(sqrt(a.ToOracle())); }
  friend Emulated fma(Emulated a, Emulated b, Emulated c) {
    return Wrap(fma(a.ToOracle(), b.ToOracle(), c.ToOracle()));
  }
  friend Emulated abs(Emulated a) { return FromFormatValue(std::fabs(a.v_)); }
  friend Emulated fabs(Emulated a) { return FromFormatValue(std::fabs(a.v_)); }
  // EmulatedOracle's Exp (emulated_oracle.cpp): libm's y = exp(x), nudged toward the exact value
  // only when y's low 52 - p bits are all zero (it could then sit on a format value or midpoint);
  // any other finite nonzero y in the normal range is rounded inline, the rest (that nudge, x = 0,
  // specials, overflow and underflow) by EmulatedOracle's code.
  friend Emulated exp(Emulated a) {
    double out;
    // exp(+-0) = 1 exactly, which EmulatedOracle rounds (to itself) in the deterministic modes: a
    // carrier's rescale exp(m - m) is this case.
    if (a.v_ == 0 && Mode() != Rounding::kStochastic) {
      if constexpr (kStatic) {
        using S = emulated_detail::StaticShape<Tag>;
        if (emulated_detail::RoundNormalStatic<S::kP, S::kEmin, S::kEmax, R>(1.0, &out))
          return FromFormatValue(out);
      } else {
        if (emulated_detail::RoundNormal(1.0, Fmt(), Mode(), &out)) return FromFormatValue(out);
      }
    }
    const double y = std::exp(a.v_);
    if constexpr (kStatic) {
      using S = emulated_detail::StaticShape<Tag>;
      constexpr std::uint64_t kLow = (std::uint64_t{1} << (52 - S::kP)) - 1;
      if ((std::bit_cast<std::uint64_t>(y) & kLow) != 0 &&
          emulated_detail::RoundNormalStatic<S::kP, S::kEmin, S::kEmax, R>(y, &out))
        return FromFormatValue(out);
    } else {
      const Rounding r = Mode();
      if (r != Rounding::kStochastic) {
        const carrier::Format& f = Fmt();
        const std::uint64_t low = (std::uint64_t{1} << (52 - f.precision)) - 1;
        if ((std::bit_cast<std::uint64_t>(y) & low) != 0 &&
            emulated_detail::RoundNormal(y, f, r, &out))
          return FromFormatValue(out);
      }
    }
    return Wrap(exp(a.ToOracle()));
  }
  friend Emulated exp2(Emulated a) { return Wrap(exp2(a.ToOracle())); }
  friend Emulated log(Emulated a) { return Wrap(log(a.ToOracle())); }

  friend std::ostream& operator<<(std::ostream& os, Emulated a) { return os << a.v_; }

 private:
  template <class>
  friend struct GatheredAdd;  // its chains call AddIn with the mode and format read once

  static Emulated Wrap(Oracle s) { return FromFormatValue(s.Value()); }
  [[gnu::noinline]] static Emulated SlowDiv(double a, double b) {
    return Wrap(Oracle::FromFormatValue(a) / Oracle::FromFormatValue(b));
  }
  // Div's round-to-odd double of a / b from q = fl(a / b): q itself when the remainder
  // a - q b (exact by fma) is zero, else q stepped to odd toward the exact quotient.
  static double OddQuotient(double q, double a, double b) {
    const double r = std::fma(-q, b, a);
    const double err = (r == 0) ? 0.0 : (((r > 0) == (b > 0)) ? 1.0 : -1.0);
    return emulated_oracle_detail::RoundToOdd(q, err);
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
    return Oracle(n).Value();
  }
  [[gnu::noinline]] static Emulated SlowMul(double a, double b) {
    return Wrap(Oracle::FromFormatValue(a) * Oracle::FromFormatValue(b));
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
      return emulated_oracle_detail::StaticFormat<Tag>();
    }
  }

  // EmulatedOracle's conversion (emulated_oracle.cpp FromDouble: RoundToFormat in the mode in
  // force) with the normal-range case inline, as in Add; the rest, stochastic rounding included (it
  // draws from the stream), is EmulatedOracle's own code.
  [[gnu::always_inline]] static double FromDouble(double x) {
    double out;
    if constexpr (kStatic) {
      using S = emulated_detail::StaticShape<Tag>;
      if (emulated_detail::RoundNormalStatic<S::kP, S::kEmin, S::kEmax, R>(x, &out)) return out;
    } else {
      const Rounding r = Mode();
      if (r != Rounding::kStochastic && emulated_detail::RoundNormal(x, Fmt(), r, &out)) return out;
    }
    if (x == 0 && Deterministic()) return x;  // +-0: RoundToFormat's own result
    return Oracle(x).Value();
  }

  static constexpr double kInfinity = std::numeric_limits<double>::infinity();
  // Static tag with a known shape and a static deterministic mode: constant masks.
  static constexpr bool kStatic = emulated_detail::StaticShape<Tag>::kKnown &&
                                  R != kDynamicRounding && R != Rounding::kStochastic;

  // EmulatedOracle's Add (emulated_oracle.cpp), with the rounding inline where RoundNormal applies.
  // No finiteness or zero test first: RoundNormal's exponent range rejects zero, inf and NaN (and
  // TwoSum's NaN error term on an infinite sum is then never used).
  [[gnu::always_inline]] static Emulated Add(double a, double b) {
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
      using S = emulated_detail::StaticShape<Tag>;
      const double hi = a + b;
      double out;
      double v = hi;
      if constexpr (!(R == Rounding::kNearestEven && S::kP <= 25)) {
        const double bb = hi - a;  // TwoSum: err = (a + b) - hi exactly
        const double err = (a - (hi - bb)) + (b - bb);
        v = emulated_oracle_detail::RoundToOdd(hi, err);
      }
      if (emulated_detail::RoundNormalStatic<S::kP, S::kEmin, S::kEmax, R>(v, &out))
        return FromFormatValue(out);
      return ZeroOrSlowAdd(a, b, hi, R);
    } else {
      return AddIn(a, b, Mode(), Fmt());
    }
  }
  // Add's case for a format or mode known at run time, given them: r and f must be the mode
  // and format in force (Mode(), Fmt()). GatheredAdd's chains read them once per call instead
  // of once per addition (two thread-local reads, and a switch on the mode in RoundNormal).
  [[gnu::always_inline]] static Emulated AddIn(double a, double b, Rounding r,
                                               const carrier::Format& f) {
    const double hi = a + b;
    if (r != Rounding::kStochastic) {
      double out;
      double v = hi;
      if (!(r == Rounding::kNearestEven && f.precision <= 25)) {
        const double bb = hi - a;
        const double err = (a - (hi - bb)) + (b - bb);
        v = emulated_oracle_detail::RoundToOdd(hi, err);
      }
      if (emulated_detail::RoundNormal(v, f, r, &out)) return FromFormatValue(out);
    }
    return ZeroOrSlowAdd(a, b, hi, r);
  }
  // An exact zero sum hi = a + b (the double sum of two format values is zero only when the
  // exact one is: Welford's 0 + 0 and Kahan's vanishing corrections): EmulatedOracle's ZeroSum,
  // which RoundToFormat returns unchanged; -0 under rd, else the double sum's own sign. Otherwise
  // (and under stochastic rounding) EmulatedOracle's addition.
  [[gnu::always_inline]] static Emulated ZeroOrSlowAdd(double a, double b, double hi, Rounding r) {
    if (hi == 0 && r != Rounding::kStochastic) {
      if (r == Rounding::kDown)
        return FromFormatValue((std::signbit(a) || std::signbit(b)) ? -0.0 : 0.0);
      return FromFormatValue(hi);
    }
    return SlowAdd(a, b);
  }
  // The rare cases, out of line so that the inline part stays small.
  [[gnu::noinline]] static Emulated SlowAdd(double a, double b) {
    return Wrap(Oracle::FromFormatValue(a) + Oracle::FromFormatValue(b));
  }

  double v_ = 0.0;
};

// The twins of the oracle's EmulatedOracleFp16, EmulatedOracleBF16 and EmulatedOracleDynamic
// (the CLI's dynamic type).
using EmulatedFp16 = Emulated<Fp16Tag>;
using EmulatedBF16 = Emulated<BF16Tag>;
using EmulatedDynamic = Emulated<DynamicFormatTag, kDynamicRounding>;

template <class Tag, Rounding R>
struct ScalarTraits<Emulated<Tag, R>> {
  using T = Emulated<Tag, R>;
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
// Eight additions per step with AVX-512F where the CPU has it (HostAvx512(), core/cpu_features.hpp;
// the kernels are in emulated_x86.hpp and the build stays baseline x86-64), for every
// Emulated in a deterministic mode (static or dynamic tag and mode: the format and mode are
// read once per batch, as each operation would read them): gather both operands, add, and for every
// mode but rne with p <= 25 the TwoSum error and the round-to-odd step, then RoundNormal's
// add-then-truncate on the eight patterns. The same operations as Add on each lane, so the same
// bits. A step in which any lane's result is outside RoundNormal's range (a zero, subnormal or
// near-overflow sum, inf or NaN) is done by Add itself, lane by lane, as is the tail below eight;
// stochastic rounding is Add's alone. Chains (independent chains of additions) puts one chain in
// each lane and keeps up to four vectors of chains in flight; fewer than eight chains run in scalar
// code, with a dynamic mode fixed once per call.

namespace emulated_detail {

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
  static bool on = HostAvx512().f;
  return on;
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

// Whether NearestEvenChainAvx512Vl (emulated_x86.hpp) runs: the CPU has AVX-512VL and the
// vector forms are on (UseGatheredAddVectorised; tests run both).
inline bool LatencyVectorRuns() { return HostAvx512().vl && GatheredAddVectorisedFlag(); }

// One chain of additions a = a + x[j * stride], j < count (a seq chain: GatheredAdd's Chains
// with one lane), where each addition waits for the one before: on x86 LatencyChainSse2
// (emulated_x86.hpp) keeps the sum in one SSE register for rne with p <= 25 and for rz,
// with Add's bits. Returns false (acc untouched) where it does not apply; the caller then runs
// the plain loop.
template <Rounding M, class Step>
[[gnu::always_inline]] inline bool LatencyChain(double* acc, const double* x, std::uint64_t count,
                                                std::uint64_t stride, const Format& f, Step step) {
#if defined(__SSE2__) && !defined(__CUDACC__)
  return LatencyChainSse2<M>(acc, x, count, stride, f, step,
                             M == Rounding::kNearestEven && LatencyVectorRuns());
#else
  return false;
#endif
}
}  // namespace emulated_detail

// For tests: run the scalar loop (false) or, where the CPU has it, the vector form (true);
// returns whether the vector form now runs. Not thread-safe: call it outside any replay.
inline bool UseGatheredAddVectorised(bool on) {
  bool& flag = emulated_detail::GatheredAddVectorisedFlag();
  flag = on && HostAvx512().f;
  return flag;
}

// The vector form for every Emulated; stochastic rounding runs Add one operation at a time.
// Each batch: the vector part [0, k) where it runs (its out-of-range steps and the tail by
// `one`, the operation itself), then the rest by `one`.
template <class Tag, Rounding R>
struct GatheredAdd<Emulated<Tag, R>> {
  using T = Emulated<Tag, R>;
  static constexpr bool kVector = R != Rounding::kStochastic;
  static void Run(const T* A, const std::uint32_t* ia, const T* B, const std::uint32_t* ib, T* out,
                  std::size_t n) {
    auto one = [&](std::size_t j) { out[j] = A[ia[j]] + B[ib[j]]; };
    std::size_t k = 0;
#if CARRIER_X86_KERNELS
    if (VectorRuns()) {
      const Format& f = T::GetFormat();
      k = emulated_detail::InMode(T::GetRounding(), f, [&]<Rounding M, bool kOdd>() {
        return emulated_detail::AddGatheredAvx512<M, kOdd>(Doubles(A), ia, Doubles(B), ib,
                                                           Doubles(out), n, f, one);
      });
    }
#endif
    for (; k < n; ++k) one(k);
  }
  static void Adjacent(const T* x, T* out, std::size_t n) {
    auto one = [&](std::size_t j) { out[j] = x[j] + x[j + 1]; };
    std::size_t k = 0;
#if CARRIER_X86_KERNELS
    if (VectorRuns()) {
      const Format& f = T::GetFormat();
      k = emulated_detail::InMode(T::GetRounding(), f, [&]<Rounding M, bool kOdd>() {
        return emulated_detail::AdjacentAvx512<M, kOdd>(Doubles(x), Doubles(out), n, f, one);
      });
    }
#endif
    for (; k < n; ++k) one(k);
  }
  // Groups of eight lanes in vectors where they run; the other lanes (fewer than eight: a seq
  // chain, pairwise's sibling leaves) in scalar code, in the mode in force as a compile-time
  // mode where T's is dynamic (Emulated<Tag, M>: the same operation with the switch on the
  // mode decided once per call instead of once per addition).
  static void Chains(T* acc, const T* x, const std::uint64_t* first, std::size_t lanes,
                     std::uint64_t count, std::uint64_t stride) {
    std::size_t w = 0;
#if CARRIER_X86_KERNELS
    if (VectorRuns() && lanes >= 8 && count > 0) {
      const Format& f = T::GetFormat();
      w = emulated_detail::InMode(T::GetRounding(), f, [&]<Rounding M, bool kOdd>() {
        std::size_t g = 0;
        auto step = [&](std::size_t lane, std::uint64_t j) {
          acc[g + lane] = acc[g + lane] + x[first[g + lane] + j * stride];
        };
        using emulated_detail::ChainsAvx512;
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
      if (emulated_detail::InDeterministicMode(T::GetRounding(), [&]<Rounding M>() {
            ChainsAs<M>(acc, x, first, w, lanes, count, stride);
          }))
        return;
    }
    ChainsAs<R>(acc, x, first, w, lanes, count, stride);
  }
  static void FromZero(const T* x, T* out, std::size_t n) {
    auto one = [&](std::size_t j) { out[j] = T() + x[j]; };
    std::size_t k = 0;
#if CARRIER_X86_KERNELS
    if (VectorRuns())
      k = emulated_detail::FromZeroAvx512(Doubles(x), Doubles(out), n, T::GetFormat(), one);
#endif
    for (; k < n; ++k) one(k);
  }

 private:
  static bool VectorRuns() {
    return emulated_detail::GatheredAddVectorisedFlag() &&
           T::GetRounding() != Rounding::kStochastic;
  }
  // a + b as Emulated<Tag, M> adds (T's own addition where M is T's mode), f being the
  // format in force.
  template <Rounding M>
  [[gnu::always_inline]] static double AddAs(double a, double b, const Format& f) {
    using U = Emulated<Tag, M>;
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
  // Chains' lanes [lo, hi) in Emulated<Tag, M>'s additions (T's own where M is T's mode);
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
        if (!emulated_detail::LatencyChain<M>(&a, Doubles(p), count, stride, f, StepAs<M>))
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
  // The values' doubles (a Emulated is one double).
  template <class V>
  static auto* Doubles(V* v) {
    static_assert(sizeof(T) == sizeof(double) && std::is_standard_layout_v<T>);
    using D = std::conditional_t<std::is_const_v<V>, const double, double>;
    return reinterpret_cast<D*>(v);
  }
};

}  // namespace carrier
