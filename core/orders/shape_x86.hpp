// core/orders/shape_x86.hpp: the AVX-512 F+DQ forms of the shape walk's block hashes
// (core/orders/shape.hpp: the region hashes of pairwise:1 and random:S, reverse's leaves, the
// chains of blocked:T's tiles and strided:K's lanes): eight independent hashes per instruction
// instead of one hash chain at a time.
//
// Only shape.hpp includes this file, and it calls these functions only where
// ShapeHashesVectorised() (HostAvx512().HasFDq(), unless a test switched it off) holds. Both
// compute TreeHash's own expressions (core/tree_hash.hpp Absorb, CombineHash) through
// SplitMix64x8, which equals SplitMix64 lane by lane: the same 64-bit integers as the scalar
// loop. Each returns how far it got (whole vectors); the caller finishes the rest in scalar code.
#pragma once

#include <cstdint>

#include "core/cpu_features.hpp"
#include "core/hash_x86.hpp"

#if CARRIER_X86_KERNELS
#include <immintrin.h>

namespace carrier::shape_x86 {

#define CARRIER_X86_AVX512_DQ __attribute__((target("avx512f,avx512dq")))  // NOLINT

// Absorb(h, v) = Mix(h ^ Mix(v + offset)) per lane.
CARRIER_X86_AVX512_DQ inline __m512i Absorb8(__m512i h, __m512i v, __m512i offset) {
  using hash_x86::SplitMix64x8;
  return SplitMix64x8(_mm512_xor_si512(h, SplitMix64x8(_mm512_add_epi64(v, offset))));
}

// out[i] = Absorb(tag, first + i) for i < count (whole vectors); returns how many.
CARRIER_X86_AVX512_DQ inline std::uint32_t AbsorbIndices(std::uint64_t tag, std::uint64_t first,
                                                         std::uint32_t count, std::uint64_t offset,
                                                         std::uint64_t* out) {
  const __m512i vtag = _mm512_set1_epi64(static_cast<long long>(tag));
  const __m512i voff = _mm512_set1_epi64(static_cast<long long>(offset));
  const __m512i step = _mm512_set1_epi64(8);
  __m512i idx = _mm512_add_epi64(_mm512_set1_epi64(static_cast<long long>(first)),
                                 _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7));
  std::uint32_t i = 0;
  for (; i + 8 <= count; i += 8) {
    _mm512_storeu_si512(out + i, Absorb8(vtag, idx, voff));
    idx = _mm512_add_epi64(idx, step);
  }
  return i;
}

// out[i] = Absorb(h, v[i]) for i < count (whole vectors; out may be v); returns how many.
CARRIER_X86_AVX512_DQ inline std::uint32_t AbsorbValues(std::uint64_t h, const std::uint64_t* v,
                                                        std::uint32_t count, std::uint64_t offset,
                                                        std::uint64_t* out) {
  const __m512i vh = _mm512_set1_epi64(static_cast<long long>(h));
  const __m512i voff = _mm512_set1_epi64(static_cast<long long>(offset));
  std::uint32_t i = 0;
  for (; i + 8 <= count; i += 8)
    _mm512_storeu_si512(out + i, Absorb8(vh, _mm512_loadu_si512(v + i), voff));
  return i;
}

// G vectors of ChainHashes' chains: chains w < 8 G from first (lane i of vector g: chain 8 g +
// i), into out[0 .. 8 G).
template <std::uint64_t G>
CARRIER_X86_AVX512_DQ inline void ChainGroup(__m512i vstart, std::uint64_t first, std::uint64_t gap,
                                             __m512i lane, __m512i step, std::uint64_t len,
                                             __m512i voff, std::uint64_t* out) {
  __m512i x[G], idx[G];
  for (std::uint64_t g = 0; g < G; ++g) {
    x[g] = vstart;
    idx[g] = _mm512_add_epi64(_mm512_set1_epi64(static_cast<long long>(first + 8 * g * gap)), lane);
  }
  for (std::uint64_t j = 0; j < len; ++j) {
    for (std::uint64_t g = 0; g < G; ++g) {
      x[g] = Absorb8(x[g], idx[g], voff);
      idx[g] = _mm512_add_epi64(idx[g], step);
    }
  }
  for (std::uint64_t g = 0; g < G; ++g) _mm512_storeu_si512(out + 8 * g, x[g]);
}

