// precision/reference/fast_sum.cpp: ReferenceSumFast (contract in fast_sum.hpp).
#include "precision/reference/fast_sum.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>

#include "precision/reference/exact_sum.hpp"
#include "precision/reference/reference_internal.hpp"

namespace carrier::reference {

namespace {

// The scan of one stretch of terms into two ExactSum states (alternate terms, so that runs of
// terms of one binade do not form one long read-modify-write chain on the same limbs), with
// the exponent bookkeeping of ReferenceSum's precision. Each finite nonzero term x =
// sig * 2^(pos - 1074) adds +-sig * 2^(pos mod 32) (below 2^85: three 32-bit digits) to limbs
// pos / 32 .. + 2 and 1 to pending, exactly as ExactSum::Add does, without its per-term
// normalisation test: the caller normalises between stretches of at most kStretch terms.
struct Scan {
  ExactSum::State s[2] = {ExactSum::Identity(), ExactSum::Identity()};
  long top = LONG_MIN, low = LONG_MAX;

  void Run(const double* x, std::size_t n) {
    std::int64_t pending[2] = {0, 0};
    std::uint64_t top_pos = 0, low_pos = ~std::uint64_t{0};
    for (std::size_t i = 0; i < n; ++i) {
      ExactSum::State& st = s[i & 1];
      const std::uint64_t bits = std::bit_cast<std::uint64_t>(x[i]);
      const std::uint64_t mag = bits & ~(std::uint64_t{1} << 63);
      const std::uint64_t biased = mag >> 52;
      if (mag == 0) continue;
      if (biased == 0x7ff) [[unlikely]] {
        if (mag != (std::uint64_t{0x7ff} << 52)) {
          st.has_nan = true;
        } else if (bits >> 63) {
          st.has_neg_inf = true;
        } else {
          st.has_pos_inf = true;
        }
        continue;
      }
      const std::uint64_t sig =
          (mag & ((std::uint64_t{1} << 52) - 1)) | (biased != 0 ? std::uint64_t{1} << 52 : 0);
      const std::uint64_t pos = biased != 0 ? biased - 1 : 0;  // x = sig * 2^(pos - 1074)
      // bit weights, offset by 1074: highest set bit + 1 and lowest set bit
      top_pos = std::max<std::uint64_t>(
          top_pos, pos + static_cast<std::uint64_t>(64 - std::countl_zero(sig)));
      low_pos =
          std::min<std::uint64_t>(low_pos, pos + static_cast<std::uint64_t>(std::countr_zero(sig)));
      // The three digits of sig << sh (sh < 32, below 2^85) without a 128-bit shift.
      const unsigned sh = static_cast<unsigned>(pos % 32);
      const std::int64_t neg = -static_cast<std::int64_t>(bits >> 63);  // 0 or -1
      const std::int64_t d0 = static_cast<std::int64_t>((sig << sh) & 0xffffffffu);
      const std::int64_t d1 = static_cast<std::int64_t>((sig >> (32 - sh)) & 0xffffffffu);
      const std::int64_t d2 = static_cast<std::int64_t>((sig >> 32) >> (32 - sh));
      std::int64_t* limb = st.limb + pos / 32;
      limb[0] += (d0 ^ neg) - neg;
      limb[1] += (d1 ^ neg) - neg;
      limb[2] += (d2 ^ neg) - neg;
      ++pending[i & 1];
    }
    for (int k = 0; k < 2; ++k) s[k].pending += pending[k];
    if (low_pos != ~std::uint64_t{0}) {
      top = std::max(top, static_cast<long>(top_pos) - 1074);
      low = std::min(low, static_cast<long>(low_pos) - 1074);
    }
  }
};

// Terms per stretch: limbs stay below 2^32 + kStretch * 2^32 < 2^62 and pending below
// ExactSum::kMaxPending, ExactSum's own invariants.
constexpr std::size_t kStretch = std::size_t{1} << 28;

}  // namespace

Reference ReferenceSumFast(std::span<const double> x) {
  WideExponentRange range;
  Reference r;
  r.op = "sum";
  r.count = x.size();
  Scan scan;
  for (std::size_t lo = 0; lo < x.size(); lo += kStretch) {
    scan.Run(x.data() + lo, std::min(kStretch, x.size() - lo));
    if (lo + kStretch < x.size())
      for (auto& st : scan.s) ExactSum::Normalize(st);
  }
  ExactSum::State s = scan.s[0];
  const ExactSum::State& s_odd = scan.s[1];
  const long top = scan.top, low = scan.low;
  s = ExactSum::Combine(s, s_odd);
  if (s.has_nan || s.has_pos_inf || s.has_neg_inf) {
    const double special = (s.has_nan || (s.has_pos_inf && s.has_neg_inf))
                               ? std::numeric_limits<double>::quiet_NaN()
                               : (s.has_pos_inf ? std::numeric_limits<double>::infinity()
                                                : -std::numeric_limits<double>::infinity());
    internal::AddExactDouble(r, special);
    internal::MarkExact(r, 53, -std::numeric_limits<double>::infinity());
    return r;
  }
  mpfr_prec_t prec = 53;
  if (top != LONG_MIN) {
    const long carry_bits = 64 - std::countl_zero(static_cast<std::uint64_t>(x.size()));
    prec = static_cast<mpfr_prec_t>(std::max<long>(top - low + carry_bits + 1, MPFR_PREC_MIN + 1));
  }
  MpfrValue exact;
  ExactSum::ToMpfr(s, exact.get());
  MpfrValue value(prec);
  if (mpfr_set(value.get(), exact.get(), MPFR_RNDN) != 0)
    throw std::logic_error("ReferenceSumFast: the exact sum does not fit its precision");
  if (mpfr_zero_p(value.get())) mpfr_set_zero(value.get(), 1);
  internal::AddExact(r, std::move(value));
  internal::MarkExact(r, prec, -std::numeric_limits<double>::infinity());
  return r;
}

}  // namespace carrier::reference

#endif
