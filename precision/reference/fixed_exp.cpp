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
