// carrier probe: recover the merge tree of a black-box sum (FPRev's masked inputs), verify it
// by replay on random data, and name the schedule that builds the same tree, if any.
//
// The numerics live in core/fprev.hpp (recovery) and core/tree_hash.hpp (identity); the
// targets in experiments/probe/targets.cpp. This file parses flags, drives and prints.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/args.hpp"
#include "cli/progress.hpp"
#include "core/carriers/sum.hpp"
#include "core/fprev.hpp"
#include "core/replay.hpp"
#include "core/tree_hash.hpp"
#include "io/json.hpp"
#include "probe/targets.hpp"
#include "verbs/verbs.hpp"

namespace carrier::cli {

namespace {

template <class T>
double ReplayAs(const MergeTree& t, const std::vector<double>& x) {
  std::vector<T> v(x.begin(), x.end());
  return static_cast<double>(ReplayResult<Sum<T>>(t, std::span<const T>(v)));
}

bool SameBits(double a, double b) { return ScalarTraits<double>::BitEqual(a, b); }

// Random input k of a stream: signs mixed, magnitudes over 2^-8..2^7, stored in the format.
std::vector<double> RandomInput(std::uint64_t n, std::uint64_t seed, std::uint64_t k, bool fp32) {
  std::vector<double> x(n);
  std::uint64_t state = seed * 0x9e3779b97f4a7c15ULL + k;
  for (auto& v : x) {
    state = tree_detail::Mix(state);
    const double u = static_cast<double>(state >> 11) * 0x1.0p-53;
    const double e = std::ldexp(1.0, static_cast<int>(state % 16) - 8);
    v = (2 * u - 1) * e;
    if (fp32) v = static_cast<float>(v);
  }
  return x;
}

std::string Seconds(double s) {
  std::ostringstream os;
  os.precision(s < 10 ? 2 : 3);
  os << s << " s";
  return os.str();
}

// From this n on, --method auto proves a library schedule before trying FPRev's recursion
// (whose Theta(n log n) calls of n values each pass minutes here).
constexpr std::uint64_t kLibraryFrom = 1 << 14;
constexpr std::uint64_t kCalibrationCalls = 16;

}  // namespace

int RunProbe(const std::vector<std::string>& argv_in) {
  std::vector<std::string> argv = argv_in;
  for (auto& a : argv)
    if (a == "-o") a = "--output";
  Args args("probe", argv,
            {"dtype", "n", "format", "output", "verify", "seed", "timeout", "method"}, {}, 1);
  if (args.Positional().empty())
    args.Fail(
        "give a TARGET: numpy.sum numpy.add.reduce:strided python.sum torch.sum "
        "torch.logsumexp LIB.so:SYMBOL exec:COMMAND");
  const std::string target_text = args.Positional()[0];
  const std::string dtype = args.Choice("dtype", {"fp32", "fp64"}, "");
  if (dtype.empty()) args.Require("dtype");
  const std::uint64_t n = args.RequireCount("n");
  if (n == 0) args.Fail("--n must be at least 1");
  const int p = dtype == "fp32" ? 24 : 53;
  const bool fp32 = dtype == "fp32";
  if (n >= (std::uint64_t{1} << (p - 1)))
    args.Fail("--n must be below 2^" + std::to_string(p - 1) + " for " + dtype +
              " (the masks' sums of ones must be exact)");
  const std::string method = args.Choice("method", {"auto", "fprev", "library"}, "auto");
  // Every tree costs FPRev at least n - 1 target calls of n values each (a sequential sum; a
  // balanced one about (n/2) log2 n calls): past 3.6e13 evaluated values, ten hours even at
  // 1 ns per value, the probe cannot finish.
  constexpr double kMaxValues = 3.6e13;
  if (method == "fprev" && static_cast<double>(n - 1) * static_cast<double>(n) > kMaxValues)
    args.Fail("--n " + std::to_string(n) + " needs at least " + std::to_string(n - 1) +
              " target calls of " + std::to_string(n) +
              " values each, more than ten hours even at 1 ns per value: use n <= " +
              std::to_string(static_cast<std::uint64_t>(std::sqrt(kMaxValues))) +
              " or --method library");
  const auto output = args.Get("output");
  const std::string format =
      args.Choice("format", {"text", "json", "dot"}, output ? "json" : "text");
  const std::uint64_t verify = args.Count("verify", 8);
  const std::uint64_t seed = args.Count("seed", 1);
  if (target_text == "torch.logsumexp")
    args.Fail(
        "torch.logsumexp: its terms exp(x - max) are positive, so FPRev's +M/-M masks "
        "cannot cancel and its tree is not observable this way (core/fprev.hpp)");

  const double timeout = args.Seconds("timeout", probe::kDefaultTargetTimeoutSeconds);
  if (timeout <= 0) args.Fail("--timeout must be more than 0 seconds");
  std::unique_ptr<probe::Target> target;
  try {
    target = probe::MakeTarget(target_text, dtype, n, timeout);
  } catch (const probe::TargetError& e) {
    args.Fail(e.what());
  }
  const double m = MaskMagnitude(n, p);
  ProbeStats stats;
  const auto t0 = std::chrono::steady_clock::now();
  auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  // Every call to the target goes through here: progress counts them, batches go whole.
  std::atomic<std::uint64_t> sent{0};
  auto evaluate = [&](const std::vector<MaskedInput>& batch) {
    std::vector<double> out;
    for (std::size_t at = 0; at < batch.size(); at += probe::kMaxBatch) {
      const std::size_t k = std::min(probe::kMaxBatch, batch.size() - at);
      const std::vector<MaskedInput> part(batch.begin() + at, batch.begin() + at + k);
      const std::vector<double> got = target->Evaluate(part);
      out.insert(out.end(), got.begin(), got.end());
      sent += k;
    }
    return out;
  };
  auto fprev_mask = [&](std::uint64_t i, std::uint64_t j) {
    return MaskedInput{1.0, {{i, 1, 1, m}, {j, 1, 1, -m}}};
  };
  auto values = [&](const std::vector<double>& x) {
    try {
      return target->Values(x);
    } catch (const probe::TargetError& e) {
      args.Fail(e.what());
    }
    return 0.0;
  };

  // Calibration: one round trip of kCalibrationCalls masks (after one call to warm up) gives
  // the cost of one call in a batch, for the estimates.
  double per_call = 0;
  if (n >= 2) {
    try {
      evaluate({fprev_mask(0, n - 1)});  // a first call may load libraries
    } catch (const probe::TargetError& e) {
      args.Fail(e.what());
    }
    const auto c0 = std::chrono::steady_clock::now();
    try {
      std::vector<MaskedInput> batch;
      for (std::uint64_t k = 0; k < kCalibrationCalls; ++k)
        batch.push_back(fprev_mask(0, 1 + k % (n - 1)));
      evaluate(batch);
    } catch (const probe::TargetError& e) {
      args.Fail(e.what());
    }
    per_call = since(c0) / kCalibrationCalls;
  }
  const std::uint64_t calibration = sent.load();

  // The estimate goes to a terminal before the work starts (and into the report at the end).
  const bool on_terminal = isatty(STDERR_FILENO) != 0;
  BinaryTree recovered;
  bool have_tree = false;
  std::string method_note = "FPRev's recursion";
  double estimate_calls = 0;
  std::string planned_text;
  std::atomic<std::uint64_t> planned{0};
  auto start_ticker = [&](const std::string& what, double eta) {
    return std::make_unique<Ticker>(
        "carrier probe " + target_text + " n = " + std::to_string(n) + ", " + what, eta, [&] {
          const std::uint64_t done = sent.load() - calibration;
          return "; " + std::to_string(done) + " target calls" +
                 (planned.load() ? " of " + std::to_string(planned.load()) : planned_text);
        });
  };

  // Library path: the candidates that give the target's bits on random inputs, the first one
  // proven exactly by packed masks (core/fprev.hpp, ProveSumTree).
  if (n >= 3 && (method == "library" || (method == "auto" && n >= kLibraryFrom))) {
    const std::vector<std::string> names = probe::CandidateSchedules(n);
    std::vector<std::vector<double>> xs;
    std::vector<double> ys;
    // Screening inputs: one of mixed signs and magnitudes, two of positive values in [1, 2),
    // whose running sums round at nearly every addition (the most order-sensitive sums), and
    // kWindows sparse ones: 256 such values in one window, zeros elsewhere, which see the
    // order inside the window that a sum of all n values rounds away (zeros add exactly).
    auto positive = [&](double v) {  // v in (-128, 128) -> (1, 2), held by the format
      return fp32 ? static_cast<double>(static_cast<float>(1.5 + v / 256)) : 1.5 + v / 256;
    };
    for (std::uint64_t k = 0; k < 3; ++k) {
      xs.push_back(RandomInput(n, seed + 0x5eed, k, fp32));
      if (k > 0)
        for (double& v : xs.back()) v = positive(v);
      ys.push_back(values(xs.back()));
    }
    constexpr std::uint64_t kWindows = 8, kWindow = 256;
    std::vector<MaskedInput> windows;
    for (std::uint64_t w = 0; w < kWindows; ++w) {
      const std::vector<double> r = RandomInput(kWindow + 1, seed + 0x3a11, w, fp32);
      const std::uint64_t len = std::min(kWindow, n);
      const std::uint64_t start =
          (static_cast<std::uint64_t>(std::fabs(r[kWindow]) * 1e6) * 7919) % (n - len + 1);
      MaskedInput in{0.0, {}};
      for (std::uint64_t k = 0; k < len; ++k) in.runs.push_back({start + k, 1, 1, positive(r[k])});
      windows.push_back(std::move(in));
    }
    try {
      const std::vector<double> got = evaluate(windows);
      for (std::uint64_t w = 0; w < kWindows; ++w) {
        xs.push_back(Materialize(windows[w], n));
        ys.push_back(got[w]);
      }
    } catch (const probe::TargetError& e) {
      args.Fail(e.what());
    }
    // Candidates that pass the random inputs are proven in library order until one holds (two
    // random sums cannot see a difference deep in a tree of 10^6 inputs; the proof can).
    std::string failures;
    std::uint64_t screened = 0;
    constexpr int kMaxProofs = 8;
    int proofs = 0;
    for (const std::string& name : names) {
      if (proofs == kMaxProofs) break;
      MergeTree c;
      try {
        c = BuildTree(name, n);
      } catch (const ScheduleError&) {
        continue;
      }
      ++screened;
      bool same = true;
      for (std::size_t k = 0; k < xs.size() && same; ++k)
        same = SameBits(fp32 ? ReplayAs<float>(c, xs[k]) : ReplayAs<double>(c, xs[k]), ys[k]);
      if (!same) continue;
      ++proofs;
      const BinaryTree predicted = ToBinaryTree(c);
      ProbeStats plan;
      std::string why = ProveSumTree(predicted, p, {}, plan);
      if (why.empty()) {
        planned = plan.calls;
        estimate_calls = static_cast<double>(plan.calls);
        if (on_terminal)
          std::cerr << "carrier probe: proving " << name << ": " << plan.calls
                    << " target calls in " << plan.batches << " rounds, about "
                    << Seconds(estimate_calls * per_call) << " at " << Seconds(per_call)
                    << " per call\n";
        ProbeStats proof;
        {
          const auto ticker = start_ticker("proving " + name, estimate_calls * per_call);
          try {
            why = ProveSumTree(predicted, p, evaluate, proof);
          } catch (const probe::TargetError& e) {
            args.Fail(e.what());
          }
        }
        stats.calls += proof.calls;
        stats.batches += proof.batches;
      }
      if (why.empty()) {
        recovered = predicted;
        have_tree = true;
        method_note = "proof of the library schedule " + name + " (" + std::to_string(screened) +
                      " candidates screened on 3 random inputs and 8 windows" +
                      (failures.empty() ? "" : "; refuted: " + failures) +
                      "; every subtree then checked by packed masks)";
        break;
      }
      failures += (failures.empty() ? "" : "; ") + name + ": " + why;
    }
    if (!have_tree)
      method_note = "FPRev's recursion (" +
                    (failures.empty() ? "none of " + std::to_string(screened) +
                                            " library schedules gave the target's bits on 3 "
                                            "random inputs and 8 windows"
                                      : "no library schedule proven: " + failures) +
                    ")";
    if (!have_tree && method == "library")
      args.Fail(probe::OneLine(target_text) + " (" + dtype + "): " + method_note);
  }

  if (!have_tree) {
    // FPRev: between n - 1 calls (a sequential sum) and about (n/2) log2 n (a balanced one).
    const double balanced = std::ceil(
        static_cast<double>(n) / 2 * std::log2(static_cast<double>(std::max<std::uint64_t>(n, 2))));
    estimate_calls = balanced;
    planned_text = " (a balanced tree needs about " +
                   std::to_string(static_cast<std::uint64_t>(balanced)) + ", a sequential one " +
                   std::to_string(n - 1) + ")";
    if (n >= 2 && on_terminal)
      std::cerr << "carrier probe: FPRev needs " << n - 1 << " (sequential) to about "
                << static_cast<std::uint64_t>(balanced) << " (balanced) target calls, "
                << Seconds(static_cast<double>(n - 1) * per_call) << " to "
                << Seconds(balanced * per_call) << " at " << Seconds(per_call) << " per call\n";
    const auto ticker = start_ticker("FPRev", balanced * per_call);
    try {
      recovered = RecoverSumTreeBatched(
          n,
          [&](const std::vector<MaskRequest>& requests) {
            std::vector<MaskedInput> batch;
            for (const MaskRequest& r : requests)
              for (std::uint64_t j : r.js) batch.push_back(fprev_mask(r.i, j));
            const std::vector<double> flat = evaluate(batch);
            std::vector<std::vector<double>> out;
            std::size_t at = 0;
            for (const MaskRequest& r : requests) {
              out.emplace_back(flat.begin() + at, flat.begin() + at + r.js.size());
              at += r.js.size();
            }
            return out;
          },
          stats);
    } catch (const ProbeError& e) {
      args.Fail(probe::OneLine(target_text) + " (" + dtype + "): " + e.what() + " after " +
                std::to_string(stats.calls) + " calls");
    } catch (const probe::TargetError& e) {
      args.Fail(e.what());
    }
  }
  const double seconds = since(t0);
  const MergeTree tree = ToMergeTree(recovered, "probe:" + target_text);

  // FPRev's check: the recovered tree, replayed, gives the target's bits on random data.
  std::uint64_t agree = 0;
  std::string first_mismatch;
  for (std::uint64_t k = 0; k < verify; ++k) {
    const std::vector<double> x = RandomInput(n, seed, k, fp32);
    const double want = values(x);
    const double got = fp32 ? ReplayAs<float>(tree, x) : ReplayAs<double>(tree, x);
    if (SameBits(got, want)) {
      ++agree;
    } else if (first_mismatch.empty()) {
      std::ostringstream os;
      os << "random input " << k << " (seed " << seed << "): target " << std::hexfloat << want
         << ", replay " << got;
      first_mismatch = os.str();
    }
  }
  const std::vector<std::string> named = probe::MatchingSchedules(tree);
  const std::string exact_hash = TreeHash(tree), binary_hash = TreeHash(tree, TreeForm::kBinary);

  std::ostringstream report;
  report << "target          " << target->Description() << "\n"
         << "n               " << n << "\n"
         << "method          " << method_note << "\n"
         << "calls           " << stats.calls << " target calls in " << stats.batches << " rounds, "
         << seconds
         << " s (estimate before starting: " << static_cast<std::uint64_t>(estimate_calls)
         << " calls, " << Seconds(estimate_calls * per_call) << " at " << Seconds(per_call)
         << " per call)\n"
         << "verified        " << agree << " of " << verify
         << " random inputs: replay of the recovered tree == target, bit for bit\n";
  if (!first_mismatch.empty()) report << "mismatch        " << first_mismatch << "\n";
  report << "named schedule  ";
  if (named.empty()) {
    report << "none of " << probe::CandidateCount(n) << " candidates"
           << (output ? "; replay it with --schedule file:" + *output : std::string()) << "\n";
  } else {
    for (std::size_t k = 0; k < named.size(); ++k) report << (k ? ", " : "") << named[k];
    report << " (the same tree; --schedule " << named[0] << ")\n";
  }
  report << "tree hash       " << exact_hash << " (binary form " << binary_hash << ")\n";

  std::string body;
  if (format == "dot") {
    body = ToDot(tree);
  } else if (format == "json") {
    std::string names = "[";
    for (std::size_t k = 0; k < named.size(); ++k)
      names += (k ? "," : "") + io::JsonQuote(named[k]);
    io::JsonObject probe_json;
    probe_json.String("target", target_text)
        .String("dtype", dtype)
        .Raw("calls", std::to_string(stats.calls))
        .Raw("batches", std::to_string(stats.batches))
        .Raw("verified", std::to_string(agree))
        .Raw("verify", std::to_string(verify))
        .Raw("named", names + "]")
        .String("tree_hash", exact_hash)
        .String("binary_hash", binary_hash);
    body = "{\"probe\":" + probe_json.Compact() + "," + ToJson(tree).substr(1);
  } else {
    body = report.str() + ToText(tree);
  }
  if (output) {
    std::ofstream f(*output);
    if (!f) args.Fail("cannot write --output " + *output);
    f << body;
    std::cout << report.str();
  } else {
    std::cout << body;
    if (format != "text") std::cerr << report.str();
  }
  return agree == verify ? 0 : 1;
}

}  // namespace carrier::cli

