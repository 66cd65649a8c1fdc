// precision/reference/fixed_exp_kernel.hpp: what fixed_exp.cpp and fixed_exp_x86.cpp share
// (internal to precision/reference/): the fixed-point constants, the scalar kernel ExpOfFixed
// (FixedExpNeg's definition, which the vector kernel matches bit for bit and falls back on),
// and the per-shift term sums of SumExpShifted. The contract and error bound are fixed_exp.hpp's.
// The constants below and the table in fixed_exp_table.inc were printed by MPFR (400-bit values
// rounded to nearest); tests/precision/test_reference_fast.cpp recomputes every one of them.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "core/cpu_features.hpp"
#include "precision/reference/fixed_exp.hpp"
#include "precision/reference/fixed_point.hpp"

namespace carrier::reference::fixed_exp_detail {

using fixed_exp_constants::kDegree;
using fixed_exp_constants::kTableBits;
using fixed_exp_constants::kWideDegree;

struct Word2 {
  std::uint64_t hi, lo;
};

inline constexpr Word2 kLog2E = {0xb8aa3b295c17f0bbULL, 0xbe87fed0691d3e89ULL};

// (ln 2)^k / k! in Q1.127, k = 0..kWideDegree.
inline constexpr Word2 kWideCoefficients[kWideDegree + 1] = {
    {0x8000000000000000ULL, 0x0000000000000000ULL},
    {0x58b90bfbe8e7bcd5ULL, 0xe4f1d9cc01f97b58ULL},
    {0x1ebfbdff82c58ea8ULL, 0x6f16b06ec9735fcbULL},
    {0x071ac235c1282fe2ULL, 0xcce9d8aeccaf4b7cULL},
};

// (ln 2)^k / k! * 2^NarrowScale(k), k = kWideDegree + 1..kDegree.
inline constexpr std::uint64_t kNarrowCoefficients[kDegree - kWideDegree] = {
    0x9d955b7dd273b94eULL, 0x005761ff9e299cc4ULL, 0x000a184897c363c4ULL, 0x0000ffe5fe2c4586ULL};

// 2^(-(u+1)/4096), u = 0..4095, in Q1.127.
inline constexpr Word2 kTable[1 << kTableBits] = {
#include "precision/reference/fixed_exp_table.inc"
};

constexpr U128 Get(Word2 w) { return (U128{w.hi} << 64) | w.lo; }

// floor(d * 2^114) for 0 <= d < 2^14 (d = +-0 gives 0). One predictable branch: the left
// shift is taken for every d >= 2^-62.
inline U128 ToFixed114(double d) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(d) & ~(std::uint64_t{1} << 63);
  const int biased = static_cast<int>(bits >> 52);
  const std::uint64_t mant =
      (bits & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{biased != 0} << 52);
  const int shift = (biased == 0 ? 1 : biased) - 961;  // d = mant * 2^(shift - 114)
  if (shift >= 0) return U128{mant} << shift;          // shift <= 75 since d < 2^14
  return shift <= -64 ? U128{0} : U128{mant} >> (-shift);
}

// q = -(s + e) in units 2^-114, each part truncated. For e > 0, s + e <= 0 gives e <= -s, so
// floor(e 2^114) <= floor(-s 2^114) and the difference cannot wrap.
inline U128 NegToFixed114(double s, double e) {
  const U128 qs = ToFixed114(-s);
  if (e == 0) return qs;  // the common case: v - m is exact for inputs of similar magnitude
  const U128 qe = ToFixed114(e);
  return e < 0 ? qs + qe : qs - qe;
}

inline std::uint64_t MulHi64(std::uint64_t a, std::uint64_t b) {
  return static_cast<std::uint64_t>((U128{a} * b) >> 64);
}

// floor(a b / 2^128), exact (fixed_point.hpp's MulHi128 written as multiply-adds that cannot
// wrap, a0 b1 + (2^64 - 1) < 2^128, which compilers turn into shorter code).
inline U128 MulHi128Exact(U128 a, U128 b) {
  const std::uint64_t a0 = Lo64(a), a1 = Hi64(a), b0 = Lo64(b), b1 = Hi64(b);
  const U128 t = U128{a0} * b1 + Hi64(U128{a0} * b0);
  const U128 u = U128{a1} * b0 + Lo64(t);
  return U128{a1} * b1 + Hi64(t) + Hi64(u);
}

// For a < 2^116 and b < 2^127: a value in [floor(a b / 2^127) - 2, floor(a b / 2^127)], from
// three 64x64 products (a0 b0 < 2^128 is dropped; a0 b1 + a1 b0 < 2^127 + 2^116 cannot wrap).
inline U128 MulQ127Short(U128 a, U128 b) {
  const std::uint64_t a0 = Lo64(a), a1 = Hi64(a), b0 = Lo64(b), b1 = Hi64(b);
  const U128 mid = U128{a0} * b1 + U128{a1} * b0;
  return ((U128{a1} * b1) << 1) + (mid >> 63);
}

