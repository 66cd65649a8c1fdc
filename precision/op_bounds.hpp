// precision/op_bounds.hpp: the a-priori bound that applies to one op's main result, given the
// merge tree, the compute format and the certified reference.
//
// Main result per op (what `carrier eval` measures): sum, kahan, dot, max, lse, norm2 -> the
// scalar; argmax -> the maximum's value; welford -> the population variance; affine -> b,
// the composed map applied to h_0 = 0 (the recurrence's h_n); softmax -> the vector (the bound
// is componentwise relative). Data-dependent ingredients (sum |x_i|, the softmax weights,
// kappa, sum |prod a_j| |b_k|) are computed from the stored inputs in long double, where
// their own error (about 2^-64 n relative) is far below any bound they scale.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/carriers/pairs.hpp"
#include "precision/bounds.hpp"

namespace carrier {

struct BoundContext {
  std::uint64_t depth = 0;     // the tree's max leaf depth D
  std::uint64_t combines = 0;  // number of combines in the tree
  double u = 0;                // unit roundoff of the compute format under its rounding
  double u_exp = 0;            // relative error of the exp policy in that format
  double u_log = 0;            // relative error of the log
  double eta = 0;              // smallest positive subnormal of the compute format
};

struct OpBound {
  Bound bound;
  bool relative = false;  // bound.value bounds the relative (not absolute) error
};

// `x` for one-vector ops; `pairs` for dot (a_i, b_i) and affine (a_i, b_i). `exact` is the
// certified main result (the lse for lse, the variance for welford, the norm for norm2...),
// `exact_mean` welford's mean. Throws std::invalid_argument for an unknown op.
OpBound BoundForOp(const std::string& op, const BoundContext& ctx, std::span<const double> x,
                   std::span<const ValuePair<double>> pairs, long double exact,
                   long double exact_mean = 0);

}  // namespace carrier
