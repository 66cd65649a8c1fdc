// precision/reference/fast_sum.cpp: ReferenceSumFast (contract in fast_sum.hpp).
#include "precision/reference/fast_sum.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>

#include "precision/reference/exact_sum.hpp"
#include "precision/reference/reference_internal.hpp"

namespace carrier::reference {

Reference ReferenceSumFast(std::span<const double> x) {
  WideExponentRange range;
  Reference r;
  r.op = "sum";
  r.count = x.size();
  // Two accumulators for alternate terms (consecutive terms often hit the same limbs; two
  // states halve that read-modify-write chain), merged at the end: Combine is exact.
  ExactSum::State s = ExactSum::Identity(), s_odd = ExactSum::Identity();
  // The MPFR exponent of the largest term and the weight of the lowest set bit of any term,
  // from the bit patterns (a term is sig * 2^k with sig the integer significand).
  long top = LONG_MIN, low = LONG_MAX;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    ExactSum::Add((i & 1) ? s_odd : s, v);
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(v) & ~(std::uint64_t{1} << 63);
    const std::uint64_t biased = bits >> 52;
    if (bits == 0 || biased == 0x7ff) continue;
    const std::uint64_t sig = (bits & ((std::uint64_t{1} << 52) - 1)) |
                              (biased != 0 ? std::uint64_t{1} << 52 : 0);
    const long k = static_cast<long>(biased != 0 ? biased : 1) - 1075;
    top = std::max(top, k + (64 - std::countl_zero(sig)));
    low = std::min(low, k + std::countr_zero(sig));
  }
  s = ExactSum::Combine(s, s_odd);
  if (s.has_nan || s.has_pos_inf || s.has_neg_inf) {
    const double special = (s.has_nan || (s.has_pos_inf && s.has_neg_inf))
                               ? std::numeric_limits<double>::quiet_NaN()
                               : (s.has_pos_inf ? std::numeric_limits<double>::infinity()
                                                : -std::numeric_limits<double>::infinity());
    internal::AddExactDouble(r, special);
    internal::MarkExact(r, 53, -std::numeric_limits<double>::infinity());
    return r;
  }
  mpfr_prec_t prec = 53;
  if (top != LONG_MIN) {
    const long carry_bits = 64 - std::countl_zero(static_cast<std::uint64_t>(x.size()));
    prec = static_cast<mpfr_prec_t>(std::max<long>(top - low + carry_bits + 1, MPFR_PREC_MIN + 1));
  }
  MpfrValue exact;
  ExactSum::ToMpfr(s, exact.get());
  MpfrValue value(prec);
  if (mpfr_set(value.get(), exact.get(), MPFR_RNDN) != 0)
    throw std::logic_error("ReferenceSumFast: the exact sum does not fit its precision");
  if (mpfr_zero_p(value.get())) mpfr_set_zero(value.get(), 1);
  internal::AddExact(r, std::move(value));
  internal::MarkExact(r, prec, -std::numeric_limits<double>::infinity());
  return r;
}

}  // namespace carrier::reference

#endif
