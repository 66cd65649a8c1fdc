// experiments/studies/lse_mnist.hpp: Blanchard, Higham and Higham (IMA J. Numer. Anal. 41(4),
// 2021), their experiment on the MNIST logit vectors: basic against shifted log-sum-exp and
// softmax in a low precision.
//
// Contract. For every vector x (stored values: x rounded to the format, nearest even) and
// every algorithm below, the algorithm runs in the format with round-to-nearest-even
// (precision/emulated_oracle.hpp: each +, -, /, exp, log rounded once into the format; log1p is
// libm's double log1p rounded once into the format, since EmulatedOracle has no log1p; sums are
// sequential, left to right) and again in fp32 on the same stored vector (the paper's
// comparison), and its error is measured against both that fp32 result and the certified
// reference of the stored vector (precision/reference, when built with MPFR), relative
// (softmax: componentwise max relative over the components whose exact value is at least the
// format's smallest normal, since the bounds assume no underflow; also normwise, max abs
// difference over max component) and in units of the format's u = 2^-p:
//   lse-basic               y = log(sum_i e^{x_i})
//   lse-shifted             a = max_i x_i (first index k), y = a + log1p(sum_{i!=k} e^{x_i-a})
//   softmax-basic           g_i = e^{x_i} / sum_j e^{x_j}
//   softmax-shifted         g_i = e^{x_i-a} / sum_j e^{x_j-a}
//   softmax-shifted-nodiv   g_i = e^{x_i-y}, y from lse-shifted (the division-free variant)
//   softmax-basic-nodiv     g_i = e^{x_i-y}, y from lse-basic (the unshifted division-free
//                           variant of BHH2021 Thm 3.4; overflows where lse-basic does)
// `overflow` is set when an exponential or the sum of exponentials is infinite in the format.
// bound_u is the leading (first-order) term of the relative error bound in units of u, derived
// per vector the way BHH2021 derive theirs (one rounding per operation, |delta| <= u):
//   lse-basic               1 + n/|y|                     (u|y| from the log, n u from exp + sum)
//   lse-shifted             (|y| + L + s/(1+s) (n-1+D)) / |y|, s = sum_{i!=k} e^{x_i-a},
//                           L = log1p(s), D = max_i |x_i - a| (the subtraction x_i - a
//                           perturbs the exponent by |x_i - a| u)
//   softmax-basic           n + 2
//   softmax-shifted         n + 2 + 2D
//   softmax-shifted-nodiv   1 + max_i |x_i - y| + B, B = the lse-shifted absolute bound / u
//   softmax-basic-nodiv     1 + max_i |x_i - y| + |y| + n (|y| + n: lse-basic's absolute bound)
// sum_g is the sum, in double, of the computed g_i (softmax; nan for lse): the paper's
// "sum(g)" figures, how far a variant's outputs are from summing to 1.
// with y, s, D evaluated exactly on the stored vector (double is ample for a bound).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "precision/format.hpp"

namespace carrier::studies {

// The vectors of a CSV: '#' lines skipped, one header line of names, then rows of the same
// number (>= 1) of finite decimal numbers separated by commas. Throws cli::UsageError with
// "FILE:LINE: what" for anything else (and for a file without rows).
std::vector<std::vector<double>> ReadVectorsCsv(const std::string& path);

struct LseMnistRow {
  std::string dtype;
  std::uint64_t vector = 0;  // 0-based row of the data
  std::string algorithm;
  bool overflow = false;
  double value = 0;           // lse: the computed y; softmax: the computed g at argmax x
  double err_fp32_u = 0;      // relative error against the same algorithm in fp32, / u
  double err_ref_u = 0;       // against the certified reference (nan without MPFR), / u
  double err_ref_norm_u = 0;  // softmax: max_i |g^_i - g_i| / max_i g_i (lse: = err_ref_u), / u
  double bound_u = 0;         // leading term of the bound, in units of u
  double max_x = 0;           // max_i of the stored vector
  double sum_g = 0;           // softmax: sum_i of the computed g_i (nan for lse)
};

// Rows in the order dtype, vector, algorithm (as listed above).
std::vector<LseMnistRow> RunLseMnist(const std::vector<std::vector<double>>& vectors,
                                     const std::vector<Format>& formats);

const std::vector<std::string>& LseMnistAlgorithms();

}  // namespace carrier::studies
