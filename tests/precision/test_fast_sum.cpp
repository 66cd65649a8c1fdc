// ReferenceSumFast (precision/reference/fast_sum.hpp) gives ReferenceSum's Reference field for
// field — the correctly rounded double and long double, the exact MPFR value (precision and
// bits), the certificate — on random, ill-conditioned (exact cancellation), huge-range,
// subnormal, special and empty inputs; prints both times on one input.
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <vector>

#include "precision/reference/fast_sum.hpp"
#include "precision/reference/reference.hpp"
#include "support/test_support.hpp"

using namespace carrier;
using namespace carrier::reference;
using carrier::test::Rng;

namespace {

void RequireSame(const std::vector<double>& x, const std::string& kind, std::uint64_t seed) {
  const Reference want = ReferenceSum(x);
  const Reference got = ReferenceSumFast(x);
  INFO("reproduce: seed=" << seed << " n=" << x.size() << " kind=" << kind
                          << " inputs=" << test::Join(x, 12));
  REQUIRE(got.op == want.op);
  REQUIRE(got.count == want.count);
  REQUIRE(got.index == want.index);
  REQUIRE(got.as_double.size() == 1);
  REQUIRE(want.as_double.size() == 1);
  INFO("want " << test::Exact(want.as_double[0]) << " got " << test::Exact(got.as_double[0]));
  REQUIRE(ScalarTraits<double>::BitEqual(got.as_double[0], want.as_double[0]));
  REQUIRE(ScalarTraits<long double>::BitEqual(got.as_long_double[0], want.as_long_double[0]));
  REQUIRE(got.value.size() == 1);
  const mpfr_srcptr a = got.value[0].get(), b = want.value[0].get();
  REQUIRE(mpfr_get_prec(a) == mpfr_get_prec(b));
  if (mpfr_nan_p(b)) {
    REQUIRE(mpfr_nan_p(a));
  } else {
    REQUIRE(mpfr_equal_p(a, b));
    REQUIRE(mpfr_signbit(a) == mpfr_signbit(b));
  }
  REQUIRE(got.cert.certified == want.cert.certified);
  REQUIRE(got.cert.correctly_rounded == want.cert.correctly_rounded);
  REQUIRE(got.cert.tier == want.cert.tier);
  REQUIRE(got.cert.precision_bits == want.cert.precision_bits);
  REQUIRE(got.cert.error_bound_log2 == want.cert.error_bound_log2);
  REQUIRE(got.cert.note == want.cert.note);
}

}  // namespace

TEST_CASE("ReferenceSumFast == ReferenceSum, field for field", "[fast][reference][fast_sum]") {
  const std::uint64_t seed = 5150;
  Rng rng(seed);
  RequireSame({}, "empty", seed);
  RequireSame({0.0, -0.0}, "zeros", seed);
  RequireSame({-0.0}, "negative zero", seed);
  RequireSame({1.0, -1.0}, "exact zero", seed);
  RequireSame({NAN, 1.0}, "nan", seed);
  RequireSame({INFINITY, 1.0}, "+inf", seed);
  RequireSame({INFINITY, -INFINITY}, "both infs", seed);
  RequireSame({-INFINITY, 1e308}, "-inf", seed);
  RequireSame({std::numeric_limits<double>::denorm_min(), 1.0}, "subnormal", seed);
  RequireSame({1e308, 1e308, -1e308}, "beyond range midway", seed);
  RequireSame({1e308, 1e308}, "overflow", seed);
  RequireSame({0x1p1023, 0x1p1023, -0x1p-1074}, "overflow by a hair", seed);
  int cases = 0;
  for (int t = 0; t < test::Trials(400); ++t) {
    const std::uint64_t n = rng.Below(t % 10 == 0 ? 5000 : 60);
    std::vector<double> x(n);
    const int kind = static_cast<int>(rng.Below(5));
    for (std::uint64_t i = 0; i < n; ++i) {
      switch (kind) {
        case 0:
          x[i] = rng.Normal();
          break;
        case 1:
          x[i] = std::ldexp(rng.Normal(), static_cast<int>(rng.Below(2100)) - 1074);
          break;
        case 2:
          x[i] = std::ldexp(rng.Uniform01(), -1074 + static_cast<int>(rng.Below(60)));
          break;
        case 3:
          x[i] = rng.Normal() * 1e300;
          break;
        default:
          x[i] = i < n / 2 ? std::ldexp(rng.Normal(), static_cast<int>(rng.Below(200))) : 0.0;
      }
    }
    if (kind == 4)  // the second half cancels the first exactly, plus one tiny term
      for (std::uint64_t i = n / 2; i < n; ++i) x[i] = -x[i - n / 2];
    if (kind == 4 && n > 0) x[n - 1] += 0x1p-1000;
    if (rng.Below(20) == 0 && n > 0) x[rng.Below(n)] = rng.Below(2) ? NAN : -INFINITY;
    RequireSame(x, "kind " + std::to_string(kind), seed);
    ++cases;
  }
  std::cout << "ReferenceSumFast == ReferenceSum in " << cases + 12 << " cases\n";
  // Timing on one input, for information (the benchmark verb measures it properly).
  std::vector<double> big(200000);
  for (auto& v : big) v = rng.Normal();
  const auto t0 = std::chrono::steady_clock::now();
  const Reference a = ReferenceSum(big);
  const auto t1 = std::chrono::steady_clock::now();
  const Reference b = ReferenceSumFast(big);
  const auto t2 = std::chrono::steady_clock::now();
  const double ns = 1e9 / static_cast<double>(big.size());
  std::cout << "n=200000: ReferenceSum " << std::chrono::duration<double>(t1 - t0).count() * ns
            << " ns/term, ReferenceSumFast " << std::chrono::duration<double>(t2 - t1).count() * ns
            << " ns/term\n";
  CHECK(a.as_double == b.as_double);
}

