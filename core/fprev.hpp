// core/fprev.hpp: recover the merge tree of a black-box sum from masked inputs (FPRev).
//
// Method: Xie et al., "FPRev: Revealing the order of floating-point summation" (arXiv
// 2411.00442). For inputs i != j set x_i = +M, x_j = -M and every other input to 1, with M
// so large that M absorbs any partial sum of ones (core/tree_hash.hpp, MaskMagnitude). A sum
// that is a binary tree of rounded additions then returns exactly n - |LCA(i, j)|: the ones
// inside the subtree where +M and -M meet are absorbed, the ones outside it are added
// exactly. So one call reveals the size of the lowest common ancestor of two inputs.
//
// Recovery (FPRev's recursive form): for a cluster S known to be a subtree, let i = min S and
// ask for |LCA(i, j)| for every other j in S (|S| - 1 calls, sent as one batch). The distinct
// sizes s_1 < ... < s_m are the ancestors of i inside S; the j with size s_k form G_k, the
// sibling subtree at the k-th ancestor, and |G_k| must equal s_k - s_{k-1} (s_0 = 1), which
// checks that the target is such a tree at all. The ancestor chain is
// ((i + T(G_1)) + T(G_2)) + ..., i's side on the left (it holds the smaller index), and each
// G_k with two or more inputs is recovered the same way. Calls: n - 1 for a sequential sum,
// about (n/2) log2 n for a balanced one, at most n(n-1)/2.
//
// Limits (documented, checked where possible): the target must be a tree of binary
// additions over exactly these n values in one format with p significand bits and
// n < 2^p; M must be finite (fp32 n < 2^(127-25), fp64 more). An answer that is not an
// integer in [0, n - 2], or groups of the wrong size, is reported as "not a summation tree"
// (compensated sums, multi-term fused adders, value-dependent orders). Addition is
// commutative, so operand order inside a node is not observable; the recovered tree puts the
// operand holding the smaller index on the left, as every MergeTree does. max, and anything
// else exact in every order, has no observable tree; log-sum-exp's terms exp(x - m) are
// positive, so they cannot cancel and the masks do not apply.
//
// ToMergeTree turns the recovered binary tree into a MergeTree: every left-deep run of single
// inputs whose indices increase by a constant stride becomes one push chain (numpy's eight
// accumulators are chains of stride 8), everything else combines; `permutes` is set when a
// combine interleaves.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/merge_tree.hpp"
#include "core/schedule.hpp"
#include "core/tree_hash.hpp"

