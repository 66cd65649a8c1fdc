// precision/reference/fixed_exp.cpp: the fixed-point exp kernel and the shifted sum of
// exponentials (contract and error bound in fixed_exp.hpp).
//
// The constants below and the table in fixed_exp_table.inc were printed by MPFR (400-bit values
// rounded to nearest); tests/precision/test_reference_fast.cpp recomputes every one of them.
#include "precision/reference/fixed_exp.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "precision/parallel_pass.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define CARRIER_FIXED_EXP_IFMA 1
// Everything between BEGIN and END is compiled for AVX-512F + IFMA (run only after the runtime
// check in FixedExpVectorized).
// clang-format off
#if defined(__clang__)
#define CARRIER_IFMA_BEGIN \
  _Pragma("clang attribute push(__attribute__((target(\"avx512f,avx512ifma\"))), apply_to = function)")
#define CARRIER_IFMA_END _Pragma("clang attribute pop")
#else
#define CARRIER_IFMA_BEGIN _Pragma("GCC push_options") _Pragma("GCC target(\"avx512f,avx512ifma\")")
#define CARRIER_IFMA_END _Pragma("GCC pop_options")
#endif
// clang-format on
#else
#define CARRIER_FIXED_EXP_IFMA 0
#endif

namespace carrier::reference {

namespace {

using fixed_exp_constants::kDegree;
using fixed_exp_constants::kTableBits;
using fixed_exp_constants::kWideDegree;

struct Word2 {
  std::uint64_t hi, lo;
};

constexpr Word2 kLog2E = {0xb8aa3b295c17f0bbULL, 0xbe87fed0691d3e89ULL};

// (ln 2)^k / k! in Q1.127, k = 0..kWideDegree.
constexpr Word2 kWideCoefficients[kWideDegree + 1] = {
    {0x8000000000000000ULL, 0x0000000000000000ULL},
    {0x58b90bfbe8e7bcd5ULL, 0xe4f1d9cc01f97b58ULL},
    {0x1ebfbdff82c58ea8ULL, 0x6f16b06ec9735fcbULL},
    {0x071ac235c1282fe2ULL, 0xcce9d8aeccaf4b7cULL},
};

// (ln 2)^k / k! * 2^NarrowScale(k), k = kWideDegree + 1..kDegree.
constexpr std::uint64_t kNarrowCoefficients[kDegree - kWideDegree] = {
    0x9d955b7dd273b94eULL, 0x005761ff9e299cc4ULL, 0x000a184897c363c4ULL, 0x0000ffe5fe2c4586ULL};

// 2^(-(u+1)/4096), u = 0..4095, in Q1.127.
constexpr Word2 kTable[1 << kTableBits] = {
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

#if CARRIER_FIXED_EXP_IFMA
// The same kernel, eight arguments at a time with AVX-512 IFMA (vpmadd52luq / vpmadd52huq: the
// low and the high 52 bits of the 104-bit product of two 52-bit integers, added to a 64-bit
// lane). Every integer ExpOfFixed forms (q, t, h, each Horner step, each truncated product) is
// formed here exactly too, so the result is ExpOfFixed's bit for bit; only the representation
// differs: a value is a few limbs of radix 2^52 per lane (Big<N>: value = sum l[i] 2^(52 i),
// every limb in [0, 2^52) after Normalize), products are exact column sums, and a truncation
// floor(v / 2^K) is a limb selection and shift. MulQ127Short(a, b) = 2 a1 b1 + floor((a1 b0 +
// a0 b1) / 2^63) (a = a1 2^64 + a0, b = b1 2^64 + b0) is formed as floor((a1 b + a0 b1) / 2^63),
// the same integer. Lanes outside the common case (h = 2^-12 exactly, which includes q = 0; an
// argument out of range or not a number; |s| < 2^-61 when e = 0 in all eight lanes, where t is
// formed from s's significand) are recomputed by ExpOfFixed. The batch interleaves kGroups
// groups of eight lanes: one group's steps are a long chain of dependent instructions. On the
// AMD EPYC (Zen 5) development machine, 3 or 4 groups were fastest (4.1 ns per term, 1 group
// 6.7, 2 groups 4.7; minimum of 60 runs of 2^16 terms).
CARRIER_IFMA_BEGIN
namespace ifma {

#define CARRIER_INLINE inline __attribute__((always_inline))

constexpr std::uint64_t kMask52 = (std::uint64_t{1} << 52) - 1;
// Shifts, max and gathers are written in their zero-masking form with every lane selected: the
// same instructions, without the unmasked intrinsics' _mm512_undefined_epi32() source, which
// g++ 12 reports as used uninitialized.
constexpr __mmask8 kAll = 0xff;

// kGroups independent vectors of eight lanes side by side: one term's steps form a long chain
// of dependent instructions, and interleaving the chains of several groups keeps the vector
// units busy.
constexpr int kGroups = 4;
constexpr int kLanes = 8 * kGroups;

struct V {
  __m512i r[kGroups];
};

template <class F>
CARRIER_INLINE V Map(F&& f) {
  V out;
  for (int g = 0; g < kGroups; ++g) out.r[g] = f(g);
  return out;
}
CARRIER_INLINE V Splat(std::uint64_t c) {
  const __m512i v = _mm512_set1_epi64(static_cast<long long>(c));
  return Map([&](int) { return v; });
}
CARRIER_INLINE V Zero() { return Splat(0); }
CARRIER_INLINE V operator+(const V& a, const V& b) {
  return Map([&](int g) { return _mm512_add_epi64(a.r[g], b.r[g]); });
}
CARRIER_INLINE V operator-(const V& a, const V& b) {
  return Map([&](int g) { return _mm512_sub_epi64(a.r[g], b.r[g]); });
}
CARRIER_INLINE V operator&(const V& a, const V& b) {
  return Map([&](int g) { return _mm512_and_si512(a.r[g], b.r[g]); });
}
CARRIER_INLINE V operator|(const V& a, const V& b) {
  return Map([&](int g) { return _mm512_or_si512(a.r[g], b.r[g]); });
}
CARRIER_INLINE V Srl(const V& a, unsigned s) {
  return Map([&](int g) { return _mm512_maskz_srli_epi64(kAll, a.r[g], s); });
}
CARRIER_INLINE V Sll(const V& a, unsigned s) {
  return Map([&](int g) { return _mm512_maskz_slli_epi64(kAll, a.r[g], s); });
}
CARRIER_INLINE V Sra(const V& a, unsigned s) {
  return Map([&](int g) { return _mm512_maskz_srai_epi64(kAll, a.r[g], s); });
}
CARRIER_INLINE V Mask52(const V& a) { return a & Splat(kMask52); }
// acc + the low (kHigh false) or high 52 bits of the 104-bit product of a and b's low 52 bits.
template <bool kHigh>
CARRIER_INLINE V Madd52(const V& acc, const V& a, const V& b) {
  return Map([&](int g) {
    return kHigh ? _mm512_madd52hi_epu64(acc.r[g], a.r[g], b.r[g])
                 : _mm512_madd52lo_epu64(acc.r[g], a.r[g], b.r[g]);
  });
}
// One bit per lane, group g in bits 8g..8g+7.
using Mask = std::uint32_t;
template <class F>
CARRIER_INLINE Mask MaskOf(F&& f) {
  Mask m = 0;
  for (int g = 0; g < kGroups; ++g) m |= static_cast<Mask>(f(g)) << (8 * g);
  return m;
}

template <int N>
struct Big {
  V l[N];
};

// Carries up: limbs 0..N-2 into [0, 2^52) (kSigned: arithmetic shifts, for a limb that may be
// negative while the value is not), the top limb keeps the rest.
template <bool kSigned = false, int N>
CARRIER_INLINE void Normalize(Big<N>& x) {
  for (int i = 0; i + 1 < N; ++i) {
    x.l[i + 1] = x.l[i + 1] + (kSigned ? Sra(x.l[i], 52) : Srl(x.l[i], 52));
    x.l[i] = Mask52(x.l[i]);
  }
}

// acc + a * b as columns, not normalized (a, b normalized; each column takes at most
// 2 min(N, M) addends below 2^52 on top of its value).
template <int R, int N, int M>
CARRIER_INLINE void MulAcc(Big<R>& acc, const Big<N>& a, const Big<M>& b) {
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < M; ++j) {
      if (i + j < R) acc.l[i + j] = Madd52<false>(acc.l[i + j], a.l[i], b.l[j]);
      if (i + j + 1 < R) acc.l[i + j + 1] = Madd52<true>(acc.l[i + j + 1], a.l[i], b.l[j]);
    }
}

// a * b exactly in N + M limbs.
template <int N, int M>
CARRIER_INLINE Big<N + M> Mul(const Big<N>& a, const Big<M>& b) {
  Big<N + M> r;
  for (auto& v : r.l) v = Zero();
  MulAcc(r, a, b);
  Normalize(r);
  return r;
}

// a + b (or a - b with kSub; the result must be >= 0 and fit R limbs).
template <int R, bool kSub = false, int N, int M>
CARRIER_INLINE Big<R> Add(const Big<N>& a, const Big<M>& b) {
  Big<R> r;
  for (int i = 0; i < R; ++i) {
    const V x = i < N ? a.l[i] : Zero(), y = i < M ? b.l[i] : Zero();
    r.l[i] = kSub ? x - y : x + y;
  }
  Normalize<kSub>(r);
  return r;
}

// floor(x / 2^K) in R limbs (x normalized).
template <int K, int R, int N>
CARRIER_INLINE Big<R> Shr(const Big<N>& x) {
  constexpr int q = K / 52, s = K % 52;
  Big<R> r;
  for (int j = 0; j < R; ++j) {
    const V lo = q + j < N ? x.l[q + j] : Zero();
    if constexpr (s == 0) {
      r.l[j] = lo;
    } else if (q + j + 1 < N) {
      r.l[j] = Mask52(Srl(lo, s) | Sll(x.l[q + j + 1], 52 - s));
    } else {
      r.l[j] = Srl(lo, s);
    }
  }
  return r;
}

// x * 2^K in R limbs (x normalized, the result must fit).
template <int K, int R, int N>
CARRIER_INLINE Big<R> Shl(const Big<N>& x) {
  constexpr int q = K / 52, s = K % 52;
  Big<R> r;
  for (int j = 0; j < R; ++j) {
    const int i = j - q;
    const V cur = i >= 0 && i < N ? x.l[i] : Zero();
    if constexpr (s == 0) {
      r.l[j] = cur;
    } else {
      const V below = i - 1 >= 0 && i - 1 < N ? x.l[i - 1] : Zero();
      r.l[j] = Mask52(Sll(cur, s) | Srl(below, 52 - s));
    }
  }
  return r;
}

// x mod 2^K in ceil(K / 52) limbs (x normalized).
template <int K, int N>
CARRIER_INLINE Big<(K + 51) / 52> Low(const Big<N>& x) {
  constexpr int R = (K + 51) / 52;
  Big<R> r;
  for (int j = 0; j < R; ++j) {
    const V v = j < N ? x.l[j] : Zero();
    r.l[j] = (j + 1) * 52 <= K ? v : v & Splat((std::uint64_t{1} << (K - 52 * j)) - 1);
  }
  return r;
}

CARRIER_INLINE Big<2> FromU64(const V& x) { return {{Mask52(x), Srl(x, 52)}}; }
// The low 64 bits of x (two limbs or more).
template <int N>
CARRIER_INLINE V ToU64(const Big<N>& x) {
  return x.l[0] | Sll(x.l[1], 52);
}

// floor(|d| 2^114) for |d| < 2^14 (ToFixed114) from d's bits, as three limbs: the 53-bit
// significand shifted left by shift = exponent + 114 (or right by -shift); in vpsllvq / vpsrlvq
// a count of 64 or more, or a negative one (a huge unsigned count), gives 0, which is what each
// limb needs.
CARRIER_INLINE Big<3> ToFixed114(const V& bits_in) {
  const V bits = bits_in & Splat(~(std::uint64_t{1} << 63));
  const V biased = Srl(bits, 52);
  const V frac = bits & Splat((std::uint64_t{1} << 52) - 1);
  const V mant = Map([&](int g) {
    const __mmask8 normal = _mm512_cmpneq_epi64_mask(biased.r[g], _mm512_setzero_si512());
    return _mm512_mask_or_epi64(frac.r[g], normal, frac.r[g],
                                _mm512_set1_epi64(std::int64_t{1} << 52));
  });
  const V shift = Map([&](int g) {
    return _mm512_sub_epi64(_mm512_maskz_max_epi64(kAll, biased.r[g], _mm512_set1_epi64(1)),
                            _mm512_set1_epi64(961));
  });
  Big<3> r;
  for (int k = 0; k < 3; ++k) {
    const V left = shift - Splat(52 * k), right = Splat(52 * k) - shift;
    r.l[k] = Mask52(Map([&](int g) {
      return _mm512_or_si512(_mm512_maskz_sllv_epi64(kAll, mant.r[g], left.r[g]),
                             _mm512_maskz_srlv_epi64(kAll, mant.r[g], right.r[g]));
    }));
  }
  return r;
}

// Bits [p, p + 52) of c as a radix-2^52 limb (p may be negative: bits of c * 2^-p).
constexpr std::uint64_t Limb(U128 c, int p) {
  if (p <= -52 || p >= 128) return 0;
  return Lo64(p < 0 ? c << -p : c >> p) & kMask52;
}
// The constant c * 2^k in N limbs.
template <int N>
CARRIER_INLINE Big<N> Constant(U128 c, int k = 0) {
  Big<N> r;
  for (int i = 0; i < N; ++i) r.l[i] = Splat(Limb(c, 52 * i - k));
  return r;
}

// t = floor(q log2(e) / 2^128) for arguments (s, e): q = floor(-s 2^114) -+ floor(|e| 2^114)
// (NegToFixed114) as three limbs, times log2(e). Lanes whose q is outside [0, 2^128) (where
// ExpOfFixed's 128-bit q wraps; outside the contract) are cleared from ok.
CARRIER_INLINE Big<3> TGeneral(const V& sbits, const V& ebits, Mask& ok) {
  Big<3> q = ToFixed114(sbits);
  const Big<3> qe = ToFixed114(ebits);
  for (int k = 0; k < 3; ++k)
    q.l[k] = Map([&](int g) {
      const __mmask8 neg = _mm512_cmplt_epi64_mask(ebits.r[g], _mm512_setzero_si512());
      return _mm512_mask_add_epi64(_mm512_sub_epi64(q.l[k].r[g], qe.l[k].r[g]), neg, q.l[k].r[g],
                                   qe.l[k].r[g]);
    });
  Normalize<true>(q);
  ok &= MaskOf([&](int g) {
    return _mm512_cmplt_epu64_mask(q.l[2].r[g], _mm512_set1_epi64(std::int64_t{1} << 24));
  });
  return Shr<128, 3>(Mul(q, Constant<3>(Get(kLog2E))));
}

// The same t when e = 0 in every lane: q = M 2^sh with M = 2^52 + F the significand of s and
// sh = biased exponent - 961 (lanes with sh < 0, |s| < 2^-61, are cleared from ok), so t =
// floor(M L / 2^(128 - sh)) with L = log2(e) in Q1.127 and M L = F L + L 2^52: five IFMA
// products (lo(F L0) < 2^52 is column 0's only addend: it neither carries nor reaches t, since
// 128 - sh >= 53), then a per-lane shift of columns 1..3 by k = 76 - sh in [1, 76].
CARRIER_INLINE Big<3> TFromSignificand(const V& sbits, Mask& ok) {
  const V bits = sbits & Splat(~(std::uint64_t{1} << 63));
  const V biased = Srl(bits, 52);
  const V f = Mask52(bits);
  const Big<3> l = Constant<3>(Get(kLog2E));
  Big<3> c;  // M L / 2^52 = c0 + c1 2^52 + c2 2^104 (after the column-0 bits are dropped)
  c.l[0] = Madd52<false>(Madd52<true>(l.l[0], f, l.l[0]), f, l.l[1]);
  c.l[1] = Madd52<false>(Madd52<true>(l.l[1], f, l.l[1]), f, l.l[2]);
  c.l[2] = Madd52<true>(l.l[2], f, l.l[2]);
  Normalize(c);
  ok &= MaskOf([&](int g) { return _mm512_cmpge_epi64_mask(biased.r[g], _mm512_set1_epi64(961)); });
  const V k = Splat(1037) - biased;  // 76 - sh
  Big<3> t;
  for (int g = 0; g < kGroups; ++g) {
    const __mmask8 two = _mm512_cmpge_epi64_mask(k.r[g], _mm512_set1_epi64(52));
    const __m512i r = _mm512_mask_sub_epi64(k.r[g], two, k.r[g], _mm512_set1_epi64(52));
    const __m512i rl = _mm512_sub_epi64(_mm512_set1_epi64(52), r);
    const __m512i sel0 = _mm512_mask_blend_epi64(two, c.l[0].r[g], c.l[1].r[g]);
    const __m512i sel1 = _mm512_mask_blend_epi64(two, c.l[1].r[g], c.l[2].r[g]);
    const __m512i sel2 = _mm512_maskz_mov_epi64(static_cast<__mmask8>(~two), c.l[2].r[g]);
    const __m512i m = _mm512_set1_epi64(static_cast<long long>(kMask52));
    t.l[0].r[g] = _mm512_and_si512(_mm512_or_si512(_mm512_maskz_srlv_epi64(kAll, sel0, r),
                                                   _mm512_maskz_sllv_epi64(kAll, sel1, rl)),
                                   m);
    t.l[1].r[g] = _mm512_and_si512(_mm512_or_si512(_mm512_maskz_srlv_epi64(kAll, sel1, r),
                                                   _mm512_maskz_sllv_epi64(kAll, sel2, rl)),
                                   m);
    t.l[2].r[g] = _mm512_maskz_srlv_epi64(kAll, sel2, r);
  }
  return t;
}

// hq = h 2^14 split as MulQ127Short splits it: a1 = hq >> 64 = h >> 50 (< 2^51) and
// hq mod 2^64 = ha 2^14, ha = h mod 2^50.
struct HqParts {
  V a1, ha;
};

// w + MulQ127Short(hq, b) = floor((w 2^63 + a1 b + ha 2^14 (b >> 64)) / 2^63) for b < 2^127,
// w < 2^127 given as the constant columns of w 2^63 (< 2^190: four limbs). (b >> 64) 2^14 is
// b >> 50 with its low 14 bits cleared (< 2^77, two limbs): ten IFMA products.
CARRIER_INLINE Big<3> AddMulHq(const Big<4>& w63, const HqParts& a, const Big<3>& b) {
  Big<2> b1 = Shr<50, 2>(b);
  b1.l[0] = b1.l[0] & Splat(kMask52 & ~std::uint64_t{0x3fff});
  Big<4> x = w63;
  MulAcc(x, Big<1>{{a.a1}}, b);
  MulAcc(x, Big<1>{{a.ha}}, b1);
  Normalize(x);
  return Shr<63, 3>(x);
}

// FixedExpNeg(s[i], e[i]) for kLanes lanes into hi, lo (mant's words) and shift; the returned
// mask has the lanes ExpOfFixed must redo.
CARRIER_INLINE Mask ExpLanes(const double* s, const double* e, std::uint64_t* hi, std::uint64_t* lo,
                             std::int64_t* shift) {
  V sbits, ebits;
  Mask ok = MaskOf([&](int g) {
    const __m512d sv = _mm512_loadu_pd(s + 8 * g), ev = _mm512_loadu_pd(e + 8 * g);
    sbits.r[g] = _mm512_castpd_si512(sv);
    ebits.r[g] = _mm512_castpd_si512(ev);
    // In range: -2^14 < -kFixedExpArgumentLimit < s <= 0 and |e| < 2^14 (false for NaN).
    return _mm512_cmp_pd_mask(sv, _mm512_set1_pd(-kFixedExpArgumentLimit), _CMP_GT_OQ) &
           _mm512_cmp_pd_mask(sv, _mm512_setzero_pd(), _CMP_LE_OQ) &
           _mm512_cmp_pd_mask(_mm512_abs_pd(ev), _mm512_set1_pd(0x1p14), _CMP_LT_OQ);
  });
  const bool any_e = MaskOf([&](int g) {
                       return _mm512_test_epi64_mask(
                           ebits.r[g], _mm512_set1_epi64(std::numeric_limits<long long>::max()));
                     }) != 0;
  // t = floor(q log2(e) / 2^128) in units 2^-113; whole = t >> 113, idx = bits 101..112 of t.
  const Big<3> t = any_e ? TGeneral(sbits, ebits, ok) : TFromSignificand(sbits, ok);
  const V whole = Srl(t.l[2], 9);
  const V idx = Shr<101, 1>(t).l[0] & Splat(4095);
  // h = (idx + 1) 2^101 - f = 2^101 - (t mod 2^101); h = 2^101 (t mod 2^101 = 0, which includes
  // q = 0) falls back.
  const Big<2> fl = Low<101>(t);
  ok &= MaskOf([&](int g) {
    return _mm512_test_epi64_mask(_mm512_or_si512(fl.l[0].r[g], fl.l[1].r[g]),
                                  _mm512_set1_epi64(-1));
  });
  const Big<2> h = Add<2, true>(Constant<2>(U128{1} << 101), fl);  // < 2^101
  const Big<2> h75 = Shr<38, 2>(h);  // floor(h 2^75) < 2^63: limb 1 < 2^11
  const V h64 = Shr<49, 1>(h).l[0];  // floor(h 2^64) < 2^52
  const HqParts hq = {Shr<50, 1>(h).l[0], h.l[0] & Splat((std::uint64_t{1} << 50) - 1)};
  // Degrees 7..5 in units 2^-64 (r < 2^52, then < 2^55): floor(h64 r / 2^64) is the high IFMA
  // half (bits 52..103) shifted by 12, the low half only adding a fraction below 1.
  V r = Splat(kNarrowCoefficients[2]) +
        Srl(Madd52<true>(Zero(), h64, Splat(kNarrowCoefficients[3])), 12);
  r = Splat(kNarrowCoefficients[1]) + Srl(Madd52<true>(Zero(), h64, r), 12);
  // Degree 4 in units 2^-70: floor(h75 r / 2^69) with h75 = a0 + a1 2^52, r = b0 + b1 2^52
  // (a1 < 2^11, b1 < 2^3): column 0 (lo(a0 b0) < 2^52) cannot carry and column 3 (hi(a1 b1))
  // is 0, so it is (column 1 >> 17) + (column 2 << 35); added to c_4 in 64 bits as there.
  {
    const Big<2> rb = FromU64(r);
    const V col1 =
        Madd52<false>(Madd52<false>(Madd52<true>(Zero(), h75.l[0], rb.l[0]), h75.l[0], rb.l[1]),
                      h75.l[1], rb.l[0]);
    const V col2 =
        Madd52<false>(Madd52<true>(Madd52<true>(Zero(), h75.l[0], rb.l[1]), h75.l[1], rb.l[0]),
                      h75.l[1], rb.l[1]);
    r = Splat(kNarrowCoefficients[0]) + Srl(col1, 17) + Sll(col2, 35);
  }
  // Degree 3 in Q1.127: floor((c_3 2^18 + h75 r) / 2^18) (< 2^143: three columns; hi(a1 b1) = 0
  // with r's limb 1 < 2^12).
  Big<3> p = Constant<3>(Get(kWideCoefficients[3]), 18);
  MulAcc(p, h75, FromU64(r));
  Normalize(p);
  p = Shr<18, 3>(p);
  // Degrees 2 and 1, then g = h p_1 (< 2^116).
  p = AddMulHq(Constant<4>(Get(kWideCoefficients[2]), 63), hq, p);
  p = AddMulHq(Constant<4>(Get(kWideCoefficients[1]), 63), hq, p);
  const Big<3> g = AddMulHq(Constant<4>(0), hq, p);
  // T[idx] from the table's words (hi at 2 idx, lo at 2 idx + 1), then mant = T + MulQ127Short(g,
  // T) with T >> 64 = the high word.
  const auto* base = reinterpret_cast<const long long*>(kTable);
  const V idx2 = Sll(idx, 1);
  const V thi = Map([&](int k) {
    return _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), kAll, idx2.r[k], base, 8);
  });
  const V tlo = Map([&](int k) {
    return _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), kAll,
                                       _mm512_add_epi64(idx2.r[k], _mm512_set1_epi64(1)), base, 8);
  });
  const Big<3> table = {{Mask52(tlo), Mask52(Srl(tlo, 52) | Sll(thi, 12)), Srl(thi, 40)}};
  Big<4> x = Constant<4>(0);
  MulAcc(x, Shr<64, 1>(g), table);
  MulAcc(x, Low<64>(g), FromU64(thi));
  Normalize(x);
  const Big<3> mant = Add<3>(table, Shr<63, 3>(x));
  const V mant_lo = ToU64(mant), mant_hi = Srl(mant.l[1], 12) | Sll(mant.l[2], 40);
  for (int k = 0; k < kGroups; ++k) {
    _mm512_store_si512(lo + 8 * k, mant_lo.r[k]);
    _mm512_store_si512(hi + 8 * k, mant_hi.r[k]);
    _mm512_store_si512(shift + 8 * k, whole.r[k]);
  }
  return ~ok;
}

