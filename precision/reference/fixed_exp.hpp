// precision/reference/fixed_exp.hpp: the fast certified tier for exp-based references. An exp
// kernel in 128-bit fixed-point integer arithmetic with a proven error bound, and the shifted
// sum of exponentials S = sum_i exp(x_i - m) that log-sum-exp and softmax need (no MPFR here).
//
// Why fixed point rather than double-double: every operation is an integer product truncated
// to a known quantum, so the error of each step is at most one unit in a fixed position and
// the whole bound is a short sum (derived below), with no case analysis of floating-point
// exponents; and it is as fast (a 128x128-bit product is four hardware multiplies).
//
// FixedExpNeg(s, e): exp(y) for y = s + e <= 0 (e the low part of a double-double, |e| <=
// 2^-52 |s|, 0 if none), -2^14 < s. Result (mant, shift): exp(y) ~ mant * 2^(-127 - shift), mant
// in Q1.127 with value in [0.5, 1 + 2^-110] (mant >= T[u] >= 1/2 below); q = 0 gives exactly 1.
// Relative error at most kFixedExpRelError = 2^-111. Derivation:
//   q = -y truncated to units 2^-114 (both parts):                   |dq| < 2^-113
//   t = floor(q * log2(e)), log2(e) rounded to Q1.127 (error <= 2^-128, times q < 2^14) and
//       the product truncated to units 2^-113:  |dt| < (1.4427 + 0.5 + 1) 2^-113
//                                                     = 2.943 * 2^-113,
//       so 2^-t differs from exp(y) by a factor within exp(+-ln2 * 2.943 * 2^-113)
//       (relative < 2.04 * 2^-113 = 2^-111.97);
//   t = w + f, f in [0, 1): 2^-f = T[u] * 2^h exactly, with T[u] = 2^(-(u+1)/4096) (u = top 12
//       bits of f) and h = (u+1)/4096 - f in (0, 2^-12] (a multiple of 2^-113, so exact in
//       Q1.127); T[u] rounded to Q1.127, relative error <= 2^-127 (T >= 1/2);
//   2^h = sum_k c_k h^k, c_k = (ln 2)^k / k!, by Horner to degree 7: the series' tail is at most
//       c_8 h^8 / (1 - h ln2 / 9) < 2^-115.53 (h <= 2^-12). Horner with a perturbation eta_k
//       at step k (p_k = c_k + h p_(k+1) + eta_k, p_7 = c_7 + eta_7) returns exactly
//       sum_k (c_k + eta_k) h^k, so the arithmetic adds at most sum_k |eta_k| h^k. Each step
//       keeps only the bits its h^k weight needs:
//       degree 7: c_7 rounded to 2^-64:                           |eta_7| <= 2^-65;
//       degrees 6, 5 in units 2^-64, one 64x64 product each, h truncated to 2^-64: c_k
//         rounded (<= 2^-65), h's truncation times p_(k+1) < 2^-9 (< 2^-73), the product's
//         (< 2^-64):                                              |eta_k| < 1.51 * 2^-64;
//       degree 4 in units 2^-70 (c_4 2^70 < 2^64), h truncated to 2^-75: c_4 rounded
//         (<= 2^-71), the product's truncation (< 2^-70), h's times p_5 < 2^-9.5:
//                                                                 |eta_4| < 1.51 * 2^-70;
//       degree 3 in Q1.127 from the exact 128-bit product of h (to 2^-75) and p_4 < 2^-6.69:
//         c_3 rounded (<= 2^-128), shifted product (< 2^-127), h's truncation times p_4:
//                                                                 |eta_3| < 2^-81.69;
//       degrees 2, 1 in Q1.127 with MulQ127Short (the exact product less a0 b0 < 2^128, so
//         within 3 units of 2^-127 below it) and c_k rounded:    |eta_k| < 3.5 * 2^-127;
//       degree 0: g = h p_1 by MulQ127Short and p_0 = 1 + g:      |eta_0| < 3 * 2^-127.
//       With h <= 2^-12: sum_k |eta_k| h^k < 3 * 2^-127 + 3.5 * 2^-139 * 1.001 + 2^-117.69 +
//       1.51 * 2^-118 + 1.51 * 2^-124 * 1.001 + 2^-149 < 2^-116.53. Total for 2^h >= 1:
//       relative < 2^-115.53 + 2^-116.53 < 2^-114.94;
//   mant = T[u] + MulQ127Short(g, T[u]) = T[u] * p_0 less under 3 units of 2^-127: relative
//       < 6 * 2^-127 * (1 + 2^-110) < 2^-124.41 (T[u] * p_0 >= 1/2 (1 - 2^-111)).
// Total: (1 + 2^-111.97)(1 + 2^-127)(1 + 2^-114.94)(1 + 2^-124.41) - 1 < 2^-111.79 <= 2^-111.
// Cost: 4 (t) + 2 (degrees 6, 5) + 2 (degrees 4, 3) + 3 * 3 (degrees 2..0) + 3 (T[u] p_0) = 20
// 64x64-bit products (48 before, with a 256-entry table, degree 10 and full 128-bit
// products). The test in tests/precision/test_reference_fast.cpp checks the constants and the
// table against MPFR and prints the worst error it meets on random arguments.
//
// SumExpShifted(x, m): S = sum_i exp(x_i - m) for x_i <= m (m = max x, finite, no NaN; -inf
// elements contribute exactly 0), in a Q64.192 accumulator (four 64-bit words). x_i - m is
// formed exactly (TwoSum); x_i == m adds exactly 1; other terms go through FixedExpNeg and are
// truncated to 2^-192 (terms below exp(-134) < 2^-193 are skipped, a smaller loss). With k
// such terms and S >= 1 (the maximum's own term):
//   |S_hat - S| <= (kFixedExpRelError + k 2^-192) S = RelErrorBound() * S.
// The kernel terms are summed exactly per shift (a 192-bit sum of mantissas for each shift
// 0..255) and each nonempty sum is truncated to 2^-192 once at the end: at most one truncation
// per kernel term, so the k 2^-192 term holds. The scan splits across PassThreads()
// (precision/parallel_pass.hpp): the parts' per-shift sums add exactly before that truncation,
// so S_hat is the one-pass value bit for bit.
// Once the memo is off (see fixed_exp.cpp), the kernel's arguments are evaluated in batches
// (FixedExpNegBatch's kernel), which give FixedExpNeg's (mant, shift) bit for bit, so S_hat does
// not depend on the path. Valid for up to 2^62 elements. Cost: about 20 64x64-bit products per
// term on the scalar path (~19 ns per term on the AMD EPYC development machine); on a CPU with
// AVX-512 IFMA the batch kernel forms the same integers eight lanes per instruction, with 8
// 52x52-bit IFMA products (lo and hi halves) per term (~4.4 ns per term there).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "precision/reference/fixed_point.hpp"
#include "precision/stored_column.hpp"

