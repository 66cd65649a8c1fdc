// A-priori bounds against measured errors: many random inputs per carrier, merge order,
// compute format and rounding mode, each error measured against the certified reference.
// A measured error above a rigorous bound is a bug; first-order estimates are printed with
// their worst ratio and held to twice the estimate.
#include <catch2/catch.hpp>

// The references come from MPFR: without it (CARRIER_WITH_MPFR=OFF) there is nothing to
// measure against, and this file is empty.
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/carriers/all.hpp"
#include "core/replay_oracle.hpp"
#include "precision/emulated_oracle.hpp"
#include "precision/metrics.hpp"
#include "precision/op_bounds.hpp"
#include "precision/reference/reference.hpp"
#include "precision/rounding.hpp"
#include "precision/scalars.hpp"
#include "support/test_support.hpp"

using namespace carrier;
using carrier::test::Repro;
using carrier::test::Rng;
using Dyn = EmulatedOracle<DynamicFormatTag, kDynamicRounding>;

namespace {

const std::vector<std::string> kSchedules = {
    "seq", "reverse", "pairwise", "blocked:16", "blocked:8:pairwise", "strided:8", "random:5"};

struct Outcome {
  long double computed;
  long double exact;
  OpBound bound;
};

BoundInputs Inputs(const std::vector<double>& a, const std::vector<ValuePair<double>>& pd,
                   const std::vector<long double>& exact, std::size_t main) {
  BoundInputs in;
  in.x = a;
  in.pairs = pd;
  in.exact = exact;
  in.main = main;
  in.n = a.size();
  return in;
}

// One trial: inputs already in the storage (= compute) format.
Outcome RunOp(const std::string& op, const Format& f, Rounding r, const Schedule& s,
              const std::vector<double>& a, const std::vector<double>& b) {
  EmulationScope scope(f, r, 17);
  const MergeTree tree = BuildTree(s, a.size());
  const TreeStats st = ComputeStats(tree);
  std::vector<Dyn> x(a.begin(), a.end());
  std::vector<ValuePair<Dyn>> p;
  std::vector<ValuePair<double>> pd;
  for (std::size_t i = 0; i < b.size(); ++i) {
    p.push_back({Dyn(a[i]), Dyn(b[i])});
    pd.push_back({a[i], b[i]});
  }
  BoundContext ctx{st.max_leaf_depth, st.combines, UnitRoundoff(f, r), 0, 0, f.MinSubnormal()};
  const std::span<const Dyn> xs(x);
  Outcome o{};
  if (op == "sum") {
    o.computed = static_cast<long double>(Sum<Dyn>::Finalize(ReplayOracle<Sum<Dyn>>(tree, xs)));
    o.exact = reference::ReferenceSum(a).as_long_double[0];
  } else if (op == "neumaier") {
    o.computed = static_cast<long double>(
        Compensated<Dyn>::Finalize(ReplayOracle<Compensated<Dyn>>(tree, xs)));
    o.exact = reference::ReferenceSum(a).as_long_double[0];
  } else if (op == "norm2") {
    o.computed = static_cast<long double>(
        ScaledNorm2<Dyn>::Finalize(ReplayOracle<ScaledNorm2<Dyn>>(tree, xs)));
    o.exact = reference::ReferenceNorm2(a).as_long_double[0];
  } else if (op == "dot") {
    o.computed = static_cast<long double>(
        Dot<Dyn>::Finalize(ReplayOracle<Dot<Dyn>>(tree, std::span<const ValuePair<Dyn>>(p))));
    o.exact = reference::ReferenceDot(pd).as_long_double[0];
  } else if (op == "affine") {
    o.computed = static_cast<long double>(
        Affine<Dyn>::Finalize(ReplayOracle<Affine<Dyn>>(tree, std::span<const ValuePair<Dyn>>(p)))
            .b);
    o.exact = reference::ReferenceAffine(pd).as_long_double[1];
  } else if (op == "max") {
    o.computed = static_cast<long double>(Max<Dyn>::Finalize(ReplayOracle<Max<Dyn>>(tree, xs)));
    o.exact = reference::ReferenceMax(a).as_long_double[0];
  } else if (op == "lse") {
    ctx.u_exp = ctx.u_log = ctx.u + 0x1.0p-52;
    using C = OnlineSoftmax<Dyn>;
    o.computed = static_cast<long double>(C::Finalize(ReplayOracle<C>(tree, xs)).lse);
    o.exact = reference::ReferenceLse(a).as_long_double[0];
  } else if (op == "welford") {
    const auto ref = reference::ReferenceWelford(a);
    o.computed = static_cast<long double>(
        Welford<Dyn>::Finalize(ReplayOracle<Welford<Dyn>>(tree, xs)).var_population);
    o.exact = ref.as_long_double[1];
    const std::vector<long double> exact = {ref.as_long_double[0], o.exact};
    o.bound = WelfordOpBound(ctx, Inputs(a, pd, exact, 1));
    return o;
  }
  // The typed bound of each op (precision/op_bounds.hpp), as the op table names them.
  const std::map<std::string, OpBoundFn> bounds = {
      {"sum", &SumOpBound}, {"neumaier", &NeumaierOpBound}, {"norm2", &Norm2OpBound},
      {"dot", &DotOpBound}, {"affine", &AffineOpBound},     {"max", &ExactOpBound},
      {"lse", &LseOpBound}};
  const std::vector<long double> exact = {op == "affine" ? 0.0L : o.exact, o.exact};
  o.bound = bounds.at(op)(ctx, Inputs(a, pd, exact, op == "affine" ? 1 : 0));
  return o;
}

std::vector<double> Draw(Rng& rng, std::size_t n, int kind, const Format& f, bool for_affine_a) {
  std::vector<double> v(n);
  for (auto& x : v) {
    double raw;
    if (for_affine_a) {
      raw = rng.Uniform(-1.0, 1.0);
    } else if (kind == 0) {
      raw = rng.Normal();
    } else if (kind == 1) {
      raw = rng.Uniform(0.0, 1.0);
    } else {
      raw = rng.Normal() * std::ldexp(1.0, static_cast<int>(rng.Below(13)) - 6);  // wide range
    }
    x = RoundToFormat(raw, f, Rounding::kNearestEven);
  }
  return v;
}

}  // namespace

