// core/carriers/flash_row.hpp: FlashRow<T, Dv, Variant, Exp>, one query row of attention,
// softmax(scores) @ V, as FlashAttention carries it: (running max, running sum, output row).
//
// State      (m, l, o[Dv]): m the largest score, l = sum_i exp(s_i - m) as computed, o the
//            output accumulator: FA2 keeps it unnormalised (o = sum_i exp(s_i - m) v_i, Dao
//            2023, "FlashAttention-2", Alg. 1), FA1 normalised after every combine (o =
//            sum_i exp(s_i - m) v_i / l, Dao et al. 2022, "FlashAttention", Alg. 1).
//            Empty: (-inf, 0, 0...).
// Formulas   Identity = (-inf, +0, +0...); NaN state = all fields NaN.
//            Lift(x): x.score NaN -> NaN state; x.score == -inf -> Identity (v is not read: a
//              masked position contributes nothing); otherwise (x.score, 1, x.v[0..Dv)).
//            Combine(a, b):
//              a.m or b.m NaN -> NaN state;
//              M = Max<T>::Of(a.m, b.m);  M == -inf -> Identity;
//              sa = (a.m == M) ? 1 : Exp(a.m - M);  sb likewise;
//              FA2: l = a.l * sa + b.l * sb;  o[j] = a.o[j] * sa + b.o[j] * sb;
//              FA1: la = a.l * sa; lb = b.l * sb; l = la + lb;
//                   o[j] = (la * a.o[j] + lb * b.o[j]) / l.
//            Push(s, x) = Combine(s, Lift(x)), literally.
//            LiftTile(x, n): M = Max<T>::Of over the scores in order (from -inf); M NaN -> NaN
//              state; M == -inf (or n == 0) -> Identity; l = +0, o = +0...; for i = 0..n-1 in
//              order, skipping scores equal to -inf (as Lift does; their v is not read):
//              p = (s_i == M) ? 1 : Exp(s_i - M); l = l + p; o[j] = o[j] + p * v_i[j].
//              FA1 then divides: o[j] = o[j] / l (once per tile).
//            Finalize(s, policy): m NaN -> all NaN; m == -inf (empty or fully masked row) ->
//              all NaN under SoftmaxEmptyRow::kNaN (the default: 0/0), all +0 under kZeros
//              (FlashAttention's convention); otherwise FA2: o[j] / l; FA1: o[j].
// Special    NaN score -> all NaN; NaN (or inf) in the v of an unmasked position -> NaN (or
//            inf) through IEEE arithmetic; a masked position's v is ignored on every path.
//            Any +inf score (no NaN): the output is the mean of the v rows whose score is
//            +inf (the == M guard gives them weight 1, every finite score exp(-inf) = 0).
//            Empty or all -inf: NaN by default, zeros with kZeros.
// Bound      (stated tolerance, first order, derived as for OnlineSoftmax; FlashAttention's
//            papers give none.) With w_i the softmax weights, D the max number of combines
//            a term passes through (a tile's additions included) and u_e Exp's error:
//            FA2:  |o_hat_j - o_j| <= u |o_j| + sum_i w_i (|v_ij| + |o_j|) (D (2u + u_e) + u
//                  + u (M - s_i)),
//            FA1 the same with 6u + u_e per combine (three more roundings and a division).
//            The tests assert twice this first-order figure and print the measured ratio.
// Properties Commutative and bitwise commutative: M is order-free (Of), and every formula is
//            symmetric under a <-> b with + and * commuting (FA1's la * a.o + lb * b.o as
//            well). Push == Combine(s, Lift(x)) by definition. No pad input: Combine(s,
//            Identity) adds +0 to each o[j] (turning -0 into +0) under FA2 and renormalises
//            o (la * o / la) under FA1, so the identity is not bitwise neutral.
// Assumes    no FMA contraction; Exp(0) == 1 and Exp(-inf) == 0 exactly; v points to Dv
//            readable values for every unmasked input.
#pragma once

#include <array>
#include <cstddef>
#include <tuple>

#include "core/carriers/max.hpp"
#include "core/carriers/online_softmax.hpp"
#include "core/exp_policy.hpp"
#include "core/platform.hpp"
#include "core/scalar.hpp"

namespace carrier {

// FA2 defers normalisation to Finalize; FA1 renormalises o at every combine.
enum class FlashVariant { kFA2, kFA1 };

template <class T>
struct FlashInput {
  T score;
  const T* v;  // Dv values; not read when score == -inf
};

template <class T, std::size_t Dv, FlashVariant Variant = FlashVariant::kFA2, class Exp = LibmExp>
struct FlashRow {
  static_assert(Dv > 0, "FlashRow needs at least one value column");
  using Scalar = T;
  using Input = FlashInput<T>;
  struct State {
    T m;
    T l;
    T o[Dv];
    auto Tie() const { return std::tie(m, l, o); }
  };
  struct Result {
    T o[Dv];
  };
  static constexpr const char* kName =
      Variant == FlashVariant::kFA2 ? "attention" : "attention_fa1";
  static constexpr FlashVariant kVariant = Variant;
  static constexpr std::size_t kDv = Dv;
  static constexpr bool kCommutative = true;
  static constexpr bool kBitwiseCommutative = true;
  static constexpr bool kPushIsCombineLift = true;
  static constexpr bool kHasPadInput = false;

