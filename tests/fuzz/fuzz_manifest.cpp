// Fuzz target: the manifest.json fields that `carrier sweep --resume` and `carrier merge` read
// (experiments/sweep/manifest.hpp). The first byte picks: arbitrary text through ManifestField
// and JsonUnquote (no crash, no exception: a damaged manifest must give a one-line error, not
// an internal error), or a ManifestRun whose strings come from the input, written by
// ManifestJson and read back field by field (config text, path, hash, shard, times, counts).
// JSON strings are UTF-8: bytes that are not become U+FFFD on writing (io/json.hpp), so the
// round trips are asserted for valid UTF-8 input, and the written text must parse for any.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "fuzz_check.hpp"
#include "io/json.hpp"
#include "sweep/manifest.hpp"

namespace {

bool IsUtf8(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();  // the strict error handler throws on a bad byte
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

const char* const kKeys[] = {"config_hash",  "config",     "config_path",
                             "shard",        "start_time", "end_time",
                             "trials_total", "jobs",       "wall_seconds"};

void CheckRead(const std::string& text) {
  for (const char* key : kKeys) {
    const auto v = carrier::sweep::ManifestField(text, key);
    if (!v) continue;
    FUZZ_CHECK(v->find('\n') == std::string::npos, "a field value holds a line break");
    (void)carrier::io::JsonUnquote(*v);
  }
  (void)carrier::io::JsonUnquote(text);
  // Quote and unquote are inverse on UTF-8; any bytes quote to a JSON string.
  const std::string quoted = carrier::io::JsonQuote(text);
  FUZZ_CHECK(nlohmann::json::accept(quoted), "JsonQuote(s) is not JSON for s = '" + text + "'");
  if (IsUtf8(text))
    FUZZ_CHECK(carrier::io::JsonUnquote(quoted) == text,
               "JsonUnquote(JsonQuote(s)) != s for s = '" + text + "'");
}

void CheckWrite(const std::string& text) {
  // Four strings cut from the input at '\x01' bytes.
  std::string part[4];
  std::size_t k = 0;
  for (char c : text) {
    if (c == '\x01' && k < 3) {
      ++k;
      continue;
    }
    part[k] += c;
  }
  carrier::sweep::ManifestRun r;
  r.config_text = part[0];
  r.config_path = part[1];
  r.shard = part[2];
  r.start_time = part[3];
  r.config_hash = "0123456789abcdef";
  r.trials_total = text.size();
  const std::string json = carrier::sweep::ManifestJson(r);
  FUZZ_CHECK(nlohmann::json::accept(json), "the written manifest is not JSON");
  if (!IsUtf8(text)) return;
  auto field = [&](const char* key) {
    const auto v = carrier::sweep::ManifestField(json, key);
    FUZZ_CHECK(v.has_value(), std::string("the written manifest lacks ") + key);
    return carrier::io::JsonUnquote(*v);
  };
  FUZZ_CHECK(field("config") == r.config_text, "config text does not round-trip");
  FUZZ_CHECK(field("config_path") == r.config_path, "config_path does not round-trip");
  FUZZ_CHECK(r.shard.empty() ? *carrier::sweep::ManifestField(json, "shard") == "null"
                             : field("shard") == r.shard,
             "shard does not round-trip");
  FUZZ_CHECK(field("start_time") == r.start_time, "start_time does not round-trip");
  FUZZ_CHECK(field("config_hash") == r.config_hash, "config_hash does not round-trip");
  FUZZ_CHECK(field("trials_total") == std::to_string(r.trials_total), "trials_total");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1)
    CheckWrite(text);
  else
    CheckRead(text);
  return 0;
}
