// ExactSum: the superaccumulator carrier. Every merge order gives identical bits (replay over
// seven schedules on ill-conditioned inputs: huge cancellations, values from 1e-300 to 1e300,
// subnormals, sums that overflow only in some orders), the declared properties hold (core's
// law checks, including the normalisation branch), and Finalize agrees with mpfr_sum rounded
// to double (and long double) by MPFR's own subnormal recipe.
#include <catch2/catch.hpp>
#include <cmath>
#include <iostream>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "core/carrier.hpp"
#include "core/laws.hpp"
#include "core/replay_oracle.hpp"
#include "precision/reference/exact_sum.hpp"
#include "support/test_support.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
#include <mpfr.h>
#endif

namespace carrier {
namespace {

using reference::ExactSum;
using test::Exact;
using test::Join;
using test::Rng;

static_assert(Carrier<ExactSum>);
static_assert(HasPush<ExactSum> && HasPadInput<ExactSum>);
static_assert(std::is_trivially_copyable_v<ExactSum::State>);

const std::vector<std::string> kSchedules = {
    "seq", "reverse", "pairwise", "blocked:7", "blocked:64:pairwise", "strided:16", "random:3"};

double Finalize(std::span<const double> x) {
  ExactSum::State s = ExactSum::Identity();
  for (double v : x) ExactSum::Add(s, v);
  return ExactSum::Finalize(s);
}

// A random double with exponent uniform in [-e_range, e_range] (decimal: 1e-300..1e300 for
// e_range = 996) and a random sign; now and then a subnormal.
double WideValue(Rng& rng, int e_range) {
  if (rng.Below(50) == 0)
    return std::ldexp(rng.Uniform(-1, 1), -1074 + static_cast<int>(rng.Below(52)));
  const int e = static_cast<int>(rng.Below(2 * e_range + 1)) - e_range;
  return std::ldexp(rng.Uniform(0.5, 1.0), e) * (rng.Below(2) ? -1 : 1);
}

// Ill-conditioned inputs: wide values, then the negation of most of them (shuffled in), so
// the exact sum is a few small leftovers against enormous partial sums.
std::vector<double> IllConditioned(Rng& rng, std::size_t n) {
  std::vector<double> x;
  const std::size_t half = n / 2;
  for (std::size_t i = 0; i < half; ++i) x.push_back(WideValue(rng, 996));
  for (std::size_t i = 0; i < half; ++i)
    x.push_back(rng.Below(8) == 0 ? WideValue(rng, 40) : -x[i]);
  while (x.size() < n) x.push_back(WideValue(rng, 20));
  for (std::size_t i = x.size(); i > 1; --i) std::swap(x[i - 1], x[rng.Below(i)]);
  return x;
}

using test::SameBits;

}  // namespace

TEST_CASE("ExactSum gives identical bits under every merge order", "[fast][reference][exact_sum]") {
  Rng rng(20240601);
  int checked = 0;
  for (int trial = 0; trial < test::Trials(40); ++trial) {
    const std::uint64_t seed = rng.Next();
    Rng local(seed);
    const std::size_t n = 1 + local.Below(trial < 20 ? 64 : 3000);
    const std::vector<double> x = IllConditioned(local, n);
    const std::span<const double> xs(x);
    const double want = Finalize(xs);
    for (const auto& schedule : kSchedules) {
      const double got = ExactSum::Finalize(ReplayOracle<ExactSum>(BuildTree(schedule, n), xs));
      INFO("reproduce: seed=" << seed << " n=" << n << " schedule=" << schedule
                              << " inputs=" << Join(x, 16));
      INFO("fold " << Exact(want) << " replay " << Exact(got));
      REQUIRE(SameBits(got, want));
      ++checked;
    }
  }
  std::cout << "ExactSum: " << checked << " replays over " << kSchedules.size()
            << " schedules, all bit-identical\n";
}

TEST_CASE("ExactSum hand-checked sums and special values", "[fast][reference][exact_sum]") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double tiny = std::numeric_limits<double>::denorm_min();
  struct Case {
    std::vector<double> x;
    double want;
  };
  const std::vector<Case> cases = {
      {{}, 0.0},
      {{-0.0, -0.0}, 0.0},  // the exact zero is +0, as Sum's fold from +0
      {{1e16, 1, -1e16}, 1.0},
      {{1, 0x1p-53}, 1.0},                    // tie: to even
      {{1, 0x1p-53, 0x1p-300}, 1 + 0x1p-52},  // just above the tie
      {{1e308, 1e308, -1e308}, 1e308},        // a float fold overflows here; the exact sum does not
      {{1e308, 1e308}, inf},                  // the exact sum itself overflows
      {{0x1.fffffffffffffp1023, 0x1p970}, inf},  // exactly at the overflow threshold: inf
      {{0x1.fffffffffffffp1023, 0x1p969}, 0x1.fffffffffffffp1023},
      {{tiny, tiny, -tiny}, tiny},
      {{0x1p-1074, -0.0}, 0x1p-1074},
      {{1, -1, 0x1p-1074}, 0x1p-1074},
      {{inf, 1}, inf},
      {{-inf, 1}, -inf},
      {{inf, -inf}, nan},
      {{nan, 1}, nan},
      {{1, inf, nan}, nan},
  };
  for (const auto& c : cases) {
    INFO("inputs=" << Join(c.x));
    const double got = Finalize(c.x);
    INFO("got " << Exact(got) << " want " << Exact(c.want));
    CHECK(SameBits(got, c.want));
  }
}