// FixedExpNeg(s[i], e[i]) for i < n, handed to sink(i, mant_hi, mant_lo, shift).
template <class Sink>
__attribute__((noinline)) void Batch(const double* s, const double* e, std::size_t n, Sink&& sink) {
  alignas(64) std::uint64_t hi[kLanes], lo[kLanes];
  alignas(64) std::int64_t shift[kLanes];
  alignas(64) double ps[kLanes], pe[kLanes];
  for (std::size_t i = 0; i < n; i += kLanes) {
    const std::size_t k = std::min<std::size_t>(kLanes, n - i);
    const double* sp = s + i;
    const double* ep = e + i;
    if (k < kLanes) {  // pad the tail with a harmless argument (-1, 0)
      for (std::size_t j = 0; j < kLanes; ++j) {
        ps[j] = j < k ? s[i + j] : -1.0;
        pe[j] = j < k ? e[i + j] : 0.0;
      }
      sp = ps;
      ep = pe;
    }
    const Mask fallback = ExpLanes(sp, ep, hi, lo, shift);
    for (std::size_t j = 0; j < k; ++j) {
      if ((fallback >> j) & 1) {
        const FixedExp f = ExpOfFixed(NegToFixed114(s[i + j], e[i + j]));
        sink(i + j, Hi64(f.mant), Lo64(f.mant), f.shift);
      } else {
        sink(i + j, hi[j], lo[j], static_cast<int>(shift[j]));
      }
    }
  }
}

