// The Third Homomorphism Theorem facility (core/derive.hpp), its worked derivations and
// counterexamples (core/derivations/), and the exact-arithmetic law probes
// (core/derivations/law_probes.hpp) that `carrier laws` runs in MPFR, here in double.
#include <catch2/catch.hpp>
#include <cmath>
#include <iostream>
#include <limits>
#include <vector>

#include "core/derivations/all.hpp"
#include "core/derivations/law_probes.hpp"

using namespace carrier;

namespace {

constexpr long double kTolerance = 0x1p-40L;

template <class D>
void ExpectDerivationAgrees(std::uint64_t seed) {
  const DeriveReport r = Derive<D>(500, seed, kTolerance);
  std::cout << "derive " << r.name << " seed " << seed << ": folds agree " << r.folds_agree
            << " (max diff " << static_cast<double>(r.max_fold_diff) << "), h(h°(s)) diff "
            << static_cast<double>(r.max_inverse_diff) << ", derived vs hand-written combine "
            << static_cast<double>(r.max_combine_diff) << " (longest h°: " << r.max_inverse_length
            << ")\n";
  INFO("derivation " << r.name << " seed " << seed << "\n" << r.counterexample);
  CHECK(r.folds_agree);
  CHECK(r.max_inverse_diff <= kTolerance);
  CHECK(r.max_combine_diff <= kTolerance);
}

template <class D>
void ExpectRejected(std::uint64_t seed) {
  const DeriveReport r = Derive<D>(200, seed, kTolerance);
  std::cout << "derive " << r.name << " seed " << seed << " (must be rejected):\n"
            << r.counterexample << "\n";
  INFO("derivation " << r.name << " seed " << seed);
  CHECK_FALSE(r.folds_agree);
  CHECK(r.counterexample.find("leftward fold") != std::string::npos);
  CHECK(r.counterexample.find("rightward fold") != std::string::npos);
  CHECK(r.counterexample.find("list (n = ") != std::string::npos);
  CHECK(r.counterexample.find("answer") != std::string::npos);
}

}  // namespace

TEST_CASE("derive: worked derivations agree with the hand-written combines", "[fast][derive]") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    ExpectDerivationAgrees<SumDerivation>(seed);
    ExpectDerivationAgrees<MaxDerivation>(seed);
    ExpectDerivationAgrees<OnlineSoftmaxDerivation>(seed);
    ExpectDerivationAgrees<WelfordDerivation>(seed);
    ExpectDerivationAgrees<AffineDerivation>(seed);
  }
}

TEST_CASE("derive: counterexamples are rejected with the list and both folds", "[fast][derive]") {
  for (std::uint64_t seed : {1u, 7u}) {
    ExpectRejected<NaiveMeanDerivation>(seed);
    ExpectRejected<NaiveLseDerivation>(seed);
  }
}

TEST_CASE("derive: the online softmax inverse has maximum m and terms adding to d",
          "[fast][derive]") {
  using D = OnlineSoftmaxDerivation;
  const double ms[] = {-3.5, 0.0, 2.25, 100.0};
  const double ds[] = {1.0, 1.5, 2.0, 7.3, 31.0};
  for (double m : ms)
    for (double d : ds) {
      const auto list = D::Inverse({m, d});
      double top = -std::numeric_limits<double>::infinity(), sum = 0;
      for (double x : list) top = std::max(top, x);
      for (double x : list) sum += std::exp(x - top);
      std::cout << "h°(" << m << ", " << d << "): " << list.size() << " elements, max " << top
                << ", sum of exp(x - max) " << sum << "\n";
      INFO("m " << m << " d " << d << " list " << DescribeList<D>(list));
      CHECK(top == m);
      CHECK(list.size() == 1 + static_cast<std::size_t>(std::ceil(d - 1)));
      CHECK(std::fabs(sum - d) <= 1e-13 * d);
    }
  CHECK(D::Inverse(D::Empty()).empty());
}

TEST_CASE("derive: the Welford inverse reproduces n mean and M2", "[fast][derive]") {
  using D = WelfordDerivation;
  const Welford<double>::State states[] = {{2, 1.5, 0.5}, {5, -3.0, 12.0}, {17, 100.0, 3.25}};
  for (const auto& s : states) {
    const auto back = FoldLeftward<D>(D::Inverse(s));
    std::cout << "h(h°" << D::Describe(s) << ") = " << D::Describe(back) << "\n";
    INFO("state " << D::Describe(s) << " back " << D::Describe(back));
    CHECK(back.n == s.n);
    CHECK(std::fabs(back.mean - s.mean) <= 1e-14 * std::fabs(s.mean));
    CHECK(std::fabs(back.m2 - s.m2) <= 1e-12 * s.m2);
  }
}

