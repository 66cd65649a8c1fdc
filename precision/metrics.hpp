// precision/metrics.hpp: how far a computed result is from its certified reference.
//
// Scalar outputs: absolute error |c - r|; relative error |c - r| / |r|; and the error in ulps
// of the output format, |c - r| / ulp_F(r) with ulp_F(r) = 2^(max(e_r, emin) - p + 1) the
// spacing of F at r (e_r = floor(log2 |r|)), so 0.5 means "correctly rounded" for rne.
// Vector outputs (softmax, FlashRow's O): normwise in the inf and 2 norms,
// ||c - r|| / ||r||, and componentwise max_i |c_i - r_i| / |r_i|.
//
// Special cases, never a silent NaN:
//   - r == 0: the relative error is 0 when c == 0 and +inf otherwise, and `reference_zero` is
//     set so reports can say "relative to a zero reference" (componentwise: zero components
//     are counted in `zero_components` and compared absolutely: c_i != 0 -> +inf).
//   - non-finite r or c: errors are 0 when both are the same infinity (the special-values
//     table was honoured, exactly), NaN when both are NaN (the table was honoured, but there is
//     no error to measure: a NaN result is never reported as error 0), and +inf otherwise
//     (`special_mismatch` set). A vector with a component NaN on both sides has NaN errors.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>

#include "precision/format.hpp"

namespace carrier {

struct ScalarError {
  double abs = 0;
  double rel = 0;
  double ulps = 0;
  bool reference_zero = false;
  bool special_mismatch = false;
};

// ulp of format f at the (finite) value r, as defined above.
inline double UlpOf(long double r, const Format& f) {
  r = std::fabs(r);
  int e = f.emin;
  if (r >= static_cast<long double>(f.MinNormal())) e = std::ilogb(r);
  return std::ldexp(1.0, e - f.precision + 1);
}

inline ScalarError MeasureScalar(long double computed, long double reference, const Format& f) {
  ScalarError m;
  const bool cn = std::isnan(computed), rn = std::isnan(reference);
  const bool ci = std::isinf(computed), ri = std::isinf(reference);
  if (cn || rn || ci || ri) {
    if (cn && rn) {
      m.abs = m.rel = m.ulps = NAN;
    } else if (!(ci && ri && computed == reference)) {
      m.special_mismatch = true;
      m.abs = m.rel = m.ulps = INFINITY;
    }
    return m;
  }
  const long double diff = std::fabs(computed - reference);
  m.abs = static_cast<double>(diff);
  m.ulps = static_cast<double>(diff / UlpOf(reference, f));
  if (reference == 0) {
    m.reference_zero = true;
    m.rel = diff == 0 ? 0.0 : INFINITY;
  } else {
    m.rel = static_cast<double>(diff / std::fabs(reference));
  }
  return m;
}

struct VectorError {
  double normwise_inf = 0;
  double normwise_2 = 0;
  double componentwise = 0;
  std::size_t zero_components = 0;
  bool special_mismatch = false;
};

inline VectorError MeasureVector(std::span<const long double> computed,
                                 std::span<const long double> reference) {
  VectorError v;
  long double diff_inf = 0, ref_inf = 0, diff_2 = 0, ref_2 = 0;
  bool both_nan = false;
  for (std::size_t i = 0; i < computed.size() && i < reference.size(); ++i) {
    const long double c = computed[i], r = reference[i];
    if (!std::isfinite(c) || !std::isfinite(r)) {
      if (std::isnan(c) && std::isnan(r)) {
        both_nan = true;
      } else if (!(std::isinf(c) && c == r)) {
        v.special_mismatch = true;
      }
      continue;
    }
    const long double d = std::fabs(c - r);
    diff_inf = std::max(diff_inf, d);
    ref_inf = std::max(ref_inf, std::fabs(r));
    diff_2 += d * d;
    ref_2 += r * r;
    if (r == 0) {
      ++v.zero_components;
      if (d != 0) v.componentwise = INFINITY;
    } else {
      v.componentwise = std::max(v.componentwise, static_cast<double>(d / std::fabs(r)));
    }
  }
  auto ratio = [](long double num, long double den) {
    return den == 0 ? (num == 0 ? 0.0 : INFINITY) : static_cast<double>(num / den);
  };
  v.normwise_inf = ratio(diff_inf, ref_inf);
  v.normwise_2 = ratio(std::sqrt(diff_2), std::sqrt(ref_2));
  if (both_nan) v.normwise_inf = v.normwise_2 = v.componentwise = NAN;
  if (v.special_mismatch) v.normwise_inf = v.normwise_2 = v.componentwise = INFINITY;
  return v;
}

}  // namespace carrier
