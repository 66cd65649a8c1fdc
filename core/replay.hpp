// core/replay.hpp: Replay, the same reduction as ReplayOracle (core/replay_oracle.hpp), computed
// fast.
//
// Contract
//   Replay<C>(tree, x)      == ReplayOracle<C>(tree, x)                bit for bit, every field;
//   Replay<C>(schedule, x)  == ReplayOracle<C>(BuildTree(schedule, n), x)  bit for bit;
//   for every carrier, compute scalar, rounding mode and tree. ReplayOracle stays the definition;
//   this file only changes WHEN each node is evaluated, never WHAT it computes: every chain
//   still pushes (or LiftTile-s) its inputs in increasing index order from Identity, and every
//   combine is Combine(earlier segment, later segment) with exactly the operands the tree
//   names. No two operations are ever reassociated, fused or swapped.
//
// Why evaluation order is free: a node's state is a pure function of its operands for float,
// double, long double, Mpfr and deterministic emulated rounding. It is NOT for stochastic
// rounding, whose random bits come from a per-thread counter advanced by every operation in
// program order (precision/emulated_oracle.hpp, "sr"): there, any other evaluation order draws
// other bits. So ReplayOrderFree<Scalar> decides at run time, and where it says no, Replay
// evaluates exactly as ReplayOracle does (chains in id order, then combines in id order).
// A scalar with a static GetRounding() whose enum has kStochastic (EmulatedOracle's shape) is free
// unless that mode is in force (a dynamic mode is read from the thread's scope at the call);
// any other scalar declaring a `kRounding` is assumed order-sensitive; the rest are free.
// Specialise ReplayOrderFree for a new scalar type whose operations carry hidden state.
//
// How it is fast
//   Structured schedules (the Schedule overloads) are evaluated without building the tree: the
//   kind's own walk (core/orders/<kind>.hpp, the same walk the tree builder and the shape walk
//   follow) emits its chains and combines into ReplayWalker, whose nodes are the carrier
//   states. Memory: O(depth) states beyond the input (plus O(K) for strided:K, O(P) for omp:P,
//   O(kRandomRegion) for random:S, O(8 kTileBatch) for blocked:T and, for the level-batched
//   carriers below, O(kPairwiseRegion) for pairwise:1), no allocation per node. The visitor
//   reads the input through an InputSource (an array in memory is one window of all n inputs,
//   handed out in place; a fill callback is read a window at a time), so Replay and
//   ReplayWindowed run the same code. Where a walk offers a piece of its shape whole, the
//   visitor evaluates that piece's nodes together:
//     seq               one chain: one loop;
//     reverse           the fold, one loop a window at a time;
//     pairwise[:L]      subtrees within a window: under pairwise:1 straight-line code for
//                       their exact shape up to kPairwiseUnrolled inputs (two such halves up
//                       to twice that), two sibling leaf chains of pairwise:L in one loop;
//     blocked:T         tiles kTileBatch<C> at a time (independent chains in lanes; blocked:1
//                       one vector of first pushes), handed to the walk's seq or pairwise
//                       merge a batch at a time;
//     strided:K[:tile]  all K lane chains advanced together row by row (lane k = chain k),
//                       the walk merging the lanes;
//     random:S          subtrees of at most kRandomRegion inputs (and a window), each
//                       evaluated breadth first (all its splits by the tree's own split
//                       function, then its states bottom up) in O(kRandomRegion) scratch;
//     omp:P, splitk:S   the partition's walk: each chunk by its nested order's walk, then the
//                       outer merge of chunk roots (core/orders/partition.hpp);
//     cuda and the orders from outside, as a partition's nested order: their tree, evaluated
//                       by the tree overload; at the top level, BuildTree and the tree overload.
//   Carriers with a vector batch (HasVectorCombine: Sum over Emulated in a deterministic
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
// Reading the input a window at a time
//   ReplayWindowed<C>(s, n, fill, window) == Replay<C>(s, x) bit for bit, every
//   carrier, scalar, rounding mode and schedule, ScheduleErrors included, where x is the array
//   fill describes: fill(lo, count, out) writes inputs [lo, lo + count) into out[0 .. count), so
//   a caller may keep x packed and never hold it whole. It makes Replay's checks, in its
//   order, and the same decisions (not IsWalkedOrder: BuildTree; empty: Identity; not
//   ReplayOrderFree: ReplayOracle). The walk's pieces are evaluated on decoded windows where
//   the piece fits one (a pairwise subtree, a batch of blocked tiles, a block of strided rows,
//   a random:S region), the walk's own recursion above them, and a chain longer than a window
//   continues from one window to the next (a chain pushed piece by piece in order is the same
//   chain: ChainsContinue); random:S's splits take positions in its own range, wherever the
//   windows fall. Every input is asked for exactly once, in requests of at most `window`
//   inputs (kReplayWindow = 2^16 by default) except where a longer piece is needed whole: a
//   strided:K row (K inputs), a lifted leaf or tile (LiftTile takes it at once: the whole input
//   for seq:lift, T rows of K for strided:K:tile:T:lift). Where Replay builds a tree (cuda,
//   orders from outside, unknown kinds) or defers to ReplayOracle (stochastic rounding), all n
//   inputs are read into one buffer (an omp chunk with a cuda inner schedule: the chunk).
//
// Errors: exactly ReplayOracle's (ScheduleError, one line): input count differs from the tree's n;
// a permuting tree for a non-commutative carrier; tile lifts for a carrier without LiftTile.
// Threads: none of its own; reentrant.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/carrier.hpp"
#include "core/merge_tree.hpp"
#include "core/pairwise_plan.hpp"
#include "core/random_splits.hpp"
#include "core/replay_oracle.hpp"
#include "core/schedule.hpp"

