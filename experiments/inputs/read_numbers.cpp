#include "inputs/read_numbers.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

namespace carrier::inputs {

namespace {

double ParseNumber(const std::string& token, const std::string& where, bool allow_nonfinite) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(token.c_str(), &end);
  if (end == token.c_str() || *end != '\0')
    throw InputError(where + ": cannot parse '" + token + "' as a number");
  if (errno == ERANGE && std::isinf(v))
    throw InputError(where + ": '" + token + "' is out of the range of a double");
  if (errno == ERANGE && v == 0)
    throw InputError(where + ": '" + token + "' underflows to zero in a double");
  if (!std::isfinite(v) && !allow_nonfinite)
    throw InputError(where + ": '" + token +
                     "' is not finite (pass --allow-nonfinite to study special values)");
  return v;
}

}  // namespace

bool ReadTextLine(std::istream& in, std::string& line, const std::string& name, std::size_t lineno,
                  std::size_t max_bytes) {
  auto where = [&] { return name + ":" + std::to_string(lineno); };
  line.clear();
  std::streambuf* sb = in.rdbuf();
  if (sb == nullptr) return false;
  for (;;) {
    const int c = sb->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      if (line.empty()) {
        in.setstate(std::ios::eofbit);
        return false;
      }
      return true;
    }
    if (c == '\n') return true;
    if (c == 0)
      throw InputError(where() + ": a NUL byte at column " + std::to_string(line.size() + 1) +
                       ": not a text file of numbers");
    if (line.size() >= max_bytes)
      throw InputError(where() + ": line longer than " + std::to_string(max_bytes) +
                       " bytes: not a text file of numbers");
    line.push_back(static_cast<char>(c));
  }
}

Columns ReadNumbers(std::istream& in, const std::string& name, int columns, bool allow_nonfinite) {
  Columns out;
  std::string line;
  for (std::size_t lineno = 1; ReadTextLine(in, line, name, lineno); ++lineno) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    for (char& c : line)
      if (c == ',' || c == '\t') c = ' ';
    std::istringstream fields(line);
    std::vector<std::string> tokens;
    for (std::string t; fields >> t;) tokens.push_back(t);
    const std::string where = name + ":" + std::to_string(lineno);
    if (static_cast<int>(tokens.size()) != columns)
      throw InputError(where + ": expected " + std::to_string(columns) +
                       (columns == 1 ? " number" : " numbers") + " per line, found " +
                       std::to_string(tokens.size()));
    out.a.push_back(ParseNumber(tokens[0], where, allow_nonfinite));
    if (columns == 2) out.b.push_back(ParseNumber(tokens[1], where, allow_nonfinite));
  }
  if (in.bad()) throw InputError(name + ": read error");
  if (out.a.empty()) throw InputError(name + ": no numbers (empty input)");
  return out;
}

Columns ReadNumbersFile(const std::string& path, int columns, bool allow_nonfinite) {
  if (path == "-") return ReadNumbers(std::cin, "<stdin>", columns, allow_nonfinite);
  std::ifstream f(path);
  if (!f) throw InputError(path + ": cannot open for reading");
  return ReadNumbers(f, path, columns, allow_nonfinite);
}

}  // namespace carrier::inputs
