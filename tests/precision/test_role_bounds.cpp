// precision/role_bounds.hpp: the bound's terms follow the policy role by role. acc = fp32 vs
// acc = bf16 moves the acc term by u_bf16 / u_fp32 = 2^16 and nothing else; the in and out
// terms appear exactly when those roles round; the note names each term's role; sum and dot
// are rigorous (and hold on random data computed role by role), lse/welford/attention say they
// are first order.
#include <catch2/catch.hpp>
#include <cmath>
#include <iostream>
#include <random>
#include <vector>

#include "precision/role_bounds.hpp"
#include "precision/rounding.hpp"

using namespace carrier;

namespace {
const RoleTerm& Term(const RoleBound& b, const std::string& role) {
  for (const RoleTerm& t : b.terms)
    if (t.role == role) return t;
  FAIL("no term for role " << role);
  return b.terms.front();
}
}  // namespace

TEST_CASE("role bounds: acc=fp32 vs acc=bf16 changes the acc term by 2^16", "[fast][bounds]") {
  const PathCounts path{15, 3};  // blocked:16 over 128 inputs with a pairwise outer tree
  const double sum_abs = 100, abs_sum = 40;
  const PrecisionPolicy a = ParsePrecisionPolicy("in=bf16,acc=fp32,combine=fp32,out=fp32");
  const PrecisionPolicy b = ParsePrecisionPolicy("in=bf16,acc=bf16,combine=fp32,out=fp32");
  const RoleBound ba = SumRoleBound(a, path, sum_abs, abs_sum, false);
  const RoleBound bb = SumRoleBound(b, path, sum_abs, abs_sum, false);
  std::cout << "  acc=fp32: " << ba.value << "  " << RoleBoundNote(ba) << "\n"
            << "  acc=bf16: " << bb.value << "  " << RoleBoundNote(bb) << "\n";
  CHECK(Term(ba, "acc").u == std::ldexp(1.0, -24));
  CHECK(Term(bb, "acc").u == std::ldexp(1.0, -8));
  CHECK(Term(ba, "acc").count == 15);
  CHECK(Term(ba, "combine").count == 3);
  CHECK(Term(ba, "combine").u == Term(bb, "combine").u);
  // The bounds themselves: theta = (1+u_acc)^15 (1+2^-24)^3 - 1 and out = combine = fp32
  // (the result of a fp32 combine rounded to fp32 again: exact only when acc is fp32 too).
  const double ta = std::pow(1 + std::ldexp(1.0, -24), 18) - 1;
  const double tb =
      std::pow(1 + std::ldexp(1.0, -8), 15) * std::pow(1 + std::ldexp(1.0, -24), 3) - 1;
  CHECK(ba.value == Approx(ta * sum_abs).epsilon(1e-9));
  CHECK(bb.value ==
        Approx(tb * sum_abs + std::ldexp(1.0, -24) * (abs_sum + tb * sum_abs)).epsilon(1e-9));
  // The acc part alone scales by 2^16 (to first order; (1+u)^15 - 1 adds at most 15 u).
  const double ratio = (bb.value - 3 * std::ldexp(1.0, -24) * sum_abs) /
                       (ba.value - 3 * std::ldexp(1.0, -24) * sum_abs);
  std::cout << "  acc-term ratio bf16/fp32 = " << ratio << " (2^16 = 65536)\n";
  CHECK(ratio >= 65536 * 0.999);
  CHECK(ratio <= 65536 * (1 + 15 * std::ldexp(1.0, -8)) * 1.001);
  CHECK(ba.rigorous);
  CHECK(RoleBoundNote(ba).find("rigorous") != std::string::npos);

  // Welford: the acc term moves by the same factor.
  const RoleBound wa = WelfordRoleBound(ParsePrecisionPolicy("in=bf16,acc=fp32"), 10, 3.0, false);
  const RoleBound wb = WelfordRoleBound(ParsePrecisionPolicy("in=bf16,acc=bf16"), 10, 3.0, false);
  CHECK(wb.value / wa.value == Approx(65536));
  CHECK_FALSE(wa.rigorous);
  CHECK(RoleBoundNote(wa).find("first-order estimate only") != std::string::npos);
}

