// core/replay_oracle.hpp: ReplayOracle, the test oracle of every replay: evaluate a carrier over
// its inputs in exactly the order a built MergeTree says, node by node.
//
// ReplayOracle is the meaning of every fast kernel: a kernel that realises schedule S must equal
// ReplayOracle<C>(BuildTree(S, n), x) bit for bit (DESIGN.md, "the bit-exact contract"). So
// ReplayOracle does nothing clever: chains push (or LiftTile) their inputs in increasing index
// order from Identity, combines run in tree order with the earlier segment on the left. The
// product path is Replay (core/replay.hpp), which computes the same states faster; the engine
// `--engine oracle` and the tests run this one.
//
// Errors (ScheduleError, one line): input count differs from the tree's n; a tree that
// permutes inputs for a carrier whose Combine is not commutative; a tile-lifting tree for a
// carrier without LiftTile; a tree with fused matrix-unit chains (mma: schedules) for a carrier
// without FusedStep; a tree that fails ValidateTree.
//
// Fused chains (ChainMode::kFused): the chain's inputs in groups of tree.fused.terms, in
// order, each group one fused step from Identity: C::FusedChain(Identity, chain inputs,
// count, stride, tree.fused) (core/mma.hpp gives the arithmetic; Dot<float> and Dot<double>
// define it).
//
// ReplayMixed<Inner, Outer> (below, with its own contract) is the two-precision variant:
// chains in Inner, each chain's state converted, combines in Outer (FABsum's shape). It has no
// fast twin, so both engines run it.
#pragma once

#include <concepts>
#include <cstddef>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/carrier.hpp"
#include "core/merge_tree.hpp"
#include "core/schedule.hpp"

