// core/tree_hash.hpp: the identity of a merge tree: a canonical hash, the binary form, and a
// constructed input on which two different trees give different sums.
//
// Two forms of a tree, each hashed Merkle-style (a node's hash from its kind and its
// children's hashes), so the hash does not depend on node numbering, on the order in which
// independent combines are listed, or on how a chain's index list is stored (stride):
//   TreeForm::kExact   the expression as ReplayOracle evaluates it for any carrier: a push chain
//                      Push(...Push(Identity, x_a)..., x_c) with its index list, a tile chain
//                      LiftTile(x_a, ..., x_c), an empty chain Identity, Combine(L, R) with
//                      operand order. Equal hashes: the same bits for every carrier.
//   TreeForm::kBinary  the expression under the laws a carrier declares with
//                      kPushIsCombineLift and the identity law: Push(Identity, x) = Lift(x),
//                      Push(s, x) = Combine(s, Lift(x)), Combine(Identity, s) = s =
//                      Combine(s, Identity). What is left is a binary tree over the inputs
//                      (plus atomic tile lifts), which is all a black-box probe can observe
//                      (core/fprev.hpp). seq and blocked:1 have the same binary hash, not the
//                      same exact hash. (Signed zeros aside: Sum's Push(Identity, -0) = +0.)
// Fused chains (matrix-unit schedules, core/mma.hpp) are a third node kind, hashed with their
// node's parameters (terms k, input, F, alignment, output, stages) and inputs in order, in both
// forms, so two fused trees of the same shape but different (k, F, rounding) hash differently.
//
// TreeHash(t) is 16 lower-case hex digits (64 bits of a SplitMix-mixed Merkle hash; the
// kind tags and n are part of it). Not cryptographic: it names bit-classes of schedules.
//
// Witness (sums): for binary trees A != B over the same n, FirstDifference finds the smallest
// cluster (a node's input set) of A that is no node of B; its two children are clusters of B
// too, so for i in one child and j in the other the LCA of {i, j} in B strictly contains the
// LCA in A. SumWitness(i, j) is FPRev's mask: x_i = +M, x_j = -M, every other input 1, with
// M = 2^(p + ceil(log2(n + 1)) + 1) so that M absorbs any partial sum of ones; a tree then
// returns n - |LCA(i, j)| exactly, and A and B differ by construction (verified by ReplayOracle).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/merge_tree.hpp"
#include "core/orders/random.hpp"

