// precision/reference/mpfr_util.hpp: the small MPFR toolkit the reference tiers share (MPFR's C
// API directly; each value carries its own explicit precision, so nothing here touches a
// process-wide default and every function is safe to call from several threads at once).
//
// MpfrValue          one mpfr_t with value semantics (copy keeps the precision).
// WideExponentRange  sets MPFR's exponent range (thread-local in Debian's build) to the widest
//                    MPFR allows for its lifetime and restores it after: references must not
//                    overflow or underflow where the real result does not.
// MpfrArray          n values of one precision in a single allocation (MPFR's custom
//                    interface), as mpfr_sum wants them: an array of pointers.
// SumExact(out, t, n)          out = t_0 + ... + t_{n-1} exactly: out's precision is set to the
//                    span of the terms' bits plus carry room, and mpfr_sum's ternary value is
//                    checked to be 0. NaN/inf terms follow MPFR (IEEE) rules; an exact zero is +0.
//                    Cost: mpfr_sum over n terms, O(n + output bits).
// AddExact, MulExact           the same guarantee for two operands.
// DivRoundToOdd, SqrtRoundToOdd
//                    out (precision kOddBits = 128) = a / b or sqrt(a) rounded to odd: truncated,
//                    and when inexact the last bit forced to 1. Rounding that to double or long
//                    double (p <= 64 < 128 - 1) then gives the correct rounding of the exact
//                    quotient (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums:
//                    proved algorithms using rounding to odd", IEEE TC 57(4), 2008), subnormal
//                    results included, as the target has fewer bits there.
// RoundsTo(v, err, &d, &ld)    true when every real within err (absolute, as an MPFR value)
//                    of v rounds to the same double and the same long double; sets them.
#pragma once

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <mpfr.h>

#include <cstddef>
#include <utility>
#include <vector>

namespace carrier::reference {

class MpfrValue {
 public:
  explicit MpfrValue(mpfr_prec_t prec = 53) { mpfr_init2(v_, prec); }
  MpfrValue(mpfr_prec_t prec, double x) : MpfrValue(prec) { mpfr_set_d(v_, x, MPFR_RNDN); }
  MpfrValue(const MpfrValue& o) : MpfrValue(mpfr_get_prec(o.v_)) { mpfr_set(v_, o.v_, MPFR_RNDN); }
  MpfrValue(MpfrValue&& o) noexcept : MpfrValue(MPFR_PREC_MIN) { mpfr_swap(v_, o.v_); }
  MpfrValue& operator=(const MpfrValue& o) {
    if (this != &o) {
      mpfr_set_prec(v_, mpfr_get_prec(o.v_));
      mpfr_set(v_, o.v_, MPFR_RNDN);
    }
    return *this;
  }
  MpfrValue& operator=(MpfrValue&& o) noexcept {
    mpfr_swap(v_, o.v_);
    return *this;
  }
  ~MpfrValue() { mpfr_clear(v_); }

  mpfr_ptr get() { return v_; }
  mpfr_srcptr get() const { return v_; }
  mpfr_prec_t precision() const { return mpfr_get_prec(v_); }
  double ToDouble() const { return mpfr_get_d(v_, MPFR_RNDN); }
  long double ToLongDouble() const { return mpfr_get_ld(v_, MPFR_RNDN); }

 private:
  mpfr_t v_;
};

class WideExponentRange {
 public:
  WideExponentRange() : emin_(mpfr_get_emin()), emax_(mpfr_get_emax()) {
    mpfr_set_emin(mpfr_get_emin_min());
    mpfr_set_emax(mpfr_get_emax_max());
  }
  ~WideExponentRange() {
    mpfr_set_emin(emin_);
    mpfr_set_emax(emax_);
  }
  WideExponentRange(const WideExponentRange&) = delete;
  WideExponentRange& operator=(const WideExponentRange&) = delete;

 private:
  mpfr_exp_t emin_, emax_;
};

class MpfrArray {
 public:
  MpfrArray(std::size_t n, mpfr_prec_t prec);
  MpfrArray(const MpfrArray&) = delete;
  MpfrArray& operator=(const MpfrArray&) = delete;
  std::size_t size() const { return ptr_.size(); }
  mpfr_ptr operator[](std::size_t i) { return ptr_[i]; }
  mpfr_srcptr operator[](std::size_t i) const { return ptr_[i]; }
  const mpfr_ptr* data() const { return ptr_.data(); }

 private:
  std::vector<mp_limb_t> limbs_;
  std::vector<__mpfr_struct> head_;
  std::vector<mpfr_ptr> ptr_;
};

inline constexpr mpfr_prec_t kOddBits = 128;

void SumExact(mpfr_ptr out, const mpfr_ptr* terms, std::size_t n);
void AddExact(mpfr_ptr out, mpfr_srcptr a, mpfr_srcptr b);
void SubExact(mpfr_ptr out, mpfr_srcptr a, mpfr_srcptr b);
void MulExact(mpfr_ptr out, mpfr_srcptr a, mpfr_srcptr b);
void DivRoundToOdd(mpfr_ptr out, mpfr_srcptr a, mpfr_srcptr b);
void SqrtRoundToOdd(mpfr_ptr out, mpfr_srcptr a);
bool RoundsTo(mpfr_srcptr v, mpfr_srcptr err, double* d, long double* ld);

}  // namespace carrier::reference

#endif  // CARRIER_HAVE_MPFR
