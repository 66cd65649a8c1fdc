// core/carrier.hpp: the Carrier concept, its declared properties, and the sequential fold.
//
// A carrier is a type with static functions over a small State:
//   Identity()          the state of the empty input;
//   Lift(x)             the state of the one-element input x;
//   Combine(a, b)       the state of the concatenation; `a` is ALWAYS the earlier segment, so
//                       non-commutative carriers (ArgMax, Affine) stay correct in any tree;
//   Finalize(s)         the result;
//   Push(s, x)          optional sequential step; defaults to Combine(s, Lift(x));
//   LiftTile(x, n)      optional: the state of a whole tile computed by a documented inner
//                       algorithm (softmax: tile max, then one exp per element);
//   Components(r)       the result as a fixed-size array of scalars, for metrics and laws;
//   s.Tie()             the state's fields as a tuple, for bitwise comparison and printing.
//
// Declared properties, each verified by tests/core (a `true` must hold on random and special
// inputs; a `false` must be witnessed by a counterexample, so no declaration is merely timid):
//   kCommutative        Combine is commutative in exact arithmetic: trees that permute inputs
//                       (strided:K) are allowed for it;
//   kBitwiseCommutative Combine(a, b) and Combine(b, a) have identical bits, so a GPU may use an
//                       xor butterfly;
//   kPushIsCombineLift  Push(s, x) has the bits of Combine(s, Lift(x)), so a kernel may mix the
//                       two and still equal the replay;
//   kHasPadInput        PadInput() is an input whose Push leaves every reachable state
//                       bit-identical, so SIMD tails may be padded with it.
//
// Signed zeros: every chain of a MergeTree starts from Identity and pushes, so all replays of
// an all -0 input agree (Sum gives +0, as Identity + -0 = +0). A hand-built tree of bare Lifts
// could give -0 instead; ReplayOracle never builds one.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <tuple>

#include "core/platform.hpp"
#include "core/scalar.hpp"

namespace carrier {

template <class C>
concept Carrier = requires(const typename C::State& s, const typename C::Input& x,
                           const typename C::Result& r) {
  typename C::Scalar;
  typename C::Input;
  typename C::State;
  typename C::Result;
  { C::kName } -> std::convertible_to<const char*>;
  { C::kCommutative } -> std::convertible_to<bool>;
  { C::kBitwiseCommutative } -> std::convertible_to<bool>;
  { C::kPushIsCombineLift } -> std::convertible_to<bool>;
  { C::kHasPadInput } -> std::convertible_to<bool>;
  { C::Identity() } -> std::same_as<typename C::State>;
  { C::Lift(x) } -> std::same_as<typename C::State>;
  { C::Combine(s, s) } -> std::same_as<typename C::State>;
  { C::Finalize(s) } -> std::same_as<typename C::Result>;
  C::Components(r);
  s.Tie();
};

template <class C>
concept HasPush = Carrier<C> && requires(const typename C::State& s, const typename C::Input& x) {
  { C::Push(s, x) } -> std::same_as<typename C::State>;
};

template <class C>
concept HasTileLift = Carrier<C> && requires(const typename C::Input* x, std::size_t n) {
  { C::LiftTile(x, n) } -> std::same_as<typename C::State>;
};

template <class C>
concept HasPadInput = Carrier<C> && C::kHasPadInput && requires {
  { C::PadInput() } -> std::same_as<typename C::Input>;
};

// The sequential step every chain uses: the carrier's Push where it has one.
template <Carrier C>
CARRIER_HD typename C::State PushOne(const typename C::State& s, const typename C::Input& x) {
  if constexpr (HasPush<C>) {
    return C::Push(s, x);
  } else {
    return C::Combine(s, C::Lift(x));
  }
}

// Left fold from Identity: the `seq` schedule, and the reference meaning of a chain.
template <Carrier C>
CARRIER_HD typename C::State Fold(const typename C::Input* x, std::size_t n) {
  typename C::State s = C::Identity();
  for (std::size_t i = 0; i < n; ++i) s = PushOne<C>(s, x[i]);
  return s;
}

// Number of scalars Components() returns.
template <Carrier C>
inline constexpr std::size_t kComponentCount =
    std::tuple_size_v<decltype(C::Components(std::declval<typename C::Result>()))>;

// Bitwise equality of two states, field by field (any NaN equals any NaN).
template <Carrier C>
bool StatesBitEqual(const typename C::State& a, const typename C::State& b) {
  return std::apply(
      [&](const auto&... fa) {
        return std::apply([&](const auto&... fb) { return (FieldBitEqual(fa, fb) && ...); },
                          b.Tie());
      },
      a.Tie());
}

}  // namespace carrier
