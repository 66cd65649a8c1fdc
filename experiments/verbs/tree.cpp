// carrier tree: draw the merge tree a schedule builds over n inputs.
#include <iostream>

#include "cli/args.hpp"
#include "core/merge_tree.hpp"
#include "verbs/verbs.hpp"

namespace carrier::cli {

int RunTree(const std::vector<std::string>& argv) {
  Args args("tree", argv, {"schedule", "n", "format", "max-nodes"});
  const std::string text = args.Require("schedule");
  const std::uint64_t n = args.RequireCount("n");
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
  const MergeTree tree = BuildTree(s, n);
  if (format == "dot") {
    std::cout << ToDot(tree);
  } else if (format == "json") {
    std::cout << ToJson(tree);
  } else {
    std::cout << ToText(tree, max_nodes);
  }
  return 0;
}

}  // namespace carrier::cli