// exp(-q 2^-114) as (mant, shift); the steps, scales and their errors are the ones derived in
// fixed_exp.hpp. Consecutive calls are independent, so out-of-order execution overlaps them.
inline FixedExp ExpOfFixed(U128 q) {
  if (q == 0) return {U128{1} << 127, 0};
  constexpr int kFracBits = 113;
  constexpr int kHBits = kFracBits - kTableBits;  // h's quantum 2^-113, h <= 2^(kHBits-113)
  const U128 t = MulHi128Exact(q, Get(kLog2E));   // q * log2(e) in units 2^-113
  const int whole = static_cast<int>(t >> kFracBits);
  const U128 f = t & ((U128{1} << kFracBits) - 1);
  const int idx = static_cast<int>(f >> kHBits);
  // 2^-f = 2^(-(idx+1)/4096) * 2^h, h = (idx+1)/4096 - f in (0, 2^-12].
  const U128 h = (U128(idx + 1) << kHBits) - f;
  const U128 hq = h << (127 - kFracBits);                              // Q1.127, < 2^116
  const auto h75 = static_cast<std::uint64_t>(h >> (kFracBits - 75));  // floor(h 2^75) <= 2^63
  // Degrees 7..5 in units 2^-64 with h truncated to 2^-64.
  const std::uint64_t h64 = h75 >> 11;
  std::uint64_t r = kNarrowCoefficients[2] + MulHi64(h64, kNarrowCoefficients[3]);
  r = kNarrowCoefficients[1] + MulHi64(h64, r);
  // Degree 4 in units 2^-70, degree 3 in Q1.127: exact 64x64 products of h (to 2^-75) and p.
  r = kNarrowCoefficients[0] + static_cast<std::uint64_t>((U128{h75} * r) >> 69);
  U128 p = Get(kWideCoefficients[3]) + ((U128{h75} * r) >> 18);
  // Degrees 2 and 1 in Q1.127; degree 0 keeps g = p_0 - 1 = h p_1 (>= 0, < 2^116).
  p = Get(kWideCoefficients[2]) + MulQ127Short(hq, p);
  p = Get(kWideCoefficients[1]) + MulQ127Short(hq, p);
  const U128 g = MulQ127Short(hq, p);
  const U128 table = Get(kTable[idx]);
  return {table + MulQ127Short(g, table), whole};  // T (1 + g)
}

// Kernel terms are summed exactly per exponent: bucket[shift] holds the 192-bit sum of the
// mantissas with that shift (each < 2^128, at most 2^62 of them). A term with s > -134 has
// q < (134 + 2^-46) 2^114, so shift = floor(t) <= floor(134.00001 * 1.4427) = 193.
struct Bucket {
  U128 sum = 0;
  std::uint64_t carry = 0;
};
inline constexpr int kBuckets = 256;
struct TermSums {
  std::array<Bucket, kBuckets> bucket{};
  std::uint64_t exact_terms = 0, approx_terms = 0;
  // Adds another part's sums: exact (192-bit integer additions), so parts merge to one pass.
  void Merge(const TermSums& o) {
    for (int b = 0; b < kBuckets; ++b) {
      const U128 before = bucket[b].sum;
      bucket[b].sum += o.bucket[b].sum;
      bucket[b].carry += o.bucket[b].carry + (bucket[b].sum < before ? 1 : 0);
    }
    exact_terms += o.exact_terms;
    approx_terms += o.approx_terms;
  }
};

inline constexpr double kSkipBelow = -134.0;  // exp(-134) < 2^-193: below the accumulator's unit

// One kernel term into its bucket.
inline void AddTerm(TermSums& r, std::uint64_t hi, std::uint64_t lo, int shift) {
  if (shift < 0 || shift >= kBuckets)
    throw std::logic_error("SumExpShifted: exp shift out of range");
  Bucket& b = r.bucket[shift];
  const U128 before = b.sum;
  b.sum += MakeU128(hi, lo);
  b.carry += b.sum < before ? 1 : 0;
}

#if CARRIER_X86_KERNELS
// The AVX-512 IFMA kernels (fixed_exp_x86.cpp), to be called only where
// HostAvx512().HasFIfma() (core/cpu_features.hpp):
// out[i] = FixedExpNeg(s[i], e[i]) for i < n, bit for bit (FixedExpNegBatch's vector path);
void FixedExpNegBatchIfma(const double* s, const double* e, std::size_t n, FixedExp* out);
// the terms of x[0..n) into r's buckets and counts, as TermScanner's loop without the memo.
void ScanTermsIfma(const double* x, std::size_t n, double m, TermSums& r);
#endif

}  // namespace carrier::reference::fixed_exp_detail
