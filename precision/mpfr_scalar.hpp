// precision/mpfr_scalar.hpp: Mpfr, an MPFR number with runtime precision, usable from several
// threads at once. Compiled only with MPFR (CARRIER_HAVE_MPFR); without it this header is empty.
//
// Contract.
//   Value     One mpfr_t: a binary floating-point number with its OWN precision (bits, >= 1),
//             MPFR's huge exponent range (no subnormals, overflow only near 2^(2^62)), +-0,
//             +-inf and NaN. Every operation rounds to nearest, ties to even, once.
//   Precision The result of a binary operation (and of fma) has the largest operand precision;
//             unary operations (-, abs, sqrt, exp, exp2, log) keep their operand's. Values
//             built from double, float, long double, integers, strings and the ScalarTraits
//             constants take the calling thread's working precision (kMpfrDefaultPrecision =
//             256 bits until an MpfrPrecisionScope sets another), so run one computation inside
//             one scope: Zero() + x then has x's precision, not a mix. Construction from a
//             double is exact when the working precision is >= 53 (from long double: >= 64,
//             from a 64-bit integer: >= 64); otherwise it rounds once. Copies keep the source's
//             precision; assignment takes the source's precision and value (value semantics:
//             after a = b, a and b are identical).
//   Out       explicit conversion to double, float and long double rounds to nearest even
//             (correctly, subnormals included); ToString prints enough digits to read back.
//   Functions sqrt, fma, exp, exp2, log, abs found by ADL: MPFR's correctly rounded functions.
//             Comparisons are IEEE's (NaN unordered; +0 == -0).
//   Threads   Why not Boost: Boost 1.74's mpfr_float takes its precision from
//             mpfr_float::default_precision(), one process-wide static (checked in
//             boost/multiprecision/mpfr.hpp: a function-local static, no thread_local, no
//             thread_default_precision), so two threads asking for different precisions race.
//             Here the working precision is thread_local and each value carries its own, so
//             threads never share mutable state; MPFR itself is thread-safe in Debian's build
//             (mpfr_buildopt_tls_p()), with per-thread caches of constants: a thread that used
//             exp/log should call MpfrReleaseThreadCaches() before it ends, or they leak.
//             Mpfr assumes MPFR's default exponent range on the calling thread (code that
//             narrows it with mpfr_set_emin/emax must restore it).
//   Moves     A moved-from Mpfr holds no number: it may only be destroyed or assigned to.
//   C API     get() gives the mpfr_t for MPFR's C functions and for RoundToFormat(mpfr_srcptr).
#pragma once

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <cstdint>
// <cstdint> first: mpfr.h declares its intmax_t functions only after it.
#include <mpfr.h>

#include <algorithm>
#include <compare>
#include <concepts>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/scalar.hpp"

namespace carrier {

inline constexpr mpfr_prec_t kMpfrDefaultPrecision = 256;

namespace mpfr_detail {
inline mpfr_prec_t& WorkingPrecisionRef() noexcept {
  thread_local mpfr_prec_t precision = kMpfrDefaultPrecision;
  return precision;
}
}  // namespace mpfr_detail

// The calling thread's working precision in bits.
inline mpfr_prec_t MpfrWorkingPrecision() noexcept { return mpfr_detail::WorkingPrecisionRef(); }

// Sets the calling thread's working precision for its lifetime and restores the previous one
// when it ends (destroy in reverse order, on the same thread). Bits outside MPFR's
// [MPFR_PREC_MIN, MPFR_PREC_MAX] throw std::invalid_argument.
class MpfrPrecisionScope {
 public:
  explicit MpfrPrecisionScope(long bits);
  ~MpfrPrecisionScope() { mpfr_detail::WorkingPrecisionRef() = saved_; }
  MpfrPrecisionScope(const MpfrPrecisionScope&) = delete;
  MpfrPrecisionScope& operator=(const MpfrPrecisionScope&) = delete;