#undef CARRIER_INLINE
}  // namespace ifma
CARRIER_IFMA_END
#endif

// acc (Q64.192) += floor(v * 2^(65 - shift)), v = (top, mid, low) < 2^190, 0 <= shift < 256.
void AddShifted(std::uint64_t acc[4], std::uint64_t top, std::uint64_t mid, std::uint64_t low,
                int shift) {
  // v * 2^65 < 2^255 as four words, then shifted right by shift with the bits below dropped.
  const std::uint64_t w[8] = {0, low << 1, (mid << 1) | (low >> 63), (top << 1) | (mid >> 63), 0, 0,
                              0, 0};
  const int ws = shift / 64, bs = shift % 64;
  std::uint64_t add[4];
  for (int i = 0; i < 4; ++i)
    add[i] = (w[i + ws] >> bs) | (bs != 0 ? w[i + ws + 1] << (64 - bs) : 0);
  U128 carry = 0;
  for (int i = 0; i < 4; ++i) {
    const U128 s = U128{acc[i]} + add[i] + carry;
    acc[i] = Lo64(s);
    carry = s >> 64;
  }
}

}  // namespace

namespace fixed_exp_constants {
U128 Log2E() { return Get(kLog2E); }
U128 Coefficient(int k) { return Get(kWideCoefficients[k]); }
std::uint64_t NarrowCoefficient(int k) { return kNarrowCoefficients[k - kWideDegree - 1]; }
int NarrowScale(int k) { return k == kWideDegree + 1 ? 70 : 64; }
U128 Table(int i) { return Get(kTable[i]); }
}  // namespace fixed_exp_constants

