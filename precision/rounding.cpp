#include "precision/rounding.hpp"

#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/hash.hpp"

namespace carrier {
namespace {

constexpr std::uint64_t kSignMask = std::uint64_t{1} << 63;
constexpr std::uint64_t kInfBits = 0x7ff0000000000000ULL;
constexpr std::uint64_t kFractionMask = (std::uint64_t{1} << 52) - 1;
constexpr std::uint64_t kImplicitBit = std::uint64_t{1} << 52;
constexpr std::uint64_t kQuietBit = std::uint64_t{1} << 51;
constexpr std::uint64_t kHalf64 = std::uint64_t{1} << 63;  // 1/2 in 0.64 fixed point

constexpr std::string_view kRoundingNames[] = {"rne", "rna", "rz", "ru", "rd", "ro", "sr"};

// Bits of 2^e as a double, -1074 <= e <= 1023.
constexpr std::uint64_t Pow2Bits(int e) {
  return e >= -1022 ? static_cast<std::uint64_t>(e + 1023) << 52 : std::uint64_t{1} << (e + 1074);
}

// Overflow: the rounded magnitude exceeds the largest finite value. Modes that round toward
// zero for this sign (and saturation) stop at max finite; the others leave the format.
std::uint64_t OverflowBits(const Format& f, Rounding r, bool negative) {
  const bool toward_zero = r == Rounding::kTowardZero || r == Rounding::kToOdd ||
                           (r == Rounding::kDown && !negative) || (r == Rounding::kUp && negative);
  if (f.saturate || toward_zero) return f.MaxFiniteBits();
  return f.has_inf ? kInfBits : (kInfBits | kQuietBit);
}

// The whole rounding on the bit pattern of x, one instantiation per mode (the mode is
// constant across a loop, so this keeps the hot path short). `random` is for kStochastic only.
//
// x = sig * 2^k with sig the 53-bit integer significand (implicit bit included) and k the
// exponent of its last bit. The target quantum 2^qe depends only on the binade of x (and on
// emin), so rounding is "drop the low `drop` = qe - k bits of the pattern": truncation is a
// mask, and rounding up adds 1 << drop, whose carry walks into the exponent field exactly as
// the value moves into the next binade. When 2^qe exceeds x itself (drop > 52), the pattern
// trick would eat exponent bits, so that case takes lo = 0, hi = 2^qe explicitly.
// noinline: one compact leaf per mode that RoundToFormat tail-calls; inlining all seven into
// it made one large frame that every call paid for (about 20% slower).
template <Rounding kMode>
[[gnu::noinline]] double RoundBits(double x, const Format& f, std::uint64_t random) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  const std::uint64_t sign = bits & kSignMask;
  const std::uint64_t mag = bits ^ sign;
  const bool negative = sign != 0;

  if (mag >= kInfBits) [[unlikely]] {
    if (mag > kInfBits) return std::bit_cast<double>(bits | kQuietBit);
    if (f.saturate) return std::bit_cast<double>(sign | f.MaxFiniteBits());
    return std::bit_cast<double>(f.has_inf ? bits : (bits | kQuietBit));
  }
  if (mag == 0) [[unlikely]]
    return x;

  const int p = f.precision;
  const int biased = static_cast<int>(mag >> 52);
  const std::uint64_t sig = (mag & kFractionMask) | (biased != 0 ? kImplicitBit : 0);
  const int k = (biased != 0 ? biased : 1) - 1075;
  // Exponent of the leading bit of x.
  const int e = biased != 0 ? biased - 1023 : (63 - std::countl_zero(sig)) - 1074;
  int qe;
  if (e >= f.emin) {
    qe = e - p + 1;
  } else if (f.subnormals) {
    qe = f.emin - p + 1;
  } else {
    qe = f.emin;  // gap (0, 2^emin): neighbours 0 and 2^emin
  }
  const int drop = qe - k;

  std::uint64_t lo;      // pattern of the neighbour toward zero
  std::uint64_t step;    // pattern increment to the neighbour away from zero
  std::uint64_t frac64;  // (|x| - lo) / (hi - lo) in 0.64 fixed point, truncated
  bool inexact;
  bool lo_odd;
  if (drop <= 0) [[unlikely]] {
    // Only fp64-like precision gets here: x is already on the format's grid.
    lo = mag;
    step = 0;
    frac64 = 0;
    inexact = false;
    lo_odd = false;
  } else if (drop <= 52) [[likely]] {
    const std::uint64_t mask = (std::uint64_t{1} << drop) - 1;
    const std::uint64_t rem = mag & mask;
    lo = mag - rem;
    step = std::uint64_t{1} << drop;
    frac64 = rem << (64 - drop);
    inexact = rem != 0;
    lo_odd = ((sig >> drop) & 1) != 0;
  } else {
    lo = 0;
    step = Pow2Bits(qe);
    frac64 = drop <= 64 ? sig << (64 - drop) : (drop < 64 + 53 ? sig >> (drop - 64) : 0);
    inexact = true;
    lo_odd = false;
  }