namespace carrier::reference {

inline constexpr double kFixedExpRelError = 0x1p-111;
// FixedExpNeg accepts s > -kFixedExpArgumentLimit (q must fit in 14 integer bits).
inline constexpr double kFixedExpArgumentLimit = 16383.0;

struct FixedExp {
  U128 mant = 0;  // Q1.127
  int shift = 0;  // exp(y) ~ mant * 2^(-127 - shift)
};

// v - m as FixedExpNeg's argument: s = fl(v - m) and its error e, s + e == v - m exactly
// (Knuth's TwoSum; for finite v, m with v - m finite).
struct ExactDifference {
  double s, e;
};
inline ExactDifference Difference(double v, double m) {
  const double s = v - m;
  const double bb = s - v;
  return {s, (v - (s - bb)) + (-m - bb)};
}

// exp(s + e) for s + e <= 0, s > -kFixedExpArgumentLimit; see the contract above.
FixedExp FixedExpNeg(double s, double e);

// out[i] = FixedExpNeg(s[i], e[i]) for i < n, bit for bit (arguments within FixedExpNeg's
// contract; a lane outside it, or at the kernel's one edge case t mod 2^101 = 0, is computed
// by FixedExpNeg itself). 32 at a time with AVX-512 IFMA when the CPU has it
// (FixedExpVectorized(): a runtime check), else one at a time.
void FixedExpNegBatch(const double* s, const double* e, std::size_t n, FixedExp* out);
bool FixedExpVectorized();
// For tests and benchmarks: allow or forbid the vector path (process-wide); returns the
// previous setting. Results are the same either way.
bool SetFixedExpVectorAllowed(bool allowed);

// exp(v - m) rounded once to long double, for v <= m (m finite): v - m formed exactly (TwoSum),
// its exp by FixedExpNeg (relative error 2^-111), and that value rounded to nearest (ties to
// even, gradual underflow) -- the correctly rounded long double except where exp(v - m) lies
// within 2^-111 of a midpoint between two of them. v == m gives 1, v = -inf (and any v with
// v - m <= -kFixedExpArgumentLimit, whose exp is below half the least subnormal) gives +0, a NaN
// v gives NaN; v > m, outside the contract, gives libm's expl (the bounds' code tables hold codes
// above the maximum, whose exps are never read). The lse and softmax bounds' exps
// (precision/op_bounds.cpp) use it: glibc's expl on x86-64 is x87 f2xm1 microcode, not correctly
// rounded for about 9% of arguments (bits that may differ between CPUs), and `carrier
// reference-bench --n 4000000` timed it at 53 ns per value against 10.8 ns here (AVX-512 IFMA
// kernel, AMD EPYC, one thread).
long double ExpShiftedLongDouble(double v, double m);
// out[i] = ExpShiftedLongDouble(x[i], m) for every i, bit for bit, through FixedExpNegBatch.
void ExpShiftedLongDouble(std::span<const double> x, double m, long double* out);

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
// The same sum over a StoredColumn, read a chunk at a time (bit for bit the span's result).
ShiftedExpSum SumExpShifted(const StoredColumn& x, double m);

// The fixed-point constants, exposed so that a test can check them against MPFR: log2(e), the
// Horner coefficients (ln 2)^k / k! (k = 0..kWideDegree in Q1.127, Coefficient; k =
// kWideDegree + 1..kDegree in units 2^-NarrowScale(k), NarrowCoefficient) and the table
// 2^(-(i+1)/4096), all rounded to nearest (Q1.127 unless said).
namespace fixed_exp_constants {
inline constexpr int kDegree = 7;
inline constexpr int kWideDegree = 3;
inline constexpr int kTableBits = 12;
U128 Log2E();
U128 Coefficient(int k);
std::uint64_t NarrowCoefficient(int k);  // round(c_k 2^NarrowScale(k))
int NarrowScale(int k);                  // 70 for k = kWideDegree + 1, else 64
U128 Table(int i);
}  // namespace fixed_exp_constants

}  // namespace carrier::reference
