#include "cli/args.hpp"

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdlib>
#include <map>

namespace carrier::cli {

// The parsing is CLI11's (one CLI::App per verb; this is the only file that includes it: it is
// heavy to compile). CLI11's own errors and leftovers are turned into the one-line UsageError
// texts below, the same as before CLI11, so every bad command line still exits 2 with one line.
Args::Args(std::string verb, const std::vector<std::string>& argv, std::set<std::string> valued,
           std::set<std::string> switches, std::size_t max_positional)
    : verb_(std::move(verb)) {
  CLI::App app("carrier " + verb_);
  app.set_help_flag();  // --help is main.cpp's hand-written text, never reaches here
  app.allow_extras();   // unknown flags and surplus arguments come back in remaining()
  std::map<std::string, CLI::Option*> options, flags;
  for (const auto& name : valued)
    // TakeAll: a flag given twice is refused below with its own message.
    options[name] =
        app.add_option("--" + name)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  for (const auto& name : switches) flags[name] = app.add_flag("--" + name);
  // The positionals: all taken here (allow_extra_args: CLI11 otherwise stops at the minimum),
  // the ones past max_positional refused below.
  CLI::Option* positional = max_positional == 0
                                ? nullptr
                                : app.add_option("positional")
                                      ->expected(0, CLI::detail::expected_max_vector_size)
                                      ->allow_extra_args()
                                      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);

  // `--name=` is an empty value, as before CLI11 (which would take the next argument instead).
  std::vector<std::string> args;
  for (const auto& a : argv) {
    if (a.size() > 3 && a.rfind("--", 0) == 0 && a.back() == '=' &&
        valued.count(a.substr(2, a.size() - 3))) {
      args.push_back(a.substr(0, a.size() - 1));
      args.emplace_back();
    } else {
      args.push_back(a);
    }
  }
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11's parse order
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    // The one error CLI11 raises for these options is a missing value, which happens only when
    // the flag is the last argument (CLI11 takes the next argument whatever it looks like).
    const std::string last = args.empty() ? "" : args.back();
    if (last.rfind("--", 0) == 0 && valued.count(last.substr(2)))
      Fail("flag " + last + " needs a value");
    Fail(e.what());
  }
  for (const auto& extra : app.remaining()) {
    if (extra.rfind("--", 0) == 0 && extra != "--")
      Fail("unknown flag '" + extra.substr(0, extra.find('=')) + "'");
    Fail("unexpected argument '" + extra + "'");
  }
  if (positional != nullptr) {
    positional_ = positional->results();
    if (positional_.size() > max_positional)
      Fail("unexpected argument '" + positional_[max_positional] + "'");
  }
  for (const auto& [name, o] : options) {
    if (o->count() == 0) continue;
    if (o->results().size() > 1) Fail("flag --" + name + " given twice");
    present_.insert(name);
    values_[name] = o->results().front();
  }
  for (const auto& [name, o] : flags) {
    if (o->count() == 0) continue;
    // A bare switch's result is CLI11's "true"; `--name=VALUE` leaves VALUE.
    for (const auto& r : o->results())
      if (r != "true") Fail("flag --" + name + " takes no value");
    present_.insert(name);
  }
}

bool Args::Has(const std::string& flag) const { return present_.count(flag) > 0; }

std::optional<std::string> Args::Get(const std::string& flag) const {
  auto it = values_.find(flag);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string Args::Require(const std::string& flag) const {
  auto v = Get(flag);
  if (!v) Fail("missing required flag --" + flag);
  return *v;
}

std::optional<std::uint64_t> ParseCountText(const std::string& text) {
  auto whole = [](const std::string& s) -> std::optional<std::uint64_t> {
    std::uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
    return v;
  };
  auto power = [&](std::size_t pos, std::uint64_t base) -> std::optional<std::uint64_t> {
    auto mant = whole(text.substr(0, pos));
    auto exp = whole(text.substr(pos + 1));
    if (!mant || !exp) return std::nullopt;
    std::uint64_t v = *mant;
    for (std::uint64_t k = 0; k < *exp; ++k) {
      if (v > UINT64_MAX / base) return std::nullopt;
      v *= base;
    }
    return v;
  };
  if (auto p = text.find('^'); p != std::string::npos) {
    auto base = whole(text.substr(0, p));
    auto exp = whole(text.substr(p + 1));
    if (!base || !exp || *base != 2 || *exp > 63) return std::nullopt;
    return std::uint64_t{1} << *exp;
  }
  if (auto p = text.find_first_of("eE"); p != std::string::npos) return power(p, 10);
  return whole(text);
}

std::uint64_t Args::Count(const std::string& flag, std::uint64_t fallback) const {
  auto v = Get(flag);
  if (!v) return fallback;
  auto n = ParseCountText(*v);
  if (!n)
    Fail("--" + flag + " must be a non-negative integer (e.g. 1000, 1e6, 2^20), got '" + *v + "'");
  return *n;
}

double Args::Seconds(const std::string& flag, double fallback) const {
  auto v = Get(flag);
  if (!v) return fallback;
  char* end = nullptr;
  const double s = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0' || !(s >= 0) || s > 1e7)
    Fail("--" + flag + " must be a number of seconds from 0 to 1e7, got '" + *v + "'");
  return s;
}

std::uint64_t Args::RequireCount(const std::string& flag) const {
  Require(flag);
  return Count(flag, 0);
}

std::string Args::Choice(const std::string& flag, const std::vector<std::string>& allowed,
                         const std::string& fallback) const {
  auto v = Get(flag);
  if (!v) return fallback;
  for (const auto& a : allowed)
    if (*v == a) return a;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  Fail("--" + flag + " must be one of " + list + ", got '" + *v + "'");
}

void Args::Fail(const std::string& why) const {
  throw UsageError("carrier " + verb_ + ": " + why + " (see carrier " + verb_ + " --help)");
}

}  // namespace carrier::cli
