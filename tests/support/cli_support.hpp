// tests/support/cli_support.hpp: run the `carrier` executable from a test and check its
// contract for bad input. The including target defines CARRIER_EXE (its path).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace carrier_test {

struct Run {
  int code;
  std::string out;
  std::string err;
};

inline std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A fresh path under /tmp, unique per process and call.
inline std::string TempPath(const std::string& tag) {
  static int counter = 0;
  return "/tmp/carrier_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + "_" +
         tag;
}

// `carrier ARGS` through the shell (ARGS may redirect stdin), stdout and stderr captured.
inline Run Carrier(const std::string& args) {
  const std::string base = TempPath("run");
  const std::string cmd =
      std::string(CARRIER_EXE) + " " + args + " >" + base + ".out 2>" + base + ".err";
  const int status = std::system(cmd.c_str());
  Run r{WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), Slurp(base + ".out"),
        Slurp(base + ".err")};
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

// The text of a top-level field of `carrier ... --format json` output (a string without its
// quotes), or "" when the key is absent.
inline std::string JsonField(const std::string& json, const std::string& key) {
  const auto at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return "";
  const auto from = at + key.size() + 3;
  if (json[from] == '"') return json.substr(from + 1, json.find('"', from + 1) - from - 1);
  return json.substr(from, json.find_first_of(",}", from) - from);
}
inline double JsonNumber(const std::string& json, const std::string& key) {
  return std::strtod(JsonField(json, key).c_str(), nullptr);
}

inline int Lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// Bad input: exit 2, exactly one line on stderr that names the problem, nothing on stdout.
inline void CheckRejected(const std::string& args, const std::string& must_mention) {
  Run r = Carrier(args);
  std::cout << "  carrier " << args << "  -> exit " << r.code << ": " << r.err;
  INFO("carrier " << args << "\nstderr: " << r.err << "\nstdout: " << r.out);
  CHECK(r.code == 2);
  CHECK(Lines(r.err) == 1);
  CHECK(r.err.find(must_mention) != std::string::npos);
  CHECK(r.out.empty());
}

}  // namespace carrier_test
