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
#include <memory>

#include "precision/reference/chunk_sum.hpp"
#include "precision/reference/exact_sum.hpp"
#include "precision/reference/fixed_point.hpp"
#include "precision/reference/reference_internal.hpp"

namespace carrier::reference {

namespace {

using internal::ToExact;

// The exact sums of x (when kWithSum) and of x^2 in one ChunkSum pass (chunk_sum.hpp), with the
// exponent bookkeeping of the MPFR terms x (53 bits) and x^2 (106 bits, exact) that SumExact's
// precision rule needs. `usable` is false when some x is not +-0 and |x| is outside [2^-484,
// 2^511) (NaN and inf included): ReferenceWelford's terms split x^2 as x*x + fma(x, x, -x*x),
// exact only there, so such inputs go to the definition itself.
template <bool kWithSum>
struct SquareScan {
  ChunkSum chunks;
  bool usable = false;
  long top1 = LONG_MIN, low1 = LONG_MAX, top2 = LONG_MIN, low2 = LONG_MAX;

  explicit SquareScan(std::span<const double> x) {
    ScanParallel<kWithSum, true>(chunks, x.data(), x.size());  // split: PassThreads()
    Finish();
  }
  explicit SquareScan(const StoredColumn& x) {
    ScanParallel<kWithSum, true>(chunks, x);  // split: PassThreads()
    Finish();
  }

 private:
  void Finish() {
    usable = !chunks.OutOfSquareRange();
    if (!usable) return;
    chunks.Finish();
    if (chunks.MaxMagnitude() == 0) return;  // every term +-0: no bookkeeping, as SumExact
    top1 = chunks.Top();
    low1 = chunks.Low();
    // x = sig 2^k, x^2 = sig^2 2^(2k): the largest square is the square of the largest |x|
    const std::uint64_t mag = chunks.MaxMagnitude();
    const std::uint64_t sig = ChunkSum::Significand(mag);
    const long k = static_cast<long>(ChunkSum::Position(mag)) - 1074;
    top2 = 2 * k + BitLength(U128{sig} * sig);
    low2 = 2 * low1;
  }
};

// The definitions, for the inputs the scan cannot serve (a column decoded for them alone).
Reference Welford(std::span<const double> x) { return ReferenceWelford(x); }
Reference Welford(const StoredColumn& x) { return ReferenceWelford(x.ToDoubles()); }
Reference Norm2(std::span<const double> x) { return ReferenceNorm2(x); }
Reference Norm2(const StoredColumn& x) { return ReferenceNorm2(x.ToDoubles()); }

// X: a span of doubles or a StoredColumn (the same values, the same Reference).
template <class X>
Reference WelfordFast(const X& x) {
  const std::size_t n = ColumnCount(x);
  // Special values, n < 2 and inputs whose squares might not split exactly: the definition.
  if (n < 2) return Welford(x);
  const auto scan = std::make_unique<SquareScan<true>>(x);  // about 152 KB: not on the stack
  if (!scan->usable) return Welford(x);
  WideExponentRange range;
  Reference r;
  r.op = "welford";
  r.count = n;
  const MpfrValue sum1 = ToExact(scan->chunks.Values(), scan->top1, scan->low1, n);
  const MpfrValue sum2 = ToExact(scan->chunks.Squares(), scan->top2, scan->low2, n);
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

template <class X>
Reference Norm2Fast(const X& x) {
  const auto scan = std::make_unique<SquareScan<false>>(x);  // about 152 KB: not on the stack
  if (!scan->usable) return Norm2(x);                        // NaN, inf and the range edges too
  WideExponentRange range;
  Reference r;
  r.op = "norm2";
  r.count = ColumnCount(x);
  // ReferenceNorm2's steps (reference_exact.cpp): the exact sum of squares, one root.
  const MpfrValue ssq = ToExact(scan->chunks.Squares(), scan->top2, scan->low2, ColumnCount(x));
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

}  // namespace

Reference ReferenceWelfordFast(std::span<const double> x) { return WelfordFast(x); }
Reference ReferenceWelfordFast(const StoredColumn& x) { return WelfordFast(x); }
Reference ReferenceNorm2Fast(std::span<const double> x) { return Norm2Fast(x); }
Reference ReferenceNorm2Fast(const StoredColumn& x) { return Norm2Fast(x); }

}  // namespace carrier::reference

#endif
