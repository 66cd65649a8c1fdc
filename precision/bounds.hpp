// precision/bounds.hpp: a-priori error bounds as functions of the merge tree.
//
// Every bound takes D, the tree's max leaf depth (core/merge_tree.hpp ComputeStats: the number
// of rounded operations an input passes through on its way to the root), and u, the unit
// roundoff of the compute format under its rounding mode (UnitRoundoff below: 2^-p for the
// round-to-nearest modes, 2^(1-p) for directed and stochastic rounding, whose worst case is a
// whole ulp). Data-dependent quantities (sum |x_i|, the softmax weights, kappa) come from the
// certified reference, never from the computed result.
//
// `rigorous` is true for bounds proved in the standard model (a measured error above one is
// a bug, and tests look for one); false for first-order estimates (a ratio above 1 is
// information, not a failure). Each function cites its source; the derivations of the tree
// forms are in the carrier headers of core/carriers/.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "precision/format.hpp"
#include "precision/rounding.hpp"

namespace carrier {

struct Bound {
  double value = std::numeric_limits<double>::infinity();  // absolute unless stated
  bool rigorous = false;
  const char* formula = "";
};

// gamma_k = k u / (1 - k u) (Higham, ASNA 2nd ed., Lemma 3.1); +inf once k u >= 1.
inline double Gamma(double k, double u) {
  const double ku = k * u;
  return ku >= 1 ? std::numeric_limits<double>::infinity() : ku / (1 - ku);
}

// Higham & Mary, "A new approach to probabilistic rounding error analysis", SISC 41(5), 2019,
// Thm 2.4: gamma~_k(lambda) = exp(lambda sqrt(k) u + k u^2 / (1 - u)) - 1 bounds the relative
// error of k rounded operations with probability at least 1 - 2k exp(-lambda^2 (1-u)^2 / 2),
// for independent mean-zero rounding errors.
inline double ProbabilisticGamma(double k, double u, double lambda) {
  return std::expm1(lambda * std::sqrt(k) * u + k * u * u / (1 - u));
}
inline double ProbabilisticGammaFailure(double k, double u, double lambda) {
  return std::min(1.0, 2 * k * std::exp(-lambda * lambda * (1 - u) * (1 - u) / 2));
}

inline double UnitRoundoff(const Format& f, Rounding r) {
  const double u = f.UnitRoundoff();
  return (r == Rounding::kNearestEven || r == Rounding::kNearestAway) ? u : 2 * u;
}

// Sum over a tree: |s_hat - s| <= gamma_D sum|x_i| (Higham ASNA eq. (4.3); seq: D = n - 1,
// pairwise: ceil(log2 n), FABsum blocked:b with pairwise outer: b - 1 + ceil(log2(n/b)),
// Blanchard, Higham & Mary, SISC 42(3), 2020).
inline Bound SumBound(std::uint64_t depth, double u, double sum_abs) {
  return {Gamma(static_cast<double>(depth), u) * sum_abs, true, "gamma_D sum|x|"};
}

// Neumaier's compensated sum over a tree (core/carriers/compensated.hpp):
// u|S| + (1 + u) gamma_{2D-1} (1 + gamma_D) D u sum|x|.
inline Bound CompensatedBound(std::uint64_t depth, double u, double abs_sum, double sum_abs) {
  const double d = static_cast<double>(depth);
  const double second =
      depth == 0 ? 0.0 : (1 + u) * Gamma(2 * d - 1, u) * (1 + Gamma(d, u)) * d * u;
  return {u * abs_sum + second * sum_abs, true, "u|S| + (1+u) gamma_{2D-1} (1+gamma_D) D u sum|x|"};
}

// Dot: gamma_{D+1} sum|a_i b_i| (Higham ASNA eq. (3.5), tree form as for Sum).
inline Bound DotBound(std::uint64_t depth, double u, double sum_abs_products) {
  return {Gamma(static_cast<double>(depth) + 1, u) * sum_abs_products, true,
          "gamma_{D+1} sum|a b|"};
}

// Scaled 2-norm (core/carriers/scaled_norm2.hpp):
// ((1+u)^2 sqrt(1 + gamma_{5D} + 4 N eta) - 1) norm + eta/2, N combines, eta smallest subnormal.
inline Bound Norm2Bound(std::uint64_t depth, double u, double norm, std::uint64_t combines,
                        double eta) {
  const double g = Gamma(5.0 * static_cast<double>(depth), u);
  const double rel =
      (1 + u) * (1 + u) * std::sqrt(1 + g + 4 * static_cast<double>(combines) * eta) - 1;
  return {rel * norm + eta / 2, true, "((1+u)^2 sqrt(1+gamma_{5D}+4N eta) - 1) norm + eta/2"};
}

// Affine recurrence h_n = a h_{n-1} + b composed over n maps: the b component of the composed
// map (h_n from h_0 = 0), |b_hat - b| <= gamma_{n+D} sum_k |prod_{j>k} a_j| |b_k|
// (core/carriers/affine.hpp).
inline Bound AffineBBound(std::uint64_t n, std::uint64_t depth, double u, double weighted_abs) {
  return {Gamma(static_cast<double>(n + depth), u) * weighted_abs, true,
          "gamma_{n+D} sum|prod a_j| |b_k|"};
}

// Max and ArgMax round nothing.
inline Bound ExactBound() { return {0.0, true, "0 (no rounding)"}; }

// Log-sum-exp through OnlineSoftmax over a tree (first order; core/carriers/online_softmax.hpp
// after Blanchard, Higham & Higham, IMA J. Numer. Anal. 41(4), 2021, Sec. 3):
// rho = D (2u + u_e) + u (M - sum w_i x_i); |lse_hat - lse| <= u|lse| + (1+u)(rho + u_l |log d|),
// with w the softmax weights, M = max x, d = sum exp(x_i - M), u_e and u_l the relative errors
// of the policy's Exp and Log.
inline double LseRho(std::uint64_t depth, double u, double u_exp, double max_minus_mean) {
  return static_cast<double>(depth) * (2 * u + u_exp) + u * max_minus_mean;
}
inline Bound LseBound(std::uint64_t depth, double u, double u_exp, double u_log, double lse,
                      double max_minus_weighted_mean, double log_d) {
  const double rho = LseRho(depth, u, u_exp, max_minus_weighted_mean);
  return {u * std::fabs(lse) + (1 + u) * (rho + u_log * std::fabs(log_d)), false,
          "u|lse| + (1+u)(D(2u+u_e) + u(M - sum w x) + u_l|log d|)"};
}
// Softmax output i, relative: rho + u_e + u (M - x_i) + 2u (BHH 2021 shifted algorithm form).
inline Bound SoftmaxRelBound(std::uint64_t depth, double u, double u_exp,
                             double max_minus_weighted_mean, double max_minus_xi) {
  return {LseRho(depth, u, u_exp, max_minus_weighted_mean) + u_exp + u * max_minus_xi + 2 * u,
          false, "rho + u_e + u(M - x_i) + 2u (relative)"};
}

// Welford / Chan over a tree, relative error of the population variance (first order, the
// form of Chan, Golub & LeVeque, Amer. Statist. 37 (1983), Table 1: D kappa u, with the
// constant 8 (D + 2) that tests/core verifies): kappa = sqrt(1 + n mean^2 / M2).
inline double VarianceCondition(double n, double mean, double m2) {
  return m2 == 0 ? std::numeric_limits<double>::infinity() : std::sqrt(1 + n * mean * mean / m2);
}
inline Bound WelfordVarianceRelBound(std::uint64_t depth, double u, double kappa) {
  return {8 * (static_cast<double>(depth) + 2) * kappa * u, false, "8 (D+2) kappa u (relative)"};
}

}  // namespace carrier
