#include "precision/op_bounds.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace carrier {

namespace {

long double SumAbs(std::span<const double> x) {
  long double s = 0;
  for (double v : x) s += std::fabs(static_cast<long double>(v));
  return s;
}

}  // namespace

OpBound BoundForOp(const std::string& op, const BoundContext& ctx, std::span<const double> x,
                   std::span<const ValuePair<double>> pairs, long double exact,
                   long double exact_mean) {
  const std::uint64_t d = ctx.depth;
  if (op == "sum") return {SumBound(d, ctx.u, static_cast<double>(SumAbs(x))), false};
  if (op == "kahan")
    return {CompensatedBound(d, ctx.u, static_cast<double>(std::fabs(exact)),
                             static_cast<double>(SumAbs(x))),
            false};
  if (op == "max" || op == "argmax") return {ExactBound(), false};
  if (op == "norm2")
    return {Norm2Bound(d, ctx.u, static_cast<double>(exact), ctx.combines, ctx.eta), false};
  if (op == "dot") {
    long double s = 0;
    for (const auto& p : pairs) s += std::fabs(static_cast<long double>(p.a) * p.b);
    return {DotBound(d, ctx.u, static_cast<double>(s)), false};
  }
  if (op == "affine") {
    // sum_k |prod_{j>k} a_j| |b_k|, accumulated from the last map backwards.
    long double weight = 1, s = 0;
    for (std::size_t k = pairs.size(); k-- > 0;) {
      s += weight * std::fabs(static_cast<long double>(pairs[k].b));
      weight *= std::fabs(static_cast<long double>(pairs[k].a));
    }
    return {AffineBBound(pairs.size(), d, ctx.u, static_cast<double>(s)), false};
  }
  if (op == "lse" || op == "softmax") {
    // M, the weights w_i = exp(x_i - lse) and the weighted mean sum w_i x_i.
    long double m = -INFINITY;
    for (double v : x) m = std::max<long double>(m, v);
    long double lse = exact;
    if (op == "softmax" || !std::isfinite(lse)) {
      long double s = 0;
      for (double v : x) s += std::exp(static_cast<long double>(v) - m);
      lse = m + std::log(s);
    }
    if (!std::isfinite(m) || !std::isfinite(lse)) return {ExactBound(), op == "softmax"};
    long double weighted = 0, min_x = m;
    for (double v : x) {
      weighted += std::exp(static_cast<long double>(v) - lse) * v;
      min_x = std::min<long double>(min_x, v);
    }
    const double spread = static_cast<double>(m - weighted);
    if (op == "lse")
      return {LseBound(d, ctx.u, ctx.u_exp, ctx.u_log, static_cast<double>(lse), spread,
                       static_cast<double>(lse - m)),
              false};
    // The componentwise bound is largest for the smallest element. Outputs below the normal
    // range lose relative accuracy: e^{x_i - m} and the division by d each round to a multiple
    // of the subnormal spacing eta, an absolute error of at most eta apiece, so component i
    // gains 2 eta / p_i relative, largest for the smallest output p_min = e^{min x - lse}.
    Bound b = SoftmaxRelBound(d, ctx.u, ctx.u_exp, spread, static_cast<double>(m - min_x));
    if (ctx.eta > 0) {
      const long double p_min = std::exp(min_x - lse);
      b.value += p_min > 0 ? static_cast<double>(2 * static_cast<long double>(ctx.eta) / p_min)
                           : INFINITY;
      b.formula = "rho + u_e + u(M - x_i) + 2u + 2 eta / p_i (relative; eta: subnormal spacing)";
    }
    return {b, true};
  }
  if (op == "welford") {
    const double n = static_cast<double>(x.size());
    const double m2 = static_cast<double>(exact * static_cast<long double>(x.size()));
    return {WelfordVarianceRelBound(d, ctx.u, VarianceCondition(n, static_cast<double>(exact_mean), m2)),
            true};
  }
  throw std::invalid_argument("no bound for op '" + op + "'");
}

}  // namespace carrier