TEST_CASE("law probes: associativity gap separates a monoid from the naive mean", "[fast][laws]") {
  std::vector<Sum<double>::State> a{{1.0}, {0.25}}, b{{2.0}, {-3.0}}, c{{4.0}, {8.5}};
  const GapReport sum = AssociativityGap<Sum<double>>(a, b, c);
  std::vector<NaiveMean<double>::State> ma{{1, 1.0}, {1, 0.25}}, mb{{1, 2.0}, {1, -3.0}},
      mc{{1, 4.0}, {1, 8.5}};
  const GapReport mean = AssociativityGap<NaiveMean<double>>(ma, mb, mc);
  std::cout << "associativity gap: sum " << static_cast<double>(sum.max_gap) << ", naive-mean "
            << static_cast<double>(mean.max_gap) << "\n  " << mean.worst << "\n";
  CHECK(sum.max_gap == 0);  // small dyadic values: every sum is exact
  CHECK(mean.max_gap > 0.1);
  CHECK(mean.worst.find("Combine(Combine(a, b), c)") != std::string::npos);
}

TEST_CASE("law probes: the precision classification reads the slope", "[fast][laws]") {
  const std::vector<int> bits{64, 128, 256, 512};
  const auto assoc = ClassifyAcrossPrecisions(bits, {0x1p-63L, 0x1p-127L, 0x1p-255L, 0x1p-511L});
  const auto broken = ClassifyAcrossPrecisions(bits, {0.5L, 0.5L, 0.5L, 0.5L});
  const auto exact = ClassifyAcrossPrecisions(bits, {0, 0, 0, 0});
  const auto floor_limited =
      ClassifyAcrossPrecisions(bits, {0x1p-510L, 0x1p-510L, 0x1p-510L, 0x1p-511L});
  std::cout << "slopes: associative " << assoc.slope << ", broken " << broken.slope
            << ", floor-limited " << floor_limited.slope << "\n";
  CHECK(assoc.holds);
  CHECK(std::fabs(assoc.slope + 64) < 1);
  CHECK_FALSE(broken.holds);
  CHECK(std::fabs(broken.slope) < 1e-9);
  CHECK(exact.holds);
  CHECK(exact.exact);
  CHECK(floor_limited.holds);
  CHECK(floor_limited.floor_limited);
}

TEST_CASE("law probes: homomorphism gap catches the unrescaled softmax", "[fast][laws]") {
  const std::vector<double> x{0.0, 1.0, 2.0, 0.5};
  const std::vector<std::size_t> splits{0, 1, 2, 3, 4};
  const GapReport good = HomomorphismGap<OnlineSoftmax<double>>(x, splits);
  const GapReport bad = HomomorphismGap<NaiveLse<double>>(x, splits);
  std::cout << "homomorphism gap: lse " << static_cast<double>(good.max_gap) << ", naive-lse "
            << static_cast<double>(bad.max_gap) << "\n  " << bad.worst << "\n";
  CHECK(good.max_gap <= 1e-15);
  CHECK(bad.max_gap > 0.01);
}

TEST_CASE("law probes: associativity defect in ulps", "[fast][laws]") {
  // float sums: (1 + 2^-24) + 2^-24 rounds twice, 1 + (2^-24 + 2^-24) once.
  std::vector<Sum<float>::State> a{{1.0f}}, b{{0x1p-24f}}, c{{0x1p-24f}};
  const auto ulps = AssociativityUlps<Sum<float>>(
      std::span<const Sum<float>::State>(a), std::span<const Sum<float>::State>(b),
      std::span<const Sum<float>::State>(c),
      [](long double v) { return static_cast<double>(std::ldexp(1.0L, std::ilogb(v) - 23)); });
  std::cout << "ulps of (1 + 2^-24) + 2^-24 against 1 + (2^-24 + 2^-24) in float: " << ulps[0]
            << "\n";
  REQUIRE(ulps.size() == 1);
  CHECK(ulps[0] == 1.0);
}
