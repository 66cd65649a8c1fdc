// Emulated (precision/emulated.hpp) returns EmulatedOracle's bits for every operation, in
// every format and rounding mode, and draws from the stochastic stream exactly as EmulatedOracle
// does: exhaustively over every pair of fp8 values (e4m3, e4m3 saturating, e5m2), and on
// random pairs that cover each format's whole range (subnormals, the top binade, overflow,
// cancellation) for fp16, bf16, tf32, fp32 and a custom format; also through whole carriers
// (Replay over Emulated == ReplayOracle over EmulatedOracle).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "core/carriers/all.hpp"
#include "core/replay.hpp"
#include "precision/emulated.hpp"
#include "precision/emulated_oracle.hpp"
#include "precision/format.hpp"
#include "support/test_support.hpp"

using namespace carrier;
using carrier::test::Exact;
using carrier::test::Rng;

namespace {

using Slow = EmulatedOracleDynamic;
using Fast = EmulatedDynamic;

// Every finite value of f (both signs), plus +-inf and NaN.
std::vector<double> AllValues(const Format& f) {
  std::set<double> v;
  for (int e = f.emin - f.precision - 1; e <= f.emax + 1; ++e)
    for (std::uint64_t m = 0; m < (std::uint64_t{1} << f.precision); ++m) {
      const double x = std::ldexp(static_cast<double>(m), e - f.precision + 1);
      const double r = RoundToFormat(x, f, Rounding::kTowardZero);
      if (std::isfinite(r)) {
        v.insert(r);
        v.insert(-r);
      }
    }
  std::vector<double> out(v.begin(), v.end());
  out.push_back(INFINITY);
  out.push_back(-INFINITY);
  out.push_back(NAN);
  return out;
}

// A random value of f: random significand, exponent anywhere from below the subnormals to the
// top binade; sometimes a special or a neighbour of a given value (to make cancellations).
double RandomValue(Rng& rng, const Format& f) {
  switch (rng.Below(40)) {
    case 0:
      return INFINITY;
    case 1:
      return -INFINITY;
    case 2:
      return NAN;
    case 3:
      return 0.0;
    case 4:
      return -0.0;
    case 5:
      return f.MaxFinite() * (rng.Below(2) ? 1 : -1);
    default:
      break;
  }
  const int lo = f.emin - f.precision, hi = f.emax;
  const int e = lo + static_cast<int>(rng.Below(static_cast<std::uint64_t>(hi - lo + 1)));
  const double m = 1 + rng.Uniform01();
  const double x = std::ldexp(m, e) * (rng.Below(2) ? 1 : -1);
  return RoundToFormat(x, f, Rounding::kNearestEven);
}

struct Tally {
  long ops = 0;
};

// a op b through both types, in the current scope (streams reset by the caller).
template <class S, class F>
void Compare(double a, double b, double c, const std::string& what, Tally& t) {
  const S sa = S::FromFormatValue(a), sb = S::FromFormatValue(b), sc = S::FromFormatValue(c);
  const F fa = F::FromFormatValue(a), fb = F::FromFormatValue(b), fc = F::FromFormatValue(c);
  // A count from a (below and above 2^53, both signs), as Welford's T(n) converts one.
  const std::int64_t k = std::isfinite(a) ? static_cast<std::int64_t>(std::fmod(a, 0x1p62)) : -7;
  const auto uk = static_cast<std::uint64_t>(k < 0 ? -k : k);
  const double slow[] = {(sa + sb).Value(),
                         (sa - sb).Value(),
                         (sa * sb).Value(),
                         (sa / sb).Value(),
                         sqrt(sa).Value(),
                         fma(sa, sb, sc).Value(),
                         S(a * 0.75 + b).Value(),
                         exp(sa).Value(),
                         exp(sa - sa).Value(),
                         S(k).Value(),
                         S(uk).Value()};
  const double fast[] = {(fa + fb).Value(),
                         (fa - fb).Value(),
                         (fa * fb).Value(),
                         (fa / fb).Value(),
                         sqrt(fa).Value(),
                         fma(fa, fb, fc).Value(),
                         F(a * 0.75 + b).Value(),
                         exp(fa).Value(),
                         exp(fa - fa).Value(),
                         F(k).Value(),
                         F(uk).Value()};
  const char* names[] = {"+",           "-",   "*",      "/",          "sqrt",       "fma",
                         "from double", "exp", "exp(0)", "from int64", "from uint64"};
  for (int i = 0; i < 11; ++i) {
    if (!ScalarTraits<double>::BitEqual(slow[i], fast[i])) {
      FAIL_CHECK(what << ": " << names[i] << " a=" << Exact(a) << " b=" << Exact(b) << " k=" << k
                      << " c=" << Exact(c) << " EmulatedOracle " << Exact(slow[i]) << " Emulated "
                      << Exact(fast[i]));
    }
    ++t.ops;
  }
}

// Operands (a, b, c) of f: every pair of its values (pairs == 0; c another value), or `pairs`
// random ones (b half the time a close neighbour of -a: cancellation).
struct Operands {
  std::vector<double> a, b, c;
};
Operands MakeOperands(const Format& f, std::uint64_t pairs, std::uint64_t seed) {
  Operands o;
  if (pairs == 0) {
    const std::vector<double> v = AllValues(f);
    for (double x : v)
      for (double y : v) {
        o.a.push_back(x);
        o.b.push_back(y);
        o.c.push_back(v[(o.a.size() * 7) % v.size()]);
      }
  } else {
    Rng rng(seed);
    for (std::uint64_t i = 0; i < pairs; ++i) {
      o.a.push_back(RandomValue(rng, f));
      o.b.push_back(rng.Below(2) ? RoundToFormat(-o.a.back() * (1 + rng.Uniform(-1, 1) * 0x1p-6), f,
                                                 Rounding::kNearestEven)
                                 : RandomValue(rng, f));
      o.c.push_back(RandomValue(rng, f));
    }
  }
  return o;
}

// All pairs (or `pairs` random ones) of f's values, in mode r; under sr, each of the two types
// runs the same operation sequence from the same seed, and the results must match one by one.
void CheckFormat(const Format& f, Rounding r, std::uint64_t pairs, std::uint64_t seed, Tally& t) {
  const std::string what = f.name + "/" + std::string(RoundingName(r));
  EmulationScope scope(f, r, seed);
  const Operands o = MakeOperands(f, pairs, seed);
  const std::vector<double>&a = o.a, &b = o.b, &c = o.c;
  // EmulatedOracle's results first (the whole sequence), then Emulated's from the same stream.
  std::vector<double> slow, fast;
  for (int side = 0; side < 2; ++side) {
    StochasticSeedScope stream(seed);
    std::vector<double>& out = side == 0 ? slow : fast;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (side == 0) {
        const Slow x = Slow::FromFormatValue(a[i]), y = Slow::FromFormatValue(b[i]);
        out.push_back((x + y).Value());
        out.push_back((x * y).Value());
        out.push_back((x - y).Value());
      } else {
        const Fast x = Fast::FromFormatValue(a[i]), y = Fast::FromFormatValue(b[i]);
        out.push_back((x + y).Value());
        out.push_back((x * y).Value());
        out.push_back((x - y).Value());
      }
    }
  }
  long mismatches = 0;
  for (std::size_t i = 0; i < slow.size(); ++i)
    if (!ScalarTraits<double>::BitEqual(slow[i], fast[i]) && mismatches++ < 5)
      FAIL_CHECK(what << " (stream seed " << seed << "): op " << i % 3
                      << " (+ * -) of a=" << Exact(a[i / 3]) << " b=" << Exact(b[i / 3])
                      << ": EmulatedOracle " << Exact(slow[i]) << " Emulated " << Exact(fast[i]));
  t.ops += static_cast<long>(slow.size());
  // Every operation, one pair at a time (deterministic modes: no stream involved).
  if (r != Rounding::kStochastic)
    for (std::size_t i = 0; i < a.size(); i += (pairs == 0 ? 7 : 1))
      Compare<Slow, Fast>(a[i], b[i], c[i], what, t);
  CHECK(mismatches == 0);
}

}  // namespace

