// core/orders/canonical.hpp: canonical:L[:bisect], WG21 P4016R0's canonical parallel reduction
// (core/canonical_tree.hpp): input i to lane i mod L, each lane by the iterative pairwise tree,
// the L lane results by the same rule, then Combine(Identity, R); :bisect uses the paper's
// recursive-bisection tree (Appendix O).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/canonical_tree.hpp"
#include "core/orders/order.hpp"

namespace carrier::orders {

struct CanonicalParams {
  std::uint64_t lanes = 0;  // L
  bool bisect = false;      // P4016's Appendix O tree
  friend bool operator==(const CanonicalParams&, const CanonicalParams&) = default;
};

struct Canonical {
  using Params = CanonicalParams;
  static constexpr ScheduleKind kKind = ScheduleKind::kCanonical;
  static constexpr std::string_view kHead = "canonical";
  static constexpr ScheduleKindDoc kDoc = {
      kKind, "canonical:L[:bisect]", "WG21 P4016R0's canonical parallel reduction over L lanes",
      "canonical:16"};
  static Params Parse(std::string_view text, const std::vector<std::string_view>& parts) {
    using schedule_detail::Fail;
    if (parts.size() < 2) Fail(text, "canonical needs a lane count: canonical:L[:bisect]");
    Params s;
    s.lanes = schedule_detail::ParseCount(text, parts[1], "L", false);
    if (parts.size() >= 3) {
      if (parts[2] != "bisect")
        Fail(text, "expected 'bisect' (P4016 Appendix O), got '" + std::string(parts[2]) + "'");
      s.bisect = true;
    }
    schedule_detail::ExpectAtMost(text, parts, 3);
    return s;
  }
  static std::string Print(const Params& s) {
    return "canonical:" + std::to_string(s.lanes) + (s.bisect ? ":bisect" : "");
  }
  static MergeTree Build(const Params& s, std::uint64_t n) {
    return BuildCanonicalTree(s.lanes, s.bisect, Print(s), n);
  }
};

}  // namespace carrier::orders
