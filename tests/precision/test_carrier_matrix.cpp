// The full matrix: every carrier of core/ run with every compute scalar of precision/.
//
// Scalars: Half, BFloat16, EmulatedOracle for each predefined format (fp8e4m3, fp8e5m2, fp16, bf16,
// tf32, fp32) with rne and one directed mode, fp16 with stochastic rounding and a custom format
// with ro and rna (all through EmulatedOracleDynamic and an EmulationScope, so one instantiation of
// the carriers serves them all), EmulatedOracle with static tags (fp8e4m3/rne, fp16/sr), float,
// double, and Mpfr at 64 and 256 bits. Carriers: Sum, Compensated, Max, ArgMax, OnlineSoftmax,
// Welford, ScaledNorm2, Dot, Affine, FlashRow FA2 and FA1 (Dv = 3).
//
// For each pair, on random inputs (n = 1, 5, 32) rounded to the scalar first:
//   - Fold (the `seq` schedule) and a pairwise ReplayOracle (core/replay_oracle.hpp) are compared
//   with a
//     reference computed from the stored inputs in MPFR at 1024 bits (long double without
//     MPFR), within a tolerance of the carrier's first-order a-priori bound, with the format's
//     unit roundoff u (2u for directed and stochastic rounding) and the tree depth D (n for a
//     fold, ceil(log2 n) + 1 pairwise), times 2, plus n times the smallest subnormal for
//     underflow; the worst err / tol is printed per pair;
//   - ReplayOracle of the `seq` tree equals Fold bit for bit;
//   - the special-value table: NaN in -> NaN out (ArgMax: the NaN's index), empty input ->
//     the documented Finalize(Identity()) (sum +0, max -inf, lse -inf, ...), through Fold and
//     ReplayOracle.
// EmulatedOracle fp32/fp16/bf16 with rne are also checked against float/Half/BFloat16 bit for bit
// on the carriers that use no exp (same correctly rounded operations, so identical bits).
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/carrier.hpp"
#include "core/carriers/all.hpp"
#include "core/merge_tree.hpp"
#include "core/replay_oracle.hpp"
#include "core/schedule.hpp"
#include "precision/scalars.hpp"
#include "support/test_support.hpp"

namespace carrier {
namespace {

// ---------------------------------------------------------------------------------------
// The reference number type.

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
using Ref = Mpfr;
class RefScope {
 public:
  RefScope() : scope_(1024) {}

 private:
  MpfrPrecisionScope scope_;
};
template <class T>
Ref ToRef(const T& x) {
  if constexpr (std::is_same_v<T, Mpfr>) {
    return x;
  } else {
    return Ref(static_cast<double>(x));
  }
}
#else
using Ref = long double;
struct RefScope {
  RefScope() {}  // user-provided: a scope object, not an unused variable
};
template <class T>
Ref ToRef(const T& x) {
  return static_cast<long double>(static_cast<double>(x));
}
#endif

Ref R(double x) { return Ref(x); }
double ToD(const Ref& x) { return static_cast<double>(x); }
Ref RAbs(const Ref& x) {
  using std::abs;
  return abs(x);
}
Ref RExp(const Ref& x) {
  using std::exp;
  return exp(x);
}
Ref RLog(const Ref& x) {
  using std::log;
  return log(x);
}
Ref RSqrt(const Ref& x) {
  using std::sqrt;
  return sqrt(x);
}
bool RIsNaN(const Ref& x) { return std::isnan(ToD(x)); }

// ---------------------------------------------------------------------------------------
// Per-scalar context and the comparison helper.

struct Context {
  std::string type;
  double u = 0;     // unit roundoff to use in bounds (2u for directed / stochastic modes)
  double tiny = 0;  // smallest positive subnormal (0: none)
  std::uint64_t seed = 0;
  test::Rng rng{0};
  // Per carrier: the worst err / tol seen, where, and with which tolerance.
  double worst = 0;
  std::string worst_where;
  long checks = 0;
  long failures = 0;

