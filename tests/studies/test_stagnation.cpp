// Stagnation of recursive summation (studies/stagnation.hpp) through the project's rounding
// code. The published points (Higham, ASNA 2nd ed., sec. 4; Connolly, Higham & Mary 2021):
// the harmonic series stops at 7.0859375 at term 513 in fp16 and at 5.0625 at term 65 in
// bf16; a sum of ones stops at 2048 (fp16) and 256 (bf16), i.e. term 2049 / 257 is the first
// one absorbed. Under stochastic rounding the sum keeps moving.
#include <catch2/catch.hpp>
#include <cmath>
#include <iostream>

#include "precision/format.hpp"
#include "studies/stagnation.hpp"

namespace {

using carrier::Rounding;
using carrier::studies::RunStagnation;
using carrier::studies::Series;
using carrier::studies::StagnationSpec;

StagnationSpec Spec(Series series, const char* format, Rounding r, std::uint64_t max_terms,
                    std::uint64_t seed = 0) {
  StagnationSpec s;
  s.series = series;
  s.format = carrier::ParseFormat(format);
  s.rounding = r;
  s.max_terms = max_terms;
  s.seed = seed;
  return s;
}

}  // namespace

TEST_CASE("stagnation points of the harmonic series and of ones match the published ones",
          "[fast][study]") {
  struct Case {
    Series series;
    const char* format;
    std::uint64_t term;
    double value;
  };
  const Case cases[] = {{Series::kHarmonic, "fp16", 513, 7.0859375},
                        {Series::kHarmonic, "bf16", 65, 5.0625},
                        {Series::kOnes, "fp16", 2049, 2048},
                        {Series::kOnes, "bf16", 257, 256}};
  for (const Case& c : cases) {
    const auto r = RunStagnation(Spec(c.series, c.format, Rounding::kNearestEven, 1 << 22));
    std::cout << "  " << (c.series == Series::kHarmonic ? "harmonic" : "ones") << " " << c.format
              << " rne: term " << r.term << " value " << r.value << " exact "
              << static_cast<double>(r.exact_partial_sum) << "\n";
    INFO("series " << (c.series == Series::kHarmonic ? "harmonic" : "ones") << ", format "
                   << c.format << ", rne, max_terms 2^22");
    CHECK(r.stagnated);
    CHECK(r.term == c.term);
    CHECK(r.value == c.value);
  }
  // The exact partial sums beside them: H_513 and H_65 (to 1e-12), and k for ones.
  const auto h16 = RunStagnation(Spec(Series::kHarmonic, "fp16", Rounding::kNearestEven, 1 << 22));
  double h513 = 0;
  for (int k = 513; k >= 1; --k) h513 += 1.0 / k;
  CHECK(std::fabs(static_cast<double>(h16.exact_partial_sum) - h513) < 1e-12);
  const auto ones = RunStagnation(Spec(Series::kOnes, "bf16", Rounding::kNearestEven, 1 << 22));
  CHECK(static_cast<double>(ones.exact_partial_sum) == 257);
}

TEST_CASE("fp32 harmonic stagnation and the max-terms cut-off", "[fast][study]") {
  // fp32: 1/2097152 = 2^-21 is exactly half an ulp of the sum in [8, 16) and ties to even.
  const auto r = RunStagnation(Spec(Series::kHarmonic, "fp32", Rounding::kNearestEven, 1 << 22));
  std::cout << "  harmonic fp32 rne: term " << r.term << " value " << r.value << "\n";
  CHECK(r.stagnated);
  CHECK(r.term == 2097152);
  CHECK(static_cast<float>(r.value) == 15.403682708740234f);
  const auto cut = RunStagnation(Spec(Series::kHarmonic, "fp16", Rounding::kNearestEven, 100));
  CHECK_FALSE(cut.stagnated);
  CHECK(cut.term == 100);
}

TEST_CASE("stochastic rounding does not stagnate and reproduces from its seed", "[fast][study]") {
  for (const char* format : {"fp16", "bf16"}) {
    for (std::uint64_t seed : {1u, 2u}) {
      const auto a =
          RunStagnation(Spec(Series::kHarmonic, format, Rounding::kStochastic, 20000, seed));
      const auto b =
          RunStagnation(Spec(Series::kHarmonic, format, Rounding::kStochastic, 20000, seed));
      std::cout << "  harmonic " << format << " sr seed " << seed << ": after " << a.term
                << " terms " << a.value << " (exact " << static_cast<double>(a.exact_partial_sum)
                << ")\n";
      INFO("harmonic " << format << " sr seed " << seed << " max_terms 20000");
      CHECK_FALSE(a.stagnated);
      CHECK(a.term == 20000);
      CHECK(a.value == b.value);
      // Past the rne stagnation point and within 5% of H_20000 = 10.48.
      CHECK(a.value > (std::string(format) == "fp16" ? 7.0859375 : 5.0625));
      CHECK(std::fabs(a.value - static_cast<double>(a.exact_partial_sum)) <
            0.05 * static_cast<double>(a.exact_partial_sum));
    }
  }
}
