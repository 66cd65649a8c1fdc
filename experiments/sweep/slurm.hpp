// experiments/sweep/slurm.hpp: a sweep as a Slurm job array (`carrier sweep CONFIG -o DIR
// --slurm N [--partition P] [--time T] [--submit]`).
//
// WriteSlurmScript writes DIR/submit.sbatch, an sbatch script for a job array of N tasks:
// task K (SLURM_ARRAY_TASK_ID, 1..N) runs `carrier sweep CONFIG -o DIR/shard-K --shard K/N
// --quiet` with --jobs the task's CPUs (SLURM_CPUS_PER_TASK, default 1); task 1 first submits
// the merge job, dependent on the whole array succeeding (afterok on SLURM_ARRAY_JOB_ID), which
// runs `carrier merge DIR/shard-1 ... DIR/shard-N -o DIR`. So one `sbatch DIR/submit.sbatch`
// (what --submit runs) gives DIR/trials.csv and DIR/manifest.json equal, row for row, to the
// single-machine run (FORMAT.md's shard contract). Logs: DIR/slurm/shard-K.out, merge.out.
// Paths in the script are absolute (the carrier executable, CONFIG, DIR), so it runs from any
// working directory on nodes that share the file system.
// Throws SlurmError (one line) for a bad N, partition or time, or a failed sbatch.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace carrier::sweep {

class SlurmError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SlurmPlan {
  std::string carrier_exe;      // absolute path of the carrier executable
  std::string config_path;      // the config file (absolute after WriteSlurmScript), or empty with
  bool default_config = false;  // --default: the embedded default study
  std::string out_dir;
  std::uint64_t shards = 0;
  std::string partition;  // empty: the cluster's default
  std::string time;       // empty: the partition's default; else Slurm's [D-]HH:MM[:SS] or MM
  std::string job_name;   // carrier-<config name>
};

// Writes out_dir/submit.sbatch (creating out_dir) and returns its path.
std::string WriteSlurmScript(SlurmPlan plan);

// Runs `sbatch --parsable SCRIPT` and returns the job id it printed.
std::string SubmitSlurmScript(const std::string& script_path);

}  // namespace carrier::sweep