TEST_CASE("Emulated == EmulatedOracle on every pair of fp8 values, every mode",
          "[fast][fast_emulated]") {
  Tally t;
  std::uint64_t seed = 41;
  for (const Format& f : {Fp8E4M3(), Fp8E4M3Sat(), Fp8E5M2()})
    for (Rounding r : kAllRoundings) CheckFormat(f, r, 0, ++seed, t);
  std::cout << "fp8 exhaustive: " << t.ops << " operations bit-identical\n";
  CHECK(t.ops > 1000000);
}

TEST_CASE("Emulated == EmulatedOracle on random pairs: fp16 bf16 tf32 fp32 custom, every mode",
          "[fast][fast_emulated]") {
  Tally t;
  std::uint64_t seed = 91;
  const std::uint64_t pairs = static_cast<std::uint64_t>(test::Trials(20000));
  for (const Format& f :
       {Fp16(), BF16(), TF32(), Fp32(), ParseFormat("custom:p=9,emin=-20,emax=20")})
    for (Rounding r : kAllRoundings) CheckFormat(f, r, pairs, ++seed, t);
  std::cout << "random pairs: " << t.ops << " operations bit-identical\n";
  CHECK(t.ops > 1000000);
}

TEST_CASE("Emulated with static tags == EmulatedOracle", "[fast][fast_emulated]") {
  Rng rng(7);
  Tally t;
  for (int i = 0; i < test::Trials(20000); ++i) {
    const double a = RandomValue(rng, BF16()), b = RandomValue(rng, BF16()),
                 c = RandomValue(rng, BF16());
    Compare<EmulatedOracle<BF16Tag, Rounding::kTowardZero>,
            Emulated<BF16Tag, Rounding::kTowardZero>>(a, b, c, "static bf16/rz", t);
    Compare<EmulatedOracle<BF16Tag>, Emulated<BF16Tag>>(a, b, c, "static bf16/rne", t);
    const double d = RandomValue(rng, Fp16()), e = RandomValue(rng, Fp16());
    Compare<EmulatedOracle<Fp16Tag, Rounding::kUp>, Emulated<Fp16Tag, Rounding::kUp>>(
        d, e, c, "static fp16/ru", t);
  }
  std::cout << "static tags: " << t.ops << " operations bit-identical\n";
}

