// core/derivations/affine.hpp: the Third Homomorphism Theorem derivation of Affine.
//
// h = composition of the maps h -> a h + b, earliest first; the leftward fold composes the new
// map after, the rightward fold before. h°((a, b)) = [(a, b)]: one map whose composition is
// itself (the fold from the identity (1, 0) gives (a, 1 * 0 * ... ) = (a, b) exactly), so
// Combine(f, g) = g o f, the hand-written one. Not commutative: the list order is the meaning.
// Slopes lie in [0.5, 1.5] and constants in [0, 1], so no cancellation hides the comparison.
#pragma once

#include <random>
#include <vector>

#include "core/carriers/affine.hpp"
#include "core/derivations/common.hpp"

namespace carrier {

struct AffineDerivation : CarrierDerivation<Affine<double>> {
  static constexpr const char* kName = "affine";
  static std::vector<Input> Inverse(const State& s) { return {Input{s.a, s.b}}; }
  static std::vector<Input> RandomList(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> slope(0.5, 1.5), constant(0.0, 1.0);
    std::vector<Input> x(1 + rng() % 16);
    for (auto& v : x) v = Input{slope(rng), constant(rng)};
    return x;
  }
  static std::string DescribeInput(const Input& x) {
    return "(" + DescribeDouble(x.a) + ", " + DescribeDouble(x.b) + ")";
  }
};

}  // namespace carrier
