// The `blockscaled:B[:DIST]` input generator (experiments/inputs/generators.hpp): per-block
// scaled quantisation to the storage format, DeepSeek-V3's FP8 recipe (1x128 tiles, scale =
// max|x| / 448). In process: every block's largest |value| lands on the storage format's
// largest finite value and every value is a storage value; the values are the base
// generator's divided by the block's scale (to within one rounding of the storage format);
// B = 0 is one block; bad text is one line. End to end: `carrier eval --gen blockscaled:...`
// runs a dot through mma:hopper-fp8, and a bad B exits 2 naming the generator.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "inputs/generators.hpp"
#include "precision/format.hpp"
#include "precision/parallel_pass.hpp"
#include "precision/rounding.hpp"
#include "support/cli_support.hpp"

namespace {

using carrier::Format;
using carrier::ParseFormat;
using carrier::Rounding;
using carrier::RoundToFormat;
namespace inputs = carrier::inputs;

double Round(double v, const void* ctx) {
  return RoundToFormat(v, *static_cast<const Format*>(ctx), Rounding::kNearestEven);
}

// max |x| of x[lo, hi)
double AbsMax(const std::vector<double>& x, std::size_t lo, std::size_t hi) {
  double m = 0;
  for (std::size_t i = lo; i < hi; ++i) m = std::max(m, std::fabs(x[i]));
  return m;
}

}  // namespace

TEST_CASE("blockscaled: every block's max lands on the format's max finite, values quantised",
          "[fast]") {
  for (const std::string fmt_name : {"fp8e4m3", "fp8e5m2", "fp16", "bf16"}) {
    const Format fmt = ParseFormat(fmt_name);
    for (const std::string text : {"blockscaled:128", "blockscaled:128:normal",
                                   "blockscaled:100:uniform11", "blockscaled:0:lognormal"}) {
      const std::uint64_t n = 1000, seed = 7;
      const auto spec = inputs::ParseGenerator(text);
      const auto q = inputs::Generate(spec, n, seed, Round, &fmt);
      const auto x = inputs::Generate(inputs::ParseGenerator(spec.base), n, seed);  // unrounded
      REQUIRE(q.size() == n);
      const std::size_t b = spec.block == 0 ? n : spec.block;
      std::size_t blocks = 0;
      for (std::size_t lo = 0; lo < n; lo += b, ++blocks) {
        const std::size_t hi = std::min<std::size_t>(n, lo + b);
        INFO("format " << fmt_name << ", generator " << text << ", seed " << seed << ", n " << n
                       << ", block [" << lo << ", " << hi << ")");
        CHECK(AbsMax(q, lo, hi) == fmt.MaxFinite());
        const double s = AbsMax(x, lo, hi) / fmt.MaxFinite();
        for (std::size_t i = lo; i < hi; ++i) {
          CHECK(Round(q[i], &fmt) == q[i]);      // a storage value
          CHECK(Round(x[i] / s, &fmt) == q[i]);  // the scaled value, rounded once
        }
      }
      CHECK(blocks == (n + b - 1) / b);
      std::cout << "  " << fmt_name << " " << text << ": " << blocks << " blocks, max "
                << fmt.MaxFinite() << "\n";
    }
  }
  // Without a storage rounding the target is 1: each block is divided by its max |x|.
  const auto q = inputs::Generate(inputs::ParseGenerator("blockscaled:10"), 30, 3);
  for (std::size_t lo = 0; lo < 30; lo += 10) CHECK(AbsMax(q, lo, lo + 10) == 1.0);
}

TEST_CASE("blockscaled: bad text is one line naming the generator", "[fast]") {
  for (const std::string bad :
       {"blockscaled:", "blockscaled:-1", "blockscaled:1.5", "blockscaled:x:normal",
        "blockscaled:128:ill:10", "blockscaled:128:exact", "blockscaled:128:bogus",
        "blockscaled:128:blockscaled:4"}) {
    INFO("generator " << bad);
    try {
      inputs::ParseGenerator(bad);
      FAIL("accepted " << bad);
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      std::cout << "  " << bad << " -> " << msg << "\n";
      CHECK(msg.find('\n') == std::string::npos);
      CHECK((msg.find("blockscaled") != std::string::npos ||
             msg.find("generator") != std::string::npos));
    }
  }
}

TEST_CASE("blockscaled: eval runs a dot through mma:hopper-fp8 on block-scaled E4M3 inputs",
          "[fast]") {
  const std::string args =
      "eval --op dot --dtype fp8e4m3 --acc fp32 --schedule mma:hopper-fp8:promote:128 "
      "--gen blockscaled:128:normal --n 1024 --seed 5 --format json";
  const carrier_test::Run r = carrier_test::Carrier(args);
  INFO("carrier " << args << "\nstderr: " << r.err << "\nstdout: " << r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("\"rel_error\"") != std::string::npos);
  carrier_test::CheckRejected(
      "eval --op dot --dtype fp8e4m3 --acc fp32 --gen blockscaled:-3 --n 64", "blockscaled");
}