namespace carrier::cli {

const char kProbeHelp[] =
    "usage: carrier probe TARGET --dtype fp32|fp64 --n N [--method auto|fprev|library]\n"
    "                     [--format text|json|dot] [-o FILE] [--verify K] [--seed S]\n"
    "                     [--timeout SECONDS]\n"
    "\n"
    "Recovers the merge tree of a black-box sum of N values by FPRev's method (Xie et al.,\n"
    "arXiv 2411.00442; core/fprev.hpp): inputs that are all 1 except +M at i and -M at j reveal\n"
    "the size of the subtree where i and j meet. FPRev needs n - 1 target calls for a sequential\n"
    "sum and about (n/2) log2 n for a balanced one, each over all n values: hours at n = 10^6.\n"
    "--method library (the default, auto, from n = 16384) first looks for a library schedule\n"
    "(seq, pairwise, blocked, strided, canonical, numpy, torch over powers of two) that gives\n"
    "the target's bits on 3 random inputs and 8 random windows of 256 values (zeros elsewhere),\n"
    "then proves it exactly: every subtree is checked by a mask with 0 outside its parent,\n"
    "several checks packed into one call in separate bit fields (about n/4 calls for numpy's\n"
    "tree in fp32, n/10 in fp64, n - 2 for a sequential sum). When none is proven, auto falls\n"
    "back to FPRev. On a terminal the probe prints its estimate before starting (calls, and\n"
    "time from a timed batch of 16 calls) and then a progress line; the report repeats the\n"
    "estimate next to what it took. It checks the tree by replaying it on K random inputs\n"
    "(default 8; exit 1 unless all agree bit for bit), names the schedules that build the same\n"
    "tree, and prints the tree (text, JSON or DOT). With -o FILE the tree goes to FILE (JSON by\n"
    "default) and can be replayed: carrier eval --schedule file:FILE ...\n"
    "\n"
    "Targets (run through /usr/bin/python3 experiments/probe/target.py where named so):\n"
    "  numpy.sum                 numpy.sum of a contiguous array\n"
    "  numpy.add.reduce:strided  numpy.add.reduce of a view with stride 2\n"
    "  python.sum                the built-in sum over Python floats (fp64 arithmetic)\n"
    "  torch.sum                 torch.sum of a CPU tensor (needs python3-torch)\n"
    "  torch.logsumexp           refused: exp terms are positive, the masks cannot cancel\n"
    "  LIB.so:SYMBOL             dlopen'd function with the C signature T f(const T*, size_t)\n"
    "  exec:COMMAND              sh -c COMMAND once per batch of K vectors (K*N <= 2^20, K <=\n"
    "                            4096): its stdin holds the K vectors back to back, N lines\n"
    "                            each, one C99 hex float (%a) per line; CARRIER_PROBE_N=N and\n"
    "                            CARRIER_PROBE_VECTORS=K are in its environment; it prints K\n"
    "                            numbers (decimal or hex, one per vector, separated by white\n"
    "                            space) and exits 0. A process running past --timeout\n"
    "                            (default 300 s) is killed; a failure is reported with its exit\n"
    "                            code or signal and the start of its stderr\n"
    "A target that is not a tree of binary additions in the format (a compensated or exact\n"
    "sum, a wider accumulator) is reported as such (exit 2). max and other exact reductions have\n"
    "no observable tree.\n";

}  // namespace carrier::cli
