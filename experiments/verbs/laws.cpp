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
// verbs/laws_run.hpp; an OP that is not built in is looked up in the registry of user carriers
// (experiments/registry/registry.hpp).
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

#include "core/carriers/all.hpp"
#include "core/derivations/counterexamples.hpp"
#include "precision/emulated.hpp"
#include "precision/format.hpp"
#include "registry/registry.hpp"
#include "verbs/laws_run.hpp"

namespace carrier::cli {

namespace {

using namespace laws;

const std::string kOpList =
    "sum kahan max argmax lse welford norm2 dot affine attention naive-mean naive-lse";

template <class T>
using Lse = OnlineSoftmax<T, LibmExp>;
template <class T>
using Attention = FlashRow<T, 2>;

}  // namespace

int RunLaws(const std::vector<std::string>& argv) {
  Args args("laws", argv, {"dtype", "trials", "seed"}, {}, 1);
  const std::string op_list = kOpList + registry::NamesSuffix();
  if (args.Positional().empty()) args.Fail("missing OP (" + op_list + ")");
  Options o;
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
  OpTraits plain, neg_inf{true, false}, affine{false, true};
  const std::string& op = o.op;
  if (op == "sum") return RunLawsFor<Sum>(o, plain);
  if (op == "kahan") return RunLawsFor<Compensated>(o, plain);
  if (op == "max") return RunLawsFor<Max>(o, neg_inf);
  if (op == "argmax") return RunLawsFor<ArgMax>(o, neg_inf);
  if (op == "lse") return RunLawsFor<Lse>(o, neg_inf);
  if (op == "welford") return RunLawsFor<Welford>(o, plain);
  if (op == "norm2") return RunLawsFor<ScaledNorm2>(o, plain);
  if (op == "dot") return RunLawsFor<Dot>(o, plain);
  if (op == "affine") return RunLawsFor<Affine>(o, affine);
  if (op == "attention") return RunLawsFor<Attention>(o, neg_inf);
  if (op == "naive-mean") return RunLawsFor<NaiveMean>(o, plain);
  if (op == "naive-lse") return RunLawsFor<NaiveLse>(o, neg_inf);
  if (const registry::Entry* e = registry::Find(op)) return e->laws(o);
  args.Fail("unknown OP '" + op + "' (" + op_list + ")");
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
