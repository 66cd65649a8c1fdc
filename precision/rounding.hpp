// precision/rounding.hpp: rounding a double (or an MPFR value) into a Format.
//
// Contract of RoundToFormat(x, f, r): the value of f that rounding mode r picks for x, returned
// as a double (exact: every Format is a subset of fp64). Rounding is done once, from x itself,
// never through an intermediate format. Modes (text names in brackets):
//   kNearestEven [rne]  nearest, ties to the even significand (IEEE default)
//   kNearestAway [rna]  nearest, ties away from zero
//   kTowardZero  [rz]   truncation
//   kUp          [ru]   toward +inf
//   kDown        [rd]   toward -inf
//   kToOdd       [ro]   x if representable, else the neighbour whose last significand bit is 1
//                       (the sticky rounding that makes a later rounding to >= 2 fewer bits
//                       correct)
//   kStochastic  [sr]   up in magnitude with probability (|x| - lo) / (hi - lo), where lo, hi
//                       are the neighbours of |x|; so E[result] = x. See "stochastic" below.
// Parity ("even", "odd") is that of the integer significand n in x = n * 2^q with q the
// quantum of the binade (2^(emin-p+1) for subnormals). In the gap (0, 2^emin) of a format
// without subnormals the neighbours are 0 and 2^emin, i.e. n = 0 (even) and n = 1 (odd), at
// quantum 2^emin: rne sends the midpoint to 0, ro sends every gap value to 2^emin.
//
// Special values:
//   NaN  -> a quiet NaN (the double keeps the input's sign and payload; a format's own NaN
//           encoding is not modelled).
//   +-0  -> +-0 (the sign is kept); a nonzero result that rounds to zero keeps x's sign.
//   +-inf-> +-inf if f.has_inf and not f.saturate; +-max finite if f.saturate; else NaN.
//   Overflow, i.e. the rounded magnitude (with unbounded exponent) exceeds MaxFinite():
//           f.saturate                               -> +-max finite;
//           rz, ro, rd for x > 0, ru for x < 0       -> +-max finite;
//           rne, rna, sr, ru for x > 0, rd for x < 0 -> +-inf, or NaN if !f.has_inf.
//   So OCP E4M3 sends 464 (the tie between 448 and the NaN pattern's 480) to 448 under rne,
//   anything above it to NaN, and under fp8e4m3sat to 448.
//
// Stochastic rounding draws 64 random bits per call from a counter-based generator: the bits
// are a pure function StochasticRandomBits(seed, counter) (SplitMix64's finaliser applied to
// the seed's hash plus the counter times the golden-ratio increment), so results never depend
// on threads or call order. RoundToFormat(x, f, kStochastic, &bits) uses bits.counter and then
// increments it: exactly one counter value per call, whatever x is (so element i of a run uses
// counter start + i). RoundStochastic(x, f, seed, index) is the same as a pure function; each
// thread uses its own StochasticBits or indices. The probability is the discarded fraction
// (|x| - lo) / (hi - lo) truncated to a multiple of 2^-64, so it is exact whenever that
// fraction has at most 64 bits (always when |x| >= 2^-11 * quantum) and otherwise low by
// less than 2^-64. Passing kStochastic without StochasticBits throws std::invalid_argument.
//
// Error rule: for the deterministic modes |result - x| < ulp, and for rne/rna
// |result - x| <= u |x| in the normal range (u = f.UnitRoundoff()); absolute error <= half the
// subnormal quantum below 2^emin. fp64 as the target format is the identity for every mode.
//
// With MPFR (CARRIER_HAVE_MPFR), the same function takes an mpfr_t of any precision and rounds
// it once, with the same rules; with Boost.Multiprecision pass `v.backend().data()`.
#pragma once

#include <cstdint>
#include <string_view>

#include "precision/format.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
#include <mpfr.h>
#endif

namespace carrier {

enum class Rounding { kNearestEven, kNearestAway, kTowardZero, kUp, kDown, kToOdd, kStochastic };

inline constexpr Rounding kAllRoundings[] = {
    Rounding::kNearestEven, Rounding::kNearestAway, Rounding::kTowardZero, Rounding::kUp,
    Rounding::kDown,        Rounding::kToOdd,       Rounding::kStochastic};
inline constexpr Rounding kDeterministicRoundings[] = {
    Rounding::kNearestEven, Rounding::kNearestAway, Rounding::kTowardZero,
    Rounding::kUp,          Rounding::kDown,        Rounding::kToOdd};

// rne rna rz ru rd ro sr
std::string_view RoundingName(Rounding r);
// Inverse of RoundingName; anything else throws std::invalid_argument (one line, naming the
// text and listing the allowed names).
Rounding ParseRounding(std::string_view text);

// Where a stochastic rounding takes its random bits from; see the contract above.
struct StochasticBits {
  std::uint64_t seed = 0;
  std::uint64_t counter = 0;
};

// 64 uniformly distributed bits, a pure function of (seed, index).
std::uint64_t StochasticRandomBits(std::uint64_t seed, std::uint64_t index);

double RoundToFormat(double x, const Format& f, Rounding r, StochasticBits* sr = nullptr);

// Stochastic rounding with the bits of StochasticRandomBits(seed, index).
double RoundStochastic(double x, const Format& f, std::uint64_t seed, std::uint64_t index);

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
// x may have any precision; the result is the value RoundToFormat would give for the exact
// real number x (one rounding, no double rounding through fp64).
double RoundToFormat(mpfr_srcptr x, const Format& f, Rounding r, StochasticBits* sr = nullptr);
#endif

}  // namespace carrier
