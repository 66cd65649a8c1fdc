// Replay (core/replay.hpp) equals ReplayOracle (core/replay_oracle.hpp) bit for bit: every carrier
// of core/ in float and double, over every schedule kind (each structured path and its edges),
// on random inputs with special values mixed in, and over random explicit trees whose combines
// are not in post-order. tests/precision/test_fast_replay_matrix.cpp runs the same check over
// the emulated, Half/BFloat16 and Mpfr scalars.
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "core/carriers/all.hpp"
#include "core/carriers/kahan.hpp"
#include "core/replay.hpp"
#include "support/replay_check.hpp"
#include "support/test_support.hpp"

using namespace carrier;
using carrier::test::CheckReplay;
using carrier::test::ReplayTally;
using carrier::test::Rng;

namespace {

// A value: mostly normal(0, 1) * 10^k, sometimes a special one (NaN, +-inf, -0, huge, tiny).
template <class T>
T Draw(Rng& rng, bool specials) {
  if (specials && rng.Below(64) == 0) {
    switch (rng.Below(6)) {
      case 0:
        return std::numeric_limits<T>::quiet_NaN();
      case 1:
        return std::numeric_limits<T>::infinity();
      case 2:
        return -std::numeric_limits<T>::infinity();
      case 3:
        return -T(0);
      case 4:
        return std::numeric_limits<T>::max() / T(4);
      default:
        return std::numeric_limits<T>::denorm_min();
    }
  }
  return static_cast<T>(rng.Normal() * std::pow(10.0, static_cast<double>(rng.Below(5)) - 2));
}

constexpr std::size_t kDv = 3;

// Every carrier over x (drawn in T) and schedule.
template <class T>
void AllCarriers(const std::vector<T>& x, const std::vector<T>& y, const std::string& schedule,
                 const std::string& type, std::uint64_t seed, ReplayTally& tally) {
  const std::size_t n = x.size();
  CheckReplay<Sum<T>>(x, schedule, "Sum<" + type + ">", seed, tally);
  CheckReplay<Compensated<T>>(x, schedule, "Compensated<" + type + ">", seed, tally);
  CheckReplay<Max<T>>(x, schedule, "Max<" + type + ">", seed, tally);
  CheckReplay<OnlineSoftmax<T>>(x, schedule, "OnlineSoftmax<" + type + ">", seed, tally);
  CheckReplay<Welford<T>>(x, schedule, "Welford<" + type + ">", seed, tally);
  CheckReplay<ScaledNorm2<T>>(x, schedule, "ScaledNorm2<" + type + ">", seed, tally);
  std::vector<IndexedValue<T>> iv(n);
  std::vector<ValuePair<T>> pairs(n);
  std::vector<std::array<T, kDv>> v(n);
  std::vector<FlashInput<T>> flash(n);
  for (std::size_t i = 0; i < n; ++i) {
    iv[i] = {x[i], static_cast<std::int64_t>(i)};
    pairs[i] = {x[i], y[i]};
    for (std::size_t j = 0; j < kDv; ++j) v[i][j] = y[(i + j) % n];
    flash[i] = {x[i], v[i].data()};
  }
  CheckReplay<ArgMax<T>>(iv, schedule, "ArgMax<" + type + ">", seed, tally);
  CheckReplay<Dot<T>>(pairs, schedule, "Dot<" + type + ">", seed, tally);
  CheckReplay<Affine<T>>(pairs, schedule, "Affine<" + type + ">", seed, tally);
  CheckReplay<FlashRow<T, kDv>>(flash, schedule, "FlashRow<" + type + ", 3, FA2>", seed, tally);
  CheckReplay<FlashRow<T, kDv, FlashVariant::kFA1>>(flash, schedule,
                                                    "FlashRow<" + type + ", 3, FA1>", seed, tally);
}

template <class T>
void RunType(const std::string& type, std::uint64_t seed) {
  Rng rng(seed);
  ReplayTally tally;
  for (const std::string& schedule : test::ReplaySchedules()) {
    for (std::uint64_t n : test::ReplaySizes(seed, 3, 3000)) {
      const bool specials = rng.Below(3) == 0;
      std::vector<T> x(n), y(n);
      for (auto& e : x) e = Draw<T>(rng, specials);
      for (auto& e : y) e = Draw<T>(rng, false);
      AllCarriers<T>(x, y, schedule, type, seed, tally);
    }
  }
  std::cout << "Replay == ReplayOracle (" << type << "): " << tally.equal
            << " states bit-identical, " << tally.refused << " refused alike by all three\n";
  CHECK(tally.equal > 5000);
  CHECK(tally.refused > 0);  // strided trees for ArgMax/Affine, lifts for carriers without one
}

// A random valid tree over n inputs: a random partition into contiguous chains (some empty,
// some lifting tiles when `lift`), then combines of adjacent live nodes picked at random, so
// the combine list is in no particular traversal order.
MergeTree RandomTree(Rng& rng, std::uint64_t n, bool lift) {
  MergeTree t;
  t.n = n;
  t.schedule = "random-tree";
  for (std::uint64_t lo = 0; lo < n;) {
    if (rng.Below(8) == 0) t.chains.push_back({0, 0, 1, ChainMode::kPush});
    const std::uint64_t len = std::min(n - lo, 1 + rng.Below(rng.Below(2) ? 3 : 40));
    const ChainMode mode = lift && rng.Below(2) ? ChainMode::kLiftTile : ChainMode::kPush;
    t.chains.push_back({lo, len, 1, mode});
    lo += len;
  }
  if (t.chains.empty() && rng.Below(2)) t.chains.push_back({0, 0, 1, ChainMode::kPush});
  std::vector<std::uint64_t> live;
  for (std::uint64_t k = 0; k < t.chains.size(); ++k) live.push_back(k);
  while (live.size() > 1) {
    const std::size_t i = rng.Below(live.size() - 1);
    t.combines.push_back({live[i], live[i + 1]});
    live[i] = t.chains.size() + t.combines.size() - 1;
    live.erase(live.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  }
  return t;
}

template <class C>
void CheckTree(const MergeTree& t, const std::vector<typename C::Input>& x, const char* types,
               std::uint64_t seed, long& checks) {
  const std::span<const typename C::Input> xs(x);
  const auto want = ReplayOracle<C>(t, xs);
  const auto got = Replay<C>(t, xs);
  INFO("reproduce: seed=" << seed << " n=" << x.size() << " types=" << types
                          << " tree=" << ToJson(t));
  REQUIRE(StatesBitEqual<C>(want, got));
  ++checks;
}

}  // namespace

TEST_CASE("Replay equals ReplayOracle bit for bit: float, every carrier and schedule",
          "[fast][fast_replay]") {
  RunType<float>("float", 20261201);
}

TEST_CASE("Replay equals ReplayOracle bit for bit: double, every carrier and schedule",
          "[fast][fast_replay]") {
  RunType<double>("double", 20261202);
}

TEST_CASE("Replay equals ReplayOracle bit for bit on random explicit trees",
          "[fast][fast_replay]") {
  const std::uint64_t seed = 99173;
  Rng rng(seed);
  long checks = 0;
  for (int trial = 0; trial < test::Trials(300); ++trial) {
    const std::uint64_t n = rng.Below(rng.Below(2) ? 20 : 700);
    const bool lift = rng.Below(2);
    const MergeTree t = RandomTree(rng, n, lift);
    INFO("tree problem: " << ValidateTree(t));
    REQUIRE(ValidateTree(t).empty());
    std::vector<float> x(n);
    for (auto& e : x) e = Draw<float>(rng, trial % 4 == 0);
    CheckTree<OnlineSoftmax<float>>(t, x, "OnlineSoftmax<float>", seed, checks);
    CheckTree<Welford<float>>(t, x, "Welford<float>", seed, checks);
    if (!lift) {
      CheckTree<Sum<float>>(t, x, "Sum<float>", seed, checks);
      CheckTree<Compensated<float>>(t, x, "Compensated<float>", seed, checks);
      std::vector<ValuePair<float>> p(n);
      for (std::size_t i = 0; i < n; ++i) p[i] = {x[i], Draw<float>(rng, false)};
      CheckTree<Affine<float>>(t, p, "Affine<float>", seed, checks);
    }
  }
  std::cout << "Replay == ReplayOracle on " << checks << " random explicit trees\n";
  CHECK(checks > 2 * test::Trials(300));  // two carriers on every tree, five on half
}

TEST_CASE("Replay refuses what ReplayOracle refuses, with the same message",
          "[fast][fast_replay]") {
  const std::vector<float> x(10, 1.0f);
  const std::span<const float> xs(x);
  CHECK_THROWS_AS(Replay<Sum<float>>(BuildTree("seq", 9), xs), ScheduleError);
  std::vector<ValuePair<float>> p(10, {1.0f, 2.0f});
  const std::span<const ValuePair<float>> ps(p);
  std::string want, got;
  try {
    (void)ReplayOracle<Affine<float>>(BuildTree("strided:4", 10), ps);
  } catch (const ScheduleError& e) {
    want = e.what();
  }
  try {
    (void)Replay<Affine<float>>(ParseSchedule("strided:4"), ps);
  } catch (const ScheduleError& e) {
    got = e.what();
  }
  std::cout << "refusal: " << got << "\n";
  CHECK(!want.empty());
  CHECK(got == want);
  CHECK_THROWS_AS(Replay<Sum<float>>(ParseSchedule("blocked:4:lift"), xs), ScheduleError);
  // Empty input: Identity without evaluating anything (strided still merges its K lanes).
  const std::span<const float> none;
  CHECK(Replay<Sum<float>>(ParseSchedule("pairwise"), none).s == 0.0f);
  CHECK(!std::signbit(Replay<Sum<float>>(ParseSchedule("strided:3"), none).s));
}

TEST_CASE("Replay's shape probe says of each schedule what its built tree says",
          "[fast][fast_replay]") {
  // replay_detail::ShapeOf walks a schedule without evaluating the pieces its walk offers
  // whole; before any input is read, Replay takes from it whether the tree is empty, permutes
  // its inputs or lifts tiles (the refusals and the empty case). Each must be BuildTree's.
  std::vector<std::string> schedules = test::ReplaySchedules();
  for (const char* extra : {"strided:7:lift", "splitk:4:strided:3:lift", "omp:5:seq:cuda:32:2",
                            "omp:9:pairwise:reverse", "splitk:3:blocked:2:pairwise:lift"})
    schedules.emplace_back(extra);
  long checked = 0;
  for (const std::string& text : schedules) {
    const Schedule s = ParseSchedule(text);
    for (std::uint64_t n : {0, 1, 2, 3, 5, 17, 64, 100, 1001}) {
      const MergeTree t = BuildTree(s, n);
      const replay_detail::Shape got = replay_detail::ShapeOf(s, n);
      INFO("reproduce: schedule=" << text << " n=" << n << ": probe empty/permutes/lifts "
                                  << got.empty << got.permutes << got.lifts << ", tree "
                                  << t.Empty() << t.permutes << t.UsesTileLift());
      REQUIRE(got.empty == t.Empty());
      REQUIRE(got.permutes == t.permutes);
      REQUIRE(got.lifts == t.UsesTileLift());
      ++checked;
    }
  }
  std::cout << "shape probe: " << checked << " (schedule, n) pairs equal to BuildTree's\n";
}

TEST_CASE("Replay's random:S splitter is tree_detail::RandomSplit", "[fast][fast_replay]") {
  // The hoisted Mix(seed) must not change a single split: edge intervals (the 3-input minimum,
  // the region bound kRandomRegion, 32-bit and 64-bit sizes) and random ones, several seeds.
  Rng rng(20261202);
  const std::uint64_t region = replay_detail::kRandomRegion;
  const std::uint64_t big = ~std::uint64_t{0};
  long checks = 0;
  for (std::uint64_t seed : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{99}, big}) {
    const replay_detail::RandomSplitter split{tree_detail::Mix(seed)};
    std::vector<std::pair<std::uint64_t, std::uint64_t>> spans = {
        {0, 3},          {5, 8},          {0, region}, {0, region + 1}, {7, region + 7},
        {0, 1ULL << 32}, {1, 1ULL << 33}, {0, big},    {big - 3, big},  {big / 2, big - 1}};
    for (int i = 0; i < 20000; ++i) {
      const std::uint64_t lo = rng.Below(2) ? rng.Below(1 << 20) : rng.Next() >> 1;
      const std::uint64_t len = 3 + rng.Below(rng.Below(2) ? 4 * region : std::uint64_t{1} << 40);
      if (lo <= big - len) spans.push_back({lo, lo + len});
    }
    for (auto [lo, hi] : spans) {
      const std::uint64_t want = tree_detail::RandomSplit(seed, lo, hi);
      const std::uint64_t got = split(lo, hi);
      INFO("reproduce: seed=" << seed << " lo=" << lo << " hi=" << hi);
      REQUIRE(got == want);
      REQUIRE(got > lo);
      REQUIRE(got < hi);
      ++checks;
    }
  }
  std::cout << "RandomSplitter == RandomSplit on " << checks << " intervals\n";
  CHECK(checks > 40000);
}

