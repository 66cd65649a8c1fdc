// core/orders/shape.hpp: what a trial reports about its merge tree (canonical text, TreeStats,
// TreeHash, permutes) from the order's walk, without materialising the tree.
//
// Contract
//   WalkShape(s, n, out), for every schedule s and length n that BuildTree accepts and where
//   IsShapeWalked(s, n), gives exactly what ShapeOfTree(BuildTree(s, n)) gives: schedule =
//   tree.schedule, stats = ComputeStats(tree) (every field, the doubles bit for bit), hash =
//   TreeHash(tree) (the exact form), permutes = tree.permutes; and it throws the same
//   ScheduleError where BuildTree throws one. tests/experiments/test_engine_equivalence.cpp
//   compares the two over the replay test matrix's schedules and lengths.
//   How: the ShapeWalker visitor takes the order's walk (core/schedule.hpp WalkSchedule, the
//   same walk BuildTree numbers) and folds each node's (hash, leaf count, max and summed leaf
//   depth, combine depth) Merkle-style from its children: the expressions of ComputeStats and
//   TreeHash64, so evaluation order cannot change a bit. Memory: O(depth) records (O(K) for
//   strided:K, O(chunks) for the partitions), not O(n). The orders from outside (cuda,
//   canonical, file, mma, numpy, torch), alone or nested, are left to their tree.
//   Cost: a few hashes per input (WalkShape over 2^24 inputs on the 2-core machine, ns per
//   input: strided:32 0.4, blocked:64 0.6, pairwise 2.5, seq 4.0 (one chain of hashes, each
//   waiting on the last), random:1 4.8, reverse 8.2); pairwise:1 is
//   walked a level at a time in regions of core/pairwise_plan.hpp, and random:S (no lift) in
//   regions of at most kRandomRegion inputs split breadth first as the fast replay splits them
//   (core/random_splits.hpp), so that independent nodes' hashes overlap in the CPU; reverse's
//   fold hashes its leaves a block at a time and keeps only the dependent half of each combine
//   in its serial chain; blocked:T's full tiles and strided:K's lanes advance their chains'
//   hashes together.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/merge_tree.hpp"
#include "core/orders/shape_x86.hpp"
#include "core/pairwise_plan.hpp"
#include "core/random_splits.hpp"
#include "core/schedule.hpp"
#include "core/tree_hash.hpp"

namespace carrier {

struct TreeShape {
  std::string schedule;  // the canonical text (MergeTree::schedule)
  TreeStats stats;
  std::string hash;  // TreeHash(tree), TreeForm::kExact
  bool permutes = false;
};

namespace shape_detail {

// One node: its exact-form hash and ComputeStats' Depth (count, max, sum) and combine depth.
struct Rec {
  std::uint64_t hash = 0;
  std::uint64_t count = 0;
  std::uint64_t max = 0;
  double sum = 0;
  std::uint64_t cdepth = 0;
};

}  // namespace shape_detail

// The walk visitor of the shape (see the contract).
class ShapeWalker {
 public:
  using Node = shape_detail::Rec;
  static constexpr std::uint32_t kPairwiseRegion = carrier::kPairwiseRegion;

  std::uint64_t chains = 0, combines = 0, longest = 0;
  bool permutes = false;

  // TreeHash64's chain hash and ComputeStats' chain depth.
  Node Chain(std::uint64_t first, std::uint64_t count, std::uint64_t stride, ChainMode mode) {
    using namespace tree_hash_detail;
    if (count <= 1) stride = 1;
    Node r = ChainRecord(count, mode);
    std::uint64_t x;
    if (mode == ChainMode::kFused) {
      const MmaNode& f = fused_;
      x = Absorb(Absorb(Absorb(Mix(kTagFused), f.terms), count),
                 (static_cast<std::uint64_t>(f.input) << 32) ^
                     (static_cast<std::uint64_t>(f.align) << 24) ^
                     (static_cast<std::uint64_t>(f.output) << 16) ^
                     (static_cast<std::uint64_t>(f.two_stage) << 8) ^
                     static_cast<std::uint64_t>(f.frac_bits + 128));
      if (f.group) x = Absorb(x, 0x6700000000ULL | f.group);  // group nodes only: old hashes hold
    } else {
      x = ChainStart(count, mode);
    }
    for (std::uint64_t j = 0; j < count; ++j) x = Absorb(x, first + j * stride);
    r.hash = x;
    return r;
  }

