// core/replay.hpp: evaluate a carrier over its inputs in exactly the order a MergeTree says.
//
// Replay is the meaning of every fast kernel: a kernel that realises schedule S must equal
// Replay<C>(BuildTree(S, n), x) bit for bit (DESIGN.md, "the bit-exact contract"). So Replay
// does nothing clever: chains push (or LiftTile) their inputs in increasing index order from
// Identity, combines run in tree order with the earlier segment on the left.
//
// Errors (ScheduleError, one line): input count differs from the tree's n; a tree that
// permutes inputs for a carrier whose Combine is not commutative; a tile-lifting tree for a
// carrier without LiftTile; a tree that fails ValidateTree.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "core/carrier.hpp"
#include "core/merge_tree.hpp"

namespace carrier {

template <Carrier C>
void CheckReplayable(const MergeTree& t, std::size_t n_inputs) {
  if (n_inputs != t.n)
    throw ScheduleError("replay: tree '" + t.schedule + "' is built for n = " +
                        std::to_string(t.n) + " but got " + std::to_string(n_inputs) +
                        " inputs");
  if (t.permutes && !C::kCommutative)
    throw ScheduleError("replay: schedule '" + t.schedule + "' reorders inputs, but " +
                        C::kName + "'s Combine is not commutative");
  if constexpr (!HasTileLift<C>) {
    if (t.UsesTileLift())
      throw ScheduleError("replay: schedule '" + t.schedule + "' lifts whole tiles, but " +
                          C::kName + " defines no tile lift");
  }
}

template <Carrier C>
typename C::State ReplayChain(const Chain& c, std::span<const typename C::Input> x,
                              std::vector<typename C::Input>& gather) {
  using State = typename C::State;
  if (c.count == 0) return C::Identity();
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

// The state of x reduced in the tree's order. The tree is trusted to be valid (BuildTree's
// trees are; use ReplayChecked for a tree from elsewhere).
template <Carrier C>
typename C::State Replay(const MergeTree& t, std::span<const typename C::Input> x) {
  CheckReplayable<C>(t, x.size());
  if (t.Empty()) return C::Identity();
  std::vector<typename C::State> state(t.NodeCount());
  std::vector<typename C::Input> gather;
  for (std::size_t k = 0; k < t.chains.size(); ++k)
    state[k] = ReplayChain<C>(t.chains[k], x, gather);
  for (std::size_t m = 0; m < t.combines.size(); ++m)
    state[t.chains.size() + m] =
        C::Combine(state[t.combines[m].left], state[t.combines[m].right]);
  return state[t.Root()];
}

template <Carrier C>
typename C::State ReplayChecked(const MergeTree& t, std::span<const typename C::Input> x) {
  if (std::string why = ValidateTree(t); !why.empty())
    throw ScheduleError("replay: invalid tree for '" + t.schedule + "': " + why);
  return Replay<C>(t, x);
}

template <Carrier C>
typename C::Result ReplayResult(const MergeTree& t, std::span<const typename C::Input> x) {
  return C::Finalize(Replay<C>(t, x));
}

template <Carrier C>
typename C::Result ReplayResult(const Schedule& s, std::span<const typename C::Input> x) {
  return C::Finalize(Replay<C>(BuildTree(s, x.size()), x));
}

}  // namespace carrier
