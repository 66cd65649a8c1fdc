// core/hash_x86.hpp: core/hash.hpp's SplitMix64, eight lanes at a time, for the *_x86 kernels
// that hash (core/random_splits_x86.hpp, core/orders/shape_x86.hpp).
//
// SplitMix64x8(x) lane i == SplitMix64(x lane i), bit for bit (64-bit adds, shifts, xors and
// the low halves of 64-bit products: no rounding anywhere). Compiled for AVX-512 F+DQ by a
// target attribute; callers run it only where HostAvx512().HasFDq() (core/cpu_features.hpp).
#pragma once

#include <cstdint>

#include "core/cpu_features.hpp"
#include "core/hash.hpp"

#if CARRIER_X86_KERNELS
#include <immintrin.h>

namespace carrier::hash_x86 {

__attribute__((target("avx512f,avx512dq"))) inline __m512i SplitMix64x8(__m512i x) {
  __m512i z = _mm512_add_epi64(x, _mm512_set1_epi64(static_cast<long long>(kSplitMix64Gamma)));
  z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 30)),
                         _mm512_set1_epi64(static_cast<long long>(0xbf58476d1ce4e5b9ULL)));
  z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 27)),
                         _mm512_set1_epi64(static_cast<long long>(0x94d049bb133111ebULL)));
  return _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
}

}  // namespace carrier::hash_x86

#endif  // CARRIER_X86_KERNELS
