// precision/emulated_x86.hpp: the x86 forms of Emulated's hot operations
// (precision/emulated.hpp, whose contract they keep: every lane's bits are Add's).
//
// Only emulated.hpp includes this file. Two kinds of code live here:
//   - SSE2 (baseline x86-64, compiled wherever __SSE2__ is): RoundNearestEvenSse2, the rne
//     rounding in the register that holds the double, and LatencyChainSse2, a seq chain kept in
//     one SSE register;
//   - AVX-512 (CARRIER_X86_KERNELS, core/cpu_features.hpp): GatheredAdd's eight-lane batches
//     (AVX-512F) and the rne seq chain's AVX-512VL loop, each compiled by a target attribute
//     so the rest of the build stays baseline x86-64. emulated.hpp runs them only where
//     HostAvx512() has the subset (F for the batches, VL for the chain) and the test switch
//     UseGatheredAddVectorised is on.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/cpu_features.hpp"
#include "precision/format.hpp"
#include "precision/rounding.hpp"

#if defined(__SSE2__) && !defined(__CUDACC__)
#include <emmintrin.h>
#endif
#if CARRIER_X86_KERNELS
#include <immintrin.h>
#endif

namespace carrier::emulated_detail {

// RoundNormalStatic on x86-64 for round to nearest even: the same add-then-truncate on the
// pattern, computed in the SSE register that holds x (no trip through a general register and
// back). An rne add is that rounding alone (no TwoSum before it for p <= 25), so a sequential
// chain's latency drops; harness, bf16 sum at 2^20: seq 4.18 -> 3.55 ns/elem, pairwise 3.73 ->
// 2.69. The other modes keep the general-register form: their round-to-odd step works there
// already, and eight independent chains (blocked:64) ran 2x slower in the SSE form under rz
// (1.16 -> 2.33 ns/elem), the vector ports then carrying every lane's rounding.
// The range test is two comparisons of |x| with the binade bounds 2^Emin and 2^Emax, false for
// zero, double subnormals, inf and NaN as the exponent test is. The sign bit needs no separate
// handling: below the top binade no carry reaches it.
#if defined(__SSE2__) && !defined(__CUDACC__)
template <int P, int Emin, int Emax>
[[gnu::always_inline]] inline bool RoundNearestEvenSse2(double x, double* out) {
  constexpr int kDrop = 53 - P;
  constexpr std::uint64_t kMask = (std::uint64_t{1} << kDrop) - 1;
  constexpr std::uint64_t kHalf = std::uint64_t{1} << (kDrop - 1);
  const double ax = std::fabs(x);
  constexpr double kLow = format_detail::Pow2(Emin), kHigh = format_detail::Pow2(Emax);
  if (!(ax >= kLow && ax < kHigh)) return false;
  const __m128i bits = _mm_castpd_si128(_mm_set_sd(x));
  const __m128i lsb = _mm_and_si128(_mm_srli_epi64(bits, kDrop), _mm_set1_epi64x(1));
  const __m128i r = _mm_add_epi64(_mm_add_epi64(bits, _mm_set1_epi64x(kHalf - 1)), lsb);
  *out = _mm_cvtsd_f64(
      _mm_castsi128_pd(_mm_and_si128(r, _mm_set1_epi64x(static_cast<long long>(~kMask)))));
  return true;
}
#endif

#if CARRIER_X86_KERNELS
#define CARRIER_AVX512F __attribute__((target("avx512f")))  // NOLINT

// RoundNormal's case for eight values at once: |x| in [2^emin, 2^emax) on every lane (else
// false), then the add-then-truncate of the pattern with `drop` = 53 - p low bits.
struct VectorShape {
  __m512d low, high;
  __m512i keep, mask, half_minus_1, half, unit;
  __m128i drop;
  explicit CARRIER_AVX512F VectorShape(const Format& f) {
    const int d = 53 - f.precision;
    const std::uint64_t m = (std::uint64_t{1} << d) - 1;
    low = _mm512_set1_pd(format_detail::Pow2(f.emin));
    high = _mm512_set1_pd(format_detail::Pow2(f.emax));
    keep = _mm512_set1_epi64(static_cast<long long>(~m));
    mask = _mm512_set1_epi64(static_cast<long long>(m));
    half_minus_1 = _mm512_set1_epi64(static_cast<long long>((m >> 1)));
    half = _mm512_set1_epi64(static_cast<long long>((m >> 1) + 1));
    unit = _mm512_set1_epi64(static_cast<long long>(m + 1));
    drop = _mm_cvtsi32_si128(d);
  }
};

// Whether every lane's magnitude lies in [low, high) (false for NaN).
CARRIER_AVX512F inline bool AllInRange8(__m512d magnitude, __m512d low, __m512d high) {
  return (_mm512_cmp_pd_mask(magnitude, low, _CMP_GE_OQ) &
          _mm512_cmp_pd_mask(magnitude, high, _CMP_LT_OQ)) == 0xff;
}

template <Rounding R>
CARRIER_AVX512F inline bool RoundNormal8(__m512i bits, const VectorShape& v, __m512d* out) {
  const __m512i sign = _mm512_andnot_si512(_mm512_set1_epi64(0x7fffffffffffffffLL), bits);
  const __m512i mag = _mm512_xor_si512(bits, sign);
  if (!AllInRange8(_mm512_castsi512_pd(mag), v.low, v.high)) return false;
  __m512i r;
  if constexpr (R == Rounding::kNearestEven) {
    const __m512i lsb = _mm512_and_si512(_mm512_srl_epi64(mag, v.drop), _mm512_set1_epi64(1));
    r = _mm512_and_si512(_mm512_add_epi64(_mm512_add_epi64(mag, v.half_minus_1), lsb), v.keep);
  } else if constexpr (R == Rounding::kNearestAway) {
    r = _mm512_and_si512(_mm512_add_epi64(mag, v.half), v.keep);
  } else if constexpr (R == Rounding::kTowardZero) {
    r = _mm512_and_si512(mag, v.keep);
  } else if constexpr (R == Rounding::kUp || R == Rounding::kDown) {
    // up in magnitude: positive lanes under ru, negative ones under rd
    const __mmask8 neg = _mm512_test_epi64_mask(sign, sign);
    const __mmask8 away = R == Rounding::kUp ? static_cast<__mmask8>(~neg) : neg;
    r = _mm512_and_si512(_mm512_mask_add_epi64(mag, away, mag, v.mask), v.keep);
  } else {  // to odd: inexact results get the last kept bit set
    const __mmask8 inexact = _mm512_test_epi64_mask(mag, v.mask);
    const __m512i kept = _mm512_and_si512(mag, v.keep);
    r = _mm512_mask_or_epi64(kept, inexact, kept, v.unit);
  }
  *out = _mm512_castsi512_pd(_mm512_or_si512(r, sign));
  return true;
}

// a + b per lane as Add computes it (kOdd: the TwoSum round-to-odd sum first, as Add does for
// every mode but rne with p <= 25), rounded by RoundNormal8; false when a lane is out of range.
template <Rounding R, bool kOdd>
CARRIER_AVX512F inline bool AddRound8(__m512d a, __m512d b, const VectorShape& shape,
                                      __m512d* out) {
  const __m512d hi = _mm512_add_pd(a, b);
  __m512i bits = _mm512_castpd_si512(hi);
  if constexpr (kOdd) {
    // TwoSum's exact error, then emulated_oracle_detail::RoundToOdd in the form "truncate, then set
    // the last bit when inexact": a nonzero error of the other sign than hi means hi lies past
    // the exact sum, one pattern down in magnitude truncates it; the odd step is then the
    // OR of 1. (Same result in each case of RoundToOdd: odd hi stays; even hi steps toward
    // the error.)
    const __m512d bb = _mm512_sub_pd(hi, a);
    const __m512d err =
        _mm512_add_pd(_mm512_sub_pd(a, _mm512_sub_pd(hi, bb)), _mm512_sub_pd(b, bb));
    const __mmask8 inexact = _mm512_cmp_pd_mask(err, _mm512_setzero_pd(), _CMP_NEQ_UQ);
    const __m512i past = _mm512_srai_epi64(_mm512_xor_si512(_mm512_castpd_si512(err), bits), 63);
    bits = _mm512_mask_add_epi64(bits, inexact, bits, past);
    bits = _mm512_mask_or_epi64(bits, inexact, bits, _mm512_set1_epi64(1));
  }
  return RoundNormal8<R>(bits, shape, out);
}

// Additions [0, n - n % 8) of GatheredAdd's contract on the values' doubles in mode R (kOdd:
// round the TwoSum round-to-odd sum, as Add does for every mode but rne with p <= 25); a step
// whose lanes are not all in range calls `scalar(k)` for each of its eight k.
template <Rounding R, bool kOdd, class Scalar>
CARRIER_AVX512F std::size_t AddGatheredAvx512(const double* A, const std::uint32_t* ia,
                                              const double* B, const std::uint32_t* ib, double* out,
                                              std::size_t n, const Format& f, Scalar scalar) {
  const VectorShape shape(f);
  // Eight operand pairs that are adjacent doubles in one run (a[j] at A[i + 2j], b[j] right
  // after it: a pairwise level's usual case) are two loads and two permutes, not two gathers.
  // The test is in 64-bit lanes (no index arithmetic wraps), on the addresses' distance.
  const std::int64_t bytes = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(B) -
                                                       reinterpret_cast<std::uintptr_t>(A));
  const bool whole = bytes % 8 == 0;  // B lies a whole number of doubles from A
  const __m512i b_to_a = _mm512_set1_epi64(static_cast<long long>(bytes / 8 - 1));
  const __m512i steps = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
  const __m512i odd = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
  std::size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m256i iav = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ia + k));
    const __m256i ibv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ib + k));
    const __m512i ia64 = _mm512_cvtepu32_epi64(iav);
    const __m512i run = _mm512_add_epi64(_mm512_set1_epi64(static_cast<long long>(ia[k])), steps);
    const __mmask8 adjacent = static_cast<__mmask8>(
        _mm512_cmpeq_epi64_mask(ia64, run) &
        _mm512_cmpeq_epi64_mask(_mm512_add_epi64(_mm512_cvtepu32_epi64(ibv), b_to_a), ia64));
    __m512d a, b;
    if (whole && adjacent == 0xff) {
      const __m512d lo = _mm512_loadu_pd(A + ia[k]);
      const __m512d up = _mm512_loadu_pd(A + ia[k] + 8);
      a = _mm512_permutex2var_pd(lo, steps, up);
      b = _mm512_permutex2var_pd(lo, odd, up);
    } else {
      a = _mm512_i32gather_pd(iav, A, 8);
      b = _mm512_i32gather_pd(ibv, B, 8);
    }
    __m512d rounded;
    if (!AddRound8<R, kOdd>(a, b, shape, &rounded)) {
      for (std::size_t j = k; j < k + 8; ++j) scalar(j);
      continue;
    }
    _mm512_storeu_pd(out + k, rounded);
  }
  return k;
}

