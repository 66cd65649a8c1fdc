// core/variance_formulas.hpp: each formula equals its own hand-written fp64 loop bit for bit on
// the seq tree (the formula is what its contract writes, nothing more), the tree decides the
// order of every sum (pairwise differs from seq and equals the hand-written pairwise sums), and
// Chan, Golub & LeVeque's correction beats plain two-pass on offset data (kappa ~ 1e6, fp32).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <vector>

#include "core/schedule.hpp"
#include "core/variance_formulas.hpp"

namespace {

std::vector<double> Offset(std::size_t n, double mu, std::uint64_t seed) {
  std::vector<double> x;
  std::uint64_t s = seed;
  for (std::size_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    x.push_back(mu + (static_cast<double>(s >> 11) * 0x1p-53 - 0.5));
  }
  return x;
}

template <class T>
T PairwiseSum(const std::vector<T>& x, std::size_t lo, std::size_t hi) {
  if (hi - lo == 1) return T(0) + x[lo];
  const std::size_t mid = lo + (hi - lo + 1) / 2;
  const T a = PairwiseSum(x, lo, mid);
  const T b = PairwiseSum(x, mid, hi);
  return a + b;
}

template <class T>
T SumBy(const std::vector<T>& x, bool pairwise) {
  if (pairwise) return PairwiseSum(x, 0, x.size());
  T s = 0;
  for (const T& v : x) s += v;
  return s;
}

bool Same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("variance formulas: each is its contract's loop, in the tree's order",
          "[fast][variance]") {
  using carrier::BuildTree;
  using carrier::ParseSchedule;
  for (std::size_t n : {1u, 2u, 3u, 100u, 1000u}) {
    const std::vector<double> x = Offset(n, 1e4, 7 + n);
    for (bool pairwise : {false, true}) {
      const auto tree = BuildTree(ParseSchedule(pairwise ? "pairwise" : "seq"), n);
      const double count = static_cast<double>(n), count1 = static_cast<double>(n - 1);
      // Two-pass and corrected two-pass.
      const double mean = SumBy(x, pairwise) / count;
      std::vector<double> d, d2;
      for (double v : x) {
        d.push_back(v - mean);
        d2.push_back(d.back() * d.back());
      }
      const double m2 = SumBy(d2, pairwise);
      const double s1 = SumBy(d, pairwise);
      const double m2c = m2 - s1 * s1 / count;
      // Textbook.
      std::vector<double> sq;
      for (double v : x) sq.push_back(v * v);
      const double t1 = SumBy(x, pairwise), t2 = SumBy(sq, pairwise);
      const double m2t = t2 - t1 * t1 / count;

      const auto two = carrier::TwoPassVariance(tree, x);
      const auto cor = carrier::CorrectedTwoPassVariance(tree, x);
      const auto txt = carrier::TextbookVariance(tree, x);
      INFO("n " << n << ", offset 1e4 + U(-0.5, 0.5), seed " << 7 + n << ", fp64, "
                << (pairwise ? "pairwise" : "seq"));
      CHECK(Same(two.mean, mean));
      CHECK(Same(two.var_population, m2 / count));
      CHECK(Same(two.var_sample, m2 / count1));
      CHECK(Same(cor.mean, mean));
      CHECK(Same(cor.var_population, m2c / count));
      CHECK(Same(txt.mean, t1 / count));
      CHECK(Same(txt.var_population, m2t / count));
      CHECK(Same(txt.var_sample, m2t / count1));
    }
  }
}

TEST_CASE("variance formulas: the correction removes the mean's error (fp32, kappa ~ 1e6)",
          "[fast][variance]") {
  const std::size_t n = 4096;
  std::vector<float> x;
  double sum = 0;
  for (double v : Offset(n, 1e6, 3)) {
    x.push_back(static_cast<float>(v));
    sum += static_cast<double>(x.back());
  }
  double m2 = 0;  // exact enough: fp64 over fp32 values centred at a fp64 mean
  for (float v : x) m2 += (v - sum / n) * (v - sum / n);
  const auto tree = carrier::BuildTree(carrier::ParseSchedule("seq"), n);
  const double two = carrier::TwoPassVariance(tree, x).var_population;
  const double cor = carrier::CorrectedTwoPassVariance(tree, x).var_population;
  const double want = m2 / n;
  const double e_two = std::fabs(two - want) / want, e_cor = std::fabs(cor - want) / want;
  std::cout << "  fp32 offset 1e6 n 4096 seq: two-pass rel error " << e_two << ", corrected "
            << e_cor << "\n";
  INFO("two-pass " << two << ", corrected " << cor << ", fp64 reference " << want);
  CHECK(e_cor * 10 < e_two);
}
