// cuda:... schedules on the CPU (no GPU needed): the text round-trips, schedules no GPU could
// run are one-line ScheduleErrors, every tree is valid with the exact `permutes` flag, and the
// tree equals a lane-by-lane simulation of the kernel's algorithm (kernels/cuda/block_reduce.cuh):
// each thread pushes its chain, every lane of a warp runs every shuffle step (the xor butterfly
// with its own state on the left, swapped operands and all), warp aggregates go through shared
// memory to thread 0, and the grid pass folds block partials. The simulation runs a symbolic
// carrier whose state is the expression it computed, so equal strings mean equal trees (the
// FPRev probe, made exact).
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <iostream>
#include <string>
#include <tuple>
#include <vector>

#include "core/carriers/argmax.hpp"
#include "core/carriers/sum.hpp"
#include "core/merge_tree.hpp"
#include "core/replay_oracle.hpp"
#include "core/schedule.hpp"
#include "support/test_support.hpp"

namespace {

using carrier::CudaSchedule;
using carrier::ParseSchedule;
using carrier::ScheduleError;

// A carrier whose state is the expression that produced it: "(a,b)" for Combine, "x7" for an
// input, "{x1 x2}" for a tile lift, "e" for Identity. Exact, so any two evaluation orders give
// equal states iff they are the same tree (operand order included).
struct Symbolic {
  using Scalar = double;
  using Input = std::uint64_t;
  struct State {
    std::string e;
    auto Tie() const { return std::tie(e); }
  };
  using Result = State;
  static constexpr const char* kName = "symbolic";
  static constexpr bool kCommutative = true;  // lets ReplayOracle accept permuting trees
  static constexpr bool kBitwiseCommutative = false;
  static constexpr bool kPushIsCombineLift = true;
  static constexpr bool kHasPadInput = false;
  static State Identity() { return {"e"}; }
  static State Lift(const Input& x) { return {"x" + std::to_string(x)}; }
  static State Combine(const State& a, const State& b) { return {"(" + a.e + "," + b.e + ")"}; }
  static State LiftTile(const Input* x, std::size_t n) {
    std::string e = "{";
    for (std::size_t i = 0; i < n; ++i) e += (i ? " x" : "x") + std::to_string(x[i]);
    return {e + "}"};
  }
  static Result Finalize(const State& s) { return s; }
  static std::array<double, 1> Components(const Result&) { return {0.0}; }
};

// The kernel's algorithm, lane by lane, for carrier C over inputs x (see the file comment).
template <class C>
typename C::State SimulateKernel(const CudaSchedule& s, const std::vector<typename C::Input>& x) {
  using State = typename C::State;
  const std::uint64_t n = x.size();
  if (n == 0) return C::Identity();
  const std::uint64_t T = s.threads, G = s.GridBlocks(n), P = G * T;
  auto block_reduce = [&](std::vector<State> lane_state) {
    std::vector<State> warp_aggregate;
    for (std::uint64_t w = 0; w < T / 32; ++w) {
      State* lane = &lane_state[32 * w];
      if (s.warp == carrier::CudaWarpTree::kShuffleDown) {
        for (int o = 1; o < 32; o *= 2) {
          std::array<State, 32> next;
          for (int i = 0; i < 32; ++i) {
            // __shfl_down_sync: a lane past the end reads its own value; every lane combines,
            // only lanes with i % 2o == 0 keep a value anyone reads.
            const State other = i + o < 32 ? lane[i + o] : lane[i];
            next[i] = (i % (2 * o) == 0) ? C::Combine(lane[i], other) : lane[i];
          }
          for (int i = 0; i < 32; ++i) lane[i] = next[i];
        }
      } else {
        for (int mask = 16; mask >= 1; mask /= 2) {
          std::array<State, 32> next;
          for (int i = 0; i < 32; ++i) next[i] = C::Combine(lane[i], lane[i ^ mask]);
          for (int i = 0; i < 32; ++i) lane[i] = next[i];
        }
      }
      warp_aggregate.push_back(lane[0]);
    }
    if (s.block == carrier::CudaBlockTree::kInOrder) {
      State acc = warp_aggregate[0];
      for (std::size_t w = 1; w < warp_aggregate.size(); ++w)
        acc = C::Combine(acc, warp_aggregate[w]);
      return acc;
    }
    // Recursive halving, left half taking the extra aggregate.
    auto pairwise = [&](auto&& self, std::size_t lo, std::size_t hi) -> State {
      if (hi - lo == 1) return warp_aggregate[lo];
      const std::size_t mid = lo + (hi - lo + 1) / 2;
      State left = self(self, lo, mid);
      State right = self(self, mid, hi);
      return C::Combine(left, right);
    };
    return pairwise(pairwise, 0, warp_aggregate.size());
  };
  const std::uint64_t run = s.blocks == 0 ? s.items : (n + P - 1) / P;
  std::vector<State> partial;
  for (std::uint64_t b = 0; b < G; ++b) {
    std::vector<State> lane_state(T, C::Identity());
    for (std::uint64_t t = 0; t < T; ++t) {
      const std::uint64_t g = b * T + t;
      std::vector<typename C::Input> chain;
      if (s.arrangement == carrier::CudaArrangement::kStriped) {
        for (std::uint64_t i = g; i < n; i += P) chain.push_back(x[i]);
      } else {
        for (std::uint64_t i = g * run; i < std::min(n, g * run + run); ++i) chain.push_back(x[i]);
      }
      if (s.lift && !chain.empty()) {
        lane_state[t] = C::LiftTile(chain.data(), chain.size());
      } else {
        for (const auto& v : chain) lane_state[t] = carrier::PushOne<C>(lane_state[t], v);
      }
    }
    partial.push_back(block_reduce(lane_state));
  }
  if (G == 1) return partial[0];
  const std::uint64_t l2 = (G + T - 1) / T;
  std::vector<State> lane_state(T, C::Identity());
  for (std::uint64_t t = 0; t < T; ++t) {
    if (t * l2 >= G) continue;
    lane_state[t] = partial[t * l2];
    for (std::uint64_t m = t * l2 + 1; m < std::min(G, t * l2 + l2); ++m)
      lane_state[t] = C::Combine(lane_state[t], partial[m]);
  }
  return block_reduce(lane_state);
}

std::vector<std::string> AllVariants(std::uint64_t threads, std::uint64_t items,
                                     const std::vector<std::string>& grids) {
  std::vector<std::string> out;
  for (const char* arrange : {"blocked", "striped"})
    for (const char* warp : {"shfl", "xor"})
      for (const char* block : {"seq", "pairwise"})
        for (const auto& grid : grids) {
          const std::string base = "cuda:" + std::to_string(threads) + ":" + std::to_string(items) +
                                   ":" + arrange + ":" + warp + ":" + block + ":" + grid;
          out.push_back(base);
          if (grid == "auto") out.push_back(base + ":lift");
        }
  return out;
}

}  // namespace