// x[k] + x[k + 1] for k in [0, n - n % 8), as AddGatheredAvx512 (two overlapping loads).
template <Rounding R, bool kOdd, class Scalar>
CARRIER_AVX512F std::size_t AdjacentAvx512(const double* x, double* out, std::size_t n,
                                           const Format& f, Scalar scalar) {
  const VectorShape shape(f);
  std::size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    __m512d rounded;
    if (!AddRound8<R, kOdd>(_mm512_loadu_pd(x + k), _mm512_loadu_pd(x + k + 1), shape, &rounded)) {
      for (std::size_t j = k; j < k + 8; ++j) scalar(j);
      continue;
    }
    _mm512_storeu_pd(out + k, rounded);
  }
  return k;
}

// The 8 x 8 transpose of r[0..8) (r[w][s] -> r[s][w]): pairs of rows interleaved, then 128-bit
// and 256-bit blocks exchanged.
[[gnu::always_inline]] CARRIER_AVX512F inline void Transpose8x8(__m512d* r) {
  __m512d t[8], u[8];
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm512_unpacklo_pd(r[k], r[k + 1]);
    t[k + 1] = _mm512_unpackhi_pd(r[k], r[k + 1]);
  }
  for (int k = 0; k < 8; k += 4) {
    u[k] = _mm512_shuffle_f64x2(t[k], t[k + 2], 0x88);
    u[k + 1] = _mm512_shuffle_f64x2(t[k + 1], t[k + 3], 0x88);
    u[k + 2] = _mm512_shuffle_f64x2(t[k], t[k + 2], 0xdd);
    u[k + 3] = _mm512_shuffle_f64x2(t[k + 1], t[k + 3], 0xdd);
  }
  for (int k = 0; k < 4; ++k) {
    r[k] = _mm512_shuffle_f64x2(u[k], u[k + 4], 0x88);
    r[k + 4] = _mm512_shuffle_f64x2(u[k], u[k + 4], 0xdd);
  }
}

