// precision/metrics_exact.hpp: metrics.hpp's scalar error for a result wider than long double
// (an fp128 replay, precision/float128.hpp), measured without rounding the result first.
// MPFR only (CARRIER_HAVE_MPFR).
//
// Contract. The computed value is c = hi + lo exactly (two long doubles: SplitToLongDouble's
// split); the reference r is an MPFR value (precision/reference: exact, or certified). The
// difference c - r is formed exactly in MPFR; abs = |c - r|, rel = |c - r| / |r| and
// ulps = |c - r| / ulp(r) with ulp(r) = 2^(max(e_r, emin) - p + 1) (e_r = floor(log2 |r|); p and
// emin of the compute format) are each rounded once to double. So an error of 2^-120 relative
// is seen as such, where long double (64 bits) would round it to 0 or to 2^-64. Special cases
// as metrics.hpp: r == 0 sets reference_zero (rel 0 when c == 0, else +inf); a NaN or infinity
// on either side gives 0 when both are the same infinity, NaN when both are NaN, and +inf with
// special_mismatch otherwise. Thread-safe (MPFR values on the stack only).
#pragma once

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <algorithm>
#include <cmath>

#include "precision/metrics.hpp"
#include "precision/reference/mpfr_util.hpp"

namespace carrier {

inline ScalarError MeasureScalarExact(long double hi, long double lo, mpfr_srcptr reference, int p,
                                      int emin) {
  ScalarError m;
  const long double r_ld = mpfr_get_ld(reference, MPFR_RNDN);
  if (!std::isfinite(hi) || !mpfr_number_p(reference)) return MeasureScalar(hi, r_ld, Fp64());
  using reference::MpfrValue;
  MpfrValue h(64), l(64), c(128), diff;
  mpfr_set_ld(h.get(), hi, MPFR_RNDN);  // exact: a long double has 64 bits
  mpfr_set_ld(l.get(), lo, MPFR_RNDN);
  reference::AddExact(c.get(), h.get(), l.get());
  reference::SubExact(diff.get(), c.get(), reference);
  mpfr_abs(diff.get(), diff.get(), MPFR_RNDN);  // in place: exact
  m.abs = mpfr_get_d(diff.get(), MPFR_RNDN);
  long e = emin;
  if (mpfr_zero_p(reference)) {
    m.reference_zero = true;
    m.rel = mpfr_zero_p(diff.get()) ? 0.0 : INFINITY;
  } else {
    MpfrValue q(64);
    mpfr_div(q.get(), diff.get(), reference, MPFR_RNDN);
    m.rel = std::fabs(mpfr_get_d(q.get(), MPFR_RNDN));
    e = std::max<long>(mpfr_get_exp(reference) - 1,
                       emin);  // MPFR's exponent: |r| in [2^(E-1), 2^E)
  }
  MpfrValue ulps(mpfr_get_prec(diff.get()));
  mpfr_mul_2si(ulps.get(), diff.get(), -(e - p + 1), MPFR_RNDN);  // exact: a power of two
  m.ulps = mpfr_get_d(ulps.get(), MPFR_RNDN);
  return m;
}

}  // namespace carrier

#endif  // CARRIER_HAVE_MPFR
