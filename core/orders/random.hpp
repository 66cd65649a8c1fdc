// core/orders/random.hpp: random:SEED, a seeded random binary tree over the inputs in order.
// The split of [lo, hi) is lo + 1 + h mod (hi - lo - 1), h a counter-based hash of (seed, lo,
// hi) (core/hash.hpp's SplitMix64): it depends on the subrange only, never on traversal order,
// so every evaluator (core/random_splits.hpp's vectorised one included) finds the same tree.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/hash.hpp"
#include "core/orders/order.hpp"

namespace carrier {

namespace tree_detail {

inline std::uint64_t Mix(std::uint64_t x) { return SplitMix64(x); }

inline std::uint64_t RandomSplit(std::uint64_t seed, std::uint64_t lo, std::uint64_t hi) {
  std::uint64_t h = Mix(Mix(Mix(seed) ^ lo) ^ hi);
  return lo + 1 + h % (hi - lo - 1);
}

}  // namespace tree_detail

namespace orders {

struct RandomParams {
  std::uint64_t seed = 0;
  bool lift = false;  // each one-input chain lifted by LiftTile (not in the grammar)
  friend bool operator==(const RandomParams&, const RandomParams&) = default;
};

struct Random {
  using Params = RandomParams;
  static constexpr ScheduleKind kKind = ScheduleKind::kRandom;
  static constexpr std::string_view kHead = "random";
  static constexpr ScheduleKindDoc kDoc = {kKind, "random:SEED",
                                           "a random binary tree drawn from SEED", "random:3"};
  static Params Parse(std::string_view text, const std::vector<std::string_view>& parts) {
    if (parts.size() < 2) schedule_detail::Fail(text, "random needs a seed: random:SEED");
    schedule_detail::ExpectAtMost(text, parts, 2);
    return {.seed = schedule_detail::ParseCount(text, parts[1], "SEED", true)};
  }
  static std::string Print(const Params& s) { return "random:" + std::to_string(s.seed); }
  // One chain per input (chain id = input), then the splits' combines in post-order. The
  // splits use positions relative to the walked range (an omp chunk's tree is its own). A
  // visitor with RandomRegion(seed, lo, m, first) (the shape walk and the fast replay: a level
  // at a time) takes subtrees of 3 to its RandomRegionLimit() inputs without lift whole:
  // relative [lo, lo + m), inputs first + i.
  template <class V>
  static std::optional<NodeOf<V>> Walk(const Params& s, std::uint64_t n, std::uint64_t off, V& v) {
    if (n == 0) return std::nullopt;
    const SinglesOf<V> x(v, off, n, LeafMode(s.lift));
    return Over(v, x, s.seed, 0, n, off, !s.lift);
  }

 private:
  template <class V>
  static NodeOf<V> Over(V& v, const SinglesOf<V>& x, std::uint64_t seed, std::uint64_t lo,
                        std::uint64_t hi, std::uint64_t off,
                        bool push) {  // NOLINT(misc-no-recursion)
    if (hi - lo == 1) return x.at(lo);
    if constexpr (requires {
                    v.RandomRegion(seed, lo, 3u, off);
                    v.RandomRegionLimit();
                  }) {
      if (push && hi - lo >= 3 && hi - lo <= v.RandomRegionLimit())
        return v.RandomRegion(seed, lo, static_cast<std::uint32_t>(hi - lo), off + lo);
    }
    const std::uint64_t mid = tree_detail::RandomSplit(seed, lo, hi);
    const NodeOf<V> a = Over(v, x, seed, lo, mid, off, push);
    const NodeOf<V> b = Over(v, x, seed, mid, hi, off, push);
    return v.Combine(a, b);
  }
};

}  // namespace orders
}  // namespace carrier
