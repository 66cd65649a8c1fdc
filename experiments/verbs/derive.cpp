// carrier derive: the Third Homomorphism Theorem as a construction (core/derive.hpp).
//
// For OP it checks that the leftward and rightward folds agree on random lists (else: not a
// list homomorphism, with the list, both folds and both answers), then derives
// Combine(a, b) = h(h°(a) ++ h°(b)) from the worked weak right inverse (core/derivations/) and
// prints its largest relative difference from the hand-written combine. Exit 0 when the
// derivation agrees, 1 when OP is rejected (the counterexamples must be), 2 for bad input.
#include <cmath>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "core/derivations/all.hpp"
#include "verbs/verbs.hpp"

namespace carrier::cli {

namespace {

// Agreement threshold: the folds and the derived combine round differently, by a few ulps per
// list element (lists have at most ~30 elements); a non-homomorphism differs at O(1).
constexpr long double kDeriveTolerance = 0x1p-40L;

template <class D>
int RunOne(std::uint64_t trials, std::uint64_t seed) {
  const DeriveReport r = Derive<D>(trials, seed, kDeriveTolerance);
  const long double u = 0x1p-53L;
  std::cout << "carrier derive " << r.name << " (fp64, " << r.trials << " trials, seed " << seed
            << ")\n";
  std::cout << std::setprecision(3);
  std::cout << "  leftward fold == rightward fold   " << (r.folds_agree ? "yes" : "NO")
            << "   max relative difference " << static_cast<double>(r.max_fold_diff) << "\n";
  if (!r.folds_agree) {
    std::cout << r.counterexample << "\n";
    std::cout << "verdict: REJECTED (" << r.name << " is not a list homomorphism; no combine exists"
              << " for this state)\n";
    return 1;
  }
  std::cout << "  h(h°(s)) == s                      max relative difference "
            << static_cast<double>(r.max_inverse_diff)
            << "  (longest h°(s): " << r.max_inverse_length << " elements)\n";
  std::cout << "  h(h°(a) ++ h°(b)) vs Combine(a,b)  max relative difference "
            << static_cast<double>(r.max_combine_diff) << " = "
            << static_cast<double>(r.max_combine_diff / u) << " u (u = 2^-53)\n";
  const bool ok = r.Holds(kDeriveTolerance);
  if (!ok) std::cout << r.counterexample << "\n";
  std::cout << "verdict: " << (ok ? "AGREES" : "DISAGREES") << " (threshold 2^-40)\n";
  return ok ? 0 : 1;
}

}  // namespace

int RunDerive(const std::vector<std::string>& argv) {
  Args args("derive", argv, {"trials", "seed"}, {}, 1);
  if (args.Positional().empty())
    args.Fail("missing OP (sum max lse welford affine naive-mean naive-lse)");
  const std::string op = args.Positional()[0];
  const std::uint64_t trials = args.Count("trials", 1000);
  const std::uint64_t seed = args.Count("seed", 1);
  if (trials == 0 || trials > 10000000) args.Fail("--trials must be between 1 and 10^7");
  if (op == "sum") return RunOne<SumDerivation>(trials, seed);
  if (op == "max") return RunOne<MaxDerivation>(trials, seed);
  if (op == "lse") return RunOne<OnlineSoftmaxDerivation>(trials, seed);
  if (op == "welford") return RunOne<WelfordDerivation>(trials, seed);
  if (op == "affine") return RunOne<AffineDerivation>(trials, seed);
  if (op == "naive-mean") return RunOne<NaiveMeanDerivation>(trials, seed);
  if (op == "naive-lse") return RunOne<NaiveLseDerivation>(trials, seed);
  args.Fail("unknown OP '" + op + "' (sum max lse welford affine naive-mean naive-lse)");
}

}  // namespace carrier::cli