FixedExp FixedExpNeg(double s, double e) { return ExpOfFixed(NegToFixed114(s, e)); }

namespace {
std::atomic<bool>& VectorAllowed() {
  static std::atomic<bool> allowed{true};
  return allowed;
}
bool VectorSupported() {
#if CARRIER_FIXED_EXP_IFMA
  static const bool supported =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512ifma");
  return supported;
#else
  return false;
#endif
}
}  // namespace

bool FixedExpVectorized() {
  return VectorSupported() && VectorAllowed().load(std::memory_order_relaxed);
}

bool SetFixedExpVectorAllowed(bool allowed) { return VectorAllowed().exchange(allowed); }

void FixedExpNegBatch(const double* s, const double* e, std::size_t n, FixedExp* out) {
#if CARRIER_FIXED_EXP_IFMA
  if (FixedExpVectorized()) {
    ifma::Batch(s, e, n, [out](std::size_t i, std::uint64_t hi, std::uint64_t lo, int shift) {
      out[i] = {MakeU128(hi, lo), shift};
    });
    return;
  }
#endif
  for (std::size_t i = 0; i < n; ++i) out[i] = FixedExpNeg(s[i], e[i]);
}

namespace {

// Kernel terms are summed exactly per exponent: bucket[shift] holds the 192-bit sum of the
// mantissas with that shift (each < 2^128, at most 2^62 of them). A term with s > -134 has
// q < (134 + 2^-46) 2^114, so shift = floor(t) <= floor(134.00001 * 1.4427) = 193.
struct Bucket {
  U128 sum = 0;
  std::uint64_t carry = 0;
};
constexpr int kBuckets = 256;
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

constexpr double kSkipBelow = -134.0;  // exp(-134) < 2^-193: below the accumulator's unit

// One kernel term into its bucket.
inline void AddTerm(TermSums& r, std::uint64_t hi, std::uint64_t lo, int shift) {
  if (shift < 0 || shift >= kBuckets)
    throw std::logic_error("SumExpShifted: exp shift out of range");
  Bucket& b = r.bucket[shift];
  const U128 before = b.sum;
  b.sum += MakeU128(hi, lo);
  b.carry += b.sum < before ? 1 : 0;
}

#if CARRIER_FIXED_EXP_IFMA
CARRIER_IFMA_BEGIN
// ScanTerms' loop without the memo, eight elements at a time: the same tests and the same
// TwoSum in vector registers (explicit operations, no contraction), the kernel arguments
// compressed into a batch that ifma::Batch evaluates kBatch at a time.
__attribute__((noinline)) void ScanTermsVector(const double* x, std::size_t n, double m,
                                               TermSums& r) {
  constexpr std::size_t kBatch = 8 * ifma::kLanes;
  alignas(64) double bs[kBatch + 8], be[kBatch + 8];
  std::size_t batched = 0;
  auto add = [&r](std::size_t, std::uint64_t hi, std::uint64_t lo, int shift) {
    AddTerm(r, hi, lo, shift);
  };
  const __m512d mv = _mm512_set1_pd(m), neg_m = _mm512_set1_pd(-m);
  const __m512d neg_inf = _mm512_set1_pd(-INFINITY), skip = _mm512_set1_pd(kSkipBelow);
  std::uint64_t exact = 0, approx = 0;
  for (std::size_t i = 0; i < n; i += 8) {
    const __mmask8 in = n - i >= 8 ? __mmask8{0xff} : static_cast<__mmask8>((1u << (n - i)) - 1);
    const __m512d v = _mm512_maskz_loadu_pd(in, x + i);
    const __mmask8 eq = _mm512_mask_cmp_pd_mask(in, v, mv, _CMP_EQ_OQ);
    const __mmask8 rest = in & ~eq & ~_mm512_cmp_pd_mask(v, neg_inf, _CMP_EQ_OQ);
    exact += static_cast<unsigned>(std::popcount(static_cast<unsigned>(eq)));
    approx += static_cast<unsigned>(std::popcount(static_cast<unsigned>(rest)));
    const __m512d s = _mm512_sub_pd(v, mv);
    const __mmask8 keep = _mm512_mask_cmp_pd_mask(rest, s, skip, _CMP_GT_OQ);
    if (keep == 0) continue;
    const __m512d bb = _mm512_sub_pd(s, v);
    const __m512d e =
        _mm512_add_pd(_mm512_sub_pd(v, _mm512_sub_pd(s, bb)), _mm512_sub_pd(neg_m, bb));
    _mm512_storeu_pd(bs + batched, _mm512_maskz_compress_pd(keep, s));
    _mm512_storeu_pd(be + batched, _mm512_maskz_compress_pd(keep, e));
    batched += static_cast<unsigned>(std::popcount(static_cast<unsigned>(keep)));
    if (batched >= kBatch) {
      ifma::Batch(bs, be, kBatch, add);
      batched -= kBatch;
      for (std::size_t j = 0; j < batched; ++j) {
        bs[j] = bs[kBatch + j];
        be[j] = be[kBatch + j];
      }
    }
  }
  ifma::Batch(bs, be, batched, add);
  r.exact_terms += exact;
  r.approx_terms += approx;
}
CARRIER_IFMA_END
#endif

// The terms of x[0..n) into r's buckets and counts.
// The terms of one pass, fed in pieces (a StoredColumn's chunks, or a whole span): Add adds the
// terms of x[0..n) to r, Finish evaluates what is still batched. The memo and the switch to the
// vector kernel carry over from piece to piece, so pieces give the one-pass sums.
class TermScanner {
 public:
  TermScanner(double m, TermSums& r) : m_(m), r_(r), memo_(std::size_t{1} << kMemoBits) {}