  // blocked:T's tiles (the walk's TilesOf): Chain's records of a batch of tiles at a time, whose
  // full tiles' hash chains advance together (eight lanes per vector where ShapeHashesVectorised,
  // four vectors in flight) instead of one serial chain of hashes per tile (blocked:64 over 2^24
  // inputs: 69 ms, 4.1 ns per input, most of it each Absorb waiting on the last).
  class TileBatch {
   public:
    TileBatch(ShapeWalker& v, std::uint64_t first, std::uint64_t n, std::uint64_t len,
              ChainMode mode)
        : v_(v), first_(first), n_(n), len_(len), tiles_((n + len - 1) / len), mode_(mode) {}
    // The records of tiles t .. (the end of the batch holding t): a new batch from t where t is
    // not in the last one.
    std::span<const Node> Batch(std::uint64_t t, std::uint64_t /*want*/) {
      if (t < b0_ || t >= b1_) Next(t);
      return std::span<const Node>(buf_.data() + (t - b0_), b1_ - t);
    }

   private:
    static constexpr std::uint64_t kBatch = 64;
    void Next(std::uint64_t t) {
      b0_ = t;
      b1_ = std::min(tiles_, t + kBatch);
      const std::uint64_t full = std::min(b1_, n_ / len_);  // tiles [t, full) hold len inputs
      if (mode_ == ChainMode::kFused || full <= t) {
        for (std::uint64_t u = t; u < b1_; ++u) buf_[u - t] = TileChain(u);
        return;
      }
      const std::uint64_t k = full - t;
      std::array<std::uint64_t, kBatch> hash;
      ChainHashes(ChainStart(len_, mode_), first_ + t * len_, len_, 1, len_, k, hash.data());
      for (std::uint64_t w = 0; w < k; ++w) {
        buf_[w] = v_.ChainRecord(len_, mode_);
        buf_[w].hash = hash[w];
      }
      for (std::uint64_t u = full; u < b1_; ++u) buf_[u - t] = TileChain(u);
    }
    Node TileChain(std::uint64_t u) {
      const std::uint64_t lo = u * len_;
      return v_.Chain(first_ + lo, std::min(len_, n_ - lo), 1, mode_);
    }
    ShapeWalker& v_;
    std::uint64_t first_, n_, len_, tiles_;
    ChainMode mode_;
    std::uint64_t b0_ = 0, b1_ = 0;  // the tiles in buf_
    std::array<Node, kBatch> buf_;
  };
  TileBatch Tiles(std::uint64_t first, std::uint64_t n, std::uint64_t len, ChainMode mode) {
    return TileBatch(*this, first, n, len, mode);
  }

  // `lanes` chains of count >= 1 inputs each, chain i over first + i, first + i + stride, ...
  // (the walk's WalkChains: strided:K's lanes): Chain's records, appended to out in order, the
  // hashes of eight or more advanced together.
  void Chains(std::uint64_t first, std::uint64_t lanes, std::uint64_t count, std::uint64_t stride,
              ChainMode mode, std::vector<Node>& out) {
    if (mode == ChainMode::kFused || lanes < 8 || count < 2) {
      for (std::uint64_t i = 0; i < lanes; ++i)
        out.push_back(Chain(first + i, count, stride, mode));
      return;
    }
    std::vector<std::uint64_t> hash(lanes);
    ChainHashes(ChainStart(count, mode), first, 1, stride, count, lanes, hash.data());
    for (std::uint64_t i = 0; i < lanes; ++i) {
      out.push_back(ChainRecord(count, mode));
      out.back().hash = hash[i];
    }
  }

