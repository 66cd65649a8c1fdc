// experiments/probe/targets.hpp: black-box sums for `carrier probe`, and the named schedules
// a recovered tree is compared with.
//
// A Target evaluates one summation of n values in one format (fp32 or fp64):
//   Evaluate(batch)  the results on a batch of sparse inputs (core/fprev.hpp, MaskedInput:
//                    FPRev's masks and the packed checks that prove a predicted tree);
//   Values(x)        the result on x (already representable in the format).
// Kinds (MakeTarget's text):
//   numpy.sum, numpy.add.reduce:strided, python.sum, torch.sum, torch.logsumexp, and the
//   dots numpy.dot, numpy.matmul, torch.matmul (n = 2K: a then b)
//                    experiments/probe/target.py under /usr/bin/python3 (CARRIER_PYTHON and
//                    CARRIER_PROBE_SCRIPT override both), one persistent process; a batch of
//                    sparse inputs is one round trip (at most kMaxBatch inputs per line set);
//                    torch.* needs `import torch` to work there;
//   LIB.so:SYMBOL    dlopen(LIB.so), SYMBOL with the C signature T f(const T*, size_t), or
//                    for TargetOp::kDot T f(const T* a, const T* b, size_t k) over the n = 2K
//                    values a_0..a_{K-1}, b_0..b_{K-1};
//   exec:COMMAND     `sh -c COMMAND` once per batch of K vectors (K * n <= 2^20 values, at
//                    most kMaxBatch vectors): its stdin holds the K vectors back to back, n
//                    lines each, one C99 hex float (%a) per line; the environment names
//                    CARRIER_PROBE_N=n and CARRIER_PROBE_VECTORS=K; it prints K numbers
//                    (decimal or hex, separated by white space) and exits 0. A process that
//                    has not finished within timeout_seconds is killed (its process group)
//                    and is a TargetError; a failed process names its exit code or signal and
//                    the start of its stderr, on one line. The python targets' driver gets the
//                    same limit for each answer.
// Every failure (no such file or symbol, a target that exits or prints something that is not
// one number) is a TargetError with one line naming the target and the reason.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/fprev.hpp"
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
  virtual std::vector<double> Evaluate(const std::vector<MaskedInput>& batch) = 0;
  virtual double Values(const std::vector<double>& x) = 0;
  virtual std::string Description() const = 0;
};

// The most inputs one round trip to a target carries.
inline constexpr std::size_t kMaxBatch = 4096;

// What a LIB.so:SYMBOL target computes (the other kinds say it by name or protocol).
enum class TargetOp { kSum, kDot };

// dtype: "fp32" or "fp64" ("bf16" for torch.matmul and exec:); timeout_seconds: exec: targets'
// limit per call. Throws TargetError.
inline constexpr double kDefaultTargetTimeoutSeconds = 300;
std::unique_ptr<Target> MakeTarget(const std::string& text, const std::string& dtype,
                                   std::uint64_t n,
                                   double timeout_seconds = kDefaultTargetTimeoutSeconds,
                                   TargetOp op = TargetOp::kSum);

// The named schedules whose tree over n inputs has the binary form of `t` (TreeHash,
// TreeForm::kBinary), in the order tried: seq reverse pairwise[:LEAF] blocked:B[:pairwise]
// strided:K canonical:L[:bisect] (each over powers of two), numpy, torch:2/4/8/16.
std::vector<std::string> MatchingSchedules(const MergeTree& t);
std::size_t CandidateCount(std::uint64_t n);
std::vector<std::string> CandidateSchedules(std::uint64_t n);  // the same list, in that order

}  // namespace carrier::probe
