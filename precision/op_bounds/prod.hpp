// precision/op_bounds/prod.hpp: the a-priori bound of a product (core/carriers/prod.hpp), the
// op table's bound for `prod`:
//
//   |p^ - p| <= gamma_{n-1} |p|   (relative; Higham ASNA 2nd ed. Lemma 3.1, Sec. 3.1)
//
// rigorous when no partial product underflows or overflows. Every multiplication rounds the
// whole product once, so the count is the number of multiplications, n - 1, in every tree
// (the tree's depth D does not enter). Vacuous (reported so) when the exact product is 0,
// not finite, or below the compute format's normal range, where relative accuracy is lost.
#pragma once

#include <cmath>

#include "precision/op_bounds.hpp"

namespace carrier {

inline OpBound ProdOpBound(const BoundContext& ctx, const BoundInputs& in) {
  const double n = static_cast<double>(in.Count());
  const long double p = std::fabs(in.Exact());
  OpBound ob;
  ob.relative = true;
  ob.bound.value = Gamma(n > 0 ? n - 1 : 0, ctx.u);
  ob.bound.rigorous = true;
  ob.bound.formula = "gamma_{n-1} (relative; n - 1 multiplications in every tree, no underflow)";
  // eta * 2^52 is at or below the smallest normal of every format carried here (p <= 53).
  const long double min_normal = static_cast<long double>(ctx.eta) * 0x1p52L;
  ob.vacuous = !(p > 0) || !std::isfinite(p) || (ctx.eta > 0 && p < min_normal);
  return ob;
}

}  // namespace carrier
