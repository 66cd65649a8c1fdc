// core/orders/seq.hpp: seq, one chain left to right from Identity (Higham's recursive summation).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/orders/order.hpp"

namespace carrier::orders {

struct Seq {
  static constexpr ScheduleKind kKind = ScheduleKind::kSeq;
  static constexpr std::string_view kHead = "seq";
  static constexpr ScheduleKindDoc kDoc = {kKind, "seq", "left to right, one running state", "seq"};
  static Schedule Parse(std::string_view text, const std::vector<std::string_view>& parts) {
    schedule_detail::ExpectAtMost(text, parts, 1);
    return Schedule::Seq();
  }
  static std::string Print(const Schedule&) { return "seq"; }
  template <class V>
  static std::optional<NodeOf<V>> Walk(const Schedule& s, std::uint64_t n, std::uint64_t off,
                                       V& v) {
    if (n == 0) return std::nullopt;
    return WalkChain(v, off, 0, n, 1, LeafMode(s));
  }
};

}  // namespace carrier::orders
