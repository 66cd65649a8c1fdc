// core/carriers/fab_compensated.hpp: FabCompensated<T>, FABsum with a compensated accurate sum
// (Blanchard, Higham and Mary, SISC 2020): the fast sum inside each chain is plain recursive
// summation, the accurate sum of the chain results is Knuth's TwoSum with the errors carried,
// all in one precision T. The CLI's `fabsum-comp`; with `blocked:b` (tiles are chains, tile sums
// combined sequentially) it is the paper's FABsum with FastSum = recursive and AccurateSum =
// compensated summation.
//
// State      (s, c): s the plain partial sum, c the running sum of the combines' rounding errors.
// Formulas   Identity = (+0, +0); Lift(x) = (x, +0); Finalize = IsFinite(s) ? s + c : s.
//            Push(st, x) = (st.s + x, st.c): one rounding, no error term (the fast sum).
//            Combine(a, b) = Compensated<T>::Combine (core/carriers/compensated.hpp): TwoSum of
//              a.s and b.s, its exact error added to a.c + b.c.
// Special    as Compensated<T>: a non-finite s stops the compensation and is returned as is.
// Bound      Every chain of L inputs contributes its plain error (<= (L - 1) u times its sum|x|);
//            the combines are error-free transformations into c, which Neumaier's analysis
//            bounds by 2 D^2 u^2 sum|x| to first order over a depth-D tree of combines; the final
//            s + c adds u|S|. So |result - S| <= ((L - 1) u + u + 2 D^2 u^2) sum|x| to first order
//            with L the longest chain, FABsum's (b - 1) u + O(u^2) form for blocked:b. The op
//            declares no bound: BoundContext knows D but not L (papers/fabsum2020 computes it).
// Properties Commutative and bitwise commutative (Push's addition and Compensated's Combine
//            are). Push is NOT Combine(s, Lift(x)) (that would compensate every input, which is
//            the op `neumaier`): kPushIsCombineLift = false, so kernels must not mix the two.
//            PadInput = -0: s + (-0) = s bitwise and c is unchanged.
// Assumes    no FMA contraction (-ffp-contract=off), round-to-nearest, no -ffast-math.
#pragma once

#include <array>
#include <tuple>

#include "core/carriers/compensated.hpp"
#include "core/platform.hpp"
#include "core/scalar.hpp"

namespace carrier {

template <class T>
struct FabCompensated {
  using Scalar = T;
  using Input = T;
  using Result = T;
  using State = typename Compensated<T>::State;
  static constexpr const char* kName = "fabsum-comp";
  static constexpr bool kCommutative = true;
  static constexpr bool kBitwiseCommutative = true;
  static constexpr bool kPushIsCombineLift = false;
  static constexpr bool kHasPadInput = true;

  CARRIER_HD static State Identity() { return Compensated<T>::Identity(); }
  CARRIER_HD static State Lift(const Input& x) { return Compensated<T>::Lift(x); }
  CARRIER_HD static State Push(const State& st, const Input& x) { return {st.s + x, st.c}; }
  CARRIER_HD static State Combine(const State& a, const State& b) {
    return Compensated<T>::Combine(a, b);
  }
  CARRIER_HD static Result Finalize(const State& a) { return Compensated<T>::Finalize(a); }
  CARRIER_HD static Input PadInput() { return ScalarTraits<T>::NegZero(); }
  static std::array<T, 1> Components(const Result& r) { return {r}; }
};

}  // namespace carrier
