// precision/reference/exact_sum.hpp: ExactSum, a Carrier whose state is the exact sum of its
// inputs (a Kulisch-style superaccumulator), so every merge order gives the same result.
//
// Value      Finalize(s) is the exact real sum of the double inputs, rounded once to the
//            nearest double (ties to even), i.e. the correctly rounded sum. FinalizeLongDouble
//            rounds the same exact sum once to long double; ToMpfr gives it exactly.
// State      68 signed 64-bit limbs of radix 2^32: limb i holds the digit of weight
//            2^(32 i - 1074), so bit 0 is the smallest subnormal 2^-1074 and the 2176 bits cover
//            every double (2098 bits) plus 78 bits of headroom: sums of up to 2^64 inputs of any
//            magnitude never overflow. Each limb may hold up to `pending` unnormalised digits
//            (|limb| < pending * 2^32); when an operation would push pending above 2^30 both
//            operands are normalised first (carries propagated, every limb but the top one in
//            [0, 2^32)) and the result is normalised after, so |limb| < 2^62 always. Three flags
//            record NaN, +inf and -inf inputs. Trivially copyable, 560 bytes.
// Formulas   Identity = all zero; Lift(x): +-0 -> Identity; NaN / +inf / -inf -> Identity with
//            that flag; otherwise x = m * 2^(e - 1074) (m < 2^53, e >= 0) adds +-m * 2^(e mod 32)
//            (85 bits) to limbs e/32 .. e/32 + 2, pending 1. Combine = limb-wise integer sum
//            (exact), flags OR-ed, pending added. Push(s, x) = Combine(s, Lift(x)) bit for bit
//            (same normalisation rule, and normalisation is canonical).
// Special    NaN in -> NaN; +inf and -inf both present -> NaN; otherwise any inf -> that inf;
//            empty, all zeros or an exact zero sum -> +0 (as the Sum carrier's fold from +0);
//            a finite exact sum whose rounding exceeds the double range -> +-inf.
// Bound      exact: Lift and Combine are integer arithmetic without rounding; the one rounding
//            is Finalize's, so |Finalize - sum| <= u |sum| (half an ulp; subnormal range: half
//            the quantum 2^-1074).
// Properties Commutative and bitwise commutative (integer addition; the normalisation test
//            a.pending + b.pending is symmetric). Push == Combine(s, Lift(x)). PadInput = +0
//            lifts to Identity, whose pending is 0, so Combine(s, Identity) is s bitwise.
//            States of different merge orders may differ in their (unnormalised) bits; their
//            Finalize never does. Canonical(s) is the unique normalised form of a state.
// Cost       Lift/Push: three limb updates; Combine and Finalize: one pass over 68 limbs.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <tuple>

#include "precision/reference/fixed_point.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
#include <mpfr.h>
#endif

namespace carrier::reference {

struct ExactSum {
  using Scalar = double;
  using Input = double;
  using Result = double;

  static constexpr int kLimbs = 68;
  static constexpr int kLimbBits = 32;
  static constexpr int kLowestExponent = -1074;  // weight of bit 0
  static constexpr std::int64_t kMaxPending = std::int64_t{1} << 30;

  struct State {
    std::int64_t limb[kLimbs];
    std::int64_t pending;  // each |limb| < pending * 2^32
    bool has_nan;
    bool has_pos_inf;
    bool has_neg_inf;
    auto Tie() const { return std::tie(limb, pending, has_nan, has_pos_inf, has_neg_inf); }
  };

  static constexpr const char* kName = "exact_sum";
  static constexpr bool kCommutative = true;
  static constexpr bool kBitwiseCommutative = true;
  static constexpr bool kPushIsCombineLift = true;
  static constexpr bool kHasPadInput = true;

  static State Identity() { return State{}; }

  static State Lift(const Input& x) {
    State s = Identity();
    AddUnchecked(s, x);
    return s;
  }

  static State Combine(const State& a, const State& b) {
    if (a.pending + b.pending > kMaxPending) {
      State r = Canonical(a);
      const State nb = Canonical(b);
      AddLimbs(r, nb);
      Normalize(r);
      return r;
    }
    State r = a;
    AddLimbs(r, b);
    return r;
  }

  static State Push(const State& s, const Input& x) {
    State r = s;
    Add(r, x);
    return r;
  }

  // In-place Push for loops that keep one state.
  static void Add(State& s, double x) {
    const std::int64_t weight = IsFiniteNonZero(x) ? 1 : 0;
    if (s.pending + weight > kMaxPending) {
      Normalize(s);
      AddUnchecked(s, x);
      Normalize(s);
      return;
    }
    AddUnchecked(s, x);
  }

  static Result Finalize(const State& s);  // correctly rounded double
  static long double FinalizeLongDouble(const State& s);
  static Input PadInput() { return 0.0; }
  static std::array<double, 1> Components(const Result& r) { return {r}; }

  // The unique normalised form: limbs 0..66 in [0, 2^32), limb 67 signed, pending 1 (0 for
  // the all-zero state).
  static State Canonical(const State& s) {
    State r = s;
    Normalize(r);
    return r;
  }
  static void Normalize(State& s);

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  // Sets out to the exact sum (changing its precision to what that needs). NaN / inf per the
  // special-values rule; an exact zero is +0.
  static void ToMpfr(const State& s, mpfr_ptr out);
#endif

 private:
  static bool IsFiniteNonZero(double x) {
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(x) & ~(std::uint64_t{1} << 63);
    return bits != 0 && (bits >> 52) != 0x7ff;
  }

  static void AddLimbs(State& r, const State& b) {
    for (int i = 0; i < kLimbs; ++i) r.limb[i] += b.limb[i];
    r.pending += b.pending;
    r.has_nan = r.has_nan || b.has_nan;
    r.has_pos_inf = r.has_pos_inf || b.has_pos_inf;
    r.has_neg_inf = r.has_neg_inf || b.has_neg_inf;
  }

  // Adds x without the pending check (the caller made room).
  static void AddUnchecked(State& s, double x) {
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
    const bool negative = (bits >> 63) != 0;
    const int biased = static_cast<int>((bits >> 52) & 0x7ff);
    const std::uint64_t frac = bits & ((std::uint64_t{1} << 52) - 1);
    if (biased == 0x7ff) {
      if (frac != 0) {
        s.has_nan = true;
      } else if (negative) {
        s.has_neg_inf = true;
      } else {
        s.has_pos_inf = true;
      }
      return;
    }
    if (biased == 0 && frac == 0) return;  // +-0 adds nothing, not even pending
    const std::uint64_t mant = biased == 0 ? frac : (frac | (std::uint64_t{1} << 52));
    const int pos = biased == 0 ? 0 : biased - 1;  // x = mant * 2^(pos - 1074)
    const int k = pos / kLimbBits;
    const U128 v = U128{mant} << (pos % kLimbBits);  // below 2^85: three 32-bit digits
    const std::int64_t d0 = static_cast<std::int64_t>(Lo64(v) & 0xffffffffu);
    const std::int64_t d1 = static_cast<std::int64_t>((Lo64(v) >> 32) & 0xffffffffu);
    const std::int64_t d2 = static_cast<std::int64_t>(Hi64(v));
    if (negative) {
      s.limb[k] -= d0;
      s.limb[k + 1] -= d1;
      s.limb[k + 2] -= d2;
    } else {
      s.limb[k] += d0;
      s.limb[k + 1] += d1;
      s.limb[k + 2] += d2;
    }
    s.pending += 1;
  }
};

}  // namespace carrier::reference
