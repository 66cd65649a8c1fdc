// experiments/sweep/slurm.cpp: see slurm.hpp.
#include "sweep/slurm.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace carrier::sweep {

namespace fs = std::filesystem;

namespace {

// Single-quoted for bash: the script never expands a path.
std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

void CheckPlan(const SlurmPlan& p) {
  if (p.shards < 1 || p.shards > 100000)
    throw SlurmError("--slurm N needs 1 <= N <= 100000 (the array's tasks), got " +
                     std::to_string(p.shards));
  if (!p.partition.empty() && !std::regex_match(p.partition, std::regex("[A-Za-z0-9_.,-]+")))
    throw SlurmError("--partition '" + p.partition +
                     "' is not a partition name (letters, digits, _ . , -)");
  // sbatch --time: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS.
  static const std::regex time_re(
      "([0-9]+)|([0-9]+:[0-9]{2})|([0-9]+:[0-9]{2}:[0-9]{2})|([0-9]+-[0-9]+(:[0-9]{2}(:[0-9]{2})?)?"
      ")");
  if (!p.time.empty() && !std::regex_match(p.time, time_re))
    throw SlurmError("--time '" + p.time + "' is not a Slurm time (MM, HH:MM:SS or D-HH:MM:SS)");
}

}  // namespace

std::string WriteSlurmScript(SlurmPlan p) {
  CheckPlan(p);
  std::error_code ec;
  fs::create_directories(p.out_dir, ec);
  if (ec) throw SlurmError("cannot create '" + p.out_dir + "': " + ec.message());
  fs::create_directories(fs::path(p.out_dir) / "slurm", ec);
  const std::string dir = fs::absolute(p.out_dir).lexically_normal().string();
  const std::string exe = fs::absolute(p.carrier_exe).lexically_normal().string();
  const std::string config = p.default_config
                                 ? "--default"
                                 : Quote(fs::absolute(p.config_path).lexically_normal().string());
  const std::string n = std::to_string(p.shards);
  std::string opts;  // partition and time, for both jobs
  if (!p.partition.empty()) opts += " --partition=" + p.partition;
  if (!p.time.empty()) opts += " --time=" + p.time;

  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# Written by carrier sweep --slurm " << n << " (experiments/sweep/slurm.hpp). Submit with\n"
    << "#   sbatch " << dir << "/submit.sbatch\n"
    << "# Task K of the array runs shard K/" << n
    << " into shard-K/; task 1 also submits the merge\n"
    << "# job, which waits for every task to succeed and merges the shards into this folder.\n"
    << "#SBATCH --job-name=" << p.job_name << "\n"
    << "#SBATCH --array=1-" << n << "\n"
    << "#SBATCH --output=" << dir << "/slurm/shard-%a.out\n";
  if (!p.partition.empty()) s << "#SBATCH --partition=" << p.partition << "\n";
  if (!p.time.empty()) s << "#SBATCH --time=" << p.time << "\n";
  s << "set -euo pipefail\n"
    << "carrier=" << Quote(exe) << "\n"
    << "dir=" << Quote(dir) << "\n"
    << "n=" << n << "\n"
    << "k=\"${SLURM_ARRAY_TASK_ID:?submit this script with sbatch (it is a job array)}\"\n"
    << "if [ \"$k\" = 1 ]; then\n"
    << "  shards=()\n"
    << "  for ((i = 1; i <= n; i++)); do shards+=(\"$dir/shard-$i\"); done\n"
    << "  merge=\"$(printf '%q ' \"$carrier\" merge \"${shards[@]}\" -o \"$dir\")\"\n"
    << "  sbatch --parsable --job-name=" << p.job_name << "-merge" << opts
    << " --dependency=afterok:\"$SLURM_ARRAY_JOB_ID\" --kill-on-invalid-dep=yes \\\n"
    << "    --output=\"$dir/slurm/merge.out\" --wrap=\"$merge\" > \"$dir/slurm/merge.jobid\"\n"
    << "fi\n"
    << "rm -rf \"$dir/shard-$k\"\n"
    << "exec \"$carrier\" sweep " << config << " -o \"$dir/shard-$k\" --shard \"$k/$n\" "
    << "--jobs \"${SLURM_CPUS_PER_TASK:-1}\" --quiet\n";
  const std::string path = dir + "/submit.sbatch";
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << s.str();
  f.close();
  if (!f) throw SlurmError("cannot write '" + path + "'");
  fs::permissions(path, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::add, ec);
  return path;
}

std::string SubmitSlurmScript(const std::string& script_path) {
  const std::string cmd = "sbatch --parsable " + Quote(script_path) + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) throw SlurmError("cannot run sbatch");
  std::string out;
  std::array<char, 256> buf;
  while (fgets(buf.data(), buf.size(), pipe)) out += buf.data();
  const int status = pclose(pipe);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (status != 0 || out.empty()) {
    const std::string first = out.substr(0, out.find('\n'));
    throw SlurmError(WIFEXITED(status) && WEXITSTATUS(status) == 127
                         ? "sbatch not found: --submit needs Slurm's client on PATH (the script "
                           "is written; submit it where sbatch runs)"
                         : "sbatch failed: " + (first.empty() ? "no output" : first));
  }
  return out.substr(0, out.find(';'));  // "jobid[;cluster]"
}

}  // namespace carrier::sweep
