// experiments/run/defaults.cpp: see defaults.hpp.
#include "run/defaults.hpp"

#include "precision/block_scaled.hpp"
#include "registry/registry.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

namespace carrier::run {

std::vector<std::string> ApplyDefaults(TrialSpec& spec) {
  std::vector<std::string> notes;
  const bool kernel = spec.backend != "replay";  // simd, omp, cuda (registry::BackendNames)
  if (spec.schedule.empty()) {
    if (kernel) {
      notes.push_back("schedule: " + spec.backend + "'s native one (the schedule line)");
    } else {
      spec.schedule = "seq";
    }
  }
  // A precision policy names its own formats (ResolveTrial); its acc decides the exp below as
  // --acc does (a combine wider than acc: two levels, as --acc INNER>OUTER).
  const PrecisionPolicy* policy = spec.precision ? &*spec.precision : nullptr;
  if (spec.acc.empty() && !policy) {
    if (LooksBlockScaled(spec.dtype)) {
      spec.acc = "fp32";
      notes.push_back("acc fp32: " + spec.dtype +
                      " is block-scaled storage, with no arithmetic of its own");
    } else if (kernel && (spec.dtype == "fp16" || spec.dtype == "bf16")) {
      spec.acc = "fp32";
      notes.push_back("acc fp32: " + spec.backend + "'s compute type for " + spec.dtype +
                      " storage");
    } else {
      spec.acc = spec.dtype;
    }
  }
  if (spec.exp.empty()) {
    const registry::Entry* e = registry::Find(spec.op);  // the op table: does it honour --exp?
    const bool uses_exp = e != nullptr && e->uses_exp;
    const std::string acc = !policy ? spec.acc
                            : policy->combine.format == policy->acc.format
                                ? policy->acc.format.name
                                : policy->acc.format.name + ">" + policy->combine.format.name;
    if (kernel && uses_exp && (acc == "fp32" || acc == "fp64")) {
      spec.exp = "portable";
      notes.push_back("exp portable: the exp " + spec.backend + " replays bit for bit");
    } else {
      spec.exp = "libm";
    }
  }
  return notes;
}

}  // namespace carrier::run

#endif  // CARRIER_HAVE_MPFR
