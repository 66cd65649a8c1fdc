// core/fast_replay.hpp: FastReplay, the same reduction as Replay (core/replay.hpp), computed
// fast.
//
// Contract
//   FastReplay<C>(tree, x)      == Replay<C>(tree, x)                bit for bit, every field;
//   FastReplay<C>(schedule, x)  == Replay<C>(BuildTree(schedule, n), x)  bit for bit;
//   for every carrier, compute scalar, rounding mode and tree. Replay stays the definition;
//   this file only changes WHEN each node is evaluated, never WHAT it computes: every chain
//   still pushes (or LiftTile-s) its inputs in increasing index order from Identity, and every
//   combine is Combine(earlier segment, later segment) with exactly the operands the tree
//   names. No two operations are ever reassociated, fused or swapped.
//
// Why evaluation order is free: a node's state is a pure function of its operands for float,
// double, long double, Mpfr and deterministic emulated rounding. It is NOT for stochastic
// rounding, whose random bits come from a per-thread counter advanced by every operation in
// program order (precision/emulated.hpp, "sr"): there, any other evaluation order draws other
// bits. So FastReplayOrderFree<Scalar> decides at run time, and where it says no, FastReplay
// evaluates exactly as Replay does (chains in id order, then combines in id order).
// A scalar with a static GetRounding() whose enum has kStochastic (Emulated's shape) is free
// unless that mode is in force (a dynamic mode is read from the thread's scope at the call);
// any other scalar declaring a `kRounding` is assumed order-sensitive; the rest are free.
// Specialise FastReplayOrderFree for a new scalar type whose operations carry hidden state.
//
// How it is fast
//   Structured schedules (the Schedule overload) are evaluated by recursion over the
//   schedule's structure without building the tree: O(depth) states of memory beyond the input
//   (plus O(K) for strided:K, O(P) for omp:P, O(kRandomRegion) for random:S and, for the
//   level-batched carriers below, O(kPairwiseRegion) for pairwise:1), no allocation per node:
//     seq, reverse      one loop;
//     pairwise[:L]      recursion on [lo, hi) with the tree's split rule (the left half takes
//                       the extra element); subtrees of at most kPairwiseUnrolled elements
//                       under pairwise:1 are straight-line code for their exact shape;
//     blocked:T         tiles evaluated kLanes at a time (independent chains in lanes), then
//                       merged seq or pairwise over tile indices;
//     strided:K[:tile]  all K lane chains advanced together row by row (lane k = chain k);
//     random:S          the tree's own split function (tree_detail::RandomSplit), so the
//                       shape is the tree's by construction: recursion down to subtrees of
//                       at most kRandomRegion inputs, each evaluated breadth first (all its
//                       splits, then its states bottom up) in O(kRandomRegion) scratch;
//     omp:P             each chunk by its inner schedule, then the outer merge of chunk roots;
//     cuda and kinds this file does not know: BuildTree, then the tree overload.
//   Carriers with a vector batch (HasVectorCombine: Sum over FastEmulated in a deterministic
//   mode) evaluate pairwise:1 subtrees of at most kPairwiseRegion inputs and random:S regions
//   a level at a time: all leaves in one FirstPushes, then every level's combines (independent
//   of one another) in one CombineGathered, eight lanes per vector instruction. The lanes are
//   distinct nodes of the tree, each with its own operands: nothing is reassociated. The
//   states are the same as node-by-node evaluation; only the time at which each is computed moves.
//   Such carriers also hand their push chains over whole (HasBatchChains: seq, blocked tiles
//   kTileBatch at a time, strided rows, sibling leaf chains): eight chains per vector
//   instruction, one chain per lane, each chain's inputs in its own order.
//   The tree overload evaluates any explicit MergeTree: chains first (single-input chains
//   inline, stride-1 chains of equal length kLanes at a time), then combines in tree order.
//
// Errors: exactly Replay's (ScheduleError, one line): input count differs from the tree's n;
// a permuting tree for a non-commutative carrier; tile lifts for a carrier without LiftTile.
// Threads: none of its own; reentrant.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/carrier.hpp"
#include "core/merge_tree.hpp"
#include "core/random_splits.hpp"
#include "core/replay.hpp"
#include "core/schedule.hpp"