TEST_CASE("role bounds: the in and out terms appear when those roles round", "[fast][bounds]") {
  const PathCounts path{99, 0};
  const double sum_abs = 50, abs_sum = 20;
  const PrecisionPolicy p = ParsePrecisionPolicy("in=bf16,acc=fp32");
  const RoleBound with_in = SumRoleBound(p, path, sum_abs, abs_sum, true);
  const RoleBound without = SumRoleBound(p, path, sum_abs, abs_sum, false);
  const double u_in = std::ldexp(1.0, -8), u32 = std::ldexp(1.0, -24);
  // (1 + u_in)(1 + u)^99 - 1 - ((1 + u)^99 - 1) = u_in (1 + u)^99
  CHECK(with_in.value - without.value == Approx(u_in * std::pow(1 + u32, 99) * sum_abs));
  CHECK(Term(with_in, "in").count == 1);
  CHECK(Term(without, "in").count == 0);
  CHECK(RoleBoundNote(with_in).find("in 1 x 2^-8") != std::string::npos);
  CHECK(RoleBoundNote(without).find("stored inputs") != std::string::npos);
  // out = acc: the result is already in out's format, no term; out = bf16: u_out (|s| + ...).
  CHECK(Term(without, "out").count == 0);
  const RoleBound out16 = SumRoleBound(ParsePrecisionPolicy("in=bf16,acc=fp32,out=bf16"), path,
                                       sum_abs, abs_sum, false);
  const double theta = std::pow(1 + u32, 99) - 1;
  CHECK(out16.value == Approx(theta * sum_abs + u_in * (abs_sum + theta * sum_abs)));
  CHECK(RoleBoundNote(out16).find("out 1 x 2^-8") != std::string::npos);
  // Dot: a and b both stored (in counted twice); fp32 products of bf16 factors are exact.
  const RoleBound d = DotRoleBound(p, path, sum_abs, abs_sum, true);
  CHECK(Term(d, "in").count == 2);
  CHECK(Term(d, "prod").count == 0);
  const RoleBound d16 = DotRoleBound(ParsePrecisionPolicy("in=fp32,acc=fp32"), path, 1, 1, true);
  CHECK(Term(d16, "prod").count == 1);
  // Directed rounding doubles a role's u.
  CHECK(RoleUnitRoundoff(ParsePrecisionPolicy("in=fp16,acc=fp16@rz").acc) == std::ldexp(1.0, -10));
  // Attention: the s and p terms appear only when those roles are narrower than acc.
  const std::vector<long double> o = {0.5L, -0.25L};
  const std::vector<double> a = {1.0, 1.0}, bb = {2.0, 2.0}, q = {3.0};
  const RoleBound at_fp32 =
      AttentionRoleBound(ParsePrecisionPolicy("in=bf16,acc=fp32"), 4, 2, u32, o, a, bb, q, false);
  const RoleBound at_p16 = AttentionRoleBound(ParsePrecisionPolicy("in=bf16,acc=fp32,p=bf16"), 4, 2,
                                              u32, o, a, bb, q, false);
  CHECK(Term(at_fp32, "p").count == 0);
  CHECK(Term(at_p16, "p").count > 0);
  CHECK(at_p16.value - at_fp32.value == Approx(u_in * a[0] / 0.5));
  CHECK(RoleBoundNote(at_p16).find("first-order") != std::string::npos);
}

TEST_CASE("role bounds: the rigorous sum bound holds on data computed role by role",
          "[fast][bounds]") {
  // Inputs rounded to bf16 (in), a seq chain in fp16 (acc), the result rounded to bf16 (out);
  // the error against the exact sum of the unrounded doubles never exceeds the bound.
  const PrecisionPolicy p = ParsePrecisionPolicy("in=bf16,acc=fp16,out=bf16");
  std::mt19937_64 rng(20261201);
  std::uniform_real_distribution<double> dist(-1, 1);
  double worst = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 64;
    std::vector<double> x(n);
    long double exact = 0, sum_abs = 0;
    for (double& v : x) {
      v = dist(rng);
      exact += v;
      sum_abs += std::fabs(v);
    }
    double s = 0;
    for (int i = 0; i < n; ++i) {
      const double xi = RoundToFormat(x[i], p.in.format, p.in.rounding);
      s = i == 0 ? xi : RoundToFormat(s + xi, p.acc.format, p.acc.rounding);
    }
    s = RoundToFormat(s, p.out.format, p.out.rounding);
    const RoleBound b =
        SumRoleBound(p, {static_cast<double>(n - 1), 0}, static_cast<double>(sum_abs),
                     std::fabs(static_cast<double>(exact)), true);
    const double err = std::fabs(static_cast<double>(s - exact));
    INFO("trial " << trial << " seed 20261201: error " << err << ", bound " << b.value);
    REQUIRE(err <= b.value);
    worst = std::max(worst, err / b.value);
  }
  std::cout << "  largest error / rigorous role bound over 200 trials: " << worst << "\n";
}
