// core/carriers/max.hpp: Max<T>, the largest element.
//
// State      m (the largest element so far).
// Formulas   Identity = -inf; Lift(x) = x; Push(s, x) = Combine(s, Lift(x));
//            Combine(a, b) = Of(a.m, b.m) with, in this order:
//              a NaN -> a; b NaN -> b;            (NaN wins; the earlier NaN first)
//              a == b -> (SignBit(a) ? b : a);     (max(+0, -0) = max(-0, +0) = +0)
//              otherwise (b > a ? b : a).
//            Finalize(s) = m.
// Special    NaN in -> NaN; empty -> -inf; all -inf -> -inf; any +inf (and no NaN) -> +inf.
// Bound      exact: Combine selects one of its operands, nothing is rounded.
// Properties Commutative and bitwise commutative: the equal-value branch makes the choice
//            between +0 and -0 independent of operand order, and NaNs equal any NaN (payloads
//            are outside the contract). Push == Combine(s, Lift(x)) by definition.
//            PadInput = -inf: Of(m, -inf) is m for every m (NaN by the first rule, -inf by the
//            equal branch, anything else is larger).
// Assumes    nothing: comparisons only. Of() is also the max that OnlineSoftmax and FlashRow
//            use, so all three agree on signed zeros.
#pragma once

#include <array>
#include <tuple>

#include "core/platform.hpp"
#include "core/scalar.hpp"

namespace carrier {

template <class T>
struct Max {
  using Scalar = T;
  using Input = T;
  using Result = T;
  struct State {
    T m;
    auto Tie() const { return std::tie(m); }
  };
  static constexpr const char* kName = "max";
  static constexpr bool kCommutative = true;
  static constexpr bool kBitwiseCommutative = true;
  static constexpr bool kPushIsCombineLift = true;
  static constexpr bool kHasPadInput = true;

  // The larger of a and b, NaN-propagating, +0 above -0, independent of operand order.
  CARRIER_HD static T Of(T a, T b) {
    if (ScalarTraits<T>::IsNaN(a)) return a;
    if (ScalarTraits<T>::IsNaN(b)) return b;
    if (a == b) return ScalarTraits<T>::SignBit(a) ? b : a;
    return b > a ? b : a;
  }

  CARRIER_HD static State Identity() { return {-ScalarTraits<T>::Infinity()}; }
  CARRIER_HD static State Lift(const Input& x) { return {x}; }
  CARRIER_HD static State Combine(const State& a, const State& b) { return {Of(a.m, b.m)}; }
  CARRIER_HD static State Push(const State& a, const Input& x) { return Combine(a, Lift(x)); }
  CARRIER_HD static Result Finalize(const State& a) { return a.m; }
  CARRIER_HD static Input PadInput() { return -ScalarTraits<T>::Infinity(); }
  static std::array<T, 1> Components(const Result& r) { return {r}; }
};

}  // namespace carrier
