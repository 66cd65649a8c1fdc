#include "precision/format.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>

namespace carrier {
namespace {

constexpr std::string_view kCustomSyntax =
    "custom:p=P,emin=E,emax=E[,subnormals=0|1][,inf=0|1][,saturate=0|1][,topnan=0|1]";
constexpr std::string_view kCustomKeys = "p, emin, emax, subnormals, inf, saturate, topnan";

Format Predefined(std::string name, int p, int emin, int emax, bool has_inf, bool saturate,
                  bool top_nan) {
  Format f;
  f.name = std::move(name);
  f.precision = p;
  f.emin = emin;
  f.emax = emax;
  f.subnormals = true;
  f.has_inf = has_inf;
  f.has_nan = true;
  f.saturate = saturate;
  f.top_significand_is_nan = top_nan;
  return f;
}

std::string AllowedNames() {
  std::string s;
  for (const Format& f : PredefinedFormats()) s += f.name + ", ";
  return s + std::string(kCustomSyntax);
}

[[noreturn]] void Reject(std::string_view text, const std::string& why) {
  throw std::invalid_argument("format '" + std::string(text) + "': " + why);
}

// ln(2^(emax+1) * (1 - c * 2^-p)): log1p keeps it accurate where 2^p - c is not a double.
double LogTopMinus(const Format& f, double c) {
  return (f.emax + 1) * std::log(2.0) + std::log1p(-c * format_detail::Pow2(-f.precision));
}

}  // namespace

double Format::LogMaxFinite() const {
  return LogTopMinus(*this, 1.0 + (top_significand_is_nan ? 1.0 : 0.0));
}

double Format::LogOverflowThreshold() const {
  return LogTopMinus(*this, 0.5 + (top_significand_is_nan ? 1.0 : 0.0));
}

void Format::Validate() const {
  const std::string who = "format '" + name + "': ";
  if (precision < 2 || precision > 53)
    throw std::invalid_argument(who + "p=" + std::to_string(precision) +
                                " out of range: expected 2..53");
  if (emin < -1022 || emin > 1023)
    throw std::invalid_argument(who + "emin=" + std::to_string(emin) +
                                " out of range: expected -1022..1023");
  if (emax < emin || emax > 1023)
    throw std::invalid_argument(who + "emax=" + std::to_string(emax) + " out of range: expected " +
                                std::to_string(emin) + "..1023 (emin..1023)");
  if (!has_inf && !has_nan && !saturate)
    throw std::invalid_argument(who +
                                "no inf, no NaN and no saturation leave overflow unrepresentable: "
                                "expected inf=1, a NaN or saturate=1");
  if (top_significand_is_nan && !has_nan)
    throw std::invalid_argument(who + "topnan=1 needs a NaN: expected has_nan");
}

Format Fp8E4M3() { return Predefined("fp8e4m3", 4, -6, 8, false, false, true); }
Format Fp8E4M3Sat() { return Predefined("fp8e4m3sat", 4, -6, 8, false, true, true); }
Format Fp8E5M2() { return Predefined("fp8e5m2", 3, -14, 15, true, false, false); }
Format Fp16() { return Predefined("fp16", 11, -14, 15, true, false, false); }
Format BF16() { return Predefined("bf16", 8, -126, 127, true, false, false); }
Format TF32() { return Predefined("tf32", 11, -126, 127, true, false, false); }
Format Fp32() { return Predefined("fp32", 24, -126, 127, true, false, false); }
Format Fp64() { return Predefined("fp64", 53, -1022, 1023, true, false, false); }

const std::vector<Format>& PredefinedFormats() {
  static const std::vector<Format> formats = {Fp8E4M3(), Fp8E4M3Sat(), Fp8E5M2(), Fp16(),
                                              BF16(),    TF32(),       Fp32(),    Fp64()};
  return formats;
}

std::string CustomFormatName(int precision, int emin, int emax, bool subnormals, bool has_inf,
                             bool saturate, bool top_significand_is_nan) {
  std::string s = "custom:p=" + std::to_string(precision) + ",emin=" + std::to_string(emin) +
                  ",emax=" + std::to_string(emax);
  if (!subnormals) s += ",subnormals=0";
  if (!has_inf) s += ",inf=0";
  if (saturate) s += ",saturate=1";
  if (top_significand_is_nan) s += ",topnan=1";
  return s;
}

Format ParseFormat(std::string_view text) {
  for (const Format& f : PredefinedFormats())
    if (text == f.name) return f;
  constexpr std::string_view kPrefix = "custom:";
  if (text.substr(0, kPrefix.size()) != kPrefix)
    Reject(text, "unknown format: expected one of " + AllowedNames());

  // Keys in any order, each at most once; p, emin and emax are required.
  int p = 0, emin = 0, emax = 0;
  bool seen_p = false, seen_emin = false, seen_emax = false, seen_sub = false, seen_inf = false,
       seen_sat = false, seen_top = false;
  bool subnormals = true, has_inf = true, saturate = false, top_nan = false;
  std::string_view rest = text.substr(kPrefix.size());
  if (rest.empty()) Reject(text, "empty custom format: expected " + std::string(kCustomSyntax));
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      Reject(text, "'" + std::string(item) + "' is not key=value: expected " +
                       std::string(kCustomSyntax));
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = item.substr(eq + 1);
    int v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size())
      Reject(text, "'" + std::string(item) + "': value is not an integer");
    auto flag = [&](bool& seen, bool& out) {
      if (seen) Reject(text, "key '" + std::string(key) + "' given twice");
      seen = true;
      if (v != 0 && v != 1)
        Reject(text, "'" + std::string(item) + "': expected " + std::string(key) + "=0 or 1");
      out = v == 1;
    };
    auto number = [&](bool& seen, int& out) {
      if (seen) Reject(text, "key '" + std::string(key) + "' given twice");
      seen = true;
      out = v;
    };
    if (key == "p") {
      number(seen_p, p);
    } else if (key == "emin") {
      number(seen_emin, emin);
    } else if (key == "emax") {
      number(seen_emax, emax);
    } else if (key == "subnormals") {
      flag(seen_sub, subnormals);
    } else if (key == "inf") {
      flag(seen_inf, has_inf);
    } else if (key == "saturate") {
      flag(seen_sat, saturate);
    } else if (key == "topnan") {
      flag(seen_top, top_nan);
    } else {
      Reject(text, "unknown key '" + std::string(key) + "': expected " + std::string(kCustomKeys));
    }
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  if (!seen_p || !seen_emin || !seen_emax)
    Reject(text, std::string("missing ") +
                     (!seen_p      ? "p"
                      : !seen_emin ? "emin"
                                   : "emax") +
                     ": expected " + std::string(kCustomSyntax));

  Format f;
  f.name = CustomFormatName(p, emin, emax, subnormals, has_inf, saturate, top_nan);
  f.precision = p;
  f.emin = emin;
  f.emax = emax;
  f.subnormals = subnormals;
  f.has_inf = has_inf;
  f.has_nan = true;
  f.saturate = saturate;
  f.top_significand_is_nan = top_nan;
  try {
    f.Validate();
  } catch (const std::invalid_argument& e) {
    // Validate names the canonical form; the user typed `text`, so name that instead.
    std::string why = e.what();
    why = why.substr(why.find("': ") + 3);
    Reject(text, why);
  }
  return f;
}

}  // namespace carrier
