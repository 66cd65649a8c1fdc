// core/invariance.hpp: invariance predicates of schedule families, each decided on trees and
// answered with a witness input when it fails.
//
// A family maps a context to the tree one row is reduced by:
//   splits:S           a fixed number of splits: S chunks [c m / S, (c+1) m / S) of the m
//                      positions the kernel sees, chunk states merged in order (omp:S);
//   splitsize:T[:pairwise]  a fixed split size: chunks of T positions (blocked:T[:pairwise]);
//   heuristic:W        FlashAttention-style split-KV: W workers shared by the batch, so a batch
//                      of B rows gets max(1, W / B) splits per row (omp:max(1, W / B));
//   switch:T1@N:T2     a split size chosen by the number of tokens the call processes: T1
//                      below N tokens, T2 from N on (blocked:T1 / blocked:T2), as vLLM
//                      issue 27433 reports for a cold and a warm prefix cache (the kernel
//                      picks its block size from the token count). A batch of B rows of m
//                      positions is B m tokens; a padded or offset row is its m positions;
//   any other text     a schedule used as it is.
// Predicates, for a row of n real inputs (Sum, binary form: core/tree_hash.hpp):
//   batch      the row's tree does not depend on the batch size B = 1 .. max_batch;
//   padding    reducing the row padded with p identity inputs (masked keys, zero padding) to
//              n + p positions, p = 0 .. max_pad, gives the row's tree once the pads are
//              dropped (the identity law) - a fixed split size is invariant with the seq outer
//              order, a fixed split count is not;
//   alignment  the row starting at offset o = 0 .. max_offset - 1 of a buffer whose chunk grid
//              is anchored at the buffer start (o + n positions) gives the same tree over the
//              row (chunks cut where the grid falls).
// A failure names the two contexts and carries FirstDifference's inputs i, j: the FPRev mask
// on the row (x_i = +M, x_j = -M, other real inputs 1, pads and prefix 0) gives different row
// results in the two contexts.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/merge_tree.hpp"
#include "core/schedule.hpp"
#include "core/tree_hash.hpp"

namespace carrier {

// The schedule text of family `family` for a kernel that sees m positions of a row in a batch
// of B rows, `tokens` positions in all (B m). Throws std::invalid_argument for a bad number.
inline std::string FamilySchedule(const std::string& family, std::uint64_t batch,
                                  std::uint64_t tokens = 0) {
  auto arg = [&](std::size_t prefix) { return family.substr(prefix); };
  auto count = [&](const std::string& text) {
    const auto bad = [&] {
      return std::invalid_argument("'" + text + "' is not a positive count");
    };
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) throw bad();
    std::size_t used = 0;
    unsigned long long v = 0;
    try {
      v = std::stoull(text, &used);
    } catch (const std::exception&) {
      throw bad();
    }
    if (v == 0) throw bad();
    return static_cast<std::uint64_t>(v);
  };
  if (family.rfind("splits:", 0) == 0) return "omp:" + arg(7) + ":seq";
  if (family.rfind("splitsize:", 0) == 0) {
    const std::string rest = arg(10);
    const auto colon = rest.find(':');
    if (colon == std::string::npos) return "blocked:" + rest;
    return "blocked:" + rest.substr(0, colon) + ":" + rest.substr(colon + 1);
  }
  if (family.rfind("heuristic:", 0) == 0) {
    const std::uint64_t w = count(arg(10));
    return "omp:" +
           std::to_string(std::max<std::uint64_t>(1, w / std::max<std::uint64_t>(1, batch))) +
           ":seq";
  }
  if (family.rfind("switch:", 0) == 0) {
    const std::string rest = arg(7);
    const auto at = rest.find('@');
    const auto colon = rest.find(':', at == std::string::npos ? 0 : at);
    if (at == std::string::npos || colon == std::string::npos)
      throw std::invalid_argument("switch needs switch:T1@N:T2, got '" + family + "'");
    const std::uint64_t below = count(rest.substr(0, at));
    const std::uint64_t threshold = count(rest.substr(at + 1, colon - at - 1));
    const std::uint64_t above = count(rest.substr(colon + 1));
    return "blocked:" + std::to_string(tokens < threshold ? below : above);
  }
  return family;
}