namespace carrier {

// A carrier whose state can take a chain of matrix-unit fused steps: s, then the products of
// p[0], p[stride], ... (count of them) in groups of node.terms by node's rule (core/mma.hpp).
template <class C>
concept HasFusedStep = Carrier<C> &&
    requires(const typename C::State& s, const typename C::Input* p, const MmaNode& node) {
  { C::FusedChain(s, p, std::size_t{}, std::size_t{}, node) } -> std::same_as<typename C::State>;
};

template <Carrier C>
void CheckReplayable(const MergeTree& t, std::size_t n_inputs) {
  if (n_inputs != t.n)
    throw ScheduleError("replay: tree '" + t.schedule + "' is built for n = " +
                        std::to_string(t.n) + " but got " + std::to_string(n_inputs) + " inputs");
  if (t.permutes && !C::kCommutative)
    throw ScheduleError("replay: schedule '" + t.schedule + "' reorders inputs, but " + C::kName +
                        "'s Combine is not commutative");
  if constexpr (!HasTileLift<C>) {
    if (t.UsesTileLift())
      throw ScheduleError("replay: schedule '" + t.schedule + "' lifts whole tiles, but " +
                          C::kName + " defines no tile lift");
  }
  if constexpr (!HasFusedStep<C>) {
    if (t.UsesFusedNode())
      throw ScheduleError("replay: schedule '" + t.schedule +
                          "' runs fused matrix-unit steps, "
                          "which " +
                          C::kName +
                          " does not define (mma: schedules apply to dot, "
                          "computed in fp32 or fp64)");
  }
}

template <Carrier C>
typename C::State ReplayChain(const Chain& c, std::span<const typename C::Input> x,
                              std::vector<typename C::Input>& gather) {
  using State = typename C::State;
  if (c.count == 0) return C::Identity();
  if (c.mode == ChainMode::kFused)
    throw ScheduleError("replay: a fused chain needs its tree's fused node (ReplayFusedChain)");
  if (c.mode == ChainMode::kLiftTile) {
    if constexpr (HasTileLift<C>) {
      if (c.stride == 1) return C::LiftTile(x.data() + c.first, c.count);
      gather.clear();
      for (std::uint64_t j = 0; j < c.count; ++j) gather.push_back(x[c.first + j * c.stride]);
      return C::LiftTile(gather.data(), gather.size());
    }
  }
  State s = C::Identity();
  for (std::uint64_t j = 0; j < c.count; ++j) s = PushOne<C>(s, x[c.first + j * c.stride]);
  return s;
}

// A kFused chain: groups of node.terms inputs (the last one shorter), each one fused step.
template <Carrier C>
typename C::State ReplayFusedChain(const MmaNode& node, const Chain& c,
                                   std::span<const typename C::Input> x) {
  if constexpr (HasFusedStep<C>) {
    return C::FusedChain(C::Identity(), x.data() + c.first, c.count, c.stride, node);
  } else {
    throw ScheduleError(std::string("replay: ") + C::kName + " has no fused step");
  }
}

// The state of x reduced in the tree's order. The tree is trusted to be valid (BuildTree's
// trees are; use ReplayOracleChecked for a tree from elsewhere).
template <Carrier C>
typename C::State ReplayOracle(const MergeTree& t, std::span<const typename C::Input> x) {
  CheckReplayable<C>(t, x.size());
  if (t.Empty()) return C::Identity();
  std::vector<typename C::State> state(t.NodeCount());
  std::vector<typename C::Input> gather;
  for (std::size_t k = 0; k < t.chains.size(); ++k)
    state[k] = t.chains[k].mode == ChainMode::kFused ? ReplayFusedChain<C>(t.fused, t.chains[k], x)
                                                     : ReplayChain<C>(t.chains[k], x, gather);
  for (std::size_t m = 0; m < t.combines.size(); ++m)
    state[t.chains.size() + m] = C::Combine(state[t.combines[m].left], state[t.combines[m].right]);
  return state[t.Root()];
}

template <Carrier C>
typename C::State ReplayOracleChecked(const MergeTree& t, std::span<const typename C::Input> x) {
  if (std::string why = ValidateTree(t); !why.empty())
    throw ScheduleError("replay: invalid tree for '" + t.schedule + "': " + why);
  return ReplayOracle<C>(t, x);
}

template <Carrier C>
typename C::Result ReplayOracleResult(const MergeTree& t, std::span<const typename C::Input> x) {
  return C::Finalize(ReplayOracle<C>(t, x));
}

template <Carrier C>
typename C::Result ReplayOracleResult(const Schedule& s, std::span<const typename C::Input> x) {
  return C::Finalize(ReplayOracle<C>(BuildTree(s, x.size()), x));
}

// ---------------------------------------------------------------------------------------------
// Mixed-precision replay: ReplayMixed<Inner, Outer>(tree, x, convert).
//
// Computes   the tree's reduction in two precisions, the shape of FABsum (Blanchard, Higham &
//            Mary, SISC 42(3), 2020): every chain (Push or LiftTile, exactly as ReplayChain)
//            in carrier Inner, each chain's state then converted to Outer::State by
//            convert(const Inner::State&), and every combine in carrier Outer. With Sum<fp16>
//            and Sum<float> over blocked:b that is "tiles of b summed in fp16, tile sums
//            accumulated in fp32".
// Tree       the tree's own order: chains in index order (inputs increasing), then combines
//            in the tree's declared order, earlier segment on the left — the order ReplayOracle
//            uses, so ReplayMixed<C, C> with the identity conversion equals ReplayOracle<C> bit for
//            bit. An empty chain yields convert(Inner::Identity()), which for the field casts below
//            is Outer's identity whenever Inner's identity casts to it (+0, -inf, 0 counts).
// Convert    StateFieldCast<Inner, Outer, F> converts field by field through Tie(): field i
//            of Outer::State = F::template Cast<type of Outer's field i>(Inner's field i).
//            The default F (StaticCastField) is static_cast, i.e. for the carriers' scalars
//            rounding to nearest (even) into the wider or narrower type; counts (Welford's n)
//            are copied. It fits carriers whose Inner and Outer states list the same fields
//            in the same order (Sum, Compensated, OnlineSoftmax, Welford, ... over two scalar
//            types); anything else passes its own convert.
// Special    values go through the chain carrier's own rules, then the cast: NaN stays NaN,
//            +-inf stay +-inf, and a finite Inner value beyond Outer's range becomes +-inf
//            (static_cast's rounding). A cast from a narrower to a wider format is exact.
// Errors     as ReplayOracle, checked for both carriers (ScheduleError, one line).
// Threads    none of its own; Inner and Outer may depend on per-thread scalar contexts
//            (emulated formats): ReplayMixedChains and ReplayCombines let a caller run the two
//            phases under different contexts, and ReplayMixed is exactly their composition.

// Casts one field; the default conversion.
struct StaticCastField {
  template <class To, class From>
  static To Cast(const From& v) {
    return static_cast<To>(v);
  }
};

template <Carrier Inner, Carrier Outer, class F = StaticCastField>
struct StateFieldCast {
  typename Outer::State operator()(const typename Inner::State& s) const {
    using OuterTie = decltype(std::declval<const typename Outer::State&>().Tie());
    const auto in = s.Tie();
    static_assert(std::tuple_size_v<decltype(in)> == std::tuple_size_v<OuterTie>,
                  "StateFieldCast: Inner and Outer states have different field counts");
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return typename Outer::State{
          F::template Cast<std::remove_cvref_t<std::tuple_element_t<I, OuterTie>>>(
              std::get<I>(in))...};
    }
    (std::make_index_sequence<std::tuple_size_v<OuterTie>>{});
  }
};

// Phase 1: the chains in Inner, converted. Returns a vector of NodeCount() Outer states whose
// first chains.size() entries are the converted chain states (the rest: Outer::Identity()).
template <Carrier Inner, Carrier Outer, class Convert>
std::vector<typename Outer::State> ReplayMixedChains(const MergeTree& t,
                                                     std::span<const typename Inner::Input> x,
                                                     Convert&& convert) {
  CheckReplayable<Inner>(t, x.size());
  CheckReplayable<Outer>(t, x.size());
  std::vector<typename Outer::State> state(t.NodeCount(), Outer::Identity());
  std::vector<typename Inner::Input> gather;
  for (std::size_t k = 0; k < t.chains.size(); ++k)
    state[k] = convert(ReplayChain<Inner>(t.chains[k], x, gather));
  return state;
}

// Phase 2: the combines in C over states whose chain entries are filled (ReplayMixedChains).
template <Carrier C>
typename C::State ReplayCombines(const MergeTree& t, std::vector<typename C::State> state) {
  if (t.Empty()) return C::Identity();
  for (std::size_t m = 0; m < t.combines.size(); ++m)
    state[t.chains.size() + m] = C::Combine(state[t.combines[m].left], state[t.combines[m].right]);
  return state[t.Root()];
}

template <Carrier Inner, Carrier Outer, class Convert = StateFieldCast<Inner, Outer>>
typename Outer::State ReplayMixed(const MergeTree& t, std::span<const typename Inner::Input> x,
                                  Convert&& convert = Convert{}) {
  return ReplayCombines<Outer>(t, ReplayMixedChains<Inner, Outer>(t, x, convert));
}

}  // namespace carrier
