// RoundArray (precision/round_array.hpp) against the scalar routine it promises to equal:
// RoundToFormat for the deterministic modes and RoundStochastic(x, f, seed, counter + i) for sr,
// bit for bit, on double and float arrays, for every predefined format and custom ones that hit
// the general path's corners (no subnormals, no inf, saturation, p = 2, p = 53, ranges wider
// than float's). Inputs: every fp16 pattern, rounding_test_util's tie/neighbour patterns widened
// and moved by one double ulp, random bit patterns and random values around the format's range.
// Also: chunks with counter offsets give one call's bits, in place works, refusals throw.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "precision/format.hpp"
#include "precision/round_array.hpp"
#include "precision/rounding.hpp"
#include "rounding_test_util.hpp"
#include "support/test_support.hpp"

namespace carrier {
namespace {

const char* const kFormats[] = {
    "fp8e4m3",
    "fp8e4m3sat",
    "fp8e5m2",
    "fp16",
    "bf16",
    "tf32",
    "fp32",
    "fp64",
    "custom:p=5,emin=-10,emax=10,subnormals=0",
    "custom:p=2,emin=-3,emax=4,inf=0",
    "custom:p=24,emin=-126,emax=127,saturate=1",
    "custom:p=12,emin=-200,emax=200",                 // wider than float: double only
    "custom:p=30,emin=-1022,emax=1023,saturate=1",    // float superset, max finite not a float
    "custom:p=53,emin=-1022,emax=1023,subnormals=0",  // fp64 without subnormals
    // float's exponent range (bf16's "full" fast path) with one of its conditions broken
    "custom:p=8,emin=-126,emax=127,subnormals=0",
    "custom:p=8,emin=-126,emax=127,inf=0",
    "custom:p=11,emin=-126,emax=127,saturate=1",
    "custom:p=8,emin=-126,emax=127,topnan=1",
};

constexpr std::uint64_t kSeed = 0x5eed;
constexpr std::uint64_t kCounter = 1000;

double Widen(std::uint32_t bits) { return static_cast<double>(std::bit_cast<float>(bits)); }

std::vector<double> DoubleInputs(const Format& f) {
  std::vector<double> v;
  for (std::uint32_t h = 0; h < 0x10000; ++h) {  // every fp16 value (exact as float)
    const std::uint32_t sign = (h & 0x8000u) << 16;
    const std::uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double x;
    if (e == 0x1f) {
      x = m == 0 ? std::numeric_limits<double>::infinity() : std::nan("");
    } else if (e == 0) {
      x = std::ldexp(static_cast<double>(m), -24);
    } else {
      x = std::ldexp(static_cast<double>(m | 0x400), static_cast<int>(e) - 25);
    }
    v.push_back(sign != 0 ? -x : x);
  }
  for (std::uint32_t p : test::SpecialFloatPatterns(f, kSeed)) {
    const double x = Widen(p);
    v.push_back(x);
    if (std::isfinite(x)) {  // ties and exact values moved by one double ulp
      v.push_back(std::nextafter(x, 0.0));
      v.push_back(std::nextafter(x, 2 * x + 1));
    }
  }
  const double edges[] = {f.MaxFinite(), f.MinNormal(),     f.MinSubnormal(),
                          f.MaxUlp(),    f.MinNormal() / 2, f.MinSubnormal() / 2,
                          0x1p-1074,     0x1p-1022,         std::numeric_limits<double>::max()};
  for (double x : edges) {
    const double near[] = {x, std::nextafter(x, 0.0), std::nextafter(x, HUGE_VAL),
                           x + f.MaxUlp() / 2, x * 1.5};
    for (double y : near) {
      v.push_back(y);
      v.push_back(-y);
    }
  }
  test::Rng rng(kSeed);
  const int n = test::Trials(20000);
  for (int i = 0; i < n; ++i) v.push_back(std::bit_cast<double>(rng.Next()));  // any pattern
  for (int i = 0; i < n; ++i) {  // log-uniform over the format's range and a bit beyond
    const double e = rng.Uniform(f.emin - f.precision - 4, f.emax + 3);
    const double x = std::exp2(e) * (1 + rng.Uniform01());
    v.push_back(rng.Next() & 1 ? -x : x);
  }
  return v;
}

std::vector<float> FloatInputs(const Format& f) {
  std::vector<float> v;
  for (std::uint32_t p : test::SpecialFloatPatterns(f, kSeed)) v.push_back(std::bit_cast<float>(p));
  test::Rng rng(kSeed + 1);
  const int n = test::Trials(20000);
  for (int i = 0; i < n; ++i)
    v.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(rng.Next())));
  return v;
}

double Scalar(double x, const Format& f, Rounding r, std::size_t i) {
  return r == Rounding::kStochastic ? RoundStochastic(x, f, kSeed, kCounter + i)
                                    : RoundToFormat(x, f, r);
}