TEST_CASE("cuda schedule text round-trips in canonical form", "[fast][schedule][cuda]") {
  for (std::uint64_t threads : {32u, 96u, 1024u})
    for (const auto& text : AllVariants(threads, 3, {"auto", "1", "7"})) {
      INFO("text: " << text);
      const carrier::Schedule s = ParseSchedule(text);
      CHECK(s.kind() == carrier::ScheduleKind::kCuda);
      CHECK(carrier::ToString(s) == text);
      CHECK(ParseSchedule(carrier::ToString(s)) == s);
    }
  CHECK(carrier::ToString(ParseSchedule("cuda:256")) == "cuda:256:1:blocked:shfl:seq:auto");
  CHECK(carrier::ToString(ParseSchedule("cuda:256:4:lift")) ==
        "cuda:256:4:blocked:shfl:seq:auto:lift");
  CHECK(carrier::ToString(ParseSchedule("cuda:64:2:striped:xor")) ==
        "cuda:64:2:striped:xor:seq:auto");
  const carrier::Schedule s = ParseSchedule("cuda:128:8:striped:xor:pairwise:264");
  const carrier::CudaSchedule& c = s.As<carrier::orders::CudaParams>().cuda;
  CHECK(c.threads == 128u);
  CHECK(c.items == 8u);
  CHECK(c.arrangement == carrier::CudaArrangement::kStriped);
  CHECK(c.warp == carrier::CudaWarpTree::kXorButterfly);
  CHECK(c.block == carrier::CudaBlockTree::kPairwise);
  CHECK(c.blocks == 264u);
}

