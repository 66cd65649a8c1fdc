// Fuzz target: the trials.csv that `carrier sweep --resume` and `carrier merge` read
// (experiments/sweep/csv.hpp). The first byte picks: one line through SplitCsvLine, or a whole
// file through ReadTrialsCsv. Properties: a bad line is std::invalid_argument, a bad file
// std::runtime_error, nothing else; an accepted line printed by CsvLine splits back to the same
// fields (line breaks inside a field become spaces, as CsvField documents); an accepted file's
// rows have the column count, a trial_id written exactly as the number it was read as, and the
// complete-lines prefix ends at a line break.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "sweep/csv.hpp"

namespace {

void CheckLine(const std::string& line) {
  std::vector<std::string> fields;
  try {
    fields = carrier::sweep::SplitCsvLine(line);
  } catch (const std::invalid_argument&) {
    return;
  }
  std::string printed = carrier::sweep::CsvLine(fields);
  FUZZ_CHECK(!printed.empty() && printed.back() == '\n', "CsvLine does not end in a line break");
  printed.pop_back();
  FUZZ_CHECK(printed.find('\n') == std::string::npos, "CsvLine wrote a line break inside a row");
  std::vector<std::string> again;
  try {
    again = carrier::sweep::SplitCsvLine(printed);
  } catch (const std::invalid_argument& e) {
    FUZZ_CHECK(false, "CsvLine's output does not split: " + printed);
  }
  for (auto& f : fields)
    for (char& c : f)
      if (c == '\n' || c == '\r') c = ' ';
  FUZZ_CHECK(again == fields, "'" + line + "' -> '" + printed + "' splits differently");
}

void CheckFile(const std::string& text) {
  static const std::string path = "/tmp/carrier_fuzz_csv_" + std::to_string(getpid()) + ".csv";
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
  }
  carrier::sweep::CsvFile f;
  try {
    f = carrier::sweep::ReadTrialsCsv(path);
  } catch (const std::runtime_error&) {
    return;
  }
  FUZZ_CHECK(f.rows.size() == f.ids.size(), "rows and ids differ in count");
  FUZZ_CHECK(f.complete_bytes <= text.size(), "complete prefix longer than the file");
  FUZZ_CHECK(f.complete_bytes == 0 || text[f.complete_bytes - 1] == '\n',
             "the complete prefix does not end at a line break");
  FUZZ_CHECK(f.partial_tail == (f.complete_bytes < text.size()), "partial_tail disagrees");
  for (std::size_t i = 0; i < f.rows.size(); ++i) {
    const auto fields = carrier::sweep::SplitCsvLine(f.rows[i]);
    FUZZ_CHECK(fields.size() == carrier::sweep::CsvColumns().size(),
               "row with a wrong field count");
    FUZZ_CHECK(fields[0] == std::to_string(f.ids[i]),
               "trial_id '" + fields[0] + "' read as " + std::to_string(f.ids[i]));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1)
    CheckFile(text);
  else
    CheckLine(text.substr(0, text.find('\n')));
  return 0;
}
