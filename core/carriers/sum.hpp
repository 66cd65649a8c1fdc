// core/carriers/sum.hpp: Sum<T>, plain floating-point summation.
//
// State      s (the partial sum).
// Formulas   Identity = +0; Lift(x) = x; Combine(a, b) = a + b (one rounding); Push(s, x) =
//            s + x; Finalize(s) = s.
// Special    NaN in -> NaN; +inf and -inf both present -> NaN; otherwise any inf -> that inf;
//            empty -> +0. Finite inputs may overflow to +-inf.
// Bound      For a merge tree in which input x_i passes through d_i rounded additions
//            (its leaf depth), |s_hat - s| <= sum_i gamma_{d_i} |x_i| <= gamma_D sum |x_i|
//            with D the tree's max leaf depth and gamma_k = k u / (1 - k u) (Higham, ASNA 2nd
//            ed., eq. (4.3) and Sec. 4.2). seq: D = n - 1; pairwise: D = ceil(log2 n);
//            blocked:b with pairwise outer: D = b - 1 + ceil(log2(n / b)) (FABsum, BHM 2020).
// Properties Commutative and bitwise commutative (IEEE addition is). Push == Combine(s, Lift).
//            PadInput = -0, since s + (-0) == s bitwise for every s, signed zeros included
//            (+0 would turn a -0 partial sum into +0).
// Assumes    no FMA contraction (-ffp-contract=off), round-to-nearest in the scalar type.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>

#include "core/platform.hpp"
#include "core/scalar.hpp"

namespace carrier {

template <class T>
struct Sum {
  using Scalar = T;
  using Input = T;
  using Result = T;
  struct State {
    T s;
    auto Tie() const { return std::tie(s); }
  };
  static constexpr const char* kName = "sum";
  static constexpr bool kCommutative = true;
  static constexpr bool kBitwiseCommutative = true;
  static constexpr bool kPushIsCombineLift = true;
  static constexpr bool kHasPadInput = true;

  CARRIER_HD static State Identity() { return {ScalarTraits<T>::Zero()}; }
  CARRIER_HD static State Lift(const Input& x) { return {x}; }
  CARRIER_HD static State Combine(const State& a, const State& b) { return {a.s + b.s}; }
  CARRIER_HD static State Push(const State& a, const Input& x) { return {a.s + x}; }
  CARRIER_HD static Result Finalize(const State& a) { return a.s; }
  CARRIER_HD static Input PadInput() { return ScalarTraits<T>::NegZero(); }
  static std::array<T, 1> Components(const Result& r) { return {r}; }

  // Independent combines in a batch (FastReplay's levels): out[k] = Combine(A[ia[k]],
  // B[ib[k]]) for k < n, bit for bit; vectorised where GatheredAdd<T> has a vector form
  // (kCombineGatheredVector), the plain loop otherwise.
  static constexpr bool kCombineGatheredVector = GatheredAdd<T>::kVector;
  static void CombineGathered(const State* A, const std::uint32_t* ia, const State* B,
                              const std::uint32_t* ib, State* out, std::size_t n) {
    if constexpr (kCombineGatheredVector) {
      static_assert(sizeof(State) == sizeof(T) && std::is_standard_layout_v<State>,
                    "a State array must be an array of T");
      GatheredAdd<T>::Run(&A->s, ia, &B->s, ib, &out->s, n);
    } else {
      for (std::size_t k = 0; k < n; ++k) out[k] = Combine(A[ia[k]], B[ib[k]]);
    }
  }
  // out[k] = Combine(s[k], s[k + 1]) for k < n (a random:S region's adjacent leaves); cheaper
  // as one contiguous pass than the tree's pairs one by one where T's additions are.
  static constexpr bool kCombineAdjacentCheap =
      kCombineGatheredVector || std::is_floating_point_v<T>;
  static void CombineAdjacent(const State* s, State* out, std::size_t n) {
    if constexpr (kCombineGatheredVector) {
      GatheredAdd<T>::Adjacent(&s->s, &out->s, n);
    } else {
      for (std::size_t k = 0; k < n; ++k) out[k] = Combine(s[k], s[k + 1]);
    }
  }
  // out[k] = Push(Identity(), x[k]) for k < n: the leaves of a tree, in a batch.
  static void FirstPushes(const Input* x, State* out, std::size_t n) {
    if constexpr (kCombineGatheredVector) {
      GatheredAdd<T>::FromZero(x, &out->s, n);
    } else {
      for (std::size_t k = 0; k < n; ++k) out[k] = Push(Identity(), x[k]);
    }
  }
};

}  // namespace carrier
