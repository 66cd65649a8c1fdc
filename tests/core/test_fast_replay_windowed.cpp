// ReplayWindowed (core/replay.hpp) reads its input through a callback: over every
// structured kind, sizes around the windows and several windows, it asks for every input
// exactly once, never in a request longer than its contract's bound (WindowedReadBound, written
// from the contract's table), and returns Replay's state bit for bit. The kinds that go
// through a tree read all n inputs in one request; a refused schedule reads none.
// tests/support/replay_check.hpp runs the windowed path with every carrier and scalar.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "core/carriers/all.hpp"
#include "core/replay.hpp"
#include "support/replay_check.hpp"
#include "support/test_support.hpp"

using namespace carrier;
using carrier::test::CountingFill;
using carrier::test::Rng;
using carrier::test::WindowedReadBound;

namespace {

struct Measured {
  std::uint64_t calls = 0, longest = 0, bound = 0;
};

// One windowed evaluation of x under s, its requests checked against the contract and its state
// against Replay's.
template <class C>
Measured CheckRequests(const Schedule& s, const std::vector<typename C::Input>& x,
                       std::uint64_t window, const char* types) {
  CountingFill<typename C::Input> fill{&x};
  const auto got = ReplayWindowed<C>(s, x.size(), fill, window);
  const auto want = Replay<C>(s, std::span<const typename C::Input>(x));
  const Measured m{fill.calls, fill.longest, WindowedReadBound(s, x.size(), window, true)};
  INFO("reproduce: schedule=" << ToString(s) << " n=" << x.size() << " window=" << window
                              << " types=" << types << ": " << m.calls << " requests, longest "
                              << m.longest << " (bound " << m.bound << "), " << fill.NotOnce()
                              << " inputs not asked for exactly once");
  REQUIRE(!fill.outside);
  REQUIRE(fill.NotOnce() == 0);
  REQUIRE(m.longest <= m.bound);
  REQUIRE(StatesBitEqual<C>(want, got));
  return m;
}

}  // namespace

TEST_CASE("ReplayWindowed asks for each input once, within the contract's bound",
          "[fast][fast_replay]") {
  // Each structured kind, with tiles, leaves and lanes longer and shorter than the windows, and
  // omp chunks with each inner kind (their fill is offset by the chunk's start).
  const std::vector<std::string> pushed = {"seq",
                                           "reverse",
                                           "pairwise",
                                           "pairwise:5",
                                           "pairwise:100",
                                           "pairwise:5000",
                                           "blocked:7",
                                           "blocked:64",
                                           "blocked:3000",
                                           "blocked:3:pairwise",
                                           "blocked:40:pairwise",
                                           "blocked:5000:pairwise",
                                           "strided:1",
                                           "strided:4",
                                           "strided:100",
                                           "strided:2000",
                                           "strided:4:tile:3",
                                           "strided:70:tile:500",
                                           "random:1",
                                           "random:99",
                                           "omp:3",
                                           "omp:4:pairwise:pairwise",
                                           "omp:5:seq:pairwise:3",
                                           "omp:3:pairwise:random:7",
                                           "omp:2:seq:blocked:300:pairwise",
                                           "omp:3:pairwise:strided:9:tile:4",
                                           "splitk:3",
                                           "splitk:4:pairwise:3",
                                           "splitk:9:blocked:40:pairwise"};
  const std::vector<std::string> lifted = {"pairwise:lift",           "pairwise:3:lift",
                                           "pairwise:90:lift",        "blocked:5:lift",
                                           "blocked:2000:lift",       "blocked:300:pairwise:lift",
                                           "strided:5:lift",          "strided:8:tile:5:lift",
                                           "strided:300:tile:2:lift", "omp:3:seq:blocked:70:lift"};
  const std::vector<std::uint64_t> sizes = {0, 1, 2, 5, 100, 4097, 70000};
  const std::vector<std::uint64_t> windows = {1, 3, 64, 1000, kReplayWindow};
  Rng rng(20261206);
  std::vector<float> xf(sizes.back());
  for (auto& e : xf) e = static_cast<float>(rng.Normal());
  const std::vector<double> xd(xf.begin(), xf.end());
  long checks = 0;
  auto run = [&]<class C>(const std::vector<std::string>& schedules, const auto& all,
                          const char* types) {
    for (const std::string& text : schedules) {
      const Schedule s = ParseSchedule(text);
      for (std::uint64_t window : windows) {
        Measured big;
        for (std::uint64_t n : sizes) {
          const std::vector<typename C::Input> x(all.begin(), all.begin() + n);
          const Measured m = CheckRequests<C>(s, x, window, types);
          if (n == sizes.back()) big = m;
          ++checks;
        }
        std::cout << "  " << text << " window=" << window << " n=" << sizes.back() << ": "
                  << big.calls << " requests, longest " << big.longest << " (bound " << big.bound
                  << ")\n";
      }
    }
  };
  std::cout << "ReplayWindowed requests (every input asked for exactly once):\n";
  run.template operator()<Sum<float>>(pushed, xf, "Sum<float>");
  run.template operator()<Welford<double>>(lifted, xd, "Welford<double>");
  // seq:lift (not in the grammar): one LiftTile of the whole input, read in one request.
  const Schedule seq_lift = carrier::orders::SeqParams{.lift = true};
  for (std::uint64_t n : sizes) {
    const std::vector<double> x(xd.begin(), xd.begin() + n);
    const Measured m = CheckRequests<Welford<double>>(seq_lift, x, 64, "Welford<double>");
    CHECK(m.calls == (n > 0 ? 1u : 0u));
    ++checks;
  }
  std::cout << "ReplayWindowed: " << checks << " evaluations checked\n";
  CHECK(checks ==
        static_cast<long>((pushed.size() + lifted.size()) * windows.size() * sizes.size() +
                          sizes.size()));
}