  // Chain's record of a chain of `count` inputs in `mode`, hash aside; counts the chain.
  Node ChainRecord(std::uint64_t count, ChainMode mode) {
    ++chains;
    longest = std::max(longest, count);
    Node r;
    if (count > 0 && mode == ChainMode::kFused) {
      // ComputeStats: S = ceil(L / g) fused steps; an input in step j passes S - j of them.
      const std::uint64_t g = std::max<std::uint64_t>(fused_.terms, 1);
      const std::uint64_t steps = (count + g - 1) / g;
      double sum = 0;
      for (std::uint64_t j = 0; j < steps; ++j)
        sum += static_cast<double>(std::min(g, count - j * g)) * static_cast<double>(steps - j);
      r.count = count;
      r.max = steps;
      r.sum = sum;
    } else if (count > 0) {
      const double l = static_cast<double>(count);
      r.count = count;
      r.max = count - 1;
      r.sum = 0.5 * l * (l - 1) + (l - 1);
    }
    return r;
  }

  Node Combine(const Node& a, const Node& b) {
    ++combines;
    Node r = Join(a, b);
    r.hash = tree_hash_detail::CombineHash(a.hash, b.hash);
    return r;
  }

  void Permutes() { permutes = true; }
  void Fused(const MmaNode& node) { fused_ = node; }

  // The pairwise walk's hook: the regions below, whole.
  bool TakesPairwise(std::uint64_t m, std::uint64_t leaf, ChainMode mode) const {
    return leaf == 1 && mode == ChainMode::kPush && m <= kPairwiseRegion;
  }
  Node PairwiseSubtree(std::uint64_t first, std::uint64_t m, std::uint64_t, ChainMode) {
    return PairwiseRegion(first, static_cast<std::uint32_t>(m));
  }

  // pairwise:1 (no lift) over inputs [first, first + m), 2 <= m <= kPairwiseRegion: Chain's and
  // Combine's records without the recursion. The root's statistics depend on m alone (the
  // region's shape), so they are folded once per m, by Join over the plan, and kept; the hashes,
  // which name the inputs, come from PairwiseRegionHashes: every leaf, then each level's nodes
  // (independent of one another), deepest first. Same expressions, same operands: same bits.
  Node PairwiseRegion(std::uint64_t first, std::uint32_t m) {
    const PairwisePlan& p = plans_.Plan(m);
    Node root = RegionStats(p);
    hashes_.resize(2 * std::size_t{m});
    PairwiseRegionHashes(p, first, hashes_.data());
    root.hash = hashes_[m];
    chains += m;
    combines += m - 1;
    longest = std::max<std::uint64_t>(longest, 1);
    return root;
  }

  // TreeHash's hashes of the pairwise:1 region of plan p over inputs [first, first + p.m): h[i]
  // for leaf i, h[p.m + t] for node t (t = 0: the root). Vectorised where ShapeHashesVectorised.
  static void PairwiseRegionHashes(const PairwisePlan& p, std::uint64_t first, std::uint64_t* h) {
    const std::uint32_t m = p.m;
    LeafHashes(first, m, h);
    std::uint32_t end = m - 1;  // nodes
    for (std::size_t l = p.level.size(); l-- > 0;) {
      const std::uint32_t start = p.level[l];
      NodeHashes(p.left.data() + start, p.right.data() + start, end - start, h, h + m + start);
      end = start;
    }
  }

  static constexpr std::uint32_t kRandomRegion = 8192;
  static_assert(kRandomRegion <= replay_detail::kRandomSplitMaxSize);
  static constexpr std::uint64_t RandomRegionLimit() { return kRandomRegion; }

