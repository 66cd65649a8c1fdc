// core/orders/reverse.hpp: reverse, the right fold x0 + (x1 + (... + x_{n-1})) of single inputs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/orders/order.hpp"

namespace carrier::orders {

// lift: each one-input chain lifted by LiftTile (not in the grammar).
struct ReverseParams {
  bool lift = false;
  friend bool operator==(const ReverseParams&, const ReverseParams&) = default;
};

struct Reverse {
  using Params = ReverseParams;
  static constexpr ScheduleKind kKind = ScheduleKind::kReverse;
  static constexpr std::string_view kHead = "reverse";
  static constexpr ScheduleKindDoc kDoc = {kKind, "reverse", "right to left", "reverse"};
  static Params Parse(std::string_view text, const std::vector<std::string_view>& parts) {
    schedule_detail::ExpectAtMost(text, parts, 1);
    return {};
  }
  static std::string Print(const Params&) { return "reverse"; }
  // Chains 0 .. n-1 (one input each, chain id = input), then Combine(x_i, acc) for i = n-2 .. 0.
  // A visitor with ReverseFold(first, n) (the shape walk: its leaves' hashes a block at a time;
  // the fast replay: a window at a time) takes the whole fold without lift over inputs
  // first + i.
  template <class V>
  static std::optional<NodeOf<V>> Walk(const Params& p, std::uint64_t n, std::uint64_t off, V& v) {
    if (n == 0) return std::nullopt;
    if constexpr (requires { v.ReverseFold(off, n); }) {
      if (!p.lift) return v.ReverseFold(off, n);
    }
    const SinglesOf<V> x(v, off, n, LeafMode(p.lift));
    NodeOf<V> acc = x.at(n - 1);
    for (std::uint64_t i = n - 1; i-- > 0;) acc = v.Combine(x.at(i), acc);
    return acc;
  }
};

}  // namespace carrier::orders