TEST_CASE("carriers over Emulated equal carriers over EmulatedOracle", "[fast][fast_emulated]") {
  Rng rng(2026);
  long checks = 0;
  for (const Format& f : {BF16(), Fp16(), Fp8E4M3()})
    for (Rounding r : kAllRoundings) {
      EmulationScope scope(f, r, 77);
      for (std::uint64_t n : {1u, 7u, 100u, 1000u}) {
        std::vector<double> d(n);
        for (auto& v : d) v = rng.Normal();
        std::vector<Slow> xs;
        std::vector<Fast> xf;
        for (double v : d) {
          xs.push_back(Slow(v));  // under sr this draws from the stream: copy, do not redraw
          xf.push_back(Fast::FromFormatValue(xs.back().Value()));
        }
        for (const char* schedule : {"seq", "pairwise", "blocked:16", "random:3", "strided:8"}) {
          INFO("format " << f.name << " rounding " << RoundingName(r) << " n " << n << " schedule "
                         << schedule);
          const MergeTree tree = BuildTree(schedule, n);
          auto same = [&](auto slow_state, auto fast_state) {
            bool ok = true;
            std::apply(
                [&](const auto&... a) {
                  std::apply(
                      [&](const auto&... b) {
                        ok = (ScalarTraits<double>::BitEqual(static_cast<double>(a),
                                                             static_cast<double>(b)) &&
                              ...);
                      },
                      fast_state.Tie());
                },
                slow_state.Tie());
            return ok;
          };
          {
            StochasticSeedScope s1(5);
            const auto a = ReplayOracle<Sum<Slow>>(tree, std::span<const Slow>(xs));
            StochasticSeedScope s2(5);
            const auto b = Replay<Sum<Fast>>(ParseSchedule(schedule), std::span<const Fast>(xf));
            CHECK(same(a, b));
          }
          {
            StochasticSeedScope s1(6);
            const auto a = ReplayOracle<Welford<Slow>>(tree, std::span<const Slow>(xs));
            StochasticSeedScope s2(6);
            const auto b =
                Replay<Welford<Fast>>(ParseSchedule(schedule), std::span<const Fast>(xf));
            CHECK(same(a, b));
          }
          {
            StochasticSeedScope s1(8);
            const auto a = ReplayOracle<OnlineSoftmax<Slow>>(tree, std::span<const Slow>(xs));
            StochasticSeedScope s2(8);
            const auto b =
                Replay<OnlineSoftmax<Fast>>(ParseSchedule(schedule), std::span<const Fast>(xf));
            CHECK(same(a, b));
          }
          checks += 3;
        }
      }
    }
  std::cout << "carrier states over Emulated == over EmulatedOracle: " << checks << " checks\n";
}

