// carrier demo: one input, three carriers, four merge orders, one table.
//
// Log-sum-exp (OnlineSoftmax), Welford's variance (Chan merge) and Sum, all in fp32, over the
// same 10^6 values x_i = 100 + N(0, 1) (seed 42 unless --seed is given), through seq,
// pairwise, blocked:64 and strided:16, each compared with the certified reference of the op on
// the stored values (precision/reference: exact sum, certified lse and Welford variance). A
// build without MPFR has no certified reference and prints the results alone.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <span>
#include <sstream>
#include <vector>

#include "cli/args.hpp"
#include "cli/number_format.hpp"
#include "core/carriers/online_softmax.hpp"
#include "core/carriers/sum.hpp"
#include "core/carriers/welford.hpp"
#include "core/replay_oracle.hpp"
#include "inputs/generators.hpp"
#include "verbs/verbs.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
#include "precision/reference/reference.hpp"
#endif

namespace carrier::cli {

namespace {

struct DemoRow {
  std::string op, schedule, result;
  double rel_diff;
  std::uint64_t depth;
};

double RelDiff(float got, double ref) {
  return std::fabs(static_cast<double>(got) - ref) / std::fabs(ref);
}

// The certified references (lse, population variance, sum) of the stored values; NaN without
// MPFR.
struct References {
  double lse = NAN, var = NAN, sum = NAN;
};
References Certified([[maybe_unused]] const std::vector<float>& x) {
  References r;
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  const std::vector<double> d(x.begin(), x.end());
  r.lse = reference::ReferenceLse(d).as_double.at(0);
  r.var = reference::ReferenceWelford(d).as_double.at(1);
  r.sum = reference::ReferenceSum(d).as_double.at(0);
#endif
  return r;
}

}  // namespace

int RunDemo(const std::vector<std::string>& argv) {
  Args args("demo", argv, {"n", "seed"});
  const std::uint64_t n = args.Count("n", 1000000);
  const std::uint64_t seed = args.Count("seed", 42);
  if (n < 2) args.Fail("--n must be at least 2 (the variance needs two values)");
  if (n > (std::uint64_t{1} << 28)) args.Fail("--n must be at most 2^28 for the demo");

  const auto normal = inputs::Generate(inputs::ParseGenerator("normal"), n, seed);
  std::vector<float> x(n);
  for (std::uint64_t i = 0; i < n; ++i) x[i] = static_cast<float>(100.0 + normal[i]);
  const std::span<const float> xs(x);

  const References ref = Certified(x);
  const double ref_lse = ref.lse, ref_var = ref.var, ref_sum = ref.sum;
  std::vector<DemoRow> rows;
  for (const char* text : {"seq", "pairwise", "blocked:64", "strided:16"}) {
    const MergeTree tree = BuildTree(text, n);
    const std::uint64_t depth = ComputeStats(tree).max_leaf_depth;
    const float lse =
        OnlineSoftmax<float>::Finalize(ReplayOracle<OnlineSoftmax<float>>(tree, xs)).lse;
    const auto var =
        Welford<float>::Finalize(ReplayOracle<Welford<float>>(tree, xs)).var_population;
    const float sum = Sum<float>::Finalize(ReplayOracle<Sum<float>>(tree, xs));
    rows.push_back({"lse", text, Shortest(lse), RelDiff(lse, ref_lse), depth});
    rows.push_back({"variance", text, Shortest(var), RelDiff(var, ref_var), depth});
    rows.push_back({"sum", text, Shortest(sum), RelDiff(sum, ref_sum), depth});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const DemoRow& a, const DemoRow& b) { return a.op < b.op; });

  std::cout << "carrier demo: n = " << n << " fp32 values x = 100 + N(0,1), seed " << seed
            << "; compute type fp32, libm exp; reference: "
            << (std::isnan(ref_sum) ? "none (a build without MPFR)"
                                    : "certified (precision/reference)")
            << "\n\n";
  std::cout << std::left << std::setw(10) << "op" << std::setw(13) << "schedule" << std::setw(16)
            << "result (fp32)" << std::setw(26) << "rel. error vs reference"
            << "  max leaf depth\n";
  std::cout << std::string(81, '-') << "\n";
  for (const DemoRow& r : rows)
    std::cout << std::left << std::setw(10) << r.op << std::setw(13) << r.schedule << std::setw(16)
              << r.result << std::setw(26)
              << (std::isnan(r.rel_diff) ? std::string("n/a") : Sig(r.rel_diff)) << r.depth << "\n";
  if (!std::isnan(ref_sum))
    std::cout << "\nreference (certified): lse " << Shortest(ref_lse) << ", variance "
              << Shortest(ref_var) << ", sum " << Shortest(ref_sum) << "\n";
  return 0;
}

}  // namespace carrier::cli