  CARRIER_HD static State Identity() {
    State s;
    s.m = -ScalarTraits<T>::Infinity();
    s.l = ScalarTraits<T>::Zero();
    for (std::size_t j = 0; j < Dv; ++j) s.o[j] = ScalarTraits<T>::Zero();
    return s;
  }
  CARRIER_HD static State NaNState() {
    State s;
    s.m = ScalarTraits<T>::QuietNaN();
    s.l = s.m;
    for (std::size_t j = 0; j < Dv; ++j) s.o[j] = s.m;
    return s;
  }
  CARRIER_HD static State Lift(const Input& x) {
    if (ScalarTraits<T>::IsNaN(x.score)) return NaNState();
    if (x.score == -ScalarTraits<T>::Infinity()) return Identity();
    State s;
    s.m = x.score;
    s.l = ScalarTraits<T>::One();
    for (std::size_t j = 0; j < Dv; ++j) s.o[j] = x.v[j];
    return s;
  }
  CARRIER_HD static State Combine(const State& a, const State& b) {
    if (ScalarTraits<T>::IsNaN(a.m) || ScalarTraits<T>::IsNaN(b.m)) return NaNState();
    const T big = Max<T>::Of(a.m, b.m);
    if (big == -ScalarTraits<T>::Infinity()) return Identity();
    const T sa = (a.m == big) ? ScalarTraits<T>::One() : Exp::Exp(a.m - big);
    const T sb = (b.m == big) ? ScalarTraits<T>::One() : Exp::Exp(b.m - big);
    State r;
    r.m = big;
    if constexpr (Variant == FlashVariant::kFA2) {
      r.l = a.l * sa + b.l * sb;
      for (std::size_t j = 0; j < Dv; ++j) r.o[j] = a.o[j] * sa + b.o[j] * sb;
    } else {
      const T la = a.l * sa;
      const T lb = b.l * sb;
      r.l = la + lb;
      for (std::size_t j = 0; j < Dv; ++j) r.o[j] = (la * a.o[j] + lb * b.o[j]) / r.l;
    }
    return r;
  }
  CARRIER_HD static State Push(const State& s, const Input& x) { return Combine(s, Lift(x)); }
  CARRIER_HD static State LiftTile(const Input* x, std::size_t n) {
    T big = -ScalarTraits<T>::Infinity();
    for (std::size_t i = 0; i < n; ++i) big = Max<T>::Of(big, x[i].score);
    if (ScalarTraits<T>::IsNaN(big)) return NaNState();
    if (big == -ScalarTraits<T>::Infinity()) return Identity();
    State r = Identity();
    r.m = big;
    for (std::size_t i = 0; i < n; ++i) {
      if (x[i].score == -ScalarTraits<T>::Infinity()) continue;
      const T p = (x[i].score == big) ? ScalarTraits<T>::One() : Exp::Exp(x[i].score - big);
      r.l = r.l + p;
      for (std::size_t j = 0; j < Dv; ++j) r.o[j] = r.o[j] + p * x[i].v[j];
    }
    if constexpr (Variant == FlashVariant::kFA1) {
      for (std::size_t j = 0; j < Dv; ++j) r.o[j] = r.o[j] / r.l;
    }
    return r;
  }
  CARRIER_HD static Result Finalize(const State& s, SoftmaxEmptyRow policy) {
    Result r;
    if (ScalarTraits<T>::IsNaN(s.m)) {
      for (std::size_t j = 0; j < Dv; ++j) r.o[j] = ScalarTraits<T>::QuietNaN();
    } else if (s.m == -ScalarTraits<T>::Infinity()) {
      const T empty =
          policy == SoftmaxEmptyRow::kZeros ? ScalarTraits<T>::Zero() : ScalarTraits<T>::QuietNaN();
      for (std::size_t j = 0; j < Dv; ++j) r.o[j] = empty;
    } else if constexpr (Variant == FlashVariant::kFA2) {
      for (std::size_t j = 0; j < Dv; ++j) r.o[j] = s.o[j] / s.l;
    } else {
      for (std::size_t j = 0; j < Dv; ++j) r.o[j] = s.o[j];
    }
    return r;
  }
  CARRIER_HD static Result Finalize(const State& s) { return Finalize(s, SoftmaxEmptyRow::kNaN); }
  static std::array<T, Dv> Components(const Result& r) {
    std::array<T, Dv> out{};
    for (std::size_t j = 0; j < Dv; ++j) out[j] = r.o[j];
    return out;
  }
};

}  // namespace carrier
