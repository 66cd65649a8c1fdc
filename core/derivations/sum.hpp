// core/derivations/sum.hpp: the Third Homomorphism Theorem derivation of Sum.
//
// h = sum; both folds exist (s + x, x + s); h°(s) = [s] (h([s]) = s exactly), so the derived
// combine is h([a, b]) = a + b: the hand-written one, bit for bit (0 + a + b = a + b for a != -0).
// Random lists are positive (lognormal), so the folds' different rounding orders stay within
// n u of each other and the fold check measures rounding, not cancellation.
#pragma once

#include <random>
#include <vector>

#include "core/carriers/sum.hpp"
#include "core/derivations/common.hpp"

namespace carrier {

struct SumDerivation : CarrierDerivation<Sum<double>> {
  static constexpr const char* kName = "sum";
  static std::vector<double> Inverse(const State& s) { return {s.s}; }
  static std::vector<double> RandomList(std::mt19937_64& rng) {
    std::lognormal_distribution<double> value(0.0, 1.0);
    std::vector<double> x(1 + rng() % 16);
    for (auto& v : x) v = value(rng);
    return x;
  }
  static std::string DescribeInput(double x) { return DescribeDouble(x); }
};

}  // namespace carrier