  // random:SEED without lift over [lo, lo + m) of its walk (the splits' positions), 3 <= m <=
  // kRandomRegion, inputs first + i: Chain's and Combine's records without the recursion. The
  // splits come a level at a time (core/random_splits.hpp RandomSplitRegion, as in the fast
  // replay), then the hashes: every leaf, the pairs (where vectorised, every adjacent pair of
  // leaves in one pass, of which the tree's pairs read theirs), then each level's nodes,
  // deepest first; then the nodes' statistics in reverse queue order (a node's children come
  // later in the queue). Same expressions, same operands: same bits. The statistics are Join's
  // without its records: every subtree here is non-empty, its leaf count is b - a, its max depth
  // equals its combine depth (the same recursion from 0 at the leaves), and its depth sum is an
  // integer below 2^53 (at most m^2 / 2), which Join's double sums hold exactly; so they run in
  // integers over 12 bytes a slot instead of 40-byte records.
  Node RandomRegion(std::uint64_t seed, std::uint64_t lo, std::uint32_t m, std::uint64_t first) {
    using namespace tree_hash_detail;
    if (!random_ || random_->cap < m) {  // sized for the largest region so far, not 8192
      const std::uint32_t cap = std::min(kRandomRegion, std::bit_ceil(m));
      random_.emplace(cap);
      random_hashes_.assign(3 * std::size_t{cap}, 0);
      // Leaves (depth 0, depth sum 0), then pairs (Join of two leaves: 1 and 2), fixed.
      random_depth_.assign(3 * std::size_t{cap}, 0);
      random_depth_sum_.assign(3 * std::size_t{cap}, 0);
      std::fill_n(random_depth_.begin() + cap, cap, 1);
      std::fill_n(random_depth_sum_.begin() + cap, cap, 2);
    }
    replay_detail::RandomScratch& w = *random_;
    const std::uint32_t cap = w.cap;
#if CARRIER_X86_KERNELS
    const bool adjacent = ShapeHashesVectorised();  // every adjacent pair, no pair list
#else
    const bool adjacent = false;
#endif
    const replay_detail::RandomQueue q =
        replay_detail::RandomSplitRegion({Mix(seed)}, lo, m, w, !adjacent);
    std::uint64_t* h = random_hashes_.data();
    LeafHashes(first, m, h);
#if CARRIER_X86_KERNELS
    if (adjacent) {
      const std::uint64_t start = Mix(kTagCombine);
      std::uint32_t i = shape_x86::AdjacentCombineHashes(start, kAbsorbOffset, h, m - 1, h + cap);
      for (; i + 1 < m; ++i) h[cap + i] = CombineHash(h[i], h[i + 1]);
    }
#endif
    for (std::uint32_t k = 0; k < q.pairs && q.pair != nullptr; ++k)
      h[cap + q.pair[k]] = CombineHash(h[q.pair[k]], h[q.pair[k] + 1]);
    std::uint32_t end = q.tail;
    for (std::size_t l = w.level.size(); l-- > 0;) {
      const std::uint32_t start = w.level[l];
      NodeHashes(q.left + start, q.right + start, end - start, h, h + 2 * cap + start);
      end = start;
    }
    std::uint32_t* depth = random_depth_.data();
    std::uint64_t* sum = random_depth_sum_.data();
    for (std::uint32_t t = q.tail; t-- > 0;) {
      const std::uint32_t a = q.left[t], b = q.right[t];
      depth[2 * cap + t] = std::max(depth[a], depth[b]) + 1;
      sum[2 * cap + t] = sum[a] + sum[b] + (q.b[t] - q.a[t]);
    }
    Node root;
    root.hash = h[2 * cap];
    root.count = m;
    root.max = depth[2 * cap];
    root.cdepth = depth[2 * cap];
    root.sum = static_cast<double>(sum[2 * cap]);
    chains += m;
    combines += m - 1;
    longest = std::max<std::uint64_t>(longest, 1);
    return root;
  }

  // reverse without lift over inputs [first, first + n), n >= 1: Chain's and Combine's records
  // of the right fold x0 + (x1 + (... + x_{n-1})) without a call per node. A block of leaves at
  // a time, from the right: their hashes, then each one's half of its combine's hash,
  // Absorb(Mix(kTagCombine), leaf) (both vectorised where ShapeHashesVectorised); then the fold,
  // which absorbs the accumulated hash into each half and joins the statistics: CombineHash's
  // and Join's expressions with the same operands, the same bits.
  Node ReverseFold(std::uint64_t first, std::uint64_t n) {
    using namespace tree_hash_detail;
    constexpr std::uint32_t kBlock = 4096;
    Node leaf;  // Chain's record of a push chain of one input, hash aside
    leaf.count = 1;
    Node acc = leaf;
    acc.hash = Absorb(Absorb(Mix(kTagPush), 1), first + n - 1);
    const std::uint64_t start = Mix(kTagCombine);
    hashes_.resize(kBlock);
    std::uint64_t* h = hashes_.data();
    for (std::uint64_t hi = n - 1; hi > 0;) {  // leaves [lo, hi), folded from hi - 1 down to lo
      const std::uint64_t lo = hi > kBlock ? hi - kBlock : 0;
      const auto m = static_cast<std::uint32_t>(hi - lo);
      LeafHashes(first + lo, m, h);
      std::uint32_t i = 0;
#if CARRIER_X86_KERNELS
      if (ShapeHashesVectorised()) i = shape_x86::AbsorbValues(start, h, m, kAbsorbOffset, h);
#endif
      for (; i < m; ++i) h[i] = Absorb(start, h[i]);
      for (std::uint32_t k = m; k-- > 0;) {
        const std::uint64_t hash = Absorb(h[k], acc.hash);
        acc = Join(leaf, acc);
        acc.hash = hash;
      }
      hi = lo;
    }
    chains += n;
    combines += n - 1;
    longest = std::max<std::uint64_t>(longest, 1);
    return acc;
  }

