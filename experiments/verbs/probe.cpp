// carrier probe: recover the merge tree of a black-box sum (FPRev's masked inputs), verify it
// by replay on random data, and name the schedule that builds the same tree, if any.
//
// The numerics live in core/fprev.hpp (recovery) and core/tree_hash.hpp (identity); the
// targets in experiments/probe/targets.cpp. This file parses flags, drives and prints.
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

}  // namespace

int RunProbe(const std::vector<std::string>& argv_in) {
  std::vector<std::string> argv = argv_in;
  for (auto& a : argv)
    if (a == "-o") a = "--output";
  Args args("probe", argv, {"dtype", "n", "format", "output", "verify", "seed", "timeout"}, {}, 1);
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
  if (n >= (std::uint64_t{1} << (p - 1)))
    args.Fail("--n must be below 2^" + std::to_string(p - 1) + " for " + dtype +
              " (the masks' sums of ones must be exact)");
  // Every tree costs FPRev at least n - 1 target calls of n values each (a sequential sum; a
  // balanced one about (n/2) log2 n calls): past 3.6e13 evaluated values, ten hours even at
  // 1 ns per value, the probe cannot finish.
  constexpr double kMaxValues = 3.6e13;
  if (static_cast<double>(n - 1) * static_cast<double>(n) > kMaxValues)
    args.Fail("--n " + std::to_string(n) + " needs at least " + std::to_string(n - 1) +
              " target calls of " + std::to_string(n) +
              " values each, more than ten hours even at 1 ns per value: use n <= " +
              std::to_string(static_cast<std::uint64_t>(std::sqrt(kMaxValues))));
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
  BinaryTree recovered;
  // Progress on a terminal: the calls sent so far against FPRev's counts for the two extremes.
  std::atomic<std::uint64_t> sent{0};
  const auto balanced = static_cast<std::uint64_t>(std::ceil(
      static_cast<double>(n) / 2 * std::log2(static_cast<double>(std::max<std::uint64_t>(n, 2)))));
  std::optional<Ticker> ticker;
  ticker.emplace("carrier probe " + target_text + " n = " + std::to_string(n), 0.0, [&] {
    return "; " + std::to_string(sent.load()) + " target calls (a balanced tree needs about " +
           std::to_string(balanced) + ", a sequential one " + std::to_string(n - 1) + ")";
  });
  try {
    recovered = RecoverSumTree(
        n,
        [&](std::uint64_t i, const std::vector<std::uint64_t>& js) {
          sent += js.size();
          return target->Masks(i, m, js);
        },
        stats);
  } catch (const ProbeError& e) {
    args.Fail(probe::OneLine(target_text) + " (" + dtype + "): " + e.what() + " after " +
              std::to_string(stats.calls) + " calls");
  } catch (const probe::TargetError& e) {
    args.Fail(e.what());
  }
  ticker.reset();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const MergeTree tree = ToMergeTree(recovered, "probe:" + target_text);

  // FPRev's check: the recovered tree, replayed, gives the target's bits on random data.
  std::uint64_t agree = 0;
  std::string first_mismatch;
  for (std::uint64_t k = 0; k < verify; ++k) {
    std::vector<double> x(n);
    std::uint64_t state = seed * 0x9e3779b97f4a7c15ULL + k;
    for (auto& v : x) {
      state = tree_detail::Mix(state);
      const double u = static_cast<double>(state >> 11) * 0x1.0p-53;
      const double e = std::ldexp(1.0, static_cast<int>(state % 16) - 8);
      v = (2 * u - 1) * e;
      if (dtype == "fp32") v = static_cast<float>(v);
    }
    double want = 0;
    try {
      want = target->Values(x);
    } catch (const probe::TargetError& e) {
      args.Fail(e.what());
    }
    const double got = dtype == "fp32" ? ReplayAs<float>(tree, x) : ReplayAs<double>(tree, x);
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
         << "calls           " << stats.calls << " target calls in " << stats.batches
         << " batches (FPRev masks +-2^" << std::ilogb(m) << " among ones), " << seconds << " s\n"
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
    "usage: carrier probe TARGET --dtype fp32|fp64 --n N [--format text|json|dot]\n"
    "                     [-o FILE] [--verify K] [--seed S] [--timeout SECONDS]\n"
    "\n"
    "Recovers the merge tree of a black-box sum of N values by FPRev's method (Xie et al.,\n"
    "arXiv 2411.00442; core/fprev.hpp): inputs that are all 1 except +M at i and -M at j reveal\n"
    "the size of the subtree where i and j meet. Prints the number of target calls (n - 1 for a\n"
    "sequential sum, about (n/2) log2 n for a balanced one), checks the tree by replaying it on K\n"
    "random inputs (default 8; exit 1 unless all agree bit for bit), names the schedules that\n"
    "build the same tree, and prints the tree (text, JSON or DOT). With -o FILE the tree goes to\n"
    "FILE (JSON by default) and can be replayed: carrier eval --schedule file:FILE ...\n"
    "\n"
    "Targets (run through /usr/bin/python3 experiments/probe/target.py where named so):\n"
    "  numpy.sum                 numpy.sum of a contiguous array\n"
    "  numpy.add.reduce:strided  numpy.add.reduce of a view with stride 2\n"
    "  python.sum                the built-in sum over Python floats (fp64 arithmetic)\n"
    "  torch.sum                 torch.sum of a CPU tensor (needs python3-torch)\n"
    "  torch.logsumexp           refused: exp terms are positive, the masks cannot cancel\n"
    "  LIB.so:SYMBOL             dlopen'd function with the C signature T f(const T*, size_t)\n"
    "  exec:COMMAND              sh -c COMMAND per call: the N values on its stdin, one per\n"
    "                            line as C99 hex floats (%a); it prints one number (decimal or\n"
    "                            hex) on stdout and exits 0. A call running past --timeout\n"
    "                            (default 300 s) is killed; a failure is reported with its exit\n"
    "                            code and the start of its stderr\n"
    "A target that is not a tree of binary additions in the format (a compensated or exact\n"
    "sum, a wider accumulator) is reported as such (exit 2). max and other exact reductions have\n"
    "no observable tree.\n";

}  // namespace carrier::cli
