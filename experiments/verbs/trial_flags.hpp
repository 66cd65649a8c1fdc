// experiments/verbs/trial_flags.hpp: the trial flags that `carrier eval` and `carrier eval --op
// matmul` share, read into a TrialSpec in one place: --precision (or its --dtype/--acc/--round
// shorthand), --exp, --backend, --schedule, the defaults a backend fills in (run/defaults.hpp),
// --sr-seed and --engine; and the spec resolved into the trial plan. Bad values are one line and
// exit 2 (Args::Fail).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "precision/precision_policy.hpp"
#include "registry/registry.hpp"
#include "run/defaults.hpp"
#include "run/trial.hpp"

namespace carrier::cli {

// Fills spec's precision, exp, backend, schedule, sr_seed and engine from args (spec.op set by
// the caller); returns the defaults applied, in words, for the verb to print.
inline std::vector<std::string> ReadTrialFlags(const Args& args, run::TrialSpec& spec,
                                               std::uint64_t seed) {
  if (const auto pol = args.Get("precision")) {
    if (args.Get("dtype") || args.Get("acc") || args.Get("round"))
      args.Fail("--precision replaces --dtype, --acc and --round: give one or the other");
    try {
      spec.precision = ParsePrecisionPolicy(*pol);
    } catch (const std::invalid_argument& e) {
      args.Fail(std::string("--precision: ") + e.what());
    }
  } else {
    spec.dtype = args.Require("dtype");
    spec.acc = args.Get("acc").value_or("");
    spec.round = args.Get("round").value_or("rne");
  }
  spec.exp = args.Choice("exp", registry::ExpNames(), "");
  spec.backend = args.Choice("backend", registry::BackendNames(), "replay");
  spec.schedule = args.Get("schedule").value_or("");
  if (args.Get("schedule") && spec.schedule.empty()) args.Fail("--schedule needs a value");
  // Left-out acc, exp and schedule: what the backend realises exactly (run/defaults.hpp).
  std::vector<std::string> defaults = run::ApplyDefaults(spec);
  spec.sr_seed = args.Count("sr-seed", seed);
  spec.engine = args.Choice("engine", run::Engines(), "fast");
  return defaults;
}

// The trial plan of spec (run::ResolveTrial), or one line and exit 2.
inline run::ResolvedTrial ResolveOrFail(const Args& args, const run::TrialSpec& spec) {
  try {
    return run::ResolveTrial(spec);
  } catch (const run::SpecError& e) {
    args.Fail(e.what());
  }
}

}  // namespace carrier::cli
