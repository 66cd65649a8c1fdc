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

struct Numpy {
  static constexpr ScheduleKind kKind = ScheduleKind::kNumpy;
  static constexpr std::string_view kHead = "numpy";
  static constexpr ScheduleKindDoc kDoc = {
      kKind, "numpy[:BLOCK[:ACC[:CHUNK]]]",
      "numpy's float sum: pairwise blocks of BLOCK, ACC accumulators, CHUNK buffering", "numpy"};
  static Schedule Parse(std::string_view text, const std::vector<std::string_view>& parts) {
    using schedule_detail::ParseCount;
    Schedule s;
    s.kind = kKind;
    s.tile = parts.size() >= 2 ? ParseCount(text, parts[1], "BLOCK", false) : 128;
    s.lanes = parts.size() >= 3 ? ParseCount(text, parts[2], "ACC", false) : 8;
    s.parts = parts.size() >= 4 ? ParseCount(text, parts[3], "CHUNK", true) : 8192;
    schedule_detail::ExpectAtMost(text, parts, 4);
    // A block of more than BLOCK items is split in two halves of whole ACC groups: with
    // BLOCK >= 2 ACC each half is non-empty (numpy: 128 >= 16); below it the split can be empty
    // and the builder would recurse forever (found by fuzz_schedule: "numpy:8").
    if (s.tile < 2 * s.lanes) schedule_detail::Fail(text, "BLOCK must be at least 2 x ACC");
    return s;
  }
  static std::string Print(const Schedule& s) {
    return s.tile == 128 && s.lanes == 8 && s.parts == 8192
               ? "numpy"
               : "numpy:" + std::to_string(s.tile) + ":" + std::to_string(s.lanes) + ":" +
                     std::to_string(s.parts);
  }
  static MergeTree Build(const Schedule& s, std::uint64_t n) {
    return BuildNumpyTree(s.tile, s.lanes, s.parts, Print(s), n);
  }
};

}  // namespace carrier::orders
