// A property over random merge trees: no trial ever measures an error above a bound that
// precision/bounds.hpp calls rigorous (a proof in the standard model: a ratio above 1 is a
// bug in the bound, the replay or the reference). The trials are a sweep (one trial runner,
// run::RunTrial, serves eval and sweep alike, with the same outcome fields), over every op
// with an a-priori bound, low and high precisions, every deterministic rounding family and
// stochastic rounding, random:SEED trees beside the structured orders, and well and badly
// conditioned inputs. First-order bounds are reported (their largest ratio per op), not
// asserted. Rows that overflowed the compute format (a non-finite or saturated result, or a
// reference beyond its largest finite value) are outside the standard model the proofs assume:
// they are counted and printed, not asserted (the runner still labels their bound rigorous;
// see the report of issue 18). On failure the row (every parameter and the seed) is printed: rerun
// it with carrier eval.
#include <catch2/catch.hpp>
#include <cmath>

#include "sweep_test_util.hpp"

using namespace sweep_test;

TEST_CASE("eval: no measured error exceeds a rigorous bound, over random trees",
          "[fast][sweep][bounds]") {
  const std::string cfg = Write("bounds.toml", R"([sweep]
name = "bounds"
seed = 11
[grid]
op       = ["sum", "kahan", "dot", "lse", "welford", "norm2", "softmax"]
dtype    = ["fp8e5m2", "bf16", "fp16"]
round    = ["rne", "rz", "sr"]
schedule = ["random:{1..4}", "pairwise", "blocked:8"]
n        = [5, 64, 300]
input    = ["normal", "ill:1e6"]
)");
  const std::string out = Tmp() + "/bounds";
  Run r = Carrier("sweep " + cfg + " --jobs 2 --quiet -o " + out);
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::istringstream in(Slurp(out + "/trials.csv"));
  std::string line;
  std::getline(in, line);
  const auto cols = Split(line);
  auto col = [&](const std::string& name) {
    const auto it = std::find(cols.begin(), cols.end(), name);
    REQUIRE(it != cols.end());
    return static_cast<std::size_t>(it - cols.begin());
  };
  const std::size_t c_op = col("op"), c_status = col("status"), c_kind = col("bound_kind"),
                    c_ratio = col("error_to_bound"), c_dtype = col("dtype"),
                    c_result = col("result"), c_ref = col("reference");
  const std::map<std::string, double> max_finite = {
      {"fp8e5m2", 57344.0}, {"bf16", 3.3895313892515355e38}, {"fp16", 65504.0}};
  int overflow_rows = 0;
  double overflow_worst = 0;
  std::map<std::string, double> worst_rigorous, worst_first_order;
  std::map<std::string, int> rigorous_rows;
  int rows = 0, ok = 0, above = 0;
  while (std::getline(in, line)) {
    const auto f = Split(line);
    ++rows;
    if (f[c_status] != "ok") continue;
    ++ok;
    if (f[c_ratio].empty()) continue;
    const double ratio = std::stod(f[c_ratio]);
    const bool rigorous = f[c_kind].find("rigorous") != std::string::npos;
    if (rigorous && !f[c_result].empty()) {
      const double res = std::stod(f[c_result]), ref = std::stod(f[c_ref]);
      const double mx = max_finite.at(f[c_dtype]);
      if (!std::isfinite(res) || std::fabs(res) >= mx || std::fabs(ref) > mx) {
        ++overflow_rows;
        overflow_worst = std::max(overflow_worst, ratio);
        continue;
      }
    }
    auto& worst = (rigorous ? worst_rigorous : worst_first_order)[f[c_op]];
    worst = std::max(worst, ratio);
    if (rigorous) {
      ++rigorous_rows[f[c_op]];
      if (!(ratio <= 1.0) && ++above <= 5) {
        INFO("measured error above its rigorous bound (header: "
             << Slurp(out + "/trials.csv").substr(0, 400) << "...)\nrow: " << line);
        CHECK(ratio <= 1.0);
      }
    }
  }
  std::cout << "  " << rows << " trials, " << ok << " ok\n";
  for (const auto& [op, w] : worst_rigorous)
    std::cout << "  " << op << ": " << rigorous_rows[op] << " rows with a rigorous bound, largest "
              << "error/bound " << w << "\n";
  for (const auto& [op, w] : worst_first_order)
    std::cout << "  " << op << ": largest error/first-order bound " << w
              << " (reported, not asserted)\n";
  std::cout << "  " << overflow_rows
            << " rows overflowed the compute format yet carry a 'rigorous' "
            << "bound (largest ratio " << overflow_worst << "): outside the standard model, not "
            << "asserted\n";
  CHECK(above == 0);
  CHECK(!worst_rigorous.empty());  // the property was exercised
  Cleanup();
}
