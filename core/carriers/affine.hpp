// core/carriers/affine.hpp: Affine<T>, composition of affine maps h -> a*h + b (the linear
// recurrence h_k = a_k h_{k-1} + b_k as a scan-able reduction).
//
// State      (a, b), the composed map h -> a*h + b of a segment, earliest map applied first.
// Formulas   Identity = (1, +0); Lift(x) = (x.a, x.b);
//            Combine(f, g) = g o f, f the earlier segment:
//              a = g.a * f.a;
//              b = (f.b == 0 and g.a not finite) ? g.b : g.a * f.b + g.b.
//            The exception is the exact composition (f(h) = f.a h contributes no constant);
//            without it a fold, which starts from Identity = (1, 0), would turn an inf or NaN
//            slope into b = inf * 0 = NaN where a tree of lifts keeps b, and the paths would
//            disagree. For finite g.a the formula is the plain one, bit for bit.
//            Push(s, x) = Combine(s, Lift(x)), literally; Finalize(s) = s (the composed map);
//            Apply(r, h0) = r.a * h0 + r.b, the last h of the recurrence started at h0.
// Special    IEEE arithmetic on the 2x2 matrix product [a b; 0 1], except the f.b == 0 rule
//            above: NaN in (a or b, any position) -> Apply(result, h0) NaN for every h0 (a NaN
//            a_k sits in the product a, a NaN b_k in every later b; a NaN a_0 never reaches b,
//            whose exact value does not contain it); an inf slope gives inf through a and
//            through b where it multiplies a non-zero constant; a zero slope meeting an inf
//            slope (in a) or an inf constant (in b) gives NaN, as the exact map is undefined
//            there; empty -> (1, +0), Apply = h0.
// Bound      For n maps merged by a tree of max leaf depth D (a fold from Identity counts it
//            as one more exact leaf). The product a has n - 1 rounded multiplications in any
//            order, and each perturbs the whole product:
//              |a_hat - a| <= gamma_n |a|                    (Higham, ASNA 2nd ed., Lemma 3.1).
//            b = sum_k (prod_{j>k} a_j) b_k. At a node, f.b's terms are multiplied by the later
//            segment's computed product g.a (|g| - 1 roundings, |g| its number of maps), then
//            rounded by the product and the sum; g.b's terms by the sum only. Along one leaf's
//            path the siblings are disjoint and exclude the leaf, so sum |g| <= n - 1 and
//              |b_hat - b| <= gamma_{n+D} sum_k |prod_{j>k} a_j| |b_k|
//            (derived here in the standard model of Higham, ASNA 2nd ed., Secs. 3.1 and 4.2;
//            sequentially it is gamma_{2n}, the recurrence's classical forward bound).
// Properties Not commutative, even in exact arithmetic: composing (2, 0) then (1, 1) gives
//            (2, 1), the other order (2, 2). Hence not bitwise commutative either; a GPU tree
//            must keep operand order. Associative in exact arithmetic (matrix products).
//            Push == Combine(s, Lift(x)) by definition. PadInput = (1, -0): (1 * s.a,
//            1 * s.b + (-0)) == (s.a, s.b) bitwise for every state.
// Assumes    no FMA contraction (g.a * f.b + g.b must round twice), round to nearest.
#pragma once

#include <array>
#include <tuple>

#include "core/carriers/pairs.hpp"
#include "core/platform.hpp"
#include "core/scalar.hpp"

namespace carrier {

template <class T>
struct Affine {
  using Scalar = T;
  using Input = ValuePair<T>;
  struct State {
    T a;
    T b;
    auto Tie() const { return std::tie(a, b); }
  };
  using Result = State;
  static constexpr const char* kName = "affine";
  static constexpr bool kCommutative = false;
  static constexpr bool kBitwiseCommutative = false;
  static constexpr bool kPushIsCombineLift = true;
  static constexpr bool kHasPadInput = true;

  CARRIER_HD static State Identity() { return {ScalarTraits<T>::One(), ScalarTraits<T>::Zero()}; }
  CARRIER_HD static State Lift(const Input& x) { return {x.a, x.b}; }
  CARRIER_HD static State Combine(const State& f, const State& g) {
    T a = g.a * f.a;
    // The exact composition has b = g.b when f.b == 0; only a non-finite slope makes the
    // product g.a * 0 differ from a harmless zero (NaN instead), so only then is it skipped.
    if (f.b == ScalarTraits<T>::Zero() && !ScalarTraits<T>::IsFinite(g.a)) return {a, g.b};
    T gb = g.a * f.b;
    return {a, gb + g.b};
  }
  CARRIER_HD static State Push(const State& s, const Input& x) { return Combine(s, Lift(x)); }
  CARRIER_HD static Result Finalize(const State& s) { return s; }
  CARRIER_HD static T Apply(const Result& r, T h0) {
    T ah = r.a * h0;
    return ah + r.b;
  }
  CARRIER_HD static Input PadInput() {
    return {ScalarTraits<T>::One(), ScalarTraits<T>::NegZero()};
  }
  static std::array<T, 2> Components(const Result& r) { return {r.a, r.b}; }
};

}  // namespace carrier
