// experiments/cli/number_format.hpp: numbers as text that reads back to the same bits.
//
// Shortest round-trip decimal (std::to_chars) for float, double and long double; non-finite
// values are spelled inf, -inf and nan. HexFloat: a double's exact bits as %a text.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

namespace carrier::cli {

template <class T>
std::string Shortest(T x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, x);
  return ec == std::errc() ? std::string(buf, ptr) : std::string("?");
}

// C99 hexadecimal floating point (printf's %a, e.g. 0x1.8p+1): the exact bits in text that any C
// or Python (float.fromhex) reads back.
inline std::string HexFloat(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", x);
  return buf;
}

// Fixed number of significant digits for tables meant for reading, not for round-tripping.
inline std::string Sig(double x, int digits = 3) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  auto [ptr, ec] =
      std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific, digits - 1);
  return ec == std::errc() ? std::string(buf, ptr) : std::string("?");
}

}  // namespace carrier::cli