// The binary tree of b restricted to inputs [lo, hi), renumbered from 0 (dropped inputs are
// identity inputs: their nodes vanish, a node left with one operand is that operand).
inline BinaryTree RestrictTree(const BinaryTree& b, std::uint64_t lo, std::uint64_t hi) {
  using tree_hash_detail::kAbsent;
  BinaryTree r;
  r.n = hi - lo;
  std::vector<std::uint64_t> id(b.n + b.internal.size(), kAbsent);
  for (std::uint64_t i = lo; i < hi && i < b.n; ++i) id[i] = i - lo;
  for (std::size_t m = 0; m < b.internal.size(); ++m) {
    std::vector<std::uint64_t> kept;
    for (std::uint64_t c : b.internal[m].children)
      if (id[c] != kAbsent) kept.push_back(id[c]);
    if (kept.size() == 1 && !b.internal[m].tile) {
      id[b.n + m] = kept[0];
    } else if (!kept.empty()) {
      r.internal.push_back({std::move(kept), b.internal[m].tile});
      id[b.n + m] = r.n + r.internal.size() - 1;
    }
  }
  if (b.root != kAbsent) r.root = id[b.root];
  return r;
}

struct InvarianceResult {
  bool invariant = true;
  std::string context_a, context_b;          // the two contexts that differ
  MergeTree tree_a, tree_b;                  // their trees over all positions each kernel sees
  std::uint64_t offset_a = 0, offset_b = 0;  // where the row starts in each
  TreeDifference diff;                       // row-relative inputs i, j
  std::uint64_t checked = 0;                 // contexts compared
};

// One context of a property: the tree over every position its kernel sees (tree.n) and where
// the row's n inputs start in it (the other positions are identity inputs).
struct InvarianceContext {
  std::string name;
  MergeTree tree;
  std::uint64_t offset = 0;
};

// Context k of `property` ("batch": batch size k; "padding": k pads; "alignment": offset k).
inline InvarianceContext MakeInvarianceContext(const std::string& property,
                                               const std::string& family, std::uint64_t n,
                                               std::uint64_t k) {
  if (property == "batch") {
    const std::string s = FamilySchedule(family, k, k * n);
    return {"batch " + std::to_string(k) + " (" + s + ")", BuildTree(s, n), 0};
  }
  const std::string s = FamilySchedule(family, 1, n + k);
  if (property == "padding")
    return {"padding " + std::to_string(k) + " (" + s + " over " + std::to_string(n + k) + ")",
            BuildTree(s, n + k), 0};
  return {"offset " + std::to_string(k) + " (" + s + " over " + std::to_string(k + n) + ")",
          BuildTree(s, k + n), k};
}

// The contexts k = first .. last that CheckInvariance compares, the first being the base.
inline std::pair<std::uint64_t, std::uint64_t> InvarianceContextRange(const std::string& property,
                                                                      std::uint64_t limit) {
  const std::uint64_t first = property == "batch" ? 1 : 0;
  const std::uint64_t last = property == "alignment" ? (limit ? limit - 1 : 0) : limit;
  return {first, last};
}

// The row's own tree in a context: its tree restricted to the row, binary form.
inline BinaryTree InvarianceRowTree(const InvarianceContext& c, std::uint64_t n) {
  return RestrictTree(ToBinaryTree(c.tree), c.offset, c.offset + n);
}

// property: "batch", "padding" or "alignment"; limit: max batch, max pad, or offsets.
inline InvarianceResult CheckInvariance(const std::string& property, const std::string& family,
                                        std::uint64_t n, std::uint64_t limit) {
  InvarianceResult res;
  auto make = [&](std::uint64_t k) { return MakeInvarianceContext(property, family, n, k); };
  const auto [first, last] = InvarianceContextRange(property, limit);
  InvarianceContext base = make(first);
  const BinaryTree base_row = InvarianceRowTree(base, n);
  for (std::uint64_t k = first + 1; k <= last; ++k) {
    InvarianceContext c = make(k);
    ++res.checked;
    const BinaryTree row = InvarianceRowTree(c, n);
    const TreeDifference d = FirstDifference(base_row, row);
    if (!d.found) continue;
    res.invariant = false;
    res.context_a = base.name;
    res.context_b = c.name;
    res.tree_a = std::move(base.tree);
    res.tree_b = std::move(c.tree);
    res.offset_a = base.offset;
    res.offset_b = c.offset;
    res.diff = d;
    return res;
  }
  return res;
}

}  // namespace carrier
