// precision/role_bounds.hpp: a-priori bounds whose terms follow a precision policy role by role
// (precision_policy.hpp), beside the one-precision bounds of bounds.hpp and op_bounds.hpp.
//
// Contract. Each function bounds the error of one op's main result computed under a policy P
// against the exact result on the inputs as given, BEFORE they are rounded to P.in — unless
// `include_in` is false, when the `in` term is left out and the bound is against the exact
// result on the stored (already rounded) inputs, which is what `carrier eval` and sweeps
// measure (their certified reference is computed from the stored values). Every term names
// the role whose unit roundoff it carries (RoleTerm::role) and how many roundings of that
// role an input passes on the worst path (RoleTerm::count), so RoleBoundNote prints which term
// belongs to which role. Unit roundoffs: RoleUnitRoundoff (2^-p to nearest, 2^-(p-1) for the
// directed modes, round-to-odd and stochastic rounding's worst case; p counts the implicit
// bit). No role may hold mpfr (policies cannot name it).
//
// Rigorous or first order (RoleBound::rigorous, said in the note): sum and dot are rigorous
// (no underflow or overflow, IEEE chains — no `mma` profile): the product form
// theta = prod_r (1 + u_r)^{k_r} - 1 of Higham's Lemma 3.1 with one factor per rounding on the
// worst path. lse, welford and attention have only first-order estimates (as their one-
// precision bounds in bounds.hpp and op_bounds.hpp): the sum over roles of count x u_r,
// without the O(u^2) terms.
//
// Path counts (PathCounts): chain = the longest chain's additions (L - 1), combines = the most
// combines above any chain (TreeStats::combine_depth); every input passes at most that many
// of each, which is all the product form needs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "core/merge_tree.hpp"
#include "precision/op_bounds.hpp"
#include "precision/precision_policy.hpp"

