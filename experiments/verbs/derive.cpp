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
#include "registry/registry.hpp"
#include "verbs/derive_run.hpp"
#include "verbs/verbs.hpp"

namespace carrier::cli {

namespace {

using derive::RunOne;

}  // namespace

int RunDerive(const std::vector<std::string>& argv) {
  Args args("derive", argv, {"trials", "seed"}, {}, 1);
  // Built-in derivations, then the registered carriers that come with one.
  std::string op_list = "sum max lse welford affine naive-mean naive-lse";
  for (const auto& n : registry::Names())
    if (registry::Find(n)->derive) op_list += " " + n;
  if (args.Positional().empty()) args.Fail("missing OP (" + op_list + ")");
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
  if (const registry::Entry* e = registry::Find(op)) {
    if (!e->derive)
      args.Fail("user carrier '" + op + "' was registered without a derivation (give one with "
                "CARRIER_REGISTER_DERIVABLE); derivable: " + op_list);
    return e->derive(trials, seed);
  }
  args.Fail("unknown OP '" + op + "' (" + op_list + ")");
}

}  // namespace carrier::cli