namespace carrier {

class ProbeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Answers a batch: for each j in js, the target's result on the mask (i -> +M, j -> -M).
using MaskQuery =
    std::function<std::vector<double>(std::uint64_t i, const std::vector<std::uint64_t>& js)>;

struct ProbeStats {
  std::uint64_t calls = 0;    // target evaluations
  std::uint64_t batches = 0;  // MaskQuery invocations
};

// The recovered binary tree over inputs 0..n-1 (BinaryTree of core/tree_hash.hpp).
inline BinaryTree RecoverSumTree(std::uint64_t n, const MaskQuery& query, ProbeStats& stats) {
  BinaryTree t;
  t.n = n;
  if (n == 0) return t;
  if (n == 1) {
    t.root = 0;
    return t;
  }
  // Work list of clusters; each item writes its subtree's root id into *slot when done.
  struct Item {
    std::vector<std::uint64_t> members;  // sorted
    std::uint64_t slot;                  // index into roots
  };
  std::vector<std::uint64_t> roots(1, tree_hash_detail::kAbsent);
  // Internal nodes are created after their children; record pending combines and resolve
  // them once every cluster is recovered.
  struct Pending {
    std::uint64_t left_slot;   // slot of the left operand (ancestor chain so far)
    std::uint64_t right_slot;  // slot of T(G_k)
    std::uint64_t out_slot;
  };
  std::vector<Pending> pending;
  std::vector<Item> work;
  {
    std::vector<std::uint64_t> all(n);
    for (std::uint64_t i = 0; i < n; ++i) all[i] = i;
    work.push_back({std::move(all), 0});
  }
  auto new_slot = [&] {
    roots.push_back(tree_hash_detail::kAbsent);
    return roots.size() - 1;
  };
  while (!work.empty()) {
    Item item = std::move(work.back());
    work.pop_back();
    const std::vector<std::uint64_t>& s = item.members;
    if (s.size() == 1) {
      roots[item.slot] = s[0];
      continue;
    }
    const std::uint64_t i = s[0];
    std::vector<std::uint64_t> js(s.begin() + 1, s.end());
    const std::vector<double> got = query(i, js);
    stats.calls += js.size();
    stats.batches += 1;
    if (got.size() != js.size()) throw ProbeError("the target answered the wrong number of calls");
    std::map<std::uint64_t, std::vector<std::uint64_t>> groups;  // |LCA| -> members
    for (std::size_t q = 0; q < js.size(); ++q) {
      const double v = got[q];
      if (!(v >= 0) || v != std::floor(v) || v > static_cast<double>(n - 2))
        throw ProbeError("not a summation tree: the mask +M at " + std::to_string(i) + ", -M at " +
                         std::to_string(js[q]) + " gave " + std::to_string(v) +
                         ", not an integer in [0, n - 2]");
      const std::uint64_t size = n - static_cast<std::uint64_t>(v);
      groups[size].push_back(js[q]);
    }
    std::uint64_t prev = 1;
    std::uint64_t left_slot = new_slot();
    roots[left_slot] = i;
    for (auto& [size, members] : groups) {
      if (size <= prev || members.size() != size - prev)
        throw ProbeError("not a summation tree: " + std::to_string(members.size()) +
                         " inputs meet input " + std::to_string(i) + " in a subtree of " +
                         std::to_string(size) + ", which needs " + std::to_string(size - prev));
      prev = size;
      const std::uint64_t right_slot = new_slot();
      std::sort(members.begin(), members.end());
      work.push_back({std::move(members), right_slot});
      const std::uint64_t out = new_slot();
      pending.push_back({left_slot, right_slot, out});
      left_slot = out;
    }
    if (prev != s.size())
      throw ProbeError("not a summation tree: the cluster of input " + std::to_string(i) + " has " +
                       std::to_string(s.size()) + " inputs but its top LCA covers " +
                       std::to_string(prev));
    // The cluster's root is the last ancestor: alias item.slot to it by a pending copy.
    pending.push_back({left_slot, tree_hash_detail::kAbsent, item.slot});
  }
  // Resolve slots depth first: a pending combine's node is made once both operands exist,
  // so internal nodes come out children first (what ComputeClusters and ToMergeTree need).
  std::vector<std::uint64_t> producer(roots.size(), tree_hash_detail::kAbsent);
  for (std::size_t k = 0; k < pending.size(); ++k) producer[pending[k].out_slot] = k;
  std::vector<std::uint64_t> stack{0};
  while (!stack.empty()) {
    const std::uint64_t slot = stack.back();
    if (roots[slot] != tree_hash_detail::kAbsent) {
      stack.pop_back();
      continue;
    }
    if (producer[slot] == tree_hash_detail::kAbsent) throw ProbeError("internal: unresolved slot");
    const Pending& p = pending[producer[slot]];
    const std::uint64_t l = roots[p.left_slot];
    if (l == tree_hash_detail::kAbsent) {
      stack.push_back(p.left_slot);
      continue;
    }
    if (p.right_slot == tree_hash_detail::kAbsent) {
      roots[slot] = l;
      continue;
    }
    const std::uint64_t r = roots[p.right_slot];
    if (r == tree_hash_detail::kAbsent) {
      stack.push_back(p.right_slot);
      continue;
    }
    t.internal.push_back({{l, r}, false});
    roots[slot] = n + t.internal.size() - 1;
  }
  t.root = roots[0];
  return t;
}

// The binary tree as a MergeTree (chains compressed; see the contract above).
inline MergeTree ToMergeTree(const BinaryTree& b, const std::string& schedule_name) {
  using tree_hash_detail::kAbsent;
  MergeTree t;
  t.n = b.n;
  t.schedule = schedule_name;
  if (b.root == kAbsent) return t;
  // Pass 1: which internal nodes extend a chain (left operand a chain run, right an input
  // continuing its stride)? run[x] = (first, count, stride) for nodes that are chain runs.
  struct Run {
    std::uint64_t first = 0, count = 0, stride = 1;
    bool is_run = false;
  };
  const std::size_t total = b.n + b.internal.size();
  std::vector<Run> run(total);
  for (std::uint64_t i = 0; i < b.n; ++i) run[i] = {i, 1, 1, true};
  std::vector<std::uint64_t> parent(total, kAbsent);
  for (std::size_t m = 0; m < b.internal.size(); ++m) {
    const auto& ch = b.internal[m].children;
    for (std::uint64_t c : ch) parent[c] = b.n + m;
    if (ch.size() != 2 || b.internal[m].tile) continue;
    const Run& l = run[ch[0]];
    const std::uint64_t r = ch[1];
    if (!l.is_run || r >= b.n) continue;
    const std::uint64_t last = l.first + (l.count - 1) * l.stride;
    if (r <= last) continue;
    if (l.count == 1) {
      run[b.n + m] = {l.first, 2, r - l.first, true};
    } else if (r - last == l.stride) {
      run[b.n + m] = {l.first, l.count + 1, l.stride, true};
    }
  }
  // A chain is a maximal run: a run node whose parent does not extend it.
  auto extends = [&](std::uint64_t node) {  // both operands of a run node belong to its run
    const std::uint64_t p = parent[node];
    return p != kAbsent && run[p].is_run;
  };
  std::vector<std::uint64_t> id(total, kAbsent);
  std::vector<std::uint64_t> chain_nodes;
  for (std::size_t x = 0; x < total; ++x)
    if (run[x].is_run && !extends(x)) chain_nodes.push_back(x);
  std::sort(chain_nodes.begin(), chain_nodes.end(),
            [&](std::uint64_t a, std::uint64_t c) { return run[a].first < run[c].first; });
  for (std::uint64_t x : chain_nodes) {
    id[x] = t.chains.size();
    t.chains.push_back(
        {run[x].first, run[x].count, run[x].count > 1 ? run[x].stride : 1, ChainMode::kPush});
  }
  for (std::size_t m = 0; m < b.internal.size(); ++m) {
    const std::uint64_t node = b.n + m;
    if (run[node].is_run) continue;  // inside (or the top of) a chain
    const auto& ch = b.internal[m].children;
    if (ch.size() != 2) throw ProbeError("ToMergeTree: multi-operand nodes are not supported");
    const std::uint64_t l = id[ch[0]], r = id[ch[1]];
    t.combines.push_back({l, r});
    id[node] = t.chains.size() + t.combines.size() - 1;
  }
  t.permutes = false;
  if (!ValidateTree(t).empty()) t.permutes = true;
  if (std::string why = ValidateTree(t); !why.empty())
    throw ProbeError("ToMergeTree: the recovered tree does not validate: " + why);
  return t;
}

}  // namespace carrier