TEST_CASE("ExactSum keeps its declared properties", "[fast][reference][exact_sum]") {
  Rng rng(77);
  std::vector<ExactSum::State> states;
  for (int i = 0; i < 24; ++i) {
    ExactSum::State s = ExactSum::Identity();
    const std::size_t n = rng.Below(20);
    for (std::size_t k = 0; k < n; ++k) ExactSum::Add(s, WideValue(rng, 996));
    states.push_back(s);
  }
  states.push_back(ExactSum::Lift(std::numeric_limits<double>::infinity()));
  states.push_back(ExactSum::Lift(std::numeric_limits<double>::quiet_NaN()));
  // States one push away from normalisation, so Push and Combine take the normalising branch.
  for (int i = 0; i < 4; ++i) {
    ExactSum::State s = states[i];
    s.pending = ExactSum::kMaxPending;
    states.push_back(s);
  }
  const std::vector<double> inputs = {1.5, -0x1p-1074, -1e300, 0.0, 3e-200, -7.25};
  for (const auto& report :
       {CheckIdentity<ExactSum>(states), CheckBitwiseCommutative<ExactSum>(states),
        CheckPushIsCombineLift<ExactSum>(states, inputs), CheckPadInput<ExactSum>(states)}) {
    INFO(report.law << ": " << report.counterexample);
    CHECK(report.Holds());
    CHECK(report.checked > 0);
  }
  // The normalising branch keeps the value.
  ExactSum::State s = ExactSum::Identity();
  ExactSum::Add(s, -3.0);
  ExactSum::Add(s, 0x1p-1000);
  ExactSum::State t = s;
  t.pending = ExactSum::kMaxPending;
  ExactSum::Add(t, 1.0);
  ExactSum::Add(s, 1.0);
  CHECK(t.pending == 1);
  CHECK(SameBits(ExactSum::Finalize(t), ExactSum::Finalize(s)));
  CHECK(SameBits(ExactSum::Finalize(t), -2.0 + 0x1p-1000));
}

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

