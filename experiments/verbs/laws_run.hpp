// experiments/verbs/laws_run.hpp: the machinery of `carrier laws`, shared by the built-in ops
// (experiments/verbs/laws.cpp) and registered user carriers (experiments/registry/).
// RunLawsFor<CT>(options, traits) runs every law of laws.cpp's header comment for the carrier
// template CT<T> (instantiated at the working format and at Mpfr) and prints the table; exit 0
// when every declaration matches, 1 otherwise. Needs MPFR (include only under
// CARRIER_HAVE_MPFR).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <iomanip>
#include <iostream>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "cli/progress.hpp"
#include "core/carriers/all.hpp"
#include "core/derivations/law_probes.hpp"
#include "core/laws.hpp"
#include "precision/emulated_oracle.hpp"
#include "precision/format.hpp"
#include "precision/metrics.hpp"
#include "precision/mpfr_scalar.hpp"
#include "precision/scalars.hpp"

namespace carrier::cli::laws {

using Working = EmulatedOracle<DynamicFormatTag, kDynamicRounding>;

// A list of raw inputs as doubles: `a` the value (the score for attention, the slope for
// affine, the first factor for dot), `b` the second column where the op has one.
struct RawList {
  std::vector<double> a;
  std::vector<double> b;
};

enum class ListKind { kRandom, kSignedZeros, kHugeRange, kTies, kNegInf };

struct OpTraits {
  bool neg_inf_meaningful = false;  // lse, max, argmax, attention
  bool positive_slopes = false;     // affine: keep products of slopes in range
};

inline RawList MakeList(std::mt19937_64& rng, ListKind kind, const Format& f, const OpTraits& op) {
  std::normal_distribution<double> normal(0.0, 1.0);
  const std::size_t n = 1 + rng() % 8;
  RawList r;
  const double big = std::ldexp(1.0, f.emax / 2);
  const double small = std::ldexp(1.0, f.emin / 2);
  const double tie = std::ldexp(static_cast<double>(1 + rng() % 7), -static_cast<int>(rng() % 3));
  for (std::size_t i = 0; i < n; ++i) {
    double v = normal(rng) * std::ldexp(1.0, static_cast<int>(rng() % 5) - 2);
    switch (kind) {
      case ListKind::kRandom:
        break;
      case ListKind::kSignedZeros:
        v = (rng() % 4 == 0) ? (rng() % 2 ? 1.0 : -1.0) : (rng() % 2 ? 0.0 : -0.0);
        break;
      case ListKind::kHugeRange: {
        const double mags[3] = {big, small, 1.0};
        v = mags[rng() % 3] * (rng() % 2 ? 1 : -1);
        break;
      }
      case ListKind::kTies:
        v = tie;
        break;
      case ListKind::kNegInf:
        if (rng() % 2) v = -std::numeric_limits<double>::infinity();
        break;
    }
    double w = normal(rng);
    if (op.positive_slopes) {
      // affine: a slope near 1 keeps the composed product in range; huge-range lists scale
      // the constants instead.
      std::swap(v, w);
      v = 0.75 + 0.5 * std::fabs(std::fmod(v, 1.0));
      if (kind == ListKind::kSignedZeros) w = rng() % 2 ? 0.0 : -0.0;
      if (kind == ListKind::kHugeRange) w = (rng() % 2 ? big : small) * (rng() % 2 ? 1 : -1);
      if (kind == ListKind::kTies) w = tie;
    }
    r.a.push_back(v);
    r.b.push_back(w);
  }
  return r;
}

inline ListKind KindOf(std::uint64_t trial, const OpTraits& op) {
  const int k = static_cast<int>(trial % (op.neg_inf_meaningful ? 5 : 4));
  return static_cast<ListKind>(k);
}

// Turns raw doubles into the carrier's inputs in type T; attention's value rows live in the
// arena, which must outlive the inputs.
template <Carrier C>
struct InputMaker {
  using T = typename C::Scalar;
  using Input = typename C::Input;
  std::deque<std::array<T, 2>> arena;
  std::int64_t next_index = 0;