TEST_CASE("no measured error exceeds its rigorous a-priori bound", "[fast][bounds]") {
  const std::uint64_t seed = 8128;
  Rng rng(seed);
  const std::vector<Format> formats = {Fp16(), BF16(), TF32(), Fp32(), Fp8E5M2()};
  const std::vector<Rounding> modes = {Rounding::kNearestEven, Rounding::kTowardZero,
                                       Rounding::kStochastic};
  const std::vector<std::string> ops = {"sum", "neumaier", "dot", "norm2", "affine", "max"};
  std::map<std::string, double> worst;
  std::map<std::string, int> finite_bounds;
  int trials = 0;
  for (const auto& f : formats)
    for (Rounding r : modes)
      for (const auto& op : ops)
        for (const auto& sched : kSchedules) {
          for (int t = 0; t < test::Trials(2); ++t) {
            const std::size_t n = 1 + rng.Below(f.precision <= 8 ? 60 : 600);
            const int kind = static_cast<int>(rng.Below(3));
            auto a = Draw(rng, n, kind, f, op == "affine");
            auto b = (op == "dot" || op == "affine") ? Draw(rng, n, kind, f, false)
                                                     : std::vector<double>{};
            const Schedule s = ParseSchedule(sched);
            if (op == "affine" && s.kind() == ScheduleKind::kStrided) continue;
            const Outcome o = RunOp(op, f, r, s, a, b);
            ++trials;
            const double err = static_cast<double>(std::fabs(o.computed - o.exact));
            const std::string key = op + " " + f.name;
            if (std::isfinite(o.bound.bound.value)) {
              ++finite_bounds[key];
              const double ratio =
                  o.bound.bound.value > 0 ? err / o.bound.bound.value : (err == 0 ? 0 : INFINITY);
              worst[key] = std::max(worst[key], ratio);
            }
            Repro repro{seed, n, sched, key + " " + std::string(RoundingName(r)),
                        test::Join(a, 12)};
            INFO(repro.Text() << "\ncomputed " << static_cast<double>(o.computed) << " exact "
                              << static_cast<double>(o.exact) << " error " << err << " bound "
                              << o.bound.bound.value << " (" << o.bound.bound.formula << ")");
            REQUIRE(o.bound.bound.rigorous);
            REQUIRE(err <= o.bound.bound.value);
          }
        }
  std::cout << trials << " trials; worst error / rigorous bound (trials with a finite bound):\n";
  for (const auto& [k, v] : worst)
    std::cout << "  " << std::left << std::setw(18) << k << std::setw(12) << v << " ("
              << finite_bounds[k] << ")\n";
}

TEST_CASE("first-order estimates hold within a factor 2 on random data", "[fast][bounds]") {
  const std::uint64_t seed = 4242;
  Rng rng(seed);
  std::map<std::string, double> worst;
  for (const auto& f : {Fp16(), BF16(), Fp32()})
    for (const std::string op : {"lse", "welford"})
      for (const auto& sched : kSchedules)
        for (int t = 0; t < test::Trials(3); ++t) {
          const std::size_t n = 2 + rng.Below(f.precision <= 8 ? 60 : 500);
          auto a = Draw(rng, n, static_cast<int>(rng.Below(2)), f, false);
          if (op == "welford")
            for (auto& v : a) v = RoundToFormat(v + 4.0, f, Rounding::kNearestEven);
          const Outcome o = RunOp(op, f, Rounding::kNearestEven, ParseSchedule(sched), a, {});
          const double err = static_cast<double>(std::fabs(o.computed - o.exact));
          const double scaled =
              o.bound.relative ? err / static_cast<double>(std::fabs(o.exact)) : err;
          const double ratio = scaled / o.bound.bound.value;
          worst[op + " " + f.name] = std::max(worst[op + " " + f.name], ratio);
          Repro repro{seed, n, sched, op + " " + f.name, test::Join(a, 12)};
          INFO(repro.Text() << "\nerror " << scaled << " estimate " << o.bound.bound.value);
          CHECK_FALSE(o.bound.bound.rigorous);
          CHECK(ratio <= 2.0);
        }
  std::cout << "worst error / first-order estimate:\n";
  for (const auto& [k, v] : worst)
    std::cout << "  " << std::left << std::setw(18) << k << v << "\n";
}

#endif  // CARRIER_HAVE_MPFR