TEST_CASE("random:S splits of a level, eight at a time, are the scalar splitter's",
          "[fast][fast_replay]") {
  // core/random_splits.hpp: RandomSplitLevel (SplitMix64 in 64-bit lanes, h % d in exact
  // double steps where the CPU has AVX-512) against RandomSplitter one at a time, on levels of
  // every length 1..40 (the vector loop and its scalar remainder), region-sized intervals and
  // the largest it takes, bases near 0 and near 2^64; then SmallRemainders against `%` on
  // the quotients' worst cases: h = 0, 2^64 - 1, k d and k d +- 1 for high and low k, halves
  // 2^32 - 1, every d up to 4096 and random d below 2^20.
  Rng rng(20261204);
  const bool vector = replay_detail::RandomSplitsVectorised();
  std::cout << "RandomSplitLevel runs " << (vector ? "the AVX-512 path" : "the scalar path")
            << " on this CPU\n";
  long checks = 0;
  for (std::uint64_t seed : {std::uint64_t{0}, std::uint64_t{1}, ~std::uint64_t{0}}) {
    const replay_detail::RandomSplitter split{tree_detail::Mix(seed)};
    for (std::uint32_t count = 1; count <= 40; ++count) {
      for (const std::uint64_t base : {std::uint64_t{0}, std::uint64_t{12345}, rng.Next() >> 1,
                                       ~std::uint64_t{0} - (1u << 21)}) {
        std::vector<std::uint32_t> a(count), b(count), mid(count);
        for (std::uint32_t k = 0; k < count; ++k) {
          const std::uint32_t len =
              k % 5 == 0 ? replay_detail::kRandomSplitMaxSize
                         : 3 + static_cast<std::uint32_t>(rng.Below(k % 2 ? 2046 : 60000));
          a[k] = static_cast<std::uint32_t>(rng.Below(1000));
          b[k] = a[k] + len;
        }
        replay_detail::RandomSplitLevel(split, base, a.data(), b.data(), mid.data(), count);
        for (std::uint32_t k = 0; k < count; ++k) {
          INFO("reproduce: seed=" << seed << " base=" << base << " a=" << a[k] << " b=" << b[k]
                                  << " lane " << k << " of " << count);
          REQUIRE(base + mid[k] == split(base + a[k], base + b[k]));
          ++checks;
        }
      }
    }
  }
  std::vector<std::uint64_t> h;
  std::vector<std::uint32_t> d;
  auto add = [&](std::uint64_t hv, std::uint32_t dv) {
    h.push_back(hv);
    d.push_back(dv);
  };
  auto worst = [&](std::uint32_t dv) {
    const std::uint64_t top = ~std::uint64_t{0};
    for (const std::uint64_t hv :
         {std::uint64_t{0}, top, top - top % dv, top - top % dv - 1, std::uint64_t{dv} - 1,
          std::uint64_t{dv}, (std::uint64_t{0xffffffff} << 32) | 0xffffffffu,
          (std::uint64_t{0xffffffff} / dv * dv) << 32,
          ((std::uint64_t{0xffffffff} / dv * dv) << 32) - 1, rng.Next(), rng.Next() / dv * dv,
          rng.Next() / dv * dv + dv - 1})
      add(hv, dv);
  };
  for (std::uint32_t dv = 1; dv <= 4096; ++dv) worst(dv);
  for (int i = 0; i < 20000; ++i) worst(1 + static_cast<std::uint32_t>(rng.Below((1u << 20) - 1)));
  worst((1u << 20) - 1);
  std::vector<std::uint64_t> r(h.size());
  replay_detail::SmallRemainders(h.data(), d.data(), r.data(), h.size());
  for (std::size_t k = 0; k < h.size(); ++k) {
    INFO("reproduce: h=" << h[k] << " d=" << d[k]);
    REQUIRE(r[k] == h[k] % d[k]);
  }
  std::cout << "RandomSplitLevel == RandomSplitter on " << checks << " splits; SmallRemainders == %"
            << " on " << h.size() << " pairs\n";
  CHECK(checks == 3 * 4 * (40 * 41 / 2));  // seeds x bases x every lane of every length
}

