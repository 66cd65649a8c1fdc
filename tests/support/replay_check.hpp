// tests/support/replay_check.hpp: the check that Replay (core/replay.hpp) equals
// ReplayOracle (core/replay_oracle.hpp) bit for bit, shared by tests/core and tests/precision.
//
// CheckReplay<C>(x, schedule, ...) evaluates
//   ReplayOracle<C>(BuildTree(s, n), x)      the definition,
//   Replay<C>(BuildTree(s, n), x)  the fast engine over the explicit tree,
//   Replay<C>(s, x)                the fast engine over the schedule's structure,
//   ReplayWindowed<C>(s, n, fill, window)  the same, reading x through fill a window at a
//                                      time (window drawn from 1, 2, 3, 7, 64, 1000 by seed,
//                                      n and schedule, so window edges fall everywhere),
// each through `scoped` (a callable that runs its argument; a precision test passes one that
// opens a StochasticSeedScope first, so each path starts from the same random stream), and
// requires identical state bits, or a ScheduleError from all four. Of the windowed path it
// also requires what its contract promises: every input asked for exactly once, no request
// longer than WindowedReadBound. On failure it prints the seed, n, schedule, window, types
// and the inputs.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "core/hash.hpp"
#include "core/merge_tree.hpp"
#include "core/replay.hpp"
#include "core/replay_oracle.hpp"
#include "core/schedule.hpp"
#include "support/test_support.hpp"