namespace {

template <class Tag>
void CheckShape() {
  using S = emulated_detail::StaticShape<Tag>;
  const Format& f = Tag::Get();
  INFO("tag of format " << f.name);
  CHECK(S::kP == f.precision);
  CHECK(S::kEmin == f.emin);
  CHECK(S::kEmax == f.emax);
}

// Every pair of f's values through a static tag and mode (the constant-mask path).
template <class Tag, Rounding R>
long StaticExhaustive() {
  const std::vector<double> v = AllValues(Tag::Get());
  Tally t;
  for (double a : v)
    for (double b : v) Compare<EmulatedOracle<Tag, R>, Emulated<Tag, R>>(a, b, v[0], "static", t);
  return t.ops;
}

}  // namespace

TEST_CASE("Emulated's compile-time shapes are the tags' formats", "[fast][fast_emulated]") {
  CheckShape<Fp8E4M3Tag>();
  CheckShape<Fp8E4M3SatTag>();
  CheckShape<Fp8E5M2Tag>();
  CheckShape<Fp16Tag>();
  CheckShape<BF16Tag>();
  CheckShape<TF32Tag>();
  CheckShape<Fp32Tag>();
  long ops = 0;
  ops += StaticExhaustive<Fp8E4M3Tag, Rounding::kNearestEven>();
  ops += StaticExhaustive<Fp8E4M3SatTag, Rounding::kTowardZero>();
  ops += StaticExhaustive<Fp8E5M2Tag, Rounding::kDown>();
  ops += StaticExhaustive<Fp8E5M2Tag, Rounding::kToOdd>();
  ops += StaticExhaustive<Fp8E4M3Tag, Rounding::kNearestAway>();
  ops += StaticExhaustive<Fp8E4M3Tag, Rounding::kUp>();
  std::cout << "static fp8 exhaustive: " << ops << " operations bit-identical\n";
}

// ---- Batched additions (GatheredAdd<Emulated>) and a carrier's first push ----

