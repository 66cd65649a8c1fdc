// ReplayOracle: each schedule's tree evaluates in the order the schedule's text promises (checked
// against loops written independently of the tree code), all trees agree bit for bit where
// every partial result is exact, tile lifts replay, and impossible replays are refused.
#include <catch2/catch.hpp>
#include <functional>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include "core/carriers/all.hpp"
#include "core/laws.hpp"
#include "core/replay_oracle.hpp"
#include "support/test_support.hpp"

using namespace carrier;
using carrier::test::Repro;
using carrier::test::Rng;

namespace {

const std::vector<std::string> kSchedules = {"seq",
                                             "reverse",
                                             "pairwise",
                                             "pairwise:5",
                                             "blocked:1",
                                             "blocked:7",
                                             "blocked:64",
                                             "blocked:16:pairwise",
                                             "blocked:3:pairwise",
                                             "strided:1",
                                             "strided:4",
                                             "strided:16",
                                             "strided:5",
                                             "random:1",
                                             "random:99",
                                             "splitk:3",
                                             "splitk:4:pairwise",
                                             "splitk:5:blocked:3:pairwise"};

std::vector<std::uint64_t> Sizes() {
  std::vector<std::uint64_t> n = {0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 33, 64, 65, 100, 257};
  Rng rng(11);
  for (int i = 0; i < test::Trials(6); ++i) n.push_back(1 + rng.Below(3000));
  return n;
}

// Independent evaluations of the schedules for Sum<float>, written as plain loops.
float PairwiseRef(const std::vector<float>& x, std::size_t lo, std::size_t hi, std::size_t leaf) {
  if (hi - lo <= leaf) {
    float s = 0.0f;
    for (std::size_t i = lo; i < hi; ++i) s += x[i];
    return s;
  }
  const std::size_t mid = lo + (hi - lo + 1) / 2;
  return PairwiseRef(x, lo, mid, leaf) + PairwiseRef(x, mid, hi, leaf);
}

float ReferenceSum(const std::string& schedule, const std::vector<float>& x) {
  const std::size_t n = x.size();
  const Schedule s = ParseSchedule(schedule);
  if (n == 0 && s.kind() != ScheduleKind::kStrided) return 0.0f;
  using namespace carrier::orders;
  switch (s.kind()) {
    case ScheduleKind::kSeq: {
      float acc = 0.0f;
      for (float v : x) acc += v;
      return acc;
    }
    case ScheduleKind::kReverse: {
      float acc = 0.0f + x[n - 1];
      for (std::size_t i = n - 1; i-- > 0;) acc = (0.0f + x[i]) + acc;
      return acc;
    }
    case ScheduleKind::kPairwise:
      return PairwiseRef(x, 0, n, s.As<PairwiseParams>().leaf);
    case ScheduleKind::kBlocked: {
      const BlockedParams& b = s.As<BlockedParams>();
      std::vector<float> tiles;
      for (std::size_t lo = 0; lo < n; lo += b.tile) {
        float t = 0.0f;
        for (std::size_t i = lo; i < std::min(n, lo + b.tile); ++i) t += x[i];
        tiles.push_back(t);
      }
      if (b.outer == OuterOrder::kPairwise) return PairwiseRef(tiles, 0, tiles.size(), 1);
      float acc = tiles[0];
      for (std::size_t k = 1; k < tiles.size(); ++k) acc += tiles[k];
      return acc;
    }
    case ScheduleKind::kStrided: {
      const std::size_t lanes = s.As<StridedParams>().lanes;
      std::vector<float> lane(lanes, 0.0f);
      for (std::size_t i = 0; i < n; ++i) lane[i % lanes] += x[i];
      return PairwiseRef(lane, 0, lane.size(), 1);
    }
    case ScheduleKind::kRandom: {
      std::function<float(std::size_t, std::size_t)> rec = [&](std::size_t lo, std::size_t hi) {
        if (hi - lo == 1) return 0.0f + x[lo];
        const std::size_t mid = tree_detail::RandomSplit(s.As<RandomParams>().seed, lo, hi);
        return rec(lo, mid) + rec(mid, hi);
      };
      return rec(0, n);
    }
    case ScheduleKind::kSplitK: {
      // Slices of ceil(n / S), each by the nested order from zero, partials left to right
      // (empty slices have no node under these nested orders).
      const SplitKParams& k = s.As<SplitKParams>();
      const std::size_t len = (n + k.parts - 1) / k.parts;
      const std::string inner = k.inner.IsSet() ? carrier::ToString(k.inner.Get()) : "seq";
      float acc = 0.0f;
      for (std::size_t lo = 0; lo < n; lo += len) {
        const std::vector<float> slice(x.begin() + lo, x.begin() + std::min(n, lo + len));
        const float part = ReferenceSum(inner, slice);
        acc = lo == 0 ? part : acc + part;
      }
      return acc;
    }
    case ScheduleKind::kOmp:        // composed schedules: tests/kernels (omp) and
    case ScheduleKind::kCuda:       // tests/core/test_cuda_schedule.cpp check their trees
    case ScheduleKind::kCanonical:  // tests/core/test_orders.cpp (P4016's own loops)
    case ScheduleKind::kFile:       // tests/core/test_orders.cpp (round trips)
    case ScheduleKind::kNumpy:      // tests/experiments/test_orders_cli.cpp (numpy itself)
    case ScheduleKind::kTorch:      // and torch itself
    case ScheduleKind::kMma:        // tests/core/test_mma.cpp (a matrix unit's fused steps)
      break;
  }
  FAIL("ReferenceSum has no hand-written loop for schedule " << schedule);
  return 0.0f;
}

bool SameBits(float a, float b) { return ScalarTraits<float>::BitEqual(a, b); }

}  // namespace

