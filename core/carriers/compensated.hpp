// core/carriers/compensated.hpp: Compensated<T>, Kahan-Babuska-Neumaier compensated summation
// (the CLI's `neumaier`; before the op table it was called `kahan`, which is now Kahan's
// original algorithm, core/carriers/kahan.hpp). Neumaier<T> names it too.
//
// State      (s, c): s the plain partial sum, c the running sum of the rounding errors of s.
// Formulas   Identity = (+0, +0); Lift(x) = (x, +0); Finalize = IsFinite(s) ? s + c : s.
//            Push(st, x) (Neumaier 1974; Fast2Sum on the larger-magnitude operand first):
//              t = st.s + x;
//              if t is not finite: return (t, st.c);
//              err = (|st.s| >= |x|) ? ((st.s - t) + x) : ((x - t) + st.s);
//              return (t, st.c + err).
//            Combine(a, b) (Knuth's 6-operation TwoSum, no magnitude test):
//              t = a.s + b.s;  c = a.c + b.c;
//              if t is not finite: return (t, c);
//              bb = t - a.s;  e = (a.s - (t - bb)) + (b.s - bb);
//              return (t, c + e).
// Special    NaN in -> NaN; +inf and -inf -> NaN; otherwise any inf -> that inf; empty -> +0.
//            The guard keeps inf/NaN out of c (an unguarded Fast2Sum would put inf - inf = NaN
//            there), so s carries the special value and Finalize returns it unchanged. A
//            finite sum that overflows also stops there: s = +-inf, result +-inf.
// Bound      s is the plain sum over the same tree, and every node's (t, e) is an error-free
//            transformation, so with exact c the result would be fl(S). With D the tree's max
//            leaf depth, u the unit roundoff and gamma_k = k u / (1 - k u):
//              |result - S| <= u|S| + (1 + u) gamma_{2D-1} (1 + gamma_D) D u sum|x_i|,
//            i.e. u|S| + 2 D^2 u^2 sum|x_i| to first order. Derivation: each node's error e
//            enters c with one addition and then passes two additions per ancestor (<= 2D - 1
//            roundings, Higham ASNA 2nd ed. eq. (4.3) applied to the c tree); sum|e| <= u
//            sum_nodes |a.s + b.s| <= u (1 + gamma_D) D sum|x_i| since each x_i lies under at
//            most D nodes; the final s + c adds u|S|. Sequentially (a fold, D = n) this is the
//            u|S| + O(n^2 u^2) sum|x_i| form of Neumaier's bound (Neumaier 1974; Higham ASNA
//            Sec. 4.3, where Kahan's variant gets (2u + O(n u^2)) sum|x_i|).
// Properties Commutative and bitwise commutative: t, a.c + b.c and the final addition are
//            commutative, and e is the exact error (a + b) - t, a unique number; an exact zero
//            error is always +0 (a sum of two zeros is -0 only if both are -0, which the
//            TwoSum and Fast2Sum expressions never produce), so operand order cannot change
//            its sign either. Push == Combine(s, Lift(x)): Fast2Sum (valid since the larger
//            magnitude goes first) and TwoSum both return the exact error, and the extra
//            "+ Lift(x).c" is c + (+0) = c because c is never -0 in a reachable state (it
//            starts at +0 and only ever adds errors that are never -0).
//            PadInput = -0: t = s + (-0) = s bitwise, err = (s - s) + (-0) = +0, c + 0 = c.
// Assumes    no FMA contraction (-ffp-contract=off), round-to-nearest, no -ffast-math (it
//            would cancel the compensation algebraically).
#pragma once

#include <array>
#include <tuple>

#include "core/platform.hpp"
#include "core/scalar.hpp"

namespace carrier {

template <class T>
struct Compensated {
  using Scalar = T;
  using Input = T;
  using Result = T;
  struct State {
    T s;
    T c;
    auto Tie() const { return std::tie(s, c); }
  };
  static constexpr const char* kName = "neumaier";
  static constexpr bool kCommutative = true;
  static constexpr bool kBitwiseCommutative = true;
  static constexpr bool kPushIsCombineLift = true;
  static constexpr bool kHasPadInput = true;

  CARRIER_HD static State Identity() { return {ScalarTraits<T>::Zero(), ScalarTraits<T>::Zero()}; }
  CARRIER_HD static State Lift(const Input& x) { return {x, ScalarTraits<T>::Zero()}; }
  CARRIER_HD static State Push(const State& st, const Input& x) {
    T t = st.s + x;
    if (!ScalarTraits<T>::IsFinite(t)) return {t, st.c};
    T err = (ScalarTraits<T>::Abs(st.s) >= ScalarTraits<T>::Abs(x)) ? ((st.s - t) + x)
                                                                    : ((x - t) + st.s);
    return {t, st.c + err};
  }
  CARRIER_HD static State Combine(const State& a, const State& b) {
    T t = a.s + b.s;
    T c = a.c + b.c;
    if (!ScalarTraits<T>::IsFinite(t)) return {t, c};
    T bb = t - a.s;
    T e = (a.s - (t - bb)) + (b.s - bb);
    return {t, c + e};
  }
  CARRIER_HD static Result Finalize(const State& a) {
    return ScalarTraits<T>::IsFinite(a.s) ? a.s + a.c : a.s;
  }
  CARRIER_HD static Input PadInput() { return ScalarTraits<T>::NegZero(); }
  static std::array<T, 1> Components(const Result& r) { return {r}; }
};

template <class T>
using Neumaier = Compensated<T>;

}  // namespace carrier