namespace carrier {

// May nodes computed in scalar T be evaluated in any order that respects data dependencies?
// Specialise for scalar types with order-dependent operations (see the contract above).
template <class T>
struct ReplayOrderFree {
  static bool Holds() {
    if constexpr (requires {
                    T::GetRounding();
                    decltype(T::GetRounding())::kStochastic;
                  }) {
      // EmulatedOracle's shape: the mode in force now (a dynamic one reads the thread's scope).
      return T::GetRounding() != decltype(T::GetRounding())::kStochastic;
    } else if constexpr (requires { T::kRounding; }) {
      return false;  // a rounding-mode scalar we cannot query: assume a random stream
    } else {
      return true;
    }
  }
};

namespace replay_detail {

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

// A carrier whose push chains run faster handed over whole (Sum over Emulated: eight chains
// per vector instruction, the mode decided once per call): C::PushChains(acc, x, first, lanes,
// count, stride) sets, for j < count and w < lanes, acc[w] = Push(acc[w], x[first[w] + j stride])
// (lanes are independent; each chain's pushes in its order).
template <class C>
concept HasBatchChains = Carrier<C> &&
    requires(typename C::State* s, const typename C::Input* x, const std::uint64_t* f) {
  C::kPushChainsBatched;
  C::PushChains(s, x, f, std::size_t{1}, std::uint64_t{1}, std::uint64_t{1});
} && C::kPushChainsBatched;

// One chain, exactly as ReplayChain (core/replay_oracle.hpp) computes it.
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

// W push chains of equal length `count` and common stride continued together: s[w] =
// Push(s[w], x[first[w] + j stride]) for j < count. Each lane is its own chain; lanes only
// share the loop, so each chain's operations are its own, in order. A chain continued piece
// by piece over consecutive inputs is the same chain, the same pushes on the same states:
// ReplayWindowed continues chains across windows this way. (Chain1 keeps its own loop:
// routed through a shared one, GCC 12 inlined Chain1 into Pairwise's recursion and made
// pairwise:4 over Kahan<float> 15% slower.)
template <Carrier C, std::size_t W>
[[gnu::always_inline]] inline void ChainsContinue(const InputOf<C>* x, const std::uint64_t* first,
                                                  std::uint64_t count, std::uint64_t stride,
                                                  std::array<StateOf<C>, W>& s) {
  if constexpr (HasBatchChains<C>) {
    C::PushChains(s.data(), x, first, W, count, stride);
  } else {
    std::array<const InputOf<C>*, W> p;
    for (std::size_t w = 0; w < W; ++w) p[w] = x + first[w];
    for (std::uint64_t j = 0; j < count; ++j) {
      const std::uint64_t off = j * stride;
      for (std::size_t w = 0; w < W; ++w) s[w] = PushOne<C>(s[w], p[w][off]);
    }
  }
}

// W push chains of equal length `count` and common stride, starting at first[w], from Identity.
template <Carrier C, std::size_t W>
void ChainsTogether(const InputOf<C>* x, const std::uint64_t* first, std::uint64_t count,
                    std::uint64_t stride, StateOf<C>* out) {
  std::array<StateOf<C>, W> s;
  for (std::size_t w = 0; w < W; ++w) s[w] = C::Identity();
  ChainsContinue<C, W>(x, first, count, stride, s);
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

// pairwise:LEAF (LEAF > 1, pushed) over x[lo, hi), hi > lo: the split rule's recursion down to
// the leaf chains, two sibling leaves of one length in one loop (two lanes).
template <Carrier C>
StateOf<C> PairwiseLeaves(const InputOf<C>* x, std::uint64_t lo, std::uint64_t hi,
                          std::uint64_t leaf) {  // NOLINT(misc-no-recursion)
  const std::uint64_t m = hi - lo;
  if (m <= leaf) return Chain1<C>(x, lo, m, 1, false);
  const std::uint64_t mid = PairwiseMid(lo, hi);
  if (mid - lo <= leaf && mid - lo == hi - mid) {
    StateOf<C> two[2];
    const std::uint64_t first[2] = {lo, mid};
    ChainsTogether<C, 2>(x, first, mid - lo, 1, two);
    return C::Combine(two[0], two[1]);
  }
  const StateOf<C> a = PairwiseLeaves<C>(x, lo, mid, leaf);
  const StateOf<C> b = PairwiseLeaves<C>(x, mid, hi, leaf);
  return C::Combine(a, b);
}

// Leaves of pairwise:LEAF (LEAF > 1) per subtree the fast replay takes from the walk whole.
inline constexpr std::uint64_t kPairwiseLeavesTaken = 16;

// pairwise:1 for a HasVectorCombine carrier: subtrees of at most kPairwiseRegion inputs are
// evaluated a level at a time from a plan of their shape (core/pairwise_plan.hpp), the combines
// above them by the walk.
using carrier::BuildPairwisePlan;
using carrier::kPairwiseRegion;
using carrier::PairwisePlan;
using carrier::PairwisePlans;

template <Carrier C>
struct PairwiseLevelsWork : PairwisePlans {
  explicit PairwiseLevelsWork(std::uint64_t n)
      : S(new StateOf<C>[2 * std::min<std::uint64_t>(n, kPairwiseRegion)]) {}
  std::unique_ptr<StateOf<C>[]> S;  // a region's leaves, then its nodes
};

// The pairwise:1 region x[0 .. m) (2 <= m <= kPairwiseRegion), a level at a time.
template <Carrier C>
StateOf<C> PairwiseRegionLevels(const InputOf<C>* x, std::uint32_t m, PairwiseLevelsWork<C>& w) {
  const PairwisePlan& p = w.Plan(m);
  StateOf<C>* S = w.S.get();
  C::FirstPushes(x, S, m);
  std::uint32_t end = m - 1;  // nodes
  for (std::size_t l = p.level.size(); l-- > 0;) {
    const std::uint32_t start = p.level[l];
    C::CombineGathered(S, p.left.data() + start, S, p.right.data() + start, S + m + start,
                       end - start);
    end = start;
  }
  return S[m];
}

// Tiles of blocked:T per batch: kLanes, or for a HasBatchChains carrier 32 (four vectors of
// chains in flight, core/scalar.hpp GatheredAdd::Chains).
template <Carrier C>
inline constexpr std::size_t kTileBatch = HasBatchChains<C> ? 32 : kLanes;

// out[k] = PushOne(Identity(), x[k]) for k < n: one batch where the carrier has one (the
// leaves of a random region, blocked:1's tiles).
template <Carrier C>
void FirstPushesOf(const InputOf<C>* x, StateOf<C>* out, std::uint64_t n) {
  if constexpr (HasVectorCombine<C>) {
    C::FirstPushes(x, out, n);
  } else {
    for (std::uint64_t i = 0; i < n; ++i) out[i] = PushOne<C>(C::Identity(), x[i]);
  }
}

// The tile states of blocked:T for tiles [t0, t1) (at most kTileBatch<C>), into
// out[0 .. t1 - t0).
template <Carrier C>
void BlockedTiles(const InputOf<C>* x, std::uint64_t n, std::uint64_t tile, bool lift,
                  std::uint64_t t0, std::uint64_t t1, StateOf<C>* out) {
  if (tile == 1 && !lift) {  // blocked:1: every tile one push from Identity (Chain1's)
    FirstPushesOf<C>(x + t0, out, t1 - t0);
    return;
  }
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

// Full rows x[0 .. rows K) pushed onto the K lane chains cur[0 .. K), row after row.
template <Carrier C>
void PushRows(StateOf<C>* __restrict cur, const InputOf<C>* __restrict x, std::uint64_t rows,
              std::uint64_t K, const std::uint64_t* lane_first) {
  if constexpr (HasBatchChains<C>) {
    C::PushChains(cur, x, lane_first, K, rows, K);
  } else {
    for (std::uint64_t r = 0; r < rows; ++r) {
      const InputOf<C>* row = x + r * K;
      for (std::uint64_t k = 0; k < K; ++k) cur[k] = PushOne<C>(cur[k], row[k]);
    }
  }
}

// strided:K[:tile:T][:lift]: lane k holds x[k], x[k + K], ...; tile j of lane k its elements
// jT .. jT + T - 1. All lanes advance together (one row of K inputs at a time), which is each
// lane's own chain in its own order; returns the K lane states, each lane's tiles merged in
// order (the walk merges the lanes).
// The inputs come by rows: rows(r0, r1) returns a pointer to inputs r0 K .. min(n, r1 K) - 1
// (input r0 K first). Pushed tiles ask for at most `block` rows at a time (each lane's chain
// continues from one block to the next), lifted tiles for all rows of the tile at once.
template <Carrier C, class Rows>
std::vector<StateOf<C>> StridedLaneStates(std::uint64_t n, const orders::StridedParams& s,
                                          std::uint64_t block, Rows&& rows) {
  const std::uint64_t K = s.lanes;
  auto lane_count = [&](std::uint64_t k) { return k < n ? (n - k + K - 1) / K : 0; };
  std::vector<StateOf<C>> lane(K, C::Identity());
  const std::uint64_t rows_n = lane_count(0);             // the longest lane
  const std::uint64_t full_rows = n / K;                  // rows every lane has
  const std::uint64_t T = s.tile == 0 ? rows_n : s.tile;  // elements per tile (0: whole lane)
  std::vector<StateOf<C>> cur(K, C::Identity());
  std::vector<std::uint64_t> lane_first;  // HasBatchChains: lane k's input in a row is row[k]
  if constexpr (HasBatchChains<C>)
    for (std::uint64_t k = 0; k < K; ++k) lane_first.push_back(k);
  for (std::uint64_t j = 0; j * T < rows_n || (j == 0 && rows_n == 0); ++j) {
    // Tile j of every lane that has one: rows [r0, r1).
    const std::uint64_t r0 = j * T, r1 = std::min(rows_n, r0 + T);
    if (s.lift) {
      const InputOf<C>* x = r1 > r0 ? rows(r0, r1) : nullptr;  // x[0] is input r0 K
      for (std::uint64_t k = 0; k < K; ++k) {
        const std::uint64_t c = lane_count(k);
        if (r0 >= c && !(j == 0 && c == 0)) continue;
        cur[k] = Chain1<C>(x, k, std::min(c, r1) - std::min(c, r0), K, true);
      }
    } else {
      for (std::uint64_t k = 0; k < K; ++k) cur[k] = C::Identity();
      for (std::uint64_t b0 = r0, b1; b0 < r1; b0 = b1) {
        b1 = r1 - b0 <= block ? r1 : b0 + block;
        const InputOf<C>* x = rows(b0, b1);  // x[0] is input b0 K
        const std::uint64_t full_end = std::min(b1, full_rows);
        if (full_end > b0) PushRows<C>(cur.data(), x, full_end - b0, K, lane_first.data());
        for (std::uint64_t r = std::max(b0, full_end); r < b1; ++r)
          for (std::uint64_t k = 0; r * K + k < n; ++k)
            cur[k] = PushOne<C>(cur[k], x[(r - b0) * K + k]);
      }
    }
    for (std::uint64_t k = 0; k < K; ++k) {
      const std::uint64_t c = lane_count(k);
      if (j == 0) {
        lane[k] = cur[k];  // a lane's first tile (or its one empty chain) is its state
      } else if (r0 < c) {
        lane[k] = C::Combine(lane[k], cur[k]);
      }
    }
    if (rows_n == 0) break;
  }
  return lane;
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

// The subtree over [lo, lo + m), 3 <= m <= w.cap, whose inputs are x[0 .. m) (x[i] is input
// lo + i; the splits use lo, the position in the random order's own range); S holds 3 w.cap
// states.
template <Carrier C>
StateOf<C> RandomRegionStates(const InputOf<C>* x, const RandomSplitter& split, std::uint64_t lo,
                              std::uint32_t m, RandomScratch& w, StateOf<C>* S) {
  const std::uint32_t cap = w.cap;
#if defined(__GNUC__)
  // The region's inputs are first read after its splits: asked for now (into L2), they arrive
  // while the splits are computed (2-5% of a random:1 replay of Sum<float>).
  constexpr std::uint32_t kStep = sizeof(InputOf<C>) >= 64 ? 1 : 64 / sizeof(InputOf<C>);
  for (std::uint32_t i = 0; i < m; i += kStep) __builtin_prefetch(x + i, 0, 2);
#endif
  const RandomQueue q = RandomSplitRegion(split, lo, m, w, !HasCheapAdjacent<C>);
  // Leaves; then the pairs (for a HasCheapAdjacent carrier every adjacent pair of leaves in
  // one contiguous pass, the tree's pairs among them: a pair's slot is cap + its first input);
  // then the nodes, each level's independent of one another (their children are pairs, leaves
  // or nodes of deeper levels): deepest level first, a level per batch where batches are
  // vectorised, else one node at a time in reverse queue order.
  FirstPushesOf<C>(x, S, m);
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

// Whether BuildTree(s, n) has no node, permutes its inputs, or lifts tiles, without building
// it and before any input is read: the kind's walk into ShapeProbe, which takes every piece a
// walk offers whole without evaluating it (a pairwise subtree, a random region, the reverse
// fold, the strided lanes, blocked's tiles and their merge), so the walk costs O(1) for seq,
// pairwise, reverse and blocked:T, O(K) for strided:K, O(n / kRandomRegion) splits for
// random:S, and its chunks' walks for a partition (walking blocked:1:pairwise's merge over
// 2^24 tiles took 42 ms, most of the replay's own 56 ms). An order from outside (cuda as a
// partition's nested order) reports its built tree.
struct Shape {
  bool empty = false;
  bool permutes = false;
  bool lifts = false;
};

class ShapeProbe {
 public:
  using Node = std::uint64_t;
  Shape shape;

  Node Chain(std::uint64_t, std::uint64_t, std::uint64_t, ChainMode mode) { return Saw(mode); }
  Node Singles(std::uint64_t, std::uint64_t, ChainMode mode) { return Saw(mode); }
  Node Combine(Node, Node) { return 0; }
  void Permutes() { shape.permutes = true; }
  static bool TakesPairwise(std::uint64_t, std::uint64_t, ChainMode) { return true; }
  Node PairwiseSubtree(std::uint64_t, std::uint64_t, std::uint64_t, ChainMode mode) {
    return Saw(mode);
  }
  static std::uint64_t RandomRegionLimit() { return kRandomRegion; }
  static Node RandomRegion(std::uint64_t, std::uint64_t, std::uint32_t, std::uint64_t) {
    return 0;  // pushed inputs only
  }
  static Node ReverseFold(std::uint64_t, std::uint64_t) { return 0; }  // pushed inputs only
  struct Tiles0 {  // every tile's mode is Tiles'; the merge over them adds nothing to see
    static Node Merged() { return 0; }
  };
  Tiles0 Tiles(std::uint64_t, std::uint64_t, std::uint64_t, ChainMode mode) {
    Saw(mode);
    return {};
  }
  std::vector<Node> StridedLanes(const orders::StridedParams& p, std::uint64_t, std::uint64_t) {
    shape.lifts = shape.lifts || p.lift;  // K chains, empty ones included
    return std::vector<Node>(p.lanes, 0);
  }
  std::optional<Node> Tree(const MergeTree& t, std::uint64_t) {
    shape.permutes = shape.permutes || t.permutes;
    shape.lifts = shape.lifts || t.UsesTileLift();
    if (t.Empty()) return std::nullopt;
    return 0;
  }

 private:
  Node Saw(ChainMode mode) {
    shape.lifts = shape.lifts || mode == ChainMode::kLiftTile;
    return 0;
  }
};

inline Shape ShapeOf(const Schedule& s, std::uint64_t n) {
  ShapeProbe probe;
  probe.shape.empty = !WalkSchedule(s, n, 0, probe).has_value();
  return probe.shape;
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

// ---- Reading the inputs: InputSource, and the pieces that span windows ----
// An InputSource is an array in memory (Replay), one window holding all n inputs, handed out
// in place, or a fill callback (ReplayWindowed), read a window at a time. The pieces above run
// on each window where the tree's shape is shift-invariant (PairwiseMid(lo, hi) - lo depends on
// hi - lo only; blocked tiles and strided rows start at multiples of T and K), and chains
// continue across windows (ChainsContinue). No state is computed from other operands or in
// another shape. Over an array every request fits the one window, so each piece takes its
// in-memory path with no copy.

// Where one evaluation reads its inputs. Decode(lo, count) returns inputs [base + lo, base + lo
// + count): in place for an array, else read by the fill into one buffer (reallocated only when
// a request outgrows it, the old one freed first; what it held is not kept). base: a
// partition chunk's first input. One type per carrier (the fill is called through a pointer, a
// window at a time), so every evaluator is compiled once per carrier for both sources.
template <Carrier C>
class InputSource {
 public:
  using Input = InputOf<C>;
  // The n inputs of x, one window of n.
  static InputSource Over(std::span<const Input> x) {
    InputSource w;
    w.data_ = x.data();
    w.window = std::max<std::uint64_t>(x.size(), 1);
    return w;
  }
  // The inputs fill(lo, count, out) writes, `window` (>= 1) at a time where the schedule allows.
  template <class Fill>
  static InputSource Through(Fill& fill, std::uint64_t window) {
    InputSource w;
    w.fill_ctx_ = &fill;
    w.fill_ = [](void* ctx, std::uint64_t lo, std::uint64_t count, Input* out) {
      (*static_cast<Fill*>(ctx))(lo, count, out);
    };
    w.window = window;
    return w;
  }

  std::uint64_t window = 1;  // inputs per request where the schedule allows (>= 1)
  std::uint64_t base = 0;

  // Room for `count` inputs; what the buffer held is not kept.
  Input* Room(std::uint64_t count) {
    if (buf_.size() < count) {
      buf_ = std::vector<Input>();
      buf_.resize(count);
    }
    return buf_.data();
  }
  // Inputs [lo, lo + count) into out.
  void Read(std::uint64_t lo, std::uint64_t count, Input* out) {
    if (count == 0) return;
    if (data_ != nullptr) {
      std::copy_n(data_ + base + lo, count, out);
    } else {
      fill_(fill_ctx_, base + lo, count, out);
    }
  }
  // Inputs [lo, lo + count): in place, or at the buffer's start.
  const Input* Decode(std::uint64_t lo, std::uint64_t count) {
    if (data_ != nullptr) return data_ + base + lo;
    Input* p = Room(count);
    Read(lo, count, p);
    return p;
  }

 private:
  InputSource() = default;
  const Input* data_ = nullptr;
  void* fill_ctx_ = nullptr;
  void (*fill_)(void*, std::uint64_t, std::uint64_t, Input*) = nullptr;
  std::vector<Input> buf_;
};

// Inputs [lo, hi) pushed onto s in order, a window at a time: one chain, continued.
template <Carrier C>
void ChainFrom(InputSource<C>& w, StateOf<C>& s, std::uint64_t lo, std::uint64_t hi) {
  std::array<StateOf<C>, 1> chain{s};
  const std::uint64_t first = 0;
  for (std::uint64_t a = lo; a < hi;) {
    const std::uint64_t count = std::min(w.window, hi - a);
    ChainsContinue<C, 1>(w.Decode(a, count), &first, count, 1, chain);
    a += count;
  }
  s = chain[0];
}

// reverse without lift (n > 0): BuildTree's order, acc = x[n - 1], then acc = Combine(x[i], acc)
// for i from n - 2 down to 0, over windows taken from the end (over an array: the one window).
template <Carrier C>
StateOf<C> ReverseFrom(InputSource<C>& w, std::uint64_t n) {
  StateOf<C> acc{};
  for (std::uint64_t hi = n; hi > 0;) {
    const std::uint64_t lo = hi - std::min(w.window, hi);
    const InputOf<C>* x = w.Decode(lo, hi - lo);
    for (std::uint64_t i = hi; i-- > lo;) {
      const StateOf<C> e = Chain1<C>(x, i - lo, 1, 1, false);
      acc = i == n - 1 ? e : C::Combine(e, acc);
    }
    hi = lo;
  }
  return acc;
}

// BlockedTiles for tiles [t0, t1) (at most kTileBatch<C>) through windows. A batch that fits a
// window is decoded and handed to BlockedTiles. Otherwise lifted tiles are decoded as many
// whole tiles as a window holds (a longer tile alone); full pushed tiles advance together as
// BlockedTiles advances them (all of them in one C::PushChains for a HasBatchChains carrier, kLanes
// at a time otherwise), segment by segment: each step decodes the next window / lanes inputs of
// every tile side by side and continues every tile's chain over them; the other tiles are single
// chains across windows.
template <Carrier C>
void BlockedTilesFrom(InputSource<C>& w, std::uint64_t n, std::uint64_t tile, bool lift,
                      std::uint64_t t0, std::uint64_t t1, StateOf<C>* out) {
  const std::uint64_t r0 = t0 * tile, r1 = std::min(n, t1 * tile);
  if (r1 - r0 <= w.window) {
    BlockedTiles<C>(w.Decode(r0, r1 - r0), n - r0, tile, lift, 0, t1 - t0, out);
    return;
  }
  if (lift) {  // as many whole tiles per window as it holds, at least one
    for (std::uint64_t t = t0, k; t < t1; t += k) {
      k = std::clamp<std::uint64_t>(w.window / tile, 1, t1 - t);
      const std::uint64_t lo = t * tile, hi = std::min(n, (t + k) * tile);
      BlockedTiles<C>(w.Decode(lo, hi - lo), n - lo, tile, true, 0, k, out + (t - t0));
    }
    return;
  }
  // `lanes` (<= window) full tiles from tile a: push(x, first, count) continues lane l's chain
  // over x[first[l] .. first[l] + count), the next `count` inputs of tile a + l.
  auto by_segments = [&](std::uint64_t a, std::uint64_t lanes, auto&& push) {
    const std::uint64_t seg = w.window / lanes;
    InputOf<C>* room = w.Room(lanes * seg);
    std::array<std::uint64_t, kTileBatch<C>> first;
    for (std::uint64_t l = 0; l < lanes; ++l) first[l] = l * seg;
    for (std::uint64_t j = 0; j < tile; j += seg) {
      const std::uint64_t count = std::min(seg, tile - j);
      for (std::uint64_t l = 0; l < lanes; ++l) w.Read((a + l) * tile + j, count, room + l * seg);
      push(room, first.data(), count);
    }
  };
  const std::uint64_t full_end = std::max(t0, std::min(t1, n / tile));
  std::uint64_t t = t0;
  if constexpr (HasBatchChains<C>) {
    while (t < full_end) {  // one pass unless the window holds fewer inputs than there are tiles
      const std::uint64_t lanes = std::min(full_end - t, w.window);
      StateOf<C>* acc = out + (t - t0);
      for (std::uint64_t l = 0; l < lanes; ++l) acc[l] = C::Identity();
      by_segments(t, lanes,
                  [&](const InputOf<C>* x, const std::uint64_t* first, std::uint64_t count) {
                    C::PushChains(acc, x, first, lanes, count, 1);
                  });
      t += lanes;
    }
  } else {
    for (; w.window >= kLanes && t + kLanes <= full_end; t += kLanes) {
      std::array<StateOf<C>, kLanes> acc;
      for (std::size_t l = 0; l < kLanes; ++l) acc[l] = C::Identity();
      by_segments(t, kLanes,
                  [&](const InputOf<C>* x, const std::uint64_t* first, std::uint64_t count) {
                    ChainsContinue<C, kLanes>(x, first, count, 1, acc);
                  });
      for (std::size_t l = 0; l < kLanes; ++l) out[t - t0 + l] = acc[l];
    }
  }
  for (; t < t1; ++t) {
    const std::uint64_t lo = t * tile;
    StateOf<C> s = C::Identity();
    ChainFrom<C>(w, s, lo, lo + std::min(tile, n - lo));
    out[t - t0] = s;
  }
}

// Replay<C>(t, x) once CheckReplayable<C>(t, x.size()) has passed.
template <Carrier C>
StateOf<C> TreeChecked(const MergeTree& t, std::span<const InputOf<C>> x) {
  if (t.Empty()) return C::Identity();
  if (!ReplayOrderFree<typename C::Scalar>::Holds()) return ReplayOracle<C>(t, x);
  // Fused (matrix-unit) chains are the oracle's alone (core/mma.hpp): ReplayOracle evaluates them.
  for (const Chain& c : t.chains)
    if (c.mode == ChainMode::kFused) return ReplayOracle<C>(t, x);
  return TreeOrderFree<C>(t, x);
}

// ---- The fast replay as a walk visitor ----
// ReplayWalker's nodes are the carrier states themselves: each kind's walk (core/orders/) says
// which chains and combines make its tree, in which order, and the visitor computes each as it
// is emitted (Chain, Combine), reading inputs through its InputSource. Where a walk offers a
// piece of its shape whole (core/orders/order.hpp), the visitor evaluates the piece's nodes
// together, with the same operands: a pairwise subtree (a region a level at a time, a
// straight-line subtree, two sibling leaf chains in one loop), a random:S region (breadth
// first), the reverse fold (a window at a time), a batch of blocked tiles (kTileBatch chains
// per pass), strided:K's lanes (a row of K inputs at a time) and the explicit tree of an order
// from outside (TreeChecked over its inputs, read at once). Positions are absolute in the walk;
// the helpers above that read relative to w.base run with base at the piece's first input.
template <Carrier C>
class ReplayWalker {
 public:
  using Node = StateOf<C>;
  // w: the inputs; n: how many the whole walk covers (bounds the scratch of the region hooks).
  ReplayWalker(InputSource<C>& w, std::uint64_t n) : w_(w), n_(n) {}

  Node Chain(std::uint64_t first, std::uint64_t count, std::uint64_t stride, ChainMode mode) {
    if (count == 0) return C::Identity();
    const bool lift = mode == ChainMode::kLiftTile;  // kFused chains come only in a Tree
    if (stride == 1) {
      if (lift || count <= w_.window) return Chain1<C>(w_.Decode(first, count), 0, count, 1, lift);
      StateOf<C> s = C::Identity();
      ChainFrom<C>(w_, s, first, first + count);
      return s;
    }
    // A strided chain alone (the walks hand strided:K's chains over as StridedLanes): its own
    // inputs, one request each, gathered.
    std::vector<InputOf<C>> x(count);
    for (std::uint64_t j = 0; j < count; ++j) w_.Read(first + j * stride, 1, &x[j]);
    return Chain1<C>(x.data(), 0, count, 1, lift);
  }
  Node Combine(const Node& a, const Node& b) { return C::Combine(a, b); }
  void Permutes() {}  // ShapeOf and CheckShape decided before the walk

  // pairwise[:LEAF]: subtrees inside one window of m > leaf pushed inputs: of pairwise:1 a
  // region (HasVectorCombine) or up to two straight-line halves of kPairwiseUnrolled (one
  // recursion step fewer per 64 inputs: 10% of a Sum<float> replay at 2^22), of a longer leaf
  // up to about kPairwiseLeavesTaken leaves (the walk's recursion down to every pair of
  // leaves made pairwise:4 over Sum<float> 17% slower).
  bool TakesPairwise(std::uint64_t m, std::uint64_t leaf, ChainMode mode) const {
    if (m > w_.window || mode != ChainMode::kPush) return false;
    if (leaf == 1) return m <= (HasVectorCombine<C> ? kPairwiseRegion : 2 * kPairwiseUnrolled);
    return m / kPairwiseLeavesTaken <= leaf;
  }
  Node PairwiseSubtree(std::uint64_t first, std::uint64_t m, std::uint64_t leaf, ChainMode) {
    const InputOf<C>* x = w_.Decode(first, m);
    if (leaf == 1) {
      if constexpr (HasVectorCombine<C>) {
        if (m > kPairwiseUnrolled) {
          if (!levels_) levels_ = std::make_unique<PairwiseLevelsWork<C>>(std::min(n_, w_.window));
          return PairwiseRegionLevels<C>(x, static_cast<std::uint32_t>(m), *levels_);
        }
      }
      static constexpr auto kTable =
          PairwiseTable<C>(std::make_index_sequence<kPairwiseUnrolled>{});
      if (m <= kPairwiseUnrolled) return kTable[m - 1](x);
      const std::uint64_t mid = PairwiseMid<std::uint64_t>(0, m);  // two straight-line halves
      const StateOf<C> a = kTable[mid - 1](x);
      const StateOf<C> b = kTable[m - mid - 1](x + mid);
      return C::Combine(a, b);
    }
    return PairwiseLeaves<C>(x, 0, m, leaf);
  }

  // random:SEED: regions of at most kRandomRegion inputs inside one window.
  std::uint64_t RandomRegionLimit() const {
    return std::min({n_, w_.window, std::uint64_t{kRandomRegion}});
  }
  Node RandomRegion(std::uint64_t seed, std::uint64_t lo, std::uint32_t m, std::uint64_t first) {
    if (!random_) {
      const auto cap = static_cast<std::uint32_t>(RandomRegionLimit());
      random_.emplace(cap);
      random_states_.reset(new StateOf<C>[3 * std::size_t{cap}]);
    }
    const RandomSplitter split{tree_detail::Mix(seed)};
    return RandomRegionStates<C>(w_.Decode(first, m), split, lo, m, *random_, random_states_.get());
  }

  // reverse: the fold, windows from the end.
  Node ReverseFold(std::uint64_t first, std::uint64_t n) {
    const At at(w_, first);
    return ReverseFrom<C>(w_, n);
  }

  // blocked:T: its tiles kTileBatch<C> at a time, as many batches per decoded window as it holds.
  class TileBatch {
   public:
    TileBatch(InputSource<C>& w, std::uint64_t first, std::uint64_t n, std::uint64_t len, bool lift)
        : w_(w),
          first_(first),
          n_(n),
          len_(len),
          tiles_((n + len - 1) / len),
          per_window_(w.window / len / kBatch * kBatch),
          lift_(lift) {}
    // The states of tiles t .. b1_ - 1 (t in the last batch or just after it); a new batch
    // holds about `want` tiles (kBatch to kBuf) inside one decoded window.
    std::span<const Node> Batch(std::uint64_t t, std::uint64_t want) {
      if (t - b0_ >= b1_ - b0_) Next(t, want);
      return std::span<const Node>(buf_.data() + (t - b0_), b1_ - t);
    }

    // The seq merge (WalkSeqTiles): acc = combine(acc, tile t) for t = 1, 2, ... from tile 0's
    // state, a batch of kBatch tiles computed into a local buffer and folded before the next
    // one is computed. Replay<Sum<float>> at 2^22, ns per input, best of 3 rounds (harness over
    // this header): blocked:2 0.66, blocked:4 0.40, blocked:8 0.27, against 0.82 / 0.49 / 0.31
    // when the walk looped over Batch(t, 1) and 0.64 / 0.40 / 0.27 at d7b47e0 (before the walk).
    template <class F>
    Node LeftFold(F&& combine) {
      const At at(w_, first_);
      std::array<StateOf<C>, kBatch> buf;
      Node acc{};
      auto fold = [&](std::uint64_t t, std::uint64_t end) {
        std::size_t i = 0;
        if (t == 0) acc = buf[i++];
        for (; i < end - t; ++i) acc = combine(acc, buf[i]);
      };
      for (std::uint64_t t = 0; t < tiles_;) {
        if (per_window_ > 0) {  // as many whole batches per decoded window as it holds
          const std::uint64_t end = std::min(tiles_, t + per_window_);
          const std::uint64_t r0 = t * len_;
          const InputOf<C>* x = w_.Decode(r0, std::min(n_, end * len_) - r0);
          for (std::uint64_t u = t; u < end; u += kBatch) {
            const std::uint64_t v = std::min(end, u + kBatch);
            BlockedTiles<C>(x, n_ - r0, len_, lift_, u - t, v - t, buf.data());
            fold(u, v);
          }
          t = end;
        } else {
          const std::uint64_t end = std::min(tiles_, t + kBatch);
          BlockedTilesFrom<C>(w_, n_, len_, lift_, t, end, buf.data());
          fold(t, end);
          t = end;
        }
      }
      return acc;
    }

   private:
    static constexpr std::uint64_t kBatch = kTileBatch<C>;
    // The most tiles one Next computes: several batches where states are small, so that the
    // pairwise merge takes whole subtrees of short tiles at once. (The seq merge folds one
    // batch at a time, LeftFold: blocked:1 over Sum<float> at 2^22 took 1.21 ns per input so,
    // 1.39 with whole kBuf batches.)
    static constexpr std::uint64_t kBuf = sizeof(Node) <= 16 ? 8 * kBatch : kBatch;
    void Next(std::uint64_t t, std::uint64_t want) {
      const At at(w_, first_);
      std::uint64_t end;
      if (per_window_ > 0) {
        // A batch ends at the decoded tiles' end, so the next one decodes from there: every
        // input is asked for once, wherever the merge starts a batch.
        if (t < d0_ || t >= d1_) {
          d0_ = t;
          d1_ = std::min(tiles_, t + per_window_);
          x_ = w_.Decode(d0_ * len_, std::min(n_, d1_ * len_) - d0_ * len_);
        }
        end = std::min({d1_, t + kBuf, t + std::max(want, kBatch)});
        for (std::uint64_t u = t; u < end; u += kBatch)
          BlockedTiles<C>(x_, n_ - d0_ * len_, len_, lift_, u - d0_,
                          std::min(end, u + kBatch) - d0_, buf_.data() + (u - t));
      } else {
        end = std::min(tiles_, t + kBatch);
        BlockedTilesFrom<C>(w_, n_, len_, lift_, t, end, buf_.data());
      }
      b0_ = t;
      b1_ = end;
    }
    InputSource<C>& w_;
    std::uint64_t first_, n_, len_, tiles_, per_window_;
    bool lift_;
    std::uint64_t b0_ = 0, b1_ = 0;  // the tiles in buf_
    std::uint64_t d0_ = 0, d1_ = 0;  // the tiles decoded at x_
    const InputOf<C>* x_ = nullptr;
    std::array<StateOf<C>, kBuf> buf_;
  };
  TileBatch Tiles(std::uint64_t first, std::uint64_t n, std::uint64_t len, ChainMode mode) {
    return TileBatch(w_, first, n, len, mode == ChainMode::kLiftTile);
  }

  // strided:K[:tile:T]: every lane advanced a row at a time. StridedLaneStates asks for rows
  // in increasing order, each tile from its first row: whole tiles (T <= block rows) or blocks
  // of a tile. Where tiles are short, one window holds as many whole tiles as fit and serves
  // the requests inside it, so no request straddles two windows and each row is read once.
  // Over an array the one window holds every row.
  std::vector<Node> StridedLanes(const orders::StridedParams& q, std::uint64_t n,
                                 std::uint64_t first) {
    const At at(w_, first);
    const std::uint64_t K = q.lanes;
    const std::uint64_t rows_n = (n + K - 1) / K;
    const std::uint64_t block = n <= w_.window ? std::max<std::uint64_t>(rows_n, 1)
                                               : std::max<std::uint64_t>(1, w_.window / K);
    const std::uint64_t T = q.tile == 0 ? rows_n : q.tile;
    const std::uint64_t span = T > 0 && T <= block ? block / T * T : 0;  // rows per window
    std::uint64_t w0 = 0, w1 = 0;                                        // the rows decoded
    const InputOf<C>* rows = nullptr;                                    // input w0 K
    return StridedLaneStates<C>(n, q, block, [&](std::uint64_t r0, std::uint64_t r1) {
      if (r0 < w0 || r1 > w1) {
        w0 = r0;
        w1 = std::min(rows_n, r0 + std::max(r1 - r0, span));
        rows = w_.Decode(w0 * K, std::min(n, w1 * K) - w0 * K);
      }
      return rows + (r0 - w0) * K;
    });
  }

  // The orders from outside (cuda, and any kind with Build only, as a partition's inner
  // order): their tree over inputs [off, off + t.n), read at once.
  std::optional<Node> Tree(const MergeTree& t, std::uint64_t off) {
    CheckReplayable<C>(t, t.n);
    if (t.Empty()) return std::nullopt;
    const At at(w_, off);
    return TreeChecked<C>(t, std::span<const InputOf<C>>(w_.Decode(0, t.n), t.n));
  }

 private:
  // w.base moved to `first` for the scope of one piece.
  struct At {
    At(InputSource<C>& source, std::uint64_t first) : w(source), base(source.base) {
      w.base = base + first;
    }
    ~At() { w.base = base; }
    At(const At&) = delete;
    At& operator=(const At&) = delete;
    InputSource<C>& w;
    std::uint64_t base;
  };
  InputSource<C>& w_;
  std::uint64_t n_;
  std::unique_ptr<PairwiseLevelsWork<C>> levels_;
  std::optional<RandomScratch> random_;
  std::unique_ptr<StateOf<C>[]> random_states_;
};

// Schedule s over the n inputs of w: Replay(schedule, x) and ReplayWindowed alike, so the two
// make the same checks in the same order and the same decisions. The schedule is checked
// before any input is read (BuildTree and CheckReplayable, or ShapeOf and CheckShape); the
// orders that go through a tree (not IsWalkedOrder: cuda and the other orders from outside)
// and stochastic rounding (not ReplayOrderFree: ReplayOracle evaluates) read all n at once.
template <Carrier C>
StateOf<C> ReplayFrom(const Schedule& s, std::uint64_t n, InputSource<C>& w) {
  auto all = [&] { return std::span<const InputOf<C>>(w.Decode(0, n), n); };
  if (!IsWalkedOrder(s)) {
    const MergeTree t = BuildTree(s, n);
    CheckReplayable<C>(t, n);
    return TreeChecked<C>(t, all());
  }
  const Shape sh = ShapeOf(s, n);
  CheckShape<C>(s, sh);
  if (sh.empty) return C::Identity();
  if (!ReplayOrderFree<typename C::Scalar>::Holds()) {
    const MergeTree t = BuildTree(s, n);
    return ReplayOracle<C>(t, all());
  }
  ReplayWalker<C> v(w, n);
  return *WalkSchedule(s, n, 0, v);
}

}  // namespace replay_detail

// The state of x reduced in the tree's order: ReplayOracle<C>(t, x), bit for bit (see the
// contract).
template <Carrier C>
typename C::State Replay(const MergeTree& t, std::span<const typename C::Input> x) {
  CheckReplayable<C>(t, x.size());
  return replay_detail::TreeChecked<C>(t, x);
}

// The state of x reduced by schedule s: ReplayOracle<C>(BuildTree(s, x.size()), x), bit for bit,
// without building the tree for the structured kinds.
template <Carrier C>
typename C::State Replay(const Schedule& s, std::span<const typename C::Input> x) {
  auto w = replay_detail::InputSource<C>::Over(x);
  return replay_detail::ReplayFrom<C>(s, x.size(), w);
}

template <Carrier C>
typename C::State Replay(std::string_view schedule, std::span<const typename C::Input> x) {
  return Replay<C>(ParseSchedule(schedule), x);
}

// Inputs per window of ReplayWindowed.
inline constexpr std::uint64_t kReplayWindow = std::uint64_t{1} << 16;

// The state of the n inputs that fill describes, reduced by schedule s, reading them a window
// at a time: fill(lo, count, out) writes inputs [lo, lo + count) as C::Input into
// out[0 .. count). Returns Replay<C>(s, x) bit for bit, where x is the array fill
// describes, ScheduleErrors included (the schedule is checked before fill is first called:
// ShapeOf and CheckShape, or BuildTree and CheckReplayable). window: inputs per
// request where the schedule allows (0 is taken as 1). The structured kinds evaluated without a
// tree ask for every input exactly once, in ranges of at most
//   seq, reverse, random:S, pairwise[:L], blocked:T[...]   window
//   pairwise:L:lift, blocked:T[...]:lift                  max(window, min(L or T, n))
//   seq:lift                                              n
//   strided:K[:tile:T]                                    max(window, K)
//   strided:K[:tile:T]:lift                               max(window, min(n, K T)) (n without tile)
//   omp:P[...]                                            the inner schedule's over each chunk
//                                                         (a cuda inner schedule: the chunk)
// and hold no other inputs: one buffer of at most that many (plus the evaluators' states and
// scratch, and for a strided lift the lane's tile that Chain1 gathers, as Replay does).
// Otherwise (cuda, explicit orders from outside and unknown kinds, which go through BuildTree;
// stochastic rounding, which ReplayOracle evaluates) one request of all n into one buffer,
// then the tree or ReplayOracle over it (replay_detail::ReplayFrom, which Replay shares).
// Ranges come in no promised order.
template <Carrier C, class Fill>
typename C::State ReplayWindowed(const Schedule& s, std::uint64_t n, Fill&& fill,
                                 std::uint64_t window = kReplayWindow) {
  auto w = replay_detail::InputSource<C>::Through(fill, std::max<std::uint64_t>(window, 1));
  return replay_detail::ReplayFrom<C>(s, n, w);
}

template <Carrier C>
typename C::Result ReplayResult(const Schedule& s, std::span<const typename C::Input> x) {
  return C::Finalize(Replay<C>(s, x));
}

}  // namespace carrier