namespace {

bool SameValue(double a, double b) { return ScalarTraits<double>::BitEqual(a, b); }

// GatheredAdd<T>::Run over the pairs (a[k], b[k]) in three operand layouts, with the vector form
// on and off, against EmulatedOracle's a + b; FromZero over a against EmulatedOracle's +0 + a.
// Layouts: gathered (a and b in one array of distinct values, arbitrary indices), a run of adjacent
// pairs (a[k] at 2k, b[k] at 2k + 1 of one array: the permute path) and b right after a
// (B = A + 1, ia = ib); Adjacent over the run. Returns the additions checked.
template <class T, class E>
long CheckBatch(const std::vector<double>& a, const std::vector<double>& b,
                const std::string& what) {
  const std::size_t n = a.size();
  std::vector<double> want(n), want0(n);
  for (std::size_t k = 0; k < n; ++k) {
    want[k] = (E::FromFormatValue(a[k]) + E::FromFormatValue(b[k])).Value();
    want0[k] = (E::FromFormatValue(0.0) + E::FromFormatValue(a[k])).Value();
  }
  std::vector<T> values(2 * n), pairs(2 * n), out(n);
  std::vector<std::uint32_t> ia(n), ib(n), run_a(n), run_b(n);
  for (std::size_t k = 0; k < n; ++k) {
    // gathered: a[k] at slot n + (k * 7919) % n is not a run
    const std::size_t sa = (k * 7919) % n, sb = n + k;
    values[sa] = T::FromFormatValue(a[k]);
    values[sb] = T::FromFormatValue(b[k]);
    ia[k] = static_cast<std::uint32_t>(sa);
    ib[k] = static_cast<std::uint32_t>(sb);
    pairs[2 * k] = T::FromFormatValue(a[k]);
    pairs[2 * k + 1] = T::FromFormatValue(b[k]);
    run_a[k] = static_cast<std::uint32_t>(2 * k);
    run_b[k] = static_cast<std::uint32_t>(2 * k + 1);
  }
  long checked = 0, bad = 0;
  auto check = [&](const char* layout, bool vec, const std::vector<double>& expect,
                   const std::vector<double>& got_a) {
    for (std::size_t k = 0; k < n; ++k) {
      ++checked;
      if (!SameValue(out[k].Value(), expect[k]) && bad++ < 5)
        FAIL_CHECK(what << "/" << RoundingName(T::GetRounding()) << " " << layout
                        << " vector=" << vec << " k=" << k << " a=" << Exact(got_a[k])
                        << " b=" << Exact(b[k]) << ": EmulatedOracle " << Exact(expect[k])
                        << " batch " << Exact(out[k].Value()));
    }
  };
  for (bool vec : {true, false}) {
    const bool on = UseGatheredAddVectorised(vec);
    GatheredAdd<T>::Run(values.data(), ia.data(), values.data(), ib.data(), out.data(), n);
    check("gathered", on, want, a);
    GatheredAdd<T>::Run(pairs.data(), run_a.data(), pairs.data(), run_b.data(), out.data(), n);
    check("adjacent run", on, want, a);
    GatheredAdd<T>::Run(pairs.data(), run_a.data(), pairs.data() + 1, run_a.data(), out.data(), n);
    check("B = A + 1", on, want, a);
    std::vector<T> xs(n);
    for (std::size_t k = 0; k < n; ++k) xs[k] = T::FromFormatValue(a[k]);
    GatheredAdd<T>::FromZero(xs.data(), out.data(), n);
    check("from zero", on, want0, a);
    // Adjacent over the interleaved pairs a0 b0 a1 b1 ...: even k is a + b, odd k is b[k/2] +
    // a[k/2 + 1] (n - 1 of them, checked against EmulatedOracle here).
    std::vector<T> adjacent(2 * n - 1);
    GatheredAdd<T>::Adjacent(pairs.data(), adjacent.data(), 2 * n - 1);
    for (std::size_t k = 0; k + 1 < 2 * n; ++k) {
      const double x = pairs[k].Value(), y = pairs[k + 1].Value();
      const double expect = (E::FromFormatValue(x) + E::FromFormatValue(y)).Value();
      ++checked;
      if (!SameValue(adjacent[k].Value(), expect) && bad++ < 5)
        FAIL_CHECK(what << "/" << RoundingName(T::GetRounding()) << " adjacent vector=" << on
                        << " k=" << k << " " << Exact(x) << " + " << Exact(y) << ": EmulatedOracle "
                        << Exact(expect) << " batch " << Exact(adjacent[k].Value()));
    }
  }
  UseGatheredAddVectorised(true);
  CHECK(bad == 0);
  return checked;
}

// GatheredAdd<T>::Chains against EmulatedOracle's chains of additions, over the first 20,000 of v:
// L lanes (one, two: scalar code in registers; 3: scalar code; 8, 16, 32, 40: one, two and four
// vector groups and a scalar remainder) of c additions each (7: gathers alone; 9, 17: the
// transposed eight-row blocks and a gathered tail), in three layouts: tiles (lane w's inputs
// consecutive from w c: the blocked schedule's), rows (lane w's inputs w, w + L, ...: strided
// rows, one load per group) and spread (inputs 2w, 2w + 2L + 1, ...: gathers). Lanes start
// from +0 (a chain's Identity) or, odd lanes, from a value of v. Returns the chains checked.
template <class T, class E>
long CheckChains(const std::vector<double>& v_all, const std::string& what) {
  const std::vector<double> v(
      v_all.begin(),
      v_all.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(v_all.size(), 20000)));
  std::vector<T> xs;
  for (double e : v) xs.push_back(T::FromFormatValue(e));
  long checked = 0, bad = 0;
  for (bool vec : {true, false}) {
    const bool on = UseGatheredAddVectorised(vec);
    for (std::size_t L : {1, 2, 3, 8, 16, 32, 40}) {
      for (std::uint64_t c : {7, 9, 17}) {
        for (int layout = 0; layout < 3; ++layout) {
          const std::uint64_t stride = layout == 0 ? 1 : layout == 1 ? L : 2 * L + 1;
          const std::uint64_t span = layout == 0 ? L * c : (c - 1) * stride + 2 * L;
          for (std::uint64_t base = 0; base + span <= v.size(); base += span) {
            std::vector<std::uint64_t> first(L);
            for (std::size_t w = 0; w < L; ++w)
              first[w] = base + (layout == 0 ? w * c : layout == 1 ? w : 2 * w);
            std::vector<T> acc(L);
            std::vector<double> want(L);
            for (std::size_t w = 0; w < L; ++w) {
              const double start = w % 2 == 1 ? v[(base + w) % v.size()] : 0.0;
              acc[w] = T::FromFormatValue(start);
              E e = E::FromFormatValue(start);
              for (std::uint64_t j = 0; j < c; ++j)
                e = e + E::FromFormatValue(v[first[w] + j * stride]);
              want[w] = e.Value();
            }
            GatheredAdd<T>::Chains(acc.data(), xs.data(), first.data(), L, c, stride);
            for (std::size_t w = 0; w < L; ++w) {
              ++checked;
              if (!SameValue(acc[w].Value(), want[w]) && bad++ < 5)
                FAIL_CHECK(what << "/" << RoundingName(T::GetRounding()) << " chains vector=" << on
                                << " lanes=" << L << " count=" << c << " layout=" << layout
                                << " base=" << base << " lane=" << w << ": EmulatedOracle "
                                << Exact(want[w]) << " batch " << Exact(acc[w].Value()));
            }
          }
        }
      }
    }
  }
  UseGatheredAddVectorised(true);
  CHECK(bad == 0);
  return checked;
}

