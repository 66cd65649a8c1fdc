// Replay (core/replay.hpp) equals ReplayOracle bit for bit over the compute scalars of
// precision/: Half, BFloat16, EmulatedOracle in every predefined format and every rounding mode
// (stochastic included, through EmulatedOracleDynamic and an EmulationScope, plus static tags), and
// Mpfr at 64 and 256 bits; every carrier of core/ (FlashRow FA2 and FA1 with Dv = 3); every
// schedule kind of tests/support/replay_check.hpp. Each evaluation starts from the same
// stochastic stream (a StochasticSeedScope per path), so under sr the three paths must also
// draw the same random bits in the same order: that is what makes Replay fall back to
// ReplayOracle's evaluation order there, and this test is what would catch it if it did not.
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "core/carriers/all.hpp"
#include "core/replay.hpp"
#include "precision/emulated.hpp"
#include "precision/math_policy.hpp"
#include "precision/scalars.hpp"
#include "support/replay_check.hpp"
#include "support/test_support.hpp"

using namespace carrier;
using carrier::test::CheckReplay;
using carrier::test::ReplayTally;
using carrier::test::Rng;

namespace {

double DrawDouble(Rng& rng, bool specials) {
  if (specials && rng.Below(48) == 0) {
    switch (rng.Below(4)) {
      case 0:
        return std::numeric_limits<double>::quiet_NaN();
      case 1:
        return std::numeric_limits<double>::infinity();
      case 2:
        return -std::numeric_limits<double>::infinity();
      default:
        return -0.0;
    }
  }
  return rng.Normal() * std::pow(10.0, static_cast<double>(rng.Below(3)) - 1);
}

// Runs f with the thread's stochastic stream reset to `seed`, counter 0.
struct SeededRun {
  std::uint64_t seed;
  template <class F>
  auto operator()(F&& f) const {
    StochasticSeedScope scope(seed);
    return f();
  }
};

constexpr std::size_t kDv = 3;

template <class T>
void AllCarriers(const std::vector<T>& x, const std::vector<T>& y, const std::string& schedule,
                 const std::string& type, std::uint64_t seed, ReplayTally& tally) {
  const SeededRun run{seed};
  const std::size_t n = x.size();
  CheckReplay<Sum<T>>(x, schedule, "Sum<" + type + ">", seed, tally, run);
  CheckReplay<Compensated<T>>(x, schedule, "Compensated<" + type + ">", seed, tally, run);
  CheckReplay<Max<T>>(x, schedule, "Max<" + type + ">", seed, tally, run);
  CheckReplay<OnlineSoftmax<T>>(x, schedule, "OnlineSoftmax<" + type + ">", seed, tally, run);
  CheckReplay<Welford<T>>(x, schedule, "Welford<" + type + ">", seed, tally, run);
  CheckReplay<ScaledNorm2<T>>(x, schedule, "ScaledNorm2<" + type + ">", seed, tally, run);
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
  CheckReplay<ArgMax<T>>(iv, schedule, "ArgMax<" + type + ">", seed, tally, run);
  CheckReplay<Dot<T>>(pairs, schedule, "Dot<" + type + ">", seed, tally, run);
  CheckReplay<Affine<T>>(pairs, schedule, "Affine<" + type + ">", seed, tally, run);
  CheckReplay<FlashRow<T, kDv>>(flash, schedule, "FlashRow<" + type + ", 3, FA2>", seed, tally,
                                run);
  CheckReplay<FlashRow<T, kDv, FlashVariant::kFA1>>(
      flash, schedule, "FlashRow<" + type + ", 3, FA1>", seed, tally, run);
}

template <class T>
void RunType(const std::string& type, std::uint64_t seed, int random_sizes = 1,
             std::uint64_t max_n = 1500) {
  Rng rng(seed);
  ReplayTally tally;
  for (const std::string& schedule : test::ReplaySchedules()) {
    for (std::uint64_t n : test::ReplaySizes(seed, random_sizes, max_n)) {
      if (n > 100 && rng.Below(3) != 0) continue;  // keep the slow scalars' run short
      const bool specials = rng.Below(3) == 0;
      std::vector<T> x, y;
      for (std::uint64_t i = 0; i < n; ++i) {
        x.push_back(T(DrawDouble(rng, specials)));
        y.push_back(T(DrawDouble(rng, false)));
      }
      AllCarriers<T>(x, y, schedule, type, seed, tally);
    }
  }
  std::cout << "Replay == ReplayOracle (" << type << "): " << tally.equal
            << " states bit-identical, " << tally.refused << " refused alike\n";
  CHECK(tally.equal > 1000);
}

void RunDynamic(const Format& f, Rounding r, std::uint64_t seed) {
  EmulationScope scope(f, r, seed);
  RunType<EmulatedOracleDynamic>(f.name + "/" + std::string(RoundingName(r)), seed);
}

}  // namespace

