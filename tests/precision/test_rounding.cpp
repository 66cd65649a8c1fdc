// RoundToFormat against the independent integer reference on special and random inputs
// (the fast counterpart of test_rounding_exhaustive.cpp), plus hand-written cases that pin the
// contract itself, so that the implementation and the reference cannot share a misreading.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "precision/format.hpp"
#include "precision/rounding.hpp"
#include "reference_rounding.hpp"
#include "rounding_test_util.hpp"
#include "support/test_support.hpp"

namespace carrier {
namespace {

using test::Mismatch;

// Formats whose values are all fp32 values, so the fp32-source reference covers them.
std::vector<Format> Fp32SubsetFormats() {
  return {Fp8E4M3(),
          Fp8E4M3Sat(),
          Fp8E5M2(),
          Fp16(),
          BF16(),
          TF32(),
          Fp32(),
          ParseFormat("custom:p=5,emin=-3,emax=4,subnormals=0"),
          ParseFormat("custom:p=3,emin=-2,emax=3,inf=0,saturate=1"),
          ParseFormat("custom:p=4,emin=-6,emax=8,inf=0"),
          ParseFormat("custom:p=7,emin=-20,emax=20,subnormals=0,saturate=1"),
          ParseFormat("custom:p=2,emin=-1,emax=1"),
          ParseFormat("custom:p=24,emin=-126,emax=127,subnormals=0")};
}

void ReportFloat(std::uint64_t count, const std::vector<Mismatch>& first, const Format& f,
                 Rounding r, std::size_t total) {
  INFO("format " << f.name << " mode " << RoundingName(r) << ": " << count << " of " << total
                 << " inputs differ from the reference");
  for (const Mismatch& m : first) UNSCOPED_INFO(test::DescribeMismatch(m, true, f, r));
  CHECK(count == 0);
}

TEST_CASE("RoundToFormat matches the reference on special and random fp32 inputs", "[fast]") {
  const std::size_t kRandomTotal = static_cast<std::size_t>(test::Trials(1000000));
  const std::vector<Format> formats = Fp32SubsetFormats();
  const std::size_t per_format = kRandomTotal / formats.size() + 1;
  std::uint64_t seed = 20240601;
  std::size_t checked = 0;
  for (const Format& f : formats) {
    std::vector<std::uint32_t> inputs = test::SpecialFloatPatterns(f, seed++);
    const std::vector<std::uint32_t> random = test::RandomFloatPatterns(f, per_format, seed++);
    inputs.insert(inputs.end(), random.begin(), random.end());
    for (Rounding r : kDeterministicRoundings) {
      std::vector<Mismatch> first;
      const std::uint64_t count = test::CheckFloatPatterns(inputs, f, r, &first);
      ReportFloat(count, first, f, r, inputs.size());
      checked += inputs.size();
    }
  }
  INFO("checked " << checked);
  CHECK(checked > 6 * kRandomTotal);
}

// Doubles exercise what fp32 inputs cannot: 53-bit significands, double subnormals, formats
// wider than fp32 and discarded parts longer than 64 bits.
std::vector<std::uint64_t> RandomDoublePatterns(const Format& f, std::size_t count,
                                                std::uint64_t seed) {
  test::Rng rng(seed);
  std::vector<std::uint64_t> out = {0,
                                    0x8000000000000000ULL,
                                    1,
                                    0x000fffffffffffffULL,
                                    0x0010000000000000ULL,
                                    0x7fefffffffffffffULL,
                                    0x7ff0000000000000ULL,
                                    0x7ff8000000000000ULL,
                                    0x7ff0000000000001ULL};
  const int lo = std::max(0, f.emin - f.precision - 3 + 1023);
  const int hi = std::min(2046, f.emax + 3 + 1023);
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t u = rng.Next();
    switch (i % 4) {
      case 0:
        break;   // anywhere
      case 1: {  // near the format's range
        const auto biased = static_cast<std::uint64_t>(lo + rng.Below(hi - lo + 1));
        u = (u & 0x800fffffffffffffULL) | (biased << 52);
        break;
      }
      case 2: {  // a tie or a neighbour of one: dropped bits 100..0 +- 1
        const auto biased = static_cast<std::uint64_t>(lo + rng.Below(hi - lo + 1));
        const int e = static_cast<int>(biased == 0 ? 1 : biased) - 1023;
        const int quantum = (e >= f.emin ? e : (f.subnormals ? f.emin : f.emin + f.precision - 1)) -
                            (f.precision - 1);
        const int dropped = std::clamp(quantum - (e - 52), 1, 52);
        const std::uint64_t mask = (std::uint64_t{1} << dropped) - 1;
        const std::uint64_t tie = std::uint64_t{1} << (dropped - 1);
        const std::uint64_t low = tie + static_cast<std::uint64_t>(rng.Below(3)) - 1;
        u = (u & 0x8000000000000000ULL) | (biased << 52) | ((u & 0x000fffffffffffffULL) & ~mask) |
            (low & mask);
        break;
      }
      default:  // double subnormals
        u &= 0x800fffffffffffffULL;
        break;
    }
    out.push_back(u);
  }
  return out;
}

TEST_CASE("RoundToFormat matches the reference on random doubles", "[fast]") {
  std::vector<Format> formats = Fp32SubsetFormats();
  formats.push_back(Fp64());
  formats.push_back(ParseFormat("custom:p=30,emin=-1000,emax=1000"));
  formats.push_back(ParseFormat("custom:p=53,emin=-1022,emax=1023,subnormals=0"));
  formats.push_back(ParseFormat("custom:p=52,emin=-1022,emax=1023,inf=0"));
  formats.push_back(ParseFormat("custom:p=40,emin=-1010,emax=1023,subnormals=0,saturate=1"));
  const std::size_t per_format = static_cast<std::size_t>(test::Trials(20000));
  std::uint64_t seed = 77;
  for (const Format& f : formats) {
    const std::vector<std::uint64_t> inputs = RandomDoublePatterns(f, per_format, seed++);
    for (Rounding r : kDeterministicRoundings) {
      std::vector<Mismatch> first;
      const std::uint64_t count = test::CheckDoublePatterns(inputs, f, r, &first);
      INFO("format " << f.name << " mode " << RoundingName(r) << ": " << count << " of "
                     << inputs.size() << " differ; seed " << seed - 1);
      for (const Mismatch& m : first) UNSCOPED_INFO(test::DescribeMismatch(m, false, f, r));
      CHECK(count == 0);
    }
  }
}

TEST_CASE("fp64 is the identity for every mode", "[fast]") {
  test::Rng rng(5);
  const Format f = Fp64();
  StochasticBits bits{1, 0};
  for (int i = 0; i < test::Trials(10000); ++i) {
    const double x = std::bit_cast<double>(rng.Next());
    for (Rounding r : kAllRoundings) {
      const double y = RoundToFormat(x, f, r, &bits);
      INFO("x " << test::Exact(x) << " mode " << RoundingName(r));
      if (std::isnan(x)) {
        CHECK(std::isnan(y));
      } else {
        CHECK(std::bit_cast<std::uint64_t>(y) == std::bit_cast<std::uint64_t>(x));
      }
    }
  }
}

// Expected values written by hand from the contract (and, for fp8, from the OCP spec and
// CUDA's cuda_fp8.hpp), so the reference itself is checked too.
struct Case {
  const char* format;
  const char* mode;
  double x;
  double want;  // NaN means "a NaN"
};

using test::kInf;
using test::kNaN;

const Case kCases[] = {
    // OCP E4M3: 448 is max; 464 is the tie with the NaN pattern's 480.
    {"fp8e4m3", "rne", 464.0, 448.0},
    {"fp8e4m3", "rne", 464.5, kNaN},
    {"fp8e4m3", "rna", 464.0, kNaN},
    {"fp8e4m3", "rz", 1e9, 448.0},
    {"fp8e4m3", "ru", 448.5, kNaN},
    {"fp8e4m3", "ru", -1e9, -448.0},
    {"fp8e4m3", "rd", -448.5, kNaN},
    {"fp8e4m3", "ro", 1e9, 448.0},
    {"fp8e4m3", "rne", kInf, kNaN},
    {"fp8e4m3sat", "rne", kInf, 448.0},
    {"fp8e4m3sat", "rne", -1e30, -448.0},
    {"fp8e4m3sat", "ru", 449.0, 448.0},
    {"fp8e4m3", "rne", 0x1p-10, 0.0},  // half the smallest subnormal 2^-9: tie to 0
    {"fp8e4m3", "rne", 0x1.8p-10, 0x1p-9},
    {"fp8e4m3", "ru", 1e-300, 0x1p-9},
    {"fp8e4m3", "rd", 1e-300, 0.0},
    {"fp8e4m3", "ro", 1e-300, 0x1p-9},
    {"fp8e4m3", "rz", -1e-300, -0.0},
    {"fp8e5m2", "rne", 61440.0, kInf},  // tie between 57344 and 2^16: even is 2^16
    {"fp8e5m2", "rne", 61439.0, 57344.0},
    {"fp8e5m2", "rz", kInf, kInf},
    {"fp8e5m2", "rne", 1.125, 1.0},  // tie, p=3: 1.00 even
    {"fp8e5m2", "rne", 1.375, 1.5},  // tie: 1.10 even
    {"fp8e5m2", "rna", 1.125, 1.25},
    {"fp8e5m2", "ro", 1.125, 1.25},
    {"fp8e5m2", "ro", 1.3, 1.25},
    {"fp8e5m2", "ro", 1.6, 1.75},
    {"fp16", "rne", 65519.0, 65504.0},
    {"fp16", "rne", 65520.0, kInf},
    {"fp16", "rd", 65520.0, 65504.0},
    {"fp16", "ru", -65520.0, -65504.0},
    {"fp16", "rne", 1.0 + 0x1p-11, 1.0},
    {"fp16", "rne", 1.0 + 0x1p-11 + 0x1p-40, 1.0 + 0x1p-10},
    {"fp16", "rne", 0x1p-25, 0.0},
    {"fp16", "rne", -0x1p-25, -0.0},
    {"fp16", "rne", 0x1.000001p-25, 0x1p-24},
    {"fp16", "rna", 0x1p-25, 0x1p-24},
    {"fp16", "ru", 0x1p-1074, 0x1p-24},
    {"fp16", "rne", 0x1.ffcp-15, 0x1p-14},  // subnormal rounding up to the smallest normal
    {"bf16", "rne", 1.0 + 0x1p-8, 1.0},
    {"bf16", "rne", 1.0 + 0x1p-8 + 0x1p-40, 1.0 + 0x1p-7},
    {"bf16", "rz", 3.0e38, 0x1.c2p127},
    {"bf16", "rne", 0x1.ffp127, kInf},
    {"bf16", "rne", 0x1.fefffffp127, 0x1.fep127},
    {"tf32", "rne", 1.0 + 0x1p-11, 1.0},
    {"tf32", "rne", 0x1p-137, 0.0},
    {"tf32", "rne", 0x1.8p-137, 0x1p-136},
    {"custom:p=5,emin=-3,emax=4,subnormals=0", "rne", 0x1p-4, 0.0},
    {"custom:p=5,emin=-3,emax=4,subnormals=0", "rne", 0x1.0000001p-4, 0x1p-3},
    {"custom:p=5,emin=-3,emax=4,subnormals=0", "rna", 0x1p-4, 0x1p-3},
    {"custom:p=5,emin=-3,emax=4,subnormals=0", "ro", 1e-9, 0x1p-3},
    {"custom:p=5,emin=-3,emax=4,subnormals=0", "rz", 0x1.fp-4, 0.0},
    {"fp32", "rne", 0x1.000001p0, 1.0},
    {"fp32", "rne", 0x1.0000018p0, 0x1.000002p0},
    {"fp32", "ro", 0x1.0000008p0, 0x1.000002p0},
    {"fp32", "rne", 0x1p-150, 0.0},
    {"fp32", "rne", 0x1.0000000000001p-150, 0x1p-149},
    {"fp64", "rz", 0.1, 0.1},
};

TEST_CASE("hand-written cases pin the contract", "[fast]") {
  for (const Case& c : kCases) {
    const Format f = ParseFormat(c.format);
    const Rounding r = ParseRounding(c.mode);
    const double got = RoundToFormat(c.x, f, r);
    INFO("format " << c.format << " mode " << c.mode << " x " << test::Exact(c.x) << " got "
                   << test::Exact(got) << " want " << test::Exact(c.want));
    if (std::isnan(c.want)) {
      CHECK(std::isnan(got));
    } else {
      CHECK(std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(c.want));
    }
    // The reference agrees with the hand-written value as well.
    const std::uint64_t want_ref = test::RefRoundDouble(std::bit_cast<std::uint64_t>(c.x),
                                                        test::ToRefFormat(f), test::ToRefMode(r));
    CHECK(test::RefAgrees(want_ref, c.want));
  }
}

TEST_CASE("signed zeros and NaN survive every mode", "[fast]") {
  StochasticBits bits{3, 0};
  for (const Format& f : PredefinedFormats()) {
    for (Rounding r : kAllRoundings) {
      INFO("format " << f.name << " mode " << RoundingName(r));
      CHECK(std::bit_cast<std::uint64_t>(RoundToFormat(0.0, f, r, &bits)) == 0);
      CHECK(std::bit_cast<std::uint64_t>(RoundToFormat(-0.0, f, r, &bits)) ==
            0x8000000000000000ULL);
      CHECK(std::isnan(RoundToFormat(kNaN, f, r, &bits)));
      CHECK(std::isnan(RoundToFormat(-kNaN, f, r, &bits)));
      // A signalling NaN comes back quiet.
      const double snan = std::bit_cast<double>(0x7ff0000000000001ULL);
      const std::uint64_t out = std::bit_cast<std::uint64_t>(RoundToFormat(snan, f, r, &bits));
      CHECK((out & 0x0008000000000000ULL) != 0);
    }
  }
}

// Rounding to odd at p bits and then to nearest at p-2 bits equals rounding to nearest at
// p-2 bits directly (Boldo-Melquiond): a property that ties ro to rne with no reference.
TEST_CASE("round to odd then to nearest equals nearest", "[fast]") {
  test::Rng rng(11);
  for (const char* wide_text : {"custom:p=13,emin=-14,emax=15", "custom:p=10,emin=-126,emax=127",
                                "fp32", "custom:p=6,emin=-6,emax=8,inf=0"}) {
    const Format wide = ParseFormat(wide_text);
    Format narrow = wide;
    narrow.precision = wide.precision - 2;
    narrow.name = "narrow";
    for (int i = 0; i < test::Trials(20000); ++i) {
      // Values in and around the normal and subnormal ranges.
      const double x =
          std::ldexp(rng.Uniform(-2, 2), static_cast<int>(rng.Below(wide.emax - wide.emin + 8)) +
                                             wide.emin - wide.precision - 2);
      if (std::fabs(x) >= narrow.MaxFinite()) continue;  // overflow rules differ by design
      const double odd = RoundToFormat(x, wide, Rounding::kToOdd);
      const double twice = RoundToFormat(odd, narrow, Rounding::kNearestEven);
      const double once = RoundToFormat(x, narrow, Rounding::kNearestEven);
      INFO("format " << wide.name << " x " << test::Exact(x) << " ro " << test::Exact(odd)
                     << " then rne " << test::Exact(twice) << " direct " << test::Exact(once));
      REQUIRE(std::bit_cast<std::uint64_t>(twice) == std::bit_cast<std::uint64_t>(once));
    }
  }
}

}  // namespace
}  // namespace carrier
