// core/derivations/welford.hpp: the Third Homomorphism Theorem derivation of Welford.
//
// h = (count, mean, sum of squared deviations). Leftward step: Welford's push; rightward step:
// Combine(Lift(x), s). Weak right inverse: for n >= 2,
//   h°(n, mean, M2) = [mean + s, mean - s] followed by n - 2 copies of mean, s = sqrt(M2 / 2):
// its count is n, its mean is mean (the +-s cancel) and its M2 is 2 s^2 = M2; n = 1 gives
// [mean], n = 0 gives []. The derived combine h(h°(a) ++ h°(b)) then agrees with Chan, Golub
// & LeVeque's pooled formula to a few roundings.
//
// Transport of structure: psi(n, mean, M2) = (n, n mean, M2 + n mean^2) = (n, sum x, sum x^2)
// maps Combine onto componentwise addition of power sums, exactly in exact arithmetic
// (tests/precision/test_transport.cpp checks it on small integers in MPFR, where every value
// is exact). The power sums are the fp-fragile representation: sum x^2 - (sum x)^2 / n
// cancels catastrophically, which is why the carrier keeps (mean, M2) instead.
#pragma once

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/carriers/welford.hpp"
#include "core/derivations/common.hpp"

namespace carrier {

struct WelfordDerivation : CarrierDerivation<Welford<double>> {
  static constexpr const char* kName = "welford";
  static std::vector<double> Inverse(const State& s) {
    if (s.n == 0) return {};
    if (s.n == 1) return {s.mean};
    const double spread = std::sqrt(s.m2 / 2);
    std::vector<double> x{s.mean + spread, s.mean - spread};
    x.insert(x.end(), s.n - 2, s.mean);
    return x;
  }
  static long double Distance(const State& a, const State& b) {
    if (a.n != b.n) return std::numeric_limits<long double>::infinity();
    return CarrierDerivation<Welford<double>>::Distance(a, b);
  }
  static std::vector<double> RandomList(std::mt19937_64& rng) {
    std::normal_distribution<double> value(3.0, 1.0);
    std::vector<double> x(2 + rng() % 24);
    for (auto& v : x) v = value(rng);
    return x;
  }
  static std::string DescribeInput(double x) { return DescribeDouble(x); }
};

}  // namespace carrier