  void Add(const double* x, std::size_t n) {
#if CARRIER_FIXED_EXP_IFMA
    if (vector_rest_) {
      ScanTermsVector(x, n, m_, r_);
      return;
    }
#endif
    const double m = m_;
    for (std::size_t i = 0; i < n; ++i) {
      const double v = x[i];
      if (v == m) {
        ++r_.exact_terms;
        continue;
      }
      if (v == -INFINITY) continue;
      ++r_.approx_terms;
      // TwoSum (Knuth): s + e == v - m exactly; s is never infinite here (s > -134).
      const double s = v - m;
      if (!(s > kSkipBelow)) continue;
      const double bb = s - v;
      const double e = (v - (s - bb)) + (-m - bb);
      if (!use_memo_) {
        batch_s_[batched_] = s;
        batch_e_[batched_] = e;
        if (++batched_ == kBatch) Flush();
        continue;
      }
      const auto key = std::bit_cast<std::uint64_t>(v);
      Memo& slot = memo_[(key * 0x9E3779B97F4A7C15ULL) >> (64 - kMemoBits)];
      if (slot.key != key || key == 0) {
        slot.key = key;
        slot.term = FixedExpNeg(s, e);
      } else {
        ++hits_;
      }
      AddTerm(r_, Hi64(slot.term.mant), Lo64(slot.term.mant), slot.term.shift);
      if (++window_ == kWindow) {
        use_memo_ = hits_ >= kWindow / 4;
        window_ = hits_ = 0;
#if CARRIER_FIXED_EXP_IFMA
        if (!use_memo_ && FixedExpVectorized()) {
          vector_rest_ = true;
          ScanTermsVector(x + i + 1, n - i - 1, m, r_);
          return;
        }
#endif
      }
    }
  }
  void Finish() { Flush(); }

