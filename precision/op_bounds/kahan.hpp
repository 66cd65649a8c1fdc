// precision/op_bounds/kahan.hpp: the a-priori bound of Kahan's original compensated sum
// (core/carriers/kahan.hpp has the derivation), the op table's bound for `kahan`.
//
//   |s - S| <= (2u + [combines > 0] D u + D^2 u^2) sum|x_i|     (first-order estimate)
//
// One chain (seq, reverse: no combines) gives Kahan's classical (2u + O(n u^2)) sum|x|
// (Knuth TAOCP vol. 2, 4.2.2 ex. 19; Higham ASNA 2nd ed. Thm 4.8, eq. (4.9)) with the O(n u^2)
// written as D^2 u^2; a tree adds the corrections its combines carry to the root and drop, at
// most D of them, each within u of a partial sum. Not rigorous off the sequential case: a
// ratio above 1 there is information, not a failure.
#pragma once

#include "precision/op_bounds.hpp"

namespace carrier {

inline OpBound KahanOpBound(const BoundContext& ctx, const BoundInputs& in) {
  const double d = static_cast<double>(ctx.depth);
  const double u = ctx.u;
  const double tree = ctx.combines > 0 ? d * u : 0.0;
  OpBound ob;
  ob.bound.value = (2 * u + tree + d * d * u * u) * static_cast<double>(SumAbsOf(in));
  ob.bound.rigorous = false;
  ob.bound.formula = "(2u + [tree] D u + D^2 u^2) sum|x| (Kahan; first-order estimate)";
  ob.relative = false;
  return ob;
}

}  // namespace carrier
