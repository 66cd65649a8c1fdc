// precision/op_bounds/prod.hpp: the a-priori bound of a product (core/carriers/prod.hpp), the
// op table's bound for `prod`:
//
//   |p^ - p| <= gamma_{n-1} |p|   (relative; Higham ASNA 2nd ed. Lemma 3.1, Sec. 3.1)
//
// rigorous when no partial product underflows or overflows. Every multiplication rounds the
// whole product once, so the count is the number of multiplications, n - 1, in every tree
// (the tree's depth D does not enter). Vacuous (reported so) when the exact product is 0 or
// not finite, or when some partial product of some tree could leave the compute format's normal
// range: every partial product is a product of a subset of the inputs, so its magnitude lies
// between the product of all |x_i| < 1 and the product of all |x_i| > 1; those two (in log2,
// with a factor 2 of margin) must lie inside [min_normal, 2^emax] (min_normal taken as
// eta / u and 2^emax as 2u / eta: exact or smaller ranges for RNE and directed rounding).
#pragma once

#include <cmath>
#include <cstdint>
#include <span>

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
  ob.vacuous = !(p > 0) || !std::isfinite(p);
  if (ob.vacuous || !(ctx.eta > 0) || !(ctx.u > 0)) return ob;  // MPFR: no range to leave
  // The two extreme products as long double mantissa times 2^exponent: a multiply per input,
  // rescaled by 2^-+8000 before the long double range (2^-+16382) could be left.
  long double small = 1, big = 1;
  std::int64_t small_e = 0, big_e = 0;
  bool nonfinite = false;
  in.Visit([&](std::span<const double> xs) {
    for (double x : xs) {
      const double a = std::fabs(x);
      if (!std::isfinite(a)) {
        nonfinite = true;
      } else if (a > 0 && a < 1) {
        small *= a;
        if (small < 0x1p-8000L) {
          small *= 0x1p8000L;
          small_e -= 8000;
        }
      } else if (a > 1) {
        big *= a;
        if (big > 0x1p8000L) {
          big *= 0x1p-8000L;
          big_e += 8000;
        }
      }
    }
  });
  const long double log_small = static_cast<long double>(small_e) + std::log2(small);
  const long double log_big = static_cast<long double>(big_e) + std::log2(big);
  const long double log_min_normal = std::log2(static_cast<long double>(ctx.eta) / ctx.u);
  const long double log_max = std::log2(2.0L * ctx.u / ctx.eta);
  ob.vacuous = nonfinite || log_small < log_min_normal + 1 || log_big > log_max - 1;
  return ob;
}

}  // namespace carrier
