// precision/emulated_oracle.hpp: EmulatedOracle<FormatTag, Rounding>, a compute scalar that
// rounds into a Format after every operation: the test oracle (the definition) of
// precision/emulated.hpp's Emulated, the product path, which returns its bits with the hot
// operations inline and calls its out-of-line code for the rest.
//
// Contract.
//   Value     A double that is always a value of the format (format.hpp's Format: p bits,
//             emin, emax, subnormals), or +-inf, or NaN. +-inf exist for EVERY format, also
//             for one without an inf encoding (OCP E4M3) or a saturating one: carriers need
//             -inf as the identity of max and as a masked score, and a kernel keeps such
//             sentinels in wider registers anyway. What a missing inf changes is overflow: a
//             FINITE result beyond the range follows the Format's rule (E4M3: NaN under rne,
//             +-448 under rz; saturating formats: +-max finite). Infinities enter only as
//             ScalarTraits::Infinity(), as a converted +-inf, by division by zero or from an
//             infinite operand, and then propagate with IEEE rules.
//   Ops       + - * / (unary - is exact), sqrt, fma, and conversion from double, float,
//             long double and integers each round ONCE into the format, with the mode R (or,
//             for R == kDynamicRounding, the mode of the thread's EmulationScope): the result
//             is the correctly rounded exact result, in every mode (rne rna rz ru rd ro; sr see
//             below), subnormals and overflow included. Conversion to double, float and long
//             double is explicit (double and long double exact; float rounds to nearest even
//             where the format is wider than fp32).
//   How       "Compute in double, then RoundToFormat" rounds twice. That is still correct for
//             round-to-nearest-even when q >= 2p + 2 (q = 53: p <= 25) for + - * / sqrt
//             (Figueroa, "When is double rounding innocuous?", SIGNUM 1995), and EmulatedOracle
//             takes that fast path there. Everywhere else (directed modes, rna, ro, fma, p = 26) it
//             computes the exact error term of the double operation:
//               + -   TwoSum (Knuth): hi = a + b, err = (a + b) - hi exactly;
//               *     exact: two p <= 26 bit significands have at most 52 bits;
//               /     q = a / b, remainder r = fma(-q, b, a) exactly; a/b - q has r/b's sign;
//               sqrt  s = sqrt(a), r = fma(-s, s, a) exactly; sqrt(a) - s has r's sign;
//               fma   a*b exact in double (p <= 26), then TwoSum with c;
//             turns (hi, err) into the round-to-odd double (hi if err == 0 or hi's last bit is
//             1, else hi's neighbour toward err), and rounds that with RoundToFormat. Rounding
//             to odd at q >= p + 2 bits followed by any rounding to p bits equals that rounding
//             of the exact result (Boldo & Melquiond, "Emulation of FMA and correctly rounded
//             sums: proved algorithms using rounding to odd", IEEE TC 57(4), 2008).
//             Assumes no FMA contraction and no -ffast-math in the including TU (the project's
//             flags), which would break TwoSum.
//   Formats   Emulable: p <= 26 (kEmulatedMaxPrecision; the exact product and fma need it) and
//             every value and quantum inside [2^-510, 2^511) (emax <= 510, emin - p + 1 >=
//             -510), so no exact sum, product, quotient, root or error term above leaves
//             double's normal range, which is what makes them exact; and emin <= 0 <= emax, so
//             that 1 is a value. fp8e4m3(sat), fp8e5m2, fp16, bf16, tf32, fp32 and most custom
//             formats are; fp64 is not. A static tag with a too-wide kPrecision fails a
//             static_assert; every static tag's format is also checked once at first use, and
//             EmulationScope checks its format (std::invalid_argument, one line).
//   Signed 0  As IEEE 754: an exact zero sum (x + (-x), or of zeros of opposite signs) is +0,
//             -0 under rd; a nonzero result that rounds to zero keeps its sign.
//   exp/log   exp, exp2, log (found by ADL): libm's double result y, then rounded into the
//   /exp2     format as if y were the round-to-odd value of the exact result (when y lies on
//             the format's grid or on a midpoint, the side of the exact result is taken from
//             the long double function, or from the argument's sign near exp(0) = 1). Correctly
//             rounded for the format except in the rare cases where the exact result lies
//             within about 2^-52 relative (one double ulp) of a rounding boundary of the format
//             and libm's y falls on the other side of it. exp overflow and underflow of a finite
//             argument round like the exact (finite, nonzero) result.
//   sr        Stochastic rounding applies RoundToFormat's kStochastic to the round-to-odd
//             double, not to the exact value: the probability of rounding up is off by less
//             than 2^(p-53) (one double ulp measured in format ulps), i.e. E[result] = exact
//             result + O(2^-53 |exact result|), far below the format's own u = 2^-p. Random
//             bits come from the thread's StochasticBits (seed from EmulationScope or
//             StochasticSeedScope, default seed 0): every rounding operation (+ - * / sqrt fma
//             exp exp2 log, conversion into the format) with a finite result takes exactly one
//             counter value, so a run is reproducible from the seed and the sequence of
//             operations on its thread, and threads never share a stream.
//   Dynamic   EmulatedOracle<DynamicFormatTag, R> takes its format from the innermost
//             EmulationScope of the calling thread (std::logic_error when there is none);
//             R == kDynamicRounding takes the rounding mode from it too (rne when no scope).
//             Scopes nest, restore the previous context when they end, and are per thread, so
//             threads running different formats do not interfere. Values do not record their
//             format: do not carry a dynamic value out of its scope into another format's.
//   Threads   A value is a double: copying and reading are thread-safe; operations read only
//             the calling thread's context (format, mode, stochastic stream) and immutable
//             static formats.
//   Cost      Each rounding operation is one out-of-line call (emulated_oracle.cpp) plus
//   RoundToFormat;
//             the carriers' code stays small per instantiation.
#pragma once