// One step of one group of ChainsAvx512: a += b on its eight lanes, or, where a lane leaves
// the range, the group's eight operations themselves (`step(lane, j)` for lanes base ..
// base + 7 of the call) from the states stored in acc.
template <Rounding R, bool kOdd, class Step>
[[gnu::always_inline]] CARRIER_AVX512F inline void ChainStep(__m512d& a, __m512d b,
                                                             const VectorShape& shape, double* acc,
                                                             std::size_t base, Step& step,
                                                             std::uint64_t j) {
  __m512d rounded;
  if (AddRound8<R, kOdd>(a, b, shape, &rounded)) {
    a = rounded;
    return;
  }
  _mm512_storeu_pd(acc + base, a);
  for (std::size_t w = 0; w < 8; ++w) step(base + w, j);
  a = _mm512_loadu_pd(acc + base);
}

// G groups of eight independent chains (GatheredAdd::Chains' lanes first[0 .. 8 G)), one vector
// step per group and input row: lane w adds x[first[w] + j stride] to acc[w] for j < count, as
// AddRound8 rounds it. The groups' steps alternate, so that G chains of vector additions are
// in flight at once (a step is a chain of about ten dependent operations). A row is one load
// per group where the lanes' inputs are adjacent (strided rows); eight rows of stride-1 chains
// (blocked tiles) are eight loads and a transpose; the rest are gathers (2-3x the loads' time
// per row on the development machine). A step with a lane out of range is `step(w, j)`, the
// operation itself, for each lane of its group.
template <Rounding R, bool kOdd, std::size_t G, class Step>
CARRIER_AVX512F void ChainsAvx512(double* acc, const double* x, const std::uint64_t* first,
                                  std::uint64_t count, std::uint64_t stride, const Format& f,
                                  Step step) {
  const VectorShape shape(f);
  bool adjacent = true;
  for (std::size_t i = 0; i < G; ++i)
    for (std::size_t w = 1; w < 8; ++w) adjacent = adjacent && first[8 * i + w] == first[8 * i] + w;
  __m512d a[G];
  for (std::size_t i = 0; i < G; ++i) a[i] = _mm512_loadu_pd(acc + 8 * i);
  std::uint64_t j = 0;
  if (adjacent) {
    for (; j < count; ++j)
      for (std::size_t i = 0; i < G; ++i)
        ChainStep<R, kOdd>(a[i], _mm512_loadu_pd(x + first[8 * i] + j * stride), shape, acc, 8 * i,
                           step, j);
  } else if (stride == 1) {
    for (; j + 8 <= count; j += 8) {
      __m512d rows[G][8];
      for (std::size_t i = 0; i < G; ++i) {
        for (std::size_t w = 0; w < 8; ++w) rows[i][w] = _mm512_loadu_pd(x + first[8 * i + w] + j);
        Transpose8x8(rows[i]);
      }
      for (std::uint64_t s = 0; s < 8; ++s)
        for (std::size_t i = 0; i < G; ++i)
          ChainStep<R, kOdd>(a[i], rows[i][s], shape, acc, 8 * i, step, j + s);
    }
  }
  for (; j < count; ++j) {
    const __m512i off = _mm512_set1_epi64(static_cast<long long>(j * stride));
    for (std::size_t i = 0; i < G; ++i) {
      const __m512i at = _mm512_add_epi64(_mm512_loadu_si512(first + 8 * i), off);
      ChainStep<R, kOdd>(a[i], _mm512_i64gather_pd(at, x, 8), shape, acc, 8 * i, step, j);
    }
  }
  for (std::size_t i = 0; i < G; ++i) _mm512_storeu_pd(acc + 8 * i, a[i]);
}

