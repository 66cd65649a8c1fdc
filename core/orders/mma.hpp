// core/orders/mma.hpp: mma:PROFILE[:promote:N], a matrix unit's accumulation along K
// (core/mma.hpp): one chain of fused k-term steps over all inputs, or with promote:N chains of N
// inputs (N a multiple of the profile's k), each from a zeroed accumulator, whose results are
// added in order by the carrier's Combine (an IEEE fp32 accumulator, DeepSeek-V3's promotion).
// dot only.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "core/merge_tree.hpp"
#include "core/orders/order.hpp"

namespace carrier::orders {

struct MmaParams {
  std::string profile{};      // the profile's name (core/mma.hpp kMmaProfiles)
  std::uint64_t promote = 0;  // promote to the carrier's Combine every N inputs (0 = never)
  friend bool operator==(const MmaParams&, const MmaParams&) = default;
};

struct Mma {
  using Params = MmaParams;
  static constexpr ScheduleKind kKind = ScheduleKind::kMma;
  static constexpr std::string_view kHead = "mma";
  static constexpr ScheduleKindDoc kDoc = {
      kKind, "mma:PROFILE[:promote:N]",
      "a matrix unit's fused accumulation (the profiles are listed below), promoted every N",
      "mma:hopper:promote:128"};
  static Params Parse(std::string_view text, const std::vector<std::string_view>& parts) {
    using schedule_detail::Fail;
    if (parts.size() < 2 || parts[1].empty())
      Fail(text, "mma needs a profile: mma:PROFILE[:promote:N]; profiles: " + MmaProfileNames());
    const MmaProfile* profile = FindMmaProfile(parts[1]);
    if (!profile)
      Fail(text,
           "unknown mma profile '" + std::string(parts[1]) + "'; profiles: " + MmaProfileNames());
    Params s;
    s.profile = std::string(profile->name);
    if (parts.size() > 2) {
      if (parts[2] != "promote")
        Fail(text, "unexpected field '" + std::string(parts[2]) + "'; expected promote:N");
      if (parts.size() < 4) Fail(text, "promote needs an interval: mma:PROFILE:promote:N");
      s.promote = schedule_detail::ParseCount(text, parts[3], "N", false);
      if (s.promote % profile->k != 0)
        Fail(text, "promote:N must be a multiple of the instruction's k = " +
                       std::to_string(profile->k) + " (" + std::string(profile->instruction) + ")");
      schedule_detail::ExpectAtMost(text, parts, 4);
    }
    return s;
  }
  static std::string Print(const Params& s) {
    return "mma:" + s.profile + (s.promote ? ":promote:" + std::to_string(s.promote) : "");
  }
  // One kFused chain over [0, n), or with promote:N the kFused chains [jN, min((j+1)N, n))
  // merged left to right (the fp32 accumulator the partials are promoted into). The tree
  // carries the profile's fused node; its groups are the profile's k / split products.
  static MergeTree Build(const Params& s, std::uint64_t n) {
    const MmaProfile* profile = FindMmaProfile(s.profile);
    if (!profile) throw ScheduleError("bad schedule '" + Print(s) + "': unknown mma profile");
    tree_detail::Builder b(n, Print(s), ChainMode::kFused);
    b.tree().fused = profile->node;
    if (n == 0) return b.Take();
    const std::uint64_t span = s.promote ? s.promote : n;
    std::vector<std::uint64_t> chunks;
    for (std::uint64_t lo = 0; lo < n; lo += span)
      chunks.push_back(b.AddChain(lo, std::min(span, n - lo)));
    std::uint64_t acc = chunks[0];
    for (std::size_t i = 1; i < chunks.size(); ++i) acc = b.AddCombine(acc, chunks[i]);
    return b.Take();
  }
};

}  // namespace carrier::orders
