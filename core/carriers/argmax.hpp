// core/carriers/argmax.hpp: ArgMax<T>, the largest element and its index (ties: lowest index).
//
// State      (value, index); index -1 means "no element yet", index >= 0 is a real position.
// Formulas   Identity = (-inf, -1); Lift(x) = (x.value, x.index); Push(s, x) = Combine(s,
//            Lift(x)); Combine(a, b), `a` the earlier segment, the first rule that applies:
//              a.index < 0 -> b;  b.index < 0 -> a;        (empty operands)
//              a.value NaN -> a;  b.value NaN -> b;        (the earliest NaN wins)
//              b.value > a.value -> b;  otherwise -> a.    (ties keep the earlier segment)
//            Finalize(s) = (value, index).
// Special    NaN in -> (NaN, index of the first NaN); empty -> (-inf, -1); all -inf -> (-inf,
//            0): -inf is a real element, only index -1 marks emptiness; any +inf (no NaN) ->
//            (+inf, first +inf). Signed zeros tie (+0 == -0): the earlier one is kept.
// Bound      exact: Combine selects one operand, nothing is rounded.
// Properties Not commutative, even in exact arithmetic: on equal values the earlier segment
//            wins, so Combine((1, 0), (1, 1)) = (1, 0) but Combine((1, 1), (1, 0)) = (1, 1).
//            Hence not bitwise commutative either (a GPU must keep operand order). Associative,
//            so any order-preserving tree gives the lowest index of the maximum.
//            Push == Combine(s, Lift(x)) by definition. PadInput = (-inf, -1): it lifts to the
//            empty state, which the second rule drops, so every state is left bit-identical.
// Assumes    inputs carry index >= 0 (-1 is reserved for the pad); comparisons only.
#pragma once

#include <array>
#include <cstdint>
#include <tuple>

#include "core/carriers/pairs.hpp"
#include "core/platform.hpp"
#include "core/scalar.hpp"

namespace carrier {

template <class T>
struct ArgMax {
  using Scalar = T;
  using Input = IndexedValue<T>;
  using Result = IndexedValue<T>;
  struct State {
    T value;
    std::int64_t index;
    auto Tie() const { return std::tie(value, index); }
  };
  static constexpr const char* kName = "argmax";
  static constexpr bool kCommutative = false;
  static constexpr bool kBitwiseCommutative = false;
  static constexpr bool kPushIsCombineLift = true;
  static constexpr bool kHasPadInput = true;

  CARRIER_HD static State Identity() { return {-ScalarTraits<T>::Infinity(), -1}; }
  CARRIER_HD static State Lift(const Input& x) { return {x.value, x.index}; }
  CARRIER_HD static State Combine(const State& a, const State& b) {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    if (ScalarTraits<T>::IsNaN(a.value)) return a;
    if (ScalarTraits<T>::IsNaN(b.value)) return b;
    if (b.value > a.value) return b;
    return a;
  }
  CARRIER_HD static State Push(const State& a, const Input& x) { return Combine(a, Lift(x)); }
  CARRIER_HD static Result Finalize(const State& a) { return {a.value, a.index}; }
  CARRIER_HD static Input PadInput() { return {-ScalarTraits<T>::Infinity(), -1}; }
  // The index as a scalar (-1 for empty); exact while index < 2^(precision of T).
  static std::array<T, 2> Components(const Result& r) {
    T index = r.index < 0 ? -ScalarTraits<T>::One()
                          : ScalarTraits<T>::FromCount(static_cast<std::uint64_t>(r.index));
    return {r.value, index};
  }
};

}  // namespace carrier