TEST_CASE("replay follows each schedule's documented order", "[fast][replay]") {
  const std::uint64_t seed = 424242;
  Rng rng(seed);
  int checked = 0, differs_from_seq = 0;
  for (const auto& schedule : kSchedules) {
    for (std::uint64_t n : Sizes()) {
      std::vector<float> x(n);
      for (auto& v : x) v = static_cast<float>(rng.Normal() * 1e3 + 10);
      const float got =
          ReplayOracleResult<Sum<float>>(ParseSchedule(schedule), std::span<const float>(x));
      const float want = ReferenceSum(schedule, x);
      Repro r{seed, n, schedule, "Sum<float>", test::Join(x, 16)};
      INFO(r.Text() << "\nreplay " << got << " loop " << want);
      REQUIRE(SameBits(got, want));
      ++checked;
      differs_from_seq += !SameBits(got, ReferenceSum("seq", x));
    }
  }
  std::cout << "replay == independent loop in " << checked << " cases; " << differs_from_seq
            << " of them differ from seq (so the orders are really different)\n";
  CHECK(differs_from_seq > checked / 3);
}

namespace {

// Runs every schedule over x for carrier C and requires identical bits.
template <class C>
void RequireAllTreesAgree(const std::vector<typename C::Input>& x, const std::string& types,
                          std::uint64_t seed) {
  const std::span<const typename C::Input> xs(x);
  const auto want = C::Finalize(Fold<C>(x.data(), x.size()));
  for (const auto& schedule : kSchedules) {
    const Schedule s = ParseSchedule(schedule);
    const auto* strided = s.If<carrier::orders::StridedParams>();
    if (strided && strided->lanes > 1 && x.size() > 1 && !C::kCommutative) continue;
    const auto got = ReplayOracleResult<C>(s, xs);
    Repro r{seed, x.size(), schedule, types, ""};
    INFO(r.Text() << "\nrelative difference "
                  << static_cast<double>(RelativeDifference<C>(got, want)));
    REQUIRE(ResultsBitEqual<C>(got, want));
  }
}

}  // namespace

TEST_CASE("all trees agree bit for bit when every partial result is exact", "[fast][replay]") {
  const std::uint64_t seed = 777;
  Rng rng(seed);
  for (std::uint64_t n : Sizes()) {
    // Small integers: every partial sum, product and max is exact in fp32 and fp64.
    std::vector<float> xf(n);
    std::vector<double> xd(n);
    for (std::uint64_t i = 0; i < n; ++i)
      xd[i] = xf[i] = static_cast<float>(static_cast<int>(rng.Below(201)) - 100);
    RequireAllTreesAgree<Sum<float>>(xf, "Sum<float>", seed);
    RequireAllTreesAgree<Sum<double>>(xd, "Sum<double>", seed);
    RequireAllTreesAgree<Compensated<float>>(xf, "Compensated<float>", seed);
    RequireAllTreesAgree<Compensated<double>>(xd, "Compensated<double>", seed);
    RequireAllTreesAgree<Max<float>>(xf, "Max<float>", seed);
    RequireAllTreesAgree<Max<double>>(xd, "Max<double>", seed);

    std::vector<IndexedValue<float>> idx(n);
    for (std::uint64_t i = 0; i < n; ++i) idx[i] = {xf[i], static_cast<std::int64_t>(i)};
    RequireAllTreesAgree<ArgMax<float>>(idx, "ArgMax<float>", seed);

    std::vector<ValuePair<double>> pairs(n), maps(n);
    for (std::uint64_t i = 0; i < n; ++i) {
      pairs[i] = {xd[i], static_cast<double>(static_cast<int>(rng.Below(21)) - 10)};
      maps[i] = {rng.Below(2) ? 1.0 : -1.0, xd[i]};  // h -> +-h + b stays an integer
    }
    RequireAllTreesAgree<Dot<double>>(pairs, "Dot<double>", seed);
    RequireAllTreesAgree<Affine<double>>(maps, "Affine<double>", seed);

    // Equal inputs: exp(x - m) is exactly 1 and the mean exactly the value.
    std::vector<float> same(n, 3.0f);
    RequireAllTreesAgree<OnlineSoftmax<float>>(same, "OnlineSoftmax<float>", seed);
    RequireAllTreesAgree<Welford<float>>(same, "Welford<float>", seed);
  }
}

