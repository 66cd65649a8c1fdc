// MPFR as a second oracle: RoundToFormat(double) against mpfr_set_d with the format's exponent
// range and mpfr_subnormalize, and RoundToFormat(mpfr_t) against the same for values with far
// more bits than a double (ties decided beyond 64 bits).
#include <catch2/catch.hpp>

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <mpfr.h>

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "precision/format.hpp"
#include "precision/rounding.hpp"
#include "support/test_support.hpp"

namespace carrier {
namespace {

class Mpfr {
 public:
  explicit Mpfr(mpfr_prec_t prec) { mpfr_init2(v_, prec); }
  ~Mpfr() { mpfr_clear(v_); }
  Mpfr(const Mpfr&) = delete;
  Mpfr& operator=(const Mpfr&) = delete;
  mpfr_ptr get() { return v_; }

 private:
  mpfr_t v_;
};

// Sets MPFR's exponent range to the format's for the lifetime of the object (MPFR keeps it
// per thread), the documented recipe for emulating a narrower IEEE format: values in
// [2^(E-1), 2^E) have MPFR exponent E, so normals span emin+1..emax+1 and subnormalize needs
// the lower limit p-1 further down.
class ExponentRange {
 public:
  explicit ExponentRange(const Format& f) : old_emin_(mpfr_get_emin()), old_emax_(mpfr_get_emax()) {
    mpfr_set_emin(f.emin - f.precision + 2);
    mpfr_set_emax(f.emax + 1);
  }
  ~ExponentRange() {
    mpfr_set_emin(old_emin_);
    mpfr_set_emax(old_emax_);
  }