// The chains' inputs: a0 b0 a1 b1 ... (mixed magnitudes and signs, specials included).
std::vector<double> Interleaved(const Operands& o) {
  std::vector<double> v;
  for (std::size_t k = 0; k < o.a.size(); ++k) {
    v.push_back(o.a[k]);
    v.push_back(o.b[k]);
  }
  return v;
}

template <class Tag, Rounding R>
long BatchExhaustive() {
  using T = Emulated<Tag, R>;
  using E = EmulatedOracle<Tag, R>;
  const Operands o = MakeOperands(Tag::Get(), 0, 0);
  return CheckBatch<T, E>(o.a, o.b, Tag::Get().name) +
         CheckChains<T, E>(Interleaved(o), Tag::Get().name);
}

template <class Tag, Rounding R>
long BatchRandom(std::uint64_t seed) {
  using T = Emulated<Tag, R>;
  using E = EmulatedOracle<Tag, R>;
  const auto pairs = static_cast<std::uint64_t>(test::Trials(20000));
  const Operands o = MakeOperands(Tag::Get(), pairs, seed);
  return CheckBatch<T, E>(o.a, o.b, Tag::Get().name) +
         CheckChains<T, E>(Interleaved(o), Tag::Get().name);
}

// The dynamic type in the scope's format and mode: every pair of f's values, or `pairs` random
// ones.
long BatchDynamic(const Format& f, Rounding r, std::uint64_t pairs, std::uint64_t seed) {
  EmulationScope scope(f, r, seed);
  const Operands o = MakeOperands(f, pairs, seed);
  return CheckBatch<Fast, Slow>(o.a, o.b, "dynamic " + f.name) +
         CheckChains<Fast, Slow>(Interleaved(o), "dynamic " + f.name);
}

template <class Tag, Rounding... Rs>
long BatchEveryMode() {
  return (BatchExhaustive<Tag, Rs>() + ...);
}

// Sum's first push, Identity + x, where the +0 is a compile-time constant once inlined (Add's
// shortcut for it), for every value of f: EmulatedOracle's +0 + x.
template <class Tag, Rounding R>
long FirstPushExhaustive() {
  using C = Sum<Emulated<Tag, R>>;
  long bad = 0, n = 0;
  for (double x : AllValues(Tag::Get())) {
    const double got = C::Push(C::Identity(), Emulated<Tag, R>::FromFormatValue(x)).s.Value();
    const double want =
        (EmulatedOracle<Tag, R>::FromFormatValue(0.0) + EmulatedOracle<Tag, R>::FromFormatValue(x))
            .Value();
    ++n;
    if (!SameValue(got, want) && bad++ < 5)
      FAIL_CHECK(Tag::Get().name << "/" << RoundingName(R) << ": Identity + " << Exact(x)
                                 << ": EmulatedOracle " << Exact(want) << " Emulated "
                                 << Exact(got));
  }
  CHECK(bad == 0);
  return n;
}

