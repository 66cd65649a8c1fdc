// precision/reference/mpfr_util.cpp: exact MPFR sums and products, rounding to odd, and the
// rounding-window test (contracts in mpfr_util.hpp).
#include "precision/reference/mpfr_util.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace carrier::reference {

namespace {

// Exponent of the lowest set bit of a non-zero finite x (x = m 2^low with m odd ... up to its
// leading bit at EXP(x) - 1).
long LowBit(mpfr_srcptr x) { return static_cast<long>(mpfr_get_exp(x)) - mpfr_min_prec(x); }

mpfr_prec_t ClampPrec(long bits) {
  return static_cast<mpfr_prec_t>(std::max<long>(bits, MPFR_PREC_MIN + 1));
}

void CheckExact(int ternary, const char* what) {
  if (ternary != 0) throw std::logic_error(std::string(what) + ": result was not exact");
}

}  // namespace

MpfrArray::MpfrArray(std::size_t n, mpfr_prec_t prec) {
  const std::size_t per = (mpfr_custom_get_size(prec) + sizeof(mp_limb_t) - 1) / sizeof(mp_limb_t);
  limbs_.assign(n * per, 0);
  head_.resize(n);
  ptr_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    void* significand = limbs_.data() + i * per;
    mpfr_custom_init(significand, prec);
    mpfr_custom_init_set(&head_[i], MPFR_ZERO_KIND, 0, prec, significand);
    ptr_[i] = &head_[i];
  }
}

void SumExact(mpfr_ptr out, const mpfr_ptr* terms, std::size_t n) {
  long top = LONG_MIN, low = LONG_MAX;
  bool special = false;
  for (std::size_t i = 0; i < n; ++i) {
    mpfr_srcptr t = terms[i];
    if (!mpfr_number_p(t)) {
      special = true;
      break;
    }
    if (mpfr_zero_p(t)) continue;
    top = std::max(top, static_cast<long>(mpfr_get_exp(t)));
    low = std::min(low, LowBit(t));
  }
  if (special) {  // NaN or inf: MPFR's IEEE rules decide, at any precision
    mpfr_set_prec(out, 53);
    mpfr_sum(out, terms, n, MPFR_RNDN);
    return;
  }
  if (top == LONG_MIN) {
    mpfr_set_prec(out, 53);
    mpfr_set_zero(out, 1);
    return;
  }
  // n terms below 2^top sum to below n 2^top < 2^(top + bits(n)); all bits are >= 2^low.
  const long carry_bits = 64 - std::countl_zero(static_cast<std::uint64_t>(n));
  mpfr_set_prec(out, ClampPrec(top - low + carry_bits + 1));
  CheckExact(mpfr_sum(out, terms, n, MPFR_RNDN), "SumExact");
  if (mpfr_zero_p(out)) mpfr_set_zero(out, 1);
}

void AddExact(mpfr_ptr out, mpfr_srcptr a, mpfr_srcptr b) {
  mpfr_ptr terms[2] = {const_cast<mpfr_ptr>(a), const_cast<mpfr_ptr>(b)};
  MpfrValue tmp;
  SumExact(tmp.get(), terms, 2);
  mpfr_swap(out, tmp.get());
}

void SubExact(mpfr_ptr out, mpfr_srcptr a, mpfr_srcptr b) {
  MpfrValue nb(mpfr_get_prec(b));
  mpfr_neg(nb.get(), b, MPFR_RNDN);
  AddExact(out, a, nb.get());
}

void MulExact(mpfr_ptr out, mpfr_srcptr a, mpfr_srcptr b) {
  const long bits =
      (mpfr_regular_p(a) ? mpfr_min_prec(a) : 1) + (mpfr_regular_p(b) ? mpfr_min_prec(b) : 1);
  MpfrValue tmp(ClampPrec(bits));
  CheckExact(mpfr_mul(tmp.get(), a, b, MPFR_RNDN), "MulExact");
  mpfr_swap(out, tmp.get());
}

namespace {

// Turns a truncated (RNDZ) result with ternary value t into the round-to-odd result.
void MakeOdd(mpfr_ptr v, int ternary) {
  if (ternary == 0 || !mpfr_regular_p(v)) return;
  if (mpfr_min_prec(v) < mpfr_get_prec(v)) {  // last bit is 0: step away from zero
    if (mpfr_sgn(v) > 0) {
      mpfr_nextabove(v);
    } else {
      mpfr_nextbelow(v);
    }
  }
}

}  // namespace

void DivRoundToOdd(mpfr_ptr out, mpfr_srcptr a, mpfr_srcptr b) {
  MpfrValue tmp(kOddBits);
  MakeOdd(tmp.get(), mpfr_div(tmp.get(), a, b, MPFR_RNDZ));
  mpfr_swap(out, tmp.get());
}

void SqrtRoundToOdd(mpfr_ptr out, mpfr_srcptr a) {
  MpfrValue tmp(kOddBits);
  MakeOdd(tmp.get(), mpfr_sqrt(tmp.get(), a, MPFR_RNDZ));
  mpfr_swap(out, tmp.get());
}

bool RoundsTo(mpfr_srcptr v, mpfr_srcptr err, double* d, long double* ld) {
  *d = mpfr_get_d(v, MPFR_RNDN);
  *ld = mpfr_get_ld(v, MPFR_RNDN);
  if (!mpfr_number_p(v) || mpfr_zero_p(err)) return true;
  if (!mpfr_number_p(err)) return false;
  // Round the window's ends outward, so the checked window contains the true one.
  const mpfr_prec_t prec = mpfr_get_prec(v) + 64;
  MpfrValue lo(prec), hi(prec);
  mpfr_sub(lo.get(), v, err, MPFR_RNDD);
  mpfr_add(hi.get(), v, err, MPFR_RNDU);
  const double dlo = mpfr_get_d(lo.get(), MPFR_RNDN), dhi = mpfr_get_d(hi.get(), MPFR_RNDN);
  const long double llo = mpfr_get_ld(lo.get(), MPFR_RNDN);
  const long double lhi = mpfr_get_ld(hi.get(), MPFR_RNDN);
  // Equal values with equal signs (a window around 0 gives -0 and +0 or different signs).
  return std::bit_cast<std::uint64_t>(dlo) == std::bit_cast<std::uint64_t>(dhi) && llo == lhi &&
         std::signbit(llo) == std::signbit(lhi);
}

}  // namespace carrier::reference

#endif  // CARRIER_HAVE_MPFR
