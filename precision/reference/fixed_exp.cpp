// precision/reference/fixed_exp.cpp: the fixed-point exp kernel and the shifted sum of
// exponentials (contract and error bound in fixed_exp.hpp).
//
// The constants and the scalar kernel are in fixed_exp_kernel.hpp, the AVX-512 IFMA kernels in
// fixed_exp_x86.cpp; this file chooses between them (FixedExpVectorized) and sums the terms.
#include "precision/reference/fixed_exp.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "core/cpu_features.hpp"
#include "precision/parallel_pass.hpp"
#include "precision/reference/fixed_exp_kernel.hpp"

namespace carrier::reference {

namespace {

using fixed_exp_detail::AddTerm;
using fixed_exp_detail::ExpOfFixed;
using fixed_exp_detail::Get;
using fixed_exp_detail::kBuckets;
using fixed_exp_detail::kLog2E;
using fixed_exp_detail::kNarrowCoefficients;
using fixed_exp_detail::kSkipBelow;
using fixed_exp_detail::kTable;
using fixed_exp_detail::kWideCoefficients;
using fixed_exp_detail::NegToFixed114;
using fixed_exp_detail::TermSums;

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
// The one run-time check (core/cpu_features.hpp): AVX-512 F and IFMA.
bool VectorSupported() { return HostAvx512().HasFIfma(); }
}  // namespace

bool FixedExpVectorized() {
  return VectorSupported() && VectorAllowed().load(std::memory_order_relaxed);
}

bool SetFixedExpVectorAllowed(bool allowed) { return VectorAllowed().exchange(allowed); }

void FixedExpNegBatch(const double* s, const double* e, std::size_t n, FixedExp* out) {
#if CARRIER_X86_KERNELS
  if (FixedExpVectorized()) {
    fixed_exp_detail::FixedExpNegBatchIfma(s, e, n, out);  // fixed_exp_x86.cpp
    return;
  }
#endif
  for (std::size_t i = 0; i < n; ++i) out[i] = FixedExpNeg(s[i], e[i]);
}

namespace {

// x87 extended precision (64-bit significand with an explicit integer bit, then 15 exponent
// bits and the sign, little-endian): ToLongDouble writes its bits directly.
constexpr bool kX87LongDouble = std::numeric_limits<long double>::digits == 64 &&
                                std::numeric_limits<long double>::max_exponent == 16384 &&
                                std::endian::native == std::endian::little;

// t's value, mant * 2^(-127 - shift), rounded to nearest long double (ties to even) into *out:
// what RoundNearestEven and ToBinary give (fixed_point.hpp), without their general shifts and
// ldexpl where the result is a normal x87 value (mant >= 2^126 by FixedExpNeg's contract), its
// bytes written directly.
void ToLongDouble(const FixedExp& t, long double* out) {
  if constexpr (kX87LongDouble) {
    const std::uint64_t hi = Hi64(t.mant), lo = Lo64(t.mant);
    const bool top127 = (hi >> 63) != 0;  // the leading bit is 2^127, else 2^126
    // The 64-bit significand, the bits below it and half its last place.
    std::uint64_t sig = top127 ? hi : (hi << 1) | (lo >> 63);
    const std::uint64_t rem = top127 ? lo : lo << 1;  // the dropped bits, left-aligned
    int biased = (top127 ? 0 : -1) - t.shift + 16383;
    constexpr std::uint64_t kHalf = std::uint64_t{1} << 63;
    // Rounding up is a coin toss per value: written without branches, which mispredicted.
    const auto up =
        static_cast<std::uint64_t>(rem > kHalf) | (static_cast<std::uint64_t>(rem == kHalf) & sig);
    sig += up & 1;
    const bool carry = sig == 0;  // carried out of 64 bits: 2^64, i.e. 2^63 one binade up
    sig |= static_cast<std::uint64_t>(carry) << 63;
    biased += static_cast<int>(carry);
    if (biased >= 1 && biased < 0x7fff) {
      const auto se = static_cast<std::uint16_t>(biased);
      auto* bytes = reinterpret_cast<unsigned char*>(out);
      std::memcpy(bytes, &sig, sizeof sig);
      std::memcpy(bytes + 8, &se, sizeof se);
      return;
    }
  }
  *out = ToBinary<long double>(
      RoundNearestEven(t.mant, -127 - t.shift, false, FormatOf<long double>()), false);
}

// Where v goes through the kernel: below m and above its argument limit (false for NaN and
// -inf); then (s, e) is v - m as a double-double (TwoSum, exact).
bool KernelArgument(double v, double m, double& s, double& e) {
  const ExactDifference d = Difference(v, m);
  s = d.s;
  e = d.e;
  return v < m && s > -kFixedExpArgumentLimit;
}

// The value of v outside the kernel: 1 at the maximum, NaN for NaN, libm's exp above the
// maximum (outside the contract: a code table's entries above the values' maximum), else +0.
long double OutsideKernel(double v, double m) {
  if (v == m) return 1;
  if (std::isnan(v)) return v;
  if (v > m) return std::exp(static_cast<long double>(v) - m);
  return 0;
}

}  // namespace

long double ExpShiftedLongDouble(double v, double m) {
  double s, e;
  if (!KernelArgument(v, m, s, e)) return OutsideKernel(v, m);
  long double out;
  ToLongDouble(FixedExpNeg(s, e), &out);
  return out;
}

void ExpShiftedLongDouble(std::span<const double> x, double m, long double* out) {
  constexpr std::size_t kChunk = 256;  // a multiple of the vector kernel's 32 lanes
  double s[kChunk], e[kChunk];
  bool in[kChunk];
  FixedExp t[kChunk];
  for (std::size_t lo = 0; lo < x.size(); lo += kChunk) {
    const std::size_t len = std::min(kChunk, x.size() - lo);
    for (std::size_t k = 0; k < len; ++k) {
      in[k] = KernelArgument(x[lo + k], m, s[k], e[k]);
      if (!in[k]) s[k] = -1, e[k] = 0;  // any argument within the contract; not used
    }
    FixedExpNegBatch(s, e, len, t);
    for (std::size_t k = 0; k < len; ++k) {
      if (in[k]) {
        ToLongDouble(t[k], out + lo + k);
      } else {
        out[lo + k] = OutsideKernel(x[lo + k], m);
      }
    }
  }
}

namespace {

// The terms of x[0..n) into r's buckets and counts.
// The terms of one pass, fed in pieces (a StoredColumn's chunks, or a whole span): Add adds the
// terms of x[0..n) to r, Finish evaluates what is still batched. The memo and the switch to the
// vector kernel carry over from piece to piece, so pieces give the one-pass sums.
class TermScanner {
 public:
  TermScanner(double m, TermSums& r) : m_(m), r_(r), memo_(std::size_t{1} << kMemoBits) {}

  void Add(const double* x, std::size_t n) {
#if CARRIER_X86_KERNELS
    if (vector_rest_) {
      fixed_exp_detail::ScanTermsIfma(x, n, m_, r_);
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
      // s + e == v - m exactly; s is never infinite here (s > -134).
      const auto [s, e] = Difference(v, m);
      if (!(s > kSkipBelow)) continue;
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
#if CARRIER_X86_KERNELS
        if (!use_memo_ && FixedExpVectorized()) {
          vector_rest_ = true;
          fixed_exp_detail::ScanTermsIfma(x + i + 1, n - i - 1, m, r_);
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
