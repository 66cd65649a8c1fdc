// precision/reference/fixed_exp.hpp: the fast certified tier for exp-based references. An exp
// kernel in 128-bit fixed-point integer arithmetic with a proven error bound, and the shifted
// sum of exponentials S = sum_i exp(x_i - m) that log-sum-exp and softmax need (no MPFR here).
//
// Why fixed point rather than double-double: every operation is an integer product truncated
// to a known quantum, so the error of each step is at most one unit in a fixed position and
// the whole bound is a short sum (derived below), with no case analysis of floating-point
// exponents; and it is as fast (a 128x128-bit product is four hardware multiplies).
//
// FixedExpNeg(s, e): exp(y) for y = s + e <= 0 (e the low part of a double-double, 0 if none),
// -2^14 < s. Result (mant, shift): exp(y) ~ mant * 2^(-127 - shift), mant in Q1.127 with value
// in [0.5, 1 + 2^-110]. Relative error at most kFixedExpRelError = 2^-111. Derivation (u_k =
// one unit of 2^-k):
//   q = -y truncated to units 2^-114 (both parts):                   |dq| < 2^-113
//   t = floor(q * log2(e)), log2(e) rounded to Q1.127 (error <= 2^-128, times q < 2^14) and
//       the product truncated to units 2^-113:  |dt| < (1.4427 + 0.5 + 1) 2^-113
//                                                     = 2.943 * 2^-113,
//       so 2^-t differs from exp(y) by a factor within exp(+-ln2 * 2.943 * 2^-113)
//       (relative < 2.04 * 2^-113 = 2^-111.97);
//   t = e + f, f in [0, 1): 2^-f = T[i] * 2^h exactly, with T[i] = 2^(-(i+1)/256) (i = top 8
//       bits of f) and h = (i+1)/256 - f in (0, 2^-8]; T[i] rounded to Q1.127, relative
//       error <= 2^-127 (T >= 1/2);
//   2^h = sum_k (h ln2)^k / k! by Horner to degree 10 in Q1.127: truncation of the series
//       <= (2^-8 ln2)^11 / 11! * 1.003 < 2^-119, coefficient roundings (<= 2^-128) and
//       product truncations (< 2^-127) damped by h <= 2^-8: < 1.51 * 2^-127 = 2^-126.4;
//   mant = floor(T[i] * 2^h) in Q1.127: < 2^-127 absolute, relative < 2^-126.
// Total: (1 + 2^-111.97)(1 + 2^-127)(1 + 2^-118.9)(1 + 2^-126) - 1 < 2^-111.9 <= 2^-111.
// The test in tests/precision/test_reference_fast.cpp checks the constants against MPFR and
// prints the worst error it meets on random arguments.
//
// SumExpShifted(x, m): S = sum_i exp(x_i - m) for x_i <= m (m = max x, finite, no NaN; -inf
// elements contribute exactly 0), in a Q64.192 accumulator (four 64-bit words). x_i - m is
// formed exactly (TwoSum); x_i == m adds exactly 1; other terms go through FixedExpNeg and are
// truncated to 2^-192 (terms below exp(-134) < 2^-193 are skipped, a smaller loss). With k
// such terms and S >= 1 (the maximum's own term):
//   |S_hat - S| <= (kFixedExpRelError + k 2^-192) S = RelErrorBound() * S.
// Valid for up to 2^62 elements. Cost: about 11 128-bit fixed-point products per term.
#pragma once

#include <cstdint>
#include <span>

#include "precision/reference/fixed_point.hpp"

namespace carrier::reference {

inline constexpr double kFixedExpRelError = 0x1p-111;
// FixedExpNeg accepts s > -kFixedExpArgumentLimit (q must fit in 14 integer bits).
inline constexpr double kFixedExpArgumentLimit = 16383.0;

struct FixedExp {
  U128 mant = 0;  // Q1.127
  int shift = 0;  // exp(y) ~ mant * 2^(-127 - shift)
};

// exp(s + e) for s + e <= 0, s > -kFixedExpArgumentLimit; see the contract above.
FixedExp FixedExpNeg(double s, double e);

struct ShiftedExpSum {
  std::uint64_t word[4] = {0, 0, 0, 0};  // S_hat * 2^192, little-endian words
  std::uint64_t exact_terms = 0;         // elements equal to m (each added as exactly 1)
  std::uint64_t approx_terms = 0;        // elements below m (kernel, truncated or skipped)
  // Relative error bound rho of S_hat (0 when every term was exact).
  double RelErrorBound() const;
  // S_hat as a double (rounded toward zero; for diagnostics only).
  double Approximate() const;
};

ShiftedExpSum SumExpShifted(std::span<const double> x, double m);

// The fixed-point constants, exposed so that a test can check them against MPFR: log2(e),
// the Horner coefficients (ln 2)^k / k! (k = 0..10) and the table 2^(-(i+1)/256), all rounded
// to nearest in Q1.127.
namespace fixed_exp_constants {
U128 Log2E();
U128 Coefficient(int k);
U128 Table(int i);
inline constexpr int kDegree = 10;
inline constexpr int kTableBits = 8;
}  // namespace fixed_exp_constants

}  // namespace carrier::reference
