// Half and BFloat16: layout, exact widening, and round-to-nearest-even narrowing from float and
// double against the independent reference (the exhaustive version is in
// test_rounding_exhaustive.cpp).
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "precision/bfloat16.hpp"
#include "precision/format.hpp"
#include "precision/half.hpp"
#include "reference_rounding.hpp"
#include "rounding_test_util.hpp"
#include "support/test_support.hpp"

#if defined(CARRIER_TEST_HAVE_HWY)
#include <hwy/base.h>
#endif

namespace carrier {
namespace {

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2);
static_assert(std::is_trivially_copyable_v<Half> && std::is_trivially_copyable_v<BFloat16>);
static_assert(std::is_trivial_v<Half> && std::is_trivial_v<BFloat16>);
static_assert(std::is_standard_layout_v<Half> && std::is_standard_layout_v<BFloat16>);
static_assert(Half::FromBits(0x3C00).ToBits() == 0x3C00);
static_assert(BFloat16::FromBits(0x3F80).ToBits() == 0x3F80);

#if defined(CARRIER_TEST_HAVE_HWY)
// Highway 1.0.3 on x86 emulates both as `struct { uint16_t bits; }`, packed.
static_assert(sizeof(hwy::float16_t) == sizeof(Half) &&
              sizeof(hwy::bfloat16_t) == sizeof(BFloat16));
static_assert(std::is_trivially_copyable_v<hwy::float16_t>);
#endif

// Decoding written from the definition with floating-point scaling (a different path from
// the integer code under test).
double DecodeIeee(std::uint16_t bits, int trailing_bits, int exponent_bits) {
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const int e = (bits >> trailing_bits) & ((1 << exponent_bits) - 1);
  const int t = bits & ((1 << trailing_bits) - 1);
  const double sign = (bits & 0x8000) ? -1.0 : 1.0;
  if (e == (1 << exponent_bits) - 1) return t == 0 ? sign * INFINITY : NAN;
  if (e == 0) return sign * std::ldexp(t, 1 - bias - trailing_bits);
  return sign * std::ldexp(t + (1 << trailing_bits), e - bias - trailing_bits);
}

TEST_CASE("Half and BFloat16 widen exactly for all 65536 patterns", "[fast]") {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const Half h = Half::FromBits(bits);
    const BFloat16 g = BFloat16::FromBits(bits);
    const double want_h = DecodeIeee(bits, 10, 5);
    const double want_g = DecodeIeee(bits, 7, 8);
    INFO("bits " << test::Hex(bits, 4) << " half " << test::Exact(h.ToDouble()) << " want "
                 << test::Exact(want_h) << " bf16 " << test::Exact(g.ToDouble()) << " want "
                 << test::Exact(want_g));
    if (std::isnan(want_h)) {
      REQUIRE(std::isnan(h.ToFloat()));
      REQUIRE(h.IsNaN());
      REQUIRE(Half(h.ToFloat()).bits == 0x7FFF);
    } else {
      REQUIRE(std::bit_cast<std::uint64_t>(h.ToDouble()) == std::bit_cast<std::uint64_t>(want_h));
      REQUIRE_FALSE(h.IsNaN());
      // Narrowing a value of the format gives it back, from float and from double.
      REQUIRE(Half(h.ToFloat()).bits == bits);
      REQUIRE(Half(h.ToDouble()).bits == bits);
    }
    if (std::isnan(want_g)) {
      REQUIRE(std::isnan(g.ToFloat()));
      REQUIRE(g.IsNaN());
      REQUIRE(BFloat16(g.ToFloat()).bits == 0x7FFF);
    } else {
      REQUIRE(std::bit_cast<std::uint64_t>(g.ToDouble()) == std::bit_cast<std::uint64_t>(want_g));
      REQUIRE(BFloat16(g.ToFloat()).bits == bits);
      REQUIRE(BFloat16(g.ToDouble()).bits == bits);
    }
#if defined(CARRIER_TEST_HAVE_HWY)
    hwy::bfloat16_t hb;
    std::memcpy(&hb, &g, sizeof hb);
    REQUIRE(std::bit_cast<std::uint32_t>(hwy::F32FromBF16(hb)) ==
            std::bit_cast<std::uint32_t>(g.ToFloat()));
#endif
  }
}

// The value a narrowing should produce, as the reference's double bits, or NaN -> 0x7FFF.
template <class T>
bool NarrowMatches(const T& got, std::uint64_t want) {
  if (want == test::kRefNaN) return got.bits == 0x7FFF;
  return std::bit_cast<std::uint64_t>(got.ToDouble()) == want;
}

