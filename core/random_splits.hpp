// core/random_splits.hpp: the splits of random:SEED (tree_detail::RandomSplit), many at once,
// for the fast engine (core/replay.hpp).
//
// Contract
//   RandomSplitter{Mix(seed)}(lo, hi) == tree_detail::RandomSplit(seed, lo, hi) for every
//   lo + 2 <= hi: the same function with its constant first step Mix(seed) hoisted.
//   RandomSplitLevel(split, base, a, b, mid, count) sets, for k < count,
//     mid[k] = split(base + a[k], base + b[k]) - base,
//   given a[k] + 3 <= b[k] <= a[k] + kRandomSplitMaxSize (so the split lies inside [a, b) and
//   fits 32 bits). Every mid is exactly the scalar function's, on every CPU.
//   SmallRemainders(h, d, r, count) sets r[k] = h[k] % d[k] for 1 <= d[k] < 2^20, exactly.
//
// How: where the CPU has AVX-512 F+DQ (HostAvx512(), core/cpu_features.hpp: checked once at run
// time; no compiler flag, the rest of the build stays baseline x86-64), eight splits at a time
// (core/random_splits_x86.hpp): both SplitMix64 rounds in 64-bit
// lanes, then h % d without an integer divider, in doubles, in exact steps:
//   h = H 2^32 + L (H, L < 2^32);  C = 2^32 - floor(2^32 / d) d  (= 2^32 mod d);
//   V = H C + L  (= h mod d, modulo d; V <= (2^32 - 1) d < 2^52);  h % d = V - floor(V / d) d.
// C depends on d alone, so its division overlaps the hash instead of following it (one
// division after the hash, where H mod d first took two in a row: 3-7% of a random:1 replay).
// floor(fl(X / d)) == floor(X / d) for integers 0 <= X < 2^52 and d >= 1, in every rounding
// mode: X / d = k + f with f = 0 or f >= 1/d, and |fl(X / d) - X / d| < ulp(X / d) <=
// 2^-52 X / d < 1/d, while k itself is a double, so rounding never crosses an integer. Every
// product floor(.) d is at most X and every difference is an integer below 2^53: exact, so
// the vector form may fuse each product with its sum or difference (FMA) and get the same.
// Elsewhere (no AVX-512, the remainders of a level below eight, other compilers) the scalar
// function, `%` included. tests/core/test_fast_replay*.cpp compare both with RandomSplit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/orders/random.hpp"
#include "core/random_splits_x86.hpp"