  void Begin(std::uint64_t s) {
    worst = 0;
    worst_where = "-";
    checks = 0;
    failures = 0;
    seed = s;
    rng = test::Rng(s);
  }
  void End(const char* carrier) {
    std::cout << "matrix " << std::left << std::setw(26) << type << " " << std::setw(14) << carrier
              << " u=" << std::setprecision(3) << u << "  worst err/tol=" << worst << " at "
              << worst_where << "  (" << checks << " checks)\n"
              << std::setprecision(6);
    INFO("type " << type << " carrier " << carrier << " seed " << seed);
    CHECK(failures == 0);
  }
};

int PairwiseDepth(std::size_t n) {
  int d = 0;
  while ((std::size_t{1} << d) < n) ++d;
  return d + 1;
}

// got vs want within tol; NaN wants NaN.
void Expect(Context& ctx, const std::string& where, const Ref& got, const Ref& want, double tol,
            const std::string& inputs) {
  ++ctx.checks;
  if (RIsNaN(want) || RIsNaN(got)) {
    if (RIsNaN(want) && RIsNaN(got)) return;
    ++ctx.failures;
    FAIL_CHECK(ctx.type << " " << where << ": got " << ToD(got) << " want " << ToD(want)
                        << " (seed " << ctx.seed << ", inputs " << inputs << ")");
    return;
  }
  const double err = ToD(RAbs(got - want));
  const double ratio = tol > 0 ? err / tol : (err == 0 ? 0 : INFINITY);
  if (ratio >= ctx.worst) {
    ctx.worst = ratio;
    std::ostringstream os;
    os << where << " (tol " << std::setprecision(3) << tol << ")";
    ctx.worst_where = os.str();
  }
  if (!(ratio <= 1)) {
    ++ctx.failures;
    FAIL_CHECK(ctx.type << " " << where << ": got " << std::setprecision(17) << ToD(got) << " want "
                        << ToD(want) << " err " << err << " tol " << tol << " (seed " << ctx.seed
                        << ", inputs " << inputs << ")");
  }
}

template <class T>
std::string Show(const std::vector<double>& x) {
  return test::Join(x, 8);
}

// The results of x through Fold and ReplayOracle(pairwise), and ReplayOracle(seq) == Fold bitwise;
// each path from the same stochastic stream. Finalize runs here too, in the scalar's own context
// (Mpfr's working precision), before any reference is computed. Returns {fold, pairwise}.
template <class C>
std::array<typename C::Result, 2> Paths(Context& ctx, const std::vector<typename C::Input>& x,
                                        const std::string& label) {
  const std::span<const typename C::Input> span(x);
  typename C::State fold, seq, pairwise;
  {
    StochasticSeedScope s(ctx.seed);
    fold = Fold<C>(x.data(), x.size());
  }
  {
    StochasticSeedScope s(ctx.seed);
    seq = ReplayOracle<C>(BuildTree(Schedule::Seq(), x.size()), span);
  }
  {
    StochasticSeedScope s(ctx.seed);
    pairwise = ReplayOracle<C>(BuildTree(Schedule::Pairwise(), x.size()), span);
  }
  ++ctx.checks;
  if (!StatesBitEqual<C>(fold, seq)) {
    ++ctx.failures;
    FAIL_CHECK(ctx.type << " " << C::kName << " " << label
                        << ": ReplayOracle(seq) differs from Fold (seed " << ctx.seed << ")");
  }
  StochasticSeedScope s(ctx.seed + 1);
  std::array<typename C::Result, 2> results = {C::Finalize(fold), C::Finalize(pairwise)};
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  // Every Mpfr result must carry the run's precision (no constant from a wider scope).
  if constexpr (std::is_same_v<typename C::Scalar, Mpfr>) {
    for (const auto& r : results)
      for (const Mpfr& v : C::Components(r)) {
        ++ctx.checks;
        if (v.Precision() != MpfrWorkingPrecision()) {
          ++ctx.failures;
          FAIL_CHECK(ctx.type << " " << C::kName << " " << label << ": result has " << v.Precision()
                              << " bits");
        }
      }
  }
#endif
  return results;
}

constexpr std::size_t kSizes[] = {1, 5, 32};

std::string Where(const char* path, std::size_t n, const char* what) {
  return std::string(path) + " n=" + std::to_string(n) + " " + what;
}

// ---------------------------------------------------------------------------------------
// The carriers, each against its reference.

template <class T>
void RunSum(Context& ctx) {
  ctx.Begin(101);
  for (std::size_t n : kSizes) {
    std::vector<T> x;
    std::vector<double> xs;
    for (std::size_t i = 0; i < n; ++i) {
      x.push_back(T(ctx.rng.Uniform(-1, 1)));
      xs.push_back(static_cast<double>(x.back()));
    }
    const auto results = Paths<Sum<T>>(ctx, x, "n=" + std::to_string(n));
    // The reference at 1024 bits, after the scalar computations: a Mpfr scalar must not
    // pick up the reference's working precision.
    RefScope scope;
    Ref s = R(0);
    double abs_sum = 0;
    for (double v : xs) {
      s = s + R(v);
      abs_sum += std::fabs(v);
    }
    const int depths[] = {static_cast<int>(n), PairwiseDepth(n)};
    const char* names[] = {"fold", "pairwise"};
    for (int p = 0; p < 2; ++p) {
      const double tol = 2 * (depths[p] + 1) * ctx.u * abs_sum + 2 * n * ctx.tiny;
      Expect(ctx, Where(names[p], n, "sum"), ToRef(results[p]), s, tol, Show<T>(xs));
    }
  }
  ctx.End("sum");
}

template <class T>
void RunCompensated(Context& ctx, bool round_to_nearest) {
  ctx.Begin(102);
  for (std::size_t n : kSizes) {
    std::vector<T> x;
    std::vector<double> xs;
    for (std::size_t i = 0; i < n; ++i) {
      x.push_back(T(ctx.rng.Uniform(-1, 1)));
      xs.push_back(static_cast<double>(x.back()));
    }
    const auto results = Paths<Compensated<T>>(ctx, x, "n=" + std::to_string(n));
    // The reference at 1024 bits, after the scalar computations: a Mpfr scalar must not
    // pick up the reference's working precision.
    RefScope scope;
    Ref s = R(0);
    double abs_sum = 0;
    for (double v : xs) {
      s = s + R(v);
      abs_sum += std::fabs(v);
    }
    const int depths[] = {static_cast<int>(n), PairwiseDepth(n)};
    const char* names[] = {"fold", "pairwise"};
    for (int p = 0; p < 2; ++p) {
      const double d = depths[p] + 1;
      // Neumaier's bound needs error-free TwoSum (round to nearest); otherwise the plain sum's.
      const double tol = round_to_nearest
                             ? 2 * (ctx.u * std::fabs(ToD(s)) + 2 * d * d * ctx.u * ctx.u * abs_sum)
                             : 2 * d * ctx.u * abs_sum;
      Expect(ctx, Where(names[p], n, "kahan"), ToRef(results[p]), s, tol + 2 * n * ctx.tiny,
             Show<T>(xs));
    }
  }
  ctx.End("kahan");
}

template <class T>
void RunMaxAndArgMax(Context& ctx) {
  ctx.Begin(103);
  for (std::size_t n : kSizes) {
    std::vector<T> x;
    std::vector<IndexedValue<T>> xi;
    std::vector<double> xs;
    for (std::size_t i = 0; i < n; ++i) {
      x.push_back(T(ctx.rng.Uniform(-1, 1)));
      xs.push_back(static_cast<double>(x.back()));
      xi.push_back({x.back(), static_cast<std::int64_t>(i)});
    }
    std::size_t best = 0;
    for (std::size_t i = 1; i < n; ++i)
      if (xs[i] > xs[best]) best = i;
    const auto m = Paths<Max<T>>(ctx, x, "n=" + std::to_string(n));
    const auto a = Paths<ArgMax<T>>(ctx, xi, "n=" + std::to_string(n));
    // The reference at 1024 bits, after the scalar computations: a Mpfr scalar must not
    // pick up the reference's working precision.
    RefScope scope;
    const char* names[] = {"fold", "pairwise"};
    for (int p = 0; p < 2; ++p) {
      // Max and ArgMax select, so they are exact: tolerance 0.
      Expect(ctx, Where(names[p], n, "max"), ToRef(m[p]), R(xs[best]), 0, Show<T>(xs));
      const auto r = a[p];
      Expect(ctx, Where(names[p], n, "argmax value"), ToRef(r.value), R(xs[best]), 0, Show<T>(xs));
      ++ctx.checks;
      if (r.index != static_cast<std::int64_t>(best)) {
        ++ctx.failures;
        FAIL_CHECK(ctx.type << " argmax " << names[p] << " n=" << n << ": index " << r.index
                            << " want " << best << " inputs " << Show<T>(xs));
      }
    }
  }
  ctx.End("max+argmax");
}

template <class T>
void RunOnlineSoftmax(Context& ctx) {
  ctx.Begin(104);
  for (std::size_t n : kSizes) {
    std::vector<T> x;
    std::vector<double> xs;
    for (std::size_t i = 0; i < n; ++i) {
      x.push_back(T(ctx.rng.Uniform(-3, 3)));
      xs.push_back(static_cast<double>(x.back()));
    }
    const auto results = Paths<OnlineSoftmax<T>>(ctx, x, "n=" + std::to_string(n));
    // The reference at 1024 bits, after the scalar computations: a Mpfr scalar must not
    // pick up the reference's working precision.
    RefScope scope;
    double big = -INFINITY;
    for (double v : xs) big = std::max(big, v);
    Ref d = R(0), weighted = R(0);
    for (double v : xs) {
      const Ref e = RExp(R(v) - R(big));
      d = d + e;
      weighted = weighted + e * R(v);
    }
    const Ref lse = R(big) + RLog(d);
    const double spread = big - ToD(weighted / d);  // M - sum w_i x_i
    const int depths[] = {static_cast<int>(n), PairwiseDepth(n)};
    const char* names[] = {"fold", "pairwise"};
    for (int p = 0; p < 2; ++p) {
      // Blanchard-Higham-Higham's shifted bound on a tree (online_softmax.hpp), u_e = 2u.
      const double u = ctx.u;
      const double rho = (depths[p] + 2) * 4 * u + u * spread;
      const double tol =
          2 * (u * std::fabs(ToD(lse)) + (1 + u) * (rho + 2 * u * std::fabs(ToD(RLog(d))))) +
          2 * n * ctx.tiny;
      Expect(ctx, Where(names[p], n, "lse"), ToRef(results[p].lse), lse, tol, Show<T>(xs));
    }
  }
  ctx.End("lse");
}

template <class T>
void RunWelford(Context& ctx) {
  ctx.Begin(105);
  for (std::size_t n : kSizes) {
    std::vector<T> x;
    std::vector<double> xs;
    for (std::size_t i = 0; i < n; ++i) {
      x.push_back(T(ctx.rng.Uniform(1, 2)));
      xs.push_back(static_cast<double>(x.back()));
    }
    const auto results = Paths<Welford<T>>(ctx, x, "n=" + std::to_string(n));
    // The reference at 1024 bits, after the scalar computations: a Mpfr scalar must not
    // pick up the reference's working precision.
    RefScope scope;
    Ref sum = R(0);
    double abs_mean = 0;
    for (double v : xs) {
      sum = sum + R(v);
      abs_mean += std::fabs(v) / n;
    }
    const Ref mean = sum / R(static_cast<double>(n));
    Ref m2 = R(0);
    for (double v : xs) m2 = m2 + (R(v) - mean) * (R(v) - mean);
    const Ref var_pop = m2 / R(static_cast<double>(n));
    const Ref var_sample = n < 2 ? R(NAN) : m2 / R(static_cast<double>(n - 1));
    const double m2d = ToD(m2);
    const double kappa = m2d > 0 ? std::sqrt(1 + n * ToD(mean) * ToD(mean) / m2d) : 1;
    const int depths[] = {static_cast<int>(n), PairwiseDepth(n)};
    const char* names[] = {"fold", "pairwise"};
    for (int p = 0; p < 2; ++p) {
      const auto r = results[p];
      const double d = depths[p] + 2;
      // welford.hpp's stated tolerance (Chan, Golub & LeVeque, Table 1), times 2.
      const double tol_mean = 2 * 4 * d * ctx.u * abs_mean + 2 * n * ctx.tiny;
      const double tol_var =
          2 * 8 * d * kappa * ctx.u * m2d / std::max<double>(1, n - 1) + 2 * n * ctx.tiny;
      Expect(ctx, Where(names[p], n, "mean"), ToRef(r.mean), mean, tol_mean, Show<T>(xs));
      Expect(ctx, Where(names[p], n, "var_population"), ToRef(r.var_population), var_pop, tol_var,
             Show<T>(xs));
      Expect(ctx, Where(names[p], n, "var_sample"), ToRef(r.var_sample), var_sample, tol_var,
             Show<T>(xs));
    }
  }
  ctx.End("welford");
}

template <class T>
void RunScaledNorm2(Context& ctx) {
  ctx.Begin(106);
  for (std::size_t n : kSizes) {
    std::vector<T> x;
    std::vector<double> xs;
    for (std::size_t i = 0; i < n; ++i) {
      x.push_back(T(ctx.rng.Uniform(-1, 1)));
      xs.push_back(static_cast<double>(x.back()));
    }
    const auto results = Paths<ScaledNorm2<T>>(ctx, x, "n=" + std::to_string(n));
    // The reference at 1024 bits, after the scalar computations: a Mpfr scalar must not
    // pick up the reference's working precision.
    RefScope scope;
    Ref ssq = R(0);
    for (double v : xs) ssq = ssq + R(v) * R(v);
    const Ref norm = RSqrt(ssq);
    const int depths[] = {static_cast<int>(n), PairwiseDepth(n)};
    const char* names[] = {"fold", "pairwise"};
    for (int p = 0; p < 2; ++p) {
      // scaled_norm2.hpp: about (5D/2 + 2)u relative, plus underflow terms; times 2.
      const double tol = (5.0 * depths[p] + 4) * ctx.u * ToD(norm) + 4 * n * ctx.tiny;
      Expect(ctx, Where(names[p], n, "norm2"), ToRef(results[p]), norm, tol, Show<T>(xs));
    }
  }
  ctx.End("norm2");
}

template <class T>
void RunDot(Context& ctx) {
  ctx.Begin(107);
  for (std::size_t n : kSizes) {
    std::vector<ValuePair<T>> x;
    std::vector<double> xs;
    for (std::size_t i = 0; i < n; ++i) {
      x.push_back({T(ctx.rng.Uniform(-1, 1)), T(ctx.rng.Uniform(-1, 1))});
      xs.push_back(static_cast<double>(x.back().a));
      xs.push_back(static_cast<double>(x.back().b));
    }
    const auto results = Paths<Dot<T>>(ctx, x, "n=" + std::to_string(n));
    // The reference at 1024 bits, after the scalar computations: a Mpfr scalar must not
    // pick up the reference's working precision.
    RefScope scope;
    Ref s = R(0);
    double abs_sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
      s = s + R(xs[2 * i]) * R(xs[2 * i + 1]);
      abs_sum += std::fabs(xs[2 * i] * xs[2 * i + 1]);
    }
    const int depths[] = {static_cast<int>(n), PairwiseDepth(n)};
    const char* names[] = {"fold", "pairwise"};
    for (int p = 0; p < 2; ++p) {
      const double tol = 2 * (depths[p] + 2) * ctx.u * abs_sum + 2 * n * ctx.tiny;
      Expect(ctx, Where(names[p], n, "dot"), ToRef(results[p]), s, tol, Show<T>(xs));
    }
  }
  ctx.End("dot");
}

template <class T>
void RunAffine(Context& ctx) {
  ctx.Begin(108);
  for (std::size_t n : kSizes) {
    std::vector<ValuePair<T>> x;
    std::vector<double> xs;
    for (std::size_t i = 0; i < n; ++i) {
      const double a = ctx.rng.Uniform(0.9, 1.1) * ((ctx.rng.Next() & 1) ? 1 : -1);
      x.push_back({T(a), T(ctx.rng.Uniform(-1, 1))});
      xs.push_back(static_cast<double>(x.back().a));
      xs.push_back(static_cast<double>(x.back().b));
    }
    const auto results = Paths<Affine<T>>(ctx, x, "n=" + std::to_string(n));
    // The reference at 1024 bits, after the scalar computations: a Mpfr scalar must not
    // pick up the reference's working precision.
    RefScope scope;
    // h -> a h + b composed in order: A = prod a, B = sum_k (prod_{j>k} a_j) b_k.
    Ref a_all = R(1), b_all = R(0);
    double b_scale = 0, partial_max = 1;
    for (std::size_t i = 0; i < n; ++i) {
      a_all = R(xs[2 * i]) * a_all;
      b_all = R(xs[2 * i]) * b_all + R(xs[2 * i + 1]);
    }
    // sum_k |prod_{j>k} a_j| |b_k|, and the largest partial product (for underflow slack).
    for (std::size_t k = 0; k < n; ++k) {
      double prod = 1;
      for (std::size_t j = k + 1; j < n; ++j) prod *= std::fabs(xs[2 * j]);
      b_scale += prod * std::fabs(xs[2 * k + 1]);
      partial_max = std::max(partial_max, prod);
    }
    const int depths[] = {static_cast<int>(n), PairwiseDepth(n)};
    const char* names[] = {"fold", "pairwise"};
    for (int p = 0; p < 2; ++p) {
      const auto r = results[p];
      const double slack = 2 * n * ctx.tiny * partial_max;
      const double tol_a = 2 * (n + 2) * ctx.u * std::fabs(ToD(a_all)) + slack;
      const double tol_b = 2 * (n + depths[p] + 2) * ctx.u * b_scale + slack;
      Expect(ctx, Where(names[p], n, "a"), ToRef(r.a), a_all, tol_a, Show<T>(xs));
      Expect(ctx, Where(names[p], n, "b"), ToRef(r.b), b_all, tol_b, Show<T>(xs));
    }
  }
  ctx.End("affine");
}

constexpr std::size_t kDv = 3;

template <class T, FlashVariant V>
void RunFlashRow(Context& ctx) {
  using C = FlashRow<T, kDv, V>;
  ctx.Begin(V == FlashVariant::kFA2 ? 109 : 110);
  for (std::size_t n : kSizes) {
    std::vector<std::array<T, kDv>> v(n);
    std::vector<FlashInput<T>> x;
    std::vector<double> scores, vs;
    for (std::size_t i = 0; i < n; ++i) {
      const T s(ctx.rng.Uniform(-3, 3));
      for (std::size_t j = 0; j < kDv; ++j) {
        v[i][j] = T(ctx.rng.Uniform(-1, 1));
        vs.push_back(static_cast<double>(v[i][j]));
      }
      x.push_back({s, v[i].data()});
      scores.push_back(static_cast<double>(s));
    }
    const auto results = Paths<C>(ctx, x, "n=" + std::to_string(n));
    // The reference at 1024 bits, after the scalar computations: a Mpfr scalar must not
    // pick up the reference's working precision.
    RefScope scope;
    double big = -INFINITY;
    for (double s : scores) big = std::max(big, s);
    std::vector<Ref> w;
    Ref d = R(0);
    for (double s : scores) {
      w.push_back(RExp(R(s) - R(big)));
      d = d + w.back();
    }
    std::array<Ref, kDv> o;
    for (std::size_t j = 0; j < kDv; ++j) {
      Ref acc = R(0);
      for (std::size_t i = 0; i < n; ++i) acc = acc + w[i] * R(vs[i * kDv + j]);
      o[j] = acc / d;
    }
    const int depths[] = {static_cast<int>(n), PairwiseDepth(n)};
    const char* names[] = {"fold", "pairwise"};
    for (int p = 0; p < 2; ++p) {
      const auto r = results[p];
      for (std::size_t j = 0; j < kDv; ++j) {
        // flash_row.hpp's first-order bound with u_e = 2u and 8u per combine (FA1's 6u + u_e
        // covers FA2's 2u + u_e), times 2.
        const double u = ctx.u;
        double sum = 0;
        for (std::size_t i = 0; i < n; ++i) {
          const double wi = ToD(w[i] / d);
          sum += wi * (std::fabs(vs[i * kDv + j]) + std::fabs(ToD(o[j]))) *
                 ((depths[p] + 1) * 10 * u + u + u * (big - scores[i]));
        }
        const double tol = 2 * (u * std::fabs(ToD(o[j])) + sum) + 4 * n * ctx.tiny;
        Expect(ctx, Where(names[p], n, ("o" + std::to_string(j)).c_str()), ToRef(r.o[j]), o[j], tol,
               Show<T>(scores));
      }
    }
  }
  ctx.End(V == FlashVariant::kFA2 ? "attention" : "attention_fa1");
}

// ---------------------------------------------------------------------------------------
// Special values: NaN in -> NaN out, empty -> the documented identity result.

template <class C>
std::vector<typename C::Result> FinalResults(const std::vector<typename C::Input>& x) {
  const std::span<const typename C::Input> span(x);
  return {C::Finalize(Fold<C>(x.data(), x.size())),
          C::Finalize(ReplayOracle<C>(BuildTree(Schedule::Pairwise(), x.size()), span))};
}

template <class T>
void RunSpecials(Context& ctx) {
  using Tr = ScalarTraits<T>;
  ctx.Begin(111);
  const T nan = Tr::QuietNaN(), inf = Tr::Infinity();
  auto expect = [&](bool ok, const std::string& what) {
    ++ctx.checks;
    if (!ok) {
      ++ctx.failures;
      FAIL_CHECK(ctx.type << " special values: " << what);
    }
  };
  auto bits = [](const T& a, const T& b) { return Tr::BitEqual(a, b); };
  const std::vector<T> empty;
  for (std::size_t pos : {std::size_t{0}, std::size_t{2}, std::size_t{4}}) {
    std::vector<T> x = {T(0.5), T(-1.0), T(0.25), T(2.0), T(-0.75)};
    x[pos] = nan;
    const std::string at = " (NaN at " + std::to_string(pos) + ")";
    for (const auto& r : FinalResults<Sum<T>>(x)) expect(Tr::IsNaN(r), "sum" + at);
    for (const auto& r : FinalResults<Compensated<T>>(x)) expect(Tr::IsNaN(r), "kahan" + at);
    for (const auto& r : FinalResults<Max<T>>(x)) expect(Tr::IsNaN(r), "max" + at);
    for (const auto& r : FinalResults<OnlineSoftmax<T>>(x)) expect(Tr::IsNaN(r.lse), "lse" + at);
    for (const auto& r : FinalResults<ScaledNorm2<T>>(x)) expect(Tr::IsNaN(r), "norm2" + at);
    for (const auto& r : FinalResults<Welford<T>>(x))
      expect(Tr::IsNaN(r.mean) && Tr::IsNaN(r.var_population) && Tr::IsNaN(r.var_sample),
             "welford" + at);
    std::vector<IndexedValue<T>> xi;
    std::vector<ValuePair<T>> pairs;
    std::vector<std::array<T, kDv>> v(x.size());
    std::vector<FlashInput<T>> fx;
    for (std::size_t i = 0; i < x.size(); ++i) {
      xi.push_back({x[i], static_cast<std::int64_t>(i)});
      pairs.push_back({x[i], T(1.0)});
      for (std::size_t j = 0; j < kDv; ++j) v[i][j] = T(0.5);
      fx.push_back({x[i], v[i].data()});
    }
    for (const auto& r : FinalResults<ArgMax<T>>(xi))
      expect(Tr::IsNaN(r.value) && r.index == static_cast<std::int64_t>(pos), "argmax" + at);
    for (const auto& r : FinalResults<Dot<T>>(pairs)) expect(Tr::IsNaN(r), "dot" + at);
    for (const auto& r : FinalResults<Affine<T>>(pairs))
      expect(Tr::IsNaN(Affine<T>::Apply(r, Tr::One())), "affine" + at);
    for (const auto& r : FinalResults<FlashRow<T, kDv, FlashVariant::kFA2>>(fx))
      expect(Tr::IsNaN(r.o[0]) && Tr::IsNaN(r.o[1]) && Tr::IsNaN(r.o[2]), "attention" + at);
    for (const auto& r : FinalResults<FlashRow<T, kDv, FlashVariant::kFA1>>(fx))
      expect(Tr::IsNaN(r.o[0]) && Tr::IsNaN(r.o[2]), "attention_fa1" + at);
  }
  // Empty input: Finalize(Identity()), with the documented values.
  for (const auto& r : FinalResults<Sum<T>>(empty)) expect(bits(r, Tr::Zero()), "sum empty");
  for (const auto& r : FinalResults<Compensated<T>>(empty))
    expect(bits(r, Tr::Zero()), "kahan empty");
  for (const auto& r : FinalResults<Max<T>>(empty)) expect(bits(r, -inf), "max empty");
  for (const auto& r : FinalResults<OnlineSoftmax<T>>(empty))
    expect(bits(r.lse, -inf), "lse empty");
  for (const auto& r : FinalResults<ScaledNorm2<T>>(empty))
    expect(bits(r, Tr::Zero()), "norm2 empty");
  for (const auto& r : FinalResults<Welford<T>>(empty))
    expect(r.n == 0 && Tr::IsNaN(r.mean) && Tr::IsNaN(r.var_population), "welford empty");
  for (const auto& r : FinalResults<ArgMax<T>>({}))
    expect(bits(r.value, -inf) && r.index == -1, "argmax empty");
  for (const auto& r : FinalResults<Dot<T>>({})) expect(bits(r, Tr::Zero()), "dot empty");
  for (const auto& r : FinalResults<Affine<T>>({}))
    expect(bits(r.a, Tr::One()) && bits(r.b, Tr::Zero()), "affine empty");
  for (const auto& r : FinalResults<FlashRow<T, kDv, FlashVariant::kFA2>>({}))
    expect(Tr::IsNaN(r.o[0]), "attention empty");
  // All -inf: log-sum-exp -inf, never NaN; a +inf wins max and lse.
  {
    const std::vector<T> all_neg_inf = {-inf, -inf, -inf};
    for (const auto& r : FinalResults<OnlineSoftmax<T>>(all_neg_inf))
      expect(bits(r.lse, -inf), "lse all -inf");
    const std::vector<T> with_inf = {T(1.0), inf, T(-2.0)};
    for (const auto& r : FinalResults<OnlineSoftmax<T>>(with_inf))
      expect(bits(r.lse, inf), "lse with +inf");
    for (const auto& r : FinalResults<Max<T>>(with_inf)) expect(bits(r, inf), "max with +inf");
    for (const auto& r : FinalResults<Sum<T>>(with_inf)) expect(bits(r, inf), "sum with +inf");
  }
  ctx.End("specials");
}

// ---------------------------------------------------------------------------------------

template <class T>
void RunAll(const std::string& type, double u, double tiny, bool round_to_nearest) {
  Context ctx;
  ctx.type = type;
  ctx.u = round_to_nearest ? u : 2 * u;
  ctx.tiny = tiny;
  RunSum<T>(ctx);
  RunCompensated<T>(ctx, round_to_nearest);
  RunMaxAndArgMax<T>(ctx);
  RunOnlineSoftmax<T>(ctx);
  RunWelford<T>(ctx);
  RunScaledNorm2<T>(ctx);
  RunDot<T>(ctx);
  RunAffine<T>(ctx);
  RunFlashRow<T, FlashVariant::kFA2>(ctx);
  RunFlashRow<T, FlashVariant::kFA1>(ctx);
  RunSpecials<T>(ctx);
}

// EmulatedOracle through the dynamic tag: one instantiation of every carrier serves every format
// and mode (the arithmetic is the same code as with a static tag; only where the format comes
// from differs), which keeps this file's compile time reasonable.
void RunDynamic(const Format& f, Rounding r) {
  EmulationScope scope(f, r, /*seed=*/1234);
  const bool nearest = r == Rounding::kNearestEven || r == Rounding::kNearestAway;
  RunAll<EmulatedOracleDynamic>(f.name + "/" + std::string(RoundingName(r)), f.UnitRoundoff(),
                                f.MinSubnormal(), nearest);
}

template <class Tag, Rounding R>
void RunStatic() {
  const Format& f = Tag::Get();
  const bool nearest = R == Rounding::kNearestEven || R == Rounding::kNearestAway;
  RunAll<EmulatedOracle<Tag, R>>("static " + f.name + "/" + std::string(RoundingName(R)),
                                 f.UnitRoundoff(), f.MinSubnormal(), nearest);
}

TEST_CASE("carrier matrix builtin float and double", "[fast][matrix]") {
  RunAll<float>("float", 0x1p-24, std::numeric_limits<float>::denorm_min(), true);
  RunAll<double>("double", 0x1p-53, std::numeric_limits<double>::denorm_min(), true);
}

TEST_CASE("carrier matrix Half and BFloat16", "[fast][matrix]") {
  RunAll<Half>("Half", 0x1p-11, 0x1p-24, true);
  RunAll<BFloat16>("BFloat16", 0x1p-8, 0x1p-133, true);
}

TEST_CASE("carrier matrix emulated fp8", "[fast][matrix]") {
  RunDynamic(Fp8E4M3(), Rounding::kNearestEven);
  RunDynamic(Fp8E4M3(), Rounding::kDown);
  RunDynamic(Fp8E5M2(), Rounding::kNearestEven);
  RunDynamic(Fp8E5M2(), Rounding::kUp);
}

TEST_CASE("carrier matrix emulated fp16 and bf16", "[fast][matrix]") {
  RunDynamic(Fp16(), Rounding::kNearestEven);
  RunDynamic(Fp16(), Rounding::kTowardZero);
  RunDynamic(Fp16(), Rounding::kStochastic);
  RunDynamic(BF16(), Rounding::kNearestEven);
  RunDynamic(BF16(), Rounding::kDown);
}

TEST_CASE("carrier matrix emulated tf32 and fp32", "[fast][matrix]") {
  RunDynamic(TF32(), Rounding::kNearestEven);
  RunDynamic(TF32(), Rounding::kUp);
  RunDynamic(Fp32(), Rounding::kNearestEven);
  RunDynamic(Fp32(), Rounding::kTowardZero);
}

TEST_CASE("carrier matrix emulated custom format and static tags", "[fast][matrix]") {
  RunDynamic(ParseFormat("custom:p=9,emin=-20,emax=20"), Rounding::kToOdd);
  RunDynamic(ParseFormat("custom:p=9,emin=-20,emax=20"), Rounding::kNearestAway);
  RunStatic<Fp8E4M3Tag, Rounding::kNearestEven>();
  RunStatic<Fp16Tag, Rounding::kStochastic>();
}

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
TEST_CASE("carrier matrix Mpfr 64 and 256 bits", "[fast][matrix]") {
  for (long bits : {64L, 256L}) {
    MpfrPrecisionScope scope(bits);
    RunAll<Mpfr>("Mpfr " + std::to_string(bits), std::ldexp(1.0, -static_cast<int>(bits)), 0, true);
  }
}
#endif

// EmulatedOracle with rne rounds every operation exactly as IEEE float, Half and BFloat16 do, so on
// carriers without exp (whose libm differs) the bits must agree.
template <template <class> class C, class Native, class E>
void CompareBits(const char* name, const char* carrier, const MergeTree& tree,
                 const std::vector<typename C<Native>::Input>& xn,
                 const std::vector<typename C<E>::Input>& xe, long& compared) {
  const auto native = C<Native>::Components(ReplayOracleResult<C<Native>>(tree, std::span(xn)));
  const auto emulated = C<E>::Components(ReplayOracleResult<C<E>>(tree, std::span(xe)));
  for (std::size_t k = 0; k < native.size(); ++k) {
    ++compared;
    const double a = static_cast<double>(native[k]), b = emulated[k].Value();
    if (!ScalarTraits<double>::BitEqual(a, b))
      FAIL_CHECK(name << " " << carrier << " n=" << tree.n << " component " << k << ": " << a
                      << " vs " << b);
  }
}

template <class Native, class E>
void CheckSameBits(const char* name) {
  test::Rng rng(77);
  long compared = 0;
  for (std::size_t n : {std::size_t{3}, std::size_t{17}, std::size_t{64}}) {
    std::vector<Native> xn;
    std::vector<E> xe;
    std::vector<ValuePair<Native>> pn;
    std::vector<ValuePair<E>> pe;
    for (std::size_t i = 0; i < n; ++i) {
      const double v = rng.Uniform(-2, 2), w = rng.Uniform(0.5, 1.5);
      xn.push_back(Native(v));
      xe.push_back(E(v));
      pn.push_back({Native(w), Native(v)});
      pe.push_back({E(w), E(v)});
    }
    const MergeTree tree = BuildTree(Schedule::Pairwise(), n);
    CompareBits<Sum, Native, E>(name, "sum", tree, xn, xe, compared);
    CompareBits<Compensated, Native, E>(name, "kahan", tree, xn, xe, compared);
    CompareBits<Max, Native, E>(name, "max", tree, xn, xe, compared);
    CompareBits<Welford, Native, E>(name, "welford", tree, xn, xe, compared);
    CompareBits<ScaledNorm2, Native, E>(name, "norm2", tree, xn, xe, compared);
    CompareBits<Dot, Native, E>(name, "dot", tree, pn, pe, compared);
    CompareBits<Affine, Native, E>(name, "affine", tree, pn, pe, compared);
  }
  std::cout << "matrix " << name << ": " << compared << " components compared bit for bit\n";
}

TEST_CASE("carrier matrix emulated rne equals native float Half BFloat16", "[fast][matrix]") {
  CheckSameBits<float, EmulatedOracle<Fp32Tag>>("fp32/rne vs float");
  CheckSameBits<Half, EmulatedOracle<Fp16Tag>>("fp16/rne vs Half");
  CheckSameBits<BFloat16, EmulatedOracle<BF16Tag>>("bf16/rne vs BFloat16");
}

}  // namespace
}  // namespace carrier
