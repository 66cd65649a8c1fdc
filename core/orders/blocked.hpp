// core/orders/blocked.hpp: blocked:TILE[:seq|pairwise][:lift], tiles of TILE contiguous inputs,
// each one chain, the tile states merged by the outer order (default seq): FABsum's blocking.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "core/orders/order.hpp"

namespace carrier::orders {

struct BlockedParams {
  std::uint64_t tile = 0;               // tile size
  OuterOrder outer = OuterOrder::kSeq;  // how the tile states are merged
  bool lift = false;                    // tiles lifted whole by LiftTile
  friend bool operator==(const BlockedParams&, const BlockedParams&) = default;
};

struct Blocked {
  using Params = BlockedParams;
  static constexpr ScheduleKind kKind = ScheduleKind::kBlocked;
  static constexpr std::string_view kHead = "blocked";
  static constexpr ScheduleKindDoc kDoc = {
      kKind, "blocked:TILE[:seq|pairwise][:lift]",
      "tiles of TILE reduced in order, tile states merged seq or pairwise", "blocked:64:pairwise"};
  static Params Parse(std::string_view text, const std::vector<std::string_view>& parts) {
    using schedule_detail::Fail;
    if (parts.size() < 2)
      Fail(text, "blocked needs a tile size: blocked:TILE[:seq|pairwise][:lift]");
    Params s{.tile = schedule_detail::ParseCount(text, parts[1], "TILE", false)};
    std::size_t i = 2;
    if (i < parts.size() && (parts[i] == "seq" || parts[i] == "pairwise")) {
      s.outer = parts[i] == "seq" ? OuterOrder::kSeq : OuterOrder::kPairwise;
      ++i;
    } else if (i < parts.size() && parts[i] != "lift") {
      Fail(text, "outer order must be seq or pairwise, got '" + std::string(parts[i]) + "'");
    }
    schedule_detail::ParseLiftTail(text, parts, i, s.lift);
    return s;
  }
  static std::string Print(const Params& s) {
    return "blocked:" + std::to_string(s.tile) +
           (s.outer == OuterOrder::kPairwise ? ":pairwise" : "") + (s.lift ? ":lift" : "");
  }
  template <class V>
  static std::optional<NodeOf<V>> Walk(const Params& s, std::uint64_t n, std::uint64_t off, V& v) {
    if (n == 0) return std::nullopt;
    const std::uint64_t tiles = (n + s.tile - 1) / s.tile;
    auto chains = TilesOf(v, off, n, s.tile, LeafMode(s.lift));  // asked for in tile order
    if constexpr (requires { chains.Merged(); }) {
      return chains.Merged();  // a visitor with nothing to see in the merge (the shape probe)
    } else {
      if (s.outer == OuterOrder::kSeq) return WalkSeqTiles(v, tiles, chains);
      return WalkPairwiseTiles(v, 0, tiles, chains);
    }
  }
};

}  // namespace carrier::orders
