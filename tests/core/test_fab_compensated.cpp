// core/carriers/fab_compensated.hpp: FABsum with a compensated accurate sum (Blanchard, Higham
// and Mary 2020). Over blocked:b it is exactly "plain tile sums, then TwoSum-compensated sum of
// the tile sums" written as a loop, the fast engine agrees bit for bit, it stays within its
// first-order bound ((b - 1) u + u + 2 D^2 u^2) sum|x|, and it is not the op `neumaier` (whose
// pushes are compensated too).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <span>
#include <vector>

#include "core/carriers/compensated.hpp"
#include "core/carriers/fab_compensated.hpp"
#include "core/merge_tree.hpp"
#include "core/replay.hpp"
#include "core/replay_oracle.hpp"
#include "core/schedule.hpp"
#include "support/test_support.hpp"

namespace {

using carrier::BuildTree;
using carrier::Compensated;
using carrier::FabCompensated;
using carrier::ReplayOracle;
using carrier::test::Rng;

// FABsum as a loop: tiles of b values summed left to right in float, then the tile sums summed
// left to right with Knuth's TwoSum, the errors added into c, the result s + c.
float FabLoop(const std::vector<float>& x, std::size_t b) {
  float s = 0, c = 0;
  bool first = true;
  for (std::size_t lo = 0; lo < x.size(); lo += b) {
    float tile = 0;
    for (std::size_t i = lo; i < std::min(lo + b, x.size()); ++i) tile = tile + x[i];
    if (first) {
      s = tile;
      first = false;
      continue;
    }
    const float t = s + tile;
    const float bb = t - s;
    const float e = (s - (t - bb)) + (tile - bb);
    c = c + e;
    s = t;
  }
  return s + c;
}

}  // namespace

TEST_CASE("fabsum-comp over blocked:b is FABsum's loop, bit for bit, under both engines",
          "[fast][carriers][fabsum]") {
  using C = FabCompensated<float>;
  const std::uint64_t seed = 2020;
  Rng rng(seed);
  for (std::size_t n : {1u, 31u, 32u, 33u, 1000u, 65536u}) {
    for (std::size_t b : {2u, 32u, 256u}) {
      std::vector<float> x(n);
      for (auto& v : x) v = static_cast<float>(rng.Uniform01());
      const std::string sched = "blocked:" + std::to_string(b);
      const std::span<const float> xs(x);
      const float got = C::Finalize(ReplayOracle<C>(BuildTree(sched, n), xs));
      const float fast = C::Finalize(carrier::Replay<C>(carrier::ParseSchedule(sched), xs));
      const float want = FabLoop(x, b);
      INFO("seed " << seed << " n " << n << " schedule " << sched << " replay " << got << " fast "
                   << fast << " loop " << want);
      CHECK(std::memcmp(&got, &want, sizeof got) == 0);
      CHECK(std::memcmp(&fast, &want, sizeof fast) == 0);
    }
  }
}

TEST_CASE("fabsum-comp stays within (b + 2 D^2 u) u sum|x| and differs from neumaier",
          "[fast][carriers][fabsum]") {
  const std::size_t n = 1 << 16, b = 32;
  const double u = std::ldexp(1.0, -24);
  Rng rng(11);
  std::vector<float> x(n);
  long double exact = 0, abs_sum = 0;
  for (auto& v : x) {
    v = static_cast<float>(rng.Uniform01());
    exact += v;
    abs_sum += std::fabs(v);
  }
  const auto tree = BuildTree("blocked:32", n);
  const std::span<const float> xs(x);
  const float fab = FabCompensated<float>::Finalize(ReplayOracle<FabCompensated<float>>(tree, xs));
  const float neu = Compensated<float>::Finalize(ReplayOracle<Compensated<float>>(tree, xs));
  const double d = static_cast<double>(carrier::ComputeStats(tree).max_leaf_depth);
  const double bound = ((b - 1) * u + u + 2 * d * d * u * u) * static_cast<double>(abs_sum);
  const double err = std::fabs(static_cast<double>(fab - exact));
  std::printf("fabsum-comp n %zu b %zu: error %.3g, bound %.3g (D %.0f); neumaier error %.3g\n", n,
              b, err, bound, d, std::fabs(static_cast<double>(neu - exact)));
  INFO("seed 11 n " << n << " fab " << fab << " neumaier " << neu << " exact "
                    << static_cast<double>(exact));
  CHECK(err <= bound);
  // Compensating every push (neumaier) changes the bits where the tile sums lose accuracy
  // (signed values of mixed magnitudes): the pushes here are plain.
  std::vector<float> y(4096);
  for (auto& v : y)
    v = static_cast<float>(rng.Normal() * std::ldexp(1.0, static_cast<int>(rng.Below(20)) - 10));
  const auto ty = BuildTree("blocked:32", y.size());
  const std::span<const float> ys(y);
  const float fab_y = FabCompensated<float>::Finalize(ReplayOracle<FabCompensated<float>>(ty, ys));
  const float neu_y = Compensated<float>::Finalize(ReplayOracle<Compensated<float>>(ty, ys));
  INFO("seed 11, second vector n 4096: fab " << fab_y << " neumaier " << neu_y);
  CHECK(std::memcmp(&fab_y, &neu_y, sizeof fab_y) != 0);
}