#include <bit>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <ostream>
#include <type_traits>

#include "core/scalar.hpp"
#include "precision/format.hpp"
#include "precision/rounding.hpp"

namespace carrier {

inline constexpr int kEmulatedMaxPrecision = 26;
// Every value and quantum of an emulable format lies in [2^-kLimit, 2^(kLimit+1)).
inline constexpr int kEmulatedExponentLimit = 510;

// Not a rounding mode: as EmulatedOracle's second argument it means "the mode of the thread's
// EmulationScope". Never pass it to RoundToFormat.
inline constexpr Rounding kDynamicRounding = static_cast<Rounding>(127);

// Throws std::invalid_argument (one line naming the field and the limit) unless f is a valid
// Format that EmulatedOracle can round into exactly (see "Formats" above).
void CheckEmulableFormat(const Format& f);
bool IsEmulableFormat(const Format& f);

// The per-thread state that dynamic EmulatedOracle types and stochastic rounding read.
struct EmulationContext {
  const Format* format = nullptr;
  Rounding rounding = Rounding::kNearestEven;
  StochasticBits stochastic{};
};

inline EmulationContext& ThreadEmulationContext() noexcept {
  thread_local EmulationContext context;
  return context;
}

// Sets the calling thread's format, rounding mode and stochastic stream (seed, counter 0) for
// its lifetime; restores the previous ones when it ends. Destroy scopes in reverse order of
// creation, on the thread that created them. The format is copied and validated
// (CheckEmulableFormat); kDynamicRounding is rejected (std::invalid_argument).
class EmulationScope {
 public:
  explicit EmulationScope(Format format, Rounding rounding = Rounding::kNearestEven,
                          std::uint64_t seed = 0);
  ~EmulationScope();
  EmulationScope(const EmulationScope&) = delete;
  EmulationScope& operator=(const EmulationScope&) = delete;

 private:
  Format format_;
  EmulationContext saved_;
};

// Sets only the thread's stochastic stream (seed, counter), for EmulatedOracle<Tag, kStochastic>
// with a static tag; restores the previous stream when it ends.
class StochasticSeedScope {
 public:
  explicit StochasticSeedScope(std::uint64_t seed, std::uint64_t counter = 0);
  ~StochasticSeedScope();
  StochasticSeedScope(const StochasticSeedScope&) = delete;
  StochasticSeedScope& operator=(const StochasticSeedScope&) = delete;

