// carrier tree: draw the merge tree a schedule builds over n inputs.
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/args.hpp"
#include "core/merge_tree.hpp"
#include "core/tree_hash.hpp"
#include "verbs/verbs.hpp"

namespace carrier::cli {

int RunTree(const std::vector<std::string>& argv) {
  Args args("tree", argv, {"schedule", "n", "format", "max-nodes"});
  const std::string text = args.Require("schedule");
  // A file: tree carries its own n; --n, when given, must match it.
  const bool from_file = text.rfind("file:", 0) == 0;
  std::uint64_t n = from_file && !args.Get("n") ? 0 : args.RequireCount("n");
  if (from_file && !args.Get("n")) {
    try {
      std::ifstream f(text.substr(5), std::ios::binary);
      std::ostringstream ss;
      ss << f.rdbuf();
      if (!f) throw ScheduleError(text + ": cannot open the tree file");
      n = TreeFromJson(ss.str(), text).n;
    } catch (const ScheduleError& e) {
      args.Fail(e.what());
    }
  }
  const std::string format = args.Choice("format", {"text", "dot", "json"}, "text");
  const std::uint64_t max_nodes = args.Count("max-nodes", 256);
  constexpr std::uint64_t kMaxN = std::uint64_t{1} << 30;
  if (n > kMaxN) args.Fail("--n " + std::to_string(n) + " is above the limit 2^30 for drawing");
  Schedule s;
  try {
    s = ParseSchedule(text);
  } catch (const ScheduleError& e) {
    args.Fail(e.what());
  }
  MergeTree tree;
  try {
    tree = BuildTree(s, n);
  } catch (const ScheduleError& e) {
    args.Fail(e.what());
  }
  // The tree's identity (core/tree_hash.hpp): exact form, and the binary form that decides
  // the bits of carriers with Push == Combine(s, Lift(x)) (sum, max, ...).
  const std::string hash = TreeHash(tree), binary = TreeHash(tree, TreeForm::kBinary);
  if (format == "dot") {
    std::cout << ToDot(tree);
  } else if (format == "json") {
    std::cout << "{\"tree_hash\":\"" << hash << "\",\"binary_hash\":\"" << binary << "\","
              << ToJson(tree).substr(1);
  } else {
    const std::string text_out = ToText(tree, max_nodes);
    const std::size_t cut = text_out.find("permutes inputs");
    const std::size_t eol = text_out.find('\n', cut);
    std::cout << text_out.substr(0, eol + 1) << "tree hash       " << hash << " (binary form "
              << binary << ")\n"
              << text_out.substr(eol + 1);
  }
  return 0;
}

}  // namespace carrier::cli