TEST_CASE("Replay random:S equals ReplayOracle for every n to 300, region edges and seeds",
          "[fast][fast_replay]") {
  // The breadth-first region evaluation (core/replay.hpp, RandomRegion) against the tree:
  // every n in 1..300 (every small shape's pair/leaf/node mix), sizes around kRandomRegion and
  // its multiples (region reached by recursion), random larger ones; carriers whose Combine
  // differs in shape: sum, Kahan, Neumaier-style compensated, Welford, online softmax (lse).
  Rng rng(20261203);
  const std::uint64_t region = replay_detail::kRandomRegion;
  const std::vector<std::uint64_t> sizes = test::RandomTreeSizes(
      rng,
      {region - 1, region, region + 1, 2 * region - 1, 2 * region, 2 * region + 1, 3 * region + 17},
      4, 40000);
  // Both placements of a level (core/random_splits.hpp: one child at a time, or 16 nodes' left
  // then right children in vectors where the CPU has AVX-512): alternate sizes take either.
  const bool cpu_vector = replay_detail::UseRandomSplitsVectorised(true);
  ReplayTally tally;
  long scalar_sizes = 0;
  for (std::uint64_t n : sizes) {
    const bool scalar = !cpu_vector || n % 2 == 0;
    replay_detail::UseRandomSplitsVectorised(!scalar);
    scalar_sizes += scalar;
    const std::uint64_t seed = n <= 300 ? n % 7 : rng.Next();
    const std::string schedule = "random:" + std::to_string(seed);
    INFO("path: " << (scalar ? "scalar" : "AVX-512"));
    const bool specials = rng.Below(4) == 0;
    std::vector<float> x(n);
    for (auto& e : x) e = Draw<float>(rng, specials);
    CheckReplay<Sum<float>>(x, schedule, "Sum<float>", seed, tally);
    CheckReplay<Kahan<float>>(x, schedule, "Kahan<float>", seed, tally);
    CheckReplay<Compensated<float>>(x, schedule, "Compensated<float>", seed, tally);
    CheckReplay<Welford<float>>(x, schedule, "Welford<float>", seed, tally);
    CheckReplay<OnlineSoftmax<float>>(x, schedule, "OnlineSoftmax<float>", seed, tally);
    if (n <= 64 || n == region + 1) {
      std::vector<double> xd(x.begin(), x.end());
      CheckReplay<Sum<double>>(xd, schedule, "Sum<double>", seed, tally);
    }
  }
  replay_detail::UseRandomSplitsVectorised(true);
  std::cout << "Replay == ReplayOracle on random:S: " << tally.equal
            << " states bit-identical over " << sizes.size() << " sizes (" << scalar_sizes
            << " of them by the scalar path)\n";
  CHECK(tally.equal >= 5 * 300);
  CHECK(tally.refused == 0);
}
