// core/random_splits.hpp: the splits of random:SEED (tree_detail::RandomSplit), many at once,
// for the fast engine (core/fast_replay.hpp).
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
// How: where the CPU has AVX-512 F+DQ (checked once at run time; no compiler flag, the rest of
// the build stays baseline x86-64), eight splits at a time: both SplitMix64 rounds in 64-bit
// lanes, then h % d without an integer divider, in doubles, in two exact steps:
//   h = H 2^32 + L (H, L < 2^32);  R1 = H - floor(H / d) d;  V = R1 2^32 + L (< 2^52);
//   h % d = V - floor(V / d) d.
// floor(fl(X / d)) == floor(X / d) for integers 0 <= X < 2^52 and d >= 1, in every rounding
// mode: X / d = k + f with f = 0 or f >= 1/d, and |fl(X / d) - X / d| < ulp(X / d) <=
// 2^-52 X / d < 1/d, while k itself is a double, so rounding never crosses an integer. Every
// product floor(.) d is at most X and every difference is an integer below 2^53: exact.
// Elsewhere (no AVX-512, the remainders of a level below eight, other compilers) the scalar
// function, `%` included. tests/core/test_fast_replay*.cpp compare both with RandomSplit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/orders/random.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
#define CARRIER_RANDOM_SPLITS_AVX512 1
#include <immintrin.h>
#else
#define CARRIER_RANDOM_SPLITS_AVX512 0
#endif

namespace carrier::fast_replay_detail {

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

// The breadth-first queue of one random:S region (fast_replay.hpp RandomRegion). Queued nodes
// are offsets [a, b) from the region's first input with their split `mid` and child state
// slots; a child is a leaf (1 input: slot = its input's offset), a pair (2 inputs: slot
// cap + its first input's offset, so that the state of every adjacent pair may be computed in
// one contiguous pass; pair[] lists the pairs' first inputs) or a node (>= 3 inputs: queued at
// index t, slot 2 cap + t). Each array holds cap + kRandomQueueSlack entries: the vector path
// writes whole vectors past the last valid entry.
inline constexpr std::uint32_t kRandomQueueSlack = 16;
struct RandomQueue {
  std::uint32_t cap;
  std::uint32_t* a;
  std::uint32_t* b;
  std::uint32_t* mid;
  std::uint32_t* left;
  std::uint32_t* right;
  std::uint32_t* pair;
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
      q.pair[pairs] = c0;
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

#if CARRIER_RANDOM_SPLITS_AVX512

namespace random_splits_avx512 {

#define CARRIER_AVX512_DQ __attribute__((target("avx512f,avx512dq")))  // NOLINT

CARRIER_AVX512_DQ inline __m512i SplitMix64x8(__m512i x) {
  __m512i z = _mm512_add_epi64(x, _mm512_set1_epi64(static_cast<long long>(kSplitMix64Gamma)));
  z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 30)),
                         _mm512_set1_epi64(static_cast<long long>(0xbf58476d1ce4e5b9ULL)));
  z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 27)),
                         _mm512_set1_epi64(static_cast<long long>(0x94d049bb133111ebULL)));
  return _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
}

// h % d per lane, 1 <= d < 2^20 (the two exact steps of the contract).
CARRIER_AVX512_DQ inline __m512i Remainder8(__m512i h, __m512d d) {
  constexpr int kFloor = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
  const __m512d hi = _mm512_cvtepu64_pd(_mm512_srli_epi64(h, 32));
  const __m512d lo = _mm512_cvtepu64_pd(_mm512_and_si512(h, _mm512_set1_epi64(0xffffffffLL)));
  const __m512d q1 = _mm512_roundscale_pd(_mm512_div_pd(hi, d), kFloor);
  const __m512d r1 = _mm512_sub_pd(hi, _mm512_mul_pd(q1, d));
  const __m512d v = _mm512_add_pd(_mm512_mul_pd(r1, _mm512_set1_pd(4294967296.0)), lo);
  const __m512d q2 = _mm512_roundscale_pd(_mm512_div_pd(v, d), kFloor);
  return _mm512_cvtpd_epu64(_mm512_sub_pd(v, _mm512_mul_pd(q2, d)));
}

CARRIER_AVX512_DQ inline std::uint32_t Level(const RandomSplitter& split, std::uint64_t base,
                                             const std::uint32_t* a, const std::uint32_t* b,
                                             std::uint32_t* mid, std::uint32_t count) {
  const __m512i seed = _mm512_set1_epi64(static_cast<long long>(split.mixed_seed));
  const __m512i vbase = _mm512_set1_epi64(static_cast<long long>(base));
  const __m512i one = _mm512_set1_epi64(1);
  std::uint32_t k = 0;
  for (; k + 8 <= count; k += 8) {
    const __m512i va =
        _mm512_cvtepu32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + k)));
    const __m512i vb =
        _mm512_cvtepu32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + k)));
    const __m512i h = SplitMix64x8(
        _mm512_xor_si512(SplitMix64x8(_mm512_xor_si512(seed, _mm512_add_epi64(va, vbase))),
                         _mm512_add_epi64(vb, vbase)));
    const __m512d d = _mm512_cvtepu64_pd(_mm512_sub_epi64(_mm512_sub_epi64(vb, va), one));
    const __m512i m = _mm512_add_epi64(_mm512_add_epi64(va, one), Remainder8(h, d));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(mid + k), _mm512_cvtepi64_epi32(m));
  }
  return k;
}

