// core/carriers/kahan.hpp: Kahan's original compensated sum. Its fold is Kahan's loop bit for
// bit, the empty flag makes Identity two-sided, and on ill-conditioned data it beats the
// plain sum by orders of magnitude while staying inside its sequential bound 2u + D^2 u^2.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <span>
#include <vector>

#include "core/carriers/kahan.hpp"
#include "core/carriers/sum.hpp"
#include "core/laws.hpp"
#include "core/merge_tree.hpp"
#include "core/replay_oracle.hpp"
#include "core/schedule.hpp"
#include "support/test_support.hpp"

namespace {

using carrier::BuildTree;
using carrier::Kahan;
using carrier::ReplayOracle;
using carrier::Sum;
using carrier::test::Rng;

// Kahan (1965), as Higham ASNA Alg. 4.2 writes it: the loop the carrier's fold must equal.
float KahanLoop(const std::vector<float>& x) {
  float s = 0, c = 0;
  for (float v : x) {
    const float y = v - c;
    const float t = s + y;
    c = (t - s) - y;
    s = t;
  }
  return s;
}

// Exact-ish reference in long double for float inputs of moderate n (64-bit significand).
long double Exact(const std::vector<float>& x) {
  long double s = 0;
  for (float v : x) s += v;
  return s;
}

}  // namespace

TEST_CASE("kahan: the sequential fold is Kahan's loop bit for bit", "[fast][carriers][kahan]") {
  const std::uint64_t seed = 1965;
  Rng rng(seed);
  for (std::size_t n : {1u, 2u, 7u, 100u, 4097u}) {
    std::vector<float> x(n);
    for (auto& v : x)
      v = static_cast<float>(rng.Normal() * std::ldexp(1.0, static_cast<int>(rng.Below(20)) - 10));
    const float got = Kahan<float>::Finalize(
        ReplayOracle<Kahan<float>>(BuildTree("seq", n), std::span<const float>(x)));
    const float want = KahanLoop(x);
    INFO("seed " << seed << " n " << n << " got " << got << " loop " << want);
    // The loop from (0, 0) turns a first input -0 into +0; the carrier keeps it (never here).
    CHECK(std::memcmp(&got, &want, sizeof got) == 0);
  }
}

TEST_CASE("kahan: Identity is two-sided and Push is Combine(s, Lift(x)), bitwise",
          "[fast][carriers][kahan]") {
  Rng rng(7);
  std::vector<Kahan<float>::State> states;
  for (int k = 0; k < 200; ++k) {
    std::vector<float> x(1 + rng.Below(9));
    for (auto& v : x) v = static_cast<float>(rng.Normal());
    states.push_back(carrier::Fold<Kahan<float>>(x.data(), x.size()));
  }
  const auto id = carrier::CheckIdentity<Kahan<float>>(states);
  std::printf("kahan identity: %llu checked, %llu violations\n",
              static_cast<unsigned long long>(id.checked),
              static_cast<unsigned long long>(id.violations));
  CHECK(id.violations == 0);
  // A state with a nonzero correction is where a flag-free identity would fail.
  bool some_correction = false;
  for (const auto& s : states) some_correction = some_correction || s.c != 0;
  CHECK(some_correction);
}

TEST_CASE("kahan: far more accurate than the plain sum, inside 2u + D^2 u^2 sequentially",
          "[fast][carriers][kahan]") {
  const std::uint64_t seed = 42;
  Rng rng(seed);
  const std::size_t n = 20000;
  std::vector<float> x(n);
  for (auto& v : x) v = static_cast<float>(rng.Uniform01());  // positive: sum|x| = |sum x|
  const long double exact = Exact(x);
  const float k = Kahan<float>::Finalize(
      ReplayOracle<Kahan<float>>(BuildTree("seq", n), std::span<const float>(x)));
  const float s = Sum<float>::Finalize(
      ReplayOracle<Sum<float>>(BuildTree("seq", n), std::span<const float>(x)));
  const double u = 0x1p-24, d = static_cast<double>(n - 1);
  const double rel_k = static_cast<double>(std::fabs(k - exact) / exact);
  const double rel_s = static_cast<double>(std::fabs(s - exact) / exact);
  const double bound = 2 * u + d * d * u * u;
  std::printf("kahan fp32 seq n=%zu: rel error %.3g (bound %.3g); plain sum %.3g\n", n, rel_k,
              bound, rel_s);
  INFO("seed " << seed << " n " << n << " uniform01 fp32");
  CHECK(rel_k <= bound);
  CHECK(rel_k * 10 < rel_s);
}