 private:
  mpfr_exp_t old_emin_, old_emax_;
};

mpfr_rnd_t ToMpfr(Rounding r) {
  switch (r) {
    case Rounding::kTowardZero:
      return MPFR_RNDZ;
    case Rounding::kUp:
      return MPFR_RNDU;
    case Rounding::kDown:
      return MPFR_RNDD;
    default:
      return MPFR_RNDN;
  }
}

// What MPFR says, translated through the format's own overflow rule where MPFR's emulation
// cannot model the format (E4M3's max of 448, no inf, saturation): MPFR rounds as if the
// format were IEEE-style with the same emax, and anything above max finite is overflow.
double MpfrExpected(mpfr_srcptr x, const Format& f, Rounding r) {
  // Round to p bits with MPFR's wide default exponent range first, then let
  // mpfr_check_range and mpfr_subnormalize apply the format's range using the ternary value
  // (the manual's recipe; it avoids double rounding at subnormal ties).
  if (mpfr_inf_p(x)) {  // an infinite input is not an overflow: it stays inf if it can
    const double inf = mpfr_signbit(x) ? -INFINITY : INFINITY;
    if (f.saturate) return std::copysign(f.MaxFinite(), inf);
    return f.has_inf ? inf : NAN;
  }
  Mpfr y(f.precision);
  int inexact = mpfr_set(y.get(), x, ToMpfr(r));
  double result;
  {
    ExponentRange range(f);
    inexact = mpfr_check_range(y.get(), inexact, ToMpfr(r));
    inexact = mpfr_subnormalize(y.get(), inexact, ToMpfr(r));
    result = mpfr_get_d(y.get(), MPFR_RNDN);  // exact: y has p <= 53 bits, in range
  }
  if (std::fabs(result) > f.MaxFinite()) {
    const bool negative = result < 0;
    const bool to_max = r == Rounding::kTowardZero || (r == Rounding::kDown && !negative) ||
                        (r == Rounding::kUp && negative);
    double over;
    if (f.saturate || to_max) {
      over = f.MaxFinite();
    } else {
      over = f.has_inf ? INFINITY : NAN;
    }
    return negative ? -over : over;
  }
  return result;
}

bool SameResult(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

double RandomNear(const Format& f, test::Rng& rng) {
  const int span = f.emax - f.emin + f.precision + 6;
  const int e = f.emin - f.precision - 3 + static_cast<int>(rng.Below(span));
  return std::ldexp(rng.Uniform(-2, 2), std::max(e, -1070));
}

TEST_CASE("RoundToFormat agrees with MPFR's own rounding on doubles", "[fast]") {
  test::Rng rng(2024);
  const Rounding modes[] = {Rounding::kNearestEven, Rounding::kTowardZero, Rounding::kUp,
                            Rounding::kDown};
  Mpfr x(53);
  for (const Format& f : PredefinedFormats()) {
    for (int i = 0; i < test::Trials(3000); ++i) {
      const double v = RandomNear(f, rng);
      mpfr_set_d(x.get(), v, MPFR_RNDN);
      for (Rounding r : modes) {
        const double got = RoundToFormat(v, f, r);
        const double want = MpfrExpected(x.get(), f, r);
        INFO("input " << test::Exact(v) << " format " << f.name << " mode " << RoundingName(r)
                      << " got " << test::Exact(got) << " mpfr " << test::Exact(want));
        REQUIRE(SameResult(got, want));
      }
    }
  }
}

TEST_CASE("RoundToFormat(mpfr_t) equals RoundToFormat(double) on doubles", "[fast]") {
  test::Rng rng(9);
  Mpfr x(53);
  std::vector<Format> formats = PredefinedFormats();
  formats.push_back(ParseFormat("custom:p=5,emin=-3,emax=4,subnormals=0"));
  formats.push_back(ParseFormat("custom:p=3,emin=-2,emax=3,inf=0,saturate=1"));
  for (const Format& f : formats) {
    for (int i = 0; i < test::Trials(2000); ++i) {
      const double v = i == 0 ? INFINITY : i == 1 ? -0.0 : i == 2 ? NAN : RandomNear(f, rng);
      mpfr_set_d(x.get(), v, MPFR_RNDN);
      for (Rounding r : kAllRoundings) {
        StochasticBits a{5, static_cast<std::uint64_t>(i)}, b = a;
        const double from_double = RoundToFormat(v, f, r, &a);
        const double from_mpfr = RoundToFormat(x.get(), f, r, &b);
        INFO("input " << test::Exact(v) << " format " << f.name << " mode " << RoundingName(r)
                      << " double " << test::Exact(from_double) << " mpfr "
                      << test::Exact(from_mpfr));
        REQUIRE(SameResult(from_double, from_mpfr));
        REQUIRE(a.counter == b.counter);
      }
    }
  }
}

TEST_CASE("RoundToFormat(mpfr_t) rounds 200-bit values once", "[fast]") {
  test::Rng rng(31);
  Mpfr x(200), tiny(200);
  for (const Format& f : PredefinedFormats()) {
    for (int i = 0; i < test::Trials(1000); ++i) {
      // A double plus a perturbation 2^-120 relative: invisible to a double, decisive at ties.
      const double base = RoundToFormat(RandomNear(f, rng), f, Rounding::kNearestEven);
      if (!std::isfinite(base) || base == 0) continue;
      // The midpoint above `base` in the format (or base itself), exactly in 200 bits: ties
      // are the hard case, and for fp64 no double can hold them.
      const double ulp_half = std::ldexp(1.0, std::max(std::ilogb(base), f.emin) - f.precision);
      const bool at_tie = i % 2 == 0;
      mpfr_set_d(x.get(), base, MPFR_RNDN);
      if (at_tie) mpfr_add_d(x.get(), x.get(), std::copysign(ulp_half, base), MPFR_RNDN);
      const int sign = (rng.Next() & 1) ? 1 : -1;
      mpfr_mul_2si(tiny.get(), x.get(), -120, MPFR_RNDN);
      if (sign > 0) {
        mpfr_add(x.get(), x.get(), tiny.get(), MPFR_RNDN);
      } else {
        mpfr_sub(x.get(), x.get(), tiny.get(), MPFR_RNDN);
      }
      for (Rounding r :
           {Rounding::kNearestEven, Rounding::kTowardZero, Rounding::kUp, Rounding::kDown}) {
        const double got = RoundToFormat(x.get(), f, r);
        const double want = MpfrExpected(x.get(), f, r);
        INFO("input " << test::Exact(base) << (at_tie ? " + half ulp" : "")
                      << (sign > 0 ? " + " : " - ") << "2^-120 * |that|"
                      << " format " << f.name << " mode " << RoundingName(r) << " got "
                      << test::Exact(got) << " mpfr " << test::Exact(want));
        REQUIRE(SameResult(got, want));
      }
      // Away from exact ties rna equals rne; ro never returns an even significand when
      // inexact, which a double-rounding through fp64 (for fp64 itself) would.
      CHECK(SameResult(RoundToFormat(x.get(), f, Rounding::kNearestAway),
                       RoundToFormat(x.get(), f, Rounding::kNearestEven)));
      const double odd = RoundToFormat(x.get(), f, Rounding::kToOdd);
      const double rz = RoundToFormat(x.get(), f, Rounding::kTowardZero);
      const double ru = RoundToFormat(x.get(), f, Rounding::kUp);
      const double rd = RoundToFormat(x.get(), f, Rounding::kDown);
      INFO("format " << f.name << " ro " << test::Exact(odd) << " rz " << test::Exact(rz));
      CHECK((SameResult(odd, ru) || SameResult(odd, rd)));
    }
  }
}

}  // namespace
}  // namespace carrier

#else

TEST_CASE("MPFR checks of RoundToFormat", "[fast]") {
  WARN("built without MPFR (CARRIER_HAVE_MPFR off): MPFR cross-checks skipped");
}

#endif