namespace carrier {

// May nodes computed in scalar T be evaluated in any order that respects data dependencies?
// Specialise for scalar types with order-dependent operations (see the contract above).
template <class T>
struct FastReplayOrderFree {
  static bool Holds() {
    if constexpr (requires {
                    T::GetRounding();
                    decltype(T::GetRounding())::kStochastic;
                  }) {
      // Emulated's shape: the mode in force now (a dynamic one reads the thread's scope).
      return T::GetRounding() != decltype(T::GetRounding())::kStochastic;
    } else if constexpr (requires { T::kRounding; }) {
      return false;  // a rounding-mode scalar we cannot query: assume a random stream
    } else {
      return true;
    }
  }
};

namespace fast_replay_detail {

inline constexpr std::size_t kLanes = 8;              // independent chains evaluated together
inline constexpr std::size_t kPairwiseUnrolled = 32;  // largest straight-line pairwise subtree

template <Carrier C>
using StateOf = typename C::State;
template <Carrier C>
using InputOf = typename C::Input;

// A carrier whose independent operations run faster in a batch (Sum over a scalar with a
// vector GatheredAdd): C::CombineGathered(A, ia, B, ib, out, n) sets out[k] =
// Combine(A[ia[k]], B[ib[k]]) and C::FirstPushes(x, out, n) sets out[k] = PushOne(Identity(),
// x[k]). Pairwise and random trees then evaluate their leaves in one batch and their combines
// a level at a time.
template <class C>
concept HasVectorCombine = Carrier<C> &&
    requires(const typename C::State* s, typename C::State* o, const typename C::Input* x,
             const std::uint32_t* i) {
  C::kCombineGatheredVector;
  C::CombineGathered(s, i, s, i, o, std::size_t{1});
  C::FirstPushes(x, o, std::size_t{1});
} && C::kCombineGatheredVector;

// A carrier for which combining every adjacent pair of a region's leaves in one contiguous
// pass is cheaper than combining its tree's pairs (about a third of them) one by one: Sum over
// a vector GatheredAdd or a built-in floating type. C::CombineAdjacent(s, out, n) sets out[k] =
// Combine(s[k], s[k + 1]).
template <class C>
concept HasCheapAdjacent = Carrier<C> &&
    requires(const typename C::State* s, typename C::State* o) {
  C::kCombineAdjacentCheap;
  C::CombineAdjacent(s, o, std::size_t{1});
} && C::kCombineAdjacentCheap;

// A carrier whose push chains run faster handed over whole (Sum over FastEmulated: eight chains
// per vector instruction, the mode decided once per call): C::PushChains(acc, x, first, lanes,
// count, stride) sets, for j < count and w < lanes, acc[w] = Push(acc[w], x[first[w] + j stride])
// (lanes are independent; each chain's pushes in its order).
template <class C>
concept HasBatchChains = Carrier<C> &&
    requires(typename C::State* s, const typename C::Input* x, const std::uint64_t* f) {
  C::kPushChainsBatched;
  C::PushChains(s, x, f, std::size_t{1}, std::uint64_t{1}, std::uint64_t{1});
} && C::kPushChainsBatched;

// One chain, exactly as ReplayChain (core/replay.hpp) computes it.
template <Carrier C>
StateOf<C> Chain1(const InputOf<C>* x, std::uint64_t first, std::uint64_t count,
                  std::uint64_t stride, bool lift) {
  if (count == 0) return C::Identity();
  if constexpr (HasTileLift<C>) {
    if (lift) {
      if (stride == 1) return C::LiftTile(x + first, count);
      std::vector<InputOf<C>> gather;
      gather.reserve(count);
      for (std::uint64_t j = 0; j < count; ++j) gather.push_back(x[first + j * stride]);
      return C::LiftTile(gather.data(), gather.size());
    }
  }
  StateOf<C> s = C::Identity();
  if constexpr (HasBatchChains<C>) {
    C::PushChains(&s, x, &first, 1, count, stride);
    return s;
  }
  const InputOf<C>* p = x + first;
  if (stride == 1) {
    for (std::uint64_t j = 0; j < count; ++j) s = PushOne<C>(s, p[j]);
  } else {
    for (std::uint64_t j = 0; j < count; ++j) s = PushOne<C>(s, p[j * stride]);
  }
  return s;
}

// W push chains of equal length `count` and common stride, starting at first[w]: each lane is
// its own chain; lanes only share the loop, so each chain's operations are its own, in order.
template <Carrier C, std::size_t W>
void ChainsTogether(const InputOf<C>* x, const std::uint64_t* first, std::uint64_t count,
                    std::uint64_t stride, StateOf<C>* out) {
  std::array<StateOf<C>, W> s;
  for (std::size_t w = 0; w < W; ++w) s[w] = C::Identity();
  if constexpr (HasBatchChains<C>) {
    C::PushChains(s.data(), x, first, W, count, stride);
    for (std::size_t w = 0; w < W; ++w) out[w] = s[w];
    return;
  }
  std::array<const InputOf<C>*, W> p;
  for (std::size_t w = 0; w < W; ++w) p[w] = x + first[w];
  for (std::uint64_t j = 0; j < count; ++j) {
    const std::uint64_t off = j * stride;
    for (std::size_t w = 0; w < W; ++w) s[w] = PushOne<C>(s[w], p[w][off]);
  }
  for (std::size_t w = 0; w < W; ++w) out[w] = s[w];
}

// pairwise:1 over exactly M inputs, as straight-line code with the tree's split rule.
template <Carrier C, std::size_t M>
StateOf<C> PairwiseFixed(const InputOf<C>* x) {
  if constexpr (M == 1) {
    return PushOne<C>(C::Identity(), x[0]);
  } else {
    constexpr std::size_t kMid = PairwiseMid<std::size_t>(0, M);
    const StateOf<C> a = PairwiseFixed<C, kMid>(x);
    const StateOf<C> b = PairwiseFixed<C, M - kMid>(x + kMid);
    return C::Combine(a, b);
  }
}

template <Carrier C>
using PairwiseFixedFn = StateOf<C> (*)(const InputOf<C>*);

template <Carrier C, std::size_t... I>
constexpr std::array<PairwiseFixedFn<C>, sizeof...(I)> PairwiseTable(std::index_sequence<I...>) {
  return {&PairwiseFixed<C, I + 1>...};
}

// pairwise:1 for a HasVectorCombine carrier: subtrees of at most kPairwiseRegion inputs are
// evaluated a level at a time (every combine of a level is independent of the others) from a
// plan of their shape, the combines above them by the recursion. A plan depends on the
// subtree's size only, and one pairwise recursion reaches at most three sizes of region.
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
// each (also run/tree_shape.cpp's level walk).
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

template <Carrier C>
struct PairwiseLevelsWork : PairwisePlans {
  explicit PairwiseLevelsWork(std::uint64_t n)
      : S(new StateOf<C>[2 * std::min<std::uint64_t>(n, kPairwiseRegion)]) {}
  std::unique_ptr<StateOf<C>[]> S;  // a region's leaves, then its nodes
};

template <Carrier C>
StateOf<C> PairwiseLevels(const InputOf<C>* x, std::uint64_t lo, std::uint64_t hi,
                          PairwiseLevelsWork<C>& w) {  // NOLINT(misc-no-recursion)
  const std::uint64_t m = hi - lo;
  if (m == 1) return PushOne<C>(C::Identity(), x[lo]);
  if (m <= kPairwiseRegion) {
    const auto m32 = static_cast<std::uint32_t>(m);
    const PairwisePlan& p = w.Plan(m32);
    StateOf<C>* S = w.S.get();
    C::FirstPushes(x + lo, S, m32);
    std::uint32_t end = m32 - 1;  // nodes
    for (std::size_t l = p.level.size(); l-- > 0;) {
      const std::uint32_t start = p.level[l];
      C::CombineGathered(S, p.left.data() + start, S, p.right.data() + start, S + m32 + start,
                         end - start);
      end = start;
    }
    return S[m32];
  }
  const std::uint64_t mid = PairwiseMid(lo, hi);
  const StateOf<C> a = PairwiseLevels<C>(x, lo, mid, w);
  const StateOf<C> b = PairwiseLevels<C>(x, mid, hi, w);
  return C::Combine(a, b);
}

// pairwise:LEAF[:lift] over [lo, hi) (hi > lo), the recursion of BuildTree's
// PairwiseLeaves/PairwiseFromLeaves.
template <Carrier C>
StateOf<C> Pairwise(const InputOf<C>* x, std::uint64_t lo, std::uint64_t hi, std::uint64_t leaf,
                    bool lift) {  // NOLINT(misc-no-recursion)
  const std::uint64_t m = hi - lo;
  if (m <= leaf) return Chain1<C>(x, lo, m, 1, lift);
  if constexpr (HasVectorCombine<C>) {
    if (leaf == 1 && !lift && m > kPairwiseUnrolled) {
      PairwiseLevelsWork<C> w(m);
      return PairwiseLevels<C>(x, lo, hi, w);
    }
  }
  if (leaf == 1 && !lift && m <= kPairwiseUnrolled) {
    static constexpr auto kTable = PairwiseTable<C>(std::make_index_sequence<kPairwiseUnrolled>{});
    return kTable[m - 1](x + lo);
  }
  const std::uint64_t mid = PairwiseMid(lo, hi);
  if (!lift && mid - lo <= leaf && hi - mid <= leaf && mid - lo == hi - mid) {
    // Two sibling leaf chains of the same length: one loop, two lanes.
    StateOf<C> two[2];
    const std::uint64_t first[2] = {lo, mid};
    ChainsTogether<C, 2>(x, first, mid - lo, 1, two);
    return C::Combine(two[0], two[1]);
  }
  const StateOf<C> a = Pairwise<C>(x, lo, mid, leaf, lift);
  const StateOf<C> b = Pairwise<C>(x, mid, hi, leaf, lift);
  return C::Combine(a, b);
}

// Halving over the states s[lo, hi) (hi > lo): BuildTree's PairwiseOver.
template <Carrier C>
StateOf<C> PairwiseOverStates(const StateOf<C>* s, std::size_t lo,
                              std::size_t hi) {  // NOLINT(misc-no-recursion)
  if (hi - lo == 1) return s[lo];
  const std::size_t mid = PairwiseMid(lo, hi);
  const StateOf<C> a = PairwiseOverStates<C>(s, lo, mid);
  const StateOf<C> b = PairwiseOverStates<C>(s, mid, hi);
  return C::Combine(a, b);
}

// Tiles of blocked:T per batch: kLanes, or for a HasBatchChains carrier 32 (four vectors of
// chains in flight, core/scalar.hpp GatheredAdd::Chains).
template <Carrier C>
inline constexpr std::size_t kTileBatch = HasBatchChains<C> ? 32 : kLanes;

// The tile states of blocked:T for tiles [t0, t1) (at most kTileBatch<C>), into
// out[0 .. t1 - t0).
template <Carrier C>
void BlockedTiles(const InputOf<C>* x, std::uint64_t n, std::uint64_t tile, bool lift,
                  std::uint64_t t0, std::uint64_t t1, StateOf<C>* out) {
  std::uint64_t t = t0;
  const std::uint64_t full_tiles = n / tile;  // tiles of exactly `tile` elements
  if constexpr (HasBatchChains<C>) {
    const std::uint64_t full_end = std::max(t0, std::min(t1, full_tiles));
    if (!lift && full_end > t0) {
      std::array<std::uint64_t, kTileBatch<C>> first;
      for (std::uint64_t u = t0; u < full_end; ++u) {
        first[u - t0] = u * tile;
        out[u - t0] = C::Identity();
      }
      C::PushChains(out, x, first.data(), full_end - t0, tile, 1);
      t = full_end;
    }
  } else if (!lift) {
    for (; t + kLanes <= std::min(t1, full_tiles); t += kLanes) {
      std::uint64_t first[kLanes];
      for (std::size_t w = 0; w < kLanes; ++w) first[w] = (t + w) * tile;
      ChainsTogether<C, kLanes>(x, first, tile, 1, out + (t - t0));
    }
  }
  for (; t < t1; ++t) {
    const std::uint64_t lo = t * tile;
    out[t - t0] = Chain1<C>(x, lo, std::min(tile, n - lo), 1, lift);
  }
}

// blocked:T:pairwise over tiles [a, b): tiles evaluated kLanes at a time at the bottom.
template <Carrier C>
StateOf<C> BlockedPairwise(const InputOf<C>* x, std::uint64_t n, std::uint64_t tile, bool lift,
                           std::uint64_t a, std::uint64_t b) {  // NOLINT(misc-no-recursion)
  if (b - a <= kLanes) {
    StateOf<C> s[kLanes];
    BlockedTiles<C>(x, n, tile, lift, a, b, s);
    return PairwiseOverStates<C>(s, 0, b - a);
  }
  const std::uint64_t mid = PairwiseMid(a, b);
  const StateOf<C> l = BlockedPairwise<C>(x, n, tile, lift, a, mid);
  const StateOf<C> r = BlockedPairwise<C>(x, n, tile, lift, mid, b);
  return C::Combine(l, r);
}

template <Carrier C>
StateOf<C> Blocked(const InputOf<C>* x, std::uint64_t n, const Schedule& s) {
  const std::uint64_t tiles = (n + s.tile - 1) / s.tile;
  if (s.outer == OuterOrder::kPairwise) return BlockedPairwise<C>(x, n, s.tile, s.lift, 0, tiles);
  StateOf<C> buf[kTileBatch<C>];
  StateOf<C> acc{};
  for (std::uint64_t t = 0; t < tiles; t += kTileBatch<C>) {
    const std::uint64_t end = std::min(tiles, t + kTileBatch<C>);
    BlockedTiles<C>(x, n, s.tile, s.lift, t, end, buf);
    std::size_t w = 0;
    if (t == 0) acc = buf[w++];
    for (; w < end - t; ++w) acc = C::Combine(acc, buf[w]);
  }
  return acc;
}

// strided:K[:tile:T][:lift]: lane k holds x[k], x[k + K], ...; tile j of lane k its elements
// jT .. jT + T - 1. All lanes advance together (one row of K inputs at a time), which is each
// lane's own chain in its own order; lanes merge pairwise in lane order.
template <Carrier C>
StateOf<C> Strided(const InputOf<C>* x, std::uint64_t n, const Schedule& s) {
  const std::uint64_t K = s.lanes;
  auto lane_count = [&](std::uint64_t k) { return k < n ? (n - k + K - 1) / K : 0; };
  std::vector<StateOf<C>> lane(K, C::Identity());
  const std::uint64_t rows = lane_count(0);             // the longest lane
  const std::uint64_t full_rows = n / K;                // rows every lane has
  const std::uint64_t T = s.tile == 0 ? rows : s.tile;  // elements per tile (0: whole lane)
  std::vector<StateOf<C>> cur(K, C::Identity());
  std::vector<std::uint64_t> lane_first;  // HasBatchChains: lane k's input in a row is row[k]
  if constexpr (HasBatchChains<C>)
    for (std::uint64_t k = 0; k < K; ++k) lane_first.push_back(k);
  for (std::uint64_t j = 0; j * T < rows || (j == 0 && rows == 0); ++j) {
    // Tile j of every lane that has one: rows [r0, r1).
    const std::uint64_t r0 = j * T, r1 = std::min(rows, r0 + T);
    if (s.lift) {
      for (std::uint64_t k = 0; k < K; ++k) {
        const std::uint64_t c = lane_count(k);
        if (r0 >= c && !(j == 0 && c == 0)) continue;
        cur[k] = Chain1<C>(x, k + r0 * K, std::min(c, r1) - std::min(c, r0), K, true);
      }
    } else {
      for (std::uint64_t k = 0; k < K; ++k) cur[k] = C::Identity();
      const std::uint64_t full_end = std::min(r1, full_rows);
      if constexpr (HasBatchChains<C>) {
        if (full_end > r0)
          C::PushChains(cur.data(), x + r0 * K, lane_first.data(), K, full_end - r0, K);
      } else {
        for (std::uint64_t r = r0; r < full_end; ++r) {
          const InputOf<C>* row = x + r * K;
          for (std::uint64_t k = 0; k < K; ++k) cur[k] = PushOne<C>(cur[k], row[k]);
        }
      }
      for (std::uint64_t r = std::max(r0, full_end); r < r1; ++r)
        for (std::uint64_t k = 0; r * K + k < n; ++k) cur[k] = PushOne<C>(cur[k], x[r * K + k]);
    }
    for (std::uint64_t k = 0; k < K; ++k) {
      const std::uint64_t c = lane_count(k);
      if (j == 0) {
        lane[k] = cur[k];  // a lane's first tile (or its one empty chain) is its state
      } else if (r0 < c) {
        lane[k] = C::Combine(lane[k], cur[k]);
      }
    }
    if (rows == 0) break;
  }
  return PairwiseOverStates<C>(lane.data(), 0, K);
}

// random:SEED. The split of [lo, hi) is tree_detail::RandomSplit(seed, lo, hi) through
// core/random_splits.hpp (RandomSplitter, and RandomSplitLevel: a level's splits eight at a
// time where the CPU has AVX-512; the same function, tests compare the two).
// Subtrees of at most kRandomRegion inputs are evaluated breadth first, in two passes, with no
// recursion and no data-dependent branch: the old one-node-at-a-time recursion spent most of
// its ~9 ns per node waiting on each split's hash and 64-bit division before it could descend
// and on mispredicted branches on the (random) child sizes.
//   1. Splits, level by level: the nodes of one level are independent, so their hash chains
//      and divisions overlap in the CPU. Each child is classified without a branch as a leaf
//      (1 input), a pair (2 inputs: its only split, no hash needed) or a node (>= 3 inputs,
//      queued for the next level).
//   2. States: the leaves PushOne(Identity, x[i]) in input order, then the pairs (for a
//      HasCheapAdjacent carrier, every adjacent pair of leaves in one contiguous pass, of which
//      the tree's pairs read theirs), then the queued nodes in reverse queue order (every
//      node's children come later in the queue), each Combine(left, right) with the operands
//      the tree names.
// A level's splits go eight at a time where the CPU has AVX-512 (core/random_splits.hpp: the
// hashes in 64-bit lanes, the remainder in exact double steps instead of the integer divider).
// The region bound: a region's first levels hold few nodes (1, 2, 4, ...: part-empty vectors),
// so larger regions amortise them better until the queue leaves the caches. fp32 sum, 2^20,
// one run (harness over this header): 2048 -> 2.09-2.97 ns/elem, 4096 -> 2.03-2.32, 8192 ->
// 1.77-1.79, 16384 -> 1.67-1.71, 65536 -> 2.13-2.66; emulated bf16 4.3-4.6 at every size. 8192
// keeps the scratch (six 32-bit queue arrays and 3 x 8192 states) near L2 for large states.
inline constexpr std::uint32_t kRandomRegion = 8192;

struct RandomScratch {
  explicit RandomScratch(std::uint32_t largest)
      : cap(largest),
        a(cap + kRandomQueueSlack),
        b(cap + kRandomQueueSlack),
        mid(cap + kRandomQueueSlack),
        left(cap + kRandomQueueSlack),
        right(cap + kRandomQueueSlack),
        pair(cap + kRandomQueueSlack) {}
  // The largest region. State slots: leaves [0, cap), pairs [cap, 2 cap), nodes [2 cap, 3 cap).
  std::uint32_t cap;
  // core/random_splits.hpp RandomQueue's arrays
  std::vector<std::uint32_t> a, b, mid, left, right, pair;
  // The first queue index of each level of the current region (HasVectorCombine carriers).
  std::vector<std::uint32_t> level;
};

// The subtree over [lo, lo + m), 3 <= m <= w.cap; S holds 3 w.cap states.
template <Carrier C>
StateOf<C> RandomRegion(const InputOf<C>* x, const RandomSplitter& split, std::uint64_t lo,
                        std::uint32_t m, RandomScratch& w, StateOf<C>* S) {
  const std::uint32_t cap = w.cap;
  RandomQueue q{cap,           w.a.data(), w.b.data(), w.mid.data(), w.left.data(), w.right.data(),
                w.pair.data(), 1,          0};
  // Every write is inside cap (plus the vector path's slack): of the m - 1 internal nodes at
  // least one is a pair (the deepest), so tail <= m - 2, and pairs <= m / 2 (disjoint pairs).
  q.a[0] = 0;
  q.b[0] = m;
  w.level.clear();
  for (std::uint32_t j = 0; j < q.tail;) {
    const std::uint32_t level_end = q.tail;
    RandomSplitLevel(split, lo, q.a + j, q.b + j, q.mid + j, level_end - j);
    RandomPlaceLevel(q, j, level_end);
    w.level.push_back(j);
    j = level_end;
  }
  // Leaves; then the pairs (for a HasCheapAdjacent carrier every adjacent pair of leaves in
  // one contiguous pass, the tree's pairs among them: a pair's slot is cap + its first input);
  // then the nodes, each level's independent of one another (their children are pairs, leaves
  // or nodes of deeper levels): deepest level first, a level per batch where batches are
  // vectorised, else one node at a time in reverse queue order.
  if constexpr (HasVectorCombine<C>) {
    C::FirstPushes(x + lo, S, m);
  } else {
    for (std::uint32_t i = 0; i < m; ++i) S[i] = PushOne<C>(C::Identity(), x[lo + i]);
  }
  if constexpr (HasCheapAdjacent<C>) {
    C::CombineAdjacent(S, S + cap, m - 1);
  } else {
    for (std::uint32_t k = 0; k < q.pairs; ++k)
      S[cap + q.pair[k]] = C::Combine(S[q.pair[k]], S[q.pair[k] + 1]);
  }
  if constexpr (HasVectorCombine<C>) {
    std::uint32_t end = q.tail;
    for (std::size_t l = w.level.size(); l-- > 0;) {
      const std::uint32_t start = w.level[l];
      C::CombineGathered(S, q.left + start, S, q.right + start, S + 2 * cap + start, end - start);
      end = start;
    }
  } else {
    for (std::uint32_t t = q.tail; t-- > 0;)
      S[2 * cap + t] = C::Combine(S[q.left[t]], S[q.right[t]]);
  }
  return S[2 * cap];
}

// [lo, hi), hi > lo: recursion down to regions.
template <Carrier C>
StateOf<C> RandomOver(const InputOf<C>* x, const RandomSplitter& split, std::uint64_t lo,
                      std::uint64_t hi, RandomScratch& w,
                      StateOf<C>* S) {  // NOLINT(misc-no-recursion)
  const std::uint64_t m = hi - lo;
  if (m == 1) return PushOne<C>(C::Identity(), x[lo]);
  if (m == 2)  // two inputs: the only split
    return C::Combine(PushOne<C>(C::Identity(), x[lo]), PushOne<C>(C::Identity(), x[lo + 1]));
  if (m <= w.cap) return RandomRegion<C>(x, split, lo, static_cast<std::uint32_t>(m), w, S);
  const std::uint64_t mid = split(lo, hi);
  const StateOf<C> l = RandomOver<C>(x, split, lo, mid, w, S);
  const StateOf<C> r = RandomOver<C>(x, split, mid, hi, w, S);
  return C::Combine(l, r);
}

template <Carrier C>
StateOf<C> Random(const InputOf<C>* x, std::uint64_t seed, std::uint64_t n) {
  const RandomSplitter split{tree_detail::Mix(seed)};
  if (n == 1) return PushOne<C>(C::Identity(), x[0]);
  if (n == 2) return C::Combine(PushOne<C>(C::Identity(), x[0]), PushOne<C>(C::Identity(), x[1]));
  const std::uint32_t cap = static_cast<std::uint32_t>(std::min<std::uint64_t>(n, kRandomRegion));
  RandomScratch w(cap);
  std::unique_ptr<StateOf<C>[]> S(new StateOf<C>[3 * std::size_t{cap}]);
  return RandomOver<C>(x, split, 0, n, w, S.get());
}

// Whether BuildTree(s, n) has no node, permutes its inputs, or lifts tiles, without building
// it (omp: from its chunks' inner schedules).
struct Shape {
  bool empty = false;
  bool permutes = false;
  bool lifts = false;
};

inline Shape ShapeOf(const Schedule& s, std::uint64_t n) {  // NOLINT(misc-no-recursion)
  Shape sh;
  switch (s.kind) {
    case ScheduleKind::kStrided:
      sh.empty = false;  // always K chains, empty ones included
      sh.permutes = n > 1 && s.lanes > 1;
      sh.lifts = s.lift;
      return sh;
    case ScheduleKind::kOmp: {
      const Schedule inner = s.inner.empty() ? Schedule::Seq() : ParseSchedule(s.inner);
      sh.empty = true;
      for (std::uint64_t c = 0; c < s.parts; ++c) {
        const std::uint64_t len = OmpChunkStart(n, s.parts, c + 1) - OmpChunkStart(n, s.parts, c);
        const Shape in = ShapeOf(inner, len);
        sh.empty = sh.empty && in.empty;
        sh.permutes = sh.permutes || in.permutes;
        sh.lifts = sh.lifts || in.lifts;
      }
      return sh;
    }
    case ScheduleKind::kSeq:
    case ScheduleKind::kReverse:
    case ScheduleKind::kPairwise:
    case ScheduleKind::kBlocked:
    case ScheduleKind::kRandom:  // one chain or more exactly when n > 0
      sh.empty = n == 0;
      sh.lifts = s.lift && n > 0;
      return sh;
    default: {  // cuda, and kinds this file does not know: ask their tree
      const MergeTree t = BuildTree(s, n);
      sh.empty = t.Empty();
      sh.permutes = t.permutes;
      sh.lifts = t.UsesTileLift();
      return sh;
    }
  }
}

// The kinds Structured evaluates without a tree.
inline bool IsStructured(const Schedule& s) {
  switch (s.kind) {
    case ScheduleKind::kSeq:
    case ScheduleKind::kReverse:
    case ScheduleKind::kPairwise:
    case ScheduleKind::kBlocked:
    case ScheduleKind::kStrided:
    case ScheduleKind::kOmp:
      return true;
    case ScheduleKind::kRandom:
      return !s.lift;
    default:
      return false;
  }
}

template <Carrier C>
void CheckShape(const Schedule& s, const Shape& sh) {
  if (sh.permutes && !C::kCommutative)
    throw ScheduleError("replay: schedule '" + ToString(s) + "' reorders inputs, but " + C::kName +
                        "'s Combine is not commutative");
  if constexpr (!HasTileLift<C>) {
    if (sh.lifts)
      throw ScheduleError("replay: schedule '" + ToString(s) + "' lifts whole tiles, but " +
                          C::kName + " defines no tile lift");
  }
}

// The evaluation of a non-empty schedule (ShapeOf(s, n).empty is false); kinds that are not
// IsStructured go through their tree.
template <Carrier C>
StateOf<C> Structured(const Schedule& s, std::span<const InputOf<C>> x);

template <Carrier C>
StateOf<C> Omp(const Schedule& s, std::span<const InputOf<C>> x) {  // NOLINT(misc-no-recursion)
  const std::uint64_t n = x.size();
  const Schedule inner = s.inner.empty() ? Schedule::Seq() : ParseSchedule(s.inner);
  std::vector<StateOf<C>> roots;
  roots.reserve(s.parts);
  for (std::uint64_t c = 0; c < s.parts; ++c) {
    const std::uint64_t lo = OmpChunkStart(n, s.parts, c);
    const std::uint64_t hi = OmpChunkStart(n, s.parts, c + 1);
    if (ShapeOf(inner, hi - lo).empty) continue;  // an empty chunk tree has no root
    roots.push_back(Structured<C>(inner, x.subspan(lo, hi - lo)));
  }
  if (s.outer == OuterOrder::kPairwise) return PairwiseOverStates<C>(roots.data(), 0, roots.size());
  StateOf<C> acc = roots[0];
  for (std::size_t i = 1; i < roots.size(); ++i) acc = C::Combine(acc, roots[i]);
  return acc;
}

template <Carrier C>
StateOf<C> TreeOrderFree(const MergeTree& t, std::span<const InputOf<C>> x);

template <Carrier C>
StateOf<C> Structured(const Schedule& s, std::span<const InputOf<C>> x) {
  const std::uint64_t n = x.size();
  const InputOf<C>* p = x.data();
  switch (s.kind) {
    case ScheduleKind::kSeq:
      return Chain1<C>(p, 0, n, 1, s.lift);
    case ScheduleKind::kReverse: {
      StateOf<C> acc = Chain1<C>(p, n - 1, 1, 1, s.lift);
      for (std::uint64_t i = n - 1; i-- > 0;) acc = C::Combine(Chain1<C>(p, i, 1, 1, s.lift), acc);
      return acc;
    }
    case ScheduleKind::kPairwise:
      return Pairwise<C>(p, 0, n, s.leaf, s.lift);
    case ScheduleKind::kBlocked:
      return Blocked<C>(p, n, s);
    case ScheduleKind::kStrided:
      return Strided<C>(p, n, s);
    case ScheduleKind::kRandom:
      if (s.lift) break;  // not in the grammar; the tree decides
      return Random<C>(p, s.seed, n);
    case ScheduleKind::kOmp:
      return Omp<C>(s, x);
    default:
      break;
  }
  // cuda (an omp chunk's inner schedule) and unknown kinds: their tree.
  const MergeTree t = BuildTree(s, n);
  CheckReplayable<C>(t, n);
  if (t.Empty()) return C::Identity();
  return TreeOrderFree<C>(t, x);
}

// Any explicit tree, order-free scalars: chains (in lanes where they are alike), then combines
// in tree order over one state per node.
template <Carrier C>
StateOf<C> TreeOrderFree(const MergeTree& t, std::span<const InputOf<C>> x) {
  const std::size_t nchains = t.chains.size();
  std::unique_ptr<StateOf<C>[]> state(new StateOf<C>[t.NodeCount()]);
  const InputOf<C>* p = x.data();
  std::size_t k = 0;
  while (k < nchains) {
    const Chain& c = t.chains[k];
    if (c.mode == ChainMode::kPush && c.count > 1 && k + kLanes <= nchains) {
      // kLanes consecutive push chains of one length and stride: one loop.
      bool alike = true;
      std::uint64_t first[kLanes];
      for (std::size_t w = 0; w < kLanes && alike; ++w) {
        const Chain& d = t.chains[k + w];
        alike = d.mode == ChainMode::kPush && d.count == c.count && d.stride == c.stride;
        first[w] = d.first;
      }
      if (alike) {
        ChainsTogether<C, kLanes>(p, first, c.count, c.stride, &state[k]);
        k += kLanes;
        continue;
      }
    }
    if (c.count == 1 && c.mode == ChainMode::kPush) {
      state[k] = PushOne<C>(C::Identity(), p[c.first]);
    } else {
      state[k] = Chain1<C>(p, c.first, c.count, c.stride, c.mode == ChainMode::kLiftTile);
    }
    ++k;
  }
  for (std::size_t m = 0; m < t.combines.size(); ++m)
    state[nchains + m] = C::Combine(state[t.combines[m].left], state[t.combines[m].right]);
  return state[t.Root()];
}

}  // namespace fast_replay_detail

// The state of x reduced in the tree's order: Replay<C>(t, x), bit for bit (see the contract).
template <Carrier C>
typename C::State FastReplay(const MergeTree& t, std::span<const typename C::Input> x) {
  CheckReplayable<C>(t, x.size());
  if (t.Empty()) return C::Identity();
  if (!FastReplayOrderFree<typename C::Scalar>::Holds()) return Replay<C>(t, x);
  // Fused (matrix-unit) chains are the oracle's alone (core/mma.hpp): Replay evaluates them.
  for (const Chain& c : t.chains)
    if (c.mode == ChainMode::kFused) return Replay<C>(t, x);
  return fast_replay_detail::TreeOrderFree<C>(t, x);
}

// The state of x reduced by schedule s: Replay<C>(BuildTree(s, x.size()), x), bit for bit,
// without building the tree for the structured kinds.
template <Carrier C>
typename C::State FastReplay(const Schedule& s, std::span<const typename C::Input> x) {
  using namespace fast_replay_detail;
  if (!IsStructured(s)) return FastReplay<C>(BuildTree(s, x.size()), x);
  const Shape sh = ShapeOf(s, x.size());
  CheckShape<C>(s, sh);
  if (sh.empty) return C::Identity();
  if (!FastReplayOrderFree<typename C::Scalar>::Holds())
    return Replay<C>(BuildTree(s, x.size()), x);
  return Structured<C>(s, x);
}

template <Carrier C>
typename C::State FastReplay(std::string_view schedule, std::span<const typename C::Input> x) {
  return FastReplay<C>(ParseSchedule(schedule), x);
}

template <Carrier C>
typename C::Result FastReplayResult(const Schedule& s, std::span<const typename C::Input> x) {
  return C::Finalize(FastReplay<C>(s, x));
}

}  // namespace carrier
