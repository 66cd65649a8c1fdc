// experiments/cli/args.hpp: the command line of one verb, parsed strictly.
//
// Flags are `--name VALUE`, `--name=VALUE` or a bare `--switch`; every verb declares the flags
// it knows, and anything else (an unknown flag, a missing value, a stray argument, a value
// that does not parse) is a UsageError: the CLI prints its one-line message and exits 2.
// CLI11 does the parsing, in args.cpp alone (each valued flag a CLI::Option taking one string,
// each switch a CLI11 flag, the positionals one option); its errors become the same one-line
// texts: "carrier VERB: unknown flag '--x' (see carrier VERB --help)", "flag --x needs a value",
// "flag --x given twice", "flag --x takes no value", "unexpected argument 'a'". A value is the
// next argument whatever it looks like (`--n -5` is n = "-5"); `--x=` is an empty value.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace carrier::cli {

// The default --max-seconds of verbs that estimate their cost before they start: past it they
// refuse with the n that fits (cli/cost.hpp).
inline constexpr double kDefaultMaxSeconds = 1800;

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Args {
 public:
  // `valued` flags take a value; `switches` do not.
  Args(std::string verb, const std::vector<std::string>& argv, std::set<std::string> valued,
       std::set<std::string> switches = {}, std::size_t max_positional = 0);

  bool Has(const std::string& flag) const;
  std::optional<std::string> Get(const std::string& flag) const;
  std::string Require(const std::string& flag) const;
  // A non-negative integer (decimal digits; 1e6 and 2^20 are accepted as exact powers).
  std::uint64_t Count(const std::string& flag, std::uint64_t fallback) const;
  std::uint64_t RequireCount(const std::string& flag) const;
  // A number of seconds in [0, 10^7] (decimal, e.g. 600 or 2.5); 0 where the verb says "no
  // limit".
  double Seconds(const std::string& flag, double fallback) const;
  // One of `allowed`.
  std::string Choice(const std::string& flag, const std::vector<std::string>& allowed,
                     const std::string& fallback) const;
  const std::vector<std::string>& Positional() const { return positional_; }
  [[noreturn]] void Fail(const std::string& why) const;

 private:
  std::string verb_;
  std::map<std::string, std::string> values_;
  std::set<std::string> present_;
  std::vector<std::string> positional_;
};

// Parses "123", "1e6" (10^k) or "2^20" into an integer; nullopt when it is none of those or
// does not fit in 64 bits.
std::optional<std::uint64_t> ParseCountText(const std::string& text);

}  // namespace carrier::cli