  // Whether the block hashes (PairwiseRegion's, RandomRegion's, ReverseFold's) run their vector
  // form: where the CPU has it (core/cpu_features.hpp), unless a test switched it off.
  // RandomRegion's splits have their own switch (core/random_splits.hpp UseRandomSplitsVectorised).
  struct HashFamily;
  static bool ShapeHashesVectorised() { return Avx512FDqSwitch<HashFamily>::On(); }
  // For tests: the scalar form (false) or, where the CPU has it, the vector form (true); returns
  // whether the vector form now runs. Not thread-safe: call it outside any walk.
  static bool UseShapeHashesVectorised(bool on) { return Avx512FDqSwitch<HashFamily>::Use(on); }

 private:
  // Chain's first hash of a chain of `count` inputs in `mode` (not kFused), before its inputs.
  static std::uint64_t ChainStart(std::uint64_t count, ChainMode mode) {
    using namespace tree_hash_detail;
    if (mode == ChainMode::kLiftTile && count > 0) return Absorb(Mix(kTagTile), count);
    return count == 0 ? Mix(kTagIdentity) : Absorb(Mix(kTagPush), count);
  }

  // out[w] = Chain's hash of the chain over inputs first + w gap + j stride, j < len, from
  // start = ChainStart(len, mode), for w < k: the k chains advanced together.
  static void ChainHashes(std::uint64_t start, std::uint64_t first, std::uint64_t gap,
                          std::uint64_t stride, std::uint64_t len, std::uint64_t k,
                          std::uint64_t* out) {
    using tree_hash_detail::Absorb;
    std::uint64_t w = 0;
#if CARRIER_X86_KERNELS
    if (ShapeHashesVectorised())
      w = shape_x86::ChainHashes(start, first, gap, stride, len, k, tree_hash_detail::kAbsorbOffset,
                                 out);
#endif
    for (; w < k; ++w) {
      std::uint64_t x = start;
      for (std::uint64_t j = 0; j < len; ++j) x = Absorb(x, first + w * gap + j * stride);
      out[w] = x;
    }
  }

  // h[i] = the hash of the push chain of input first + i, i < m.
  static void LeafHashes(std::uint64_t first, std::uint32_t m, std::uint64_t* h) {
    using namespace tree_hash_detail;
    const std::uint64_t leaf_tag = Absorb(Mix(kTagPush), 1);  // Chain's push chain of one input
    std::uint32_t i = 0;
#if CARRIER_X86_KERNELS
    if (ShapeHashesVectorised()) i = shape_x86::AbsorbIndices(leaf_tag, first, m, kAbsorbOffset, h);
#endif
    for (; i < m; ++i) h[i] = Absorb(leaf_tag, first + i);
  }

  // out[t] = CombineHash(h[left[t]], h[right[t]]), t < count (independent nodes).
  static void NodeHashes(const std::uint32_t* left, const std::uint32_t* right, std::uint32_t count,
                         const std::uint64_t* h, std::uint64_t* out) {
    using namespace tree_hash_detail;
    std::uint32_t t = 0;
#if CARRIER_X86_KERNELS
    if (ShapeHashesVectorised())
      t = shape_x86::CombineHashes(Mix(kTagCombine), kAbsorbOffset, left, right, count, h, out);
#endif
    for (; t < count; ++t) out[t] = CombineHash(h[left[t]], h[right[t]]);
  }

