// core/carriers/online_softmax.hpp: OnlineSoftmax<T, Exp>, the (max, rescaled sum) state of
// online softmax and log-sum-exp (Milakov & Gimelshein 2018).
//
// State      (m, d): m the largest element, d = sum_i exp(x_i - m) as computed; it represents
//            d * e^m = sum_i e^{x_i}. Empty: (-inf, 0).
// Formulas   Identity = (-inf, +0).
//            Lift(x): x NaN -> (NaN, NaN); x == -inf -> Identity; otherwise (x, 1).
//            Combine(a, b):
//              a.m or b.m NaN -> (NaN, NaN);
//              M = Max<T>::Of(a.m, b.m)   (+0 above -0, so the choice is order-free);
//              M == -inf -> Identity;
//              da = (a.m == M) ? a.d : a.d * Exp(a.m - M);   db likewise;
//              return (M, da + db).
//            Push(s, x) = Combine(s, Lift(x)), literally.
//            LiftTile(x, n): m = Max<T>::Of over the tile in order (from -inf); m NaN ->
//              (NaN, NaN); m == -inf (or n == 0) -> Identity; then d = +0 and, for i = 0..n-1
//              in order, d = d + ((x_i == m) ? 1 : Exp(x_i - m)). One exp per element and no
//              rescale inside the tile, as fast kernels do.
//            Finalize(s) = {m, d, lse}: m NaN -> lse NaN; m == -inf -> -inf; m == +inf ->
//              +inf; otherwise lse = m + Log(d).
//            SoftmaxOutput(x, s, policy) = ((x == s.m) ? 1 : Exp(x - s.m)) / s.d, with s the
//              whole row's state; NaN x or NaN s.m -> NaN; s.m == -inf (an empty or all -inf
//              row) -> NaN under kNaN (the default) and 0 under kZeros (FlashAttention's
//              convention for fully masked rows).
// Special    NaN in -> lse NaN; empty -> lse -inf; all -inf -> lse -inf, never NaN: -inf
//            elements lift to the identity, so -inf - -inf is never evaluated; any +inf (and
//            no NaN) -> lse +inf: the == M guard gives the +inf terms factor 1, not
//            exp(inf - inf), and every finite term is scaled by exp(-inf) = 0. Softmax of a
//            row with +inf elements is 1/k on each of its k +inf elements, 0 elsewhere.
// Bound      (first order; derived in the model of Blanchard, Higham & Higham, "Accurately
//            computing the log-sum-exp and softmax functions", IMA J. Numer. Anal. 41(4),
//            2021, Sec. 3, generalised from the two-pass shifted algorithm to a merge tree.)
//            Let D be the max number of combines (rescale and addition) a term passes
//            through, a tile's sequential additions included, u_e the relative error of Exp
//            and w_i = e^{x_i - M} / sum_j e^{x_j - M} the softmax weights. The rounded
//            arguments fl(a.m - M) along one term's path have magnitudes summing to at most
//            M - x_i (the maxima only grow), so
//              |d_hat - d| / d <= rho := D (2u + u_e) + u (M - sum_i w_i x_i),
//              |lse_hat - lse| <= u |lse| + (1 + u)(rho + u_l |log d|)     (u_l: Log's error).
//            For libm in float/double u_e, u_l <= 2u (one ulp). Each softmax output
//            SoftmaxOutput(x_i, s) then has relative error <= rho + u_e + u (M - x_i) + 2u.
//            The tests assert twice these first-order figures and print the measured ratio.
// Properties Commutative and bitwise commutative: M does not depend on operand order (Of),
//            and da + db is a commutative addition. Push == Combine(s, Lift(x)) by
//            definition. PadInput = -inf: it lifts to the identity, and Combine(s, Identity)
//            is s bitwise (db = 0 * exp(-inf - M) = 0, and d + 0 = d since d is never -0).
//            The == M guard is bit-neutral on finite inputs (it replaces exp(+0) = 1 by 1).
// Transport  phi(m, d) = (m, d e^m) maps this twisted combine onto the plain (max, +) monoid,
//            which is why the max-rescale coupling keeps it associative; the fp version of the
//            transported monoid overflows where (m, d) does not. Derivation and tests:
//            core/derivations/online_softmax.hpp, tests/precision/test_transport.cpp.
// Assumes    no FMA contraction; Exp(0) == 1 and Exp(-inf) == 0 exactly; Exp and Log are the
//            policy's functions, identical on every path that must agree bit for bit.
#pragma once