  // Bitwise rather than short-circuit logic: the decision depends on the low bits of x, which
  // a branch predictor cannot guess.
  bool up;
  if constexpr (kMode == Rounding::kNearestEven) {
    up = (frac64 > kHalf64) | ((frac64 == kHalf64) & lo_odd);
  } else if constexpr (kMode == Rounding::kNearestAway) {
    up = frac64 >= kHalf64;
  } else if constexpr (kMode == Rounding::kTowardZero) {
    up = false;
  } else if constexpr (kMode == Rounding::kUp) {
    up = inexact & !negative;
  } else if constexpr (kMode == Rounding::kDown) {
    up = inexact & negative;
  } else if constexpr (kMode == Rounding::kToOdd) {
    up = inexact & !lo_odd;
  } else {
    up = random < frac64;
  }
  std::uint64_t result = lo + (step & (std::uint64_t{0} - static_cast<std::uint64_t>(up)));
  // Below the top binade no rounding can pass max finite (>= 2^emax): skip the check there.
  if (e >= f.emax && result > f.MaxFiniteBits()) result = OverflowBits(f, kMode, negative);
  return std::bit_cast<double>(sign | result);
}

double RoundDeterministic(double x, const Format& f, Rounding r) {
  switch (r) {
    case Rounding::kNearestEven:
      return RoundBits<Rounding::kNearestEven>(x, f, 0);
    case Rounding::kNearestAway:
      return RoundBits<Rounding::kNearestAway>(x, f, 0);
    case Rounding::kTowardZero:
      return RoundBits<Rounding::kTowardZero>(x, f, 0);
    case Rounding::kUp:
      return RoundBits<Rounding::kUp>(x, f, 0);
    case Rounding::kDown:
      return RoundBits<Rounding::kDown>(x, f, 0);
    case Rounding::kToOdd:
      return RoundBits<Rounding::kToOdd>(x, f, 0);
    case Rounding::kStochastic:
      break;
  }
  throw std::invalid_argument("RoundToFormat: unknown rounding mode " +
                              std::to_string(static_cast<int>(r)));
}

}  // namespace

std::string_view RoundingName(Rounding r) {
  const auto i = static_cast<std::size_t>(r);
  return i < std::size(kRoundingNames) ? kRoundingNames[i] : std::string_view("?");
}

Rounding ParseRounding(std::string_view text) {
  for (Rounding r : kAllRoundings)
    if (text == RoundingName(r)) return r;
  throw std::invalid_argument("rounding '" + std::string(text) +
                              "': unknown mode: expected one of rne, rna, rz, ru, rd, ro, sr");
}

std::uint64_t StochasticRandomBits(std::uint64_t seed, std::uint64_t index) {
  // Hashing the seed first keeps nearby seeds (0, 1, 2, ...) from giving shifted copies of
  // one SplitMix64 stream.
  return SplitMix64Mix(SplitMix64Mix(seed ^ 0x6a09e667f3bcc909ULL) +
                       (index + 1) * kSplitMix64Gamma);
}

double RoundToFormat(double x, const Format& f, Rounding r, StochasticBits* sr) {
  if (r != Rounding::kStochastic) return RoundDeterministic(x, f, r);
  if (sr == nullptr)
    throw std::invalid_argument("RoundToFormat: rounding 'sr' needs StochasticBits");
  return RoundBits<Rounding::kStochastic>(x, f, StochasticRandomBits(sr->seed, sr->counter++));
}

double RoundStochastic(double x, const Format& f, std::uint64_t seed, std::uint64_t index) {
  return RoundBits<Rounding::kStochastic>(x, f, StochasticRandomBits(seed, index));
}

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

namespace {

// RAII for one mpfr_t.
class MpfrTemp {
 public:
  explicit MpfrTemp(mpfr_prec_t prec) { mpfr_init2(v_, prec); }
  ~MpfrTemp() { mpfr_clear(v_); }
  MpfrTemp(const MpfrTemp&) = delete;
  MpfrTemp& operator=(const MpfrTemp&) = delete;
  mpfr_ptr get() { return v_; }

 private:
  mpfr_t v_;
};

}  // namespace

