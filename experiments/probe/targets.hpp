// experiments/probe/targets.hpp: black-box sums for `carrier probe`, and the named schedules
// a recovered tree is compared with.
//
// A Target evaluates one summation of n values in one format (fp32 or fp64):
//   Masks(i, M, js)  the results on FPRev's masks x = 1, x[i] = M, x[j] = -M for each j;
//   Values(x)        the result on x (already representable in the format).
// Kinds (MakeTarget's text):
//   numpy.sum, numpy.add.reduce:strided, python.sum, torch.sum, torch.logsumexp
//                    experiments/probe/target.py under /usr/bin/python3 (CARRIER_PYTHON and
//                    CARRIER_PROBE_SCRIPT override both), one persistent process, masks sent
//                    in batches; torch.* needs `import torch` to work there;
//   LIB.so:SYMBOL    dlopen(LIB.so), SYMBOL with the C signature T f(const T*, size_t);
//   exec:COMMAND     `sh -c COMMAND` per call, the n values on its stdin one per line (hex
//                    floats, C99 %a), one number read from its stdout; a call that has not
//                    finished within timeout_seconds is killed (its process group) and is a
//                    TargetError; a failed call names its exit code or signal and the start of
//                    its stderr, on one line. The python targets' driver gets the same limit
//                    for each answer.
// Every failure (no such file or symbol, a target that exits or prints something that is not
// one number) is a TargetError with one line naming the target and the reason.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/merge_tree.hpp"

namespace carrier::probe {

// A target's text (or what it printed) as one line: control bytes escaped (\n, \xHH), cut at
// 120 characters, so an error message naming it stays one line.
std::string OneLine(const std::string& text);

// A target's reply as one number: the whole text must be one strtod number (trailing
// whitespace allowed, no NUL); anything else is a TargetError naming `who`, on one line.
double ParseNumber(const std::string& text, const std::string& who);

class TargetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Target {
 public:
  virtual ~Target() = default;
  virtual std::vector<double> Masks(std::uint64_t i, double m,
                                    const std::vector<std::uint64_t>& js) = 0;
  virtual double Values(const std::vector<double>& x) = 0;
  virtual std::string Description() const = 0;
};

// dtype: "fp32" or "fp64"; timeout_seconds: exec: targets' limit per call. Throws TargetError.
inline constexpr double kDefaultTargetTimeoutSeconds = 300;
std::unique_ptr<Target> MakeTarget(const std::string& text, const std::string& dtype,
                                   std::uint64_t n,
                                   double timeout_seconds = kDefaultTargetTimeoutSeconds);

// The named schedules whose tree over n inputs has the binary form of `t` (TreeHash,
// TreeForm::kBinary), in the order tried: seq reverse pairwise[:LEAF] blocked:B[:pairwise]
// strided:K canonical:L[:bisect] (each over powers of two), numpy, torch:2/4/8/16.
std::vector<std::string> MatchingSchedules(const MergeTree& t);
std::size_t CandidateCount(std::uint64_t n);

}  // namespace carrier::probe