 private:
  mpfr_prec_t saved_;
};

// Frees MPFR's per-thread caches (constants such as log 2 used by exp and log). Call it at the
// end of a thread that used Mpfr.
void MpfrReleaseThreadCaches();

class Mpfr {
 public:
  Mpfr() : Mpfr(Uninitialised{}, MpfrWorkingPrecision()) { mpfr_set_zero(v_, 1); }
  explicit Mpfr(double x) : Mpfr(Uninitialised{}, MpfrWorkingPrecision()) {
    mpfr_set_d(v_, x, MPFR_RNDN);
  }
  explicit Mpfr(float x) : Mpfr(Uninitialised{}, MpfrWorkingPrecision()) {
    mpfr_set_flt(v_, x, MPFR_RNDN);
  }
  explicit Mpfr(long double x) : Mpfr(Uninitialised{}, MpfrWorkingPrecision()) {
    mpfr_set_ld(v_, x, MPFR_RNDN);
  }
  template <std::integral I>
  explicit Mpfr(I n) : Mpfr(Uninitialised{}, MpfrWorkingPrecision()) {
    static_assert(sizeof(long) == 8, "Mpfr assumes LP64 (64-bit long)");
    if constexpr (std::is_signed_v<I>) {
      mpfr_set_si(v_, static_cast<long>(n), MPFR_RNDN);
    } else {
      mpfr_set_ui(v_, static_cast<unsigned long>(n), MPFR_RNDN);
    }
  }
  // x rounded to `bits` bits (exact for bits >= 53), whatever the working precision.
  static Mpfr FromDouble(double x, long bits) {
    Mpfr r(Uninitialised{}, CheckedPrecision(bits));
    mpfr_set_d(r.v_, x, MPFR_RNDN);
    return r;
  }
  // +0 with `bits` bits.
  static Mpfr WithPrecision(long bits) {
    Mpfr r(Uninitialised{}, CheckedPrecision(bits));
    mpfr_set_zero(r.v_, 1);
    return r;
  }
  // Decimal or hex ("0x1.8p-3") text, "inf", "-inf", "nan", rounded once to `bits` (0: the
  // working precision). Bad text throws std::invalid_argument (one line).
  static Mpfr FromString(std::string_view text, long bits = 0);

  Mpfr(const Mpfr& o) : Mpfr(Uninitialised{}, o.Precision()) { mpfr_set(v_, o.v_, MPFR_RNDN); }
  Mpfr(Mpfr&& o) noexcept {
    v_[0] = o.v_[0];
    o.v_[0]._mpfr_d = nullptr;
  }
  Mpfr& operator=(const Mpfr& o) {
    if (this == &o) return *this;
    if (v_[0]._mpfr_d == nullptr) {
      mpfr_init2(v_, o.Precision());
    } else if (Precision() != o.Precision()) {
      mpfr_set_prec(v_, o.Precision());
    }
    mpfr_set(v_, o.v_, MPFR_RNDN);
    return *this;
  }
  Mpfr& operator=(Mpfr&& o) noexcept {
    std::swap(v_[0], o.v_[0]);
    return *this;
  }
  ~Mpfr() {
    if (v_[0]._mpfr_d != nullptr) mpfr_clear(v_);
  }

  mpfr_prec_t Precision() const { return mpfr_get_prec(v_); }
  mpfr_srcptr get() const { return v_; }
  mpfr_ptr get() { return v_; }

  double ToDouble() const { return mpfr_get_d(v_, MPFR_RNDN); }
  explicit operator double() const { return mpfr_get_d(v_, MPFR_RNDN); }
  explicit operator float() const { return mpfr_get_flt(v_, MPFR_RNDN); }
  explicit operator long double() const { return mpfr_get_ld(v_, MPFR_RNDN); }
  // Shortest-enough decimal: `digits` significant digits (0: enough to read back exactly).
  std::string ToString(int digits = 0) const;

  friend Mpfr operator+(const Mpfr& a, const Mpfr& b) { return Binary(mpfr_add, a, b); }
  friend Mpfr operator-(const Mpfr& a, const Mpfr& b) { return Binary(mpfr_sub, a, b); }
  friend Mpfr operator*(const Mpfr& a, const Mpfr& b) { return Binary(mpfr_mul, a, b); }
  friend Mpfr operator/(const Mpfr& a, const Mpfr& b) { return Binary(mpfr_div, a, b); }
  friend Mpfr operator-(const Mpfr& a) { return Unary(mpfr_neg, a); }
  friend Mpfr operator+(const Mpfr& a) { return a; }
  Mpfr& operator+=(const Mpfr& b) { return *this = *this + b; }
  Mpfr& operator-=(const Mpfr& b) { return *this = *this - b; }
  Mpfr& operator*=(const Mpfr& b) { return *this = *this * b; }
  Mpfr& operator/=(const Mpfr& b) { return *this = *this / b; }

