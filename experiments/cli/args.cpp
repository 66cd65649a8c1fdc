#include "cli/args.hpp"

#include <charconv>

namespace carrier::cli {

Args::Args(std::string verb, const std::vector<std::string>& argv, std::set<std::string> valued,
           std::set<std::string> switches, std::size_t max_positional)
    : verb_(std::move(verb)) {
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.rfind("--", 0) != 0 || a == "--") {
      if (positional_.size() >= max_positional) Fail("unexpected argument '" + a + "'");
      positional_.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::optional<std::string> value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (switches.count(name)) {
      if (value) Fail("flag --" + name + " takes no value");
      present_.insert(name);
      continue;
    }
    if (!valued.count(name)) Fail("unknown flag '--" + name + "'");
    if (!value) {
      if (i + 1 >= argv.size()) Fail("flag --" + name + " needs a value");
      value = argv[++i];
    }
    if (present_.count(name)) Fail("flag --" + name + " given twice");
    present_.insert(name);
    values_[name] = *value;
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