  // Combine's record without the hash: ComputeStats' depths of a node from its children's.
  static Node Join(const Node& a, const Node& b) {
    Node r;
    r.cdepth = 1 + std::max(a.cdepth, b.cdepth);
    if (a.count == 0) {
      r.count = b.count;
      r.max = b.max;
      r.sum = b.sum;
    } else if (b.count == 0) {
      r.count = a.count;
      r.max = a.max;
      r.sum = a.sum;
    } else {
      r.count = a.count + b.count;
      r.max = std::max(a.max, b.max) + 1;
      r.sum = a.sum + b.sum + static_cast<double>(a.count + b.count);
    }
    return r;
  }

  // The root record of plan p's region, hash aside: leaves as Chain gives a push chain of one
  // input (count 1, max 0, sum 0.5 l (l - 1) + (l - 1) = 0), then Join level by level. Kept per
  // region length (a walk meets at most a few).
  const Node& RegionStats(const PairwisePlan& p) {
    for (const auto& [m, rec] : region_stats_)
      if (m == p.m) return rec;
    std::vector<Node> r(2 * std::size_t{p.m});
    for (std::uint32_t i = 0; i < p.m; ++i) r[i].count = 1;
    std::uint32_t end = p.m - 1;
    for (std::size_t l = p.level.size(); l-- > 0;) {
      const std::uint32_t start = p.level[l];
      for (std::uint32_t t = start; t < end; ++t) r[p.m + t] = Join(r[p.left[t]], r[p.right[t]]);
      end = start;
    }
    region_stats_.emplace_back(p.m, r[p.m]);
    return region_stats_.back().second;
  }

  MmaNode fused_{};
  PairwisePlans plans_;
  std::vector<std::uint64_t> hashes_;
  std::vector<std::pair<std::uint32_t, Node>> region_stats_;
  // RandomRegion's queue, hashes and statistics (slots as in RandomScratch), made on first use.
  std::optional<replay_detail::RandomScratch> random_;
  std::vector<std::uint64_t> random_hashes_;
  std::vector<std::uint32_t> random_depth_;      // max depth (= combine depth) per slot
  std::vector<std::uint64_t> random_depth_sum_;  // depth sum per slot
};

// Whether WalkShape walks s over n inputs: n > 0 and an order with a walk of its own (a
// partition: its nested order too).
inline bool IsShapeWalked(const Schedule& s, std::uint64_t n) {
  if (n == 0 || !IsWalkedOrder(s)) return false;
  if (PartitionOf(s, n)) return IsWalkedOrder(s.Inner());
  return true;
}

// The shape of BuildTree(s, n) by the walk, uncached; false (out untouched) where
// !IsShapeWalked(s, n).
inline bool WalkShape(const Schedule& s, std::uint64_t n, TreeShape& out) {
  if (!IsShapeWalked(s, n)) return false;
  ShapeWalker w;
  const std::optional<ShapeWalker::Node> root = WalkSchedule(s, n, 0, w);
  using namespace tree_hash_detail;
  out.schedule = ToString(s);
  out.permutes = w.permutes;
  out.stats = TreeStats{};
  out.stats.n = n;
  out.stats.chains = w.chains;
  out.stats.combines = w.combines;
  out.stats.longest_chain = w.longest;
  out.stats.combine_depth = root ? root->cdepth : 0;
  out.stats.max_leaf_depth = root ? root->max : 0;
  out.stats.mean_leaf_depth = root ? root->sum / static_cast<double>(n) : 0.0;
  const std::uint64_t h = Absorb(Absorb(Mix(kTagRoot), n), root ? root->hash : Mix(kTagIdentity));
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  out.hash = buf;
  return true;
}

// The same fields from an explicit tree.
inline TreeShape ShapeOfTree(const MergeTree& t) {
  TreeShape out;
  out.schedule = t.schedule;
  out.stats = ComputeStats(t);
  out.hash = TreeHash(t);
  out.permutes = t.permutes;
  return out;
}

}  // namespace carrier