 private:
  StochasticBits saved_;
};

// Format tags: a type with `static const Format& Get()`. kPrecision lets EmulatedOracle reject a
// too-precise static format at compile time.
struct Fp8E4M3Tag {
  static constexpr int kPrecision = 4;
  static const Format& Get();
};
struct Fp8E4M3SatTag {
  static constexpr int kPrecision = 4;
  static const Format& Get();
};
struct Fp8E5M2Tag {
  static constexpr int kPrecision = 3;
  static const Format& Get();
};
struct Fp16Tag {
  static constexpr int kPrecision = 11;
  static const Format& Get();
};
struct BF16Tag {
  static constexpr int kPrecision = 8;
  static const Format& Get();
};
struct TF32Tag {
  static constexpr int kPrecision = 11;
  static const Format& Get();
};
struct Fp32Tag {
  static constexpr int kPrecision = 24;
  static const Format& Get();
};
// The format of the thread's innermost EmulationScope; std::logic_error when there is none.
struct DynamicFormatTag {
  static const Format& Get() {
    const Format* f = ThreadEmulationContext().format;
    if (f == nullptr) [[unlikely]]
      ThrowNoEmulationScope();
    return *f;
  }
  [[noreturn]] static void ThrowNoEmulationScope();
};

namespace emulated_oracle_detail {

// Where one operation rounds to.
struct Env {
  const Format* format;
  Rounding rounding;
  StochasticBits* stochastic;
};

template <class Tag>
concept HasStaticPrecision = requires {
  { Tag::kPrecision } -> std::convertible_to<int>;
};

// A static tag's format, checked once at first use (and at compile time where the tag
// declares kPrecision).
template <class Tag>
const Format& StaticFormat() {
  if constexpr (HasStaticPrecision<Tag>) {
    static_assert(Tag::kPrecision <= kEmulatedMaxPrecision,
                  "EmulatedOracle needs p <= 26: the exact product of two p-bit values must fit a "
                  "double");
  }
  static const Format& checked = (CheckEmulableFormat(Tag::Get()), Tag::Get());
  return checked;
}

// hi = RN(x) != 0 and err = x - hi exactly (or any value with that sign): the round-to-odd
// double of x.
inline double RoundToOdd(double hi, double err) {
  if (err == 0) return hi;
  std::uint64_t bits = std::bit_cast<std::uint64_t>(hi);
  if ((bits & 1) != 0) return hi;
  // hi's neighbour toward err: one step in the bit pattern, up in magnitude when err has
  // hi's sign.
  bits = ((err > 0) == (hi > 0)) ? bits + 1 : bits - 1;
  return std::bit_cast<double>(bits);
}

// The operations on values of the format (out of line, in emulated_oracle.cpp: each calls
// RoundToFormat anyway, and keeping them out of line keeps every carrier instantiation small).
double Add(double a, double b, const Env& e);
double Mul(double a, double b, const Env& e);
double Div(double a, double b, const Env& e);
double Sqrt(double a, const Env& e);
double Fma(double a, double b, double c, const Env& e);
double Exp(double x, const Env& e);
double Exp2(double x, const Env& e);
double Log(double x, const Env& e);
double FromDouble(double x, const Env& e);
double FromLongDouble(long double x, const Env& e);
// |n| with the given sign, rounded once.
double FromMagnitude(std::uint64_t n, bool negative, const Env& e);

template <std::integral I>
double FromInteger(I n, const Env& e) {
  if constexpr (std::is_signed_v<I>) {
    const bool negative = n < 0;
    const std::uint64_t mag =
        negative ? std::uint64_t{0} - static_cast<std::uint64_t>(n) : static_cast<std::uint64_t>(n);
    return FromMagnitude(mag, negative, e);
  } else {
    return FromMagnitude(static_cast<std::uint64_t>(n), false, e);
  }
}

}  // namespace emulated_oracle_detail

template <class Tag, Rounding R = Rounding::kNearestEven>
class EmulatedOracle {
 public:
  using FormatTag = Tag;
  static constexpr Rounding kRounding = R;

  EmulatedOracle() = default;  // +0
  explicit EmulatedOracle(double x) : v_(emulated_oracle_detail::FromDouble(x, Env())) {}
  explicit EmulatedOracle(float x) : EmulatedOracle(static_cast<double>(x)) {}
  explicit EmulatedOracle(long double x) : v_(emulated_oracle_detail::FromLongDouble(x, Env())) {}
  template <std::integral I>
  explicit EmulatedOracle(I n) : v_(emulated_oracle_detail::FromInteger(n, Env())) {}
  // From another EmulatedOracle type: its value (a double) rounded once into this format.
  template <class Tag2, Rounding R2>
  explicit EmulatedOracle(const EmulatedOracle<Tag2, R2>& x) : EmulatedOracle(x.Value()) {}

  // No rounding: v must already be a value of the format, +-inf or NaN.
  static EmulatedOracle FromFormatValue(double v) {
    EmulatedOracle e;
    e.v_ = v;
    return e;
  }

  double Value() const { return v_; }
  explicit operator double() const { return v_; }
  explicit operator long double() const { return v_; }
  explicit operator float() const { return static_cast<float>(v_); }

  static const Format& GetFormat() { return *Env().format; }
  static Rounding GetRounding() { return Env().rounding; }

