// precision/reference/fixed_exp_x86.cpp: the AVX-512 IFMA forms of the fixed-point exp kernel
// and of SumExpShifted's scan (fixed_exp.hpp's contract; fixed_exp.cpp calls them only where
// HostAvx512().HasFIfma(), core/cpu_features.hpp). Each gives the scalar path's integers bit for
// bit; the scalar kernel and the constants are fixed_exp_kernel.hpp's.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "precision/reference/fixed_exp_kernel.hpp"

#if CARRIER_X86_KERNELS
#include <immintrin.h>
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

namespace carrier::reference::fixed_exp_detail {

namespace {

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

}  // namespace

void FixedExpNegBatchIfma(const double* s, const double* e, std::size_t n, FixedExp* out) {
  ifma::Batch(s, e, n, [out](std::size_t i, std::uint64_t hi, std::uint64_t lo, int shift) {
    out[i] = {MakeU128(hi, lo), shift};
  });
}

void ScanTermsIfma(const double* x, std::size_t n, double m, TermSums& r) {
  ScanTermsVector(x, n, m, r);
}

}  // namespace carrier::reference::fixed_exp_detail

#endif  // CARRIER_X86_KERNELS
