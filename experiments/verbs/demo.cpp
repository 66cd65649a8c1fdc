// carrier demo: one input, three carriers, four merge orders, one table.
//
// Log-sum-exp (OnlineSoftmax), Welford's variance (Chan merge) and Sum, all in fp32, over the
// same 10^6 values x_i = 100 + N(0, 1) (seed 42 unless --seed is given), through seq,
// pairwise, blocked:64 and strided:16, each compared with a long double computation (64-bit
// significand: its own error is about 2^-64 n, far below fp32's differences).
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
#include "core/replay.hpp"
#include "inputs/generators.hpp"
#include "verbs/verbs.hpp"

namespace carrier::cli {

namespace {

struct Row {
  std::string op, schedule, result;
  double rel_diff;
  std::uint64_t depth;
};

long double RefSum(const std::vector<float>& x) {
  long double s = 0;
  for (float v : x) s += v;
  return s;
}

long double RefLse(const std::vector<float>& x) {
  long double m = -INFINITY;
  for (float v : x) m = std::max<long double>(m, v);
  long double d = 0;
  for (float v : x) d += std::exp(static_cast<long double>(v) - m);
  return m + std::log(d);
}

long double RefVariance(const std::vector<float>& x) {
  long double mean = RefSum(x) / x.size(), m2 = 0;
  for (float v : x) m2 += (v - mean) * (v - mean);
  return m2 / x.size();
}

double RelDiff(float got, long double ref) {
  return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / std::fabs(ref));
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

  const long double ref_lse = RefLse(x), ref_var = RefVariance(x), ref_sum = RefSum(x);
  std::vector<Row> rows;
  for (const char* text : {"seq", "pairwise", "blocked:64", "strided:16"}) {
    const MergeTree tree = BuildTree(text, n);
    const std::uint64_t depth = ComputeStats(tree).max_leaf_depth;
    const float lse = OnlineSoftmax<float>::Finalize(Replay<OnlineSoftmax<float>>(tree, xs)).lse;
    const auto var = Welford<float>::Finalize(Replay<Welford<float>>(tree, xs)).var_population;
    const float sum = Sum<float>::Finalize(Replay<Sum<float>>(tree, xs));
    rows.push_back({"lse", text, Shortest(lse), RelDiff(lse, ref_lse), depth});
    rows.push_back({"variance", text, Shortest(var), RelDiff(var, ref_var), depth});
    rows.push_back({"sum", text, Shortest(sum), RelDiff(sum, ref_sum), depth});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.op < b.op; });

  std::cout << "carrier demo: n = " << n << " fp32 values x = 100 + N(0,1), seed " << seed
            << "; compute type fp32, libm exp; reference: long double\n\n";
  std::cout << std::left << std::setw(10) << "op" << std::setw(13) << "schedule"
            << std::setw(16) << "result (fp32)" << std::setw(26) << "rel. diff vs long double"
            << "  max leaf depth\n";
  std::cout << std::string(81, '-') << "\n";
  for (const Row& r : rows)
    std::cout << std::left << std::setw(10) << r.op << std::setw(13) << r.schedule
              << std::setw(16) << r.result << std::setw(26) << Sig(r.rel_diff)
              << r.depth << "\n";
  std::cout << "\nreference (long double): lse " << Shortest(static_cast<double>(ref_lse))
            << ", variance " << Shortest(static_cast<double>(ref_var)) << ", sum "
            << Shortest(static_cast<double>(ref_sum)) << "\n";
  return 0;
}

}  // namespace carrier::cli
