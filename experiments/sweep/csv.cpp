#include "sweep/csv.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "run/outcome_fields.hpp"

namespace carrier::sweep {

// The outcome schema's columns (run/outcome_fields.hpp), which also writes every row.
const std::vector<std::string>& CsvColumns() { return run::OutcomeCsvColumns(); }

std::string CsvHeaderLine() {
  std::string s;
  for (const auto& c : CsvColumns()) s += (s.empty() ? "" : ",") + c;
  return s + "\n";
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c == '\n' || c == '\r' ? ' ' : c;
  }
  return out + "\"";
}

std::string CsvLine(const std::vector<std::string>& fields) {
  std::string s;
  for (std::size_t i = 0; i < fields.size(); ++i) s += (i ? "," : "") + CsvField(fields[i]);
  return s + "\n";
}

std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  if (quoted) throw std::invalid_argument("unterminated quote");
  return out;
}

std::string CsvNumber(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

CsvFile ReadTrialsCsv(const std::string& path) {
  CsvFile f;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string all = ss.str();
  std::size_t pos = 0, line_no = 0;
  while (pos < all.size()) {
    const std::size_t nl = all.find('\n', pos);
    if (nl == std::string::npos) {
      f.partial_tail = true;
      break;
    }
    std::string line = all.substr(pos, nl - pos);
    ++line_no;
    if (line_no == 1) {
      f.header = line;
    } else {
      std::vector<std::string> fields;
      try {
        fields = SplitCsvLine(line);
      } catch (const std::exception& e) {
        throw std::runtime_error(path + ":" + std::to_string(line_no) + ": " + e.what());
      }
      if (fields.size() != CsvColumns().size())
        throw std::runtime_error(path + ":" + std::to_string(line_no) + ": " +
                                 std::to_string(fields.size()) + " fields, expected " +
                                 std::to_string(CsvColumns().size()));
      // Digits only, without a leading zero: the form CsvLine writes. (std::stoull alone took
      // "+7", " 7" and "-1" = 2^64 - 1 as trial ids; the fuzz_csv property caught it.)
      const std::string& t = fields[0];
      bool canonical = !t.empty() && t.size() <= 20 && (t == "0" || t[0] != '0');
      for (char c : t) canonical = canonical && c >= '0' && c <= '9';
      std::size_t used = 0;
      std::uint64_t id = 0;
      if (canonical) {
        try {
          id = std::stoull(t, &used);
        } catch (const std::exception&) {
          used = 0;  // above 2^64 - 1
        }
      }
      if (!canonical || used == 0 || used != fields[0].size())
        throw std::runtime_error(path + ":" + std::to_string(line_no) + ": bad trial_id '" +
                                 fields[0] + "'");
      f.rows.push_back(std::move(line));
      f.ids.push_back(id);
    }
    pos = nl + 1;
    f.complete_bytes = pos;
  }
  return f;
}

}  // namespace carrier::sweep