namespace carrier {

enum class TreeForm { kExact, kBinary };

namespace tree_hash_detail {

inline constexpr std::uint64_t kAbsent = std::numeric_limits<std::uint64_t>::max();
// Kind tags (arbitrary distinct constants).
inline constexpr std::uint64_t kTagLeaf = 0x6c656166ULL, kTagPush = 0x70757368ULL,
                               kTagTile = 0x74696c65ULL, kTagIdentity = 0x6964656eULL,
                               kTagCombine = 0x636f6d62ULL, kTagRoot = 0x726f6f74ULL,
                               kTagFused = 0x66757365ULL;

inline constexpr std::uint64_t kAbsorbOffset = 0x632be59bd9b4e019ULL;
inline std::uint64_t Mix(std::uint64_t x) { return tree_detail::Mix(x); }
inline std::uint64_t Absorb(std::uint64_t h, std::uint64_t v) {
  return Mix(h ^ Mix(v + kAbsorbOffset));
}
inline std::uint64_t CombineHash(std::uint64_t l, std::uint64_t r) {
  return Absorb(Absorb(Mix(kTagCombine), l), r);
}
inline std::uint64_t LeafHash(std::uint64_t i) { return Absorb(Mix(kTagLeaf), i); }

}  // namespace tree_hash_detail

// The 64-bit hash of tree t in the given form.
inline std::uint64_t TreeHash64(const MergeTree& t, TreeForm form = TreeForm::kExact) {
  using namespace tree_hash_detail;
  std::vector<std::uint64_t> h(t.NodeCount(), kAbsent);
  for (std::size_t k = 0; k < t.chains.size(); ++k) {
    const Chain& c = t.chains[k];
    const std::uint64_t stride = c.count > 1 ? c.stride : 1;
    if (c.mode == ChainMode::kFused) {  // a matrix unit's chain of fused steps (core/mma.hpp)
      const MmaNode& f = t.fused;
      std::uint64_t x = Absorb(Absorb(Absorb(Mix(kTagFused), f.terms), c.count),
                               (static_cast<std::uint64_t>(f.input) << 32) ^
                                   (static_cast<std::uint64_t>(f.align) << 24) ^
                                   (static_cast<std::uint64_t>(f.output) << 16) ^
                                   (static_cast<std::uint64_t>(f.two_stage) << 8) ^
                                   static_cast<std::uint64_t>(f.frac_bits + 128));
      if (f.group) x = Absorb(x, 0x6700000000ULL | f.group);  // group nodes only: old hashes hold
      for (std::uint64_t j = 0; j < c.count; ++j) x = Absorb(x, c.first + j * stride);
      h[k] = x;
    } else if (c.mode == ChainMode::kLiftTile && c.count > 0) {
      std::uint64_t x = Absorb(Mix(kTagTile), c.count);
      for (std::uint64_t j = 0; j < c.count; ++j) x = Absorb(x, c.first + j * stride);
      h[k] = x;
    } else if (form == TreeForm::kExact) {
      std::uint64_t x = c.count == 0 ? Mix(kTagIdentity) : Absorb(Mix(kTagPush), c.count);
      for (std::uint64_t j = 0; j < c.count; ++j) x = Absorb(x, c.first + j * stride);
      h[k] = x;
    } else if (c.count > 0) {  // binary: Lift(x_a), then Combine(., Lift(x)) per push
      std::uint64_t x = LeafHash(c.first);
      for (std::uint64_t j = 1; j < c.count; ++j)
        x = CombineHash(x, LeafHash(c.first + j * stride));
      h[k] = x;
    }  // binary: an empty chain is absent (the identity law)
  }
  for (std::size_t m = 0; m < t.combines.size(); ++m) {
    const std::uint64_t l = h[t.combines[m].left], r = h[t.combines[m].right];
    std::uint64_t& out = h[t.chains.size() + m];
    if (form == TreeForm::kBinary && (l == kAbsent || r == kAbsent)) {
      out = l == kAbsent ? r : l;
    } else {
      out = CombineHash(l, r);
    }
  }
  const std::uint64_t root = t.Empty() ? Mix(kTagIdentity) : h[t.Root()];
  return Absorb(Absorb(Mix(kTagRoot ^ (form == TreeForm::kBinary ? 1 : 0)), t.n), root);
}

// TreeHash64 as 16 hex digits: the tree's name for bit-classes (carrier tree, sweep rows).
inline std::string TreeHash(const MergeTree& t, TreeForm form = TreeForm::kExact) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(TreeHash64(t, form)));
  return buf;
}

// The binary form made explicit: nodes 0..n-1 are the inputs, node n + m is internal node m
// with children (left, right) in evaluation order; tile chains become one internal node with
// all their inputs as children (`tile` set). root = kAbsent when n = 0.
struct BinaryTree {
  std::uint64_t n = 0;
  struct Node {
    std::vector<std::uint64_t> children;
    bool tile = false;
  };
  std::vector<Node> internal;
  std::uint64_t root = tree_hash_detail::kAbsent;
  bool HasTiles() const {
    return std::any_of(internal.begin(), internal.end(), [](const Node& x) { return x.tile; });
  }
};

inline BinaryTree ToBinaryTree(const MergeTree& t) {
  using tree_hash_detail::kAbsent;
  BinaryTree b;
  b.n = t.n;
  std::vector<std::uint64_t> id(t.NodeCount(), kAbsent);
  auto add = [&](std::vector<std::uint64_t> children, bool tile) {
    b.internal.push_back({std::move(children), tile});
    return t.n + b.internal.size() - 1;
  };
  for (std::size_t k = 0; k < t.chains.size(); ++k) {
    const Chain& c = t.chains[k];
    if (c.count == 0) continue;
    const std::uint64_t stride = c.count > 1 ? c.stride : 1;
    if (c.mode == ChainMode::kLiftTile && c.count > 1) {
      std::vector<std::uint64_t> ch;
      for (std::uint64_t j = 0; j < c.count; ++j) ch.push_back(c.first + j * stride);
      id[k] = add(std::move(ch), true);
      continue;
    }
    std::uint64_t x = c.first;
    for (std::uint64_t j = 1; j < c.count; ++j) x = add({x, c.first + j * stride}, false);
    id[k] = x;
  }
  for (std::size_t m = 0; m < t.combines.size(); ++m) {
    const std::uint64_t l = id[t.combines[m].left], r = id[t.combines[m].right];
    id[t.chains.size() + m] = l == kAbsent ? r : r == kAbsent ? l : add({l, r}, false);
  }
  if (!t.Empty()) b.root = id[t.Root()];
  return b;
}

