#include "sweep/runner.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "cli/args.hpp"
#include "cli/number_format.hpp"
#include "io/atomic_file.hpp"
#include "io/json.hpp"
#include "sweep/csv.hpp"
#include "sweep/manifest.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
#include "backends/backends.hpp"
#include "inputs/generators.hpp"
#include "precision/parallel_pass.hpp"
#include "precision/precision_policy.hpp"
#include "registry/registry.hpp"
#include "run/matmul.hpp"
#include "run/memory.hpp"
#include "run/outcome_fields.hpp"
#include "run/trial.hpp"
#endif

namespace carrier::sweep {

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// done/total with rate and ETA on stderr: a redrawn bar on a terminal, else a line per 10%.
class Progress {
 public:
  Progress(std::uint64_t total, bool quiet)
      : total_(total), quiet_(quiet || total == 0), tty_(isatty(2) != 0), start_(Clock::now()) {}
  void Tick(std::uint64_t done) {
    if (quiet_) return;
    const double secs = std::chrono::duration<double>(Clock::now() - start_).count();
    if (tty_) {
      if (done != total_ && secs - last_draw_ < 0.2) return;
      last_draw_ = secs;
      std::fprintf(stderr, "\r%s", Line(done, secs, true).c_str());
      if (done == total_) std::fprintf(stderr, "\n");
    } else {
      const std::uint64_t decile = done * 10 / total_;
      if (decile <= last_decile_) return;
      last_decile_ = decile;
      std::fprintf(stderr, "%s\n", Line(done, secs, false).c_str());
    }
    std::fflush(stderr);
  }

 private:
  std::string Line(std::uint64_t done, double secs, bool bar) const {
    const double rate = secs > 0 ? done / secs : 0;
    const double eta = rate > 0 ? (total_ - done) / rate : 0;
    char buf[160];
    std::string b;
    if (bar) {
      const int width = 30, fill = static_cast<int>(width * done / total_);
      b = "[" + std::string(fill, '=') + std::string(width - fill, ' ') + "] ";
    }
    std::snprintf(
        buf, sizeof buf, "sweep: %s%llu/%llu trials (%3.0f%%), %.1f trials/s, ETA %d:%02d",
        b.c_str(), static_cast<unsigned long long>(done), static_cast<unsigned long long>(total_),
        100.0 * done / total_, rate, static_cast<int>(eta) / 60, static_cast<int>(eta) % 60);
    return buf;
  }
  std::uint64_t total_;
  bool quiet_, tty_;
  Clock::time_point start_;
  double last_draw_ = -1;
  std::uint64_t last_decile_ = 0;
};

}  // namespace

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

