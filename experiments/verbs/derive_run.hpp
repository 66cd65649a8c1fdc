// experiments/verbs/derive_run.hpp: the body of `carrier derive` for one derivation D
// (core/derive.hpp), shared by the built-in ops (experiments/verbs/derive.cpp) and registered
// user carriers (experiments/registry/). RunOne<D>(trials, seed) prints the fold check, the
// inverse check and the derived-vs-hand-written agreement; exit 0 when it agrees, 1 otherwise.
#pragma once

#include <cstdint>
#include <iomanip>
#include <iostream>
#include <string>

#include "core/derive.hpp"

namespace carrier::cli::derive {

// Agreement threshold: the folds and the derived combine round differently, by a few ulps per
// list element (lists have at most ~30 elements); a non-homomorphism differs at O(1).
inline constexpr long double kDeriveTolerance = 0x1p-40L;

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

}  // namespace carrier::cli::derive
