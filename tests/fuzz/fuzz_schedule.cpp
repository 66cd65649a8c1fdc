// Fuzz target: schedule text (core/schedule.hpp, every kind: seq reverse pairwise blocked
// strided random omp cuda). Properties: bad text is a ScheduleError and nothing else; accepted
// text prints to a canonical text that parses back to the same Schedule and prints the same;
// the trees it builds for small n are valid merge orders (core ValidateTree) or a ScheduleError
// (a cuda launch that does not fit), never any other exception.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/merge_tree.hpp"
#include "core/schedule.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  carrier::Schedule s;
  try {
    s = carrier::ParseSchedule(text);
  } catch (const carrier::ScheduleError&) {
    return 0;
  }
  const std::string canon = carrier::ToString(s);
  carrier::Schedule again;
  try {
    again = carrier::ParseSchedule(canon);
  } catch (const carrier::ScheduleError& e) {
    FUZZ_CHECK(false,
               "'" + text + "' printed as '" + canon + "', which does not parse: " + e.what());
  }
  FUZZ_CHECK(again == s, "'" + text + "' -> '" + canon + "' parses to another schedule");
  FUZZ_CHECK(carrier::ToString(again) == canon,
             "'" + canon + "' prints as '" + carrier::ToString(again) + "'");
  // file:PATH reads a file when built: the fuzzer must not open arbitrary paths (/dev/zero);
  // the tree reader has its own target (fuzz_tree_json).
  if (s.kind() == carrier::ScheduleKind::kFile) return 0;
  for (std::uint64_t n : {1u, 2u, 3u, 5u, 8u, 17u, 64u, 100u}) {
    carrier::MergeTree t;
    try {
      t = carrier::BuildTree(s, n);
    } catch (const carrier::ScheduleError&) {
      continue;
    }
    const std::string why = carrier::ValidateTree(t);
    FUZZ_CHECK(why.empty(), "BuildTree('" + canon + "', " + std::to_string(n) + "): " + why);
    FUZZ_CHECK(t.schedule == canon, "tree of '" + canon + "' records '" + t.schedule + "'");
    FUZZ_CHECK(t.n == n, "BuildTree('" + canon + "', " + std::to_string(n) +
                             ") has n = " + std::to_string(t.n));
  }
  return 0;
}
