// core/orders/splitk.hpp: splitk:S[:INNER], split-K: the inputs cut into S contiguous slices of
// ceil(n / S) (the last shorter, trailing ones empty where n is not a multiple), each reduced
// by INNER (any order but a partition; default seq) from its own Identity, the S partial states
// then combined in slice order. cuBLAS's and CUTLASS's split-K GEMM (each slice of K on its own
// CTA, partials reduced in a second pass) and FlashAttention's split-KV decoding (KV blocks per
// split, the splits' (m, l, O) merged in order) reduce this way.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "core/orders/order.hpp"
#include "core/orders/partition.hpp"

namespace carrier::orders {

struct SplitKParams {
  std::uint64_t parts = 0;  // S slices
  NestedSchedule inner{};   // the per-slice order (unset = seq, printed as nothing)
  friend bool operator==(const SplitKParams&, const SplitKParams&) = default;
};

struct SplitK {
  using Params = SplitKParams;
  static constexpr ScheduleKind kKind = ScheduleKind::kSplitK;
  static constexpr std::string_view kHead = "splitk";
  static constexpr ScheduleKindDoc kDoc = {
      kKind, "splitk:S[:INNER]",
      "split-K: S slices of ceil(n/S), each reduced by INNER (default seq), partials in order",
      "splitk:4:pairwise"};
  static Params Parse(std::string_view text, const std::vector<std::string_view>& parts) {
    if (parts.size() < 2)
      schedule_detail::Fail(text, "splitk needs a slice count: splitk:S[:INNER]");
    Params s;
    s.parts = schedule_detail::ParseCount(text, parts[1], "S", false);
    s.inner = schedule_detail::ParseNested(text, parts, 2, "splitk");
    return s;
  }
  static std::string Print(const Params& s) {
    return "splitk:" + std::to_string(s.parts) +
           (s.inner.IsSet() ? ":" + ToString(s.inner.Get()) : std::string());
  }
  static Partition Chunks(const Params& s, std::uint64_t n) {
    Partition p;
    p.n = n;
    p.parts = s.parts;
    p.outer = OuterOrder::kSeq;
    p.inner = &s.inner.Get();
    p.param = n / s.parts + (n % s.parts != 0);  // the slice length, ceil(n / S)
    p.nonempty = p.param == 0 ? 0 : n / p.param + (n % p.param != 0);
    p.start_fn = [](const Partition& q, std::uint64_t c) {
      __extension__ typedef unsigned __int128 Wide;
      return static_cast<std::uint64_t>(
          std::min<Wide>(q.n, static_cast<Wide>(c) * static_cast<Wide>(q.param)));
    };
    p.chunk_of_fn = [](const Partition& q, std::uint64_t i) { return i / q.param; };
    return p;
  }
  template <class V>
  static std::optional<NodeOf<V>> Walk(const Params& s, std::uint64_t n, std::uint64_t off, V& v) {
    return WalkPartition(Chunks(s, n), Print(s), off, v);
  }
};

}  // namespace carrier::orders
