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

  // Batches for the fast replay's levels (core/replay.hpp), through GatheredAdd<T>
  // (core/scalar.hpp: T's own additions, as Combine and Push make them, vectorised where T has
  // a vector form): CombineGathered sets out[k] = Combine(A[ia[k]], B[ib[k]]), CombineAdjacent
  // out[k] = Combine(s[k], s[k + 1]) and FirstPushes out[k] = Push(Identity(), x[k]), k < n.
  // kCombineGatheredVector: the batches are vectorised. kCombineAdjacentCheap: every adjacent
  // pair of a random:S region in one pass costs less than the tree's pairs one by one.
  static constexpr bool kCombineGatheredVector = GatheredAdd<T>::kVector;
  static constexpr bool kCombineAdjacentCheap =
      kCombineGatheredVector || std::is_floating_point_v<T>;
  static void CombineGathered(const State* A, const std::uint32_t* ia, const State* B,
                              const std::uint32_t* ib, State* out, std::size_t n) {
    GatheredAdd<T>::Run(Scalars(A), ia, Scalars(B), ib, Scalars(out), n);
  }
  static void CombineAdjacent(const State* s, State* out, std::size_t n) {
    GatheredAdd<T>::Adjacent(Scalars(s), Scalars(out), n);
  }
  static void FirstPushes(const Input* x, State* out, std::size_t n) {
    GatheredAdd<T>::FromZero(x, Scalars(out), n);
  }
  // Push chains: for j < count, for w < lanes, acc[w] = Push(acc[w], x[first[w] + j stride]).
  // kPushChainsBatched: GatheredAdd<T> has a faster form than one Push at a time.
  static constexpr bool kPushChainsBatched = GatheredAdd<T>::kVector;
  static void PushChains(State* acc, const Input* x, const std::uint64_t* first, std::size_t lanes,
                         std::uint64_t count, std::uint64_t stride) {
    GatheredAdd<T>::Chains(Scalars(acc), x, first, lanes, count, stride);
  }

 private:
  // A State array read as the array of its sums.
  template <class S>
  static auto* Scalars(S* s) {
    static_assert(sizeof(State) == sizeof(T) && std::is_standard_layout_v<State>,
                  "the batches read a State array as an array of T");
    return &s->s;
  }
};

}  // namespace carrier