namespace {

struct Job {
  const TrialParams* p = nullptr;
  run::ResolvedTrial trial;
  std::string spec_error;  // non-empty: the trial cannot run
  std::string group;       // input + reference key
  std::string input_key;   // the input alone: groups of several ops on one input share it
};

// One generated input, shared by the groups (reference keys) that read it: sum's, lse's and
// welford's group of one (dtype, n, input, trial) generate it once, not once each.
struct InputEntry {
  std::mutex m;
  bool ready = false;
  std::shared_ptr<const run::TrialInput> input;
  std::string error;
  std::uint64_t remaining = 0;  // trials still to run on it
};

struct CacheEntry {
  std::mutex m;
  bool ready = false;
  std::shared_ptr<const run::TrialInput> input;
  std::unique_ptr<run::SharedReference> ref;
  std::string error;
  std::uint64_t remaining = 0;
};

// A row's record for the outcome schema (run/outcome_fields.hpp): the parameters as the grid
// cell wrote them, its status, and whatever the trial measured (none on a failed row; a failed
// row keeps its reference's columns when the reference was computed).
run::OutcomeRecord RowRecord(const TrialParams& p, const std::string& status,
                             const std::string& error, double ref_seconds) {
  run::OutcomeRecord r;
  r.trial_id = p.trial_id;
  r.op = p.op;
  r.dtype = p.dtype;
  r.acc = p.acc;
  r.round = p.round;
  r.precision = p.precision;
  r.exp = p.exp;
  r.schedule = p.schedule;
  r.backend = p.backend;
  r.n = p.n;
  r.input = p.input;
  r.head_dim = p.head_dim;
  r.trial = p.trial;
  r.input_seed = p.input_seed;
  r.mn = p.mn;
  r.status = status;
  r.error = error;
  r.reference_seconds = ref_seconds;
  return r;
}

std::vector<std::string> RowFields(const TrialParams& p, const std::string& status,
                                   const std::string& error, const run::TrialOutcome* o,
                                   const run::SharedReference* ref, double ref_seconds) {
  run::OutcomeRecord r = RowRecord(p, status, error, ref_seconds);
  r.outcome = o;
  r.ref = ref;
  return run::CsvOutcomeRow(r);
}

// An op matmul row (run/matmul.hpp): abs_error and rel_error are the largest over the M N
// outputs (rel componentwise), median_rel_error and normwise_error (||C^ - C||_F / ||C||_F)
// their own columns, error_to_bound the largest output's ratio to its own dot bound; result,
// reference, ulp_error, bound and cond are empty (M N values); seconds and reference_seconds
// the sums over the outputs.
std::vector<std::string> MatmulRowFields(const TrialParams& p, const std::string& status,
                                         const std::string& error, const run::MatmulOutcome& o) {
  run::OutcomeRecord r = RowRecord(p, status, error, o.reference_seconds);
  r.matmul = &o;
  return run::CsvOutcomeRow(r);
}

std::string OneLine(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

int RunSweep(const Config& cfg, const SweepOptions& opt) {
  const std::vector<TrialParams> all = Enumerate(cfg);
  const std::uint64_t total = all.size();
  std::vector<const TrialParams*> mine;
  for (const auto& p : all)
    if (opt.shard_n == 0 || p.trial_id % opt.shard_n == opt.shard_k - 1) mine.push_back(&p);
  const std::string shard =
      opt.shard_n ? std::to_string(opt.shard_k) + "/" + std::to_string(opt.shard_n) : "";

  // Resolve every trial and group by shared input + reference.
  std::vector<Job> jobs(mine.size());
  std::set<std::string> group_names;
  for (std::size_t i = 0; i < mine.size(); ++i) {
    const TrialParams& p = *mine[i];
    Job& j = jobs[i];
    j.p = &p;
    run::TrialSpec s;
    s.op = p.op == run::kMatmulOp ? "dot" : p.op;  // matmul's outputs are dots
    s.dtype = p.dtype;
    s.acc = p.acc;
    s.round = p.round;
    s.exp = p.exp;
    s.schedule = p.schedule;
    s.backend = p.backend;
    s.head_dim = p.head_dim;
    s.sr_seed = p.sr_seed;
    s.engine = opt.engine;
    try {
      // The policy typed into the trial (ParseConfig checked its text and that each op can
      // take it); ResolveTrial lists it under the dtype/acc/round the row carries.
      if (!p.precision.empty()) s.precision = ParsePrecisionPolicy(p.precision);
      j.trial = run::ResolveTrial(s);
      j.group = run::ReferenceKey(j.trial) + "|" + p.dtype + "|" + p.input + "|" +
                std::to_string(p.n) + "|" + std::to_string(p.head_dim) + "|" +
                std::to_string(p.trial);
      // MakeInput reads the op's input kind, the storage dtype, the generator, n, head_dim
      // and the seed, nothing else.
      j.input_key = std::to_string(static_cast<int>(j.trial.op->input)) + "|" + p.dtype + "|" +
                    p.input + "|" + std::to_string(p.n) + "|" + std::to_string(p.head_dim) + "|" +
                    std::to_string(p.input_seed) + "|" + p.mn;
      if (!p.mn.empty()) j.group += "|" + p.mn;
      group_names.insert(j.group);
    } catch (const run::SpecError& e) {
      j.spec_error = OneLine(e.what());
    }
  }

  if (opt.dry_run) {
    std::printf("sweep %s: %llu trials", cfg.name.c_str(), static_cast<unsigned long long>(total));
    if (!shard.empty())
      std::printf(", shard %s runs %llu of them", shard.c_str(),
                  static_cast<unsigned long long>(mine.size()));
    std::printf("; %zu distinct inputs and references", group_names.size());
    std::uint64_t bad = 0;
    for (const auto& j : jobs) bad += !j.spec_error.empty();
    if (bad)
      std::printf("; %llu trials will fail (parameters that cannot run together)",
                  static_cast<unsigned long long>(bad));
    std::printf("\nfirst trials:\n");
    for (std::size_t i = 0; i < jobs.size() && i < 10; ++i) {
      const TrialParams& p = *jobs[i].p;
      std::printf(
          "  %llu op=%s dtype=%s acc=%s round=%s exp=%s schedule=%s backend=%s n=%llu "
          "input=%s%s%s trial=%llu%s\n",
          static_cast<unsigned long long>(p.trial_id), p.op.c_str(), p.dtype.c_str(), p.acc.c_str(),
          p.round.c_str(), p.exp.c_str(), p.schedule.c_str(), p.backend.c_str(),
          static_cast<unsigned long long>(p.n), p.input.c_str(),
          p.head_dim ? (" head_dim=" + std::to_string(p.head_dim)).c_str() : "",
          p.mn.empty() ? "" : (" mn=" + p.mn).c_str(), static_cast<unsigned long long>(p.trial),
          jobs[i].spec_error.empty() ? "" : ("  (fails: " + jobs[i].spec_error + ")").c_str());
    }
    return 0;
  }

  // Memory (run/memory.hpp), before anything is written: the largest trial's input, its copy
  // in the compute type and (oracle engine) its tree, times the groups held at once (jobs).
  {
    const Job* largest = nullptr;
    std::uint64_t most = 0;
    for (const auto& j : jobs) {
      if (!j.spec_error.empty()) continue;
      if (!j.p->mn.empty()) {  // op matmul: its inputs and outputs (run/matmul.hpp)
        try {
          run::CheckMatmulMemory(j.trial, {j.p->mat_m, j.p->mat_n, j.p->n}, opt.jobs);
        } catch (const run::SpecError& e) {
          throw cli::UsageError("carrier sweep: " + std::string(e.what()) +
                                "; lower mn, n or --jobs, or use another machine");
        }
        continue;
      }
      const std::uint64_t b = run::TrialBytes(j.trial, j.p->n, j.p->input);
      if (b > most) most = b, largest = &j;
    }
    if (largest) {
      const std::uint64_t copies = std::min<std::uint64_t>(opt.jobs, group_names.size());
      try {
        run::CheckTrialMemory(largest->trial, largest->p->n, copies, largest->p->input);
      } catch (const run::SpecError& e) {
        throw cli::UsageError("carrier sweep: " + std::string(e.what()) +
                              "; lower n or --jobs, or use another machine");
      }
    }
  }

  // The output folder: created, then locked for the whole run (a second sweep or merge on it
  // is refused at once), then checked.
  const std::string dir = opt.out_dir.empty() ? "sweep-" + cfg.name : opt.out_dir;
  const std::string csv = dir + "/trials.csv", manifest_path = dir + "/manifest.json";
  const std::string hash = ConfigHash(cfg.text);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw cli::UsageError("carrier sweep: cannot create " + dir + ": " + ec.message());
  const io::DirLock folder_lock(dir, "carrier sweep");
  std::set<std::uint64_t> done;
  // trials.csv and manifest.json must be plain files where they exist: a folder, a FIFO (which
  // would block the read) or a link to /dev/null is refused with one line before any reading.
  for (const std::string& path : {csv, manifest_path}) {
    const fs::file_status st = fs::status(path, ec);
    if (fs::exists(st) && !fs::is_regular_file(st))
      throw cli::UsageError("carrier sweep: " + path +
                            " exists but is not a regular file (a folder, FIFO, device or a link "
                            "to one); move it away or give -o another folder");
  }
  const std::uintmax_t csv_size = fs::exists(csv, ec) ? fs::file_size(csv, ec) : 0;
  bool have_csv = !ec && csv_size > 0 && csv_size != static_cast<std::uintmax_t>(-1);
  if (have_csv && !opt.resume)
    throw cli::UsageError("carrier sweep: " + csv +
                          " already exists; give --resume to continue "
                          "that run, or -o another folder");
  if (have_csv) {
    const std::string m = Slurp(manifest_path);
    const auto mh = ManifestField(m, "config_hash");
    if (!mh || io::JsonUnquote(*mh) != hash)
      throw cli::UsageError("carrier sweep: --resume: " + manifest_path +
                            " is missing or records "
                            "another config (hash " +
                            (mh ? io::JsonUnquote(*mh) : "none") + ", this config " + hash + ")");
    const auto ms = ManifestField(m, "shard");
    if (!ms || (*ms == "null" ? "" : io::JsonUnquote(*ms)) != shard)
      throw cli::UsageError("carrier sweep: --resume: " + dir + " was run as shard '" +
                            (ms ? io::JsonUnquote(*ms) : "?") + "', not '" + shard + "'");
    // Rows drawn by another input generator and this binary's would not be one run.
    const std::string drew = ManifestGenerator(m);
    if (drew != inputs::kGeneratorVersion)
      throw cli::UsageError("carrier sweep: --resume: " + dir + " drew its inputs with generator " +
                            GeneratorName(drew) + ", this binary draws with " +
                            inputs::kGeneratorVersion +
                            ": its rows and new ones would not be one run; give -o another folder");
    CsvFile f;
    try {
      f = ReadTrialsCsv(csv);
    } catch (const std::exception& e) {
      throw cli::UsageError("carrier sweep: --resume: " + std::string(e.what()));
    }
    if (f.header + "\n" != CsvHeaderLine())
      throw cli::UsageError("carrier sweep: --resume: " + csv + " has another header");
    std::set<std::uint64_t> allowed;
    for (const auto* p : mine) allowed.insert(p->trial_id);
    for (auto id : f.ids) {
      if (!allowed.count(id))
        throw cli::UsageError("carrier sweep: --resume: " + csv + " holds trial_id " +
                              std::to_string(id) + ", which is not a trial of this config/shard");
      if (!done.insert(id).second)
        throw cli::UsageError("carrier sweep: --resume: " + csv + " holds trial_id " +
                              std::to_string(id) + " twice");
    }
    if (f.partial_tail) {
      // A row cut short by a kill: drop it (its trial runs again).
      if (truncate(csv.c_str(), static_cast<off_t>(f.complete_bytes)) != 0)
        throw cli::UsageError("carrier sweep: --resume: cannot truncate the partial last row of " +
                              csv + ": " + std::strerror(errno));
      std::fprintf(stderr, "sweep: dropped a partial last row of %s\n", csv.c_str());
    }
  }
  ManifestRun mr;
  mr.config_path = cfg.path;
  mr.config_hash = hash;
  mr.config_text = cfg.text;
  mr.start_time = UtcNow();
  mr.trials_total = total;
  mr.trials_in_shard = mine.size();
  mr.trials_done = done.size();
  mr.shard = shard;
  mr.jobs = opt.jobs;
  if (have_csv) {
    // A resumed run keeps its first start time.
    const auto st = ManifestField(Slurp(manifest_path), "start_time");
    if (st && *st != "null") mr.start_time = io::JsonUnquote(*st);
  }
  // trials.csv is created last: a folder with a trials.csv always has the manifest that
  // --resume checks it against, whenever a crash stops this sequence.
  try {
    io::WriteFileAtomic(dir + "/config.toml", cfg.text);
    io::WriteFileAtomic(manifest_path, ManifestJson(mr));
    if (!have_csv) io::WriteFileAtomic(csv, CsvHeaderLine());
  } catch (const io::IoError& e) {
    throw cli::UsageError("carrier sweep: " + std::string(e.what()));
  }

  // What is left, ordered so that each group's trials run together, and the groups of one
  // input one after another (FORMAT.md: rows come in completion order), so that an input is
  // generated once and held only while its groups run.
  std::vector<Job*> todo;
  std::unordered_map<std::string, std::size_t> group_rank, input_rank;
  std::unordered_map<std::string, std::uint64_t> group_count, input_count;
  for (auto& j : jobs) {
    if (done.count(j.p->trial_id)) continue;
    todo.push_back(&j);
    if (!j.group.empty()) {
      group_rank.emplace(j.group, group_rank.size());
      ++group_count[j.group];
      input_rank.emplace(j.input_key, input_rank.size());
      ++input_count[j.input_key];
    }
  }
  std::stable_sort(todo.begin(), todo.end(), [&](const Job* a, const Job* b) {
    const std::size_t ia = a->group.empty() ? 0 : input_rank[a->input_key] + 1;
    const std::size_t ib = b->group.empty() ? 0 : input_rank[b->input_key] + 1;
    if (ia != ib) return ia < ib;
    const std::size_t ra = a->group.empty() ? 0 : group_rank[a->group] + 1;
    const std::size_t rb = b->group.empty() ? 0 : group_rank[b->group] + 1;
    return ra < rb;
  });

  std::optional<io::AppendFile> out;
  try {
    out.emplace(csv, "row");
  } catch (const io::IoError& e) {
    throw cli::UsageError("carrier sweep: " + std::string(e.what()));
  }
  std::mutex cache_mutex, write_mutex;
  std::unordered_map<std::string, std::shared_ptr<CacheEntry>> cache;
  std::unordered_map<std::string, std::shared_ptr<InputEntry>> input_cache;
  std::atomic<std::size_t> next{0};
  std::uint64_t finished = 0, failed = 0;
  double ref_total = 0, trial_total = 0;
  Progress progress(todo.size(), opt.quiet);
  std::string write_error;  // the first failed row write; the run stops taking trials
  std::atomic<bool> stop{false};
  const io::StopOnSignals on_signals;  // SIGINT/SIGTERM: finish the rows in flight, then stop
  const auto t_start = Clock::now();

  auto emit = [&](const std::vector<std::string>& fields, bool ok, double ref_s, double trial_s) {
    const std::string line = CsvLine(fields);
    std::lock_guard<std::mutex> lock(write_mutex);
    if (!write_error.empty()) return;  // the row is dropped: its trial runs again on --resume
    try {
      // One write(2) per row: a kill leaves whole rows (and at most one cut-off tail).
      out->Append(line);
    } catch (const io::IoError& e) {
      write_error = e.what();
      stop = true;
      return;
    }
    ++finished;
    failed += !ok;
    ref_total += ref_s;
    trial_total += trial_s;
    progress.Tick(finished);
  };

  auto worker = [&] {
    // Each input's conversion to the compute type is made once per thread, not per trial.
    const registry::ConvertedInputScope keep_conversions;
    for (;;) {
      if (stop.load() || io::StopSignal() != 0) break;
      const std::size_t i = next.fetch_add(1);
      if (i >= todo.size()) break;
      const Job& j = *todo[i];
      const TrialParams& p = *j.p;
      if (!j.spec_error.empty()) {
        emit(RowFields(p, "failed", j.spec_error, nullptr, nullptr, 0), false, 0, 0);
        continue;
      }
      if (!p.mn.empty()) {
        // op matmul: its own input (A from input_seed, B from input_seed + 1) and a reference
        // per output, on this worker's thread (the sweep's jobs run the trials in parallel).
        run::MatmulOutcome o;
        std::string why;
        std::uint64_t overflows = 0;
        try {
          const run::MatmulInput in = run::MakeMatmulInput(j.trial, inputs::ParseGenerator(p.input),
                                                           {p.mat_m, p.mat_n, p.n}, p.input_seed);
          overflows = in.storage_overflows;
          o = run::RunMatmul(j.trial, in, 1);
        } catch (const std::exception& ex) {
          why = OneLine(ex.what());
        }
        if (!why.empty()) {
          emit(RowFields(p, "failed", why, nullptr, nullptr, 0), false, 0, 0);
        } else {
          const std::string note =
              overflows ? std::to_string(overflows) + " finite input values overflow " +
                              j.trial.storage.name + " on storage, becoming inf or NaN"
                        : "";
          emit(MatmulRowFields(p, overflows ? "storage_overflow" : "ok", note, o), !overflows,
               o.reference_seconds, o.seconds);
        }
        continue;
      }
      std::shared_ptr<CacheEntry> e;
      std::shared_ptr<InputEntry> ie;
      {
        std::lock_guard<std::mutex> lock(cache_mutex);
        auto& slot = cache[j.group];
        if (!slot) {
          slot = std::make_shared<CacheEntry>();
          slot->remaining = group_count[j.group];
        }
        e = slot;
        auto& islot = input_cache[j.input_key];
        if (!islot) {
          islot = std::make_shared<InputEntry>();
          islot->remaining = input_count[j.input_key];
        }
        ie = islot;
      }
      {
        // A kept conversion of another input is freed before this input is made or converted.
        std::lock_guard<std::mutex> ilock(ie->m);
        registry::DropConvertedInputUnless(ie->ready && ie->input ? ie->input->id : 0);
      }
      double ref_seconds = 0;
      {
        // Lock order: the group's entry, then its input's (never the other way).
        std::lock_guard<std::mutex> lock(e->m);
        if (!e->ready) {
          {
            std::lock_guard<std::mutex> ilock(ie->m);
            if (!ie->ready) {
              try {
                const auto gen = inputs::ParseGenerator(p.input);
                ie->input = std::make_shared<const run::TrialInput>(
                    run::MakeInput(j.trial, gen, p.n, p.input_seed));
              } catch (const std::exception& ex) {
                ie->error = "input or reference: " + OneLine(ex.what());
              }
              ie->ready = true;
            }
            e->input = ie->input;
            e->error = ie->error;
          }
          if (e->error.empty()) {
            try {
              e->ref =
                  std::make_unique<run::SharedReference>(run::ComputeReference(j.trial, *e->input));
              ref_seconds = e->ref->seconds;
            } catch (const std::exception& ex) {
              e->error = "input or reference: " + OneLine(ex.what());
            }
          }
          e->ready = true;
        }
      }
      std::vector<std::string> row;
      bool ok = false;
      double trial_seconds = 0;
      if (!e->error.empty()) {
        row = RowFields(p, "failed", e->error, nullptr, nullptr, ref_seconds);
      } else {
        try {
          const run::TrialOutcome o = run::RunTrial(j.trial, *e->input, *e->ref);
          // An input the storage format overflowed is measured but flagged: its own status,
          // counted with the failures, so no summary treats inf/NaN data as a result.
          const bool overflow = e->input->storage_overflows > 0;
          row = RowFields(p, overflow ? "storage_overflow" : "ok",
                          overflow ? run::StorageOverflowText(*e->input, j.trial.storage.name) : "",
                          &o, e->ref.get(), ref_seconds);
          trial_seconds = o.seconds;
          ok = !overflow;
        } catch (const backends::Unavailable& ex) {
          row = RowFields(p, "failed", OneLine(ex.what()), nullptr, e->ref.get(), ref_seconds);
        } catch (const std::exception& ex) {
          row = RowFields(p, "failed", OneLine(ex.what()), nullptr, e->ref.get(), ref_seconds);
        }
      }
      emit(row, ok, ref_seconds, trial_seconds);
      {
        std::lock_guard<std::mutex> lock(cache_mutex);
        if (--e->remaining == 0) cache.erase(j.group);
        if (--ie->remaining == 0) input_cache.erase(j.input_key);
      }
    }
    run::ReleaseThreadCaches();
  };
  const unsigned n_threads =
      std::max(1u, std::min<unsigned>(opt.jobs, std::max<std::size_t>(todo.size(), 1)));
  // An input's generation and its reference's exact passes split across the --jobs cores
  // (precision/parallel_pass.hpp): the other workers wait on that input meanwhile.
  const PassThreadsScope pass_threads(static_cast<int>(opt.jobs));
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < n_threads; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  const std::string resume_cmd =
      "carrier sweep " + (cfg.path.rfind("(", 0) == 0 ? std::string("--default") : cfg.path) +
      " --resume -o " + dir + (shard.empty() ? "" : " --shard " + shard);
  if (!write_error.empty())
    throw cli::UsageError("carrier sweep: " + write_error + "; " + csv + " keeps its whole rows; " +
                          "once the cause is fixed, continue with: " + resume_cmd);

  // The manifest from the file as it now stands (after the rows are on the device).
  auto final_manifest = [&](bool finished_run) {
    out->Sync();
    const CsvFile f = ReadTrialsCsv(csv);
    const auto& cols = CsvColumns();
    const std::size_t c_status =
        static_cast<std::size_t>(std::find(cols.begin(), cols.end(), "status") - cols.begin());
    mr.trials_done = f.rows.size();
    mr.trials_failed = 0;
    for (const auto& line : f.rows) mr.trials_failed += SplitCsvLine(line)[c_status] != "ok";
    mr.end_time = finished_run ? UtcNow() : "";
    mr.wall_seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
    mr.reference_seconds_total = ref_total;
    mr.trial_seconds_total = trial_total;
    io::WriteFileAtomic(manifest_path, ManifestJson(mr));
  };
  try {
    if (const int sig = io::StopSignal()) {
      final_manifest(false);
      std::fprintf(stderr,
                   "sweep: stopped by %s after the rows in flight: %s holds %llu of %llu "
                   "rows; continue with: %s\n",
                   sig == SIGINT ? "SIGINT" : "SIGTERM", csv.c_str(),
                   static_cast<unsigned long long>(mr.trials_done),
                   static_cast<unsigned long long>(mr.trials_in_shard), resume_cmd.c_str());
      return 128 + sig;
    }
    final_manifest(true);
  } catch (const io::IoError& e) {
    throw cli::UsageError("carrier sweep: " + std::string(e.what()) +
                          "; continue with: " + resume_cmd);
  }
  const double wall = mr.wall_seconds;
  std::printf(
      "sweep %s: %llu trials run in %.2f s with %u jobs (%.1f trials/s; %.0f%% of the "
      "summed time in references), %llu failed this run; %s holds %llu of %llu rows\n",
      cfg.name.c_str(), static_cast<unsigned long long>(finished), wall, n_threads,
      wall > 0 ? finished / wall : 0.0,
      ref_total + trial_total > 0 ? 100 * ref_total / (ref_total + trial_total) : 0.0,
      static_cast<unsigned long long>(failed), csv.c_str(),
      static_cast<unsigned long long>(mr.trials_done),
      static_cast<unsigned long long>(mr.trials_in_shard));
  std::fflush(stdout);
  return 0;
}

#else

int RunSweep(const Config&, const SweepOptions&) {
  throw cli::UsageError("carrier sweep: this build has no MPFR, so it has no certified references");
}

#endif

}  // namespace carrier::sweep