// Same rules as the double version, on an exact real: |x| = t * 2^qe with the same quantum
// choice, then t is rounded to an integer n <= 2^p (which a double holds exactly) and
// n * 2^qe goes through the double version's overflow rule. No global MPFR state (precision,
// exponent range) is touched, so this is safe from several threads.
double RoundToFormat(mpfr_srcptr x, const Format& f, Rounding r, StochasticBits* sr) {
  std::uint64_t random = 0;
  if (r == Rounding::kStochastic) {
    if (sr == nullptr)
      throw std::invalid_argument("RoundToFormat: rounding 'sr' needs StochasticBits");
    random = StochasticRandomBits(sr->seed, sr->counter++);
  }
  if (mpfr_nan_p(x)) return std::bit_cast<double>(kInfBits | kQuietBit);
  const bool negative = mpfr_signbit(x) != 0;
  const std::uint64_t sign = negative ? kSignMask : 0;
  if (mpfr_inf_p(x))
    return RoundBits<Rounding::kNearestEven>(std::bit_cast<double>(sign | kInfBits), f, 0);
  if (mpfr_zero_p(x)) return std::bit_cast<double>(sign);

  const int p = f.precision;
  // MPFR's exponent E puts |x| in [2^(E-1), 2^E).
  const mpfr_exp_t e = mpfr_get_exp(x) - 1;
  if (e > f.emax + 1) {
    // Beyond 2^(emax+2) every mode, stochastic included, overflows (lo already exceeds max).
    return std::bit_cast<double>(sign | OverflowBits(f, r, negative));
  }
  int qe;
  if (e >= f.emin) {
    qe = static_cast<int>(e) - p + 1;
  } else if (f.subnormals) {
    qe = f.emin - p + 1;
  } else {
    qe = f.emin;
  }

  const mpfr_prec_t prec = mpfr_get_prec(x);
  MpfrTemp t(prec), n(prec < 64 ? 64 : prec), rest(prec < 64 ? 64 : prec);
  mpfr_abs(t.get(), x, MPFR_RNDN);                    // exact
  mpfr_mul_2si(t.get(), t.get(), -qe, MPFR_RNDN);     // exact: |x| / 2^qe
  mpfr_trunc(n.get(), t.get());                       // exact: n has >= 64 bits and n < 2^(p+1)
  mpfr_sub(rest.get(), t.get(), n.get(), MPFR_RNDN);  // exact: fraction in [0, 1)
  const bool inexact = !mpfr_zero_p(rest.get());
  // Ties are decided on the exact fraction: its 64-bit truncation cannot tell 1/2 from
  // 1/2 + 2^-70.
  const int half_cmp = mpfr_cmp_ui_2exp(rest.get(), 1, -1);
  const std::uint64_t lo_n = static_cast<std::uint64_t>(mpfr_get_uj(n.get(), MPFR_RNDZ));
  const bool lo_odd = (lo_n & 1) != 0;

  bool up;
  switch (r) {
    case Rounding::kNearestEven:
      up = half_cmp > 0 || (half_cmp == 0 && lo_odd);
      break;
    case Rounding::kNearestAway:
      up = half_cmp >= 0;
      break;
    case Rounding::kTowardZero:
      up = false;
      break;
    case Rounding::kUp:
      up = inexact && !negative;
      break;
    case Rounding::kDown:
      up = inexact && negative;
      break;
    case Rounding::kToOdd:
      up = inexact && !lo_odd;
      break;
    case Rounding::kStochastic: {
      // 0.64 fixed point, truncated, as in the double version.
      mpfr_mul_2si(rest.get(), rest.get(), 64, MPFR_RNDN);
      const std::uint64_t frac64 = static_cast<std::uint64_t>(mpfr_get_uj(rest.get(), MPFR_RNDZ));
      up = random < frac64;
      break;
    }
    default:
      up = false;
      break;
  }
  const std::uint64_t result_n = lo_n + (up ? 1 : 0);
  // n * 2^qe as a double: n <= 2^p (|x| < 2^(e+1) = 2^p * 2^qe) and qe >= -1074.
  std::uint64_t result = 0;
  if (result_n != 0) {
    const int width = 64 - std::countl_zero(result_n);  // bit length of n
    const int lead = qe + width - 1;                    // exponent of the leading bit
    if (lead > 1023) {
      result = kInfBits;  // beyond every format; the overflow rule below decides
    } else if (lead >= -1022) {
      // Normal double. width is 54 only for n = 2^53, whose low bit is zero.
      const std::uint64_t aligned =
          width <= 53 ? result_n << (53 - width) : result_n >> (width - 53);
      result = (static_cast<std::uint64_t>(lead + 1023) << 52) | (aligned & kFractionMask);
    } else {
      result = result_n << (qe + 1074);  // subnormal double: qe >= -1074
    }
  }
  if (result > f.MaxFiniteBits()) result = OverflowBits(f, r, negative);
  return std::bit_cast<double>(sign | result);
}

#endif  // CARRIER_HAVE_MPFR

}  // namespace carrier