TEST_CASE("generation split across PassThreads gives the one-thread values", "[fast][inputs]") {
  // precision/parallel_pass.hpp: a sweep with --jobs J fills each input in J parts; every value
  // is a function of (seed, index), so the split must reproduce the one-thread input bit for
  // bit, rounded or not, for each counter-based distribution.
  const Format bf16 = ParseFormat("bf16");
  const std::uint64_t n = 2 * carrier::kMinPassPart + 5;
  for (const char* dist : {"normal", "uniform01", "uniform11", "offset:3", "lognormal"}) {
    for (const bool rounded : {false, true}) {
      INFO("reproduce: --gen " << dist << " n=" << n << " seed=9 rounded to bf16: " << rounded);
      const auto spec = inputs::ParseGenerator(dist);
      const auto one =
          rounded ? inputs::Generate(spec, n, 9, Round, &bf16) : inputs::Generate(spec, n, 9);
      for (const int threads : {2, 3}) {
        const carrier::PassThreadsScope scope(threads);
        REQUIRE(carrier::PassParts(n) == 2);
        const auto split =
            rounded ? inputs::Generate(spec, n, 9, Round, &bf16) : inputs::Generate(spec, n, 9);
        REQUIRE(split.size() == one.size());
        std::size_t differ = 0;
        for (std::size_t i = 0; i < n; ++i)
          differ += std::memcmp(&split[i], &one[i], sizeof(double)) != 0;
        INFO("threads " << threads);
        REQUIRE(differ == 0);
      }
    }
  }
  std::cout << "split generation equals the one-thread values (5 distributions, n = " << n << ")\n";
}

// outliers[:P[:S[:C]]] and student[:NU] (experiments/inputs/generators.hpp): the inputs of the
// block-scaled studies with LLM-like outlier channels and heavy tails.
TEST_CASE("outliers: exactly round(P C) channels of the normal values, times S", "[fast][inputs]") {
  const std::uint64_t n = 10000;
  const std::vector<double> normal = inputs::Generate(inputs::ParseGenerator("normal"), n, 7);
  for (const auto& [text, channels, want] :
       {std::tuple<std::string, std::uint64_t, std::uint64_t>{"outliers", n, 100},
        {"outliers:0.01:100", n, 100},
        {"outliers:0.003:8", n, 30},
        {"outliers:0.05:100:64", 64, 3},
        {"outliers:0:100", n, 0}}) {
    const inputs::GeneratorSpec spec = inputs::ParseGenerator(text);
    const std::vector<double> x = inputs::Generate(spec, n, 7);
    REQUIRE(x.size() == n);
    std::vector<int> scaled(channels, -1);  // per channel: 1 scaled, 0 not, -1 unseen
    std::uint64_t positions = 0;
    bool consistent = true;
    for (std::uint64_t i = 0; i < n; ++i) {
      const bool is = x[i] != normal[i];
      if (is) {
        ++positions;
        CHECK(x[i] == spec.scale * normal[i]);
      }
      int& s = scaled[i % channels];
      if (s >= 0 && s != static_cast<int>(is) && normal[i] != 0) consistent = false;
      if (normal[i] != 0) s = static_cast<int>(is);
    }
    std::uint64_t outlier_channels = 0;
    for (int s : scaled) outlier_channels += s == 1;
    std::cout << "  " << text << " (seed 7, n " << n << "): " << outlier_channels << " of "
              << channels << " channels, " << positions << " positions scaled by " << spec.scale
              << "\n";
    CHECK(outlier_channels == want);
    CHECK(consistent);  // a channel is scaled in every row or in none
    if (channels == n) CHECK(positions == want);
    // The channels come from the seed: the same seed, the same values.
    CHECK(inputs::Generate(spec, n, 7) == x);
  }
  // Another seed picks other channels.
  const auto a = inputs::Generate(inputs::ParseGenerator("outliers"), n, 7);
  const auto b = inputs::Generate(inputs::ParseGenerator("outliers"), n, 8);
  const auto na = inputs::Generate(inputs::ParseGenerator("normal"), n, 8);
  std::uint64_t same = 0;
  for (std::uint64_t i = 0; i < n; ++i) same += (a[i] != normal[i]) && (b[i] != na[i]);
  CHECK(same < 10);
  for (const std::string bad :
       {"outliers:2", "outliers:x", "outliers:0.1:5:0", "outliers:0.1:5:2.5", "outliers:1:2:3:4",
        "student:0", "student:-1", "student:3:4", "student:nu"}) {
    INFO("generator " << bad);
    CHECK_THROWS_AS(inputs::ParseGenerator(bad), std::invalid_argument);
  }
}

TEST_CASE("student:NU: sample quantiles match Student's t CDF", "[fast][inputs]") {
  // The CDFs in closed form: NU = 1 (Cauchy) 1/2 + atan(t)/pi; NU = 3
  // 1/2 + (t / (sqrt 3 (1 + t^2/3)) + atan(t / sqrt 3)) / pi.
  const double pi = 3.14159265358979323846;
  const auto cdf1 = [&](double t) { return 0.5 + std::atan(t) / pi; };
  const auto cdf3 = [&](double t) {
    const double r3 = std::sqrt(3.0);
    return 0.5 + (t / (r3 * (1 + t * t / 3)) + std::atan(t / r3)) / pi;
  };
  // n = 200000: the standard error of F(sample quantile) is sqrt(p (1 - p) / n) <= 1.2e-3;
  // the tolerance, fixed here, is 5e-3 (over 4 standard errors).
  const std::uint64_t n = 200000;
  const double tol = 5e-3;
  for (const auto& [text, nu] :
       {std::pair<std::string, int>{"student", 3}, {"student:3", 3}, {"student:1", 1}}) {
    std::vector<double> x = inputs::Generate(inputs::ParseGenerator(text), n, 11);
    CHECK(inputs::Generate(inputs::ParseGenerator(text), n, 11) == x);  // reproducible
    std::sort(x.begin(), x.end());
    for (const double p : {0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975, 0.99}) {
      const double q = x[static_cast<std::size_t>(p * (n - 1))];
      const double f = nu == 1 ? cdf1(q) : cdf3(q);
      std::cout << "  " << text << ": sample quantile " << p << " = " << q << ", F(q) = " << f
                << "\n";
      CHECK(std::fabs(f - p) <= tol);
    }
  }
}