TEST_CASE("tile-lifting trees replay through LiftTile", "[fast][replay]") {
  const std::uint64_t seed = 31337;
  Rng rng(seed);
  for (std::uint64_t n : {1u, 5u, 64u, 100u, 1000u}) {
    std::vector<float> x(n);
    for (auto& v : x) v = static_cast<float>(rng.Normal() * 5);
    const std::span<const float> xs(x);
    for (std::uint64_t b : {1u, 4u, 32u}) {
      // The tree: tiles lifted whole, tile states folded left to right.
      using C = OnlineSoftmax<float>;
      C::State want = C::LiftTile(x.data(), std::min<std::uint64_t>(b, n));
      for (std::uint64_t lo = b; lo < n; lo += b)
        want = C::Combine(want, C::LiftTile(x.data() + lo, std::min(b, n - lo)));
      const auto got = ReplayOracle<C>(BuildTree("blocked:" + std::to_string(b) + ":lift", n), xs);
      const Repro repro{seed, n, "blocked:" + std::to_string(b) + ":lift", "OnlineSoftmax<float>",
                        ""};
      INFO(repro.Text());
      REQUIRE(StatesBitEqual<C>(got, want));
      using W = Welford<float>;
      W::State wwant = W::LiftTile(x.data(), std::min<std::uint64_t>(b, n));
      for (std::uint64_t lo = b; lo < n; lo += b)
        wwant = W::Combine(wwant, W::LiftTile(x.data() + lo, std::min(b, n - lo)));
      REQUIRE(StatesBitEqual<W>(
          ReplayOracle<W>(BuildTree("blocked:" + std::to_string(b) + ":lift", n), xs), wwant));
    }
  }
}

TEST_CASE("impossible replays are refused with a reason", "[fast][replay]") {
  std::vector<IndexedValue<float>> idx = {{1, 0}, {2, 1}, {2, 2}};
  std::vector<ValuePair<float>> maps = {{1, 1}, {2, 2}, {3, 3}};
  std::vector<float> x = {1, 2, 3};
  auto message = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const ScheduleError& e) {
      std::cout << "  refused: " << e.what() << "\n";
      return e.what();
    }
    return "";
  };
  CHECK(message([&] {
          ReplayOracle<ArgMax<float>>(BuildTree("strided:2", 3),
                                      std::span<const IndexedValue<float>>(idx));
        }).find("argmax's Combine is not commutative") != std::string::npos);
  CHECK(message([&] {
          ReplayOracle<Affine<float>>(BuildTree("strided:2", 3),
                                      std::span<const ValuePair<float>>(maps));
        }).find("not commutative") != std::string::npos);
  CHECK(message([&] {
          ReplayOracle<Sum<float>>(BuildTree("blocked:2:lift", 3), std::span<const float>(x));
        }).find("defines no tile lift") != std::string::npos);
  CHECK(message([&] {
          ReplayOracle<Sum<float>>(BuildTree("seq", 4), std::span<const float>(x));
        }).find("built for n = 4 but got 3") != std::string::npos);
  MergeTree broken = BuildTree("pairwise", 3);
  std::swap(broken.combines[0].left, broken.combines[0].right);
  CHECK(message([&] {
          ReplayOracleChecked<Sum<float>>(broken, std::span<const float>(x));
        }).find("swaps its operands") != std::string::npos);
  // A strided tree over one input, or with one lane, permutes nothing and is fine for ArgMax.
  CHECK_NOTHROW(ReplayOracle<ArgMax<float>>(BuildTree("strided:1", 3),
                                            std::span<const IndexedValue<float>>(idx)));
}

TEST_CASE("merge orders spread the result of a rounded reduction", "[fast][replay][laws]") {
  const std::uint64_t seed = 5;
  Rng rng(seed);
  const std::size_t n = 20000;
  std::vector<float> x(n);
  for (auto& v : x) v = static_cast<float>(100 + rng.Normal());
  std::vector<Schedule> schedules;
  for (const auto& s : kSchedules) schedules.push_back(ParseSchedule(s));
  const auto rounded = ScheduleSpread<Sum<float>>(std::span<const float>(x), schedules);
  std::vector<float> ints(n);
  for (auto& v : ints) v = static_cast<float>(rng.Below(100));
  const auto exact = ScheduleSpread<Sum<float>>(std::span<const float>(ints), schedules);
  std::cout << "spread over " << schedules.size() << " schedules, n = " << n
            << ": 100 + N(0,1) fp32 " << static_cast<double>(rounded.max_rel_diff)
            << ", small integers " << static_cast<double>(exact.max_rel_diff) << "\n";
  const Repro repro{seed, n, "all", "Sum<float>", ""};
  INFO(repro.Text());
  CHECK(rounded.max_rel_diff > 0);
  CHECK_FALSE(rounded.all_bit_equal);
  // gamma_{n-1} bound for nonnegative data: no order can be worse than that.
  CHECK(rounded.max_rel_diff <= 2 * (n - 1) * 0x1.0p-24 / (1 - (n - 1) * 0x1.0p-24));
  CHECK(exact.max_rel_diff == 0);
  CHECK(exact.all_bit_equal);
}