// FromZero's [0, n - n % 8): a value of the format added to +0 is itself when it is in
// RoundNormal's range (nonzero, finite, not subnormal); a step with another lane calls
// `scalar(k)` for each of its eight k.
template <class Scalar>
CARRIER_AVX512F std::size_t FromZeroAvx512(const double* x, double* out, std::size_t n,
                                           const Format& f, Scalar scalar) {
  const __m512d low = _mm512_set1_pd(format_detail::Pow2(f.emin));
  const __m512d high = _mm512_set1_pd(format_detail::Pow2(f.emax));
  std::size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m512d v = _mm512_loadu_pd(x + k);
    if (!AllInRange8(_mm512_abs_pd(v), low, high)) {
      for (std::size_t j = k; j < k + 8; ++j) scalar(j);
      continue;
    }
    _mm512_storeu_pd(out + k, v);
  }
  return k;
}

#undef CARRIER_AVX512F

// LatencyChain's rne loop with AVX-512VL's three-input logic, one integer operation shorter on
// the chain: the rounding as round-half-away, t = (bits + half) & ~mask, then on a tie
// ((bits & mask) == half: the dropped bits are exactly half a quantum) the kept last bit
// cleared, t & ~(tie & ulp). On a tie t is lo + ulp with lo the truncation: lo even makes that
// lo | ulp, whose clearing gives lo; lo odd makes it even (its carry clears that bit, also when
// it walks into the exponent), which the clearing leaves. So the result is RoundNormal's rne.
// The tie test runs beside the add, so three dependent integer operations follow the sum
// instead of four. Harness: bf16 rne seq 3.0-3.2 -> 2.6-2.7 ns/elem.
template <class Step>
__attribute__((target("avx512f,avx512vl"))) inline double NearestEvenChainAvx512Vl(  // NOLINT
    double acc, const double* x, std::uint64_t count, std::uint64_t stride, const Format& f,
    double low, double high, Step step) {
  const int drop = 53 - f.precision;
  const __m128i ulp = _mm_set1_epi64x(std::int64_t{1} << drop);
  const __m128i half = _mm_set1_epi64x(std::int64_t{1} << (drop - 1));
  const __m128i mask = _mm_set1_epi64x((std::int64_t{1} << drop) - 1);
  const __m128i keep = _mm_set1_epi64x(~((std::int64_t{1} << drop) - 1));
  __m128d a = _mm_set_sd(acc);  // only the low lane is read
  for (std::uint64_t j = 0; j < count; ++j) {
    const __m128d b = _mm_load_sd(x + j * stride);
    const __m128d hi = _mm_add_sd(a, b);
    const double m = std::fabs(_mm_cvtsd_f64(hi));
    if (m >= low && m < high) [[likely]] {
      const __m128i bits = _mm_castpd_si128(hi);
      const __m128i t = _mm_and_si128(_mm_add_epi64(bits, half), keep);
      const __m128i tie = _mm_cmpeq_epi64(_mm_and_si128(bits, mask), half);
      a = _mm_castsi128_pd(_mm_ternarylogic_epi64(t, tie, ulp, 0x70));  // t & ~(tie & ulp)
    } else {
      a = _mm_set_sd(step(_mm_cvtsd_f64(a), _mm_cvtsd_f64(b), f));
    }
  }
  return _mm_cvtsd_f64(a);
}
#endif  // CARRIER_X86_KERNELS