TEST_CASE("Replay == ReplayOracle: Half and BFloat16", "[fast][fast_replay]") {
  RunType<Half>("Half", 501);
  RunType<BFloat16>("BFloat16", 502);
}

TEST_CASE("Replay == ReplayOracle: emulated formats in every rounding mode",
          "[fast][fast_replay]") {
  std::uint64_t seed = 600;
  for (const Format& f : {Fp16(), BF16()})
    for (Rounding r : kAllRoundings) RunDynamic(f, r, ++seed);
  for (Rounding r : {Rounding::kNearestEven, Rounding::kTowardZero, Rounding::kStochastic}) {
    RunDynamic(Fp8E4M3(), r, ++seed);
    RunDynamic(Fp8E5M2(), r, ++seed);
    RunDynamic(TF32(), r, ++seed);
    RunDynamic(Fp32(), r, ++seed);
    RunDynamic(ParseFormat("custom:p=9,emin=-20,emax=20"), r, ++seed);
  }
}

TEST_CASE("Replay == ReplayOracle: static emulated tags", "[fast][fast_replay]") {
  RunType<EmulatedOracle<BF16Tag, Rounding::kTowardZero>>("static bf16/rz", 701);
  RunType<EmulatedOracle<Fp16Tag, Rounding::kStochastic>>("static fp16/sr", 702);
}

TEST_CASE("Replay decides order freedom by the rounding mode in force", "[fast][fast_replay]") {
  CHECK(ReplayOrderFree<float>::Holds());
  CHECK(ReplayOrderFree<Half>::Holds());
  CHECK(ReplayOrderFree<EmulatedOracle<BF16Tag, Rounding::kTowardZero>>::Holds());
  CHECK(!ReplayOrderFree<EmulatedOracle<Fp16Tag, Rounding::kStochastic>>::Holds());
  {
    EmulationScope scope(BF16(), Rounding::kNearestEven);
    CHECK(ReplayOrderFree<EmulatedOracleDynamic>::Holds());
  }
  EmulationScope scope(BF16(), Rounding::kStochastic);
  CHECK(!ReplayOrderFree<EmulatedOracleDynamic>::Holds());
}

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
TEST_CASE("Replay == ReplayOracle: Mpfr 64 and 256 bits", "[fast][fast_replay]") {
  for (long bits : {64L, 256L}) {
    MpfrPrecisionScope scope(bits);
    RunType<Mpfr>("Mpfr " + std::to_string(bits), 800 + static_cast<std::uint64_t>(bits), 0, 200);
  }
}
#endif

TEST_CASE("Replay == ReplayOracle: random:S over emulated bf16, every n to 300 and region edges",
          "[fast][fast_replay]") {
  // core/replay.hpp evaluates random:S subtrees breadth first (RandomRegion); over
  // Emulated (the bench's scalar, static and dynamic) and EmulatedOracle, rne and rz, the states
  // must be ReplayOracle's bits for every small shape and across the region bound.
  Rng rng(20261204);
  const std::uint64_t region = replay_detail::kRandomRegion;
  const std::vector<std::uint64_t> sizes =
      test::RandomTreeSizes(rng, {region, region + 1, 2 * region + 3}, 2, 20000);
  ReplayTally tally;
  for (std::uint64_t n : sizes) {
    const std::uint64_t seed = n <= 300 ? n % 5 : rng.Next();
    const std::string schedule = "random:" + std::to_string(seed);
    std::vector<double> v(n);
    for (auto& e : v) e = DrawDouble(rng, rng.Below(4) == 0);
    {
      using T = Emulated<BF16Tag, Rounding::kNearestEven>;
      std::vector<T> x;
      for (double e : v) x.push_back(T(e));
      CheckReplay<Sum<T>>(x, schedule, "Sum<Emulated bf16/rne>", seed, tally);
      CheckReplay<Welford<T>>(x, schedule, "Welford<Emulated bf16/rne>", seed, tally);
    }
    {
      using T = Emulated<BF16Tag, Rounding::kTowardZero>;
      std::vector<T> x;
      for (double e : v) x.push_back(T(e));
      CheckReplay<Sum<T>>(x, schedule, "Sum<Emulated bf16/rz>", seed, tally);
      CheckReplay<Compensated<T>>(x, schedule, "Compensated<Emulated bf16/rz>", seed, tally);
    }
    if (n <= 100 || n == region + 1) {
      EmulationScope scope(BF16(), Rounding::kTowardZero, seed);
      std::vector<EmulatedDynamic> xf;
      std::vector<EmulatedOracleDynamic> xs;
      for (double e : v) {
        xs.push_back(EmulatedOracleDynamic(e));
        xf.push_back(EmulatedDynamic::FromFormatValue(xs.back().Value()));
      }
      CheckReplay<Sum<EmulatedDynamic>>(xf, schedule, "Sum<EmulatedDynamic bf16/rz>", seed, tally);
      CheckReplay<OnlineSoftmax<EmulatedOracleDynamic>>(
          xs, schedule, "OnlineSoftmax<EmulatedOracleDynamic bf16/rz>", seed, tally);
    }
  }
  std::cout << "Replay == ReplayOracle on random:S over emulated bf16: " << tally.equal
            << " states bit-identical over " << sizes.size() << " sizes\n";
  CHECK(tally.equal >= 4 * 300);
  CHECK(tally.refused == 0);
}