// Where two binary trees over the same n first differ: inputs i < j whose lowest common
// ancestor covers `size_a` inputs in A and `size_b` (> size_a) in B. found = false when the
// trees are equal (as sets of clusters, which for a commutative Combine is the tree).
struct TreeDifference {
  bool found = false;
  std::uint64_t i = 0, j = 0;
  std::uint64_t size_a = 0, size_b = 0;
};

namespace tree_hash_detail {

struct Clusters {
  std::vector<std::uint64_t> size, key, min_leaf, parent;
};

// Per node (inputs, then internal): cluster size, an order-free key of its input set (sum
// of per-input random words, mixed with the size), its smallest input, and its parent.
inline Clusters ComputeClusters(const BinaryTree& b) {
  Clusters c;
  const std::size_t total = b.n + b.internal.size();
  c.size.assign(total, 1);
  c.key.assign(total, 0);
  c.min_leaf.assign(total, 0);
  c.parent.assign(total, kAbsent);
  for (std::uint64_t i = 0; i < b.n; ++i) {
    c.key[i] = Mix(i ^ 0xa0761d6478bd642fULL);
    c.min_leaf[i] = i;
  }
  for (std::size_t m = 0; m < b.internal.size(); ++m) {
    const std::uint64_t id = b.n + m;
    std::uint64_t size = 0, key = 0, lo = kAbsent;
    for (std::uint64_t ch : b.internal[m].children) {
      size += c.size[ch];
      key += c.key[ch];
      lo = std::min(lo, c.min_leaf[ch]);
      c.parent[ch] = id;
    }
    c.size[id] = size;
    c.key[id] = key;
    c.min_leaf[id] = lo;
  }
  return c;
}

}  // namespace tree_hash_detail

inline TreeDifference FirstDifference(const BinaryTree& a, const BinaryTree& b) {
  using namespace tree_hash_detail;
  TreeDifference d;
  if (a.n != b.n || a.n < 2) return d;
  const Clusters ca = ComputeClusters(a), cb = ComputeClusters(b);
  std::unordered_set<std::uint64_t> in_b;
  for (std::size_t m = 0; m < b.internal.size(); ++m)
    in_b.insert(Absorb(cb.key[b.n + m], cb.size[b.n + m]));
  std::uint64_t best = kAbsent;
  for (std::size_t m = 0; m < a.internal.size(); ++m) {
    const std::uint64_t id = a.n + m;
    if (a.internal[m].children.size() < 2) continue;
    if (in_b.count(Absorb(ca.key[id], ca.size[id]))) continue;
    if (best == kAbsent || ca.size[id] < ca.size[best]) best = id;
  }
  if (best == kAbsent) return d;
  const auto& ch = a.internal[best - a.n].children;
  d.found = true;
  d.i = std::min(ca.min_leaf[ch[0]], ca.min_leaf[ch[1]]);
  d.j = std::max(ca.min_leaf[ch[0]], ca.min_leaf[ch[1]]);
  d.size_a = ca.size[best];
  // LCA of i and j in B: walk i's ancestors, then j's.
  std::vector<std::uint8_t> on_path(b.n + b.internal.size(), 0);
  for (std::uint64_t x = d.i; x != kAbsent; x = cb.parent[x]) on_path[x] = 1;
  std::uint64_t x = d.j;
  while (x != kAbsent && !on_path[x]) x = cb.parent[x];
  d.size_b = x == kAbsent ? 0 : cb.size[x];
  return d;
}

// FPRev's mask for inputs i, j of an n-input sum in a format with p significand bits:
// x_i = +M, x_j = -M, all others 1; a binary tree returns n - |LCA(i, j)| exactly when
// n < 2^p. Returns M.
inline double MaskMagnitude(std::uint64_t n, int precision_bits) {
  int log2n = 0;
  while ((std::uint64_t{1} << log2n) < n + 1) ++log2n;
  return std::ldexp(1.0, precision_bits + log2n + 1);
}

template <class T>
std::vector<T> SumWitness(std::uint64_t n, std::uint64_t i, std::uint64_t j, int precision_bits) {
  std::vector<T> x(n, T(1));
  const double m = MaskMagnitude(n, precision_bits);
  x[i] = static_cast<T>(m);
  x[j] = static_cast<T>(-m);
  return x;
}

}  // namespace carrier
