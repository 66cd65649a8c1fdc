// core/pairwise_plan.hpp: the shape of pairwise:1 over m inputs as a breadth-first plan, so
// that a region's independent combines can be evaluated a level at a time: the fast replay's
// vector batches (core/replay.hpp PairwiseRegionLevels) and the shape walk's hash records
// (core/orders/shape.hpp) both read it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/pairwise.hpp"

namespace carrier {

// Regions of at most this many inputs are evaluated from a plan; one pairwise recursion reaches
// at most three sizes of region, so a plan depends on the subtree's size only.
inline constexpr std::uint32_t kPairwiseRegion = 4096;

struct PairwisePlan {
  std::uint32_t m = 0;  // inputs (0: not built)
  // Node t's operands: slot i < m is leaf i (input offset i), slot m + u is node u; nodes are
  // numbered breadth first from the root (0), level[l] is the first node of level l.
  std::vector<std::uint32_t> left, right, level;
};

inline void BuildPairwisePlan(std::uint32_t m, PairwisePlan& p) {
  p.m = m;
  p.left.clear();
  p.right.clear();
  p.level.clear();
  std::vector<std::pair<std::uint32_t, std::uint32_t>> queue{{0, m}};
  auto slot = [&](std::uint32_t a, std::uint32_t b) -> std::uint32_t {
    if (b - a == 1) return a;
    queue.emplace_back(a, b);
    return m + static_cast<std::uint32_t>(queue.size() - 1);
  };
  for (std::size_t j = 0; j < queue.size();) {
    const std::size_t end = queue.size();
    p.level.push_back(static_cast<std::uint32_t>(j));
    for (; j < end; ++j) {
      const auto [a, b] = queue[j];
      const std::uint32_t mid = PairwiseMid(a, b);
      p.left.push_back(slot(a, mid));
      p.right.push_back(slot(mid, b));
    }
  }
}

// The plans of the regions one pairwise recursion reaches (at most three sizes), built once
// each (also core/orders/shape.hpp's level walk).
struct PairwisePlans {
  const PairwisePlan& Plan(std::uint32_t m) {
    for (const PairwisePlan& p : plans)
      if (p.m == m) return p;
    PairwisePlan& p = plans[next++ % plans.size()];
    BuildPairwisePlan(m, p);
    return p;
  }
  std::array<PairwisePlan, 3> plans;
  std::size_t next = 0;
};

}  // namespace carrier