TEST_CASE("cuda schedules no GPU could run are one-line errors", "[fast][schedule][cuda]") {
  struct Case {
    const char* text;
    const char* must_mention;
  };
  const std::vector<Case> cases = {
      {"cuda", "thread count"},
      {"cuda:48", "multiple of 32"},
      {"cuda:0", "multiple of 32"},
      {"cuda:16", "multiple of 32"},
      {"cuda:1056", "1024"},
      {"cuda:2048", "1024"},
      {"cuda:x", "THREADS"},
      {"cuda:64:0", "ITEMS"},
      {"cuda:64:65", "ITEMS"},
      {"cuda:64:2:diagonal", "blocked or striped"},
      {"cuda:64:2:blocked:tree", "shfl or xor"},
      {"cuda:64:2:blocked:shfl:up", "seq or pairwise"},
      {"cuda:64:2:blocked:shfl:seq:0", "GRID"},
      {"cuda:64:2:blocked:shfl:seq:many", "GRID"},
      {"cuda:64:2:blocked:shfl:seq:4294967296", "gridDim"},
      {"cuda:64:2:blocked:shfl:seq:8:lift", "lift needs GRID auto"},
      {"cuda:64:2:blocked:shfl:seq:auto:extra", "unexpected field"},
      {"cuda:64:2:blocked:shfl:seq:auto:lift:lift", "unexpected field"},
  };
  for (const auto& c : cases) {
    INFO("text: " << c.text);
    try {
      (void)ParseSchedule(c.text);
      FAIL("accepted " << c.text);
    } catch (const ScheduleError& e) {
      const std::string what = e.what();
      std::cout << "  " << what << "\n";
      CHECK(what.find(c.must_mention) != std::string::npos);
      CHECK(what.find('\n') == std::string::npos);
      CHECK(what.find(c.text) != std::string::npos);
    }
  }
  // Shared memory: one warp-aggregate slot per warp.
  CudaSchedule big = ParseSchedule("cuda:1024").As<carrier::orders::CudaParams>().cuda;
  CHECK(carrier::CudaSharedMemoryProblem(big, 1024).empty());        // 32 KiB
  CHECK_FALSE(carrier::CudaSharedMemoryProblem(big, 2048).empty());  // 64 KiB
  // Grid auto over an n that needs more blocks than gridDim.x allows.
  CHECK_THROWS_AS(carrier::BuildTree(ParseSchedule("cuda:32"), std::uint64_t{1} << 40),
                  ScheduleError);
  // A fixed grid too large for a tree in memory (one chain per thread).
  CHECK_THROWS_AS(carrier::BuildTree(ParseSchedule("cuda:1024:1:blocked:shfl:seq:2000000"), 10),
                  ScheduleError);
  // A fixed grid whose idle threads alone would fill memory (found by fuzz_schedule: 71 million
  // empty chains for one input), refused; the same grid over inputs that keep its threads busy
  // is not, and 2^20 idle threads are still built.
  CHECK_THROWS_AS(carrier::BuildTree(ParseSchedule("cuda:64:2:blocked:shfl:seq:1111111"), 1),
                  ScheduleError);
  CHECK_THROWS_AS(carrier::BuildTree(ParseSchedule("cuda:32:1:striped:shfl:seq:32769"), 1),
                  ScheduleError);
  CHECK(carrier::BuildTree(ParseSchedule("cuda:32:1:striped:shfl:seq:32768"), 1).chains.size() >=
        (std::size_t{1} << 20));
  CHECK(carrier::BuildTree(ParseSchedule("cuda:32:1:blocked:shfl:seq:32769"), 32769 * 32)
            .chains.size() >= 32769 * 32);
}

TEST_CASE("cuda trees are valid and equal the lane-by-lane kernel simulation",
          "[fast][schedule][cuda]") {
  struct Shape {
    std::uint64_t threads, items;
  };
  std::size_t checked = 0;
  for (Shape sh : {Shape{32, 1}, Shape{32, 3}, Shape{64, 2}, Shape{96, 1}, Shape{128, 4}}) {
    const std::uint64_t tile = sh.threads * sh.items;
    const std::vector<std::uint64_t> ns = {0,        1,    2,        31,           32,           33,
                                           tile - 1, tile, tile + 1, 2 * tile + 7, 40 * tile - 1};
    for (const auto& text : AllVariants(sh.threads, sh.items, {"auto", "1", "3", "40"})) {
      const carrier::Schedule s = ParseSchedule(text);
      for (std::uint64_t n : ns) {
        INFO("schedule " << text << ", n = " << n);
        const carrier::MergeTree t = carrier::BuildTree(s, n);
        REQUIRE(carrier::ValidateTree(t) == "");
        CHECK(t.n == n);
        CHECK(t.schedule == text);
        // `permutes` is exact: clearing it must make an interleaving tree invalid.
        carrier::MergeTree cleared = t;
        cleared.permutes = false;
        CHECK(carrier::ValidateTree(cleared).empty() == !t.permutes);
        std::vector<std::uint64_t> x(n);
        for (std::uint64_t i = 0; i < n; ++i) x[i] = i;
        const auto simulated =
            SimulateKernel<Symbolic>(s.As<carrier::orders::CudaParams>().cuda, x);
        const auto replayed = carrier::ReplayOracle<Symbolic>(t, std::span<const std::uint64_t>(x));
        REQUIRE(replayed.e == simulated.e);
        ++checked;
      }
    }
  }
  std::cout << "cuda trees checked against the kernel simulation: " << checked << "\n";
}

