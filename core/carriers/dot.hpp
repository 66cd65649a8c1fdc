// core/carriers/dot.hpp: Dot<T>, the plain dot product sum_i a_i * b_i.
//
// State      s (the partial sum of products).
// Formulas   Identity = +0; Lift(p) = p.a * p.b; Push(s, p) = s + (p.a * p.b) (two roundings:
//            the product, then the sum; never an FMA); Combine(a, b) = a.s + b.s;
//            Finalize(s) = s.
// Special    NaN in either factor -> NaN; inf * 0 -> NaN; +inf and -inf products together ->
//            NaN; otherwise any infinite product -> that inf; empty -> +0.
// Bound      With D the tree's max leaf depth (additions an input's product passes through):
//              |s_hat - s| <= gamma_{D+1} sum_i |a_i b_i|
//            (Higham, ASNA 2nd ed., Sec. 3.1, eq. (3.5) for the sequential order, D = n - 1
//            plus the exact first addition to +0; the tree form follows as for Sum, eq. (4.3)).
// Properties Commutative and bitwise commutative (IEEE addition is). Push == Combine(s,
//            Lift(p)): both round the product once and then add it. PadInput = (-0, +0):
//            (-0) * (+0) = -0, and s + (-0) == s bitwise for every s, signed zeros included.
// Fused      FusedChain(s, p, m, stride, node) (T = float or double only): s, then the m
//            products p[0], p[stride], ... in groups of node.terms, each group one matrix-unit
//            step by node's rule (core/mma.hpp MmaFusedChain: exact products, aligned and cut
//            to F bits, summed exactly, one rounding to the node's output); what mma:
//            schedules replay. Every value is exact in T.
// Assumes    no FMA contraction (-ffp-contract=off; a contracted a*b + s rounds once and
//            breaks the replay), round to nearest.
#pragma once

#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>

#include "core/carriers/pairs.hpp"
#include "core/mma.hpp"
#include "core/platform.hpp"
#include "core/scalar.hpp"

namespace carrier {

template <class T>
struct Dot {
  using Scalar = T;
  using Input = ValuePair<T>;
  using Result = T;
  struct State {
    T s;
    auto Tie() const { return std::tie(s); }
  };
  static constexpr const char* kName = "dot";
  static constexpr bool kCommutative = true;
  static constexpr bool kBitwiseCommutative = true;
  static constexpr bool kPushIsCombineLift = true;
  static constexpr bool kHasPadInput = true;

  CARRIER_HD static State Identity() { return {ScalarTraits<T>::Zero()}; }
  CARRIER_HD static State Lift(const Input& p) { return {p.a * p.b}; }
  CARRIER_HD static State Combine(const State& a, const State& b) { return {a.s + b.s}; }
  CARRIER_HD static State Push(const State& st, const Input& p) {
    T product = p.a * p.b;
    return {st.s + product};
  }
  CARRIER_HD static Result Finalize(const State& st) { return st.s; }
  CARRIER_HD static Input PadInput() {
    return {ScalarTraits<T>::NegZero(), ScalarTraits<T>::Zero()};
  }
  static std::array<T, 1> Components(const Result& r) { return {r}; }
  // Host only (core/mma.hpp's integer arithmetic); declared for float and double, whose
  // values hold every output of the fused node exactly.
  static State FusedChain(const State& st, const Input* p, std::size_t m, std::size_t stride,
                          const MmaNode& node) requires(std::is_same_v<T, float> ||
                                                        std::is_same_v<T, double>) {
    return {static_cast<T>(MmaFusedChain(node, static_cast<double>(st.s), p, m, stride))};
  }
};

}  // namespace carrier
