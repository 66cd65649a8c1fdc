// core/carriers/kahan.hpp: Kahan<T>, Kahan's original compensated summation (Kahan 1965; the
// CLI's `kahan`). Neumaier's variant, which adds the correction at the end and tests which
// operand is larger, is Compensated<T> (core/carriers/compensated.hpp, the CLI's `neumaier`).
//
// State      (s, c, live): s the running sum, c the negated rounding error of the last step
//            (Kahan's convention: the sum is s - c), live = 0 for the empty segment, 1 otherwise.
// Formulas   Identity = (+0, +0, 0); Lift(x) = (x, +0, 1); Finalize(st) = st.s (Kahan's
//            algorithm returns s: the last correction is dropped).
//            Combine(a, b): if b is empty, a; if a is empty, b; otherwise
//              y = b.s - a.c;  t = a.s + y;
//              if t is not finite: return (t, +0, 1);
//              return (t, ((t - a.s) - y) + b.c, 1).
//            Push(st, x) = Combine(st, Lift(x)) is Kahan's loop body exactly: y = x - c;
//            t = s + y; c = (t - s) - y; s = t (the "+ b.c" adds +0, and c is never -0, below).
//            On a tree, a node applies its left part's correction to its right part's sum and
//            carries the right part's correction upwards: the correction of a left operand is
//            used once, as in the sequential loop.
// Special    NaN in -> NaN; +inf and -inf -> NaN; otherwise any inf -> that inf; empty -> +0.
//            The guard keeps c finite (an unguarded step would make c = inf - inf = NaN), so s
//            carries the special value. A finite sum that overflows stops there: s = +-inf.
// Bound      Sequentially (one chain: D = n - 1 pushes, no combines) the classical bound
//            |s - S| <= (2u + O(n u^2)) sum|x_i| (Knuth TAOCP vol. 2, 4.2.2 ex. 19; Higham ASNA
//            2nd ed. Thm 4.8 and eq. (4.9)), here (2u + D^2 u^2) sum|x|. In a tree each combine
//            also carries its right operand's correction up to the root, where Finalize drops
//            it: at most D corrections, each <= u times a partial sum, so D u sum|x| more to
//            first order. The bound (precision/op_bounds/kahan.hpp) is that first-order
//            estimate, not a proof.
// Properties Commutative in exact arithmetic (every correction is 0 there, so a state is its
//            sum); not bitwise commutative (y = b.s - a.c uses a's correction, not b's).
//            Push == Combine(s, Lift(x)) by definition. The empty flag makes Identity a two-
//            sided identity bitwise: Kahan's eager correction has no neutral element otherwise
//            (Combine(a, (+0, +0)) would fold a.c into a.s). PadInput: none (padding with a
//            zero would apply the pending correction, changing the bits).
//            c is never -0 in round-to-nearest: (t - a.s) - y is -0 only if t - a.s = -0 and
//            y = +0, and t - a.s = -0 needs t = -0 with a.s = +0, impossible for t = a.s + y;
//            a sum of two non-(-0) values is not -0.
// Assumes    no FMA contraction (-ffp-contract=off), round-to-nearest for the compensation to
//            mean what it says (directed and stochastic rounding still run, with the bound
//            unproved), no -ffast-math (it would cancel the compensation algebraically).
#pragma once

#include <array>
#include <tuple>

#include "core/platform.hpp"
#include "core/scalar.hpp"

namespace carrier {

template <class T>
struct Kahan {
  using Scalar = T;
  using Input = T;
  using Result = T;
  struct State {
    T s;
    T c;
    T live;  // 0: the empty segment; 1: at least one input
    auto Tie() const { return std::tie(s, c, live); }
  };
  static constexpr const char* kName = "kahan";
  static constexpr bool kCommutative = true;
  static constexpr bool kBitwiseCommutative = false;
  static constexpr bool kPushIsCombineLift = true;
  static constexpr bool kHasPadInput = false;

  CARRIER_HD static State Identity() {
    return {ScalarTraits<T>::Zero(), ScalarTraits<T>::Zero(), ScalarTraits<T>::Zero()};
  }
  CARRIER_HD static State Lift(const Input& x) {
    return {x, ScalarTraits<T>::Zero(), ScalarTraits<T>::One()};
  }
  CARRIER_HD static State Combine(const State& a, const State& b) {
    if (b.live == ScalarTraits<T>::Zero()) return a;
    if (a.live == ScalarTraits<T>::Zero()) return b;
    const T y = b.s - a.c;
    const T t = a.s + y;
    if (!ScalarTraits<T>::IsFinite(t)) return {t, ScalarTraits<T>::Zero(), ScalarTraits<T>::One()};
    return {t, ((t - a.s) - y) + b.c, ScalarTraits<T>::One()};
  }
  CARRIER_HD static Result Finalize(const State& st) { return st.s; }
  static std::array<T, 1> Components(const Result& r) { return {r}; }
};

}  // namespace carrier
