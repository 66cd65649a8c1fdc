// experiments/inputs/read_numbers.hpp: numbers from a text file, strictly.
//
// One record per line: `columns` numbers (1, or 2 for dot's (a, b) pairs and affine's maps),
// separated by spaces, tabs or one comma; decimal or hex float (C99 `0x1.8p-3`). Blank lines
// and lines starting with '#' are skipped. `nan`, `inf`, `-inf` are accepted only with
// allow_nonfinite (special-value studies); otherwise they are an error, as is anything that
// does not parse, a value out of double range, a wrong number of columns or a file without a
// single record. A line over kMaxLineBytes or holding a NUL byte is an error too (input without
// newlines is refused within one line's length). Errors throw InputError with one line
// "FILE:LINE: what is wrong".
#pragma once

#include <istream>
#include <stdexcept>
#include <string>
#include <vector>

namespace carrier::inputs {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr std::size_t kMaxLineBytes = 65536;

struct Columns {
  std::vector<double> a;  // first column
  std::vector<double> b;  // second column (empty when columns == 1)
};

// One line of `in` (without its newline) into `line`; false at the end of input. Throws
// InputError "NAME:LINENO: ..." on a NUL byte (which would otherwise end a number silently) and on
// a line longer than max_bytes, so input without newlines is refused within max_bytes.
bool ReadTextLine(std::istream& in, std::string& line, const std::string& name, std::size_t lineno,
                  std::size_t max_bytes = kMaxLineBytes);

Columns ReadNumbers(std::istream& in, const std::string& name, int columns, bool allow_nonfinite);
// `path` "-" reads standard input.
Columns ReadNumbersFile(const std::string& path, int columns, bool allow_nonfinite);

}  // namespace carrier::inputs
