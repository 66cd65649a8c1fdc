// core/carriers/prod.hpp: Prod<T>, the product of a list (the CLI's `prod`).
//
// State      p, the running product.
// Formulas   Identity = 1; Lift(x) = x; Combine(a, b) = a * b (one rounding);
//            Push(s, x) = Combine(s, Lift(x)); Finalize = p.
// Special    NaN in -> NaN; 0 * inf -> NaN; an inf with nonzero finite factors -> inf with the
//            product's sign; overflow -> +-inf, underflow -> +-0 or a subnormal (the relative
//            bound then fails: it assumes no underflow); empty -> 1.
// Bound      Every multiplication of two nonempty parts rounds once and multiplies the whole
//            product by (1 + delta), |delta| <= u, whatever the tree: a product of n numbers
//            passes n - 1 roundings in every order, so
//              |p^ - p| <= gamma_{n-1} |p|   (Higham ASNA 2nd ed. Lemma 3.1 and Sec. 3.1),
//            rigorous without underflow or overflow. Unlike a sum, the count that enters is
//            the number of multiplications, not the tree's depth D (D = n - 1 only for seq).
//            (precision/op_bounds/prod.hpp.)
// Properties Commutative and bitwise commutative (IEEE multiplication is); Push ==
//            Combine(s, Lift(x)) by definition; PadInput = 1 (s * 1 = s bitwise, signed zeros,
//            infinities and NaN included).
// Assumes    no FMA contraction (none can arise: there are no additions).
#pragma once

#include <array>
#include <tuple>

#include "core/platform.hpp"
#include "core/scalar.hpp"

namespace carrier {

template <class T>
struct Prod {
  using Scalar = T;
  using Input = T;
  using Result = T;
  struct State {
    T p;
    auto Tie() const { return std::tie(p); }
  };
  static constexpr const char* kName = "prod";
  static constexpr bool kCommutative = true;
  static constexpr bool kBitwiseCommutative = true;
  static constexpr bool kPushIsCombineLift = true;
  static constexpr bool kHasPadInput = true;

  CARRIER_HD static State Identity() { return {ScalarTraits<T>::One()}; }
  CARRIER_HD static State Lift(const Input& x) { return {x}; }
  CARRIER_HD static State Combine(const State& a, const State& b) { return {a.p * b.p}; }
  CARRIER_HD static Result Finalize(const State& s) { return s.p; }
  CARRIER_HD static Input PadInput() { return ScalarTraits<T>::One(); }
  static std::array<T, 1> Components(const Result& r) { return {r}; }
};

}  // namespace carrier