TEST_CASE("Replay == ReplayOracle: level-batched trees and batched chains over Emulated",
          "[fast][fast_replay]") {
  // Sum over a Emulated has a vector batch (HasVectorCombine, HasBatchChains): its
  // pairwise:1 subtrees up to kPairwiseRegion inputs and its random:S regions are evaluated a
  // level at a time (core/replay.hpp PairwiseRegionLevels, RandomRegionStates), and its chains
  // (seq, blocked tiles 32 at a time, strided rows, pairwise:4's sibling leaves) go to
  // GatheredAdd::Chains. Every n to 300 (every small shape), the region bounds and their
  // multiples (regions reached by recursion, up to three plan sizes), random larger n; bf16
  // and fp16 in four modes and the dynamic type; with specials (NaN, inf, -0: lanes that leave
  // the vector step); the vector form on and off on alternate sizes.
  Rng rng(20261205);
  const std::uint64_t pr = replay_detail::kPairwiseRegion;
  const std::vector<std::uint64_t> sizes = test::RandomTreeSizes(
      rng, {pr - 1, pr, pr + 1, 2 * pr - 1, 2 * pr + 1, 3 * pr + 5, 5 * pr + 3}, 3, 30000);
  const bool cpu_vector = UseGatheredAddVectorised(true);
  ReplayTally tally;
  long scalar_sizes = 0;
  for (std::uint64_t n : sizes) {
    const bool vector = cpu_vector && n % 2 == 1;
    UseGatheredAddVectorised(vector);
    scalar_sizes += !vector;
    INFO("GatheredAdd vector form: " << (vector ? "on" : "off"));
    const std::uint64_t seed = n <= 300 ? n % 5 : rng.Next();
    std::vector<double> v(n);
    const bool specials = rng.Below(4) == 0;
    for (auto& e : v) e = DrawDouble(rng, specials);
    auto check = [&]<class T>(const char* name) {
      std::vector<T> x;
      for (double e : v) x.push_back(T(e));
      const std::vector<std::string> schedules = {"pairwise",
                                                  "random:" + std::to_string(seed),
                                                  "seq",
                                                  "blocked:" + std::to_string(1 + n % 70),
                                                  "blocked:16:pairwise",
                                                  "strided:" + std::to_string(1 + n % 41),
                                                  "strided:16:tile:5",
                                                  "pairwise:4"};
      for (const std::string& schedule : schedules)
        CheckReplay<Sum<T>>(x, schedule, std::string("Sum<Emulated ") + name + ">", seed, tally);
    };
    check.template operator()<Emulated<BF16Tag, Rounding::kNearestEven>>("bf16/rne");
    check.template operator()<Emulated<BF16Tag, Rounding::kTowardZero>>("bf16/rz");
    check.template operator()<Emulated<Fp16Tag, Rounding::kUp>>("fp16/ru");
    check.template operator()<Emulated<Fp16Tag, Rounding::kDown>>("fp16/rd");
    {
      EmulationScope scope(Fp8E5M2(), n % 3 == 0 ? Rounding::kToOdd : Rounding::kNearestAway, 1);
      check.template operator()<EmulatedDynamic>("dynamic e5m2");
    }
  }
  UseGatheredAddVectorised(true);
  std::cout << "Replay == ReplayOracle, level-batched and chain-batched Sum<Emulated>: "
            << tally.equal << " states bit-identical over " << sizes.size() << " sizes ("
            << scalar_sizes << " with the vector form off)\n";
  CHECK(tally.equal >= 40 * 300);
  CHECK(tally.refused == 0);
}