namespace {

// mpfr_sum rounded once to double: MPFR's documented recipe for IEEE emulation (exponent range
// of binary64, then mpfr_subnormalize), independent of ExactSum and of reference::SumExact.
// Also the sum rounded to 64 bits (sums of doubles are normal numbers in long double) and the
// exact sum (2400 bits cover 2098 bits of doubles plus the carries of up to 2^300 terms).
struct MpfrOracle {
  double d = 0;
  long double ld = 0;
  mpfr_t exact;
  explicit MpfrOracle(const std::vector<double>& x) {
    std::vector<mpfr_t> v(x.size());
    std::vector<mpfr_ptr> p(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      mpfr_init2(v[i], 53);
      mpfr_set_d(v[i], x[i], MPFR_RNDN);
      p[i] = v[i];
    }
    mpfr_t s, s64;
    mpfr_init2(s, 53);
    mpfr_init2(s64, 64);
    mpfr_init2(exact, 2400);
    REQUIRE(mpfr_sum(exact, p.data(), p.size(), MPFR_RNDN) == 0);
    mpfr_sum(s64, p.data(), p.size(), MPFR_RNDN);
    ld = mpfr_get_ld(s64, MPFR_RNDN);
    const mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_set_emin(-1073);
    mpfr_set_emax(1024);
    const int t = mpfr_sum(s, p.data(), p.size(), MPFR_RNDN);
    mpfr_subnormalize(s, t, MPFR_RNDN);
    d = mpfr_get_d(s, MPFR_RNDN);
    if (d == 0) d = 0.0;  // the exact zero is +0 in ExactSum's contract
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    mpfr_clear(s);
    mpfr_clear(s64);
    for (auto& e : v) mpfr_clear(e);
  }
  ~MpfrOracle() { mpfr_clear(exact); }
};

// Moves every value into [2^lo, 2^(lo + span)) keeping sign and significand, so that the
// negated pairs of IllConditioned still cancel exactly.
void Squeeze(std::vector<double>& x, int lo, int span) {
  for (auto& v : x) {
    int e = 0;
    const double m = std::frexp(v, &e);
    v = std::ldexp(m, lo + 1 + ((e % span) + span) % span);
  }
}

}  // namespace

TEST_CASE("ExactSum agrees with mpfr_sum on ill-conditioned inputs",
          "[fast][reference][exact_sum]") {
  Rng rng(99);
  int checked = 0, subnormal = 0, overflow = 0;
  for (int trial = 0; trial < test::Trials(300); ++trial) {
    const std::uint64_t seed = rng.Next();
    Rng local(seed);
    const std::size_t n = 1 + local.Below(200);
    std::vector<double> x = IllConditioned(local, n);
    if (trial % 10 == 0) Squeeze(x, -1090, 80);  // results near and below 2^-1022
    if (trial % 10 == 1) Squeeze(x, 1016, 8);    // partial sums and results near overflow
    const MpfrOracle want(x);
    ExactSum::State s = ExactSum::Identity();
    for (double v : x) ExactSum::Add(s, v);
    const double got = ExactSum::Finalize(s);
    const long double got_ld = ExactSum::FinalizeLongDouble(s);
    INFO("reproduce: seed=" << seed << " n=" << n << " inputs=" << Join(x, 16));
    INFO("ExactSum " << Exact(got) << " mpfr_sum " << Exact(want.d));
    REQUIRE(SameBits(got, want.d));
    REQUIRE(got_ld == want.ld);
    mpfr_t exact;
    mpfr_init2(exact, 53);
    ExactSum::ToMpfr(s, exact);
    CHECK(mpfr_equal_p(exact, want.exact));
    mpfr_clear(exact);
    ++checked;
    if (want.d != 0 && std::fabs(want.d) < 0x1p-1022) ++subnormal;
    if (std::isinf(want.d)) ++overflow;
  }
  std::cout << "ExactSum vs mpfr_sum: " << checked << " inputs agree bit for bit in double and "
            << "long double, ToMpfr exactly (" << subnormal << " subnormal, " << overflow
            << " overflowing results)\n";
}

#endif

}  // namespace carrier
