// core/carriers/prod.hpp: the product. Its fold is the plain loop bit for bit, 1 pads, and in
// every merge order the relative error stays inside gamma_{n-1} (the count of
// multiplications, not the tree depth), measured against a long double product.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "core/carriers/prod.hpp"
#include "core/laws.hpp"
#include "core/merge_tree.hpp"
#include "core/replay_oracle.hpp"
#include "core/schedule.hpp"
#include "support/test_support.hpp"

namespace {

using carrier::BuildTree;
using carrier::Prod;
using carrier::ReplayOracle;
using carrier::test::Rng;

}  // namespace

TEST_CASE("prod: the fold is the loop, 1 is a pad, every order within gamma_{n-1}",
          "[fast][carriers][prod]") {
  const std::uint64_t seed = 31;
  Rng rng(seed);
  const std::size_t n = 2000;
  std::vector<float> x(n);
  for (auto& v : x) v = static_cast<float>(rng.Uniform(0.9, 1.1));  // no underflow or overflow
  float loop = 1;
  long double exact = 1;  // 64-bit significand: about 2^-64 n relative, far below gamma_{n-1}
  for (float v : x) {
    loop *= v;
    exact *= v;
  }
  const float seq = Prod<float>::Finalize(
      ReplayOracle<Prod<float>>(BuildTree("seq", n), std::span<const float>(x)));
  CHECK(std::memcmp(&seq, &loop, sizeof seq) == 0);
  const double u = 0x1p-24;
  const double gamma = (n - 1) * u / (1 - (n - 1) * u);
  for (const std::string sched :
       {"seq", "reverse", "pairwise", "blocked:16", "strided:8", "random:3"}) {
    const float p = Prod<float>::Finalize(
        ReplayOracle<Prod<float>>(BuildTree(sched, n), std::span<const float>(x)));
    const double rel = static_cast<double>(std::fabs(p - exact) / exact);
    std::printf("prod fp32 %-10s n=%zu: rel error %.3g (gamma_{n-1} %.3g)\n", sched.c_str(), n, rel,
                gamma);
    INFO("seed " << seed << " n " << n << " schedule " << sched << " uniform(0.9, 1.1) fp32");
    CHECK(rel <= gamma);
  }
  // PadInput: s * 1 is s bitwise, signed zero and infinity included.
  for (float s : {0.0f, -0.0f, 3.5f, -INFINITY}) {
    const float padded = Prod<float>::Combine({s}, Prod<float>::Lift(Prod<float>::PadInput())).p;
    CHECK(std::memcmp(&padded, &s, sizeof s) == 0);
  }
  // Special values: 0 * inf is NaN; empty is 1.
  const std::vector<float> zi = {0.0f, INFINITY};
  CHECK(std::isnan(Prod<float>::Finalize(carrier::Fold<Prod<float>>(zi.data(), zi.size()))));
  CHECK(Prod<float>::Finalize(Prod<float>::Identity()) == 1.0f);
}