#if defined(__SSE2__) && !defined(__CUDACC__)
// LatencyChain (emulated.hpp) on x86: one chain of additions a = a + x[j * stride], j < count
// (a seq chain: GatheredAdd's Chains with one lane), where each addition waits for the one before,
// so its latency is the time per element: the double sum, the rounding, then the next sum. For two
// modes Add's inline case is computed here without the trip of the sum through a general register
// and back (and, for rne, without the zeroing move of RoundNearestEvenSse2's _mm_set_sd, which sits
// on the chain):
//  - rne with p <= 25 (Add rounds the double sum hi itself, no TwoSum): RoundNormalStatic's
//    add-then-truncate on the pattern, in the SSE register that holds hi;
//  - rz where TwoSum's error is zero (RoundToOdd then returns hi): hi's pattern with its low
//    53 - p bits cleared, one AND in that register; the TwoSum and the range test are off the
//    chain (the branch on them is predicted).
// Both apply where hi lies in RoundNormal's range, [2^emin, 2^emax) in magnitude (which rejects
// zero, inf and NaN); every other step is `step`, Add itself. Returns false (acc untouched)
// for the other modes. avx512vl: run NearestEvenChainAvx512Vl's loop for rne (the caller's
// LatencyVectorRuns()). Harness (bf16, 2^20 uniform values, seq): rne 3.85 -> 3.1-3.2 ns/elem,
// rz 3.7 -> 2.0.
template <Rounding M, class Step>
[[gnu::always_inline]] inline bool LatencyChainSse2(double* acc, const double* x,
                                                    std::uint64_t count, std::uint64_t stride,
                                                    const Format& f, Step step, bool avx512vl) {
  constexpr bool kRne = M == Rounding::kNearestEven;
  if constexpr (kRne || M == Rounding::kTowardZero) {
    if (kRne && f.precision > 25) return false;
    // RoundNormal's range; Format keeps -1022 <= emin <= emax <= 1023, so both are normal.
    const double low = format_detail::Pow2(f.emin), high = format_detail::Pow2(f.emax);
#if CARRIER_X86_KERNELS
    if (kRne && avx512vl) {
      *acc = NearestEvenChainAvx512Vl(*acc, x, count, stride, f, low, high, step);
      return true;
    }
#endif
    const int drop = 53 - f.precision;
    const __m128i keep = _mm_set1_epi64x(static_cast<long long>(~((std::uint64_t{1} << drop) - 1)));
    const __m128i half = _mm_set1_epi64x((std::int64_t{1} << (drop - 1)) - 1);  // minus one
    const __m128i one = _mm_set1_epi64x(1), shift = _mm_cvtsi32_si128(drop);
    __m128d a = _mm_set_sd(*acc);  // only the low lane is read
    for (std::uint64_t j = 0; j < count; ++j) {
      const __m128d b = _mm_load_sd(x + j * stride);
      const __m128d hi = _mm_add_sd(a, b);
      const double m = std::fabs(_mm_cvtsd_f64(hi));
      bool inline_case = m >= low && m < high;
      if constexpr (!kRne) {
        const __m128d bb = _mm_sub_sd(hi, a);
        const __m128d err = _mm_add_sd(_mm_sub_sd(a, _mm_sub_sd(hi, bb)), _mm_sub_sd(b, bb));
        inline_case = inline_case && _mm_cvtsd_f64(err) == 0;
      }
      if (inline_case) [[likely]] {
        const __m128i bits = _mm_castpd_si128(hi);
        if constexpr (kRne) {
          const __m128i lsb = _mm_and_si128(_mm_srl_epi64(bits, shift), one);
          a = _mm_castsi128_pd(_mm_and_si128(_mm_add_epi64(_mm_add_epi64(bits, half), lsb), keep));
        } else {
          a = _mm_castsi128_pd(_mm_and_si128(bits, keep));
        }
      } else {
        a = _mm_set_sd(step(_mm_cvtsd_f64(a), _mm_cvtsd_f64(b), f));
      }
    }
    *acc = _mm_cvtsd_f64(a);
    return true;
  }
  return false;
}
#endif

}  // namespace carrier::emulated_detail