  std::vector<Input> Make(const RawList& raw) {
    std::vector<Input> out;
    for (std::size_t i = 0; i < raw.a.size(); ++i) out.push_back(One(raw.a[i], raw.b[i]));
    return out;
  }
  Input One(double a, double b) {
    if constexpr (std::is_same_v<Input, T>) {
      (void)b;
      return T(a);
    } else if constexpr (std::is_same_v<Input, ValuePair<T>>) {
      return Input{T(a), T(b)};
    } else if constexpr (std::is_same_v<Input, IndexedValue<T>>) {
      (void)b;
      return Input{T(a), next_index++};
    } else {
      arena.push_back({T(b), T(b * 0.5 - 1.0)});
      return Input{T(a), arena.back().data()};
    }
  }
};

template <class T>
bool AllFinite(const std::vector<T>& x) {
  return std::all_of(x.begin(), x.end(), [](const T& v) { return std::isfinite(v); });
}

inline std::string Pow2Text(long double g) {
  if (g == 0) return "0";
  if (std::isinf(static_cast<double>(g))) return "inf";
  std::ostringstream os;
  os << "2^" << std::fixed << std::setprecision(1) << static_cast<double>(std::log2(g));
  return os.str();
}

inline std::string Num(double v, int digits = 3) {
  std::ostringstream os;
  os << std::setprecision(digits) << v;
  return os.str();
}

struct Row {
  std::string law;
  std::string declared;  // "yes" / "no" / "-" (informational)
  std::string measured;
  std::string figures;
  std::string evidence;  // printed below the table when the row is a mismatch
  bool informational = false;
  bool Matches() const { return informational || declared == measured; }
};

inline const char* YesNo(bool b) { return b ? "yes" : "no"; }

struct Options {
  std::string op;
  std::string dtype;
  Format format;
  std::uint64_t trials;
  std::uint64_t seed;
};

// The raw triples every measurement uses, so that the working format and MPFR see the same
// lists. Exact laws use the finite ones only.
struct Corpus {
  std::vector<RawList> lists;  // 3 per trial
};

inline Corpus MakeCorpus(const Options& o, const OpTraits& op) {
  std::mt19937_64 rng(o.seed);
  Corpus c;
  for (std::uint64_t t = 0; t < o.trials; ++t)
    for (int j = 0; j < 3; ++j) c.lists.push_back(MakeList(rng, KindOf(t, op), o.format, op));
  return c;
}

inline bool RawFinite(const RawList& r) { return AllFinite(r.a) && AllFinite(r.b); }

template <template <class> class CT>
std::vector<Row> MeasureExact(const Corpus& corpus) {
  using C = CT<Mpfr>;
  std::vector<Row> rows;
  const std::vector<int> bits = {64, 128, 256, 512};
  std::vector<long double> gaps;
  std::string worst;
  for (int p : bits) {
    MpfrPrecisionScope scope(p);
    InputMaker<C> maker;
    std::vector<typename C::State> a, b, c;
    for (std::size_t i = 0; i + 2 < corpus.lists.size(); i += 3) {
      if (!RawFinite(corpus.lists[i]) || !RawFinite(corpus.lists[i + 1]) ||
          !RawFinite(corpus.lists[i + 2]))
        continue;
      auto fold = [&](const RawList& r) {
        const auto x = maker.Make(r);
        return Fold<C>(x.data(), x.size());
      };
      a.push_back(fold(corpus.lists[i]));
      b.push_back(fold(corpus.lists[i + 1]));
      c.push_back(fold(corpus.lists[i + 2]));
    }
    const GapReport g = AssociativityGap<C>(a, b, c);
    gaps.push_back(g.max_gap);
    if (p == 64) worst = g.worst;
  }
  const PrecisionClassification cls = ClassifyAcrossPrecisions(bits, gaps);
  {
    Row r;
    r.law = "associative (exact, MPFR)";
    r.declared = "yes";
    r.measured = YesNo(cls.holds);
    std::ostringstream os;
    os << "max rel gap";
    for (std::size_t i = 0; i < bits.size(); ++i) os << " " << bits[i] << "b:" << Pow2Text(gaps[i]);
    if (cls.exact)
      os << "; exact at every precision";
    else
      os << "; slope " << std::fixed << std::setprecision(1) << cls.slope << " per 64-bit step"
         << (cls.slope > -32 && cls.floor_limited
                 ? " (flat but below 2^-256: operands too far apart for 512 bits)"
                 : "");
    r.figures = os.str();
    r.evidence = "worst triple at 64 bits: " + worst;
    rows.push_back(r);
  }

  MpfrPrecisionScope scope(256);
  // Homomorphism: every finite list of the corpus concatenated with its successor, split at
  // every point.
  {
    InputMaker<C> maker;
    GapReport total;
    total.law = "homomorphism";
    for (std::size_t i = 0; i + 1 < corpus.lists.size(); i += 2) {
      if (!RawFinite(corpus.lists[i]) || !RawFinite(corpus.lists[i + 1])) continue;
      RawList joined = corpus.lists[i];
      joined.a.insert(joined.a.end(), corpus.lists[i + 1].a.begin(), corpus.lists[i + 1].a.end());
      joined.b.insert(joined.b.end(), corpus.lists[i + 1].b.begin(), corpus.lists[i + 1].b.end());
      const auto x = maker.Make(joined);
      std::vector<std::size_t> splits;
      for (std::size_t k = 0; k <= x.size(); ++k) splits.push_back(k);
      const GapReport g = HomomorphismGap<C>(x, splits);
      total.checked += g.checked;
      if (g.max_gap > total.max_gap || total.worst.empty()) {
        total.max_gap = std::max(total.max_gap, g.max_gap);
        total.worst = g.worst;
      }
    }
    Row r;
    r.law = "homomorphism (exact, MPFR 256b)";
    r.declared = "yes";
    r.measured = YesNo(total.max_gap <= 0x1p-128L);
    r.figures = "max rel gap " + Pow2Text(total.max_gap) + " over " +
                std::to_string(total.checked) + " splits (holds: <= 2^-128)";
    r.evidence = total.worst;
    rows.push_back(r);
  }
  // Commutativity, on the corpus states in order (ties and signed zeros included).
  {
    InputMaker<C> maker;
    std::vector<typename C::State> states;
    for (const auto& raw : corpus.lists) {
      if (!RawFinite(raw)) continue;
      const auto x = maker.Make(raw);
      states.push_back(Fold<C>(x.data(), x.size()));
    }
    const GapReport g = CommutativityGap<C>(states);
    Row r;
    r.law = "commutative (exact, MPFR 256b)";
    r.declared = YesNo(C::kCommutative);
    r.measured = YesNo(g.max_gap <= 0x1p-128L);
    r.figures =
        "max rel gap " + Pow2Text(g.max_gap) + " over " + std::to_string(g.checked) + " pairs";
    r.evidence = g.worst;
    rows.push_back(r);
  }
  return rows;
}

// W: EmulatedOracle in the --dtype format, or native double for fp64 (EmulatedOracle needs p <=
// 26).
template <template <class> class CT, class W>
std::vector<Row> MeasureWorking(const Options& o, const Corpus& corpus) {
  using C = CT<W>;
  std::vector<Row> rows;
  std::optional<EmulationScope> scope;
  if constexpr (std::is_same_v<W, Working>) scope.emplace(o.format, Rounding::kNearestEven);
  InputMaker<C> maker;
  std::vector<typename C::State> all, finite_states, a, b, c;
  std::vector<typename C::Input> push_inputs;
  std::mt19937_64 rng(o.seed ^ 0x9e3779b97f4a7c15ull);
  for (std::size_t i = 0; i < corpus.lists.size(); ++i) {
    const auto x = maker.Make(corpus.lists[i]);
    const auto s = Fold<C>(x.data(), x.size());
    all.push_back(s);
    if (RawFinite(corpus.lists[i])) finite_states.push_back(s);
    (i % 3 == 0 ? a : i % 3 == 1 ? b : c).push_back(s);
    push_inputs.push_back(x[rng() % x.size()]);
  }
  {
    const LawReport id = CheckIdentity<C>(finite_states);
    Row r{"identity (bitwise, finite)", "yes", YesNo(id.Holds()),
          std::to_string(id.checked) + " checks, " + std::to_string(id.violations) + " violations",
          id.counterexample};
    rows.push_back(r);
  }
  {
    const auto ulps = AssociativityUlps<C>(
        std::span<const typename C::State>(a), std::span<const typename C::State>(b),
        std::span<const typename C::State>(c), [&](long double v) { return UlpOf(v, o.format); });
    std::vector<double> sorted = ulps;
    std::sort(sorted.begin(), sorted.end());
    const double max = sorted.empty() ? 0 : sorted.back();
    const double median = sorted.empty() ? 0 : sorted[sorted.size() / 2];
    const double nonzero =
        sorted.empty() ? 0
                       : static_cast<double>(std::count_if(sorted.begin(), sorted.end(),
                                                           [](double u) { return u != 0; })) /
                             sorted.size();
    Row r;
    r.law = "associativity defect (" + o.dtype + ")";
    r.declared = "-";
    r.measured = "-";
    r.informational = true;
    r.figures = "ulps of the result over " + std::to_string(sorted.size()) + " triples: max " +
                Num(max) + ", median " + Num(median) + ", nonzero " + Num(100 * nonzero) + "%";
    rows.push_back(r);
  }
  {
    // Homomorphism in the working format: consecutive lists joined, every split.
    LawReport total;
    for (std::size_t i = 0; i + 1 < corpus.lists.size(); i += 2) {
      RawList joined = corpus.lists[i];
      joined.a.insert(joined.a.end(), corpus.lists[i + 1].a.begin(), corpus.lists[i + 1].a.end());
      joined.b.insert(joined.b.end(), corpus.lists[i + 1].b.begin(), corpus.lists[i + 1].b.end());
      const auto x = maker.Make(joined);
      std::vector<std::size_t> splits;
      for (std::size_t k = 0; k <= x.size(); ++k) splits.push_back(k);
      const LawReport h = CheckHomomorphism<C>(x, splits);
      total.checked += h.checked;
      total.violations += h.violations;
      total.max_rel_diff = std::max(total.max_rel_diff, h.max_rel_diff);
    }
    Row r;
    r.law = "homomorphism (" + o.dtype + ")";
    r.declared = "-";
    r.measured = "-";
    r.informational = true;
    r.figures = "bitwise equal " +
                Num(100.0 * (total.checked - total.violations) /
                    std::max<std::uint64_t>(1, total.checked)) +
                "% of " + std::to_string(total.checked) + " splits, max rel diff " +
                Num(static_cast<double>(total.max_rel_diff));
    rows.push_back(r);
  }
  {
    const LawReport bc = CheckBitwiseCommutative<C>(all);
    Row r{"bitwise commutative (" + o.dtype + ")", YesNo(C::kBitwiseCommutative), YesNo(bc.Holds()),
          std::to_string(bc.checked) + " pairs, " + std::to_string(bc.violations) +
              " differ; GPU xor butterfly " + (bc.Holds() ? "allowed" : "NOT allowed"),
          bc.Holds() ? "no witness among " + std::to_string(bc.checked) + " pairs"
                     : bc.counterexample};
    rows.push_back(r);
  }
  {
    const LawReport pc = CheckPushIsCombineLift<C>(all, push_inputs);
    Row r{"push == combine(lift)", YesNo(C::kPushIsCombineLift), YesNo(pc.Holds()),
          std::to_string(pc.checked) + " pushes, " + std::to_string(pc.violations) + " differ",
          pc.Holds() ? "no witness among " + std::to_string(pc.checked) + " pushes"
                     : pc.counterexample};
    rows.push_back(r);
  }
  if constexpr (C::kHasPadInput) {
    const LawReport pad = CheckPadInput<C>(all);
    Row r{"pad input is a no-op", "yes", YesNo(pad.Holds()),
          std::to_string(pad.checked) + " states, " + std::to_string(pad.violations) + " changed",
          pad.counterexample};
    rows.push_back(r);
  }
  return rows;
}

template <template <class> class CT>
int RunLawsFor(const Options& o, const OpTraits& traits) {
  std::vector<Row> rows, exact;
  {  // a progress line on a terminal while measuring; gone before the table is printed
    const Ticker ticker("carrier laws " + o.op + " (" + std::to_string(o.trials) +
                            " trials x 3 lists, exact laws in MPFR)",
                        0.0);
    const Corpus corpus = MakeCorpus(o, traits);
    rows = o.dtype == "fp64" ? MeasureWorking<CT, double>(o, corpus)
                             : MeasureWorking<CT, Working>(o, corpus);
    exact = MeasureExact<CT>(corpus);
  }
  rows.insert(rows.begin() + 1, exact[0]);
  rows.insert(rows.begin() + 3, exact[1]);
  rows.insert(rows.begin() + 5, exact[2]);

  std::cout << "carrier laws " << o.op << "  (working format " << o.dtype << ", " << o.trials
            << " trials x 3 lists, seed " << o.seed << "; random, signed-zero, huge-range, tie"
            << (traits.neg_inf_meaningful ? ", -inf" : "") << " lists; exact laws in MPFR)\n";
  std::size_t w = 4;
  for (const auto& r : rows) w = std::max(w, r.law.size());
  std::cout << std::left << std::setw(static_cast<int>(w) + 2) << "law" << std::setw(10)
            << "declared" << std::setw(10) << "measured" << std::setw(10) << "verdict"
            << "figures\n";
  int mismatches = 0;
  for (const auto& r : rows) {
    const std::string verdict = r.informational ? "info" : r.Matches() ? "ok" : "MISMATCH";
    mismatches += r.Matches() ? 0 : 1;
    std::cout << std::left << std::setw(static_cast<int>(w) + 2) << r.law << std::setw(10)
              << r.declared << std::setw(10) << r.measured << std::setw(10) << verdict << r.figures
              << "\n";
  }
  if (mismatches == 0) {
    std::cout << "verdict: every declaration of " << o.op << " matches what was measured\n";
    return 0;
  }
  std::cout << "verdict: " << mismatches << " declaration(s) of " << o.op
            << " refuted by measurement; evidence:\n";
  for (const auto& r : rows)
    if (!r.Matches()) std::cout << "  " << r.law << ": " << r.evidence << "\n";
  return 1;
}

}  // namespace carrier::cli::laws
