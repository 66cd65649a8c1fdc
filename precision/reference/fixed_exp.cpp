// precision/reference/fixed_exp.cpp: the fixed-point exp kernel and the shifted sum of
// exponentials (contract and error bound in fixed_exp.hpp).
//
// The constants below and the table in fixed_exp_table.inc were printed by MPFR (400-bit values
// rounded to nearest); tests/precision/test_reference_fast.cpp recomputes every one of them.
#include "precision/reference/fixed_exp.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "precision/parallel_pass.hpp"

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

// The terms of x[0..n) into r's buckets and counts.
void ScanTerms(const double* x, std::size_t n, double m, TermSums& r) {
  constexpr double kSkipBelow = -134.0;  // exp(-134) < 2^-193: below the accumulator's unit
  auto add_term = [&r](const FixedExp& t) {
    if (t.shift >= kBuckets) throw std::logic_error("SumExpShifted: exp shift out of range");
    Bucket& b = r.bucket[t.shift];
    const U128 before = b.sum;
    b.sum += t.mant;
    b.carry += b.sum < before ? 1 : 0;
  };
  // A term is a pure function of v (m is fixed): a direct-mapped memo of the last term per
  // slot returns the same (mant, shift) FixedExpNeg gave for that v. Narrow storage formats
  // (bf16, fp16, fp8) repeat a few thousand values, so most terms skip the kernel. Inputs
  // without repeats (fp32, fp64) would only pay for the lookups: the memo is dropped for the
  // rest of the input once a window of kWindow kernel terms had fewer than kWindow / 4 hits.
  constexpr int kMemoBits = 14;
  constexpr std::uint64_t kWindow = 4096;
  struct Memo {
    std::uint64_t key = 0;  // v's bits; 0 (v = +0) never matches, so it marks an empty slot
    FixedExp term;
  };
  std::vector<Memo> memo(std::size_t{1} << kMemoBits);
  bool use_memo = true;
  std::uint64_t window = 0, hits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = x[i];
    if (v == m) {
      ++r.exact_terms;
      continue;
    }
    if (v == -INFINITY) continue;
    ++r.approx_terms;
    // TwoSum (Knuth): s + e == v - m exactly; s is never infinite here (s > -134).
    const double s = v - m;
    if (!(s > kSkipBelow)) continue;
    const double bb = s - v;
    const double e = (v - (s - bb)) + (-m - bb);
    if (!use_memo) {
      add_term(FixedExpNeg(s, e));
      continue;
    }
    const auto key = std::bit_cast<std::uint64_t>(v);
    Memo& slot = memo[(key * 0x9E3779B97F4A7C15ULL) >> (64 - kMemoBits)];
    if (slot.key != key || key == 0) {
      slot.key = key;
      slot.term = FixedExpNeg(s, e);
    } else {
      ++hits;
    }
    add_term(slot.term);
    if (++window == kWindow) {
      use_memo = hits >= kWindow / 4;
      window = hits = 0;
    }
  }
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
  const TermSums& t = part[0];
  ShiftedExpSum r;
  r.exact_terms = t.exact_terms;
  r.approx_terms = t.approx_terms;
  for (int b = 0; b < kBuckets; ++b)
    if (t.bucket[b].sum != 0 || t.bucket[b].carry != 0)
      AddShifted(r.word, t.bucket[b].carry, Hi64(t.bucket[b].sum), Lo64(t.bucket[b].sum), b);
  r.word[3] += r.exact_terms;  // each exactly 1; S < 2^62 keeps word 3 from wrapping
  return r;
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