namespace carrier::replay_detail {

// The largest interval RandomSplitLevel takes (its d = size - 1 stays below 2^20, so that
// V = R1 2^32 + L < d 2^32 stays below 2^52).
inline constexpr std::uint32_t kRandomSplitMaxSize = std::uint32_t{1} << 20;

// random:SEED's split of [lo, hi): tree_detail::RandomSplit with Mix(seed) hoisted.
struct RandomSplitter {
  std::uint64_t mixed_seed;
  std::uint64_t operator()(std::uint64_t lo, std::uint64_t hi) const {
    const std::uint64_t h = tree_detail::Mix(tree_detail::Mix(mixed_seed ^ lo) ^ hi);
    return lo + 1 + h % (hi - lo - 1);
  }
};

// The breadth-first queue of one random:S region (replay.hpp RandomRegion). Queued nodes
// are offsets [a, b) from the region's first input with their split `mid` and child state
// slots; a child is a leaf (1 input: slot = its input's offset), a pair (2 inputs: slot
// cap + its first input's offset, so that the state of every adjacent pair may be computed in
// one contiguous pass; pair[] lists the pairs' first inputs, unless it is null: a reader that
// takes every adjacent pair needs no list) or a node (>= 3 inputs: queued at index t, slot
// 2 cap + t). Each array holds cap + kRandomQueueSlack entries: the vector path writes whole
// vectors past the last valid entry.
inline constexpr std::uint32_t kRandomQueueSlack = 16;
struct RandomQueue {
  std::uint32_t cap;
  std::uint32_t* a;
  std::uint32_t* b;
  std::uint32_t* mid;
  std::uint32_t* left;
  std::uint32_t* right;
  std::uint32_t* pair;  // or null: pairs are counted, not listed
  std::uint32_t tail;   // queued nodes so far
  std::uint32_t pairs;  // pairs so far
};

// size == 1 ? leaf : size == 2 ? pair : node, without a branch (the size is unpredictable).
inline std::uint32_t RandomChildSlot(std::uint32_t size, std::uint32_t leaf, std::uint32_t pair,
                                     std::uint32_t node) {
  const std::uint32_t is1 = 0u - static_cast<std::uint32_t>(size == 1);
  const std::uint32_t is2 = 0u - static_cast<std::uint32_t>(size == 2);
  return (is1 & leaf) | (is2 & pair) | (~(is1 | is2) & node);
}

// The children of queued nodes [j, end) (their mid set), one at a time: each child is written
// to the next free pair and queue entries and the counters advance only for the kind it is.
inline void RandomPlaceScalar(RandomQueue& q, std::uint32_t j, std::uint32_t end) {
  std::uint32_t tail = q.tail, pairs = q.pairs;
  for (; j < end; ++j) {
    const std::uint32_t a = q.a[j], b = q.b[j], mid = q.mid[j];
    auto place = [&](std::uint32_t c0, std::uint32_t c1) {
      const std::uint32_t size = c1 - c0;
      if (q.pair != nullptr) q.pair[pairs] = c0;
      q.a[tail] = c0;
      q.b[tail] = c1;
      const std::uint32_t slot = RandomChildSlot(size, c0, q.cap + c0, 2 * q.cap + tail);
      pairs += size == 2;
      tail += size >= 3;
      return slot;
    };
    q.left[j] = place(a, mid);
    q.right[j] = place(mid, b);
  }
  q.tail = tail;
  q.pairs = pairs;
}

// Whether the vector path runs: where the CPU has it (core/cpu_features.hpp), unless a test
// switched it off.
struct RandomSplitsFamily;
inline bool RandomSplitsVectorised() { return Avx512FDqSwitch<RandomSplitsFamily>::On(); }
// For tests: run the scalar path (false) or, where the CPU has it, the vector path (true);
// returns whether the vector path now runs. Not thread-safe: call it outside any replay.
inline bool UseRandomSplitsVectorised(bool on) {
  return Avx512FDqSwitch<RandomSplitsFamily>::Use(on);
}

inline void RandomSplitLevel(const RandomSplitter& split, std::uint64_t base,
                             const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* mid,
                             std::uint32_t count) {
  std::uint32_t k = 0;
#if CARRIER_X86_KERNELS
  if (RandomSplitsVectorised())
    k = random_splits_x86::Level(split.mixed_seed, base, a, b, mid, count);
#endif
  for (; k < count; ++k)
    mid[k] = static_cast<std::uint32_t>(split(base + a[k], base + b[k]) - base);
}

// The children of queued nodes [j, end): RandomPlaceScalar, or its vector form (the same
// children, a level's queue in another order) where the splits are vectorised.
inline void RandomPlaceLevel(RandomQueue& q, std::uint32_t j, std::uint32_t end) {
#if CARRIER_X86_KERNELS
  if (RandomSplitsVectorised()) return random_splits_x86::Place(q, j, end);
#endif
  RandomPlaceScalar(q, j, end);
}

// The queue arrays of regions of at most `largest` inputs, and the levels of the last one.
struct RandomScratch {
  explicit RandomScratch(std::uint32_t largest)
      : cap(largest),
        a(cap + kRandomQueueSlack),
        b(cap + kRandomQueueSlack),
        mid(cap + kRandomQueueSlack),
        left(cap + kRandomQueueSlack),
        right(cap + kRandomQueueSlack),
        pair(cap + kRandomQueueSlack) {}
  // The largest region. Slots: leaves [0, cap), pairs [cap, 2 cap), nodes [2 cap, 3 cap).
  std::uint32_t cap;
  // RandomQueue's arrays
  std::vector<std::uint32_t> a, b, mid, left, right, pair;
  // The first queue index of each level of the last region.
  std::vector<std::uint32_t> level;
};

// Every split of the region [lo, lo + m), 3 <= m <= w.cap (queued as offsets from lo; the
// split function sees lo + offset), breadth first: the queue of its nodes (node 0 the region's
// root, a node's children at the next level, so later in the queue) with their children's slots,
// and w.level[l] the first node of level l. The queue lives in w's arrays; its pair list is
// written where list_pairs holds (a fast replay that combines every adjacent pair leaves it
// out: 4-6% of a random:1 replay of Sum<float>).
inline RandomQueue RandomSplitRegion(const RandomSplitter& split, std::uint64_t lo, std::uint32_t m,
                                     RandomScratch& w, bool list_pairs) {
  RandomQueue q{.cap = w.cap,
                .a = w.a.data(),
                .b = w.b.data(),
                .mid = w.mid.data(),
                .left = w.left.data(),
                .right = w.right.data(),
                .pair = list_pairs ? w.pair.data() : nullptr,
                .tail = 1,
                .pairs = 0};
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
  return q;
}

// r[k] = h[k] % d[k] for 1 <= d[k] < 2^20: the remainder step alone, for its tests.
inline void SmallRemainders(const std::uint64_t* h, const std::uint32_t* d, std::uint64_t* r,
                            std::size_t count) {
  std::size_t k = 0;
#if CARRIER_X86_KERNELS
  if (RandomSplitsVectorised()) k = random_splits_x86::Remainders(h, d, r, count);
#endif
  for (; k < count; ++k) r[k] = h[k] % d[k];
}

}  // namespace carrier::replay_detail
