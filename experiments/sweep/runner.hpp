// experiments/sweep/runner.hpp: runs a parsed sweep config into an output folder (FORMAT.md).
//
// Execution. The trials to run (the shard's, minus those already in trials.csv on --resume)
// are grouped by the input they read and the reference they need (run::ReferenceKey plus
// dtype, input, n, head_dim, trial): each group's input is generated and its certified
// reference computed once, by the first trial of the group that reaches it, and shared by the
// rest; groups are dispatched in order to `jobs` std::threads, so only about `jobs` inputs are
// held at a time. Each finished trial is one row written with a single write(2) on an
// O_APPEND file descriptor: rows appear in completion order, and a run stopped at any moment
// (Ctrl-C, kill -9) leaves only complete rows, plus at most one partial line that --resume
// truncates. Every number in a row is a function of the config alone (the inputs of
// (seed, input, n, head_dim, trial), the stochastic rounding seed of the trial's cell), so the
// rows do not depend on jobs, shards, resumes or the order of completion; only the timing
// columns (seconds, reference_seconds) do.
#pragma once

#include <cstdint>
#include <string>

#include "sweep/config.hpp"

namespace carrier::sweep {

struct SweepOptions {
  std::string out_dir;  // empty: sweep-<name>
  unsigned jobs = 1;
  bool resume = false;
  bool dry_run = false;
  bool quiet = false;                      // no progress lines
  std::string engine = "fast";             // run::TrialSpec::engine of every trial
  std::uint64_t shard_k = 0, shard_n = 0;  // 0/0: the whole config
};

// Returns the exit code: 0 (failed trials are rows, not an exit code), or 128 + the signal when
// SIGINT/SIGTERM stopped the run (the rows in flight are written, the manifest updated, and
// the --resume command printed on stderr). Throws cli::UsageError (one line, exit 2) for an
// output folder that cannot be used (exists without --resume, another config, locked by
// another sweep or merge, ...) and for a file that cannot be written (disk full, read-only
// folder: the line names the file, the reason and the --resume command; trials.csv keeps its
// whole rows). Every file is written through io/atomic_file.hpp.
int RunSweep(const Config& config, const SweepOptions& options);

// Prints the summary table of a trials.csv to stdout: for each op and format (and compute
// type, rounding and backend when they vary), the worst and the best merge order by median
// relative error over the group's ok trials, with their medians and the largest
// error-to-bound ratio.
void PrintSummary(const std::string& csv_path);

}  // namespace carrier::sweep