  friend bool operator==(const Mpfr& a, const Mpfr& b) { return mpfr_equal_p(a.v_, b.v_) != 0; }
  friend std::partial_ordering operator<=>(const Mpfr& a, const Mpfr& b) {
    if (mpfr_nan_p(a.v_) || mpfr_nan_p(b.v_)) return std::partial_ordering::unordered;
    const int c = mpfr_cmp(a.v_, b.v_);
    return c < 0 ? std::partial_ordering::less
                 : (c > 0 ? std::partial_ordering::greater : std::partial_ordering::equivalent);
  }

  friend Mpfr sqrt(const Mpfr& a) { return Unary(mpfr_sqrt, a); }
  friend Mpfr abs(const Mpfr& a) { return Unary(mpfr_abs, a); }
  friend Mpfr fabs(const Mpfr& a) { return Unary(mpfr_abs, a); }
  friend Mpfr exp(const Mpfr& a) { return Unary(mpfr_exp, a); }
  friend Mpfr exp2(const Mpfr& a) { return Unary(mpfr_exp2, a); }
  friend Mpfr log(const Mpfr& a) { return Unary(mpfr_log, a); }
  friend Mpfr fma(const Mpfr& a, const Mpfr& b, const Mpfr& c) {
    Mpfr r(Uninitialised{}, std::max({a.Precision(), b.Precision(), c.Precision()}));
    mpfr_fma(r.v_, a.v_, b.v_, c.v_, MPFR_RNDN);
    return r;
  }

  friend std::ostream& operator<<(std::ostream& os, const Mpfr& a) { return os << a.ToString(); }

 private:
  struct Uninitialised {};
  Mpfr(Uninitialised /*tag*/, mpfr_prec_t bits) { mpfr_init2(v_, bits); }  // NaN until set

  static mpfr_prec_t CheckedPrecision(long bits);

  template <class Op>
  static Mpfr Binary(Op op, const Mpfr& a, const Mpfr& b) {
    Mpfr r(Uninitialised{}, std::max(a.Precision(), b.Precision()));
    op(r.v_, a.v_, b.v_, MPFR_RNDN);
    return r;
  }
  template <class Op>
  static Mpfr Unary(Op op, const Mpfr& a) {
    Mpfr r(Uninitialised{}, a.Precision());
    op(r.v_, a.v_, MPFR_RNDN);
    return r;
  }

  mpfr_t v_;
};

// Constants come at the working precision. BitEqual: equal values with equal signs (so +0 and
// -0 differ), any NaN equals any NaN; precisions are not compared.
template <>
struct ScalarTraits<Mpfr> {
  static Mpfr Zero() { return Mpfr(); }
  static Mpfr NegZero() { return -Mpfr(); }
  static Mpfr One() { return Mpfr(1); }
  static Mpfr Infinity() {
    Mpfr r;
    mpfr_set_inf(r.get(), 1);
    return r;
  }
  static Mpfr QuietNaN() {
    Mpfr r;
    mpfr_set_nan(r.get());
    return r;
  }
  static Mpfr FromCount(std::uint64_t n) { return Mpfr(n); }
  static bool IsNaN(const Mpfr& x) { return mpfr_nan_p(x.get()) != 0; }
  static bool IsInf(const Mpfr& x) { return mpfr_inf_p(x.get()) != 0; }
  static bool IsFinite(const Mpfr& x) { return mpfr_number_p(x.get()) != 0; }
  static bool SignBit(const Mpfr& x) { return mpfr_signbit(x.get()) != 0; }
  static Mpfr Abs(const Mpfr& x) { return abs(x); }
  static Mpfr Sqrt(const Mpfr& x) { return sqrt(x); }
  static bool BitEqual(const Mpfr& a, const Mpfr& b) {
    if (IsNaN(a) || IsNaN(b)) return IsNaN(a) && IsNaN(b);
    return a == b && SignBit(a) == SignBit(b);
  }
};

}  // namespace carrier

#endif  // CARRIER_HAVE_MPFR
