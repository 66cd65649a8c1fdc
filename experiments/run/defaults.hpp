// experiments/run/defaults.hpp: what a trial runs with when the user leaves a parameter out,
// shared by `carrier eval` and the Python module (carrier.eval).
//
// Contract of ApplyDefaults(spec): an empty spec.acc, spec.exp or spec.schedule means "not
// given" and is filled with what the chosen backend realises exactly:
//   schedule  replay: seq. simd, omp, cuda: empty, i.e. the kernel's native schedule
//             (backends.hpp), which RunTrial reports as TrialOutcome::schedule_used.
//   exp       lse, softmax, attention on simd, omp, cuda computing in fp32 or fp64 (acc, after
//             its own default): portable (the only exp whose vector and device bits equal
//             the scalar replay's); otherwise libm.
//   acc       fp16 or bf16 storage on simd, omp, cuda: fp32 (the compute type those kernels
//             have for 16-bit storage); otherwise the storage dtype itself. With a precision
//             policy (spec.precision) acc is the policy's and stays empty here; the exp
//             default reads the policy's acc (acc>combine where combine is wider).
// It returns one short note per default that is not the plain one (a native schedule, exp
// portable, acc fp32), for the output to say what was chosen. A value the user gave is never
// changed: a combination the backend lacks stays the backend's one-line error, which names
// what it does realise.
#pragma once

#include <string>
#include <vector>

#include "run/trial.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

namespace carrier::run {

std::vector<std::string> ApplyDefaults(TrialSpec& spec);

}  // namespace carrier::run

#endif  // CARRIER_HAVE_MPFR
