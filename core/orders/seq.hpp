// core/orders/seq.hpp: seq, one chain left to right from Identity (Higham's recursive summation).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/orders/order.hpp"

namespace carrier::orders {

// lift: the one chain lifted whole by LiftTile (not in the grammar; set by callers and tests).
struct SeqParams {
  bool lift = false;
  friend bool operator==(const SeqParams&, const SeqParams&) = default;
};

struct Seq {
  using Params = SeqParams;
  static constexpr ScheduleKind kKind = ScheduleKind::kSeq;
  static constexpr std::string_view kHead = "seq";
  static constexpr ScheduleKindDoc kDoc = {kKind, "seq", "left to right, one running state", "seq"};
  static Params Parse(std::string_view text, const std::vector<std::string_view>& parts) {
    schedule_detail::ExpectAtMost(text, parts, 1);
    return {};
  }
  static std::string Print(const Params&) { return "seq"; }
  template <class V>
  static std::optional<NodeOf<V>> Walk(const Params& p, std::uint64_t n, std::uint64_t off, V& v) {
    if (n == 0) return std::nullopt;
    return WalkChain(v, off, 0, n, 1, LeafMode(p.lift));
  }
};

}  // namespace carrier::orders
