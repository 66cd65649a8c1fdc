// carrier tree: draw the merge tree a schedule builds over n inputs.
//
// Large n: the tree is explicit (one node per chain and per combine, about 96 bytes each with
// its statistics; DOT and JSON add the text), so before building it the verb builds the same
// schedule over a sample of n0 = min(n, 2^16) inputs, scales the node count and the time by
// n / n0 (node counts grow at most linearly in n), and refuses with the numbers when the
// estimate exceeds half the memory available (/proc/meminfo MemAvailable) or --max-seconds
// (default 1800; 0: no limit).
// Otherwise, when the estimate is above two seconds, a progress line runs on the terminal
// (cli/progress.hpp).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/args.hpp"
#include "cli/cost.hpp"
#include "cli/progress.hpp"
#include "core/merge_tree.hpp"
#include "core/schedule.hpp"
#include "core/tree_hash.hpp"
#include "io/json.hpp"
#include "io/tree_file.hpp"
#include "verbs/verbs.hpp"

namespace carrier::cli {

namespace {

// Bytes the kernel says a process may still allocate without swapping; 0 when unknown.
double AvailableBytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  double kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * page : 0;
}

std::string Gb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
  return buf;
}

}  // namespace

int RunTree(const std::vector<std::string>& argv) {
  Args args("tree", argv, {"schedule", "n", "format", "max-nodes", "max-seconds"});
  const double max_seconds = args.Seconds("max-seconds", kDefaultMaxSeconds);
  const std::string text = args.Require("schedule");
  // A file: tree carries its own n; --n, when given, must match it.
  const bool from_file = text.rfind("file:", 0) == 0;
  std::uint64_t n = from_file && !args.Get("n") ? 0 : args.RequireCount("n");
  if (from_file && !args.Get("n")) {
    try {
      n = io::ReadTreeFile(text.substr(5), text).n;
    } catch (const ScheduleError& e) {
      args.Fail(e.what());
    } catch (const std::runtime_error& e) {
      args.Fail(std::string("file:") + e.what());
    }
  }
  const std::string format = args.Choice("format", {"text", "dot", "json"}, "text");
  const std::uint64_t max_nodes = args.Count("max-nodes", 256);
  constexpr std::uint64_t kMaxN = std::uint64_t{1} << 30;
  if (n > kMaxN) args.Fail("--n " + std::to_string(n) + " is above the limit 2^30 for drawing");
  Schedule s;
  try {
    s = io::LoadSchedule(text);
  } catch (const ScheduleError& e) {
    args.Fail(e.what());
  }
  // The tree's identity (core/tree_hash.hpp): exact form, and the binary form that decides
  // the bits of carriers with Push == Combine(s, Lift(x)) (sum, max, ...).
  auto build = [&](std::uint64_t m) {
    MergeTree t;
    try {
      t = BuildTree(s, m);
    } catch (const ScheduleError& e) {
      args.Fail(e.what());
    }
    return t;
  };
  auto render = [&](const MergeTree& tree) -> std::string {
    const std::string hash = TreeHash(tree), binary = TreeHash(tree, TreeForm::kBinary);
    if (format == "dot") return ToDot(tree);
    if (format == "json")
      return "{\"tree_hash\":" + io::JsonQuote(hash) + ",\"binary_hash\":" + io::JsonQuote(binary) +
             "," + ToJson(tree).substr(1);
    const std::string text_out = ToText(tree, max_nodes);
    const std::size_t cut = text_out.find("permutes inputs");
    const std::size_t eol = text_out.find('\n', cut);
    return text_out.substr(0, eol + 1) + "tree hash       " + hash + " (binary form " + binary +
           ")\n" + text_out.substr(eol + 1);
  };
  // A saved tree has one n: it is drawn as it is, without a sample.
  if (s.kind() == ScheduleKind::kFile) {
    std::cout << render(build(n));
    return 0;
  }
  // Estimate from a sample (see the file comment), then refuse or show progress.
  const std::uint64_t n0 = std::min<std::uint64_t>(n, std::uint64_t{1} << 16);
  const auto t0 = std::chrono::steady_clock::now();
  const MergeTree sample = build(n0);
  const std::string sample_text = render(sample);
  const double sample_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double scale = static_cast<double>(n) / static_cast<double>(n0);
  const double nodes = static_cast<double>(sample.NodeCount()) * scale;
  const double text_bytes = format == "text" ? 0 : static_cast<double>(sample_text.size()) * scale;
  // 96 bytes a node: a numpy tree over 2^24 inputs (2.1 million nodes) peaks at 188 MB,
  // 90 bytes a node (chains, combines, the statistics' per-node arrays, the vectors' slack).
  const double bytes = nodes * 96 + 2 * text_bytes;
  const double eta =
      sample_s * scale *
      std::max(1.0, std::log2(static_cast<double>(n)) / std::log2(static_cast<double>(n0) + 1));
  const double avail = AvailableBytes();
  std::ostringstream estimate;
  estimate.precision(2);
  estimate << "schedule " << ToString(s) << " over n = " << n << " builds about " << nodes
           << " nodes (" << Gb(bytes) << ", about " << std::llround(eta)
           << " s; estimated from n = " << n0 << ")";
  // Half of what is available: the machine keeps room for everything else running on it.
  if (avail > 0 && bytes > avail / 2) {
    const auto fits = static_cast<std::uint64_t>(static_cast<double>(n) * avail / 2 / bytes);
    args.Fail(estimate.str() + ", more than half the " + Gb(avail) +
              " of memory available: use n <= " + std::to_string(fits) +
              (format == "text" ? "" : " or --format text"));
  }
  if (max_seconds > 0 && eta > max_seconds)
    args.Fail(
        estimate.str() + ", past the limit of " + SecondsText(max_seconds) +
        " (--max-seconds): use n <= " +
        std::to_string(static_cast<std::uint64_t>(static_cast<double>(n) * max_seconds / eta)));
  std::optional<Ticker> ticker;
  if (eta > 2) ticker.emplace("carrier tree: " + estimate.str(), eta);
  if (n == n0) {
    ticker.reset();
    std::cout << sample_text;
    return 0;
  }
  const MergeTree tree = build(n);
  const std::string out = render(tree);
  ticker.reset();
  std::cout << out;
  return 0;
}

}  // namespace carrier::cli
