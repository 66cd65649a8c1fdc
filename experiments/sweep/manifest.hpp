// experiments/sweep/manifest.hpp: manifest.json beside a sweep's trials.csv (FORMAT.md): where
// and how the numbers were made (git state, compiler and flags, CPU and SIMD target, GPU,
// library versions), which config (its text and hash), when, and how many trials.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace carrier::sweep {

struct ManifestRun {
  std::string config_path;
  std::string config_hash;
  std::string config_text;
  std::string start_time;             // UTC ISO 8601
  std::string end_time;               // empty while running: written as null
  std::uint64_t trials_total = 0;     // trials of the whole config
  std::uint64_t trials_in_shard = 0;  // trials this folder is responsible for
  std::uint64_t trials_done = 0;      // rows in trials.csv
  std::uint64_t trials_failed = 0;
  std::string shard;  // "K/N", or empty: null
  unsigned jobs = 1;
  double wall_seconds = 0;             // this invocation (a resumed run: the last one)
  double reference_seconds_total = 0;  // summed over the trials of this invocation
  double trial_seconds_total = 0;      // the same for the reductions
  // The input generators' version the trials drew from: nullopt is this binary's
  // (inputs::kGeneratorVersion); a merge passes on its shards' ("": unknown, written as null).
  std::optional<std::string> generator;
};

// The whole manifest, with the machine and build fields filled in here.
std::string ManifestJson(const ManifestRun& run);

// The raw JSON text of a top-level field of a manifest (a number, true, false, null or a quoted
// string; io::JsonMemberText, nlohmann-json); nullopt when absent or when the text is not a JSON
// object (a damaged manifest: resume and merge then give their one-line error).
std::optional<std::string> ManifestField(const std::string& json, const std::string& key);
// The input generator a manifest records (its "generator"), or "" where it records none: a
// manifest written before the field (carrier-gen/1), or a merge of such folders (null). The same
// config under another generator draws other inputs, so --resume and merge compare these.
std::string ManifestGenerator(const std::string& json);
// A recorded generator as messages name it: its text, or "none recorded".
std::string GeneratorName(const std::string& generator);
std::string UtcNow();

}  // namespace carrier::sweep