 private:
  // A term is a pure function of v (m is fixed): a direct-mapped memo of the last term per
  // slot returns the same (mant, shift) FixedExpNeg gave for that v. Narrow storage formats
  // (bf16, fp16, fp8) repeat a few thousand values, so most terms skip the kernel. Inputs
  // without repeats (fp32, fp64) would only pay for the lookups: the memo is dropped for the
  // rest of the input once a window of kWindow kernel terms had fewer than kWindow / 4 hits.
  static constexpr int kMemoBits = 14;
  static constexpr std::uint64_t kWindow = 4096;
  // Without the memo, kernel arguments are collected and evaluated kBatch at a time by
  // FixedExpNegBatch (the same terms; the buckets' exact sums do not depend on the order).
  static constexpr std::size_t kBatch = 64;
  struct Memo {
    std::uint64_t key = 0;  // v's bits; 0 (v = +0) never matches, so it marks an empty slot
    FixedExp term;
  };
  void Flush() {
    FixedExpNegBatch(batch_s_, batch_e_, batched_, batch_t_);
    for (std::size_t j = 0; j < batched_; ++j)
      AddTerm(r_, Hi64(batch_t_[j].mant), Lo64(batch_t_[j].mant), batch_t_[j].shift);
    batched_ = 0;
  }
  double m_;
  TermSums& r_;
  std::vector<Memo> memo_;
  bool use_memo_ = true;
  bool vector_rest_ = false;
  std::uint64_t window_ = 0, hits_ = 0;
  double batch_s_[kBatch] = {}, batch_e_[kBatch] = {};
  FixedExp batch_t_[kBatch];
  std::size_t batched_ = 0;
};

void ScanTerms(const double* x, std::size_t n, double m, TermSums& r) {
  TermScanner scan(m, r);
  scan.Add(x, n);
  scan.Finish();
}

// The shifted sum from the merged bucket sums: one truncation per bucket.
ShiftedExpSum FromTerms(const TermSums& t) {
  ShiftedExpSum r;
  r.exact_terms = t.exact_terms;
  r.approx_terms = t.approx_terms;
  for (int b = 0; b < kBuckets; ++b)
    if (t.bucket[b].sum != 0 || t.bucket[b].carry != 0)
      AddShifted(r.word, t.bucket[b].carry, Hi64(t.bucket[b].sum), Lo64(t.bucket[b].sum), b);
  r.word[3] += r.exact_terms;  // each exactly 1; S < 2^62 keeps word 3 from wrapping
  return r;
}

}  // namespace

