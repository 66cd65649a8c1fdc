// Fuzz target: sweep configs (experiments/sweep/config.hpp: TOML with [sweep], [grid] ranges
// such as blocked:{2..4096 by x2} and [[exclude]] rules). The first byte picks: a whole config
// through ParseConfig, or one value through ExpandRange. Properties: a bad config is
// ConfigError (a bad range std::invalid_argument) and nothing else; an accepted config
// enumerates a non-empty, contiguously numbered trial list, parsing its own text again gives
// the same trials (every id, value and seed), and every schedule and input it holds parses.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/schedule.hpp"
#include "fuzz_check.hpp"
#include "inputs/generators.hpp"
#include "sweep/config.hpp"

namespace {

bool Same(const carrier::sweep::TrialParams& a, const carrier::sweep::TrialParams& b) {
  return a.trial_id == b.trial_id && a.op == b.op && a.dtype == b.dtype && a.acc == b.acc &&
         a.round == b.round && a.exp == b.exp && a.schedule == b.schedule &&
         a.backend == b.backend && a.input == b.input && a.n == b.n && a.head_dim == b.head_dim &&
         a.trial == b.trial && a.input_seed == b.input_seed && a.sr_seed == b.sr_seed;
}

void CheckConfig(const std::string& text) {
  using namespace carrier::sweep;
  Config cfg;
  try {
    cfg = ParseConfig(text, "fuzz.toml");
  } catch (const ConfigError&) {
    return;
  }
  const auto trials = Enumerate(cfg);
  FUZZ_CHECK(!trials.empty(), "an accepted config with no trial");
  for (std::size_t i = 0; i < trials.size(); ++i)
    FUZZ_CHECK(trials[i].trial_id == i, "trial ids are not 0, 1, 2, ...");
  Config again;
  try {
    again = ParseConfig(cfg.text, "fuzz.toml");
  } catch (const ConfigError& e) {
    FUZZ_CHECK(false, std::string("the same text failed the second time: ") + e.what());
  }
  const auto trials2 = Enumerate(again);
  FUZZ_CHECK(trials2.size() == trials.size(), "the trial count changed between two parses");
  for (std::size_t i = 0; i < trials.size(); ++i)
    FUZZ_CHECK(Same(trials[i], trials2[i]),
               "trial " + std::to_string(i) + " changed between parses");
  for (const auto& s : cfg.grid.at("schedule")) {
    try {
      (void)carrier::ParseSchedule(s);
    } catch (const carrier::ScheduleError& e) {
      FUZZ_CHECK(false, "accepted schedule '" + s + "' does not parse: " + e.what());
    }
  }
  for (const auto& in : cfg.grid.at("input")) {
    try {
      (void)carrier::inputs::ParseGenerator(in);
    } catch (const std::invalid_argument& e) {
      FUZZ_CHECK(false, "accepted input '" + in + "' does not parse: " + e.what());
    }
  }
}

void CheckRange(const std::string& text) {
  std::vector<std::string> v;
  try {
    v = carrier::sweep::ExpandRange(text);
  } catch (const std::invalid_argument&) {
    return;
  }
  FUZZ_CHECK(!v.empty(), "'" + text + "' expands to nothing");
  if (text.find('{') == std::string::npos)
    FUZZ_CHECK(v.size() == 1 && v[0] == text, "'" + text + "' has no range but expands");
  for (const auto& s : v)
    FUZZ_CHECK(s.find('{') == std::string::npos, "'" + s + "' still has a range");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1)
    CheckRange(text);
  else
    CheckConfig(text);
  return 0;
}
