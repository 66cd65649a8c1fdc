// carrier laws: is this carrier's combine what its declarations say? One table of verdicts,
// each with the figures behind it, on random and adversarial inputs.
//
//   identity (bitwise)            core/laws.hpp CheckIdentity, working format
//   associative (exact)           core/derivations/law_probes.hpp AssociativityGap in MPFR at
//                                 64, 128, 256, 512 bits; verdict from the slope of the gap
//   associativity defect          AssociativityUlps in the working format (--dtype): max,
//                                 median and fraction nonzero, in ulps of the result
//   homomorphism (exact)          HomomorphismGap in MPFR at 256 bits on random splits
//   homomorphism (working)        CheckHomomorphism: bitwise agreement and relative difference
//   commutative (exact)           CommutativityGap in MPFR at 256 bits, ties included
//   bitwise commutative           CheckBitwiseCommutative, working format (GPU xor butterfly)
//   push == combine(lift)         CheckPushIsCombineLift, working format
//   pad input                     CheckPadInput, working format (when one is declared)
// Each measured property is compared with the carrier's declaration (kCommutative, ...); every
// carrier declares that it is a monoid (identity, associative) whose fold is a homomorphism.
// Exit 0 when every declaration matches, 1 when one does not (the counterexamples naive-mean
// and naive-lse must), with the evidence printed; 2 for bad input. The machinery lives in
// verbs/laws_run.hpp; OP is looked up in the op table (experiments/registry/registry.hpp),
// built-ins and user carriers alike: the entries with a laws hook.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <deque>
#include <iomanip>
#include <iostream>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "verbs/verbs.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include "precision/emulated_oracle.hpp"
#include "precision/format.hpp"
#include "registry/registry.hpp"
#include "verbs/laws_run.hpp"

namespace carrier::cli {

int RunLaws(const std::vector<std::string>& argv) {
  Args args("laws", argv, {"dtype", "trials", "seed"}, {}, 1);
  const std::string op_list = registry::Join(registry::LawsOps());
  if (args.Positional().empty()) args.Fail("missing OP (" + op_list + ")");
  laws::Options o;
  o.op = args.Positional()[0];
  o.dtype = args.Get("dtype").value_or("fp32");
  o.trials = args.Count("trials", 300);
  o.seed = args.Count("seed", 1);
  if (o.trials == 0 || o.trials > 100000) args.Fail("--trials must be between 1 and 10^5");
  try {
    o.format = ParseFormat(o.dtype);
    if (o.dtype != "fp64") EmulationScope probe(o.format, Rounding::kNearestEven);
  } catch (const std::exception& e) {
    args.Fail("--dtype '" + o.dtype + "': " + e.what());
  }
  const registry::Entry* e = registry::Find(o.op);
  if (!e || !e->laws) args.Fail("unknown OP '" + o.op + "' (" + op_list + ")");
  return e->laws(o);
}

}  // namespace carrier::cli

#else  // no MPFR

namespace carrier::cli {
int RunLaws(const std::vector<std::string>& argv) {
  Args args("laws", argv, {"dtype", "trials", "seed"}, {}, 1);
  args.Fail("this build has no MPFR, which the exact-arithmetic laws need");
}
}  // namespace carrier::cli

#endif
