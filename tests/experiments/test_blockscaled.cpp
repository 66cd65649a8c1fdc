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
