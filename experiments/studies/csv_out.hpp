// experiments/studies/csv_out.hpp: a study's CSV, written whole or not at all.
//
// Contract. WriteCsv(path, text): path empty or "-" writes text to stdout; otherwise the text
// goes through io::WriteFileAtomic (a fsync'ed "<path>.tmp" renamed over path), so a failure never
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
#include "io/atomic_file.hpp"

namespace carrier::studies {

inline std::string Field(double x) { return cli::Shortest(x); }

inline void WriteCsv(const std::string& path, const std::string& text, const std::string& who) {
  if (path.empty() || path == "-") {
    std::cout << text << std::flush;
    return;
  }
  try {
    io::WriteFileAtomic(path, text);
  } catch (const io::IoError& e) {
    throw cli::UsageError(who + ": " + e.what());
  }
}

}  // namespace carrier::studies
