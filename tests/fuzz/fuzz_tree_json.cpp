// Fuzz target: tree JSON (core/tree_io.hpp TreeFromJson, the reader behind --schedule
// file:TREE.json). Properties: bad text is a ScheduleError and nothing else; an accepted tree
// validates (ValidateTree), prints back (ToJson) to text that is accepted again as the same tree
// (equal TreeHash, exact and binary forms, and equal n).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/merge_tree.hpp"
#include "core/tree_hash.hpp"
#include "core/tree_io.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 1 << 16) return 0;  // trees this large say nothing new about the parser
  const std::string text(reinterpret_cast<const char*>(data), size);
  carrier::MergeTree t;
  try {
    t = carrier::TreeFromJson(text, "fuzz");
  } catch (const carrier::ScheduleError&) {
    return 0;
  }
  const std::string why = carrier::ValidateTree(t);
  FUZZ_CHECK(why.empty(), "accepted tree does not validate: " + why);
  const std::string json = carrier::ToJson(t);
  carrier::MergeTree again;
  try {
    again = carrier::TreeFromJson(json, "fuzz (printed)");
  } catch (const carrier::ScheduleError& e) {
    FUZZ_CHECK(false, "accepted tree printed as JSON that does not parse: " +
                          std::string(e.what()) + "\n  " + json);
  }
  FUZZ_CHECK(again.n == t.n, "n changed through ToJson");
  FUZZ_CHECK(carrier::TreeHash(again) == carrier::TreeHash(t), "tree hash changed: " + json);
  FUZZ_CHECK(carrier::TreeHash(again, carrier::TreeForm::kBinary) ==
                 carrier::TreeHash(t, carrier::TreeForm::kBinary),
             "binary hash changed: " + json);
  return 0;
}
