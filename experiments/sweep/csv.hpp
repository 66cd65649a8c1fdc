// experiments/sweep/csv.hpp: the tidy CSV of FORMAT.md, written and read back.
//
// Fields are quoted (RFC 4180: "..." with "" for a quote) only when they hold a comma, a quote
// or a line break, so the first column, trial_id, can always be read with `cut -d, -f1`. A
// row is one write() of one complete line (see runner.hpp), so a file cut short by kill -9
// ends in at most one partial line, which ReadTrialsCsv reports and resume truncates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace carrier::sweep {

// The columns, in order (FORMAT.md): the outcome schema's (run/outcome_fields.hpp).
const std::vector<std::string>& CsvColumns();
std::string CsvHeaderLine();  // with '\n'

std::string CsvField(const std::string& s);                   // quoted when needed
std::string CsvLine(const std::vector<std::string>& fields);  // with '\n'
// Splits one line (without its '\n'); throws std::invalid_argument on an unterminated quote.
std::vector<std::string> SplitCsvLine(const std::string& line);

// 17 significant digits (round trip), nan, inf, -inf (FORMAT.md).
std::string CsvNumber(double v);

struct CsvFile {
  std::string header;                // first line without '\n' ("" when the file is empty)
  std::vector<std::string> rows;     // complete data lines without '\n'
  std::vector<std::uint64_t> ids;    // trial_id of each row
  std::uint64_t complete_bytes = 0;  // length of the prefix made of complete lines
  bool partial_tail = false;         // bytes after the last '\n' (a row cut by a kill)
};
// Throws std::runtime_error (one line naming the file and line) when a complete row has no
// valid trial_id or the wrong number of fields.
CsvFile ReadTrialsCsv(const std::string& path);

}  // namespace carrier::sweep
