// experiments/user_carriers/range.hpp: Range<T>, a user-defined carrier (the worked example of
// experiments/user_carriers/README.md): the running (min, max) of a list; result max - min.
//
// State      (lo, hi): the smallest and the largest value seen.
// Formulas   Identity = (+inf, -inf); Lift(x) = (x, x); Combine(a, b) = (min(a.lo, b.lo),
//            max(a.hi, b.hi)) (exact: no rounding); Finalize(s) = hi - lo (one rounding);
//            the empty list gives -inf - +inf = -inf, "no range".
// Special    NaN in -> NaN (min and max propagate it); +0 above -0 in both min and max, so
//            the combine does not depend on operand order, signed zeros included.
// Properties Commutative and bitwise commutative; Push == Combine(s, Lift(x)) (the default
//            Push); no pad input declared.
// Derivation h = the fold; h°((lo, hi)) = [lo, hi] (a list whose min is lo and max is hi), []
//            for the empty state, so Combine(a, b) = h([a.lo, a.hi, b.lo, b.hi]): exact.
#pragma once

#include <array>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/derivations/common.hpp"
#include "core/platform.hpp"
#include "core/scalar.hpp"

namespace carrier::user {

template <class T>
struct Range {
  using Scalar = T;
  using Input = T;
  using Result = T;
  struct State {
    T lo, hi;
    auto Tie() const { return std::tie(lo, hi); }
  };
  static constexpr const char* kName = "range";
  static constexpr bool kCommutative = true;
  static constexpr bool kBitwiseCommutative = true;
  static constexpr bool kPushIsCombineLift = true;
  static constexpr bool kHasPadInput = false;

  // max / min, NaN-propagating and independent of operand order (+0 above -0).
  CARRIER_HD static T Larger(const T& a, const T& b) {
    if (ScalarTraits<T>::IsNaN(a)) return a;
    if (ScalarTraits<T>::IsNaN(b)) return b;
    if (a == b) return ScalarTraits<T>::SignBit(a) ? b : a;
    return b > a ? b : a;
  }
  CARRIER_HD static T Smaller(const T& a, const T& b) {
    if (ScalarTraits<T>::IsNaN(a)) return a;
    if (ScalarTraits<T>::IsNaN(b)) return b;
    if (a == b) return ScalarTraits<T>::SignBit(a) ? a : b;
    return b < a ? b : a;
  }

  CARRIER_HD static State Identity() {
    return {ScalarTraits<T>::Infinity(), -ScalarTraits<T>::Infinity()};
  }
  CARRIER_HD static State Lift(const Input& x) { return {x, x}; }
  CARRIER_HD static State Combine(const State& a, const State& b) {
    return {Smaller(a.lo, b.lo), Larger(a.hi, b.hi)};
  }
  CARRIER_HD static Result Finalize(const State& s) { return s.hi - s.lo; }
  static std::array<T, 1> Components(const Result& r) { return {r}; }
};

// For `carrier derive range`: the two folds come from the carrier (CarrierDerivation), the
// weak right inverse and the random lists from here.
struct RangeDerivation : CarrierDerivation<Range<double>> {
  static constexpr const char* kName = "range";
  static std::vector<double> Inverse(const State& s) {
    if (s.lo > s.hi) return {};  // the empty state (+inf, -inf)
    return {s.lo, s.hi};
  }
  static std::vector<double> RandomList(std::mt19937_64& rng) {
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<double> x(1 + rng() % 16);
    for (auto& v : x) {
      const auto k = static_cast<int>(rng() % 9) - 4;  // ties and signed zeros, or a normal
      v = rng() % 2 ? normal(rng) : (k == 0 && rng() % 2) ? -0.0 : static_cast<double>(k) * 0.5;
    }
    return x;
  }
  static std::string DescribeInput(double x) { return DescribeDouble(x); }
};

}  // namespace carrier::user
