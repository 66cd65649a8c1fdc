// carrier replay-bench: the fast replay engine, fast emulated arithmetic and the fast exact-sum
// reference, timed side by side in one run against what they replace and against the SIMD
// kernels (the targets of issue 14).
//
// For each n (default 2^20 and 2^24; normal(0, 1) values, seed 42, rounded to fp32):
//   simd       kernels/simd Reduce<Sum<float>> and Reduce<Sum<double>> over strided:32 (the
//              pinned SIMD schedule): the baselines of every ratio;
//   fast       Replay<Sum<T>>(schedule, x) (core/replay.hpp) for seq, blocked:64,
//              pairwise, random:1, strided:32, with T = float and, for bf16 and fp16 under rne
//              and rz, T = Emulated with a static tag (precision/emulated.hpp) and
//              T = EmulatedDynamic (the CLI's dynamic format);
//   oracle     ReplayOracle<Sum<T>>(BuildTree(schedule, n), x) (core/replay_oracle.hpp), the tree
//   built in
//              the timed region as a study builds it, with T = float and T = EmulatedOracleDynamic;
//   reference  ReferenceSum (exact tier: n MPFR terms and mpfr_sum), ReferenceSumFast
//              (precision/reference/fast_sum.hpp), plain mpfr_sum over the same n doubles
//              (terms prepared outside the timed region), ReferenceWelford/Norm2 and their
//              fast twins (fast_sum.hpp), the lse fast tier, and ReferenceDot and
//              ReferenceDotFast over the pairs (x_i, x_{n-1-i}) (held, like welford's, to
//              15 ns per pair).
// Every fast result is compared with its oracle bit for bit (and the fp32 strided:32 replay
// with the SIMD kernel); a mismatch prints MISMATCH and the verb exits 1. Times are medians of
// --repeats runs (the slow oracle rows: --oracle-repeats), one thread, interleaved per row.
// trial      what a user waits for (issue 30): `carrier eval` for sum bf16 pairwise, lse fp32
//            blocked:64 and dot fp32 seq on --gen normal --n N, run as its own process (this
//            binary) end to end, wall time, against the same trial's engine alone (the op's
//            fast replay over the stored input, decoded outside the timed region) plus its
//            reference (run::ComputeReference), both in this process on the same stored input;
//            eval's result must equal the engine's bit for bit. --no-trial leaves it out.
//            First the input generator alone: the normal stream against carrier-gen/1's
//            formula (glibc's scalar log and cos) on the same uniforms.
// peer       with --xsum LIB.so (a shared library the user built from Radford Neal's xsum.c;
//            carrier ships none of it): xsum's large accumulator on the same n doubles as the
//            references, its result checked against the exact sum, and the ratio of
//            ReferenceSumFast to it (issue 30's target: within 2x).
// The closing lines print each target's ratio and whether it is met.
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "cli/progress.hpp"
#include "core/carriers/pairs.hpp"
#include "core/carriers/sum.hpp"
#include "core/hash.hpp"
#include "core/merge_tree.hpp"
#include "core/replay.hpp"
#include "core/replay_oracle.hpp"
#include "core/schedule.hpp"
#include "inputs/generators.hpp"
#include "precision/emulated.hpp"
#include "precision/emulated_oracle.hpp"
#include "precision/format.hpp"
#include "precision/rounding.hpp"
#include "registry/registry.hpp"
#include "run/trial.hpp"
#include "util/stats.hpp"

#if defined(CARRIER_HAVE_SIMD_KERNELS) && CARRIER_HAVE_SIMD_KERNELS
#include "kernels/simd/simd.hpp"
#endif
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
#include <mpfr.h>

#include "precision/reference/fast_sum.hpp"
#include "precision/reference/reference.hpp"
#endif

namespace carrier::cli {

#if defined(CARRIER_HAVE_SIMD_KERNELS) && CARRIER_HAVE_SIMD_KERNELS && \
    defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

namespace {

using util::Median;
using util::Seconds;

std::string Fixed(double x, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << x;
  return os.str();
}

struct ReplayBenchRow {
  std::uint64_t n;
  std::string what, dtype, schedule;
  double ns;  // per element
  std::string check;
};

struct Bench {
  std::uint64_t n = 0;
  std::uint64_t repeats = 3, oracle_repeats = 1;
  std::vector<ReplayBenchRow> rows;
  bool mismatch = false;