// out[w] = start absorbing first + w gap, first + w gap + stride, ..., first + w gap + (len - 1)
// stride in turn, for w < count (whole vectors): Chain's hashes of `count` chains of len inputs,
// eight chains per vector and four vectors in flight (each step of a chain waits on its last).
// Returns how many.
CARRIER_X86_AVX512_DQ inline std::uint64_t ChainHashes(std::uint64_t start, std::uint64_t first,
                                                       std::uint64_t gap, std::uint64_t stride,
                                                       std::uint64_t len, std::uint64_t count,
                                                       std::uint64_t offset, std::uint64_t* out) {
  const __m512i voff = _mm512_set1_epi64(static_cast<long long>(offset));
  const __m512i lane = _mm512_mullo_epi64(_mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7),
                                          _mm512_set1_epi64(static_cast<long long>(gap)));
  const __m512i step = _mm512_set1_epi64(static_cast<long long>(stride));
  const __m512i vstart = _mm512_set1_epi64(static_cast<long long>(start));
  std::uint64_t w = 0;
  for (; w + 32 <= count; w += 32)  // four vectors in flight
    ChainGroup<4>(vstart, first + w * gap, gap, lane, step, len, voff, out + w);
  for (; w + 8 <= count; w += 8)
    ChainGroup<1>(vstart, first + w * gap, gap, lane, step, len, voff, out + w);
  return w;
}

// out[i] = Absorb(Absorb(start, h[i]), h[i + 1]) for i < count (whole vectors; reads h[0 ..
// count]), start = Mix(kTagCombine): CombineHash of every adjacent pair. Absorb(x, v) is
// Mix(x ^ Mix(v + offset)), and h[i + 1]'s inner Mix is also pair i + 1's: each is computed once
// (the next vector's, shifted in by a lane), three Mixes a pair instead of four. Returns how many.
CARRIER_X86_AVX512_DQ inline std::uint32_t AdjacentCombineHashes(std::uint64_t start,
                                                                 std::uint64_t offset,
                                                                 const std::uint64_t* h,
                                                                 std::uint32_t count,
                                                                 std::uint64_t* out) {
  using hash_x86::SplitMix64x8;
  const __m512i vstart = _mm512_set1_epi64(static_cast<long long>(start));
  const __m512i voff = _mm512_set1_epi64(static_cast<long long>(offset));
  std::uint32_t i = 0;
  if (count < 16) return 0;
  __m512i y = SplitMix64x8(_mm512_add_epi64(_mm512_loadu_si512(h), voff));  // Mix(h[lane] + off)
  for (; i + 16 <= count; i += 8) {  // h[i + 8 .. i + 15] lies inside h[0 .. count]
    const __m512i next = SplitMix64x8(_mm512_add_epi64(_mm512_loadu_si512(h + i + 8), voff));
    const __m512i right = _mm512_alignr_epi64(next, y, 1);  // Mix(h[i + 1 + lane] + offset)
    const __m512i left = SplitMix64x8(_mm512_xor_si512(vstart, y));
    _mm512_storeu_si512(out + i, SplitMix64x8(_mm512_xor_si512(left, right)));
    y = next;
  }
  return i;
}

// out[t] = Absorb(Absorb(start, h[left[t]]), h[right[t]]) for t < count (whole vectors), where
// start = Mix(kTagCombine): CombineHash of the slots' hashes. Returns how many.
CARRIER_X86_AVX512_DQ inline std::uint32_t CombineHashes(
    std::uint64_t start, std::uint64_t offset, const std::uint32_t* left,
    const std::uint32_t* right, std::uint32_t count, const std::uint64_t* h, std::uint64_t* out) {
  const __m512i vstart = _mm512_set1_epi64(static_cast<long long>(start));
  const __m512i voff = _mm512_set1_epi64(static_cast<long long>(offset));
  std::uint32_t t = 0;
  for (; t + 8 <= count; t += 8) {
    const __m256i li = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(left + t));
    const __m256i ri = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(right + t));
    const __m512i l = _mm512_i32gather_epi64(li, h, 8);
    const __m512i r = _mm512_i32gather_epi64(ri, h, 8);
    _mm512_storeu_si512(out + t, Absorb8(Absorb8(vstart, l, voff), r, voff));
  }
  return t;
}

#undef CARRIER_X86_AVX512_DQ

}  // namespace carrier::shape_x86

#endif  // CARRIER_X86_KERNELS
