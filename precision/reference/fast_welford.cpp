// precision/reference/fast_welford.cpp: ReferenceWelfordFast and ReferenceNorm2Fast (contracts
// in fast_sum.hpp).
#include "precision/reference/fast_sum.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>

#include "precision/reference/exact_sum.hpp"
#include "precision/reference/fixed_point.hpp"
#include "precision/reference/reference_internal.hpp"

namespace carrier::reference {

namespace {

// ExactSum::Add's digits for a finite nonzero double, without its normalisation test (the
// caller keeps pending below ExactSum::kMaxPending).
inline void AddDigits(ExactSum::State& st, double v) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(v);
  const std::uint64_t mag = bits & ~(std::uint64_t{1} << 63);
  const std::uint64_t biased = mag >> 52;
  const std::uint64_t sig =
      (mag & ((std::uint64_t{1} << 52) - 1)) | (biased != 0 ? std::uint64_t{1} << 52 : 0);
  const std::uint64_t pos = biased != 0 ? biased - 1 : 0;
  const unsigned sh = static_cast<unsigned>(pos % 32);
  const std::int64_t neg = -static_cast<std::int64_t>(bits >> 63);
  const std::int64_t d0 = static_cast<std::int64_t>((sig << sh) & 0xffffffffu);
  const std::int64_t d1 = static_cast<std::int64_t>((sig >> (32 - sh)) & 0xffffffffu);
  const std::int64_t d2 = static_cast<std::int64_t>((sig >> 32) >> (32 - sh));
  std::int64_t* limb = st.limb + pos / 32;
  limb[0] += (d0 ^ neg) - neg;
  limb[1] += (d1 ^ neg) - neg;
  limb[2] += (d2 ^ neg) - neg;
  ++st.pending;
}

// The exact sum in state s, as SumExact would give it: precision top - low + bits(n) + 1
// (MPFR_PREC_MIN + 1 at least; 53 and +0 when every term is zero).
MpfrValue ToExact(const ExactSum::State& s, long top, long low, std::size_t n) {
  mpfr_prec_t prec = 53;
  if (top != LONG_MIN) {
    const long carry_bits = 64 - std::countl_zero(static_cast<std::uint64_t>(n));
    prec = static_cast<mpfr_prec_t>(std::max<long>(top - low + carry_bits + 1, MPFR_PREC_MIN + 1));
  }
  MpfrValue exact;
  ExactSum::ToMpfr(s, exact.get());
  MpfrValue value(prec);
  if (mpfr_set(value.get(), exact.get(), MPFR_RNDN) != 0)
    throw std::logic_error("ReferenceWelfordFast: an exact sum does not fit its precision");
  if (mpfr_zero_p(value.get())) mpfr_set_zero(value.get(), 1);
  return value;
}

// Squares split exactly as p + e (p = x*x, e = fma(x, x, -p)) need |x| in [2^-484, 2^511)
// (or x = 0); false for inf and NaN too.
bool SquaresSplitExactly(std::span<const double> x) {
  bool ok = true;
  for (double v : x) {
    const double a = std::fabs(v);
    ok = ok && (a == 0 || (a >= 0x1p-484 && a < 0x1p511));
  }
  return ok;
}

// The exact sums of x (when kWithSum) and of x^2 as ExactSum states, with the exponent
// bookkeeping of the MPFR terms x (53 bits) and x^2 (106 bits, exact) that SumExact's
// precision rule needs. x must pass SquaresSplitExactly.
template <bool kWithSum>
struct SquareScan {
  ExactSum::State s1 = ExactSum::Identity(), s2 = ExactSum::Identity();
  long top1 = LONG_MIN, low1 = LONG_MAX, top2 = LONG_MIN, low2 = LONG_MAX;