  friend EmulatedOracle operator+(EmulatedOracle a, EmulatedOracle b) {
    return FromFormatValue(emulated_oracle_detail::Add(a.v_, b.v_, Env()));
  }
  friend EmulatedOracle operator-(EmulatedOracle a, EmulatedOracle b) {
    return FromFormatValue(emulated_oracle_detail::Add(a.v_, -b.v_, Env()));
  }
  friend EmulatedOracle operator*(EmulatedOracle a, EmulatedOracle b) {
    return FromFormatValue(emulated_oracle_detail::Mul(a.v_, b.v_, Env()));
  }
  friend EmulatedOracle operator/(EmulatedOracle a, EmulatedOracle b) {
    return FromFormatValue(emulated_oracle_detail::Div(a.v_, b.v_, Env()));
  }
  friend EmulatedOracle operator-(EmulatedOracle a) { return FromFormatValue(-a.v_); }
  friend EmulatedOracle operator+(EmulatedOracle a) { return a; }
  EmulatedOracle& operator+=(EmulatedOracle b) { return *this = *this + b; }
  EmulatedOracle& operator-=(EmulatedOracle b) { return *this = *this - b; }
  EmulatedOracle& operator*=(EmulatedOracle b) { return *this = *this * b; }
  EmulatedOracle& operator/=(EmulatedOracle b) { return *this = *this / b; }

  friend bool operator==(EmulatedOracle a, EmulatedOracle b) { return a.v_ == b.v_; }
  friend std::partial_ordering operator<=>(EmulatedOracle a, EmulatedOracle b) {
    return a.v_ <=> b.v_;
  }

  friend EmulatedOracle sqrt(EmulatedOracle a) {
    return FromFormatValue(emulated_oracle_detail::Sqrt(a.v_, Env()));
  }
  friend EmulatedOracle fma(EmulatedOracle a, EmulatedOracle b, EmulatedOracle c) {
    return FromFormatValue(emulated_oracle_detail::Fma(a.v_, b.v_, c.v_, Env()));
  }
  friend EmulatedOracle abs(EmulatedOracle a) { return FromFormatValue(std::fabs(a.v_)); }
  friend EmulatedOracle fabs(EmulatedOracle a) { return FromFormatValue(std::fabs(a.v_)); }
  friend EmulatedOracle exp(EmulatedOracle a) {
    return FromFormatValue(emulated_oracle_detail::Exp(a.v_, Env()));
  }
  friend EmulatedOracle exp2(EmulatedOracle a) {
    return FromFormatValue(emulated_oracle_detail::Exp2(a.v_, Env()));
  }
  friend EmulatedOracle log(EmulatedOracle a) {
    return FromFormatValue(emulated_oracle_detail::Log(a.v_, Env()));
  }

  friend std::ostream& operator<<(std::ostream& os, EmulatedOracle a) { return os << a.v_; }

 private:
  static emulated_oracle_detail::Env Env() {
    EmulationContext& context = ThreadEmulationContext();
    const Format* format;
    if constexpr (std::is_same_v<Tag, DynamicFormatTag>) {
      format = &DynamicFormatTag::Get();
    } else {
      format = &emulated_oracle_detail::StaticFormat<Tag>();
    }
    const Rounding rounding = (R == kDynamicRounding) ? context.rounding : R;
    return {format, rounding, &context.stochastic};
  }

  double v_ = 0.0;
};

// Names for the predefined formats with round-to-nearest-even.
using EmulatedOracleFp8E4M3 = EmulatedOracle<Fp8E4M3Tag>;
using EmulatedOracleFp8E5M2 = EmulatedOracle<Fp8E5M2Tag>;
using EmulatedOracleFp16 = EmulatedOracle<Fp16Tag>;
using EmulatedOracleBF16 = EmulatedOracle<BF16Tag>;
using EmulatedOracleTF32 = EmulatedOracle<TF32Tag>;
using EmulatedOracleFp32 = EmulatedOracle<Fp32Tag>;
// Format and rounding from the thread's EmulationScope (the CLI's custom:... formats).
using EmulatedOracleDynamic = EmulatedOracle<DynamicFormatTag, kDynamicRounding>;

// What a carrier asks of its scalar. Constants are exact values of every emulable format
// (1 included: an emulable format has emin <= 0 <= emax); Infinity() is the +inf sentinel
// also for formats without an inf encoding (see the contract), QuietNaN() a double NaN.
// FromCount rounds once (exact while n < 2^p). BitEqual compares the doubles' bits; any NaN
// equals any NaN.
template <class Tag, Rounding R>
struct ScalarTraits<EmulatedOracle<Tag, R>> {
  using T = EmulatedOracle<Tag, R>;
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

}  // namespace carrier
