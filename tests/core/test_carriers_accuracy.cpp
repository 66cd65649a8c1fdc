// Every carrier against an oracle, through three merge orders (the sequential Fold, a pairwise
// tree of lifts, and blocked tiles of 16 merged pairwise), with the error asserted against the
// bound in the carrier's contract: a rigorous one where the contract states one (Compensated,
// Dot, ScaledNorm2, Affine; Max and ArgMax are exact), the stated tolerance otherwise
// (OnlineSoftmax, Welford, FlashRow). The worst measured ratio error / bound is printed.
//
// Oracles: exact 128-bit fixed point for Compensated (its double error is far below what long
// double resolves), long double elsewhere, with its own rounding error added to the bound
// where it is not negligible.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/carrier.hpp"
#include "core/carriers/all.hpp"
#include "support/test_support.hpp"

namespace carrier {
namespace {

using test::Rng;
using LD = long double;

using test::ScalarName;

template <class T>
constexpr LD UnitRoundoff() {
  return LD(std::numeric_limits<T>::epsilon()) / 2;
}

// Unit roundoff of the long double oracle, charged per operation it performs.
constexpr LD kOracleU = LD(std::numeric_limits<LD>::epsilon()) / 2;

LD Gamma(LD k, LD u) { return k * u / (1 - k * u); }

int CeilLog2(std::size_t n) {
  int k = 0;
  while ((std::size_t{1} << k) < n) ++k;
  return k;
}

constexpr std::size_t kTile = 16;

using test::Pairwise;

template <class C>
typename C::State PairwiseStates(const std::vector<typename C::State>& s, std::size_t lo,
                                 std::size_t hi) {
  if (hi == lo) return C::Identity();
  if (hi - lo == 1) return s[lo];
  const std::size_t mid = lo + (hi - lo) / 2;
  return C::Combine(PairwiseStates<C>(s, lo, mid), PairwiseStates<C>(s, mid, hi));
}

// Tiles of kTile (tile lift where the carrier has one, a fold otherwise), merged pairwise.
template <class C>
typename C::State Blocked(const typename C::Input* x, std::size_t n) {
  std::vector<typename C::State> tiles;
  for (std::size_t i = 0; i < n; i += kTile) {
    const std::size_t len = std::min(kTile, n - i);
    if constexpr (HasTileLift<C>) {
      tiles.push_back(C::LiftTile(x + i, len));
    } else {
      tiles.push_back(Fold<C>(x + i, len));
    }
  }
  return PairwiseStates<C>(tiles, 0, tiles.size());
}

struct PathResult {
  const char* name;
  int depth;  // max number of combines (or pushes, or tile additions) a leaf passes through
};

// Runs f(name, depth, state) on the three paths.
template <class C, class F>
void ForEachPath(const std::vector<typename C::Input>& x, F f) {
  const std::size_t n = x.size();
  f(PathResult{"seq", static_cast<int>(n)}, Fold<C>(x.data(), n));
  f(PathResult{"pairwise", CeilLog2(n)}, Pairwise<C>(x.data(), n));
  const std::size_t tiles = (n + kTile - 1) / kTile;
  f(PathResult{"blocked:16", static_cast<int>(std::min(n, kTile)) + CeilLog2(tiles)},
    Blocked<C>(x.data(), n));
}

const std::vector<std::size_t> kSizes = {1, 2, 3, 7, 16, 33, 100, 257, 1000};

// Prints and records the worst ratio seen.
struct Worst {
  explicit Worst(std::string l) : label(std::move(l)) {}
  std::string label;
  double ratio = 0;
  std::string where;
  void See(double r, const std::string& w) {
    if (r > ratio) {
      ratio = r;
      where = w;
    }
  }
  ~Worst() { std::cout << label << ": worst error / bound = " << ratio << " (" << where << ")\n"; }
};

// ---- Compensated: exact fixed-point oracle ----------------------------------------------

__extension__ typedef __int128 Int128;
// Inputs are multiples of 2^-100 below 2^17, so n <= 1024 of them sum exactly in 128 bits.
constexpr int kFixedShift = 100;

// A random value with a full mantissa and exponent in [emin, emax], on the 2^-100 grid.
template <class T>
T GridValue(Rng& rng, int emin, int emax) {
  constexpr int p = std::numeric_limits<T>::digits;
  const auto mant = static_cast<std::int64_t>(rng.Next() >> (64 - p));
  const int e = emin + static_cast<int>(rng.Below(static_cast<std::uint64_t>(emax - emin + 1)));
  const T v = static_cast<T>(std::ldexp(static_cast<double>(mant), e - p));
  return (rng.Next() & 1) ? -v : v;
}

template <class T>
Int128 ToFixed(T v) {
  const LD scaled = std::ldexp(static_cast<LD>(v), kFixedShift);
  REQUIRE(scaled == std::floor(scaled));  // on the grid, so the conversion is exact
  return static_cast<Int128>(scaled);
}

LD FromFixed(Int128 v) { return std::ldexp(static_cast<LD>(v), -kFixedShift); }

TEMPLATE_TEST_CASE("carriers accuracy: Compensated against an exact sum",
                   "[fast][carriers][accuracy]", float, double) {
  using T = TestType;
  using C = Compensated<T>;
  const LD u = UnitRoundoff<T>();
  const std::uint64_t seed = 0xC0FFEE;
  Rng rng(seed);
  Worst worst{std::string("kahan<") + ScalarName<T>() + ">"};
  double worst_first_order = 0, max_cond = 0;
  for (std::size_t n : kSizes) {
    for (int trial = 0; trial < test::Trials(8); ++trial) {
      // Ill-conditioned: large values (up to 2^16) and their exact negations, shuffled, plus
      // small terms (2^-40 .. 2^-20) that carry the whole sum: condition numbers ~1e15.
      constexpr int p = std::numeric_limits<T>::digits;
      std::vector<T> x;
      for (std::size_t i = 0; i < n / 2; ++i) x.push_back(GridValue<T>(rng, 0, 16));
      for (std::size_t i = 0, m = x.size(); i < m; ++i) x.push_back(-x[i]);
      // The last small term may fill an odd slot; with n even and no small term S = 0, so the
      // trial keeps at least one small term by replacing a pair when needed.
      if (x.size() == n && n >= 2) {
        x.pop_back();
        x.back() = GridValue<T>(rng, 0, 16);
      }
      while (x.size() < n) x.push_back(GridValue<T>(rng, std::max(-40, p - kFixedShift), -20));
      for (std::size_t i = x.size(); i > 1; --i) std::swap(x[i - 1], x[rng.Below(i)]);
      Int128 exact = 0;
      LD abs_sum = 0;
      for (T v : x) {
        exact += ToFixed(v);
        abs_sum += std::fabs(static_cast<LD>(v));
      }
      const LD s_abs = std::fabs(FromFixed(exact));
      if (s_abs > 0) max_cond = std::max(max_cond, double(abs_sum / s_abs));
      ForEachPath<C>(x, [&](PathResult path, const typename C::State& st) {
        const T got = C::Finalize(st);
        const Int128 diff = ToFixed(got) - exact;
        const LD err = std::fabs(FromFixed(diff));
        const LD d = std::max(path.depth, 1);
        const LD bound =
            u * s_abs + (1 + u) * Gamma(2 * d - 1, u) * (1 + Gamma(d, u)) * d * u * abs_sum;
        test::Repro repro{seed, n, path.name, std::string("kahan<") + ScalarName<T>() + ">",
                          test::Join(x, 16)};
        INFO("error " << double(err) << " bound " << double(bound) << " |S| " << double(s_abs)
                      << "\n"
                      << repro.Text());
        REQUIRE(err <= bound);
        worst.See(double(err / bound), std::string(path.name) + " n=" + std::to_string(n));
        if (s_abs > 0) worst_first_order = std::max(worst_first_order, double(err / (u * s_abs)));
      });
    }
  }
  std::cout << "kahan<" << ScalarName<T>() << ">: worst error / (u |S|) = " << worst_first_order
            << ", worst condition number sum|x| / |S| = " << max_cond << "\n";
}

// ---- Dot ---------------------------------------------------------------------------------

TEMPLATE_TEST_CASE("carriers accuracy: Dot against long double", "[fast][carriers][accuracy]",
                   float, double) {
  using T = TestType;
  using C = Dot<T>;
  const LD u = UnitRoundoff<T>();
  const std::uint64_t seed = 0xD07;
  Rng rng(seed);
  Worst worst{std::string("dot<") + ScalarName<T>() + ">"};
  for (std::size_t n : kSizes) {
    for (int trial = 0; trial < test::Trials(8); ++trial) {
      std::vector<ValuePair<T>> x(n);
      LD exact = 0, abs_sum = 0;
      for (auto& p : x) {
        p = {static_cast<T>(rng.Normal()), static_cast<T>(rng.Uniform(-1, 1))};
        exact += LD(p.a) * LD(p.b);
        abs_sum += std::fabs(LD(p.a) * LD(p.b));
      }
      ForEachPath<C>(x, [&](PathResult path, const typename C::State& st) {
        const LD err = std::fabs(LD(C::Finalize(st)) - exact);
        const LD bound = Gamma(path.depth + 1, u) * abs_sum + 2 * (n + 1) * kOracleU * abs_sum;
        INFO("error " << double(err) << " bound " << double(bound) << " seed=" << seed << " n=" << n
                      << " schedule=" << path.name << " types=dot<" << ScalarName<T>()
                      << "> trial=" << trial);
        REQUIRE(err <= bound);
        worst.See(double(err / bound), std::string(path.name) + " n=" + std::to_string(n));
      });
    }
  }
}

// ---- Max and ArgMax: exact -----------------------------------------------------------------

TEMPLATE_TEST_CASE("carriers accuracy: Max and ArgMax are exact", "[fast][carriers][accuracy]",
                   float, double) {
  using T = TestType;
  const std::uint64_t seed = 0x3A7;
  Rng rng(seed);
  int checked = 0;
  for (std::size_t n : kSizes) {
    for (int trial = 0; trial < test::Trials(8); ++trial) {
      std::vector<T> v(n);
      // Few distinct values, so the maximum is usually tied.
      for (auto& e : v) e = static_cast<T>(static_cast<int>(rng.Below(7)) - 3);
      std::vector<IndexedValue<T>> iv(n);
      for (std::size_t i = 0; i < n; ++i) iv[i] = {v[i], static_cast<std::int64_t>(i)};
      const auto it = std::max_element(v.begin(), v.end());  // first maximum
      const T want = *it;
      const auto want_index = static_cast<std::int64_t>(it - v.begin());
      ForEachPath<Max<T>>(v, [&](PathResult path, const typename Max<T>::State& st) {
        INFO("seed=" << seed << " n=" << n << " schedule=" << path.name
                     << " inputs=" << test::Join(v));
        REQUIRE(Max<T>::Finalize(st) == want);
        ++checked;
      });
      ForEachPath<ArgMax<T>>(iv, [&](PathResult path, const typename ArgMax<T>::State& st) {
        INFO("seed=" << seed << " n=" << n << " schedule=" << path.name
                     << " inputs=" << test::Join(v));
        const auto r = ArgMax<T>::Finalize(st);
        REQUIRE(r.value == want);
        REQUIRE(r.index == want_index);
        ++checked;
      });
    }
  }
  std::cout << "max/argmax<" << ScalarName<T>() << ">: exact (first index of the maximum) on "
            << checked << " reductions with ties\n";
}

// ---- OnlineSoftmax -------------------------------------------------------------------------

TEMPLATE_TEST_CASE("carriers accuracy: OnlineSoftmax log-sum-exp and softmax against long double",
                   "[fast][carriers][accuracy]", float, double) {
  using T = TestType;
  using C = OnlineSoftmax<T>;
  const LD u = UnitRoundoff<T>();
  const LD ue = 2 * u;  // libm exp and log: within one ulp
  const std::uint64_t seed = 0x15E;
  Rng rng(seed);
  Worst worst_lse{std::string("lse<") + ScalarName<T>() + ">"};
  Worst worst_p{std::string("softmax<") + ScalarName<T>() + ">"};
  for (std::size_t n : kSizes) {
    for (int trial = 0; trial < test::Trials(6); ++trial) {
      const double sigma = std::array<double, 4>{0.1, 1, 10, 100}[trial % 4];
      const double shift = rng.Uniform(-50, 50);
      std::vector<T> x(n);
      for (auto& e : x) e = static_cast<T>(shift + sigma * rng.Normal());
      LD big = -INFINITY;
      for (T e : x) big = std::max(big, LD(e));
      LD sum = 0, mean_x = 0;
      for (T e : x) sum += std::exp(LD(e) - big);
      for (T e : x) mean_x += std::exp(LD(e) - big) / sum * LD(e);
      const LD lse = big + std::log(sum);
      ForEachPath<C>(x, [&](PathResult path, const typename C::State& st) {
        const auto r = C::Finalize(st);
        const LD rho = path.depth * (2 * u + ue) + u * (big - mean_x);
        const LD bound = u * std::fabs(lse) + (1 + u) * (rho + ue * std::fabs(std::log(sum)));
        const LD err = std::fabs(LD(r.lse) - lse);
        INFO("lse error " << double(err) << " first-order bound " << double(bound)
                          << " seed=" << seed << " n=" << n << " schedule=" << path.name
                          << " sigma=" << sigma << " types=lse<" << ScalarName<T>() << ">");
        REQUIRE(err <= 2 * bound);
        worst_lse.See(double(err / bound), std::string(path.name) + " n=" + std::to_string(n));
        // Softmax outputs from the same state: relative error per element.
        for (std::size_t i = 0; i < n; ++i) {
          const LD p = std::exp(LD(x[i]) - big) / sum;
          if (p < 1e-30L) continue;
          const LD got = C::SoftmaxOutput(x[i], st);
          const LD p_bound = rho + ue + u * (big - LD(x[i])) + 2 * u;
          const LD rel = std::fabs(got - p) / p;
          INFO("softmax element " << i << " relative error " << double(rel) << " first-order bound "
                                  << double(p_bound));
          REQUIRE(rel <= 2 * p_bound);
          worst_p.See(double(rel / p_bound), std::string(path.name) + " n=" + std::to_string(n));
        }
      });
    }
  }
}

// ---- Welford -----------------------------------------------------------------------------

TEMPLATE_TEST_CASE("carriers accuracy: Welford mean and variance against long double two-pass",
                   "[fast][carriers][accuracy]", float, double) {
  using T = TestType;
  using C = Welford<T>;
  const LD u = UnitRoundoff<T>();
  const std::uint64_t seed = 0x3E1F;
  Rng rng(seed);
  Worst worst_mean{std::string("welford<") + ScalarName<T>() + "> mean"};
  Worst worst_m2{std::string("welford<") + ScalarName<T>() + "> m2 (relative, / kappa)"};
  double max_kappa = 0;
  for (std::size_t n : kSizes) {
    if (n < 2) continue;
    for (int trial = 0; trial < test::Trials(6); ++trial) {
      const double offset = std::array<double, 3>{0, 100, 1e4}[trial % 3];
      std::vector<T> x(n);
      for (auto& e : x) e = static_cast<T>(offset + rng.Normal());
      LD sum = 0, abs_sum = 0;
      for (T e : x) {
        sum += e;
        abs_sum += std::fabs(LD(e));
      }
      const LD mean = sum / n;
      LD m2 = 0;
      for (T e : x) m2 += (LD(e) - mean) * (LD(e) - mean);
      const LD kappa = std::sqrt(1 + n * mean * mean / m2);
      max_kappa = std::max(max_kappa, double(kappa));
      ForEachPath<C>(x, [&](PathResult path, const typename C::State& st) {
        REQUIRE(st.n == n);
        const LD d = path.depth;
        const LD mean_err = std::fabs(LD(st.mean) - mean);
        const LD mean_tol = 4 * (d + 2) * u * abs_sum / n;
        const LD m2_err = std::fabs(LD(st.m2) - m2);
        const LD m2_tol = 8 * (d + 2) * kappa * u * m2;
        INFO("mean error " << double(mean_err) << " tol " << double(mean_tol) << "; m2 error "
                           << double(m2_err) << " tol " << double(m2_tol) << " kappa "
                           << double(kappa) << " seed=" << seed << " n=" << n
                           << " schedule=" << path.name << " offset=" << offset << " types=welford<"
                           << ScalarName<T>() << ">");
        REQUIRE(mean_err <= mean_tol);
        REQUIRE(m2_err <= m2_tol);
        worst_mean.See(double(mean_err / mean_tol),
                       std::string(path.name) + " n=" + std::to_string(n));
        worst_m2.See(double(m2_err / m2_tol), std::string(path.name) + " n=" + std::to_string(n));
        const auto r = C::Finalize(st);
        REQUIRE(r.var_sample == Approx(double(m2 / (n - 1))).epsilon(1e-2));
      });
    }
  }
  std::cout << "welford<" << ScalarName<T>() << ">: condition numbers up to " << max_kappa << "\n";
}

// ---- ScaledNorm2 -------------------------------------------------------------------------

TEMPLATE_TEST_CASE("carriers accuracy: ScaledNorm2 near overflow and underflow",
                   "[fast][carriers][accuracy]", float, double) {
  using T = TestType;
  using C = ScaledNorm2<T>;
  using L = std::numeric_limits<T>;
  const LD u = UnitRoundoff<T>();
  const LD eta = L::denorm_min();
  const std::uint64_t seed = 0x2A0;
  Rng rng(seed);
  Worst worst{std::string("norm2<") + ScalarName<T>() + ">"};
  struct Range {
    const char* name;
    double scale;  // |x| = scale * uniform(0.1, 1) * (random power of two up to 2^-8)
  };
  const Range ranges[] = {
      {"unit", 1.0},
      {"huge (plain sum of squares overflows)", double(L::max()) / 64},
      {"tiny (squares underflow)", double(L::min()) * 16},
      {"subnormal", double(L::denorm_min()) * 4096},
  };
  int naive_failures = 0, cases = 0;
  for (const auto& range : ranges) {
    for (std::size_t n : kSizes) {
      for (int trial = 0; trial < test::Trials(4); ++trial) {
        std::vector<T> x(n);
        LD ssq = 0;
        T naive = 0;
        for (auto& e : x) {
          const double m = rng.Uniform(0.1, 1) * std::ldexp(1.0, -static_cast<int>(rng.Below(9)));
          e = static_cast<T>(range.scale * m * ((rng.Next() & 1) ? -1 : 1));
          ssq += LD(e) * LD(e);
          naive = naive + e * e;
        }
        const LD norm = std::sqrt(ssq);
        const T naive_norm = std::sqrt(naive);
        ++cases;
        if (!(std::fabs(LD(naive_norm) - norm) <= 1e-3L * norm)) ++naive_failures;
        ForEachPath<C>(x, [&](PathResult path, const typename C::State& st) {
          const LD got = C::Finalize(st);
          const LD d = path.depth;
          const LD bound = (1 + u) * (1 + u) * std::sqrt(1 + Gamma(5 * d, u) + 4 * n * eta) - 1 +
                           4 * (n + 2) * kOracleU;
          // Relative, with the final product's absolute eta / 2 for a subnormal norm.
          const LD rel = std::max(std::fabs(got - norm) - eta / 2, LD(0)) / norm;
          INFO("relative error (less eta/2) "
               << double(rel) << " bound " << double(bound) << " range " << range.name
               << " seed=" << seed << " n=" << n << " schedule=" << path.name << " types=norm2<"
               << ScalarName<T>() << "> inputs=" << test::Join(x, 8));
          REQUIRE(rel <= bound);
          worst.See(double(rel / bound),
                    std::string(path.name) + " n=" + std::to_string(n) + " " + range.name);
        });
      }
    }
  }
  std::cout << "norm2<" << ScalarName<T>() << ">: the plain sqrt(sum x^2) in " << ScalarName<T>()
            << " was off by more than 1e-3 (overflow or underflow) in " << naive_failures << " of "
            << cases << " cases\n";
  CHECK(naive_failures > cases / 3);  // the huge, tiny and subnormal ranges really stress it
}

// ---- Affine ------------------------------------------------------------------------------

TEMPLATE_TEST_CASE("carriers accuracy: Affine composition against long double",
                   "[fast][carriers][accuracy]", float, double) {
  using T = TestType;
  using C = Affine<T>;
  const LD u = UnitRoundoff<T>();
  const std::uint64_t seed = 0xAFF;
  Rng rng(seed);
  Worst worst_a{std::string("affine<") + ScalarName<T>() + "> a"};
  Worst worst_b{std::string("affine<") + ScalarName<T>() + "> b"};
  for (std::size_t n : kSizes) {
    for (int trial = 0; trial < test::Trials(6); ++trial) {
      std::vector<ValuePair<T>> x(n);
      for (auto& p : x) {
        const double a = rng.Uniform(0.9, 1.1) * ((rng.Next() & 3) == 0 ? -1 : 1);
        p = {static_cast<T>(a), static_cast<T>(rng.Normal())};
      }
      // Backward: suffix products prod_{j>k} a_j, b = sum_k suffix_k b_k.
      LD a_exact = 1, b_exact = 0, b_abs = 0;
      for (std::size_t k = n; k-- > 0;) {
        b_exact += a_exact * LD(x[k].b);
        b_abs += std::fabs(a_exact * LD(x[k].b));
        a_exact *= LD(x[k].a);
      }
      ForEachPath<C>(x, [&](PathResult path, const typename C::State& st) {
        const auto r = C::Finalize(st);
        const LD a_bound =
            Gamma(n, u) * std::fabs(a_exact) + 2 * (n + 1) * kOracleU * std::fabs(a_exact);
        const LD b_bound = Gamma(n + path.depth, u) * b_abs + 4 * (n + 1) * kOracleU * b_abs;
        const LD a_err = std::fabs(LD(r.a) - a_exact), b_err = std::fabs(LD(r.b) - b_exact);
        INFO("a error " << double(a_err) << " bound " << double(a_bound) << "; b error "
                        << double(b_err) << " bound " << double(b_bound) << " seed=" << seed
                        << " n=" << n << " schedule=" << path.name << " types=affine<"
                        << ScalarName<T>() << ">");
        REQUIRE(a_err <= a_bound);
        REQUIRE(b_err <= b_bound);
        worst_a.See(double(a_err / a_bound), std::string(path.name) + " n=" + std::to_string(n));
        worst_b.See(double(b_err / b_bound), std::string(path.name) + " n=" + std::to_string(n));
      });
    }
  }
}

// ---- FlashRow ----------------------------------------------------------------------------

template <class C>
void FlashAccuracy(const char* label, LD per_combine_roundings) {
  using T = typename C::Scalar;
  constexpr std::size_t kDv = C::kDv;
  const LD u = UnitRoundoff<T>();
  const LD ue = 2 * u;
  const std::uint64_t seed = 0xF1A5;
  Rng rng(seed);
  Worst worst{label};
  for (std::size_t n : kSizes) {
    for (int trial = 0; trial < test::Trials(4); ++trial) {
      const double sigma = std::array<double, 3>{0.5, 3, 20}[trial % 3];
      std::vector<T> scores(n);
      std::vector<std::array<T, kDv>> values(n);
      std::vector<FlashInput<T>> x(n);
      for (std::size_t i = 0; i < n; ++i) {
        scores[i] = static_cast<T>(sigma * rng.Normal());
        for (auto& e : values[i]) e = static_cast<T>(rng.Normal());
        x[i] = {scores[i], values[i].data()};
      }
      LD big = -INFINITY;
      for (T s : scores) big = std::max(big, LD(s));
      LD sum = 0;
      for (T s : scores) sum += std::exp(LD(s) - big);
      std::array<LD, kDv> o{};
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < kDv; ++j)
          o[j] += std::exp(LD(scores[i]) - big) / sum * LD(values[i][j]);
      ForEachPath<C>(x, [&](PathResult path, const typename C::State& st) {
        const auto r = C::Finalize(st);
        for (std::size_t j = 0; j < kDv; ++j) {
          LD tol = u * std::fabs(o[j]);
          for (std::size_t i = 0; i < n; ++i) {
            const LD w = std::exp(LD(scores[i]) - big) / sum;
            tol += w * (std::fabs(LD(values[i][j])) + std::fabs(o[j])) *
                   (path.depth * (per_combine_roundings * u + ue) + u + u * (big - LD(scores[i])));
          }
          const LD err = std::fabs(LD(r.o[j]) - o[j]);
          INFO("column " << j << " error " << double(err) << " first-order tolerance "
                         << double(tol) << " seed=" << seed << " n=" << n
                         << " schedule=" << path.name << " sigma=" << sigma << " types=" << label);
          REQUIRE(err <= 2 * tol);
          worst.See(double(err / tol), std::string(path.name) + " n=" + std::to_string(n));
        }
      });
    }
  }
}

TEST_CASE("carriers accuracy: FlashRow FA2 and FA1 against long double attention",
          "[fast][carriers][accuracy]") {
  FlashAccuracy<FlashRow<float, 4, FlashVariant::kFA2>>("attention<float> FA2", 2);
  FlashAccuracy<FlashRow<double, 4, FlashVariant::kFA2>>("attention<double> FA2", 2);
  FlashAccuracy<FlashRow<float, 4, FlashVariant::kFA1>>("attention<float> FA1", 6);
  FlashAccuracy<FlashRow<double, 4, FlashVariant::kFA1>>("attention<double> FA1", 6);
}

}  // namespace
}  // namespace carrier
