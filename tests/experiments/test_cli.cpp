// The carrier CLI: --help and --version, every verb's happy path, and bad input answered by
// exactly one line on stderr and exit code 2 (never a crash, never a silent default).
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

struct Run {
  int code;
  std::string out;
  std::string err;
};

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Run Carrier(const std::string& args) {
  static int counter = 0;
  const std::string base = "/tmp/carrier_cli_test_" + std::to_string(getpid()) + "_" +
                           std::to_string(counter++);
  const std::string cmd = std::string(CARRIER_EXE) + " " + args + " >" + base + ".out 2>" +
                          base + ".err";
  const int status = std::system(cmd.c_str());
  Run r{WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), Slurp(base + ".out"),
        Slurp(base + ".err")};
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

int Lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace

TEST_CASE("carrier --help and --version", "[fast][cli]") {
  Run help = Carrier("--help");
  CHECK(help.code == 0);
  CHECK(help.out.find("verbs:") != std::string::npos);
  CHECK(help.out.find("demo") != std::string::npos);
  CHECK(help.out.find("tree") != std::string::npos);
  Run version = Carrier("--version");
  CHECK(version.code == 0);
  CHECK(version.out.rfind("carrier ", 0) == 0);
  for (const char* verb : {"demo", "tree"}) {
    Run r = Carrier(std::string(verb) + " --help");
    INFO(verb);
    CHECK(r.code == 0);
    CHECK(r.out.rfind("usage: carrier " + std::string(verb), 0) == 0);
  }
}

TEST_CASE("bad command lines exit 2 with one line naming the problem", "[fast][cli]") {
  struct Case {
    std::string args;
    std::string must_mention;
  };
  const Case cases[] = {
      {"frobnicate", "unknown verb 'frobnicate'"},
      {"--frob", "unknown flag '--frob'"},
      {"tree --schedule seq", "missing required flag --n"},
      {"tree --n 10", "missing required flag --schedule"},
      {"tree --schedule blocked:0 --n 10", "TILE must be a positive integer"},
      {"tree --schedule zigzag --n 10", "unknown kind 'zigzag'"},
      {"tree --schedule seq --n abc", "--n must be a non-negative integer"},
      {"tree --schedule seq --n -5", "--n must be a non-negative integer"},
      {"tree --schedule seq --n 10 --format png", "--format must be one of text, dot, json"},
      {"tree --schedule seq --n 10 --bogus 1", "unknown flag '--bogus'"},
      {"tree --schedule seq --n 10 --n 11", "given twice"},
      {"tree --schedule seq --n", "--n needs a value"},
      {"tree --schedule seq --n 10 extra", "unexpected argument 'extra'"},
      {"tree --schedule seq --n 2^40", "above the limit"},
      {"demo --n 1", "--n must be at least 2"},
      {"demo --seed x", "--seed must be a non-negative integer"},
  };
  for (const auto& c : cases) {
    Run r = Carrier(c.args);
    std::cout << "  carrier " << c.args << "  -> exit " << r.code << ": " << r.err;
    INFO("carrier " << c.args << "\nstderr: " << r.err << "\nstdout: " << r.out);
    CHECK(r.code == 2);
    CHECK(Lines(r.err) == 1);
    CHECK(r.err.find(c.must_mention) != std::string::npos);
    CHECK(r.out.empty());
  }
  Run none = Carrier("");
  CHECK(none.code == 2);
}

TEST_CASE("carrier tree prints text and DOT and JSON", "[fast][cli]") {
  Run text = Carrier("tree --schedule blocked:4:pairwise --n 16");
  CHECK(text.code == 0);
  CHECK(text.out.find("max leaf depth  5") != std::string::npos);
  CHECK(text.out.find("push x[12..15]") != std::string::npos);
  Run dot = Carrier("tree --schedule strided:4 --n 8 --format dot");
  CHECK(dot.code == 0);
  CHECK(dot.out.rfind("digraph merge_tree {", 0) == 0);
  Run json = Carrier("tree --schedule pairwise --n 8 --format=json");
  CHECK(json.code == 0);
  CHECK(json.out.find("\"max_leaf_depth\":3") != std::string::npos);
  Run big = Carrier("tree --schedule seq --n 1e6");
  CHECK(big.code == 0);
  CHECK(big.out.find("max leaf depth  999999") != std::string::npos);
}

TEST_CASE("carrier demo prints its table", "[fast][cli]") {
  Run r = Carrier("demo --n 20000 --seed 7");
  std::cout << r.out;
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  int rows = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    for (const char* op : {"lse ", "variance ", "sum "})
      if (line.rfind(op, 0) == 0) ++rows;
  }
  CHECK(rows == 12);
  for (const char* s : {"seq", "pairwise", "blocked:64", "strided:16"})
    CHECK(r.out.find(s) != std::string::npos);
  CHECK(r.out.find("nan") == std::string::npos);
}
