// experiments/sweep/config.hpp: a sweep config (FORMAT.md) parsed, checked and expanded into
// its trials.
//
// ParseConfig reads the TOML text, expands the ranges of FORMAT.md in every value, checks each
// value on its own (op, dtype, acc, round, exp, schedule, backend, n, input, head_dim) and
// throws ConfigError naming the file, the key, the bad value and what is allowed. A value that
// is fine alone but cannot run in combination (round rz with dtype fp64, a permuting schedule
// for argmax) is not a config error: that trial runs and is recorded as failed with the reason.
// Enumerate lists the trials in trial_id order (the cross product in FORMAT.md's key order,
// last key fastest, exclusions dropped; head_dim collapses to one empty value for every op but
// attention, so other ops are not repeated per head_dim).
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace carrier::sweep {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The grid keys in cell order (FORMAT.md), without the trial index. `precision` (a policy of
// precision/precision_policy.hpp, as eval's --precision) is typed into each trial
// (run::TrialSpec::precision) and stands for the dtype, acc and round it implies for the op:
// attention (which runs every role) in, acc and acc's rounding; the other ops its shorthand
// (ToShorthand). A grid without it has one empty precision value.
inline const std::vector<std::string>& GridKeys() {
  static const std::vector<std::string> keys = {"op",    "precision", "dtype",    "acc",
                                                "round", "exp",       "schedule", "backend",
                                                "n",     "input",     "head_dim", "mn"};
  return keys;
}

struct Exclusion {
  std::map<std::string, std::vector<std::string>> match;  // key -> values (any of them)
};

struct Config {
  std::string path;  // as given ("(embedded default)" for --default)
  std::string text;  // the TOML text, hashed into the manifest
  std::string name;
  std::uint64_t seed = 0;
  std::uint64_t trials = 1;
  // Per grid key, its expanded values as text, in the config's order (n and head_dim: decimal).
  std::map<std::string, std::vector<std::string>> grid;
  std::vector<Exclusion> exclude;
};

// Expands FORMAT.md's ranges: "blocked:{2..8 by x2}" -> blocked:2 blocked:4 blocked:8.
// Throws std::invalid_argument naming the bad range.
std::vector<std::string> ExpandRange(const std::string& text);

// Throws ConfigError (one line).
Config ParseConfig(const std::string& text, const std::string& path);

// One trial: its id and the value of every grid key (head_dim "" unless attention).
struct TrialParams {
  std::uint64_t trial_id = 0;
  std::string op, dtype, acc, round, exp, schedule, backend, input;
  std::string precision;  // the grid's precision value as written; "" when not swept
  std::uint64_t n = 0;
  std::uint64_t head_dim = 0;  // 0 = not attention
  // op matmul (run/matmul.hpp): the grid's mn value "MxN", its M and N (n is K, the dots'
  // length); "" and 0 for every other op.
  std::string mn;
  std::uint64_t mat_m = 0, mat_n = 0;
  std::uint64_t trial = 0;
  std::uint64_t input_seed = 0;
  std::uint64_t sr_seed = 0;
};

// All trials in trial_id order. Throws ConfigError when the product is empty.
std::vector<TrialParams> Enumerate(const Config& c);

// FNV-1a 64 of the config text, as 16 hex digits.
std::string ConfigHash(const std::string& text);

// The seed the input generator gets: a hash of (base seed, input, n, head_dim, trial), the
// same for every op, dtype, schedule, ... so those see the same data (FORMAT.md).
std::uint64_t InputSeed(std::uint64_t base, const std::string& input, std::uint64_t n,
                        std::uint64_t head_dim, std::uint64_t trial);

}  // namespace carrier::sweep
