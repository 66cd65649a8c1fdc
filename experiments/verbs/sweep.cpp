// carrier sweep: a TOML grid of trials (experiments/sweep/FORMAT.md) run in parallel into a
// tidy CSV and a manifest; carrier merge joins shards of one into a single output folder.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/args.hpp"
#include "io/text_file.hpp"
#include "sweep/config.hpp"
#include "sweep/runner.hpp"
#include "verbs/verbs.hpp"

#if defined(CARRIER_HAVE_TOMLPP) && CARRIER_HAVE_TOMLPP
#include "sweep/default_config.hpp"
#include "sweep/slurm.hpp"
#endif

namespace carrier::cli {

namespace {
// A sweep config is a few kilobytes of TOML; 16 MiB leaves room for long inline lists.
constexpr std::uint64_t kMaxConfigBytes = std::uint64_t{16} << 20;
}  // namespace

const char kSweepHelp[] =
    "usage: carrier sweep CONFIG.toml [-o DIR] [--jobs J] [--resume] [--shard K/N] [--dry-run]\n"
    "       carrier sweep CONFIG.toml -o DIR --slurm N [--partition P] [--time T] [--submit]\n"
    "       carrier sweep --default [-o DIR] [--jobs J] ...   (the embedded default study)\n"
    "\n"
    "Expands the config's grid (experiments/sweep/FORMAT.md: op, dtype, acc, round, exp,\n"
    "schedule, backend, n, input, head_dim; ranges like blocked:{2..4096 by x2}; [[exclude]]\n"
    "rules) into trials, runs them on J threads (each input's certified reference computed once\n"
    "and shared) and appends one row per trial to DIR/trials.csv as it finishes, beside\n"
    "DIR/manifest.json and DIR/config.toml; then prints a summary table (worst and best merge\n"
    "order per op and format). A trial that cannot run is a row with status failed and the\n"
    "reason. Progress goes to stderr. A bad config: one line naming file, key, value and the\n"
    "allowed values, exit 2, nothing written.\n"
    "\n"
    "  -o DIR       output folder (default sweep-NAME)\n"
    "  --jobs J     threads (default: the number of cores)\n"
    "  --resume     continue DIR's run: skip the trial_ids already in trials.csv (same config,\n"
    "               shard and input generator as DIR's manifest, else refused)\n"
    "  --shard K/N  run only the trials with trial_id % N == K-1 (merge with carrier merge)\n"
    "  --dry-run    print the trial count and the first trials; run and write nothing\n"
    "  --quiet      no progress lines\n"
    "  --engine E   backend replay's engine: fast (default: core/replay.hpp, no merge tree\n"
    "               built for seq reverse pairwise blocked strided random omp, fast exact\n"
    "               references) or oracle (core ReplayOracle of the built tree, the definition);\n"
    "               the rows are the same but for the timing columns (FORMAT.md)\n"
    "  --slurm N    run nothing here: write DIR/submit.sbatch, a Slurm job array of N shards\n"
    "               (task K runs --shard K/N into DIR/shard-K) and a dependent job that merges\n"
    "               them into DIR (carrier merge); submit it with sbatch DIR/submit.sbatch\n"
    "  --partition P, --time T   the jobs' Slurm partition and time limit (with --slurm)\n"
    "  --submit     also run sbatch on it and print the array's job id (with --slurm)\n";

int RunSweep(const std::vector<std::string>& argv) {
  // -o is the one short flag (as in FORMAT.md); Args knows long flags only.
  std::vector<std::string> v = argv;
  for (auto& a : v)
    if (a == "-o") a = "--o";
  Args args("sweep", v, {"o", "jobs", "shard", "slurm", "partition", "time", "engine"},
            {"resume", "dry-run", "default", "quiet", "submit"}, 1);
#if !(defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR)
  args.Fail(
      "this build has no MPFR (configured with CARRIER_WITH_MPFR=OFF or without "
      "libmpfr-dev), so it has no certified references");
#elif !(defined(CARRIER_HAVE_TOMLPP) && CARRIER_HAVE_TOMLPP)
  args.Fail(
      "this build has no toml++ (Debian: libtomlplusplus-dev; rerun cmake after "
      "installing it), so it cannot read sweep configs");
#else
  std::string text, path;
  if (args.Has("default")) {
    if (!args.Positional().empty()) args.Fail("give either CONFIG.toml or --default, not both");
    text = sweep::kDefaultConfigText;
    path = "(embedded experiments/configs/default.toml)";
  } else {
    if (args.Positional().empty())
      args.Fail("give the config: carrier sweep CONFIG.toml (or --default)");
    path = args.Positional()[0];
    try {
      text = io::ReadTextFile(path, kMaxConfigBytes);
    } catch (const std::runtime_error& e) {
      std::error_code ec;
      if (!std::filesystem::exists(path, ec))
        args.Fail("cannot open config " + path + ": no such file");
      args.Fail(std::string("config ") + e.what());
    }
  }
  sweep::SweepOptions opt;
  if (auto o = args.Get("o")) {
    if (o->empty()) args.Fail("-o needs a folder");
    opt.out_dir = *o;
  }
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const std::uint64_t jobs = args.Count("jobs", hw);
  if (jobs < 1 || jobs > 1024) args.Fail("--jobs must be from 1 to 1024");
  opt.jobs = static_cast<unsigned>(jobs);
  opt.engine = args.Choice("engine", {"fast", "oracle"}, "fast");
  opt.resume = args.Has("resume");
  opt.dry_run = args.Has("dry-run");
  opt.quiet = args.Has("quiet");
  if (auto s = args.Get("shard")) {
    const auto slash = s->find('/');
    const auto k = slash == std::string::npos ? std::nullopt : ParseCountText(s->substr(0, slash));
    const auto n = slash == std::string::npos ? std::nullopt : ParseCountText(s->substr(slash + 1));
    if (!k || !n || *n < 1 || *k < 1 || *k > *n)
      args.Fail("--shard K/N needs 1 <= K <= N, got '" + *s + "'");
    opt.shard_k = *k;
    opt.shard_n = *n;
  }
  sweep::Config cfg;
  try {
    cfg = sweep::ParseConfig(text, path);
  } catch (const sweep::ConfigError& e) {
    throw UsageError(e.what());
  }
  if (args.Get("slurm")) {
    // A job array instead of a local run (sweep/slurm.hpp).
    for (const char* f : {"shard", "jobs", "engine"})
      if (args.Get(f)) args.Fail(std::string("--") + f + " does not go with --slurm");
    for (const char* f : {"resume", "dry-run"})
      if (args.Has(f)) args.Fail(std::string("--") + f + " does not go with --slurm");
    sweep::SlurmPlan plan;
    plan.shards = args.Count("slurm", 0);
    std::error_code ec;
    plan.carrier_exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    if (ec) args.Fail("cannot find the carrier executable's path (/proc/self/exe)");
    plan.default_config = args.Has("default");
    plan.config_path = path;
    plan.out_dir = opt.out_dir.empty() ? "sweep-" + cfg.name : opt.out_dir;
    plan.partition = args.Get("partition").value_or("");
    plan.time = args.Get("time").value_or("");
    plan.job_name = "carrier-" + cfg.name;
    try {
      const std::string script = sweep::WriteSlurmScript(plan);
      std::cout << "wrote " << script << " (" << plan.shards << " shards, then carrier merge into "
                << plan.out_dir << ")\n";
      if (args.Has("submit")) {
        const std::string id = sweep::SubmitSlurmScript(script);
        std::cout << "submitted job array " << id << "\n";
      } else {
        std::cout << "submit it with: sbatch " << script << "\n";
      }
    } catch (const sweep::SlurmError& e) {
      args.Fail(e.what());
    }
    return 0;
  }
  for (const char* f : {"partition", "time"})
    if (args.Get(f)) args.Fail(std::string("--") + f + " goes with --slurm N");
  if (args.Has("submit")) args.Fail("--submit goes with --slurm N");
  const int code = sweep::RunSweep(cfg, opt);
  if (!opt.dry_run && code == 0) {  // a run stopped by a signal has no summary
    const std::string dir = opt.out_dir.empty() ? "sweep-" + cfg.name : opt.out_dir;
    sweep::PrintSummary(dir + "/trials.csv");
  }
  return code;
#endif
}

}  // namespace carrier::cli
