// ReferenceSumFast (precision/reference/fast_sum.hpp) gives ReferenceSum's Reference field for
// field — the correctly rounded double and long double, the exact MPFR value (precision and
// bits), the certificate — on random, ill-conditioned (exact cancellation), huge-range,
// subnormal, special and empty inputs; prints both times on one input.
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "precision/parallel_pass.hpp"
#include "precision/reference/chunk_sum.hpp"
#include "precision/reference/exact_sum.hpp"
#include "precision/reference/fast_sum.hpp"
#include "precision/reference/reference.hpp"
#include "support/reference_check.hpp"
#include "support/test_support.hpp"

using namespace carrier;
using namespace carrier::reference;
using carrier::test::Rng;

namespace {

void RequireSame(const std::vector<double>& x, const std::string& kind, std::uint64_t seed) {
  const Reference want = ReferenceSum(x);
  const Reference got = ReferenceSumFast(x);
  INFO("reproduce: seed=" << seed << " n=" << x.size() << " kind=" << kind
                          << " inputs=" << test::Join(x, 12));
  REQUIRE(got.index == want.index);
  REQUIRE(want.as_double.size() == 1);
  REQUIRE(want.value.size() == 1);
  test::RequireSameReference(want, got);
  // The exact value's sign too (an exact zero sum is +0 in both).
  if (!mpfr_nan_p(want.value[0].get()))
    REQUIRE(mpfr_signbit(got.value[0].get()) == mpfr_signbit(want.value[0].get()));
}

}  // namespace

TEST_CASE("ReferenceSumFast == ReferenceSum, field for field", "[fast][reference][fast_sum]") {
  const std::uint64_t seed = 5150;
  Rng rng(seed);
  RequireSame({}, "empty", seed);
  RequireSame({0.0, -0.0}, "zeros", seed);
  RequireSame({-0.0}, "negative zero", seed);
  RequireSame({1.0, -1.0}, "exact zero", seed);
  RequireSame({NAN, 1.0}, "nan", seed);
  RequireSame({INFINITY, 1.0}, "+inf", seed);
  RequireSame({INFINITY, -INFINITY}, "both infs", seed);
  RequireSame({-INFINITY, 1e308}, "-inf", seed);
  RequireSame({std::numeric_limits<double>::denorm_min(), 1.0}, "subnormal", seed);
  RequireSame({1e308, 1e308, -1e308}, "beyond range midway", seed);
  RequireSame({1e308, 1e308}, "overflow", seed);
  RequireSame({0x1p1023, 0x1p1023, -0x1p-1074}, "overflow by a hair", seed);
  int cases = 0;
  for (int t = 0; t < test::Trials(400); ++t) {
    const std::uint64_t n = rng.Below(t % 10 == 0 ? 5000 : 60);
    std::vector<double> x(n);
    const int kind = static_cast<int>(rng.Below(5));
    for (std::uint64_t i = 0; i < n; ++i) {
      switch (kind) {
        case 0:
          x[i] = rng.Normal();
          break;
        case 1:
          x[i] = std::ldexp(rng.Normal(), static_cast<int>(rng.Below(2100)) - 1074);
          break;
        case 2:
          x[i] = std::ldexp(rng.Uniform01(), -1074 + static_cast<int>(rng.Below(60)));
          break;
        case 3:
          x[i] = rng.Normal() * 1e300;
          break;
        default:
          x[i] = i < n / 2 ? std::ldexp(rng.Normal(), static_cast<int>(rng.Below(200))) : 0.0;
      }
    }
    if (kind == 4)  // the second half cancels the first exactly, plus one tiny term
      for (std::uint64_t i = n / 2; i < n; ++i) x[i] = -x[i - n / 2];
    if (kind == 4 && n > 0) x[n - 1] += 0x1p-1000;
    if (rng.Below(20) == 0 && n > 0) x[rng.Below(n)] = rng.Below(2) ? NAN : -INFINITY;
    RequireSame(x, "kind " + std::to_string(kind), seed);
    ++cases;
  }
  std::cout << "ReferenceSumFast == ReferenceSum in " << cases + 12 << " cases\n";
  // Timing on one input, for information (the benchmark verb measures it properly).
  std::vector<double> big(200000);
  for (auto& v : big) v = rng.Normal();
  const auto t0 = std::chrono::steady_clock::now();
  const Reference a = ReferenceSum(big);
  const auto t1 = std::chrono::steady_clock::now();
  const Reference b = ReferenceSumFast(big);
  const auto t2 = std::chrono::steady_clock::now();
  const double ns = 1e9 / static_cast<double>(big.size());
  std::cout << "n=200000: ReferenceSum " << std::chrono::duration<double>(t1 - t0).count() * ns
            << " ns/term, ReferenceSumFast " << std::chrono::duration<double>(t2 - t1).count() * ns
            << " ns/term\n";
  CHECK(a.as_double == b.as_double);
}