template <class T>
void CheckNarrowing(const Format& f, const char* what) {
  const test::RefFormat rf = test::ToRefFormat(f);
  std::vector<std::uint32_t> inputs = test::SpecialFloatPatterns(f, 17);
  const auto random = test::RandomFloatPatterns(f, test::Trials(200000), 18);
  inputs.insert(inputs.end(), random.begin(), random.end());
  for (std::uint32_t u : inputs) {
    const float x = std::bit_cast<float>(u);
    const std::uint64_t want = test::RefRoundFloat(u, rf, test::RefMode::kRne);
    const T from_float(x), from_double(static_cast<double>(x));
    if (!NarrowMatches(from_float, want) || !NarrowMatches(from_double, want))
      FAIL(what << " input fp32 " << test::Hex(u, 8) << " (" << test::Exact(x) << "): from float "
                << test::Hex(from_float.bits, 4) << " from double "
                << test::Hex(from_double.bits, 4) << " want "
                << (want == test::kRefNaN ? std::string("NaN")
                                          : test::Exact(std::bit_cast<double>(want))));
  }
  // Doubles with bits beyond fp32's, ties +- tiny amounts included.
  test::Rng rng(19);
  for (int i = 0; i < test::Trials(200000); ++i) {
    const int e =
        f.emin - f.precision - 2 + static_cast<int>(rng.Below(f.emax - f.emin + f.precision + 5));
    std::uint64_t u = std::bit_cast<std::uint64_t>(std::ldexp(rng.Uniform(-2, 2), e));
    if (i % 3 == 0) u &= ~((std::uint64_t{1} << 30) - 1);  // make fp32-like ties possible
    if (i % 3 == 1) u ^= 1;                                // and nudge them
    const double x = std::bit_cast<double>(u);
    const std::uint64_t want = test::RefRoundDouble(u, rf, test::RefMode::kRne);
    const T got(x);
    if (!NarrowMatches(got, want))
      FAIL(what << " input fp64 " << test::Hex(u, 16) << " (" << test::Exact(x) << "): got "
                << test::Hex(got.bits, 4) << " want "
                << (want == test::kRefNaN ? std::string("NaN")
                                          : test::Exact(std::bit_cast<double>(want))));
  }
}

TEST_CASE("Half rounds to nearest even from float and double", "[fast]") {
  CheckNarrowing<Half>(Fp16(), "Half");
  CHECK(Half(1.0f).bits == 0x3C00);
  CHECK(Half(-2.0).bits == 0xC000);
  CHECK(Half(65504.0f).bits == 0x7BFF);
  CHECK(Half(65519.0f).bits == 0x7BFF);
  CHECK(Half(65520.0f).bits == 0x7C00);
  CHECK(Half(-INFINITY).bits == 0xFC00);
  CHECK(Half(NAN).bits == 0x7FFF);
  CHECK(Half(-NAN).bits == 0x7FFF);
  CHECK(Half(-0.0f).bits == 0x8000);
  CHECK(Half(0x1p-24f).bits == 0x0001);
  CHECK(Half(0x1p-25f).bits == 0x0000);
  CHECK(Half(0x1.000002p-25f).bits == 0x0001);
  // Double rounding through float would give 1.0 (0x3C00): 1 + 2^-11 + 2^-40 is just above
  // the fp16 tie, and float keeps only the tie.
  CHECK(static_cast<float>(1.0 + 0x1p-11 + 0x1p-40) == 1.0f + 0x1p-11f);
  CHECK(Half(1.0 + 0x1p-11 + 0x1p-40).bits == 0x3C01);
  CHECK(Half(1.0 + 0x1p-11).bits == 0x3C00);
  CHECK(Half(-(0x1p-25 + 0x1p-60)).bits == 0x8001);
}

TEST_CASE("BFloat16 rounds to nearest even from float and double", "[fast]") {
  CheckNarrowing<BFloat16>(BF16(), "BFloat16");
  CHECK(BFloat16(1.0f).bits == 0x3F80);
  CHECK(BFloat16(3.0e38f).bits == 0x7F62);
  CHECK(BFloat16(0x1.ffp127).bits == 0x7F80);  // the tie above max rounds to inf
  CHECK(BFloat16(0x1.fefffffp127).bits == 0x7F7F);
  CHECK(BFloat16(NAN).bits == 0x7FFF);
  CHECK(BFloat16(0x1p-133f).bits == 0x0001);  // smallest subnormal survives
  CHECK(BFloat16(0x1p-134).bits == 0x0000);
  CHECK(BFloat16(1.0 + 0x1p-8 + 0x1p-40).bits == 0x3F81);  // float would keep only the tie
  CHECK(BFloat16(1.0 + 0x1p-8).bits == 0x3F80);
}

}  // namespace
}  // namespace carrier
