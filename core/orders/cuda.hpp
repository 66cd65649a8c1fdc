// core/orders/cuda.hpp: cuda:THREADS[:...], kernels/cuda's block and grid reduction
// (core/cuda_schedule.hpp: the parameters; core/cuda_tree.hpp: the tree).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/cuda_tree.hpp"
#include "core/orders/order.hpp"

namespace carrier::orders {

struct CudaParams {
  CudaSchedule cuda{};  // kernels/cuda's block/grid reduction (core/cuda_schedule.hpp)
  friend bool operator==(const CudaParams&, const CudaParams&) = default;
};

struct Cuda {
  using Params = CudaParams;
  static constexpr ScheduleKind kKind = ScheduleKind::kCuda;
  static constexpr std::string_view kHead = "cuda";
  static constexpr ScheduleKindDoc kDoc = {
      kKind,
      "cuda:THREADS[:ITEMS[:blocked|striped[:shfl|xor[:seq|pairwise[:auto|BLOCKS]]]]][:lift]",
      "kernels/cuda's block and grid reduction (core/cuda_schedule.hpp)", "cuda:256:4:striped"};
  static Params Parse(std::string_view text, const std::vector<std::string_view>& parts) {
    Params s;
    const std::vector<std::string_view> fields(parts.begin() + 1, parts.end());
    if (std::string why = ParseCudaFields(fields, s.cuda); !why.empty())
      schedule_detail::Fail(text, why);
    return s;
  }
  static std::string Print(const Params& s) { return ToString(s.cuda); }
  static MergeTree Build(const Params& s, std::uint64_t n) { return BuildCudaTree(s.cuda, n); }
};

}  // namespace carrier::orders