namespace carrier {

// The unit roundoff of one role: 2^-p to nearest (rne, rna), 2^-(p-1) otherwise.
inline double RoleUnitRoundoff(const RoleArithmetic& r) {
  const bool nearest = r.rounding == Rounding::kNearestEven || r.rounding == Rounding::kNearestAway;
  return std::ldexp(1.0, -(r.format.precision - (nearest ? 0 : 1)));
}

struct RoleTerm {
  std::string role;  // in prod acc combine state s p out, or exp / log (the math policy)
  double count = 0;  // roundings of that role on the worst path (first order: its weight)
  double u = 0;      // the role's unit roundoff
  std::string what;  // the operations it stands for
};

struct RoleBound {
  double value = INFINITY;  // absolute unless `relative`
  bool relative = false;
  bool rigorous = false;  // false: a first-order estimate (O(u^2) dropped)
  bool include_in = true;
  std::vector<RoleTerm> terms;
  std::string formula;  // the expression, in the roles' names
};

// "rigorous: in 1 x 2^-8 (input storage) + acc 15 x 2^-24 (chain additions) + ...; theta =
// ..." — one line naming each term's role, its count, its u and what it covers.
inline std::string RoleBoundNote(const RoleBound& b) {
  std::string s = b.rigorous ? "rigorous (product form)" : "first-order estimate only";
  s += ": ";
  bool first = true;
  for (const RoleTerm& t : b.terms) {
    if (t.count == 0) continue;
    char buf[64];
    std::snprintf(buf, sizeof buf, " %g x 2^%d", t.count, std::ilogb(t.u));
    s += (first ? "" : " + ") + t.role + buf + " (" + t.what + ")";
    first = false;
  }
  if (first) s += "no rounding";
  if (!b.include_in) s += "; no in term: measured against the exact result on the stored inputs";
  return s + "; " + b.formula;
}

struct PathCounts {
  double chain = 0;     // additions along the longest chain (L - 1)
  double combines = 0;  // combines above the deepest chain
};
inline PathCounts PathCountsOf(const TreeStats& st) {
  return {st.longest_chain > 0 ? static_cast<double>(st.longest_chain - 1) : 0.0,
          static_cast<double>(st.combine_depth)};
}

namespace role_bounds_detail {

// prod (1 + u_t)^{count_t} - 1 over the terms, via log1p/expm1 (no cancellation).
inline double Theta(const std::vector<RoleTerm>& terms) {
  double l = 0;
  for (const RoleTerm& t : terms) l += t.count * std::log1p(t.u);
  return std::expm1(l);
}
inline double FirstOrder(const std::vector<RoleTerm>& terms) {
  double s = 0;
  for (const RoleTerm& t : terms) s += t.count * t.u;
  return s;
}

// The tail shared by the sum-like rigorous bounds: theta over the terms so far, then the output
// rounding (dropped when out equals acc and combine: the result is already in out's format):
//   value = theta mass + u_out (|result| + theta mass).
inline void FinishSumLike(const PrecisionPolicy& p, double mass, double abs_result, RoleBound& b) {
  const double theta = Theta(b.terms);
  const bool out_exact = p.out.format == p.acc.format && p.out.format == p.combine.format;
  const double u_out = out_exact ? 0.0 : RoleUnitRoundoff(p.out);
  b.terms.push_back({"out", out_exact ? 0.0 : 1.0, RoleUnitRoundoff(p.out), "output rounding"});
  b.value = theta * mass + u_out * (abs_result + theta * mass);
}

}  // namespace role_bounds_detail

// Sum, rigorous: the inputs rounded once to in (x~ = x(1 + d), |d| <= u_in), each passes at most
// L - 1 chain additions in acc and C combines in combine, and the result is rounded once to out:
//   |out(s^) - s| <= theta sum|x| + u_out (|s| + theta sum|x|),
//   theta = (1 + u_in)(1 + u_acc)^{L-1} (1 + u_combine)^C - 1.
// Terms: in (1, input storage), acc (L - 1, chain additions), combine (C, merge-tree combines),
// out (1, the output rounding; applied to |s| + theta sum|x|). When out equals acc and the
// result is already in acc's format, the out rounding is exact and its term is dropped
// (`out_exact`: a one-precision op's result is its accumulator).
inline RoleBound SumRoleBound(const PrecisionPolicy& p, PathCounts path, double sum_abs,
                              double abs_sum, bool include_in = true) {
  RoleBound b;
  b.rigorous = true;
  b.include_in = include_in;
  b.terms = {{"in", include_in ? 1.0 : 0.0, RoleUnitRoundoff(p.in), "input storage"},
             {"acc", path.chain, RoleUnitRoundoff(p.acc), "chain additions"},
             {"combine", path.combines, RoleUnitRoundoff(p.combine), "tree combines"}};
  role_bounds_detail::FinishSumLike(p, sum_abs, abs_sum, b);
  b.formula =
      "theta sum|x| + u_out (|s| + theta sum|x|), theta = (1+u_in)(1+u_acc)^(L-1)"
      "(1+u_combine)^C - 1";
  return b;
}

// Dot, rigorous (IEEE products and sums; a policy with `mma` has the fused-step estimate of
// op_bounds.hpp MmaDotOpBound instead): both factors stored in in, each product rounded once to
// prod, then as SumRoleBound:
//   theta = (1 + u_in)^2 (1 + u_prod)(1 + u_acc)^{L-1}(1 + u_combine)^C - 1,
//   |out(d^) - d| <= theta sum|a b| + u_out (|d| + theta sum|a b|).
// Terms: in (2: a and b stored), prod (1), acc (L - 1), combine (C), out (1, dropped as in
// SumRoleBound when it is exact).
inline RoleBound DotRoleBound(const PrecisionPolicy& p, PathCounts path, double sum_abs_products,
                              double abs_dot, bool include_in = true) {
  RoleBound b;
  b.rigorous = true;
  b.include_in = include_in;
  // A product of two in values is exact in prod when prod holds 2p bits (barring under- and
  // overflow, which the bound excludes throughout).
  const bool prod_exact = p.prod.format.precision >= 2 * p.in.format.precision;
  b.terms = {{"in", include_in ? 2.0 : 0.0, RoleUnitRoundoff(p.in), "a and b stored"},
             {"prod", prod_exact ? 0.0 : 1.0, RoleUnitRoundoff(p.prod), "products"},
             {"acc", path.chain, RoleUnitRoundoff(p.acc), "chain additions"},
             {"combine", path.combines, RoleUnitRoundoff(p.combine), "tree combines"}};
  role_bounds_detail::FinishSumLike(p, sum_abs_products, abs_dot, b);
  b.formula =
      "theta sum|ab| + u_out (|d| + theta sum|ab|), theta = (1+u_in)^2 (1+u_prod)"
      "(1+u_acc)^(L-1)(1+u_combine)^C - 1 (prod exact when it holds every in x in product)";
  return b;
}

// Log-sum-exp through OnlineSoftmax (first order, after bounds.hpp LseBound, Blanchard, Higham
// & Higham 2021, Sec. 3), with each u of that bound assigned to the role that does the
// operation:
//   |lse^ - lse| <= u_in sum w|x| + L (2u_acc + u_e) + C (2u_combine + u_e) + (L + C) u_state
//                   + u_acc (M - sum w x) + u_l |log d| + u_acc |lse| + u_out |lse|,
// w the softmax weights, M = max x, d = sum exp(x - M). Terms: in (sum w|x|: the inputs'
// storage moves lse by sum w_i dx_i), acc (2 per chain step: the rescale product and the
// addition; the shifts x - m; the final m + log d), combine (2 per combine), exp (one per
// step), state (one per step when state is narrower than acc: m and d stored between steps),
// log, out (the result rounded once). The state and out terms are dropped when those roles
// equal acc (no extra rounding).
inline RoleBound LseRoleBound(const PrecisionPolicy& p, PathCounts path, double u_exp, double u_log,
                              double lse, double max_minus_weighted_mean, double log_d,
                              double weighted_abs_x, bool include_in = true) {
  RoleBound b;
  b.rigorous = false;
  b.include_in = include_in;
  const double steps = path.chain + path.combines;
  const bool state_extra = !(p.state.format == p.acc.format);
  const bool out_extra = !(p.out.format == p.acc.format);
  b.terms = {
      {"in", include_in ? weighted_abs_x : 0.0, RoleUnitRoundoff(p.in), "input storage, sum w|x|"},
      {"acc", 2 * path.chain + max_minus_weighted_mean + std::fabs(lse), RoleUnitRoundoff(p.acc),
       "2 per chain step + (M - sum w x) + |lse|"},
      {"combine", 2 * path.combines, RoleUnitRoundoff(p.combine), "2 per combine"},
      {"exp", steps, u_exp, "one exp per step"},
      {"state", state_extra ? steps : 0.0, RoleUnitRoundoff(p.state), "m, d stored per step"},
      {"log", std::fabs(log_d), u_log, "log d"},
      {"out", out_extra ? std::fabs(lse) : 0.0, RoleUnitRoundoff(p.out), "output rounding"}};
  b.value = role_bounds_detail::FirstOrder(b.terms);
  b.formula =
      "u_in sum w|x| + L(2u_acc+u_e) + C(2u_combine+u_e) + (L+C)u_state + u_acc(M - sum w x) + "
      "u_l|log d| + (u_acc + u_out)|lse| (absolute, first order)";
  return b;
}

// Welford / Chan, relative error of the population variance (first order). The published
// constant 8 (D + 2) kappa u of bounds.hpp holds for one u; with acc, combine and state
// differing it is taken at the largest of the three (every rounding is within it). The inputs'
// storage moves the variance by at most 2 kappa u_in relative ((1/n) sum |x - mean| |x| <=
// sigma sqrt(sum x^2 / n) = kappa var, Cauchy-Schwarz) and the output rounding adds u_out.
// Terms: in (2 kappa), acc/combine/state (8 (D + 2) kappa at the largest u, under the role
// that has it), out (1, dropped when out equals that role's format).
inline RoleBound WelfordRoleBound(const PrecisionPolicy& p, std::uint64_t depth, double kappa,
                                  bool include_in = true) {
  RoleBound b;
  b.relative = true;
  b.rigorous = false;
  b.include_in = include_in;
  const RoleArithmetic* widest_u = &p.acc;
  std::string name = "acc";
  for (auto [r, n] : {std::pair{&p.combine, "combine"}, std::pair{&p.state, "state"}}) {
    if (RoleUnitRoundoff(*r) > RoleUnitRoundoff(*widest_u)) {
      widest_u = r;
      name = n;
    }
  }
  const bool out_extra = !(p.out.format == widest_u->format);
  b.terms = {{"in", include_in ? 2 * kappa : 0.0, RoleUnitRoundoff(p.in), "input storage"},
             {name, 8 * (static_cast<double>(depth) + 2) * kappa, RoleUnitRoundoff(*widest_u),
              "Welford/Chan updates, 8 (D+2) kappa, largest of acc/combine/state"},
             {"out", out_extra ? 1.0 : 0.0, RoleUnitRoundoff(p.out), "output rounding"}};
  b.value = role_bounds_detail::FirstOrder(b.terms);
  b.formula = "2 kappa u_in + 8 (D+2) kappa max(u_acc, u_combine, u_state) + u_out (relative)";
  return b;
}

// One attention head (FlashAttention-2 order; op_bounds.hpp AttentionOpBound's first-order
// bound with each u assigned to its role), per output component j of row i:
//   u_acc |o_j| + u_out |o_j| + A_j [D (2u_acc + u_e) + D u_state + u_acc + u_p + u_in
//   + 2 (gamma_{d+1}(u_acc) + u_acc + u_s + 2u_in) Q_i] + u_acc B_j,
// reported normwise (max_j over max_j |o_j|). A, B and Q are op_bounds.hpp's data-dependent
// parts (run::SharedReference attention_a/b/q). Terms: in (v stored: A; q and k stored: 4 Q A),
// acc (the rescales and the row sum, the final division, the score dot and scaling), s (the
// scores stored: 2 Q A), p (P rounded before the P V product: A), state (l and O stored per
// tile: D A), exp, out. First order only; a policy with `mma` replaces the score and P V dot
// products' IEEE chains by fused steps, which this bound does not model (its note says so).
inline RoleBound AttentionRoleBound(const PrecisionPolicy& p, std::uint64_t depth,
                                    std::uint64_t head_dim, double u_exp,
                                    std::span<const long double> o, std::span<const double> a,
                                    std::span<const double> bb, std::span<const double> q,
                                    bool include_in = true) {
  RoleBound b;
  b.relative = true;
  b.rigorous = false;
  b.include_in = include_in;
  const double u_in = include_in ? RoleUnitRoundoff(p.in) : 0.0;
  const double u_acc = RoleUnitRoundoff(p.acc), u_s = RoleUnitRoundoff(p.s);
  const double u_p = RoleUnitRoundoff(p.p), u_state = RoleUnitRoundoff(p.state);
  const double u_out = RoleUnitRoundoff(p.out);
  const bool s_extra = !(p.s.format == p.acc.format), p_extra = !(p.p.format == p.acc.format);
  const bool state_extra = !(p.state.format == p.acc.format);
  const bool out_extra = !(p.out.format == p.acc.format);
  const double dd = static_cast<double>(head_dim), D = static_cast<double>(depth);
  const double gamma = (dd + 1) * u_acc >= 1 ? INFINITY : (dd + 1) * u_acc / (1 - (dd + 1) * u_acc);
  double worst = 0, norm = 0, wa = 0, wq = 0;
  for (std::size_t j = 0; j < o.size() && j < a.size() && j < bb.size() && head_dim > 0; ++j) {
    const double oj = std::fabs(static_cast<double>(o[j]));
    const double qi = q[j / head_dim];
    const double coef = D * (2 * u_acc + u_exp) + (state_extra ? D * u_state : 0) + u_acc +
                        (p_extra ? u_p : 0) + u_in +
                        2 * (gamma + u_acc + (s_extra ? u_s : 0) + 2 * u_in) * qi;
    const double bj = (u_acc + (out_extra ? u_out : 0)) * oj + a[j] * coef + u_acc * bb[j];
    if (bj > worst) {
      worst = bj;
      wa = a[j];
      wq = qi;
    }
    norm = std::max(norm, oj);
  }
  b.value = norm > 0 ? worst / norm : (worst > 0 ? INFINITY : 0.0);
  // The terms of the worst component, relative to max|o| (for the note).
  const double scale = norm > 0 ? 1 / norm : 0;
  b.terms = {{"in", include_in ? (wa + 4 * wq * wa) * scale : 0.0, RoleUnitRoundoff(p.in),
              "v stored (A) and q, k stored (4 Q A)"},
             {"acc", (wa * (2 * D + 1 + 2 * (dd + 2) * wq)) * scale, u_acc,
              "rescales, row sum, division, score dot (A (2D + 1) + 2 (d + 2) Q A, + B)"},
             {"exp", D * wa * scale, u_exp, "one exp per tile (D A)"},
             {"s", s_extra ? 2 * wq * wa * scale : 0.0, u_s, "scores stored (2 Q A)"},
             {"p", p_extra ? wa * scale : 0.0, u_p, "P rounded before P V (A)"},
             {"state", state_extra ? D * wa * scale : 0.0, u_state, "l, O stored per tile (D A)"},
             {"out", out_extra ? 1.0 : 0.0, u_out, "output rounding"}};
  b.formula = std::string(
                  "max_j [(u_acc + u_out)|o_j| + A_j (D(2u_acc+u_e) + D u_state + u_acc + u_p + "
                  "u_in + 2(gamma_{d+1} + u_acc + u_s + 2u_in) Q) + u_acc B_j] / max|o| "
                  "(normwise, first order)") +
              (p.mma.empty() ? "" : "; mma=" + p.mma + ": fused-step products not modelled here");
  return b;
}

// The role bound of an op given by its one-precision bound function (the op table's
// Entry::bound: SumOpBound, DotOpBound, LseOpBound, WelfordOpBound, AttentionOpBound; any other
// returns false), from the stored inputs and the certified reference of BoundInputs, the
// executed tree's stats and the exp/log policy's relative errors. The data-dependent parts
// (sum|x|, sum|a b|, the softmax weights, kappa) are computed in long double from the inputs.
inline bool RoleBoundFor(OpBoundFn fn, const PrecisionPolicy& p, const TreeStats& st,
                         const BoundInputs& in, double u_exp, double u_log, bool include_in,
                         RoleBound& out) {
  const PathCounts path = PathCountsOf(st);
  const double exact = static_cast<double>(in.Exact());
  if (fn == &SumOpBound) {
    out = SumRoleBound(p, path, static_cast<double>(SumAbsOf(in)), std::fabs(exact), include_in);
    return true;
  }
  if (fn == &DotOpBound) {
    long double s = 0;
    in.VisitPairs([&](double a, double b) {
      s += std::fabs(static_cast<long double>(a) * static_cast<long double>(b));
    });
    out = DotRoleBound(p, path, static_cast<double>(s), std::fabs(exact), include_in);
    return true;
  }
  if (fn == &LseOpBound) {
    if (in.Count() == 0 || !std::isfinite(exact)) return false;
    const SoftmaxSpread w = SoftmaxSpreadOf(in);
    if (!w.finite) return false;
    out = LseRoleBound(p, path, u_exp, u_log, exact, static_cast<double>(w.spread),
                       static_cast<double>(in.Exact() - w.m), static_cast<double>(w.weighted_abs),
                       include_in);
    return true;
  }
  if (fn == &WelfordOpBound) {
    const double n = static_cast<double>(in.Count());
    const long double mean = in.exact.empty() ? 0 : in.exact[0];
    const double m2 = static_cast<double>(in.Exact() * static_cast<long double>(in.Count()));
    out = WelfordRoleBound(p, st.max_leaf_depth,
                           VarianceCondition(n, static_cast<double>(mean), m2), include_in);
    return true;
  }
  if (fn == &AttentionOpBound) {
    out = AttentionRoleBound(p, st.max_leaf_depth, in.head_dim, u_exp, in.exact, in.attention_a,
                             in.attention_b, in.attention_q, include_in);
    return true;
  }
  return false;
}

}  // namespace carrier