TEST_CASE("cuda tree shapes: depth and permutation as the phases predict",
          "[fast][schedule][cuda]") {
  auto stats = [](const char* text, std::uint64_t n) {
    return carrier::ComputeStats(carrier::BuildTree(ParseSchedule(text), n));
  };
  // One warp, one item per lane: the shuffle-down tree is pairwise over 32 lanes, depth 5.
  CHECK(stats("cuda:32", 32).max_leaf_depth == 5);
  // ... and is the same tree as pairwise over 32 inputs.
  {
    const auto a = carrier::BuildTree(ParseSchedule("cuda:32"), 32);
    const auto b = carrier::BuildTree(ParseSchedule("pairwise"), 32);
    std::vector<float> x(32);
    carrier::test::Rng rng(5);
    for (auto& v : x) v = static_cast<float>(rng.Normal());
    const float ra = carrier::ReplayOracle<carrier::Sum<float>>(a, std::span<const float>(x)).s;
    const float rb = carrier::ReplayOracle<carrier::Sum<float>>(b, std::span<const float>(x)).s;
    CHECK(carrier::ScalarTraits<float>::BitEqual(ra, rb));
  }
  // 8 warps folded in order: 5 + 7 combines above the last lane of warp 0.
  CHECK(stats("cuda:256", 256).max_leaf_depth == 12);
  // ... or pairwise: 5 + 3.
  CHECK(stats("cuda:256:1:blocked:shfl:pairwise", 256).max_leaf_depth == 8);
  // Items per thread add a chain of length ITEMS below: ITEMS - 1 more.
  CHECK(stats("cuda:32:4", 128).max_leaf_depth == 5 + 3);
  // Blocked + shfl keeps the input order; striped with two or more items interleaves; one
  // item per thread is the same contiguous tree in either arrangement.
  CHECK_FALSE(
      carrier::BuildTree(ParseSchedule("cuda:64:4:blocked:shfl:pairwise:3"), 1000).permutes);
  CHECK(carrier::BuildTree(ParseSchedule("cuda:64:4:striped"), 1000).permutes);
  CHECK_FALSE(carrier::BuildTree(ParseSchedule("cuda:64:1:striped"), 64).permutes);
  CHECK(carrier::BuildTree(ParseSchedule("cuda:64:1:blocked:xor"), 64).permutes);
  CHECK_FALSE(carrier::BuildTree(ParseSchedule("cuda:64:1:blocked:xor"), 1).permutes);
  // Grid pass: 3 blocks of 32 over 96 inputs; grid-pass threads 0, 1, 2 hold one partial each,
  // the 29 idle ones Identity (empty chains, and merging with them is exact): 5 + 2 levels.
  const auto t3 = carrier::BuildTree(ParseSchedule("cuda:32:1:blocked:shfl:seq:3"), 96);
  CHECK(t3.chains.size() == 3 * 32 + 29);
  CHECK(carrier::ComputeStats(t3).max_leaf_depth == 5 + 2);
}

TEST_CASE("cuda trees replay non-commutative carriers only in input order",
          "[fast][schedule][cuda]") {
  using A = carrier::ArgMax<float>;
  std::vector<carrier::IndexedValue<float>> x(300);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = {static_cast<float>(i % 7), static_cast<std::int64_t>(i)};
  const std::span<const carrier::IndexedValue<float>> xs(x);
  const auto r = carrier::ReplayOracle<A>(
      carrier::BuildTree(ParseSchedule("cuda:64:2:blocked:shfl:pairwise"), 300), xs);
  CHECK(r.value == 6.0f);
  CHECK(r.index == 6);
  CHECK_THROWS_AS(
      carrier::ReplayOracle<A>(carrier::BuildTree(ParseSchedule("cuda:64:2:striped"), 300), xs),
      ScheduleError);
}
