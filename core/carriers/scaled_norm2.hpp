// core/carriers/scaled_norm2.hpp: ScaledNorm2<T>, the Euclidean norm without overflow or
// harmful underflow, as the reference BLAS dnrm2/snrm2 shipped with LAPACK before 3.10
// (Hammarling's one-pass scaling; 3.10 moved to Blue's algorithm, after Anderson, "Algorithm
// 978: Safe scaling in the Level 1 BLAS", ACM TOMS 44(1), 2017).
//
// State      (scale, ssq), representing the sum of squares scale^2 * ssq; scale is the
//            largest |x_i| so far, so 1 <= ssq <= n for a non-empty state. Empty: (0, 0).
// Formulas   Identity = (+0, +0).
//            Lift(x): a = |x|; a == 0 -> Identity; a NaN -> (NaN, NaN); otherwise (a, 1).
//            Combine(a, b), in this order:
//              a.scale or b.scale NaN -> (NaN, NaN);
//              b.scale == 0 -> a;  a.scale == 0 -> b;
//              a.scale >= b.scale: r = (b.scale == a.scale) ? 1 : b.scale / a.scale;
//                                  (a.scale, a.ssq + b.ssq * (r * r));
//              otherwise:          r = a.scale / b.scale;
//                                  (b.scale, b.ssq + a.ssq * (r * r)).
//            Push(s, x) = Combine(s, Lift(x)), literally; with b = (|x|, 1) it is LAPACK's
//            loop body (ssq + (|x|/scale)^2, or 1 + ssq * (scale/|x|)^2 when |x| > scale),
//            since 1 * (r * r) == r * r.
//            Finalize(s) = scale * Sqrt(ssq).
// Special    NaN in -> NaN (even beside an inf); any inf (no NaN) -> +inf: inf / inf never
//            occurs, since equal scales take r = 1 and a finite scale over inf gives r = 0;
//            empty or all zeros -> +0. Finite inputs never overflow before Finalize, whose
//            product overflows only when the norm itself does.
// Bound      Each term x_i^2 reaches ssq through at most D combines (D the max leaf depth);
//            per combine it picks up at most five relative roundings (r twice through r * r,
//            the square, the product with ssq, the sum), and the final scale * Sqrt(ssq) two
//            more. All terms are non-negative, so in the standard model (Higham, ASNA 2nd ed.,
//            Lemma 3.1 for the products of (1 + delta), Sec. 4.2 for sums of non-negative
//            terms; derived here, the reference BLAS ships no bound):
//              |norm_hat - norm| <= ((1 + u)^2 sqrt(1 + gamma_{5D} + 4 N eta) - 1) norm
//                                   + eta / 2,
//            about (5D/2 + 2) u relative, with N the number of combines and eta the smallest
//            positive subnormal: each gradual underflow in r, r * r or ssq * r^2 loses at most
//            eta against ssq >= 1, so underflow inside the state is harmless; the eta / 2 is
//            the final product's rounding when the norm itself is subnormal.
// Properties Commutative and bitwise commutative: swapping a and b swaps the two branches,
//            which compute the same expressions (same ratio, same sum with its operands in
//            the same roles), and on equal scales r = 1 and the sum a.ssq + b.ssq commutes.
//            Push == Combine(s, Lift(x)) by definition. PadInput = +0: it lifts to the
//            identity, which the b.scale == 0 rule returns unchanged.
// Assumes    no FMA contraction; round to nearest; Sqrt correctly rounded (IEEE sqrt).
#pragma once

#include <array>
#include <tuple>

#include "core/platform.hpp"
#include "core/scalar.hpp"

namespace carrier {

template <class T>
struct ScaledNorm2 {
  using Scalar = T;
  using Input = T;
  using Result = T;
  struct State {
    T scale;
    T ssq;
    auto Tie() const { return std::tie(scale, ssq); }
  };
  static constexpr const char* kName = "norm2";
  static constexpr bool kCommutative = true;
  static constexpr bool kBitwiseCommutative = true;
  static constexpr bool kPushIsCombineLift = true;
  static constexpr bool kHasPadInput = true;

  CARRIER_HD static State Identity() { return {ScalarTraits<T>::Zero(), ScalarTraits<T>::Zero()}; }
  CARRIER_HD static State Lift(const Input& x) {
    T a = ScalarTraits<T>::Abs(x);
    if (a == ScalarTraits<T>::Zero()) return Identity();
    if (ScalarTraits<T>::IsNaN(a)) return {a, a};
    return {a, ScalarTraits<T>::One()};
  }
  CARRIER_HD static State Combine(const State& a, const State& b) {
    if (ScalarTraits<T>::IsNaN(a.scale) || ScalarTraits<T>::IsNaN(b.scale))
      return {ScalarTraits<T>::QuietNaN(), ScalarTraits<T>::QuietNaN()};
    if (b.scale == ScalarTraits<T>::Zero()) return a;
    if (a.scale == ScalarTraits<T>::Zero()) return b;
    if (a.scale >= b.scale) {
      T r = (b.scale == a.scale) ? ScalarTraits<T>::One() : b.scale / a.scale;
      return {a.scale, a.ssq + b.ssq * (r * r)};
    }
    T r = a.scale / b.scale;
    return {b.scale, b.ssq + a.ssq * (r * r)};
  }
  CARRIER_HD static State Push(const State& s, const Input& x) { return Combine(s, Lift(x)); }
  CARRIER_HD static Result Finalize(const State& s) {
    return s.scale * ScalarTraits<T>::Sqrt(s.ssq);
  }
  CARRIER_HD static Input PadInput() { return ScalarTraits<T>::Zero(); }
  static std::array<T, 1> Components(const Result& r) { return {r}; }
};

}  // namespace carrier