namespace {

void RequireSameMulti(const Reference& want, const Reference& got, const std::vector<double>& x,
                      const std::string& kind, std::uint64_t seed) {
  INFO("reproduce: seed=" << seed << " n=" << x.size() << " kind=" << kind
                          << " inputs=" << test::Join(x, 12));
  test::RequireSameReference(want, got);
}

void RequireSameWelford(const std::vector<double>& x, const std::string& kind, std::uint64_t seed) {
  RequireSameMulti(ReferenceWelford(x), ReferenceWelfordFast(x), x, kind + " (welford)", seed);
  RequireSameMulti(ReferenceNorm2(x), ReferenceNorm2Fast(x), x, kind + " (norm2)", seed);
}

}  // namespace

TEST_CASE("ReferenceWelfordFast and ReferenceNorm2Fast == theirs, field for field",
          "[fast][reference][fast_sum]") {
  const std::uint64_t seed = 6160;
  Rng rng(seed);
  RequireSameWelford({}, "empty", seed);
  RequireSameWelford({2.5}, "one", seed);
  RequireSameWelford({0.0, 0.0, -0.0}, "zeros", seed);
  RequireSameWelford({3.0, 3.0, 3.0}, "constant", seed);
  RequireSameWelford({NAN, 1.0}, "nan", seed);
  RequireSameWelford({INFINITY, 1.0}, "inf", seed);
  RequireSameWelford({1e-300, 1.0}, "below the split range", seed);
  RequireSameWelford({1e200, 1.0}, "above the split range", seed);
  RequireSameWelford({0x1p-484, 0x1p510, -0x1.8p510}, "range edges", seed);
  int cases = 0;
  for (int t = 0; t < test::Trials(300); ++t) {
    const std::uint64_t n = rng.Below(t % 10 == 0 ? 4000 : 50);
    std::vector<double> x(n);
    const int kind = static_cast<int>(rng.Below(4));
    for (std::uint64_t i = 0; i < n; ++i) {
      switch (kind) {
        case 0:
          x[i] = rng.Normal();
          break;
        case 1:
          x[i] = 1e8 + rng.Normal();
          break;  // ill-conditioned variance
        case 2:
          x[i] = std::ldexp(rng.Normal(), static_cast<int>(rng.Below(900)) - 450);
          break;
        default:
          x[i] = static_cast<float>(rng.Uniform01());
          break;
      }
    }
    RequireSameWelford(x, "kind " + std::to_string(kind), seed);
    ++cases;
  }
  std::cout
      << "ReferenceWelfordFast == ReferenceWelford and ReferenceNorm2Fast == ReferenceNorm2 in "
      << cases + 9 << " cases\n";
}