TEST_CASE("ReplayWindowed: the default window, tree kinds in one request, refusals unread",
          "[fast][fast_replay]") {
  Rng rng(20261207);
  std::vector<float> x(150000);
  for (auto& e : x) e = static_cast<float>(rng.Normal());
  const std::span<const float> xs(x);
  // The default window: no request longer than kReplayWindow.
  for (const char* text : {"seq", "pairwise", "blocked:64", "random:3", "omp:2:pairwise"}) {
    CountingFill<float> fill{&x};
    const auto got = ReplayWindowed<Sum<float>>(ParseSchedule(text), x.size(), fill);
    std::cout << text << " n=" << x.size() << ", default window: " << fill.calls
              << " requests, longest " << fill.longest << "\n";
    INFO("schedule=" << text);
    CHECK(fill.longest <= kReplayWindow);
    CHECK(fill.calls > 1);
    CHECK(fill.NotOnce() == 0);
    CHECK(StatesBitEqual<Sum<float>>(Replay<Sum<float>>(ParseSchedule(text), xs), got));
  }
  // Kinds that go through their tree: all n inputs in one request (documented).
  for (const char* text : {"cuda:32", "cuda:64:2:striped:xor"}) {
    const std::vector<float> y(x.begin(), x.begin() + 5000);
    CountingFill<float> fill{&y};
    const auto got = ReplayWindowed<Sum<float>>(ParseSchedule(text), y.size(), fill, 64);
    std::cout << text << " n=" << y.size() << ": " << fill.calls << " request of " << fill.longest
              << "\n";
    INFO("schedule=" << text);
    CHECK(fill.calls == 1);
    CHECK(fill.longest == y.size());
    CHECK(StatesBitEqual<Sum<float>>(
        Replay<Sum<float>>(ParseSchedule(text), std::span<const float>(y)), got));
  }
  // omp with a cuda inner schedule: each chunk whole, nothing longer.
  {
    const std::vector<float> y(x.begin(), x.begin() + 3001);
    CountingFill<float> fill{&y};
    const Schedule s = ParseSchedule("omp:3:seq:cuda:32:2");
    const auto got = ReplayWindowed<Sum<float>>(s, y.size(), fill, 64);
    std::cout << "omp:3:seq:cuda:32:2 n=" << y.size() << ": " << fill.calls << " requests, longest "
              << fill.longest << "\n";
    CHECK(fill.calls == 3);
    CHECK(fill.longest == 1001);
    CHECK(fill.NotOnce() == 0);
    CHECK(StatesBitEqual<Sum<float>>(Replay<Sum<float>>(s, std::span<const float>(y)), got));
  }
  // Refused schedules throw Replay's error before reading anything.
  std::vector<ValuePair<float>> p(100, {1.0f, 2.0f});
  for (const char* text : {"strided:4", "omp:2:seq:strided:3"}) {
    CountingFill<ValuePair<float>> fill{&p};
    std::string want, got;
    try {
      (void)Replay<Affine<float>>(ParseSchedule(text), std::span<const ValuePair<float>>(p));
    } catch (const ScheduleError& e) {
      want = e.what();
    }
    try {
      (void)ReplayWindowed<Affine<float>>(ParseSchedule(text), p.size(), fill, 8);
    } catch (const ScheduleError& e) {
      got = e.what();
    }
    INFO("schedule=" << text);
    CHECK(!want.empty());
    CHECK(got == want);
    CHECK(fill.calls == 0);
  }
  {
    CountingFill<float> fill{&x};
    CHECK_THROWS_AS(ReplayWindowed<Sum<float>>(ParseSchedule("blocked:4:lift"), 100, fill, 8),
                    ScheduleError);
    CHECK_THROWS_AS(ReplayWindowed<Sum<float>>(ParseSchedule("cuda:32:lift"), 100, fill, 8),
                    ScheduleError);
    CHECK(fill.calls == 0);
  }
  // Empty input: Identity, nothing read (strided still merges its K empty lanes).
  {
    const std::vector<float> none;
    CountingFill<float> fill{&none};
    CHECK(ReplayWindowed<Sum<float>>(ParseSchedule("pairwise"), 0, fill).s == 0.0f);
    CHECK(!std::signbit(ReplayWindowed<Sum<float>>(ParseSchedule("strided:3"), 0, fill).s));
    CHECK(fill.calls == 0);
  }
}