template <class Tag, Rounding... Rs>
long FirstPushEveryMode() {
  return (FirstPushExhaustive<Tag, Rs>() + ...);
}

}  // namespace

TEST_CASE("GatheredAdd<Emulated> == EmulatedOracle's additions in every layout, vector and not",
          "[fast][fast_emulated]") {
  using enum Rounding;
  const bool vector = UseGatheredAddVectorised(true);
  std::cout << "GatheredAdd vector form on this CPU: " << (vector ? "yes" : "no") << "\n";
  long checked = 0;
  checked +=
      BatchEveryMode<Fp8E4M3Tag, kNearestEven, kNearestAway, kTowardZero, kUp, kDown, kToOdd>();
  checked += BatchEveryMode<Fp8E4M3SatTag, kNearestEven, kTowardZero>();
  checked +=
      BatchEveryMode<Fp8E5M2Tag, kNearestEven, kNearestAway, kTowardZero, kUp, kDown, kToOdd>();
  std::uint64_t seed = 700;
  checked += BatchRandom<BF16Tag, kNearestEven>(++seed);  // one seed per statement: each
  checked += BatchRandom<BF16Tag, kTowardZero>(++seed);   // run draws the same operands
  checked += BatchRandom<BF16Tag, kUp>(++seed);
  checked += BatchRandom<BF16Tag, kDown>(++seed);
  checked += BatchRandom<Fp16Tag, kNearestEven>(++seed);
  checked += BatchRandom<Fp16Tag, kTowardZero>(++seed);
  checked += BatchRandom<Fp16Tag, kNearestAway>(++seed);
  checked += BatchRandom<Fp16Tag, kToOdd>(++seed);
  checked += BatchRandom<TF32Tag, kNearestEven>(++seed);
  checked += BatchRandom<Fp32Tag, kNearestEven>(++seed);
  checked += BatchRandom<Fp32Tag, kTowardZero>(++seed);
  // The dynamic type: e5m2 exhaustive and random pairs of custom formats (p = 26: rne through
  // the TwoSum round-to-odd sum) in every deterministic mode.
  const std::uint64_t pairs = static_cast<std::uint64_t>(test::Trials(5000));
  for (Rounding r : kAllRoundings) {
    if (r == kStochastic) continue;
    checked += BatchDynamic(Fp8E5M2(), r, 0, ++seed);
    checked += BatchDynamic(ParseFormat("custom:p=9,emin=-20,emax=20"), r, pairs, ++seed);
    checked += BatchDynamic(ParseFormat("custom:p=26,emin=-100,emax=100"), r, pairs, ++seed);
  }
  std::cout << "batched additions bit-identical to EmulatedOracle: " << checked << "\n";
  CHECK(checked > 1000000);
}

TEST_CASE("a Sum's first push over Emulated (Identity + x) == EmulatedOracle's +0 + x",
          "[fast][fast_emulated]") {
  using enum Rounding;
  long n = 0;
  n +=
      FirstPushEveryMode<Fp8E4M3Tag, kNearestEven, kNearestAway, kTowardZero, kUp, kDown, kToOdd>();
  n +=
      FirstPushEveryMode<Fp8E5M2Tag, kNearestEven, kNearestAway, kTowardZero, kUp, kDown, kToOdd>();
  n += FirstPushEveryMode<Fp8E4M3SatTag, kDown>();
  n += FirstPushEveryMode<BF16Tag, kNearestEven, kDown>();
  // The dynamic type: the mode is read from the scope at the call.
  long bad = 0;
  for (Rounding r : kAllRoundings) {
    if (r == kStochastic) continue;
    EmulationScope scope(Fp8E5M2(), r, 1);
    using C = Sum<Fast>;
    for (double x : AllValues(Fp8E5M2())) {
      const double got = C::Push(C::Identity(), Fast::FromFormatValue(x)).s.Value();
      const double want = (Slow::FromFormatValue(0.0) + Slow::FromFormatValue(x)).Value();
      ++n;
      if (!SameValue(got, want) && bad++ < 5)
        FAIL_CHECK("dynamic e5m2/" << RoundingName(r) << ": Identity + " << Exact(x)
                                   << ": EmulatedOracle " << Exact(want) << " Emulated "
                                   << Exact(got));
    }
  }
  CHECK(bad == 0);
  std::cout << "first pushes bit-identical to EmulatedOracle: " << n << "\n";
}