// ChunkSum (precision/reference/chunk_sum.hpp) defers its carries for ChunkSum::kBlock terms per
// lane and splits terms across ChunkSum::kLanes lanes: inputs long enough to cross several carry
// passes, with every limb near its bound (largest significands, one sign), with carries that
// cancel across lanes, over the whole exponent range, in the subnormal range, and with special
// values after a carry pass. Each must equal ExactSum's own fold (the canonical state, bit for
// bit) and give ReferenceSum's / ReferenceWelford's / ReferenceNorm2's Reference field for field.
TEST_CASE("ChunkSum's deferred carries equal ExactSum and the MPFR references",
          "[fast][reference][fast_sum]") {
  const std::uint64_t seed = 7170;
  Rng rng(seed);
  const std::size_t pass = ChunkSum::kLanes * ChunkSum::kBlock;  // terms per carry pass
  auto same_state = [&](const std::vector<double>& x, const std::string& kind) {
    ExactSum::State want = ExactSum::Identity();
    for (const double v : x) ExactSum::Add(want, v);
    want = ExactSum::Canonical(want);
    const auto chunks = std::make_unique<ChunkSum>();
    chunks->Scan<true, false>(x.data(), x.size());
    INFO("reproduce: seed=" << seed << " n=" << x.size() << " kind=" << kind);
    REQUIRE(!chunks->HasSpecial());
    chunks->Finish();
    const ExactSum::State& got = chunks->Values();
    for (int i = 0; i < ExactSum::kLimbs; ++i) {
      INFO("limb " << i);
      REQUIRE(got.limb[i] == want.limb[i]);
    }
    REQUIRE(got.pending == want.pending);
  };
  // The same input scanned in three parts of random lengths, merged (as threads would).
  auto merged_state = [&](const std::vector<double>& x, const std::string& kind) {
    const std::size_t a = rng.Below(x.size() + 1), b = a + rng.Below(x.size() - a + 1);
    std::vector<std::unique_ptr<ChunkSum>> part;
    for (int k = 0; k < 3; ++k) part.push_back(std::make_unique<ChunkSum>());
    part[0]->Scan<true, true>(x.data(), a);
    part[1]->Scan<true, true>(x.data() + a, b - a);
    part[2]->Scan<true, true>(x.data() + b, x.size() - b);
    part[2]->Merge(*part[0]);
    part[2]->Merge(*part[1]);
    const auto whole = std::make_unique<ChunkSum>();
    whole->Scan<true, true>(x.data(), x.size());
    part[2]->Finish();
    whole->Finish();
    INFO("reproduce: seed=" << seed << " n=" << x.size() << " kind=" << kind << " split at " << a
                            << ", " << b);
    for (int i = 0; i < ExactSum::kLimbs; ++i) {
      INFO("limb " << i);
      REQUIRE(part[2]->Values().limb[i] == whole->Values().limb[i]);
      REQUIRE(part[2]->Squares().limb[i] == whole->Squares().limb[i]);
    }
    REQUIRE(part[2]->Top() == whole->Top());
    REQUIRE(part[2]->Low() == whole->Low());
    REQUIRE(part[2]->MaxMagnitude() == whole->MaxMagnitude());
    REQUIRE(part[2]->OutOfSquareRange() == whole->OutOfSquareRange());
    // The values-only scan (its pattern buckets, moved at Merge) split the same way.
    std::vector<std::unique_ptr<ChunkSum>> vpart;
    for (int k = 0; k < 3; ++k) vpart.push_back(std::make_unique<ChunkSum>());
    vpart[0]->Scan<true, false>(x.data(), a);
    vpart[1]->Scan<true, false>(x.data() + a, b - a);
    vpart[2]->Scan<true, false>(x.data() + b, x.size() - b);
    vpart[2]->Merge(*vpart[0]);
    vpart[2]->Merge(*vpart[1]);
    vpart[2]->Finish();
    for (int i = 0; i < ExactSum::kLimbs; ++i) {
      INFO("values-only scan, limb " << i);
      REQUIRE(vpart[2]->Values().limb[i] == whole->Values().limb[i]);
    }
    REQUIRE(vpart[2]->Top() == whole->Top());
    REQUIRE(vpart[2]->Low() == whole->Low());
  };
  auto check = [&](const std::vector<double>& x, const std::string& kind) {
    same_state(x, kind);
    merged_state(x, kind);
    RequireSame(x, kind, seed);
  };
  const double big = std::nextafter(2.0, 0.0);  // significand 2^53 - 1
  for (const std::size_t n : {pass - 1, pass, pass + 3, 3 * pass + 7}) {
    const std::string at = " n=" + std::to_string(n);
    std::vector<double> x(n);
    for (auto& v : x) v = std::ldexp(big, 1023 - 1);  // one sign, every limb near its bound
    check(x, "largest, one sign" + at);
    for (auto& v : x) v = -std::ldexp(big, static_cast<int>(rng.Below(32)));  // all 32 shifts
    check(x, "negative, all shifts" + at);
    for (std::size_t i = 0; i < n; ++i)  // +a in one lane, -a in the next: carries cancel
      x[i] = (i % 2 ? -1.0 : 1.0) * std::ldexp(big, static_cast<int>(rng.Below(40)) - 20);
    x[n / 2] += 0x1p-30;
    check(x, "alternating cancellation" + at);
    for (auto& v : x) v = std::ldexp(rng.Normal(), static_cast<int>(rng.Below(2089)) - 1074);
    check(x, "whole exponent range" + at);
    for (auto& v : x)
      v = (rng.Below(2) ? -1.0 : 1.0) *
          std::ldexp(static_cast<double>(rng.Below(1ULL << 52)), -1074);
    check(x, "subnormals" + at);
    std::vector<double> y(n);
    for (std::size_t i = 0; i < n / 2; ++i)
      y[i] = std::ldexp(rng.Normal(), static_cast<int>(rng.Below(600)) - 300);
    for (std::size_t i = n / 2; i < n; ++i) y[i] = -y[i - n / 2];  // exact zero sum
    check(y, "exact zero" + at);
    y[n - 1] = 0x1p-1074;  // exact zero but one subnormal
    check(y, "subnormal survivor" + at);
    // Special values after a carry pass (the first terms went through Carry already).
    std::vector<double> z(n, 1.5);
    z[n - 1] = NAN;
    RequireSame(z, "nan last" + at, seed);
    z[n - 1] = -INFINITY;
    RequireSame(z, "-inf last" + at, seed);
    z[1] = INFINITY;
    RequireSame(z, "both infs" + at, seed);
    // Squares: the range edges and cancellation in the variance, across carry passes.
    std::vector<double> w(n);
    for (auto& v : w) v = std::ldexp(1.0 + rng.Uniform01(), 509);
    RequireSameWelford(w, "squares near 2^511" + at, seed);
    for (auto& v : w) v = (rng.Below(2) ? -1.0 : 1.0) * std::ldexp(1.0 + rng.Uniform01(), -484);
    RequireSameWelford(w, "squares near 2^-484" + at, seed);
    for (auto& v : w) v = 1e8 + rng.Normal();
    RequireSameWelford(w, "ill-conditioned variance" + at, seed);
    for (auto& v : w) v = std::ldexp(rng.Normal(), static_cast<int>(rng.Below(990)) - 484);
    w[n / 3] = 0.0;
    RequireSameWelford(w, "squares over the split range" + at, seed);
    w[n - 1] = 0x1p-485;  // below the split range, after a carry pass: the definition answers
    RequireSameWelford(w, "one below the split range" + at, seed);
  }
  std::cout << "ChunkSum == ExactSum and the references on inputs of " << pass - 1 << " to "
            << 3 * pass + 7 << " terms\n";
}

