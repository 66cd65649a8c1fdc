// core/derivations/online_softmax.hpp: the Third Homomorphism Theorem derivation of
// OnlineSoftmax, and the note on transport of structure (its carrier contract lives in
// core/carriers/online_softmax.hpp; this note is its algebraic complement).
//
// Derivation h = (max, sum of exp(x - max)). Leftward step: the online push; rightward step:
//            Combine(Lift(x), s). Weak right inverse: h°(-inf, 0) = []; otherwise
//              h°(m, d) = [m] followed by k = ceil(d - 1) copies of m + log((d - 1) / k)
//            (none when d <= 1): its maximum is exactly m, since (d - 1) / k <= 1 makes every
//            copy <= m, and its terms exp(x - m) add up to 1 + k (d - 1) / k = d. The derived
//            combine h(h°(a) ++ h°(b)) agrees with the hand-written rescaling combine to a few
//            roundings per copy (k up to the lists' length).
//
// Transport  phi(m, d) = (m, d e^m) is a bijection from the states with finite m onto
//            (m, D) with D = sum e^{x_i} > 0, and
//              phi(Combine(a, b)) = (max(a.m, b.m), a.d e^{a.m} + b.d e^{b.m})
//                                 = (max, +)(phi(a), phi(b)),
//            because Combine rescales by e^{a.m - M}: d_a e^{a.m - M} e^M = d_a e^{a.m}. So the
//            "twisted" combine is the plain (max, +) monoid in disguise, which is why the
//            max-rescale coupling does not break associativity (tests/precision/
//            test_transport.cpp measures |phi(Combine(a, b)) - (max, +)(phi a, phi b)| in MPFR
//            at p bits: about 2^-p). In floating point the two are NOT interchangeable: the
//            transported monoid stores D = sum e^{x_i}, which overflows fp32 once any x_i is
//            above about 88.7 (log of FLT_MAX), while (m, d) keeps d in [1, n]. The test
//            prints the lse of values around 100 in fp32 both ways: twisted finite, transported
//            inf.
#pragma once

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/carriers/online_softmax.hpp"
#include "core/derivations/common.hpp"

namespace carrier {

struct OnlineSoftmaxDerivation : CarrierDerivation<OnlineSoftmax<double>> {
  static constexpr const char* kName = "lse";
  static std::vector<double> Inverse(const State& s) {
    if (s.m == -std::numeric_limits<double>::infinity()) return {};
    std::vector<double> x{s.m};
    if (s.d > 1) {
      const double k = std::ceil(s.d - 1);
      x.insert(x.end(), static_cast<std::size_t>(k), s.m + std::log((s.d - 1) / k));
    }
    return x;
  }
  static std::vector<double> RandomList(std::mt19937_64& rng) {
    std::normal_distribution<double> value(0.0, 3.0);
    std::vector<double> x(1 + rng() % 16);
    for (auto& v : x) v = value(rng);
    if (rng() % 4 == 0) x[rng() % x.size()] = -std::numeric_limits<double>::infinity();
    return x;
  }
  static std::string DescribeInput(double x) { return DescribeDouble(x); }
};

}  // namespace carrier