#include <array>
#include <cstddef>
#include <tuple>

#include "core/carriers/max.hpp"
#include "core/exp_policy.hpp"
#include "core/platform.hpp"
#include "core/scalar.hpp"

namespace carrier {

// What the softmax of an empty or all -inf row is: NaN (0/0, the default) or all zeros (the
// FlashAttention convention for fully masked rows).
enum class SoftmaxEmptyRow { kNaN, kZeros };

template <class T, class Exp = LibmExp>
struct OnlineSoftmax {
  using Scalar = T;
  using Input = T;
  struct State {
    T m;
    T d;
    auto Tie() const { return std::tie(m, d); }
  };
  struct Result {
    T m;
    T d;
    T lse;
  };
  static constexpr const char* kName = "lse";
  static constexpr bool kCommutative = true;
  static constexpr bool kBitwiseCommutative = true;
  static constexpr bool kPushIsCombineLift = true;
  static constexpr bool kHasPadInput = true;

  CARRIER_HD static State Identity() {
    return {-ScalarTraits<T>::Infinity(), ScalarTraits<T>::Zero()};
  }
  CARRIER_HD static State NaNState() {
    return {ScalarTraits<T>::QuietNaN(), ScalarTraits<T>::QuietNaN()};
  }
  CARRIER_HD static State Lift(const Input& x) {
    if (ScalarTraits<T>::IsNaN(x)) return NaNState();
    if (x == -ScalarTraits<T>::Infinity()) return Identity();
    return {x, ScalarTraits<T>::One()};
  }
  CARRIER_HD static State Combine(const State& a, const State& b) {
    if (ScalarTraits<T>::IsNaN(a.m) || ScalarTraits<T>::IsNaN(b.m)) return NaNState();
    T big = Max<T>::Of(a.m, b.m);
    if (big == -ScalarTraits<T>::Infinity()) return Identity();
    T da = (a.m == big) ? a.d : a.d * Exp::Exp(a.m - big);
    T db = (b.m == big) ? b.d : b.d * Exp::Exp(b.m - big);
    return {big, da + db};
  }
  CARRIER_HD static State Push(const State& s, const Input& x) { return Combine(s, Lift(x)); }
  CARRIER_HD static State LiftTile(const Input* x, std::size_t n) {
    T big = -ScalarTraits<T>::Infinity();
    for (std::size_t i = 0; i < n; ++i) big = Max<T>::Of(big, x[i]);
    if (ScalarTraits<T>::IsNaN(big)) return NaNState();
    if (big == -ScalarTraits<T>::Infinity()) return Identity();
    T d = ScalarTraits<T>::Zero();
    for (std::size_t i = 0; i < n; ++i)
      d = d + ((x[i] == big) ? ScalarTraits<T>::One() : Exp::Exp(x[i] - big));
    return {big, d};
  }
  CARRIER_HD static Result Finalize(const State& s) {
    if (ScalarTraits<T>::IsNaN(s.m)) return {s.m, s.d, ScalarTraits<T>::QuietNaN()};
    if (ScalarTraits<T>::IsInf(s.m)) return {s.m, s.d, s.m};
    return {s.m, s.d, s.m + Exp::Log(s.d)};
  }
  CARRIER_HD static Input PadInput() { return -ScalarTraits<T>::Infinity(); }
  // One softmax output: x's weight in the row whose (whole) state is s.
  CARRIER_HD static T SoftmaxOutput(T x, const State& s,
                                    SoftmaxEmptyRow policy = SoftmaxEmptyRow::kNaN) {
    if (ScalarTraits<T>::IsNaN(x) || ScalarTraits<T>::IsNaN(s.m))
      return ScalarTraits<T>::QuietNaN();
    if (s.m == -ScalarTraits<T>::Infinity())
      return policy == SoftmaxEmptyRow::kZeros ? ScalarTraits<T>::Zero()
                                               : ScalarTraits<T>::QuietNaN();
    T numerator = (x == s.m) ? ScalarTraits<T>::One() : Exp::Exp(x - s.m);
    return numerator / s.d;
  }
  static std::array<T, 1> Components(const Result& r) { return {r.lse}; }
};

}  // namespace carrier
