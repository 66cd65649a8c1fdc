// experiments/studies/csv_out.hpp: a study's CSV, written whole or not at all.
//
// Contract. WriteCsv(path, text): path empty or "-" writes text to stdout; otherwise the text
// goes to "<path>.tmp" and is renamed over path only once it is complete, so a failure never
// leaves a half-written file and never destroys a previous one. Throws cli::UsageError (one
// line naming the path) when the file cannot be written. Field(x) formats a double for CSV:
// shortest round-trip decimal, nan / inf / -inf for the specials (FORMAT.md's rule).
#pragma once

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "cli/args.hpp"
#include "cli/number_format.hpp"

namespace carrier::studies {

inline std::string Field(double x) { return cli::Shortest(x); }

inline void WriteCsv(const std::string& path, const std::string& text, const std::string& who) {
  if (path.empty() || path == "-") {
    std::cout << text << std::flush;
    return;
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw cli::UsageError(who + ": cannot write '" + path + "' (cannot open '" + tmp + "')");
    out << text;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw cli::UsageError(who + ": cannot write '" + path + "' (write failed)");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw cli::UsageError(who + ": cannot write '" + path + "' (rename failed)");
  }
}

}  // namespace carrier::studies
