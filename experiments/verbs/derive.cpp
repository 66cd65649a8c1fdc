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
#include "registry/registry.hpp"
#include "verbs/verbs.hpp"

namespace carrier::cli {

int RunDerive(const std::vector<std::string>& argv) {
  Args args("derive", argv, {"trials", "seed"}, {}, 1);
  // The op table's entries that come with a derivation, built-in and user alike.
  const std::string op_list = registry::Join(registry::DeriveOps());
  if (args.Positional().empty()) args.Fail("missing OP (" + op_list + ")");
  const std::string op = args.Positional()[0];
  const std::uint64_t trials = args.Count("trials", 1000);
  const std::uint64_t seed = args.Count("seed", 1);
  if (trials == 0 || trials > 10000000) args.Fail("--trials must be between 1 and 10^7");
  const registry::Entry* e = registry::Find(op);
  if (e && e->user && !e->derive)
    args.Fail("user carrier '" + op +
              "' was registered without a derivation (give one with "
              "CARRIER_REGISTER_DERIVABLE); derivable: " +
              op_list);
  if (!e || !e->derive) args.Fail("unknown OP '" + op + "' (" + op_list + ")");
  return e->derive(trials, seed);
}

}  // namespace carrier::cli