CARRIER_AVX512_DQ inline std::size_t Remainders(const std::uint64_t* h, const std::uint32_t* d,
                                                std::uint64_t* r, std::size_t count) {
  std::size_t k = 0;
  for (; k + 8 <= count; k += 8) {
    const __m512d vd = _mm512_cvtepu64_pd(
        _mm512_cvtepu32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(d + k))));
    const __m512i vh = _mm512_loadu_si512(h + k);
    _mm512_storeu_si512(r + k, Remainder8(vh, vd));
  }
  return k;
}

// One side (the left or the right children) of 16 queued nodes: child [c0, c1) per lane in
// `valid`. Pairs and nodes are appended in lane order (compressed, whole vectors stored: the
// slack), each lane's slot is its input, cap + its input or 2 cap + its queue index (the
// rank among the nodes' lanes by expanding 0, 1, 2, ... into them).
CARRIER_AVX512_DQ inline __m512i PlaceSide(RandomQueue& q, __m512i c0, __m512i c1,
                                           __mmask16 valid) {
  const __m512i size = _mm512_sub_epi32(c1, c0);
  const __mmask16 is2 = _mm512_mask_cmpeq_epi32_mask(valid, size, _mm512_set1_epi32(2));
  const __mmask16 is3 = _mm512_mask_cmpgt_epu32_mask(valid, size, _mm512_set1_epi32(2));
  const __m512i rank = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  _mm512_storeu_si512(q.pair + q.pairs, _mm512_maskz_compress_epi32(is2, c0));
  _mm512_storeu_si512(q.a + q.tail, _mm512_maskz_compress_epi32(is3, c0));
  _mm512_storeu_si512(q.b + q.tail, _mm512_maskz_compress_epi32(is3, c1));
  const __m512i pair_slot = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(q.cap)), c0);
  const __m512i node_slot =
      _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(2 * q.cap + q.tail)),
                       _mm512_maskz_expand_epi32(is3, rank));
  q.pairs += static_cast<std::uint32_t>(__builtin_popcount(is2));
  q.tail += static_cast<std::uint32_t>(__builtin_popcount(is3));
  return _mm512_mask_mov_epi32(_mm512_mask_mov_epi32(c0, is2, pair_slot), is3, node_slot);
}

// RandomPlaceScalar's outcome up to the order of one level's children in the queue (here the
// left children of 16 nodes, then their right children): the same tree, other slot numbers.
CARRIER_AVX512_DQ inline void Place(RandomQueue& q, std::uint32_t j, std::uint32_t end) {
  for (std::uint32_t k = j; k < end; k += 16) {
    const __mmask16 valid =
        end - k >= 16 ? __mmask16{0xffff} : static_cast<__mmask16>((1u << (end - k)) - 1);
    const __m512i a = _mm512_maskz_loadu_epi32(valid, q.a + k);
    const __m512i b = _mm512_maskz_loadu_epi32(valid, q.b + k);
    const __m512i mid = _mm512_maskz_loadu_epi32(valid, q.mid + k);
    _mm512_mask_storeu_epi32(q.left + k, valid, PlaceSide(q, a, mid, valid));
    _mm512_mask_storeu_epi32(q.right + k, valid, PlaceSide(q, mid, b, valid));
  }
}

#undef CARRIER_AVX512_DQ

}  // namespace random_splits_avx512

inline bool RandomSplitsCpuHasAvx512() {
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  return yes;
}

#else

inline bool RandomSplitsCpuHasAvx512() { return false; }

#endif  // CARRIER_RANDOM_SPLITS_AVX512

// Whether the vector path runs: where the CPU has it, unless a test switched it off.
inline bool& RandomSplitsVectorisedFlag() {
  static bool on = RandomSplitsCpuHasAvx512();
  return on;
}
inline bool RandomSplitsVectorised() { return RandomSplitsVectorisedFlag(); }
// For tests: run the scalar path (false) or, where the CPU has it, the vector path (true);
// returns whether the vector path now runs. Not thread-safe: call it outside any replay.
inline bool UseRandomSplitsVectorised(bool on) {
  RandomSplitsVectorisedFlag() = on && RandomSplitsCpuHasAvx512();
  return RandomSplitsVectorisedFlag();
}

inline void RandomSplitLevel(const RandomSplitter& split, std::uint64_t base,
                             const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* mid,
                             std::uint32_t count) {
  std::uint32_t k = 0;
#if CARRIER_RANDOM_SPLITS_AVX512
  if (RandomSplitsVectorised()) k = random_splits_avx512::Level(split, base, a, b, mid, count);
#endif
  for (; k < count; ++k)
    mid[k] = static_cast<std::uint32_t>(split(base + a[k], base + b[k]) - base);
}

// The children of queued nodes [j, end): RandomPlaceScalar, or its vector form (the same
// children, a level's queue in another order) where the splits are vectorised.
inline void RandomPlaceLevel(RandomQueue& q, std::uint32_t j, std::uint32_t end) {
#if CARRIER_RANDOM_SPLITS_AVX512
  if (RandomSplitsVectorised()) return random_splits_avx512::Place(q, j, end);
#endif
  RandomPlaceScalar(q, j, end);
}

// r[k] = h[k] % d[k] for 1 <= d[k] < 2^20: the remainder step alone, for its tests.
inline void SmallRemainders(const std::uint64_t* h, const std::uint32_t* d, std::uint64_t* r,
                            std::size_t count) {
  std::size_t k = 0;
#if CARRIER_RANDOM_SPLITS_AVX512
  if (RandomSplitsVectorised()) k = random_splits_avx512::Remainders(h, d, r, count);
#endif
  for (; k < count; ++k) r[k] = h[k] % d[k];
}

}  // namespace carrier::fast_replay_detail
