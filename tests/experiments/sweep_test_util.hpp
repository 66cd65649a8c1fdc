// tests/experiments/sweep_test_util.hpp: running `carrier sweep|merge` from a test (with an
// optional environment prefix such as CARRIER_FAULT=row@3:torn, experiments/io/atomic_file.hpp)
// and comparing trials.csv files row for row without their timing columns (seconds,
// reference_seconds: the only ones FORMAT.md lets differ between runs of one config).
// The including target defines CARRIER_EXE.
#pragma once

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace sweep_test {

struct Run {
  int code;
  std::string out;
  std::string err;
};

inline std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// This process's scratch folder (removed at exit).
inline const std::string& Tmp() {
  static const std::string dir = [] {
    const std::string d = "/tmp/carrier_sweep_faults_" + std::to_string(getpid());
    std::system(("rm -rf " + d + " && mkdir -p " + d).c_str());
    static const std::string* const keep = new std::string(d);  // outlives static destructors
    std::atexit([] { std::system(("rm -rf " + *keep).c_str()); });
    return d;
  }();
  return dir;
}

// Empties the scratch folder once a test case has made its checks (it stays usable, so the
// cases also run one after another in a single process).
inline void Cleanup() { std::system(("rm -rf " + Tmp() + " && mkdir -p " + Tmp()).c_str()); }

// `ENV carrier ARGS`, stdout and stderr captured; a process killed by a signal gives 128 + it.
inline Run Carrier(const std::string& args, const std::string& env = "") {
  static int counter = 0;
  const std::string base = Tmp() + "/cmd" + std::to_string(counter++);
  const std::string cmd = (env.empty() ? "" : "env " + env + " ") + std::string(CARRIER_EXE) + " " +
                          args + " >" + base + ".out 2>" + base + ".err";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), Slurp(base + ".out"),
          Slurp(base + ".err")};
}

inline std::string Write(const std::string& name, const std::string& text) {
  const std::string path = Tmp() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

inline bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

inline int Lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

inline std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> out(1);
  bool q = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (q && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (c == '"') {
      q = !q;
    } else if (c == ',' && !q) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

// What a crash may leave of a trials.csv: the header and whole rows, then at most one partial
// line. Returns the number of whole rows; sets *tail to the partial line's length.
inline int WholeRows(const std::string& csv_path, std::size_t* tail = nullptr) {
  const std::string s = Slurp(csv_path);
  const auto last_nl = s.find_last_of('\n');
  if (tail) *tail = last_nl == std::string::npos ? s.size() : s.size() - last_nl - 1;
  return std::max(0, Lines(s) - 1);
}

// trial_id -> the row without its timing columns; checks the header, field counts, no repeats.
inline std::map<unsigned long long, std::string> Rows(const std::string& csv_path) {
  std::istringstream in(Slurp(csv_path));
  std::string line, header;
  std::getline(in, header);
  const auto cols = Split(header);
  REQUIRE(cols.size() >= 3);
  REQUIRE(cols[cols.size() - 2] == "seconds");
  REQUIRE(cols.back() == "reference_seconds");
  std::map<unsigned long long, std::string> rows;
  while (std::getline(in, line)) {
    auto f = Split(line);
    INFO(csv_path << ": " << line);
    REQUIRE(f.size() == cols.size());
    f.resize(f.size() - 2);
    std::string key;
    for (const auto& x : f) key += x + "|";
    const auto id = std::stoull(f[0]);
    CHECK(rows.emplace(id, key).second);
  }
  return rows;
}

// True when both files hold the same rows (timing aside); prints the first differences.
inline bool SameRows(const std::string& a, const std::string& b) {
  const auto ra = Rows(a), rb = Rows(b);
  if (ra.size() != rb.size()) {
    std::cout << "  " << a << ": " << ra.size() << " rows; " << b << ": " << rb.size() << " rows\n";
    return false;
  }
  std::size_t differ = 0;
  for (const auto& [id, row] : ra) {
    const auto it = rb.find(id);
    if (it == rb.end() || it->second != row) {
      if (++differ <= 3)
        std::cout << "  trial_id " << id << "\n    " << a << ": " << row << "\n    " << b << ": "
                  << (it == rb.end() ? std::string("(missing)") : it->second) << "\n";
    }
  }
  return differ == 0;
}

// A small sweep of 6 trials, one of them a failed row (argmax cannot take strided:2's
// permutation), cheap enough to interrupt at every write.
inline const char kSmallConfig[] = R"([sweep]
name = "faults"
seed = 5
[grid]
op       = ["sum", "lse", "argmax"]
dtype    = "bf16"
schedule = ["seq", "strided:2"]
n        = 200
input    = "normal"
)";
inline constexpr int kSmallRows = 6;

}  // namespace sweep_test
