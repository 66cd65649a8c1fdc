// Fuzz target: number files (experiments/inputs/read_numbers.hpp), one or two columns, with and
// without non-finite values allowed (the first byte picks). Properties: bad text is InputError
// and nothing else; an accepted file has at least one record, the right number of columns,
// only finite values unless allowed, no NUL byte; printing the values back as hex floats (one
// record per line) and reading that gives the same values bit for bit.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

#include "fuzz_check.hpp"
#include "inputs/read_numbers.hpp"

namespace {

bool SameBits(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof a) == 0;
}

std::string Hex(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%a", x);
  return buf;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int columns = 1 + (data[0] & 1);
  const bool allow_nonfinite = (data[0] & 2) != 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  using carrier::inputs::Columns;
  Columns c;
  try {
    std::istringstream in(text);
    c = carrier::inputs::ReadNumbers(in, "fuzz", columns, allow_nonfinite);
  } catch (const carrier::inputs::InputError&) {
    return 0;
  }
  FUZZ_CHECK(!c.a.empty(), "an accepted file with no record");
  // A NUL byte would end a number early and drop the rest of its line silently: never accepted.
  FUZZ_CHECK(text.find('\0') == std::string::npos, "a file with a NUL byte accepted");
  FUZZ_CHECK(c.b.size() == (columns == 2 ? c.a.size() : 0), "column counts differ");
  std::string printed;
  for (std::size_t i = 0; i < c.a.size(); ++i) {
    FUZZ_CHECK(allow_nonfinite || std::isfinite(c.a[i]), "non-finite " + Hex(c.a[i]) + " accepted");
    if (columns == 2)
      FUZZ_CHECK(allow_nonfinite || std::isfinite(c.b[i]),
                 "non-finite " + Hex(c.b[i]) + " accepted");
    printed += Hex(c.a[i]) + (columns == 2 ? " " + Hex(c.b[i]) : "") + "\n";
  }
  Columns again;
  try {
    std::istringstream in(printed);
    again = carrier::inputs::ReadNumbers(in, "printed", columns, allow_nonfinite);
  } catch (const carrier::inputs::InputError& e) {
    FUZZ_CHECK(false,
               std::string("the printed values do not read back: ") + e.what() + "\n" + printed);
  }
  FUZZ_CHECK(again.a.size() == c.a.size() && again.b.size() == c.b.size(), "record count changed");
  for (std::size_t i = 0; i < c.a.size(); ++i) {
    FUZZ_CHECK(SameBits(again.a[i], c.a[i]), "value " + std::to_string(i) + " " + Hex(c.a[i]) +
                                                 " read back as " + Hex(again.a[i]));
    if (columns == 2)
      FUZZ_CHECK(SameBits(again.b[i], c.b[i]), "second column of record " + std::to_string(i));
  }
  return 0;
}
