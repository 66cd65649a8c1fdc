// core/orders/numpy.hpp: numpy[:BLOCK[:ACC[:CHUNK]]], numpy's float sum (core/library_trees.hpp),
// default 128:8:8192: chunks of CHUNK added in order, each numpy's pairwise_sum (blocks of
// BLOCK, ACC accumulators).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/library_trees.hpp"
#include "core/orders/order.hpp"

namespace carrier::orders {

struct NumpyParams {
  std::uint64_t block = 128;   // BLOCK: pairwise_sum's block
  std::uint64_t acc = 8;       // ACC: its accumulators
  std::uint64_t chunk = 8192;  // CHUNK: the buffer (0 = none)
  friend bool operator==(const NumpyParams&, const NumpyParams&) = default;
};

struct Numpy {
  using Params = NumpyParams;
  static constexpr ScheduleKind kKind = ScheduleKind::kNumpy;
  static constexpr std::string_view kHead = "numpy";
  static constexpr ScheduleKindDoc kDoc = {
      kKind, "numpy[:BLOCK[:ACC[:CHUNK]]]",
      "numpy's float sum: pairwise blocks of BLOCK, ACC accumulators, CHUNK buffering", "numpy"};
  static Params Parse(std::string_view text, const std::vector<std::string_view>& parts) {
    using schedule_detail::ParseCount;
    Params s;
    s.block = parts.size() >= 2 ? ParseCount(text, parts[1], "BLOCK", false) : 128;
    s.acc = parts.size() >= 3 ? ParseCount(text, parts[2], "ACC", false) : 8;
    s.chunk = parts.size() >= 4 ? ParseCount(text, parts[3], "CHUNK", true) : 8192;
    schedule_detail::ExpectAtMost(text, parts, 4);
    // A block of more than BLOCK items is split in two halves of whole ACC groups: with
    // BLOCK >= 2 ACC each half is non-empty (numpy: 128 >= 16); below it the split can be empty
    // and the builder would recurse forever (found by fuzz_schedule: "numpy:8").
    if (s.block < 2 * s.acc) schedule_detail::Fail(text, "BLOCK must be at least 2 x ACC");
    return s;
  }
  static std::string Print(const Params& s) {
    return s.block == 128 && s.acc == 8 && s.chunk == 8192
               ? "numpy"
               : "numpy:" + std::to_string(s.block) + ":" + std::to_string(s.acc) + ":" +
                     std::to_string(s.chunk);
  }
  static MergeTree Build(const Params& s, std::uint64_t n) {
    return BuildNumpyTree(s.block, s.acc, s.chunk, Print(s), n);
  }
};

}  // namespace carrier::orders
