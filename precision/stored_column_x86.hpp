// precision/stored_column_x86.hpp: the AVX-512 forms of the column encoder's common case
// (precision/stored_column.cpp, NormalCodes) and of its decoder (Decode): eight values per
// instruction instead of one.
//
// Only stored_column.cpp includes this file, and it calls these functions only where
// ColumnCodesVectorised() (core/cpu_features.hpp's F+DQ switch, unless a test turned it off)
// holds. The lanes compute the scalar loop's expressions (the code from the value's exponent and
// leading fraction bits, the same four range tests, and the same check that the layout's table
// gives the value back, its entry read by a gather), so a code written here is the one the scalar
// loop writes. It returns how far it got (whole vectors) and whether every value so far was a
// normal value with a code; the caller finishes the rest in scalar code. Decode8 reads the
// same table entries as the scalar loop.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/cpu_features.hpp"

namespace carrier::stored_column_x86 {

// The constants of one code layout, as NormalCodes derives them (the portable
// loop reads them too).
struct NormalLayout {
  std::uint64_t min_e;      // biased exponent of the layout's least normal (>= 1)
  int index_shift;          // p - 1: where the binade number goes
  int fraction_shift;       // 53 - p: the fraction bits below the layout's
  int sign_shift;           // bits - 1
  std::uint64_t low_mask;   // (1 << fraction_shift) - 1
  std::uint64_t code_mask;  // (1 << bits) - 1
  std::uint64_t idx_limit;  // the largest index of a finite value with a code
};

}  // namespace carrier::stored_column_x86

#if CARRIER_X86_KERNELS
#include <immintrin.h>

namespace carrier::stored_column_x86 {

#define CARRIER_X86_AVX512_DQ __attribute__((target("avx512f,avx512dq")))  // NOLINT

// Sets out[i] (Code: 8 or 16 bits) for i below the returned count (whole vectors), and `good`
// to whether every one of those values was a normal value of the layout that table gives back.
template <class Code>
CARRIER_X86_AVX512_DQ inline std::size_t NormalCodes8(const double* values, std::size_t count,
                                                      const NormalLayout& l, const double* table,
                                                      Code* out, bool& good) {
  static_assert(sizeof(Code) == 1 || sizeof(Code) == 2, "8- or 16-bit codes");
  const __m512i abs_mask = _mm512_set1_epi64(0x7fffffffffffffffLL);
  const __m512i frac_mask = _mm512_set1_epi64(0x000fffffffffffffLL);
  const __m512i low_mask = _mm512_set1_epi64(static_cast<long long>(l.low_mask));
  const __m512i code_mask = _mm512_set1_epi64(static_cast<long long>(l.code_mask));
  const __m512i min_e = _mm512_set1_epi64(static_cast<long long>(l.min_e));
  const __m512i one = _mm512_set1_epi64(1);
  const __m512i top_e = _mm512_set1_epi64(2047);
  const __m512i idx_limit = _mm512_set1_epi64(static_cast<long long>(l.idx_limit));
  const __m128i index_shift = _mm_cvtsi32_si128(l.index_shift);
  const __m128i fraction_shift = _mm_cvtsi32_si128(l.fraction_shift);
  const __m128i sign_shift = _mm_cvtsi32_si128(l.sign_shift);
  __mmask8 bad = 0;
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m512i b = _mm512_loadu_si512(values + i);
    const __m512i a = _mm512_and_si512(b, abs_mask);
    const __m512i e = _mm512_srli_epi64(a, 52);
    const __m512i binade = _mm512_add_epi64(_mm512_sub_epi64(e, min_e), one);
    const __m512i idx =
        _mm512_or_si512(_mm512_sll_epi64(binade, index_shift),
                        _mm512_srl_epi64(_mm512_and_si512(a, frac_mask), fraction_shift));
    const __m512i code = _mm512_and_si512(
        _mm512_or_si512(_mm512_sll_epi64(_mm512_srli_epi64(b, 63), sign_shift), idx), code_mask);
    bad |= _mm512_cmplt_epu64_mask(e, min_e);
    bad |= _mm512_cmpeq_epu64_mask(e, top_e);
    bad |= _mm512_test_epi64_mask(a, low_mask);
    bad |= _mm512_cmpgt_epu64_mask(idx, idx_limit);
    bad |= _mm512_cmpneq_epu64_mask(_mm512_i64gather_epi64(code, table, 8), b);
    if constexpr (sizeof(Code) == 2) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm512_cvtepi64_epi16(code));
    } else {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), _mm512_cvtepi64_epi8(code));
    }
  }
  good = bad == 0;
  return i;
}

// out[i] = table[codes[i]] for i below the returned count (whole vectors): the decoder's loop,
// its eight table reads per gather.
template <class Code>
CARRIER_X86_AVX512_DQ inline std::size_t Decode8(const Code* codes, std::size_t count,
                                                 const double* table, double* out) {
  static_assert(sizeof(Code) == 1 || sizeof(Code) == 2, "8- or 16-bit codes");
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    __m512i idx;
    if constexpr (sizeof(Code) == 2) {
      idx = _mm512_cvtepu16_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + i)));
    } else {
      idx = _mm512_cvtepu8_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes + i)));
    }
    _mm512_storeu_pd(out + i, _mm512_i64gather_pd(idx, table, 8));
  }
  return i;
}

#undef CARRIER_X86_AVX512_DQ

}  // namespace carrier::stored_column_x86

#endif  // CARRIER_X86_KERNELS