namespace {

void RequireSameMulti(const Reference& want, const Reference& got, const std::vector<double>& x,
                      const std::string& kind, std::uint64_t seed) {
  INFO("reproduce: seed=" << seed << " n=" << x.size() << " kind=" << kind
                          << " inputs=" << test::Join(x, 12));
  REQUIRE(got.op == want.op);
  REQUIRE(got.count == want.count);
  REQUIRE(got.as_double.size() == want.as_double.size());
  REQUIRE(got.value.size() == want.value.size());
  for (std::size_t c = 0; c < want.as_double.size(); ++c) {
    INFO("component " << c << " want " << test::Exact(want.as_double[c]) << " got "
                      << test::Exact(got.as_double[c]));
    REQUIRE(ScalarTraits<double>::BitEqual(got.as_double[c], want.as_double[c]));
    REQUIRE(ScalarTraits<long double>::BitEqual(got.as_long_double[c], want.as_long_double[c]));
    const mpfr_srcptr a = got.value[c].get(), b = want.value[c].get();
    REQUIRE(mpfr_get_prec(a) == mpfr_get_prec(b));
    if (mpfr_nan_p(b)) {
      REQUIRE(mpfr_nan_p(a));
    } else {
      REQUIRE(mpfr_equal_p(a, b));
    }
  }
  REQUIRE(got.cert.certified == want.cert.certified);
  REQUIRE(got.cert.correctly_rounded == want.cert.correctly_rounded);
  REQUIRE(got.cert.tier == want.cert.tier);
  REQUIRE(got.cert.precision_bits == want.cert.precision_bits);
  REQUIRE(got.cert.error_bound_log2 == want.cert.error_bound_log2);
  REQUIRE(got.cert.note == want.cert.note);
}

void RequireSameWelford(const std::vector<double>& x, const std::string& kind, std::uint64_t seed) {
  RequireSameMulti(ReferenceWelford(x), ReferenceWelfordFast(x), x, kind + " (welford)", seed);
  RequireSameMulti(ReferenceNorm2(x), ReferenceNorm2Fast(x), x, kind + " (norm2)", seed);
}

}  // namespace

TEST_CASE("ReferenceWelfordFast and ReferenceNorm2Fast == theirs, field for field",
          "[fast][reference][fast_sum]") {
  const std::uint64_t seed = 6160;
  Rng rng(seed);
  RequireSameWelford({}, "empty", seed);
  RequireSameWelford({2.5}, "one", seed);
  RequireSameWelford({0.0, 0.0, -0.0}, "zeros", seed);
  RequireSameWelford({3.0, 3.0, 3.0}, "constant", seed);
  RequireSameWelford({NAN, 1.0}, "nan", seed);
  RequireSameWelford({INFINITY, 1.0}, "inf", seed);
  RequireSameWelford({1e-300, 1.0}, "below the split range", seed);
  RequireSameWelford({1e200, 1.0}, "above the split range", seed);
  RequireSameWelford({0x1p-484, 0x1p510, -0x1.8p510}, "range edges", seed);
  int cases = 0;
  for (int t = 0; t < test::Trials(300); ++t) {
    const std::uint64_t n = rng.Below(t % 10 == 0 ? 4000 : 50);
    std::vector<double> x(n);
    const int kind = static_cast<int>(rng.Below(4));
    for (std::uint64_t i = 0; i < n; ++i) {
      switch (kind) {
        case 0:
          x[i] = rng.Normal();
          break;
        case 1:
          x[i] = 1e8 + rng.Normal();
          break;  // ill-conditioned variance
        case 2:
          x[i] = std::ldexp(rng.Normal(), static_cast<int>(rng.Below(900)) - 450);
          break;
        default:
          x[i] = static_cast<float>(rng.Uniform01());
          break;
      }
    }
    RequireSameWelford(x, "kind " + std::to_string(kind), seed);
    ++cases;
  }
  std::cout
      << "ReferenceWelfordFast == ReferenceWelford and ReferenceNorm2Fast == ReferenceNorm2 in "
      << cases + 9 << " cases\n";
}
