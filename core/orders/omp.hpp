// core/orders/omp.hpp: omp:P[:seq|pairwise][:INNER], an explicit static partition into P chunks,
// chunk c being [floor(c n / P), floor((c+1) n / P)) (OpenMP's static schedule; kernels/omp
// uses OmpChunkStart too), each reduced by the INNER order (any order but a partition; default
// seq) over its own inputs, the chunk states merged by the outer order.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "core/orders/order.hpp"
#include "core/orders/partition.hpp"

namespace carrier {

// Start of chunk c of the static partition of omp:P over n inputs: floor(c n / P), computed
// without overflow (128-bit product). kernels/omp uses the same function, so both agree.
inline std::uint64_t OmpChunkStart(std::uint64_t n, std::uint64_t parts, std::uint64_t c) {
  __extension__ typedef unsigned __int128 Wide;  // a GNU extension: -Wpedantic stays quiet
  return static_cast<std::uint64_t>((static_cast<Wide>(c) * n) / parts);
}

namespace orders {

struct OmpParams {
  std::uint64_t parts = 0;              // P chunks
  OuterOrder outer = OuterOrder::kSeq;  // how the chunk states are merged
  NestedSchedule inner{};               // the per-chunk order (unset = seq, printed as nothing)
  friend bool operator==(const OmpParams&, const OmpParams&) = default;
};

struct Omp {
  using Params = OmpParams;
  static constexpr ScheduleKind kKind = ScheduleKind::kOmp;
  static constexpr std::string_view kHead = "omp";
  static constexpr ScheduleKindDoc kDoc = {
      kKind, "omp:P[:seq|pairwise][:INNER]",
      "P static chunks, each reduced by schedule INNER (default seq), merged seq or pairwise",
      "omp:4:pairwise:strided:8"};
  static Params Parse(std::string_view text, const std::vector<std::string_view>& parts) {
    if (parts.size() < 2)
      schedule_detail::Fail(text, "omp needs a chunk count: omp:P[:seq|pairwise][:INNER]");
    Params s{.parts = schedule_detail::ParseCount(text, parts[1], "P", false)};
    std::size_t i = 2;
    if (i < parts.size() && (parts[i] == "seq" || parts[i] == "pairwise")) {
      s.outer = parts[i] == "seq" ? OuterOrder::kSeq : OuterOrder::kPairwise;
      ++i;
    }
    s.inner = schedule_detail::ParseNested(text, parts, i, "omp");
    return s;
  }
  static std::string Print(const Params& s) {
    return "omp:" + std::to_string(s.parts) +
           (s.outer == OuterOrder::kPairwise ? ":pairwise" : ":seq") +
           (s.inner.IsSet() ? ":" + ToString(s.inner.Get()) : std::string());
  }
  static Partition Chunks(const Params& s, std::uint64_t n) {
    Partition p;
    p.n = n;
    p.parts = s.parts;
    p.outer = s.outer;
    p.inner = &s.inner.Get();
    p.nonempty = std::min(n, s.parts);
    p.start_fn = [](const Partition& q, std::uint64_t c) { return OmpChunkStart(q.n, q.parts, c); };
    // The chunk holding input i: the smallest c with floor((c + 1) n / P) > i.
    p.chunk_of_fn = [](const Partition& q, std::uint64_t i) {
      __extension__ typedef unsigned __int128 Wide;
      const Wide num = static_cast<Wide>(i + 1) * q.parts;
      return static_cast<std::uint64_t>((num + q.n - 1) / q.n) - 1;
    };
    return p;
  }
  template <class V>
  static std::optional<NodeOf<V>> Walk(const Params& s, std::uint64_t n, std::uint64_t off, V& v) {
    return WalkPartition(Chunks(s, n), Print(s), off, v);
  }
};

}  // namespace orders
}  // namespace carrier
