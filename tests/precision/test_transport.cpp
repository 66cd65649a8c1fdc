// Transport of structure (core/derivations/online_softmax.hpp and welford.hpp, the notes):
//   OnlineSoftmax: phi(m, d) = (m, d e^m) maps the twisted combine onto the plain (max, +)
//     monoid, phi(Combine(a, b)) = (max, +)(phi a, phi b), measured in MPFR at p bits
//     (relative difference about 2^-p);
//   Welford: psi(n, mean, M2) = (n, sum x, sum x^2) maps Chan-Golub-LeVeque's combine onto
//     addition of power sums, checked on small integers in MPFR at 256 bits;
//   and the floating-point difference: the transported fp32 monoid overflows (e^100 > FLT_MAX)
//     where the twisted (m, d) does not.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <limits>
#include <random>
#include <vector>

#include "core/carrier.hpp"
#include "core/carriers/online_softmax.hpp"
#include "core/carriers/welford.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
#include "precision/mpfr_scalar.hpp"
#include "precision/scalars.hpp"

using namespace carrier;

namespace {

double Log2Rel(const Mpfr& x, const Mpfr& y) {
  const Mpfr diff = abs(x - y);
  if (diff == Mpfr(0.0)) return -std::numeric_limits<double>::infinity();
  return static_cast<double>(log(diff / abs(y)) / log(Mpfr(2.0)));
}

}  // namespace

TEST_CASE("transport: phi maps online softmax onto the (max +) monoid in MPFR",
          "[fast][transport]") {
  using C = OnlineSoftmax<Mpfr>;
  for (long bits : {64L, 128L, 256L, 512L}) {
    MpfrPrecisionScope scope(bits);
    std::mt19937_64 rng(20260 + static_cast<std::uint64_t>(bits));
    std::normal_distribution<double> value(0.0, 5.0);
    double worst = -std::numeric_limits<double>::infinity();
    for (int trial = 0; trial < 200; ++trial) {
      auto random_state = [&] {
        std::vector<Mpfr> x;
        const std::size_t n = 1 + rng() % 12;
        for (std::size_t i = 0; i < n; ++i) x.emplace_back(value(rng));
        return Fold<C>(x.data(), x.size());
      };
      const C::State a = random_state();
      const C::State b = random_state();
      const C::State ab = C::Combine(a, b);
      // phi(ab) against (max, +)(phi a, phi b).
      const Mpfr lhs_m = ab.m;
      const Mpfr lhs_big_d = ab.d * exp(ab.m);
      const Mpfr rhs_m = a.m < b.m ? b.m : a.m;
      const Mpfr rhs_big_d = a.d * exp(a.m) + b.d * exp(b.m);
      INFO("bits " << bits << " trial " << trial << " a = (" << a.m << ", " << a.d << "), b = ("
                   << b.m << ", " << b.d << ")");
      REQUIRE(lhs_m == rhs_m);
      worst = std::max(worst, Log2Rel(lhs_big_d, rhs_big_d));
    }
    std::cout << "phi(Combine(a, b)) vs (max, +)(phi a, phi b) at " << bits
              << " bits: max relative difference 2^" << std::fixed << std::setprecision(1) << worst
              << std::defaultfloat << "\n";
    CHECK(worst <= -static_cast<double>(bits) + 6);
  }
}

TEST_CASE("transport: psi maps Welford onto power sums on small integers", "[fast][transport]") {
  using C = Welford<Mpfr>;
  MpfrPrecisionScope scope(256);
  std::mt19937_64 rng(4242);
  double worst = -std::numeric_limits<double>::infinity();
  for (int trial = 0; trial < 300; ++trial) {
    auto random_list = [&] {
      std::vector<std::int64_t> x(1 + rng() % 10);
      for (auto& v : x) v = static_cast<std::int64_t>(rng() % 41) - 20;
      return x;
    };
    const auto xs = random_list();
    const auto ys = random_list();
    auto state_of = [](const std::vector<std::int64_t>& v) {
      std::vector<Mpfr> m;
      for (auto i : v) m.emplace_back(static_cast<double>(i));
      return Fold<C>(m.data(), m.size());
    };
    auto power_sums = [](const std::vector<std::int64_t>& v, std::int64_t& s1, std::int64_t& s2) {
      for (auto i : v) {
        s1 += i;
        s2 += i * i;
      }
    };
    const C::State ab = C::Combine(state_of(xs), state_of(ys));
    std::int64_t s1 = 0, s2 = 0;
    power_sums(xs, s1, s2);
    power_sums(ys, s1, s2);
    // psi(Combine(a, b)) against psi(a) + psi(b), the exact integer power sums.
    const Mpfr n(static_cast<double>(ab.n));
    const Mpfr psi1 = n * ab.mean;
    const Mpfr psi2 = ab.m2 + n * ab.mean * ab.mean;
    INFO("trial " << trial << " n " << ab.n << " sum x " << s1 << " sum x^2 " << s2 << " psi = ("
                  << psi1 << ", " << psi2 << ")");
    REQUIRE(ab.n == xs.size() + ys.size());
    // s1 can be 0: then measure |psi1| against the scale sum x^2 (>= 1 unless all zeros).
    const double d1 =
        s1 != 0 ? Log2Rel(psi1, Mpfr(static_cast<double>(s1)))
        : abs(psi1) == Mpfr(0.0)
            ? -std::numeric_limits<double>::infinity()
            : static_cast<double>(
                  log(abs(psi1) / Mpfr(static_cast<double>(std::max<std::int64_t>(s2, 1)))) /
                  log(Mpfr(2.0)));
    const double d2 = Log2Rel(psi2, Mpfr(static_cast<double>(s2)));
    worst = std::max({worst, d1, d2});
  }
  std::cout << "psi(Combine(a, b)) vs psi(a) + psi(b) (integer power sums) at 256 bits: max "
               "relative difference 2^"
            << std::fixed << std::setprecision(1) << worst << std::defaultfloat << "\n";
  CHECK(worst <= -240);
}

#endif  // CARRIER_HAVE_MPFR

TEST_CASE("transport: the transported fp32 monoid overflows where the twisted one does not",
          "[fast][transport]") {
  using C = carrier::OnlineSoftmax<float>;
  std::mt19937_64 rng(99);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  std::vector<float> x(1000);
  for (auto& v : x) v = 100.0f + noise(rng);
  // Twisted: the carrier's (m, d).
  const auto s = carrier::Fold<C>(x.data(), x.size());
  const float lse_twisted = C::Finalize(s).lse;
  // Transported: (max, +) on (m, D = sum e^x) in fp32.
  float big_d = 0.0f;
  for (float v : x) big_d += std::exp(v);
  const float lse_transported = std::log(big_d);
  // Reference in long double (e^100 fits easily).
  long double ref_sum = 0;
  for (float v : x) ref_sum += std::exp(static_cast<long double>(v));
  const long double lse_ref = std::log(ref_sum);
  std::cout << std::defaultfloat << std::setprecision(9)
            << "lse of 1000 fp32 values 100 + N(0,1): twisted (m, d) = (" << s.m << ", " << s.d
            << ") -> lse " << lse_twisted << "; transported D = sum e^x = " << big_d << " -> lse "
            << lse_transported << "; long double reference " << static_cast<double>(lse_ref)
            << "\n";
  CHECK(std::isfinite(lse_twisted));
  CHECK(std::fabs(lse_twisted - lse_ref) <= 1e-5L * lse_ref);
  CHECK(std::isinf(big_d));
  CHECK(std::isinf(lse_transported));
}