namespace carrier::test {

struct RunDirect {
  template <class F>
  auto operator()(F&& f) const {
    return f();
  }
};

struct ReplayTally {
  long equal = 0;    // states compared and bit-identical
  long refused = 0;  // schedules all three refused alike
};

// The longest request ReplayWindowed may make (core/replay.hpp, the table at the
// function), written from the contract, not from the code: order_free is
// ReplayOrderFree<Scalar>::Holds() at the call.
inline std::uint64_t WindowedReadBound(const Schedule& s, std::uint64_t n, std::uint64_t window,
                                       bool order_free) {  // NOLINT(misc-no-recursion)
  window = std::max<std::uint64_t>(window, 1);
  if (!order_free || !IsWalkedOrder(s)) return n;
  using namespace carrier::orders;
  switch (s.kind()) {
    case ScheduleKind::kSeq:
      return s.As<SeqParams>().lift ? n : window;
    case ScheduleKind::kPairwise: {
      const PairwiseParams& q = s.As<PairwiseParams>();
      return q.lift ? std::max(window, std::min(q.leaf, n)) : window;
    }
    case ScheduleKind::kBlocked: {
      const BlockedParams& q = s.As<BlockedParams>();
      return q.lift ? std::max(window, std::min(q.tile, n)) : window;
    }
    case ScheduleKind::kStrided: {
      const StridedParams& q = s.As<StridedParams>();
      if (!q.lift) return std::max(window, q.lanes);
      return std::max(window, q.tile == 0 ? n : std::min(n, q.lanes * q.tile));
    }
    default: {
      if (!PartitionOf(s, n)) return window;  // reverse, random:S
      const Partition p = *PartitionOf(s, n);
      std::uint64_t bound = 0;
      for (std::uint64_t c = 0; c < std::min<std::uint64_t>(p.parts, n + 1); ++c)
        bound =
            std::max(bound, WindowedReadBound(*p.inner, p.Start(c + 1) - p.Start(c), window, true));
      return bound;
    }
  }
}

// The window CheckReplay's windowed path uses for (seed, n, schedule).
inline std::uint64_t CheckWindow(std::uint64_t seed, std::uint64_t n, const std::string& schedule) {
  static constexpr std::uint64_t kWindows[] = {1, 2, 3, 7, 64, 1000};
  std::uint64_t h = SplitMix64(seed ^ (n << 20));
  for (const char c : schedule) h = SplitMix64(h ^ static_cast<unsigned char>(c));
  return kWindows[h % std::size(kWindows)];
}

// fill for ReplayWindowed over x that records every request: how often each input was asked
// for, the longest request and whether one fell outside [0, n).
template <class Input>
struct CountingFill {
  const std::vector<Input>* x;
  std::vector<std::uint32_t> asked = std::vector<std::uint32_t>(x->size(), 0);
  std::uint64_t calls = 0, longest = 0;
  bool outside = false;
  void operator()(std::uint64_t lo, std::uint64_t count, Input* out) {
    ++calls;
    longest = std::max(longest, count);
    if (lo > x->size() || count > x->size() - lo) {
      outside = true;
      return;
    }
    for (std::uint64_t i = 0; i < count; ++i) {
      out[i] = (*x)[lo + i];
      ++asked[lo + i];
    }
  }
  // Inputs not asked for exactly once.
  std::uint64_t NotOnce() const {
    return static_cast<std::uint64_t>(
        std::count_if(asked.begin(), asked.end(), [](std::uint32_t a) { return a != 1; }));
  }
};

template <class C>
std::string InputText(const std::vector<typename C::Input>& x) {
  if constexpr (std::is_constructible_v<double, typename C::Input>) {
    std::vector<double> d;
    for (const auto& v : x) d.push_back(static_cast<double>(v));
    return Join(d, 24);
  } else {
    return "(" + std::to_string(x.size()) + " structured inputs)";
  }
}

template <class C, class Scoped = RunDirect>
void CheckReplay(const std::vector<typename C::Input>& x, const std::string& schedule,
                 const std::string& types, std::uint64_t seed, ReplayTally& tally,
                 Scoped scoped = {}) {
  using State = typename C::State;
  const std::span<const typename C::Input> xs(x);
  const Schedule s = ParseSchedule(schedule);
  std::optional<MergeTree> tree;
  std::optional<State> want, got_tree, got_schedule, got_windowed;
  std::string err_want, err_tree, err_schedule, err_windowed;
  try {
    tree = BuildTree(s, x.size());
    want = scoped([&] { return ReplayOracle<C>(*tree, xs); });
  } catch (const ScheduleError& e) {
    err_want = e.what();
  }
  if (tree) {
    try {
      got_tree = scoped([&] { return Replay<C>(*tree, xs); });
    } catch (const ScheduleError& e) {
      err_tree = e.what();
    }
  }
  try {
    got_schedule = scoped([&] { return Replay<C>(s, xs); });
  } catch (const ScheduleError& e) {
    err_schedule = e.what();
  }
  const std::uint64_t window = CheckWindow(seed, x.size(), schedule);
  CountingFill<typename C::Input> fill{&x};
  try {
    got_windowed = scoped([&] { return ReplayWindowed<C>(s, x.size(), fill, window); });
  } catch (const ScheduleError& e) {
    err_windowed = e.what();
  }
  const Repro r{seed, x.size(), schedule, types, InputText<C>(x)};
  INFO(r.Text() << " window=" << window << "\nReplayOracle error: '" << err_want
                << "'\nReplay(tree) error: '" << err_tree << "'\nReplay(schedule) error: '"
                << err_schedule << "'\nReplayWindowed error: '" << err_windowed << "'");
  if (!want) {
    if (tree) REQUIRE(!got_tree);
    REQUIRE(!got_schedule);
    REQUIRE(!got_windowed);
    REQUIRE(err_windowed == err_schedule);
    ++tally.refused;
    return;
  }
  REQUIRE(got_tree);
  REQUIRE(got_schedule);
  REQUIRE(got_windowed);
  INFO("Replay over the explicit tree");
  REQUIRE(StatesBitEqual<C>(*want, *got_tree));
  INFO("Replay over the schedule's structure");
  REQUIRE(StatesBitEqual<C>(*want, *got_schedule));
  INFO("ReplayWindowed: " << fill.calls << " requests, the longest " << fill.longest
                          << ", inputs not asked for exactly once " << fill.NotOnce());
  REQUIRE(StatesBitEqual<C>(*want, *got_windowed));
  REQUIRE(!fill.outside);
  REQUIRE(fill.NotOnce() == 0);
  const bool order_free = ReplayOrderFree<typename C::Scalar>::Holds();
  REQUIRE(fill.longest <= WindowedReadBound(s, x.size(), window, order_free));
  ++tally.equal;
}

// Schedules that exercise every structured path and its edges (tails, lanes, unrolled
// pairwise sizes, lifted tiles, strided tiles, omp chunks with each inner kind, cuda trees),
// and the windowed path's (CheckWindow's windows): leaves, tiles and strided rows longer than
// the window, pushed and lifted.
inline const std::vector<std::string>& ReplaySchedules() {
  static const std::vector<std::string> kAll = {"seq",
                                                "reverse",
                                                "pairwise",
                                                "pairwise:2",
                                                "pairwise:5",
                                                "pairwise:32",
                                                "pairwise:100",
                                                "pairwise:lift",
                                                "pairwise:3:lift",
                                                "blocked:1",
                                                "blocked:1:pairwise",
                                                "blocked:1:lift",
                                                "blocked:2",
                                                "blocked:7",
                                                "blocked:64",
                                                "blocked:3:pairwise",
                                                "blocked:16:pairwise",
                                                "blocked:200:pairwise",
                                                "blocked:5:lift",
                                                "blocked:4:pairwise:lift",
                                                "strided:1",
                                                "strided:4",
                                                "strided:5",
                                                "strided:16",
                                                "strided:32",
                                                "strided:100",
                                                "strided:4:tile:3",
                                                "strided:3:tile:1",
                                                "strided:8:tile:5:lift",
                                                "strided:5:lift",
                                                "random:1",
                                                "random:99",
                                                "omp:1",
                                                "omp:3",
                                                "omp:4:pairwise",
                                                "omp:3:seq:pairwise",
                                                "omp:5:seq:pairwise:3",
                                                "omp:3:pairwise:strided:4",
                                                "omp:7:seq:blocked:3:lift",
                                                "omp:2:pairwise:random:5",
                                                "omp:3:seq:strided:2:tile:2",
                                                "omp:2:seq:cuda:32:2",
                                                "splitk:1",
                                                "splitk:3",
                                                "splitk:4:pairwise",
                                                "splitk:7:strided:4",
                                                "splitk:6:strided:3:tile:2",
                                                "splitk:5:blocked:3:lift",
                                                "splitk:3:random:4",
                                                "splitk:200",
                                                "splitk:3:cuda:32:2",
                                                "cuda:32",
                                                "cuda:64:2:striped:xor",
                                                "cuda:32:3:blocked:shfl:pairwise:2",
                                                "cuda:64:2:blocked:xor:seq:auto:lift"};
  return kAll;
}

// Sizes around the engine's thresholds: lanes (8), unrolled pairwise (32), tiles, and a few
// random ones (scaled by CARRIER_TEST_MULTIPLIER).
inline std::vector<std::uint64_t> ReplaySizes(std::uint64_t seed, int random_count,
                                              std::uint64_t max_random) {
  std::vector<std::uint64_t> n = {0,  1,  2,  3,  4,  5,  7,   8,   9,   15,  16,  17,
                                  31, 32, 33, 63, 64, 65, 100, 511, 512, 513, 1000};
  Rng rng(seed);
  for (int i = 0; i < Trials(random_count); ++i) n.push_back(1 + rng.Below(max_random));
  return n;
}

// random:S sizes: every n in 1..300 (every small shape's mix of leaves, pairs and nodes), the
// given sizes around kRandomRegion (the breadth-first region's bound), then `random_count`
// draws from rng in [1, max_random] (scaled by CARRIER_TEST_MULTIPLIER).
inline std::vector<std::uint64_t> RandomTreeSizes(Rng& rng,
                                                  std::initializer_list<std::uint64_t> edges,
                                                  int random_count, std::uint64_t max_random) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t n = 1; n <= 300; ++n) sizes.push_back(n);
  sizes.insert(sizes.end(), edges.begin(), edges.end());
  for (int i = 0; i < Trials(random_count); ++i) sizes.push_back(1 + rng.Below(max_random));
  return sizes;
}

}  // namespace carrier::test
