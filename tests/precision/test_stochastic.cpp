// Stochastic rounding: unbiased, probability proportional to the distance, reproducible from
// (seed, counter), independent of threads, and only ever one of the two neighbours.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

#include "precision/format.hpp"
#include "precision/rounding.hpp"
#include "support/test_support.hpp"

namespace carrier {
namespace {

struct SrCase {
  const char* format;
  double x;
  double lo;  // neighbour toward zero
  double hi;  // neighbour away from zero
};

// Neighbours written by hand: q = (|x| - lo) / (hi - lo) is the probability of hi.
const SrCase kSrCases[] = {
    {"fp16", 1.0 + 0.3 * 0x1p-10, 1.0, 1.0 + 0x1p-10},
    {"fp16", -(1.0 + 0.7 * 0x1p-10), -1.0, -(1.0 + 0x1p-10)},
    {"fp16", 0.1, 0x1.998p-4, 0x1.99cp-4},
    {"fp16", 3.0 * 0x1p-26, 0.0, 0x1p-24},  // below the smallest subnormal
    {"bf16", 1.0 / 3.0, 0x1.54p-2, 0x1.56p-2},
    {"fp8e4m3", 300.0, 288.0, 320.0},
    {"fp8e5m2", 1e-5, 0.0, 0x1p-16},  // q = 1e-5 / 2^-16 = 0.655
    {"tf32", 1.0e-3, 0x1.06p-10, 0x1.064p-10},
};

TEST_CASE("stochastic rounding is unbiased", "[fast]") {
  const int n = test::Trials(100000);
  for (const SrCase& c : kSrCases) {
    const Format f = ParseFormat(c.format);
    StochasticBits bits{12345, 0};
    double sum = 0;
    int ups = 0;
    for (int i = 0; i < n; ++i) {
      const double y = RoundToFormat(c.x, f, Rounding::kStochastic, &bits);
      if (y != c.lo && y != c.hi)
        FAIL("format " << c.format << " x " << test::Exact(c.x) << " seed 12345 counter " << i
                       << ": got " << test::Exact(y) << ", not a neighbour");
      ups += y == c.hi;
      sum += y;
    }
    CHECK(bits.counter == static_cast<std::uint64_t>(n));
    const double gap = c.hi - c.lo;
    const double q = (c.x - c.lo) / gap;
    const double mean = sum / n;
    // Standard error of the mean of a two-point distribution with P(hi) = q.
    const double se = std::fabs(gap) * std::sqrt(q * (1 - q) / n);
    const double z = (mean - c.x) / se;
    std::printf("sr %-8s x=%-24a q=%.4f mean=%-24a se=%.3g  (mean-x)/se=%+.2f  ups=%d/%d\n",
                c.format, c.x, q, mean, se, z, ups, n);
    INFO("format " << c.format << " x " << test::Exact(c.x) << " mean " << test::Exact(mean)
                   << " standard error " << se << " z " << z << " seed 12345 n " << n);
    CHECK(std::fabs(z) < 5.0);
    // The frequency of rounding away from zero matches the distance.
    const double freq = static_cast<double>(ups) / n;
    CHECK(std::fabs(freq - q) < 5.0 * std::sqrt(q * (1 - q) / n));
  }
}

TEST_CASE("stochastic rounding probability follows the distance", "[fast]") {
  // x = 1 + k/16 ulp for k = 0..16 in fp16: P(up) = k/16, including exact 0 and 1.
  const Format f = Fp16();
  const int n = test::Trials(20000);
  for (int k = 0; k <= 16; ++k) {
    const double x = 1.0 + k * 0x1p-14;
    int ups = 0;
    for (int i = 0; i < n; ++i)
      ups += RoundStochastic(x, f, 99, static_cast<std::uint64_t>(i)) > 1.0;
    const double q = k / 16.0;
    const double sigma = std::sqrt(q * (1 - q) / n);
    INFO("k " << k << " ups " << ups << " of " << n << " expected probability " << q);
    if (k == 0) CHECK(ups == 0);   // exact input: never moved
    if (k == 16) CHECK(ups == n);  // exact input 1 + ulp
    CHECK(std::fabs(static_cast<double>(ups) / n - q) <= 5 * sigma + 1e-12);
  }
}

TEST_CASE("stochastic rounding is reproducible from seed and counter", "[fast]") {
  const Format f = BF16();
  test::Rng rng(3);
  std::vector<double> xs(4096);
  for (double& x : xs) x = rng.Uniform(-10, 10);

  auto run = [&](std::uint64_t seed, std::uint64_t start) {
    StochasticBits bits{seed, start};
    std::vector<std::uint64_t> out;
    for (double x : xs)
      out.push_back(
          std::bit_cast<std::uint64_t>(RoundToFormat(x, f, Rounding::kStochastic, &bits)));
    return out;
  };
  const auto a = run(42, 0);
  CHECK(a == run(42, 0));  // same seed and counter: same bits
  // The pure form with the same (seed, index) gives the same bits.
  for (std::size_t i = 0; i < xs.size(); ++i)
    CHECK(std::bit_cast<std::uint64_t>(RoundStochastic(xs[i], f, 42, i)) == a[i]);
  // Different seeds or a shifted counter differ somewhere (bf16 has ~8 bits to decide).
  CHECK(a != run(43, 0));
  CHECK(a != run(42, 1));
  int differ = 0;
  const auto b = run(43, 0);
  for (std::size_t i = 0; i < a.size(); ++i) differ += a[i] != b[i];
  std::printf("sr reproducibility: seeds 42 and 43 differ on %d of %zu roundings\n", differ,
              a.size());
  CHECK(differ > 100);

  // Random bits are a pure function of (seed, index); neighbouring seeds are not shifted
  // copies of one stream.
  CHECK(StochasticRandomBits(1, 5) == StochasticRandomBits(1, 5));
  for (std::uint64_t i = 0; i < 64; ++i)
    for (std::uint64_t j = 0; j < 64; ++j)
      if (!(i == j)) CHECK(StochasticRandomBits(1, i) != StochasticRandomBits(2, j));
}

TEST_CASE("stochastic rounding does not depend on threads", "[fast]") {
  const Format f = Fp8E5M2();
  const std::size_t n = 1 << 16;
  std::vector<double> xs(n);
  test::Rng rng(8);
  for (double& x : xs) x = rng.Normal();
  std::vector<double> serial(n), parallel(n);
  for (std::size_t i = 0; i < n; ++i) serial[i] = RoundStochastic(xs[i], f, 7, i);
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < 4; ++t)
    pool.emplace_back([&, t] {
      for (std::size_t i = t; i < n; i += 4) parallel[i] = RoundStochastic(xs[i], f, 7, i);
    });
  for (std::thread& th : pool) th.join();
  for (std::size_t i = 0; i < n; ++i)
    if (std::bit_cast<std::uint64_t>(serial[i]) != std::bit_cast<std::uint64_t>(parallel[i]))
      FAIL("index " << i << " x " << test::Exact(xs[i]) << " serial " << test::Exact(serial[i])
                    << " threaded " << test::Exact(parallel[i]));
}

TEST_CASE("stochastic rounding overflow and special values", "[fast]") {
  StochasticBits bits{1, 0};
  CHECK_THROWS_AS(RoundToFormat(1.0, Fp16(), Rounding::kStochastic), std::invalid_argument);
  // Above max finite by half an ulp: inf with probability 1/2 (fp16), never for saturation.
  int infs = 0;
  for (int i = 0; i < 1000; ++i) {
    const double y = RoundToFormat(65504.0 + 16.0, Fp16(), Rounding::kStochastic, &bits);
    REQUIRE((y == 65504.0 || std::isinf(y)));
    infs += std::isinf(y);
    const double s = RoundToFormat(460.0, Fp8E4M3Sat(), Rounding::kStochastic, &bits);
    REQUIRE((s == 448.0));
    const double e = RoundToFormat(460.0, Fp8E4M3(), Rounding::kStochastic, &bits);
    REQUIRE((e == 448.0 || std::isnan(e)));
  }
  CHECK(infs > 400);
  CHECK(infs < 600);
  CHECK(std::isinf(RoundToFormat(1e300, Fp16(), Rounding::kStochastic, &bits)));
  CHECK(std::bit_cast<std::uint64_t>(RoundToFormat(-0.0, Fp16(), Rounding::kStochastic, &bits)) ==
        0x8000000000000000ULL);
  // Each call consumed one counter value, whatever the input.
  CHECK(bits.counter == 3000 + 2);
}

}  // namespace
}  // namespace carrier
