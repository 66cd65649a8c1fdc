// precision/reference/reference_common.cpp: the escalation loop (the mpfr tier), the helpers
// every op shares, dispatch by name, and affine (which has no exact or fast tier).
#include "precision/reference/reference_internal.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/carriers/affine.hpp"

namespace carrier::reference {

std::string_view TierName(Tier t) {
  switch (t) {
    case Tier::kExact:
      return "exact";
    case Tier::kFast:
      return "fast";
    case Tier::kMpfr:
      return "mpfr";
  }
  return "?";
}

namespace internal {

namespace {

struct Comparison {
  bool agree = true;
  bool rounded = true;
  double rel_log2 = -INFINITY;  // log2 max |lo - hi| / |hi|
};

// Compares one component at p (lo) and 2p (hi); sets hi's roundings.
void CompareComponent(mpfr_srcptr lo, mpfr_srcptr hi, int tolerance_log2, Comparison& c, double* d,
                      long double* ld) {
  *d = mpfr_get_d(hi, MPFR_RNDN);
  *ld = mpfr_get_ld(hi, MPFR_RNDN);
  if (mpfr_nan_p(lo) || mpfr_nan_p(hi)) {
    if (!(mpfr_nan_p(lo) && mpfr_nan_p(hi))) c.agree = false;
    return;
  }
  if (mpfr_inf_p(lo) || mpfr_inf_p(hi) || mpfr_zero_p(lo) || mpfr_zero_p(hi)) {
    // Infinities and zeros must be reproduced exactly (absolute agreement).
    if (!(mpfr_equal_p(lo, hi) || (mpfr_zero_p(lo) && mpfr_zero_p(hi)))) c.agree = false;
    return;
  }
  MpfrValue diff(64), rel(64);
  mpfr_sub(diff.get(), lo, hi, MPFR_RNDA);  // rounded away from zero: an upper bound
  mpfr_abs(diff.get(), diff.get(), MPFR_RNDN);
  if (mpfr_zero_p(diff.get())) return;  // identical: exact under the doubling assumption
  mpfr_div(rel.get(), diff.get(), hi, MPFR_RNDA);
  mpfr_abs(rel.get(), rel.get(), MPFR_RNDN);
  long rel_exp = 0;  // rel = m 2^rel_exp, m in [1/2, 1): no underflow far below doubles
  const double rel_mant = mpfr_get_d_2exp(&rel_exp, rel.get(), MPFR_RNDU);
  c.rel_log2 = std::max(c.rel_log2, static_cast<double>(rel_exp) + std::log2(rel_mant));
  if (mpfr_cmp_ui_2exp(rel.get(), 1, tolerance_log2) > 0) c.agree = false;
  if (!RoundsTo(hi, diff.get(), d, ld)) c.rounded = false;
}

}  // namespace

void Escalate(std::size_t k, const Evaluator& evaluate, const Options& options, Reference& r) {
  const mpfr_prec_t start = std::max<mpfr_prec_t>(options.start_bits, 64);
  const mpfr_prec_t cap = std::max<mpfr_prec_t>(options.max_bits, 2 * start);
  std::vector<MpfrValue> lo, hi;
  evaluate(start, lo);
  for (mpfr_prec_t p = start;; p *= 2) {
    evaluate(2 * p, hi);
    if (lo.size() != k || hi.size() != k)
      throw std::logic_error("reference: evaluator returned the wrong number of components");
    Comparison c;
    std::vector<double> d(k);
    std::vector<long double> ld(k);
    for (std::size_t i = 0; i < k; ++i)
      CompareComponent(lo[i].get(), hi[i].get(), options.tolerance_log2, c, &d[i], &ld[i]);
    const bool done = c.agree && (c.rounded || !options.require_correct_rounding);
    if (done || 4 * p > cap) {
      r.value = std::move(hi);
      r.as_double = std::move(d);
      r.as_long_double = std::move(ld);
      r.cert.tier = Tier::kMpfr;
      r.cert.precision_bits = static_cast<long>(p);
      r.cert.error_bound_log2 = c.rel_log2;
      r.cert.certified = c.agree;
      r.cert.correctly_rounded = c.agree && c.rounded;
      if (!c.agree) {
        r.cert.note += "mpfr tier: " + std::to_string(p) + " and " + std::to_string(2 * p) +
                       " bits still disagree beyond 2^" + std::to_string(options.tolerance_log2) +
                       " at the precision cap " + std::to_string(cap);
      } else if (!c.rounded) {
        r.cert.note +=
            "mpfr tier: certified, but a component lies too close to a rounding "
            "boundary of double or long double to round it with certainty";
      }
      return;
    }
    lo = std::move(hi);
    hi.clear();
  }
}

void AddExact(Reference& r, MpfrValue v) {
  r.as_double.push_back(v.ToDouble());
  r.as_long_double.push_back(v.ToLongDouble());
  r.value.push_back(std::move(v));
}

void AddExactDouble(Reference& r, double x) { AddExact(r, MpfrValue(53, x)); }

void AddRounded(Reference& r, MpfrValue v, double d, long double ld) {
  r.as_double.push_back(d);
  r.as_long_double.push_back(ld);
  r.value.push_back(std::move(v));
}

void MarkExact(Reference& r, long precision_bits, double error_bound_log2) {
  r.cert.tier = Tier::kExact;
  r.cert.certified = true;
  r.cert.correctly_rounded = true;
  r.cert.precision_bits = precision_bits;
  r.cert.error_bound_log2 = error_bound_log2;
}

mpfr_prec_t ValueBits(const Options& options) {
  return std::max<mpfr_prec_t>(256, 32 - static_cast<mpfr_prec_t>(options.tolerance_log2));
}

long MaxPrecision(const std::vector<MpfrValue>& values) {
  long bits = 0;
  for (const auto& v : values) bits = std::max<long>(bits, v.precision());
  return bits;
}

}  // namespace internal

namespace {

// Affine over the n pairs that for_each_pair(f) hands to f(a, b) in order (once per
// escalation pass): the span form and the column form share every other line.
template <class ForEachPair>
Reference AffineOf(std::uint64_t n, const ForEachPair& for_each_pair, const Options& options) {
  WideExponentRange range;
  Reference r;
  r.op = "affine";
  r.count = n;
  // The carrier's fold from Identity (1, +0) with its exact-composition rule, each operation
  // rounded once at p bits (g.a * f.b + g.b as one fused operation). MPFR follows IEEE for
  // inf and NaN, so the special values come out as the carrier's table says.
  auto evaluate = [&](mpfr_prec_t p, std::vector<MpfrValue>& out) {
    MpfrValue a(p), b(p), ga(p), gb(p), na(p);
    mpfr_set_ui(a.get(), 1, MPFR_RNDN);
    mpfr_set_zero(b.get(), 1);
    for_each_pair([&](double ma, double mb) {
      mpfr_set_d(ga.get(), ma, MPFR_RNDN);
      mpfr_set_d(gb.get(), mb, MPFR_RNDN);
      mpfr_mul(na.get(), ga.get(), a.get(), MPFR_RNDN);
      if (mpfr_zero_p(b.get()) && !mpfr_number_p(ga.get())) {
        mpfr_set(b.get(), gb.get(), MPFR_RNDN);
      } else {
        mpfr_fma(b.get(), ga.get(), b.get(), gb.get(), MPFR_RNDN);
      }
      mpfr_swap(a.get(), na.get());
    });
    out.clear();
    out.push_back(std::move(a));
    out.push_back(std::move(b));
  };
  internal::Escalate(2, evaluate, options, r);
  return r;
}

}  // namespace

Reference ReferenceAffine(std::span<const ValuePair<double>> x, const Options& options) {
  return AffineOf(
      x.size(),
      [&](const auto& f) {
        for (const auto& m : x) f(m.a, m.b);
      },
      options);
}

Reference ReferenceAffine(const StoredColumn& a, const StoredColumn& b, const Options& options) {
  if (a.size() != b.size())
    throw std::invalid_argument("ReferenceAffine: columns of " + std::to_string(a.size()) +
                                " and " + std::to_string(b.size()) + " values");
  return AffineOf(
      a.size(),
      [&](const auto& f) {
        ForEachChunkOfPairs(
            a, b, 0, a.size(),
            [&](std::uint64_t, std::span<const double> va, std::span<const double> vb) {
              for (std::size_t i = 0; i < va.size(); ++i) f(va[i], vb[i]);
            });
      },
      options);
}

}  // namespace carrier::reference

#endif  // CARRIER_HAVE_MPFR