  // Times f (returning a double result) `reps` times; the last result goes to *out.
  template <class F>
  double Time(std::uint64_t reps, F&& f, double* out = nullptr) {
    std::vector<double> t;
    volatile double sink = 0;
    for (std::uint64_t r = 0; r < reps; ++r) t.push_back(Seconds([&] { sink = f(); }));
    if (out) *out = sink;
    return Median(t) * 1e9 / static_cast<double>(n);
  }
  void Add(const std::string& what, const std::string& dtype, const std::string& schedule,
           double ns, const std::string& check = "") {
    rows.push_back({n, what, dtype, schedule, ns, check});
    std::cerr << "  " << what << " " << dtype << " " << schedule << ": " << Fixed(ns, 3)
              << " ns/elem " << check << "\n";
  }
  std::string Same(double a, double b) {
    if (ScalarTraits<double>::BitEqual(a, b)) return "bits = oracle";
    mismatch = true;
    return "MISMATCH";
  }
};

const char* const kSchedules[] = {"seq", "blocked:64", "pairwise", "random:1", "strided:32"};

// One emulated format and mode: fast replay with the static and the dynamic Emulated, and
// the oracle with EmulatedOracleDynamic, all from the same stored values.
template <class Tag, Rounding R>
void EmulatedRows(Bench& b, const std::vector<double>& x, const Format& f,
                  std::vector<double>& oracle_ns, std::vector<double>& fast_ns) {
  using Static = Emulated<Tag, R>;
  const std::string dtype = f.name + "/" + std::string(RoundingName(R));
  EmulationScope scope(f, R);
  std::vector<EmulatedOracleDynamic> slow;
  std::vector<EmulatedDynamic> dyn;
  std::vector<Static> fast;
  for (double v : x) {
    slow.push_back(EmulatedOracleDynamic(v));
    dyn.push_back(EmulatedDynamic::FromFormatValue(slow.back().Value()));
    fast.push_back(Static::FromFormatValue(slow.back().Value()));
  }
  for (const char* text : kSchedules) {
    const Schedule s = ParseSchedule(text);
    double want = 0, got = 0, got_dyn = 0;
    const double t_oracle = b.Time(
        b.oracle_repeats,
        [&] {
          const MergeTree t = BuildTree(s, x.size());
          return ReplayOracle<Sum<EmulatedOracleDynamic>>(
                     t, std::span<const EmulatedOracleDynamic>(slow))
              .s.Value();
        },
        &want);
    const double t_fast = b.Time(
        b.repeats, [&] { return Replay<Sum<Static>>(s, std::span<const Static>(fast)).s.Value(); },
        &got);
    const double t_dyn = b.Time(
        b.repeats,
        [&] {
          return Replay<Sum<EmulatedDynamic>>(s, std::span<const EmulatedDynamic>(dyn)).s.Value();
        },
        &got_dyn);
    b.Add("oracle replay (EmulatedOracle)", dtype, text, t_oracle);
    b.Add("fast replay (Emulated static)", dtype, text, t_fast, b.Same(got, want));
    b.Add("fast replay (Emulated dynamic)", dtype, text, t_dyn, b.Same(got_dyn, want));
    oracle_ns.push_back(t_oracle);
    fast_ns.push_back(t_fast);
  }
}

struct Targets {
  std::vector<std::string> lines;
  void Ratio(const std::string& what, double value, double limit, bool at_most) {
    const bool met = at_most ? value <= limit : value >= limit;
    std::ostringstream os;
    os << (met ? "met     " : "NOT MET ") << what << ": " << Fixed(value, 2)
       << (at_most ? " (target <= " : " (target >= ") << Fixed(limit, 0) << ")";
    lines.push_back(os.str());
  }
};

// xsum's large accumulator (Neal, "Fast exact summation using small and large superaccumulators",
// arXiv:1505.05571), loaded from a shared library the user built from the author's xsum.c
// (--xsum LIB.so; carrier ships none of it): xsum_large_init, xsum_large_addv and
// xsum_large_round on the same n doubles as the references. The accumulator is an opaque
// struct of about 20 KiB (xsum.h); it gets a zeroed 1 MiB block, which xsum_large_init resets
// before each sum.
class XsumLarge {
 public:
  explicit XsumLarge(const std::string& lib) {
    handle_ = dlopen(lib.find('/') == std::string::npos ? ("./" + lib).c_str() : lib.c_str(),
                     RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw std::invalid_argument("--xsum " + lib + ": dlopen failed: " + dlerror());
    init_ = reinterpret_cast<Init>(dlsym(handle_, "xsum_large_init"));
    addv_ = reinterpret_cast<Addv>(dlsym(handle_, "xsum_large_addv"));
    round_ = reinterpret_cast<Round>(dlsym(handle_, "xsum_large_round"));
    if (!init_ || !addv_ || !round_)
      throw std::invalid_argument("--xsum " + lib +
                                  ": no xsum_large_init/xsum_large_addv/xsum_large_round symbol");
  }
  ~XsumLarge() { dlclose(handle_); }
  XsumLarge(const XsumLarge&) = delete;
  XsumLarge& operator=(const XsumLarge&) = delete;
  double Sum(const std::vector<double>& x) {
    init_(acc_.get());
    addv_(acc_.get(), x.data(), static_cast<std::ptrdiff_t>(x.size()));
    return round_(acc_.get());
  }

 private:
  using Init = void (*)(void*);
  using Addv = void (*)(void*, const double*, std::ptrdiff_t);
  using Round = double (*)(void*);
  static constexpr std::size_t kWords = (std::size_t{1} << 20) / 8;
  void* handle_ = nullptr;
  Init init_ = nullptr;
  Addv addv_ = nullptr;
  Round round_ = nullptr;
  std::unique_ptr<std::uint64_t[]> acc_{new std::uint64_t[kWords]()};
};

// The trial section (see the top of this file).
struct TrialCase {
  const char* op;
  const char* dtype;
  const char* schedule;
};
constexpr TrialCase kTrialCases[] = {
    {"sum", "bf16", "pairwise"}, {"lse", "fp32", "blocked:64"}, {"dot", "fp32", "seq"}};

// eval's "result" from its JSON line (NaN where absent).
double JsonResult(const std::string& json) {
  const std::string key = "\"result\":";
  const std::size_t at = json.find(key);
  if (at == std::string::npos) return std::nan("");
  return std::strtod(json.c_str() + at + key.size(), nullptr);
}

// Runs words[0] with arguments words[1..] (no shell), its stdout into `path`, its stderr to
// /dev/null; its exit status (-1: not started, 128 + N: killed by signal N).
int SpawnToFile(const std::vector<std::string>& words, const std::string& path) {
  std::vector<char*> argv;
  for (const std::string& w : words) argv.push_back(const_cast<char*>(w.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t io;
  posix_spawn_file_actions_init(&io);
  posix_spawn_file_actions_addopen(&io, 1, path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&io, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &io, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&io);
  if (rc != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

void TrialRows(Bench& b, Targets& targets, std::uint64_t n) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::filesystem::path out =
      std::filesystem::temp_directory_path() /
      ("carrier-replay-bench-" + std::to_string(::getpid()) + ".json");
  // The input generator alone, one thread: carrier-gen/2's normal stream (its own Box-Muller,
  // vectorised) beside carrier-gen/1's formula (glibc's scalar log and cos) on the same uniforms;
  // the two agree to a few ulp (the largest difference is printed).
  {
    std::vector<double> gen2, gen1;
    const double t_gen2 = b.Time(b.repeats, [&] {
      gen2 = inputs::Generate(inputs::ParseGenerator("normal"), n, 1);
      return gen2[n / 2];
    });
    const std::uint64_t ms = SplitMix64(1);
    const double t_gen1 = b.Time(b.repeats, [&] {
      gen1.assign(n, 0.0);
      for (std::uint64_t i = 0; i < n; ++i) {
        const double u1 = static_cast<double>(SplitMix64(ms ^ (2 * i)) >> 11) * 0x1.0p-53;
        const double u2 = static_cast<double>(SplitMix64(ms ^ (2 * i + 1)) >> 11) * 0x1.0p-53;
        gen1[i] = std::sqrt(-2.0 * std::log(u1 > 0 ? u1 : 0x1.0p-53)) *
                  std::cos(6.283185307179586476925 * u2);
      }
      return gen1[n / 2];
    });
    double diff = 0;
    for (std::uint64_t i = 0; i < n; ++i) diff = std::max(diff, std::fabs(gen2[i] - gen1[i]));
    std::ostringstream note;
    note << "max |gen/2 - gen/1| = " << diff;
    b.Add("trial: input generator, normal (" + std::string(inputs::kGeneratorVersion) + ")", "fp64",
          "-", t_gen2);
    b.Add("trial: input generator, normal (carrier-gen/1 formula, glibc log/cos)", "fp64", "-",
          t_gen1, note.str());
  }
  for (const TrialCase& c : kTrialCases) {
    run::TrialSpec spec;
    spec.op = c.op;
    spec.dtype = c.dtype;
    spec.schedule = c.schedule;
    const run::ResolvedTrial t = run::ResolveTrial(spec);
    const run::TrialInput in = run::MakeInput(t, inputs::ParseGenerator("normal"), n, 1);
    std::vector<double> sa, sb;
    const registry::ReplayInput ri{run::ColumnValues(in, sa), run::ColumnBValues(in, sb), in.n, 0,
                                   0};
    const registry::ExpKind exp = registry::ParseExp("libm");
    const bool emulated = t.compute.kind == run::ComputeKind::kEmulated;
    double engine_value = 0, eval_value = 0;
    const double t_engine = b.Time(
        b.repeats,
        [&] {
          std::optional<EmulationScope> scope;
          if (emulated) scope.emplace(t.compute.format, t.rounding);
          const registry::ScalarKind kind =
              emulated ? registry::ScalarKind::kEmulated : registry::ScalarKind::kFloat;
          const registry::Replayed r =
              t.op->replay ? t.op->replay(kind, exp, t.schedule, nullptr, ri)
                           : t.op->replay_oracle(kind, exp, BuildTree(t.schedule, n), ri);
          return static_cast<double>(r.components.at(0));
        },
        &engine_value);
    const double t_ref =
        b.Time(b.repeats, [&] { return run::ComputeReference(t, in).ref.as_double.at(0); });
    // Spawned (posix_spawn: no shell, and no copy of this process's page tables, which hold
    // the bench's own inputs: forking them added 0.1-0.15 s at n = 2^24 that a user's shell
    // does not pay) with stdout to the file, stderr to /dev/null.
    const std::string n_text = std::to_string(n);
    const std::vector<std::string> words = {self,    "eval",       "--op",     c.op,    "--dtype",
                                            c.dtype, "--schedule", c.schedule, "--gen", "normal",
                                            "--n",   n_text,       "--format", "json"};
    int status = 0;
    const double t_eval = b.Time(b.repeats, [&] {
      status = SpawnToFile(words, out.string());
      std::ifstream f(out);
      std::string json((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      eval_value = JsonResult(json);
      return eval_value;
    });
    std::filesystem::remove(out);
    const std::string what = std::string(c.op) + " " + c.schedule;
    b.Add("trial: engine alone (fast replay, " + std::string(c.op) + ")", c.dtype, c.schedule,
          t_engine);
    b.Add("trial: reference alone (" + std::string(c.op) + ")", "fp64", "-", t_ref);
    // eval prints the shortest text that reads back to its result in the compute format: read
    // back there, it must be the engine's value bit for bit.
    const double eval_back = RoundToFormat(eval_value, t.compute.format, Rounding::kNearestEven);
    std::string check = status != 0 ? "eval FAILED (exit status " + std::to_string(status) + ")"
                                    : b.Same(eval_back, engine_value);
    if (status != 0) b.mismatch = true;
    b.Add("trial: carrier eval end to end (" + std::string(c.op) + ")", c.dtype, c.schedule, t_eval,
          check == "bits = oracle" ? "result = engine's" : check);
    targets.Ratio(
        "eval wall / (engine + reference), " + what + " " + c.dtype + " n=" + std::to_string(n),
        t_eval / (t_engine + t_ref), 3, true);
  }
}

}  // namespace

int RunReplayBench(const std::vector<std::string>& argv) {
  Args args("replay-bench", argv, {"n", "seed", "repeats", "oracle-repeats", "xsum"}, {"no-trial"});
  std::vector<std::uint64_t> sizes;
  if (auto text = args.Get("n")) {
    std::stringstream ss(*text);
    std::string item;
    while (std::getline(ss, item, ',')) {
      const auto v = ParseCountText(item);
      if (!v || *v < 64 || *v > (std::uint64_t{1} << 26))
        args.Fail("--n takes a comma-separated list of sizes in [64, 2^26], got '" + item + "'");
      sizes.push_back(*v);
    }
  } else {
    sizes = {std::uint64_t{1} << 20, std::uint64_t{1} << 24};
  }
  Bench b;
  const std::uint64_t seed = args.Count("seed", 42);
  b.repeats = args.Count("repeats", 3);
  b.oracle_repeats = args.Count("oracle-repeats", 1);
  if (b.repeats < 1 || b.repeats > 99 || b.oracle_repeats < 1 || b.oracle_repeats > 99)
    args.Fail("--repeats and --oracle-repeats must be between 1 and 99");
  std::unique_ptr<XsumLarge> xsum;
  if (auto lib = args.Get("xsum")) {
    try {
      xsum = std::make_unique<XsumLarge>(*lib);
    } catch (const std::invalid_argument& e) {
      args.Fail(e.what());
    }
  }
  const Schedule simd_schedule = ParseSchedule("strided:32");
  Targets targets;
  // Time per element of the last size measured: each later size is announced with its
  // estimate (the work is linear in n), and a terminal gets a ticker.
  double seconds_per_element = 0;
  for (std::uint64_t n : sizes) {
    b.n = n;
    const double eta = seconds_per_element * static_cast<double>(n);
    std::cerr << "replay-bench: n = " << n;
    if (eta > 0)
      std::cerr << " (about " << std::lround(eta) << " s, scaled from the previous size)";
    else if (n == sizes.front() && sizes.size() > 1)
      std::cerr << " (its time, scaled, estimates the larger sizes)";
    std::cerr << "\n";
    const auto size_start = std::chrono::steady_clock::now();
    const Ticker ticker("replay-bench n = " + std::to_string(n), eta);
    std::vector<double> x = inputs::Generate(inputs::ParseGenerator("normal"), n, seed);
    std::vector<float> xf(n);
    for (std::uint64_t i = 0; i < n; ++i) xf[i] = static_cast<float>(x[i]);
    for (std::uint64_t i = 0; i < n; ++i) x[i] = xf[i];  // the stored fp32 values, exactly

    double simd32_value = 0;
    const double simd32 = b.Time(
        b.repeats,
        [&] {
          return static_cast<double>(
              simd::Reduce<Sum<float>, float>(xf.data(), n, simd_schedule).s);
        },
        &simd32_value);
    const double simd64 = b.Time(
        b.repeats, [&] { return simd::Reduce<Sum<double>, double>(x.data(), n, simd_schedule).s; });
    b.Add("simd kernel Reduce<Sum<float>>", "fp32", "strided:32", simd32);
    b.Add("simd kernel Reduce<Sum<double>>", "fp64", "strided:32", simd64);

    // fp32: fast and oracle per schedule.
    for (const char* text : kSchedules) {
      const Schedule s = ParseSchedule(text);
      double want = 0, got = 0;
      const double t_oracle = b.Time(
          b.oracle_repeats,
          [&] {
            const MergeTree t = BuildTree(s, n);
            return static_cast<double>(ReplayOracle<Sum<float>>(t, std::span<const float>(xf)).s);
          },
          &want);
      const double t_fast = b.Time(
          b.repeats,
          [&] { return static_cast<double>(Replay<Sum<float>>(s, std::span<const float>(xf)).s); },
          &got);
      b.Add("oracle replay", "fp32", text, t_oracle);
      std::string check = b.Same(got, want);
      if (s == simd_schedule)
        check += ScalarTraits<double>::BitEqual(got, simd32_value) ? ", = simd" : ", simd MISMATCH";
      b.Add("fast replay", "fp32", text, t_fast, check);
      const std::string where = std::string(text) + " fp32 n=" + std::to_string(n);
      targets.Ratio("fast replay / simd fp32, " + where, t_fast / simd32, 10, true);
      if (std::string(text) == "pairwise" || std::string(text) == "random:1")
        targets.Ratio("oracle / fast replay, " + where, t_oracle / t_fast, 30, false);
    }

    // EmulatedOracle bf16 and fp16, rne and rz.
    auto emulated = [&](auto tag, auto mode, const Format& f) {
      using Tag = decltype(tag);
      constexpr Rounding R = decltype(mode)::value;
      std::vector<double> oracle_ns, fast_ns;
      EmulatedRows<Tag, R>(b, x, f, oracle_ns, fast_ns);
      const std::string name =
          f.name + "/" + std::string(RoundingName(R)) + " n=" + std::to_string(n);
      for (std::size_t k = 0; k < std::size(kSchedules); ++k) {
        const std::string where = std::string(kSchedules[k]) + " " + name;
        targets.Ratio("fast emulated / simd fp32, " + where, fast_ns[k] / simd32, 25, true);
        if (k == 0) targets.Ratio("fast emulated seq ns/elem, " + name, fast_ns[k], 8, true);
        if (k == 2 || k == 3)
          targets.Ratio("oracle / fast emulated, " + where, oracle_ns[k] / fast_ns[k], 30, false);
      }
    };
    using Rne = std::integral_constant<Rounding, Rounding::kNearestEven>;
    using Rz = std::integral_constant<Rounding, Rounding::kTowardZero>;
    emulated(BF16Tag{}, Rne{}, BF16());
    emulated(BF16Tag{}, Rz{}, BF16());
    emulated(Fp16Tag{}, Rne{}, Fp16());
    emulated(Fp16Tag{}, Rz{}, Fp16());

    // References on the same n doubles.
    double exact_mpfr = 0, exact_fast = 0, plain = 0;
    const double t_ref = b.Time(
        b.repeats, [&] { return reference::ReferenceSum(x).as_double[0]; }, &exact_mpfr);
    const double t_fast_ref = b.Time(
        b.repeats, [&] { return reference::ReferenceSumFast(x).as_double[0]; }, &exact_fast);
    std::vector<__mpfr_struct> terms(n);
    std::vector<mpfr_ptr> ptrs(n);
    for (std::uint64_t i = 0; i < n; ++i) {
      mpfr_init2(&terms[i], 53);
      mpfr_set_d(&terms[i], x[i], MPFR_RNDN);
      ptrs[i] = &terms[i];
    }
    const double t_mpfr_sum = b.Time(
        b.repeats,
        [&] {
          mpfr_t out;
          mpfr_init2(out, 53);
          mpfr_sum(out, ptrs.data(), n, MPFR_RNDN);
          const double d = mpfr_get_d(out, MPFR_RNDN);
          mpfr_clear(out);
          return d;
        },
        &plain);
    for (auto& t : terms) mpfr_clear(&t);
    b.Add("reference sum, exact tier (ReferenceSum)", "fp64", "-", t_ref);
    b.Add("reference sum, fast exact (ReferenceSumFast)", "fp64", "-", t_fast_ref,
          b.Same(exact_fast, exact_mpfr));
    b.Add("plain mpfr_sum, 53-bit result", "fp64", "-", t_mpfr_sum, b.Same(plain, exact_mpfr));
    const double t_welford = b.Time(1, [&] { return reference::ReferenceWelford(x).as_double[0]; });
    const double t_norm2 = b.Time(1, [&] { return reference::ReferenceNorm2(x).as_double[0]; });
    const double t_lse = b.Time(1, [&] { return reference::ReferenceLse(x).as_double[0]; });
    double w_want = 0, w_got = 0, q_want = 0, q_got = 0;
    (void)b.Time(
        1, [&] { return reference::ReferenceWelford(x).as_double[1]; }, &w_want);
    (void)b.Time(
        1, [&] { return reference::ReferenceNorm2(x).as_double[0]; }, &q_want);
    const double t_welford_fast = b.Time(
        b.repeats, [&] { return reference::ReferenceWelfordFast(x).as_double[1]; }, &w_got);
    const double t_norm2_fast = b.Time(
        b.repeats, [&] { return reference::ReferenceNorm2Fast(x).as_double[0]; }, &q_got);
    b.Add("reference welford (exact tier)", "fp64", "-", t_welford);
    b.Add("reference welford, fast exact (ReferenceWelfordFast)", "fp64", "-", t_welford_fast,
          b.Same(w_got, w_want));
    b.Add("reference norm2 (exact tier)", "fp64", "-", t_norm2);
    b.Add("reference norm2, fast exact (ReferenceNorm2Fast)", "fp64", "-", t_norm2_fast,
          b.Same(q_got, q_want));
    b.Add("reference lse (fast tier)", "fp64", "-", t_lse);
    // dot over the pairs (x_i, x_{n-1-i}): the exact tier against its superaccumulator twin.
    std::vector<ValuePair<double>> pairs(n);
    for (std::uint64_t i = 0; i < n; ++i) pairs[i] = {x[i], x[n - 1 - i]};
    double d_want = 0, d_got = 0;
    const double t_dot = b.Time(
        1, [&] { return reference::ReferenceDot(pairs).as_double[0]; }, &d_want);
    const double t_dot_fast = b.Time(
        b.repeats, [&] { return reference::ReferenceDotFast(pairs).as_double[0]; }, &d_got);
    b.Add("reference dot (exact tier)", "fp64", "-", t_dot);
    b.Add("reference dot, fast exact (ReferenceDotFast)", "fp64", "-", t_dot_fast,
          b.Same(d_got, d_want));
    const std::string nn = " n=" + std::to_string(n);
    targets.Ratio("fast exact sum / simd fp64 sum," + nn, t_fast_ref / simd64, 10, true);
    targets.Ratio("mpfr_sum / fast exact sum," + nn, t_mpfr_sum / t_fast_ref, 5, false);
    if (xsum) {
      double peer = 0;
      const double t_xsum = b.Time(
          b.repeats, [&] { return xsum->Sum(x); }, &peer);
      b.Add("peer: xsum large accumulator (--xsum)", "fp64", "-", t_xsum, b.Same(peer, exact_mpfr));
      targets.Ratio("fast exact sum / xsum large," + nn, t_fast_ref / t_xsum, 2, true);
    }
    targets.Ratio("welford reference (fast exact) ns/elem," + nn, t_welford_fast, 15, true);
    targets.Ratio("norm2 reference (fast exact) ns/elem," + nn, t_norm2_fast, 15, true);
    targets.Ratio("lse reference ns/elem," + nn, t_lse, 15, true);
    targets.Ratio("dot reference (fast exact) ns/pair," + nn, t_dot_fast, 15, true);
    if (!args.Has("no-trial")) TrialRows(b, targets, n);
    seconds_per_element =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - size_start).count() /
        static_cast<double>(n);
  }

  std::cout << "carrier replay-bench: Sum over normal(0,1) fp32 values (seed " << seed
            << "), one thread, target " << simd::CurrentTarget() << "; median of " << b.repeats
            << " run(s) (oracle rows: " << b.oracle_repeats << ")\n\n";
  std::cout << std::left << std::setw(10) << "n" << std::setw(54) << "what" << std::setw(10)
            << "dtype" << std::setw(12) << "schedule" << std::setw(12) << "ns/elem" << std::setw(12)
            << "x simd32"
            << "check\n"
            << std::string(128, '-') << "\n";
  double simd32 = 1;
  for (const ReplayBenchRow& r : b.rows) {
    if (r.what == "simd kernel Reduce<Sum<float>>") simd32 = r.ns;
    std::cout << std::left << std::setw(10) << r.n << std::setw(54) << r.what << std::setw(10)
              << r.dtype << std::setw(12) << r.schedule << std::setw(12) << Fixed(r.ns, 3)
              << std::setw(12) << Fixed(r.ns / simd32, 1) << r.check << "\n";
  }
  std::cout << "\ntargets\n";
  for (const auto& line : targets.lines) std::cout << "  " << line << "\n";
  if (b.mismatch) {
    std::cout << "MISMATCH: a fast result differs from its oracle (see the check column)\n";
    return 1;
  }
  return 0;
}

#else

int RunReplayBench(const std::vector<std::string>& argv) {
  Args args("replay-bench", argv, {"n", "seed", "repeats", "oracle-repeats"});
  args.Fail("replay-bench needs the SIMD kernels (Highway) and MPFR in this build");
}

#endif

}  // namespace carrier::cli