TEST_CASE("references split across PassThreads equal the one-thread pass, field for field",
          "[fast][reference][fast_sum]") {
  // precision/parallel_pass.hpp: with PassThreads() > 1 the exact-sum scans (sum, welford,
  // norm2) and the lse fast tier's shifted exponential sum run in parts merged exactly; every
  // field must be the one-thread pass's. n spans two and three parts (kMinPassPart each) and
  // an odd tail; the inputs mix binades so the parts' limbs, binade ORs and maxima differ.
  const std::uint64_t seed = 20261202;
  Rng rng(seed);
  for (const std::uint64_t n : {2 * kMinPassPart + 3, 3 * kMinPassPart + 12345}) {
    std::vector<double> x(n);
    for (auto& v : x) v = std::ldexp(rng.Normal(), static_cast<int>(rng.Below(80)) - 40);
    x[n - 1] = 0x1p-300;  // the lowest bit, in the last part only
    x[7] = 0x1p+60;       // the largest, in the first part only
    // lse on values of one scale, so that nearly every term goes through the exp kernel.
    std::vector<double> y(n);
    for (auto& v : y) v = 4 * rng.Normal();
    const Reference sum1 = ReferenceSumFast(x), wel1 = ReferenceWelfordFast(x),
                    nrm1 = ReferenceNorm2Fast(x), lse1 = ReferenceLse(y);
    for (const int threads : {2, 3, 4}) {
      const PassThreadsScope scope(threads);
      const std::string at = " n=" + std::to_string(n) + " threads=" + std::to_string(threads) +
                             " parts=" + std::to_string(PassParts(n));
      REQUIRE(PassParts(n) >= 2);
      RequireSameMulti(sum1, ReferenceSumFast(x), x, "split sum" + at, seed);
      RequireSameMulti(wel1, ReferenceWelfordFast(x), x, "split welford" + at, seed);
      RequireSameMulti(nrm1, ReferenceNorm2Fast(x), x, "split norm2" + at, seed);
      RequireSameMulti(lse1, ReferenceLse(y), y, "split lse" + at, seed);
    }
    REQUIRE(PassThreads() == 1);  // the scopes restored the default
  }
  std::cout << "split reference passes equal the one-thread pass at n = 2 and 3 parts\n";
}
