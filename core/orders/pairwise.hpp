// core/orders/pairwise.hpp: pairwise[:LEAF][:lift], recursive halving (the left half takes the
// extra element) down to chains of at most LEAF inputs (default 1).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/orders/order.hpp"
#include "core/pairwise.hpp"

namespace carrier::orders {

struct PairwiseParams {
  std::uint64_t leaf = 1;  // largest leaf chain
  bool lift = false;       // leaf chains lifted whole by LiftTile
  friend bool operator==(const PairwiseParams&, const PairwiseParams&) = default;
};

struct Pairwise {
  using Params = PairwiseParams;
  static constexpr ScheduleKind kKind = ScheduleKind::kPairwise;
  static constexpr std::string_view kHead = "pairwise";
  static constexpr ScheduleKindDoc kDoc = {
      kKind, "pairwise[:LEAF][:lift]", "recursive halving; chains of at most LEAF at the leaves",
      "pairwise:8"};
  static Params Parse(std::string_view text, const std::vector<std::string_view>& parts) {
    Params s;
    std::size_t i = 1;
    if (i < parts.size() && parts[i] != "lift")
      s.leaf = schedule_detail::ParseCount(text, parts[i++], "LEAF", false);
    schedule_detail::ParseLiftTail(text, parts, i, s.lift);
    return s;
  }
  static std::string Print(const Params& s) {
    return "pairwise" + (s.leaf == 1 ? std::string() : ":" + std::to_string(s.leaf)) +
           (s.lift ? ":lift" : "");
  }
  // The leaves left to right, each subtree's combines after its children's (post-order). A
  // visitor with PairwiseSubtree(first, m, leaf, mode) takes every subtree of m > leaf inputs
  // for which its TakesPairwise(m, leaf, mode) holds whole, inputs [first, first + m) (the
  // shape walk: pairwise:1 regions a level at a time; the fast replay: regions, straight-line
  // subtrees and sibling leaf chains).
  template <class V>
  static std::optional<NodeOf<V>> Walk(const Params& s, std::uint64_t n, std::uint64_t off, V& v) {
    if (n == 0) return std::nullopt;
    return Over(v, off, 0, n, s.leaf, LeafMode(s.lift));
  }

 private:
  template <class V>
  static NodeOf<V> Over(V& v, std::uint64_t off, std::uint64_t lo, std::uint64_t hi,
                        std::uint64_t leaf, ChainMode mode) {  // NOLINT(misc-no-recursion)
    if (hi - lo <= leaf) return WalkChain(v, off, lo, hi - lo, 1, mode);
    if constexpr (requires {
                    v.TakesPairwise(lo, leaf, mode);
                    v.PairwiseSubtree(lo, lo, leaf, mode);
                  }) {
      if (v.TakesPairwise(hi - lo, leaf, mode))
        return v.PairwiseSubtree(off + lo, hi - lo, leaf, mode);
    }
    const std::uint64_t mid = PairwiseMid(lo, hi);
    const NodeOf<V> a = Over(v, off, lo, mid, leaf, mode);
    const NodeOf<V> b = Over(v, off, mid, hi, leaf, mode);
    return v.Combine(a, b);
  }
};

}  // namespace carrier::orders