  explicit SquareScan(std::span<const double> x) {
    for (const double v : x) {
      if (v == 0) continue;
      if (s1.pending + 1 > ExactSum::kMaxPending) ExactSum::Normalize(s1);
      if (s2.pending + 2 > ExactSum::kMaxPending) ExactSum::Normalize(s2);
      const double p = v * v;
      const double e = std::fma(v, v, -p);  // exact in the range checked
      AddDigits(s2, p);
      if (e != 0) AddDigits(s2, e);
      // x = sig 2^k, x^2 = sig^2 2^(2k)
      const std::uint64_t mag = std::bit_cast<std::uint64_t>(v) & ~(std::uint64_t{1} << 63);
      const std::uint64_t biased = mag >> 52;
      const std::uint64_t sig =
          (mag & ((std::uint64_t{1} << 52) - 1)) | (biased != 0 ? std::uint64_t{1} << 52 : 0);
      const long k = static_cast<long>(biased != 0 ? biased : 1) - 1075;
      const long tz = std::countr_zero(sig);
      if constexpr (kWithSum) {
        AddDigits(s1, v);
        top1 = std::max(top1, k + (64 - std::countl_zero(sig)));
        low1 = std::min(low1, k + tz);
      }
      const U128 sq = U128{sig} * sig;
      const long width =
          Hi64(sq) != 0 ? 128 - std::countl_zero(Hi64(sq)) : 64 - std::countl_zero(Lo64(sq));
      top2 = std::max(top2, 2 * k + width);
      low2 = std::min(low2, 2 * (k + tz));
    }
  }
};

}  // namespace

Reference ReferenceWelfordFast(std::span<const double> x) {
  const std::size_t n = x.size();
  // Special values, n < 2 and inputs whose squares might not split exactly: the definition.
  if (n < 2 || !SquaresSplitExactly(x)) return ReferenceWelford(x);
  WideExponentRange range;
  Reference r;
  r.op = "welford";
  r.count = n;
  const SquareScan<true> scan(x);
  const MpfrValue sum1 = ToExact(scan.s1, scan.top1, scan.low1, n);
  const MpfrValue sum2 = ToExact(scan.s2, scan.top2, scan.low2, n);
  // From here on exactly ReferenceWelford's steps (reference_exact.cpp): n m2 = n sum x^2 -
  // (sum x)^2 exactly, then three correctly rounded quotients.
  MpfrValue count(64), count_m1(64), n_s2, s1_sq, n_m2, n_sq, n_nm1;
  mpfr_set_uj(count.get(), n, MPFR_RNDN);
  mpfr_set_uj(count_m1.get(), n - 1, MPFR_RNDN);
  MulExact(n_s2.get(), sum2.get(), count.get());
  MulExact(s1_sq.get(), sum1.get(), sum1.get());
  SubExact(n_m2.get(), n_s2.get(), s1_sq.get());
  MulExact(n_sq.get(), count.get(), count.get());
  MulExact(n_nm1.get(), count.get(), count_m1.get());
  const long bits = std::max({sum1.precision(), sum2.precision(), n_m2.precision()});
  const mpfr_prec_t value_bits = internal::ValueBits(Options{});
  auto quotient = [&](mpfr_srcptr num, mpfr_srcptr den) {
    MpfrValue value(value_bits), odd;
    mpfr_div(value.get(), num, den, MPFR_RNDN);
    DivRoundToOdd(odd.get(), num, den);
    const double d = odd.ToDouble();
    const long double ld = odd.ToLongDouble();
    internal::AddRounded(r, std::move(value), d, ld);
  };
  quotient(sum1.get(), count.get());
  quotient(n_m2.get(), n_sq.get());
  quotient(n_m2.get(), n_nm1.get());
  internal::MarkExact(r, bits, -static_cast<double>(value_bits));
  return r;
}

Reference ReferenceNorm2Fast(std::span<const double> x) {
  if (!SquaresSplitExactly(x)) return ReferenceNorm2(x);  // NaN, inf and the range edges too
  WideExponentRange range;
  Reference r;
  r.op = "norm2";
  r.count = x.size();
  const SquareScan<false> scan(x);
  // ReferenceNorm2's steps (reference_exact.cpp): the exact sum of squares, one root.
  const MpfrValue ssq = ToExact(scan.s2, scan.top2, scan.low2, x.size());
  const long bits = ssq.precision();
  const mpfr_prec_t value_bits = internal::ValueBits(Options{});
  MpfrValue value(value_bits), odd;
  mpfr_sqrt(value.get(), ssq.get(), MPFR_RNDN);
  SqrtRoundToOdd(odd.get(), ssq.get());
  const double d = odd.ToDouble();
  const long double ld = odd.ToLongDouble();
  internal::AddRounded(r, std::move(value), d, ld);
  internal::MarkExact(r, bits, -static_cast<double>(value_bits));
  return r;
}

}  // namespace carrier::reference

#endif