template <class T>
std::size_t CountMismatches(const std::vector<T>& in, const Format& f, Rounding r) {
  std::vector<T> out(in.size());
  RoundArray(std::span<const T>(in), std::span<T>(out), f, r, kSeed, kCounter);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const T want = static_cast<T>(Scalar(static_cast<double>(in[i]), f, r, i));
    if (std::bit_cast<std::uint64_t>(static_cast<double>(want)) !=
        std::bit_cast<std::uint64_t>(static_cast<double>(out[i]))) {
      if (bad < 3)
        UNSCOPED_INFO("format " << f.name << " round " << RoundingName(r) << " seed " << kSeed
                                << " counter " << kCounter + i << " input "
                                << test::Exact(static_cast<double>(in[i])) << ": RoundArray "
                                << test::Exact(static_cast<double>(out[i])) << ", scalar "
                                << test::Exact(static_cast<double>(want)));
      ++bad;
    }
  }
  return bad;
}

TEST_CASE("RoundArray equals RoundToFormat bit for bit on double arrays", "[fast]") {
  for (const char* name : kFormats) {
    const Format f = ParseFormat(name);
    const std::vector<double> in = DoubleInputs(f);
    for (Rounding r : kAllRoundings) {
      const std::size_t bad = CountMismatches(in, f, r);
      std::printf("double %-44s %-3s %7zu inputs, %zu mismatches\n", name,
                  std::string(RoundingName(r)).c_str(), in.size(), bad);
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("RoundArray equals RoundToFormat bit for bit on float arrays", "[fast]") {
  for (const char* name : kFormats) {
    const Format f = ParseFormat(name);
    if (!RoundsWithinFloat(f)) continue;
    const std::vector<float> in = FloatInputs(f);
    for (Rounding r : kAllRoundings) {
      const std::size_t bad = CountMismatches(in, f, r);
      std::printf("float  %-44s %-3s %7zu inputs, %zu mismatches\n", name,
                  std::string(RoundingName(r)).c_str(), in.size(), bad);
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("RoundArray: which formats round float arrays", "[fast]") {
  for (const Format& f : PredefinedFormats()) CHECK(RoundsWithinFloat(f));
  CHECK_FALSE(RoundsWithinFloat(ParseFormat("custom:p=12,emin=-200,emax=200")));
  CHECK_FALSE(RoundsWithinFloat(ParseFormat("custom:p=30,emin=-1022,emax=1023,saturate=1")));
  CHECK(RoundsWithinFloat(ParseFormat("custom:p=30,emin=-1022,emax=1023")));
  std::vector<float> x(4, 1.0f), y(4);
  CHECK_THROWS_AS(RoundArray(std::span<const float>(x), std::span<float>(y),
                             ParseFormat("custom:p=12,emin=-200,emax=200"), Rounding::kNearestEven),
                  std::invalid_argument);
  std::vector<double> a(4, 1.0), b(3);
  CHECK_THROWS_AS(
      RoundArray(std::span<const double>(a), std::span<double>(b), Fp16(), Rounding::kNearestEven),
      std::invalid_argument);
}

TEST_CASE("RoundArray: chunks with counter offsets, lengths, misalignment, in place", "[fast]") {
  const Format f = BF16();
  test::Rng rng(kSeed);
  // Padding on both sides is NaN: a read or write past a chunk's end changes the checked bits.
  std::vector<double> in(1000 + 2);
  for (double& x : in) x = rng.Normal();
  in.front() = in.back() = std::nan("");
  const std::span<const double> body(in.data() + 1, in.size() - 2);
  for (Rounding r : kAllRoundings) {
    std::vector<double> whole(body.size());
    RoundArray(body, std::span<double>(whole), f, r, 7, 0);
    for (std::size_t len : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{7},
                            std::size_t{8}, std::size_t{9}, std::size_t{333}}) {
      for (std::size_t start : {std::size_t{0}, std::size_t{1}, std::size_t{5}}) {
        std::vector<double> part(len + 2, std::nan(""));
        RoundArray(body.subspan(start, len), std::span<double>(part.data() + 1, len), f, r, 7,
                   start);
        INFO("round " << RoundingName(r) << " start " << start << " length " << len);
        CHECK(std::isnan(part.front()));
        CHECK(std::isnan(part.back()));
        for (std::size_t i = 0; i < len; ++i)
          CHECK(std::bit_cast<std::uint64_t>(part[i + 1]) ==
                std::bit_cast<std::uint64_t>(whole[start + i]));
      }
    }
    std::vector<double> inplace(body.begin(), body.end());
    RoundArray(std::span<const double>(inplace), std::span<double>(inplace), f, r, 7, 0);
    CHECK(inplace == whole);
  }
}

}  // namespace
}  // namespace carrier
