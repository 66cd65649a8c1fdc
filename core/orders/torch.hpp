// core/orders/torch.hpp: torch:LANES, torch.sum on CPU with one thread (core/library_trees.hpp):
// LANES the vector's elements (AVX2: 8 fp32, 4 fp64).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/library_trees.hpp"
#include "core/orders/order.hpp"

namespace carrier::orders {

struct TorchParams {
  std::uint64_t lanes = 0;  // the vector's elements (AVX2: 8 fp32, 4 fp64)
  friend bool operator==(const TorchParams&, const TorchParams&) = default;
};

struct Torch {
  using Params = TorchParams;
  static constexpr ScheduleKind kKind = ScheduleKind::kTorch;
  static constexpr std::string_view kHead = "torch";
  static constexpr ScheduleKindDoc kDoc = {
      kKind, "torch:LANES", "torch.sum's cascade on CPU with LANES lanes", "torch:8"};
  static Params Parse(std::string_view text, const std::vector<std::string_view>& parts) {
    if (parts.size() < 2)
      schedule_detail::Fail(text, "torch needs its vector's lane count: torch:LANES");
    schedule_detail::ExpectAtMost(text, parts, 2);
    Params s;
    s.lanes = schedule_detail::ParseCount(text, parts[1], "LANES", false);
    return s;
  }
  static std::string Print(const Params& s) { return "torch:" + std::to_string(s.lanes); }
  static MergeTree Build(const Params& s, std::uint64_t n) {
    return BuildTorchTree(s.lanes, Print(s), n);
  }
};

}  // namespace carrier::orders
