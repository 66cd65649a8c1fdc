// core/random_splits_x86.hpp: the AVX-512 F+DQ forms of core/random_splits.hpp's batch
// operations (its contract says what they compute and why the remainders are exact).
//
// Only random_splits.hpp includes this file, and it calls these functions only where
// HostAvx512().HasFDq() (core/cpu_features.hpp) says the CPU runs them. Each is compiled for
// AVX-512 F+DQ by a target attribute, so the rest of the build stays baseline x86-64. Every
// function returns how far it got (whole vectors); the caller finishes the rest in scalar code.
// Place and PlaceSide take the queue (random_splits.hpp's RandomQueue) as a template parameter
// so that this file needs no definition from the portable one.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/cpu_features.hpp"
#include "core/hash_x86.hpp"

#if CARRIER_X86_KERNELS
#include <immintrin.h>

namespace carrier::replay_detail::random_splits_x86 {

#define CARRIER_X86_AVX512_DQ __attribute__((target("avx512f,avx512dq")))  // NOLINT

using hash_x86::SplitMix64x8;

// h % d per lane, 1 <= d < 2^20 (the exact steps of the contract). The three products and
// their sums are fused (FMA): each exact, so fused or not they give the same integers; fused,
// one instruction fewer each (a level's splits 7-8% faster: 1.26-1.29 -> 1.18 ns per split).
CARRIER_X86_AVX512_DQ inline __m512i Remainder8(__m512i h, __m512d d) {
  constexpr int kFloor = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
  const __m512d hi = _mm512_cvtepu64_pd(_mm512_srli_epi64(h, 32));
  const __m512d lo = _mm512_cvtepu64_pd(_mm512_and_si512(h, _mm512_set1_epi64(0xffffffffLL)));
  const __m512d two32 = _mm512_set1_pd(4294967296.0);
  const __m512d c =
      _mm512_fnmadd_pd(_mm512_roundscale_pd(_mm512_div_pd(two32, d), kFloor), d, two32);
  const __m512d v = _mm512_fmadd_pd(hi, c, lo);
  const __m512d q = _mm512_roundscale_pd(_mm512_div_pd(v, d), kFloor);
  return _mm512_cvtpd_epu64(_mm512_fnmadd_pd(q, d, v));
}

CARRIER_X86_AVX512_DQ inline std::uint32_t Level(std::uint64_t mixed_seed, std::uint64_t base,
                                                 const std::uint32_t* a, const std::uint32_t* b,
                                                 std::uint32_t* mid, std::uint32_t count) {
  const __m512i seed = _mm512_set1_epi64(static_cast<long long>(mixed_seed));
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

CARRIER_X86_AVX512_DQ inline std::size_t Remainders(const std::uint64_t* h, const std::uint32_t* d,
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
// `valid`. Pairs (where kListPairs) and nodes are appended in lane order (compressed, whole
// vectors stored: the slack), each lane's slot is its input, cap + its input or 2 cap + its queue
// index (the rank among the nodes' lanes by expanding 0, 1, 2, ... into them).
template <bool kListPairs, class Queue>
CARRIER_X86_AVX512_DQ inline __m512i PlaceSide(Queue& q, __m512i c0, __m512i c1, __mmask16 valid) {
  const __m512i size = _mm512_sub_epi32(c1, c0);
  const __mmask16 is2 = _mm512_mask_cmpeq_epi32_mask(valid, size, _mm512_set1_epi32(2));
  const __mmask16 is3 = _mm512_mask_cmpgt_epu32_mask(valid, size, _mm512_set1_epi32(2));
  const __m512i rank = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  if constexpr (kListPairs)
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
template <bool kListPairs, class Queue>
CARRIER_X86_AVX512_DQ inline void PlaceNodes(Queue& q, std::uint32_t j, std::uint32_t end) {
  for (std::uint32_t k = j; k < end; k += 16) {
    const __mmask16 valid =
        end - k >= 16 ? __mmask16{0xffff} : static_cast<__mmask16>((1u << (end - k)) - 1);
    const __m512i a = _mm512_maskz_loadu_epi32(valid, q.a + k);
    const __m512i b = _mm512_maskz_loadu_epi32(valid, q.b + k);
    const __m512i mid = _mm512_maskz_loadu_epi32(valid, q.mid + k);
    _mm512_mask_storeu_epi32(q.left + k, valid, PlaceSide<kListPairs>(q, a, mid, valid));
    _mm512_mask_storeu_epi32(q.right + k, valid, PlaceSide<kListPairs>(q, mid, b, valid));
  }
}
template <class Queue>
CARRIER_X86_AVX512_DQ inline void Place(Queue& q, std::uint32_t j, std::uint32_t end) {
  if (q.pair != nullptr) return PlaceNodes<true>(q, j, end);
  PlaceNodes<false>(q, j, end);
}

#undef CARRIER_X86_AVX512_DQ

}  // namespace carrier::replay_detail::random_splits_x86

#endif  // CARRIER_X86_KERNELS
