// core/canonical_tree.hpp: WG21 P4016R0's canonical parallel reduction as a merge tree.
//
// Normative source: P4016R0 "Canonical Parallel Reduction: A Fixed Expression Structure for
// Run-To-Run Consistency" (A. Drakeford, 2026-02-23), sections 4.2-4.5. For lane count L >= 1
// and inputs X[0..N):
//   lanes     element i goes to lane i mod L, in input order; every lane has K = ceil(N / L)
//             positions, the positions past N being absent (a ragged lane has one trailing
//             absent position; with N < L whole lanes are absent);
//   tree      CANONICAL_TREE_EVAL over a lane's K positions: pair neighbours (2i, 2i+1) left
//             to right, carry an odd last element up to the next round, repeat until one is
//             left (the shift-reduce / binary-counter tree of Dalton, Wang & Blainey 2014);
//             COMBINE with an absent operand returns the other one without applying op;
//   stage 2   the L lane results, in lane order, by the same tree;
//   init      op(init, R) once, init on the left; with N = 0 the result is init.
// carrier's init is the carrier's Identity: the tree ends in Combine(empty chain, R), which
// adds N - 1 + 1 = N combines, as the paper counts with an init (its 4.2.2).
// canonical:L:bisect replaces CANONICAL_TREE_EVAL by the paper's Appendix O alternative,
// CANONICAL_TREE_EVAL_RECURSIVE: split k positions at m = floor(k / 2) (the LEFT part is the
// smaller one, unlike carrier's `pairwise`, whose left half takes the extra element), absent
// positions included. The two trees agree when k is a power of two and differ otherwise
// (the paper's k = 5 example: ((e0 e1)(e2 e3)) e4 against (e0 e1)(e2 (e3 e4))). With absent
// positions the recursive tree is not the tree over the present elements alone (lane
// [a, b, c, -]: (a b) c, but [a, b, c]: a (b c)); the iterative one is (the paper's 4.4.4).
//
// Every input is its own chain (node id i = input i), chain N is the empty init chain. The
// tree interleaves lanes, so it sets `permutes` when L > 1 and N > L: ReplayOracle then refuses
// carriers whose Combine is not commutative, as for strided:K (carrier's Combine takes the
// earlier segment on the left, which a cross-lane combine is not).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/merge_tree.hpp"

namespace carrier {

namespace canonical_detail {

inline constexpr std::uint64_t kAbsent = std::numeric_limits<std::uint64_t>::max();

// P4016 4.2.2's COMBINE on node ids: an absent operand passes the other one through.
inline std::uint64_t Combine(tree_detail::Builder& b, std::uint64_t x, std::uint64_t y) {
  if (x == kAbsent) return y;
  if (y == kAbsent) return x;
  return b.AddCombine(x, y);
}

// CANONICAL_TREE_EVAL (4.2.3): rounds of neighbour pairs, the odd last one carried.
inline std::uint64_t IterativePairwise(tree_detail::Builder& b, std::vector<std::uint64_t> w) {
  while (w.size() > 1) {
    const std::size_t n = w.size(), h = n / 2;
    std::vector<std::uint64_t> next;
    next.reserve(h + 1);
    for (std::size_t i = 0; i < h; ++i) next.push_back(Combine(b, w[2 * i], w[2 * i + 1]));
    if (n % 2 == 1) next.push_back(w[n - 1]);
    w = std::move(next);
  }
  return w[0];
}

// CANONICAL_TREE_EVAL_RECURSIVE (Appendix O.1) over w[lo, hi).
inline std::uint64_t RecursiveBisection(tree_detail::Builder& b,  // NOLINT(misc-no-recursion)
                                        const std::vector<std::uint64_t>& w, std::size_t lo,
                                        std::size_t hi) {
  if (hi - lo == 1) return w[lo];
  const std::size_t m = lo + (hi - lo) / 2;
  const std::uint64_t left = RecursiveBisection(b, w, lo, m);
  const std::uint64_t right = RecursiveBisection(b, w, m, hi);
  return Combine(b, left, right);
}

inline std::uint64_t TreeEval(tree_detail::Builder& b, std::vector<std::uint64_t> w, bool bisect) {
  return bisect ? RecursiveBisection(b, w, 0, w.size()) : IterativePairwise(b, std::move(w));
}

}  // namespace canonical_detail

// Largest lane count canonical:L builds (its stage 2 has L positions, absent ones included).
inline constexpr std::uint64_t kCanonicalMaxLanes = std::uint64_t{1} << 24;

// canonical:L[:bisect] over n inputs; `text` is the schedule's canonical text.
inline MergeTree BuildCanonicalTree(std::uint64_t lanes, bool bisect, const std::string& text,
                                    std::uint64_t n) {
  using canonical_detail::kAbsent;
  if (lanes == 0 || lanes > kCanonicalMaxLanes)
    throw ScheduleError("bad schedule '" + text + "': L must be in [1, 2^24]");
  tree_detail::Builder b(n, text);
  if (n == 0) return b.Take();  // P4016 4.5 case 1: the result is init (Identity)
  for (std::uint64_t i = 0; i < n; ++i) b.AddChain(i, 1);
  const std::uint64_t init = b.AddChain(0, 0);
  const std::uint64_t k = (n + lanes - 1) / lanes;
  std::vector<std::uint64_t> lane_results(lanes, kAbsent);
  for (std::uint64_t j = 0; j < lanes && j < n; ++j) {
    std::vector<std::uint64_t> y(k, kAbsent);
    for (std::uint64_t t = 0; t < k && j + t * lanes < n; ++t) y[t] = j + t * lanes;
    lane_results[j] = canonical_detail::TreeEval(b, std::move(y), bisect);
  }
  const std::uint64_t r = canonical_detail::TreeEval(b, std::move(lane_results), bisect);
  b.AddCombine(init, r);
  MergeTree t = b.Take();
  t.permutes = lanes > 1 && n > lanes;
  return t;
}

}  // namespace carrier