ShiftedExpSum SumExpShifted(std::span<const double> x, double m) {
  // The scan split across PassThreads() (precision/parallel_pass.hpp): each part sums its terms
  // into its own buckets, merged exactly before the one truncation per bucket, so the result is
  // the one-pass result bit for bit (the memo changes no term).
  const std::size_t parts = PassParts(x.size());
  std::vector<TermSums> part(parts);
  SplitPass(x.size(), parts, [&](std::size_t p, std::uint64_t lo, std::uint64_t hi) {
    ScanTerms(x.data() + lo, static_cast<std::size_t>(hi - lo), m, part[p]);
  });
  for (std::size_t p = 1; p < parts; ++p) part[0].Merge(part[p]);
  return FromTerms(part[0]);
}

ShiftedExpSum SumExpShifted(const StoredColumn& x, double m) {
  if (x.layout() == StoredColumn::Layout::kDouble) return SumExpShifted(x.Doubles(), m);
  // As above, each part decoding its range chunk by chunk into one TermScanner.
  const std::size_t parts = PassParts(x.size());
  std::vector<TermSums> part(parts);
  SplitPass(x.size(), parts, [&](std::size_t p, std::uint64_t lo, std::uint64_t hi) {
    TermScanner scan(m, part[p]);
    x.ForEachChunk(lo, hi,
                   [&](std::uint64_t, std::span<const double> c) { scan.Add(c.data(), c.size()); });
    scan.Finish();
  });
  for (std::size_t p = 1; p < parts; ++p) part[0].Merge(part[p]);
  return FromTerms(part[0]);
}

double ShiftedExpSum::RelErrorBound() const {
  if (approx_terms == 0) return 0.0;
  return kFixedExpRelError + std::ldexp(static_cast<double>(approx_terms), -192);
}

double ShiftedExpSum::Approximate() const {
  double v = 0;
  for (int i = 3; i >= 0; --i) v = v * 0x1p64 + static_cast<double>(word[i]);
  return std::ldexp(v, -192);
}

}  // namespace carrier::reference
