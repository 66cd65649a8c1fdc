// core/adaptive_tree.hpp: the data-dependent merge orders of Higham 1993, as MergeTrees.
//
// N. J. Higham, "The accuracy of floating point summation", SIAM J. Sci. Comput. 14(4), 1993,
// compares recursive summation under several orderings. They depend on the data (two of them
// also on the values computed so far), not on n alone, so they are not Schedules
// (core/schedule.hpp); this header builds their trees from the input:
//
//   increasing recursive summation in order of increasing |x_i| (ties: lower index first)
//   decreasing recursive summation in order of decreasing |x_i| (ties: lower index first)
//   insertion  the values sorted by increasing magnitude; the two of smallest magnitude are
//              removed, added, and their computed sum is inserted back in magnitude order;
//              repeated until one value is left (a Huffman-like tree of n - 1 combines).
//   psum       recursive summation in the order that makes each computed partial sum as small
//              as possible: S_0 = 0, and step k adds the remaining x_i minimising
//              |fl(S_{k-1} + x_i)| (so the first term is the one of least magnitude).
//
// Contract of BuildAdaptiveTree(kind, x, add):
// - `add(a, b)` is the working arithmetic's rounded a + b on doubles holding working-format
//   values; the decisions use it, so the tree is the one that arithmetic would follow, and
//   ReplayOracle of a sum carrier in that arithmetic over the tree reproduces the simulated values
//   (tests/core/test_adaptive_tree.cpp checks this bit for bit).
// - Ties are broken deterministically: insertion's equal magnitudes by the lower node id (an
// input's id is
//   its index; the k-th computed sum has id n + k, so a new sum goes after older equal ones);
//   in psum, equal |fl(S + x_i)| by the lower index i.
// - The tree has n single-input chains (chain i = input i) and n - 1 combines. As in every
//   MergeTree, a combine's left operand is the one whose inputs start first (ValidateTree);
//   the order of the additions is the order's own. It sets `permutes`, so ReplayOracle refuses
//   carriers whose Combine is not commutative; for sums (bitwise commutative) the replayed
//   additions are exactly the ones the decisions computed. n = 0 gives the empty tree, n = 1
//   one chain.
// - Cost: increasing/decreasing O(n log n) comparisons (no `add`); insertion O(n log n)
//   additions and heap steps; psum O(n^2) additions (n = 4096 is about 8e6 calls of `add`).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <queue>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/merge_tree.hpp"
#include "core/schedule.hpp"

namespace carrier {

enum class AdaptiveOrder { kIncreasing, kDecreasing, kInsertion, kPsum };

// "increasing", "decreasing", "insertion" or "psum" -> the order; anything else is not one.
inline bool ParseAdaptiveOrder(std::string_view text, AdaptiveOrder& out) {
  if (text == "increasing") {
    out = AdaptiveOrder::kIncreasing;
    return true;
  }
  if (text == "decreasing") {
    out = AdaptiveOrder::kDecreasing;
    return true;
  }
  if (text == "insertion") {
    out = AdaptiveOrder::kInsertion;
    return true;
  }
  if (text == "psum") {
    out = AdaptiveOrder::kPsum;
    return true;
  }
  return false;
}

inline const char* ToString(AdaptiveOrder o) {
  switch (o) {
    case AdaptiveOrder::kIncreasing:
      return "increasing";
    case AdaptiveOrder::kDecreasing:
      return "decreasing";
    case AdaptiveOrder::kInsertion:
      return "insertion";
    case AdaptiveOrder::kPsum:
      break;
  }
  return "psum";
}

template <class Add>
MergeTree BuildAdaptiveTree(AdaptiveOrder order, const std::vector<double>& x, Add add) {
  const std::uint64_t n = x.size();
  MergeTree t;
  t.n = n;
  t.schedule = ToString(order);
  t.permutes = true;
  for (std::uint64_t i = 0; i < n; ++i) t.chains.push_back({i, 1, 1, ChainMode::kPush});
  if (n < 2) return t;
  // first[id]: the first input under node id, so each combine lists its operands in input
  // order; Combine appends the combine and returns its node id.
  std::vector<std::uint64_t> first(n);
  first.reserve(2 * n - 1);
  for (std::uint64_t i = 0; i < n; ++i) first[i] = i;
  auto Combine = [&](std::uint64_t a, std::uint64_t b) {
    if (first[a] > first[b]) std::swap(a, b);
    t.combines.push_back({a, b});
    first.push_back(first[a]);
    return n + t.combines.size() - 1;
  };
  if (order == AdaptiveOrder::kIncreasing || order == AdaptiveOrder::kDecreasing) {
    std::vector<std::uint64_t> idx(n);
    for (std::uint64_t i = 0; i < n; ++i) idx[i] = i;
    const bool up = order == AdaptiveOrder::kIncreasing;
    std::stable_sort(idx.begin(), idx.end(), [&](std::uint64_t a, std::uint64_t b) {
      return up ? std::fabs(x[a]) < std::fabs(x[b]) : std::fabs(x[a]) > std::fabs(x[b]);
    });
    std::uint64_t acc = idx[0];
    for (std::uint64_t k = 1; k < n; ++k) acc = Combine(acc, idx[k]);
    return t;
  }
  if (order == AdaptiveOrder::kInsertion) {
    // Min-heap on (|value|, node id): the smallest magnitude first, the older node on ties.
    using Item = std::pair<double, std::uint64_t>;
    std::vector<double> value(x);
    value.reserve(2 * n - 1);
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
    for (std::uint64_t i = 0; i < n; ++i) heap.push({std::fabs(x[i]), i});
    while (heap.size() > 1) {
      const std::uint64_t a = heap.top().second;
      heap.pop();
      const std::uint64_t b = heap.top().second;
      heap.pop();
      value.push_back(add(value[a], value[b]));
      const std::uint64_t id = Combine(a, b);
      heap.push({std::fabs(value[id]), id});
    }
    return t;
  }
  // psum: greedy; `left` lists the inputs not yet added (in index order, so ties go low).
  std::vector<std::uint64_t> left(n);
  for (std::uint64_t i = 0; i < n; ++i) left[i] = i;
  double s = 0;
  std::uint64_t acc = 0;  // node id of the running sum
  for (std::uint64_t k = 0; k < n; ++k) {
    std::size_t best = 0;
    double best_sum = add(s, x[left[0]]), best_mag = std::fabs(best_sum);
    for (std::size_t j = 1; j < left.size(); ++j) {
      const double v = add(s, x[left[j]]);
      if (std::fabs(v) < best_mag) {
        best = j;
        best_sum = v;
        best_mag = std::fabs(v);
      }
    }
    const std::uint64_t chosen = left[best];
    left.erase(left.begin() + static_cast<std::ptrdiff_t>(best));
    if (k == 0) {
      acc = chosen;  // S_1 = x_chosen exactly (0 + x)
      s = x[chosen];
      continue;
    }
    acc = Combine(acc, chosen);
    s = best_sum;
  }
  return t;
}

}  // namespace carrier
