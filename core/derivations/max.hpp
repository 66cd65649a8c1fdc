// core/derivations/max.hpp: the Third Homomorphism Theorem derivation of Max.
//
// h = max; both folds exist; h°(m) = [m] for finite or +inf m and [] for the empty state
// (-inf, which Max's fold returns for the empty list), so Combine(a, b) = max(a, b): exact.
// Random lists carry ties and signed zeros.
#pragma once

#include <limits>
#include <random>
#include <vector>

#include "core/carriers/max.hpp"
#include "core/derivations/common.hpp"

namespace carrier {

struct MaxDerivation : CarrierDerivation<Max<double>> {
  static constexpr const char* kName = "max";
  static std::vector<double> Inverse(const State& s) {
    if (s.m == -std::numeric_limits<double>::infinity()) return {};
    return {s.m};
  }
  static std::vector<double> RandomList(std::mt19937_64& rng) {
    std::vector<double> x(1 + rng() % 16);
    for (auto& v : x) {
      const auto k = static_cast<int>(rng() % 9) - 4;  // ties: small integers
      v = (k == 0 && rng() % 2) ? -0.0 : static_cast<double>(k) * 0.5;
    }
    return x;
  }
  static std::string DescribeInput(double x) { return DescribeDouble(x); }
};

}  // namespace carrier
