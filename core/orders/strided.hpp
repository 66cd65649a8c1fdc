// core/orders/strided.hpp: strided:K[:tile:T][:lift], input i to lane i mod K, the lanes merged
// pairwise in lane order (a SIMD kernel's lanes). With tile:T each lane's chain is cut into
// tiles of T of its inputs (lane k, tile j: inputs k + (jT + t)K, t < T), folded (or, with
// :lift, lifted whole) and merged in order within the lane: kernels/simd's lifted tiles.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "core/orders/order.hpp"

namespace carrier::orders {

struct StridedParams {
  std::uint64_t lanes = 0;  // K
  std::uint64_t tile = 0;   // lane tile T (0 = whole lane)
  bool lift = false;        // leaf chains lifted whole by LiftTile
  friend bool operator==(const StridedParams&, const StridedParams&) = default;
};

struct Strided {
  using Params = StridedParams;
  static constexpr ScheduleKind kKind = ScheduleKind::kStrided;
  static constexpr std::string_view kHead = "strided";
  static constexpr ScheduleKindDoc kDoc = {
      kKind, "strided:K[:tile:T][:lift]",
      "K interleaved lanes (SIMD), lane states merged pairwise; :tile:T:lift = kernels/simd",
      "strided:8"};
  static Params Parse(std::string_view text, const std::vector<std::string_view>& parts) {
    using schedule_detail::Fail;
    if (parts.size() < 2) Fail(text, "strided needs a lane count: strided:K[:tile:T][:lift]");
    Params s{.lanes = schedule_detail::ParseCount(text, parts[1], "K", false)};
    std::size_t i = 2;
    if (i < parts.size() && parts[i] == "tile") {
      if (i + 1 >= parts.size()) Fail(text, "tile needs a size: strided:K:tile:T");
      s.tile = schedule_detail::ParseCount(text, parts[i + 1], "T", false);
      i += 2;
    }
    schedule_detail::ParseLiftTail(text, parts, i, s.lift);
    return s;
  }
  static std::string Print(const Params& s) {
    return "strided:" + std::to_string(s.lanes) +
           (s.tile ? ":tile:" + std::to_string(s.tile) : std::string()) + (s.lift ? ":lift" : "");
  }
  // Always K lanes, empty ones included: a SIMD kernel's idle lanes hold Identity and are merged
  // like the others, and replay must see the same combines. Chains lane by lane (untiled lanes
  // in batches of equal length, WalkChains; a lane with no input is one empty chain), each lane's
  // tiles merged in order, then the lanes pairwise. A visitor with StridedLanes(params, n, first)
  // (the fast replay: every lane advanced a row at a time) returns the K lanes' nodes, each lane's
  // chains and tile merges done, in lane order.
  template <class V>
  static std::optional<NodeOf<V>> Walk(const Params& s, std::uint64_t n, std::uint64_t off, V& v) {
    const std::uint64_t K = s.lanes;
    if (K > n && K - n > kMaxEmptyNodes)
      throw ScheduleError("bad schedule '" + Print(s) + "': " + std::to_string(K) + " lanes over " +
                          std::to_string(n) + " inputs would make over " +
                          std::to_string(kMaxEmptyNodes) + " empty lanes");
    std::vector<NodeOf<V>> lanes;
    if constexpr (requires { v.StridedLanes(s, n, off); }) {
      lanes = v.StridedLanes(s, n, off);
    } else {
      lanes = Lanes(s, n, off, v);
    }
    if (n > 1 && K > 1) v.Permutes();
    return WalkPairwiseOver(v, 0, K, [&](std::uint64_t k) { return lanes[k]; });
  }

 private:
  template <class V>
  static std::vector<NodeOf<V>> Lanes(const Params& s, std::uint64_t n, std::uint64_t off, V& v) {
    const std::uint64_t K = s.lanes;
    const ChainMode mode = LeafMode(s.lift);
    std::vector<NodeOf<V>> lanes;
    lanes.reserve(K);
    if (s.tile == 0) {  // lanes [0, r) hold q + 1 inputs, [r, K) q (none where q == 0)
      const std::uint64_t q = n / K, r = n % K;
      if (r > 0) WalkChains(v, off, 0, r, q + 1, K, mode, lanes);
      if (q > 0) WalkChains(v, off, r, K - r, q, K, mode, lanes);
      for (std::uint64_t k = q > 0 ? K : r; k < K; ++k)
        lanes.push_back(WalkChain(v, off, 0, 0, K, mode));
      return lanes;
    }
    for (std::uint64_t k = 0; k < K; ++k) {
      const std::uint64_t count = k < n ? (n - k + K - 1) / K : 0;
      if (count == 0) {
        lanes.push_back(WalkChain(v, off, 0, 0, K, mode));
        continue;
      }
      lanes.push_back(WalkSeqOver(v, (count + s.tile - 1) / s.tile, [&](std::uint64_t j) {
        return WalkChain(v, off, k + j * s.tile * K, std::min(s.tile, count - j * s.tile), K, mode);
      }));
    }
    return lanes;
  }
};

}  // namespace carrier::orders
