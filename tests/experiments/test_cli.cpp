// The carrier CLI: --help and --version, every verb's happy path, and bad input answered by
// exactly one line on stderr and exit code 2 (never a crash, never a silent default).
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/mma.hpp"
#include "core/schedule.hpp"
#include "experiments/inputs/generators.hpp"
#include "precision/half.hpp"
#include "precision/precision_policy.hpp"
#include "support/cli_support.hpp"
#include "support/test_support.hpp"

namespace {

using carrier_test::Carrier;
using carrier_test::CheckRejected;
using carrier_test::Lines;
using carrier_test::Run;
using carrier_test::Slurp;
using carrier_test::TempPath;

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
  for (const auto& c : cases) CheckRejected(c.args, c.must_mention);
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

#if CARRIER_TEST_HAVE_MPFR

TEST_CASE("carrier eval measures against the certified reference", "[fast][cli][eval]") {
  Run r = Carrier("eval --op sum --dtype fp32 --gen uniform01 --n 1000 --seed 3 --format json");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  for (const char* key :
       {"\"result\":", "\"reference\":", "\"abs_error\":", "\"rel_error\":", "\"ulp_error\":",
        "\"bound\":", "\"error_to_bound\":", "\"schedule\":\"seq\"", "\"tree_max_depth\":999",
        "\"reference_tier\":\"exact\"", "\"reference_certified\":true"})
    CHECK(r.out.find(key) != std::string::npos);
  // Small integers sum exactly in any order: zero error.
  const std::string file = "/tmp/carrier_cli_ints_" + std::to_string(getpid()) + ".txt";
  {
    std::ofstream f(file);
    f << "# small integers\n1\n2\n0x1p+2\n-3\n\n5\n";
  }
  Run exact = Carrier("eval --op sum --dtype fp16 --schedule pairwise --input " + file);
  std::remove(file.c_str());
  INFO(exact.out << exact.err);
  REQUIRE(exact.code == 0);
  CHECK(exact.out.find("result                     9\n") != std::string::npos);
  CHECK(exact.out.find("abs_error                  0\n") != std::string::npos);
  Run lse = Carrier("eval --op lse --dtype fp16 --gen uniform11 --n 500 --format json");
  CHECK(lse.code == 0);
  CHECK(lse.out.find("\"reference_tier\":\"fast\"") != std::string::npos);
  Run soft =
      Carrier("eval --op softmax --dtype bf16 --acc fp32 --exp portable --gen normal --n 50");
  CHECK(soft.code == 0);
  CHECK(soft.out.find("componentwise_error") != std::string::npos);
  Run mp = Carrier("eval --op welford --dtype fp32 --acc mpfr:200 --gen normal --n 100");
  CHECK(mp.code == 0);
  Run att = Carrier(
      "eval --op attention --head-dim 64 --dtype bf16 --acc fp32 --schedule "
      "blocked:16:lift --gen normal --n 48 --format json");
  INFO(att.out << att.err);
  CHECK(att.code == 0);
  CHECK(att.out.find("\"componentwise_error\":") != std::string::npos);
  CHECK(att.out.find("\"reference_certified\":true") != std::string::npos);
  for (const char* op : {"var-twopass", "var-corrected", "var-textbook"}) {
    Run var = Carrier(std::string("eval --op ") + op +
                      " --dtype fp32 --gen normal --n 1000 --format json");
    INFO(var.out << var.err);
    CHECK(var.code == 0);
    CHECK(var.out.find("\"reference_tier\":\"exact\"") != std::string::npos);
    CHECK(var.out.find("\"cond\":") != std::string::npos);
  }
  {
    // Chan-Golub-LeVeque's correction: on data with mean 1e6 (kappa ~ 1e6) in fp32 the computed
    // mean is off by delta, which adds n delta^2 to the two-pass sum of squares; the corrected
    // algorithm subtracts (sum (x - mean))^2 / n and must be far more accurate there.
    auto rel = [](const std::string& json) {
      const auto at = json.find("\"rel_error\":");
      return at == std::string::npos ? std::nan("") : std::strtod(json.c_str() + at + 12, nullptr);
    };
    const std::string args = " --dtype fp32 --gen offset:1e6 --n 4096 --seed 1 --format json";
    Run two = Carrier("eval --op var-twopass" + args),
        cor = Carrier("eval --op var-corrected" + args);
    INFO("carrier eval --op var-twopass|var-corrected" << args << "\n" << two.out << cor.out);
    REQUIRE(two.code == 0);
    REQUIRE(cor.code == 0);
    std::cout << "offset:1e6 n=4096 fp32: two-pass rel error " << rel(two.out) << ", corrected "
              << rel(cor.out) << "\n";
    CHECK(rel(cor.out) * 10 < rel(two.out));
  }
  Run sr = Carrier(
      "eval --op sum --dtype bf16 --round sr --sr-seed 9 --gen uniform01 --n 100 --format json");
  CHECK(sr.code == 0);
  CHECK(sr.out.find("\"sr_seed\":9") != std::string::npos);
}

#if CARRIER_TEST_HAVE_MPFR
TEST_CASE("carrier eval computes attention in an emulated bf16 or fp16 format",
          "[fast][cli][eval]") {
  // acc bf16 / fp16: every operation of the replay rounds into that format (emulated), so the
  // error scales with its unit roundoff, which is the u the bound uses.
  auto field = [](const std::string& json, const std::string& key) {
    const auto at = json.find("\"" + key + "\":");
    return at == std::string::npos ? std::nan("")
                                   : std::strtod(json.c_str() + at + key.size() + 3, nullptr);
  };
  const std::string common =
      "eval --op attention --head-dim 64 --dtype bf16 --schedule "
      "blocked:16:lift --gen normal --n 64 --seed 3 --format json --acc ";
  Run f32 = Carrier(common + "fp32"), b16 = Carrier(common + "bf16"),
      h16 = Carrier(common + "fp16");
  INFO("reproduce: carrier " << common << "{fp32,bf16,fp16}\n"
                             << f32.out << b16.out << h16.out << f32.err << b16.err << h16.err);
  REQUIRE(f32.code == 0);
  REQUIRE(b16.code == 0);
  REQUIRE(h16.code == 0);
  const double e32 = field(f32.out, "normwise_inf_error"),
               eb = field(b16.out, "normwise_inf_error"), eh = field(h16.out, "normwise_inf_error");
  std::cout << "eval attention n=64 Bc=16 normwise-inf error: fp32 " << e32 << ", fp16 " << eh
            << ", bf16 " << eb << "\n";
  CHECK(field(b16.out, "u") == 0x1p-8);
  CHECK(field(h16.out, "u") == 0x1p-11);
  CHECK(eb > 1000 * e32);  // u ratio 2^16
  CHECK(eh > 100 * e32);   // u ratio 2^13
  CHECK(eb > eh);
  CHECK(eb < field(b16.out, "bound"));
  CHECK(eh < field(h16.out, "bound"));
  // EmulatedOracle attention runs on the replay only, and not in mpfr.
  Run simd = Carrier(common + "bf16 --backend simd");
  Run mp = Carrier(common + "mpfr:100");
  CHECK(simd.code == 2);
  CHECK(simd.err.find("replay only") != std::string::npos);
  CHECK(mp.code == 2);
  CHECK(mp.err.find("attention computes in one format") != std::string::npos);
}
#endif

TEST_CASE("carrier eval rejects bad input with one line and exit 2", "[fast][cli][eval]") {
  const std::string dir = "/tmp/carrier_cli_eval_" + std::to_string(getpid());
  std::system(("mkdir -p " + dir).c_str());
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
    return dir + "/" + name;
  };
  const std::string empty = write("empty.txt", "# nothing here\n\n");
  const std::string bad = write("bad.txt", "1\n2\nthree\n");
  const std::string nan = write("nan.txt", "1\nnan\n");
  const std::string huge = write("huge.txt", "1e999\n");
  const std::string one_col = write("one.txt", "1\n2\n");
  struct Case {
    std::string args;
    std::string must_mention;
  };
  const Case cases[] = {
      {"eval --dtype fp32 --gen normal --n 10", "missing required flag --op"},
      {"eval --op median --dtype fp32 --gen normal --n 10", "--op must be one of"},
      {"eval --op attention --dtype fp32 --gen normal --n 10", "attention"},
      {"eval --op sum --gen normal --n 10", "missing required flag --dtype"},
      {"eval --op sum --dtype fp17 --gen normal --n 10", "fp17"},
      {"eval --op sum --dtype custom:p=0,emin=-14,emax=15 --gen normal --n 10", "custom"},
      {"eval --op sum --dtype fp32 --round up --gen normal --n 10", "up"},
      {"eval --op sum --dtype fp64 --round rz --gen normal --n 10", "fp64 computes in rne only"},
      {"eval --op lse --dtype fp16 --exp portable --gen normal --n 10", "portable"},
      {"eval --op sum --dtype fp32 --acc mpfr:1 --gen normal --n 10", "mpfr:BITS"},
      {"eval --op sum --dtype fp32 --gen normal", "missing required flag --n"},
      {"eval --op sum --dtype fp32 --gen normal --n 0", "at least 1"},
      {"eval --op sum --dtype fp32 --gen gamma --n 10", "unknown generator 'gamma'"},
      {"eval --op sum --dtype fp32 --gen ill:0.5 --n 10", "ill:COND"},
      {"eval --op sum --dtype fp32", "give the input"},
      {"eval --op sum --dtype fp32 --gen normal --n 5 --input " + one_col, "not both"},
      {"eval --op sum --dtype fp32 --input " + empty, "no numbers"},
      {"eval --op sum --dtype fp32 --input " + bad, "bad.txt:3: cannot parse 'three'"},
      {"eval --op sum --dtype fp32 --input " + nan, "nan.txt:2: 'nan' is not finite"},
      {"eval --op sum --dtype fp32 --input " + huge, "out of the range of a double"},
      {"eval --op dot --dtype fp32 --input " + one_col, "expected 2 numbers per line, found 1"},
      {"eval --op sum --dtype fp32 --input " + dir + "/missing.txt", "cannot open"},
      {"eval --op argmax --dtype fp32 --schedule strided:4 --gen normal --n 10", "not commutative"},
      {"eval --op sum --dtype fp32 --backend gpu --gen normal --n 10", "--backend must be one of"},
      {"eval --op attention --dtype fp32 --head-dim 48 --gen normal --n 10", "head_dim 48"},
      {"eval --op sum --dtype fp32 --head-dim 64 --gen normal --n 10", "--head-dim goes with"},
      {"eval --op sum --dtype fp32 --schedule blocked:0 --gen normal --n 10", "TILE"},
  };
  for (const auto& c : cases) CheckRejected(c.args, c.must_mention);
  // A fast backend either runs (exit 0) or, not built here or without a device, says so in
  // one line with exit 2 (backends::Unavailable).
  for (const char* b : {"simd", "omp", "cuda"}) {
    Run r = Carrier(std::string("eval --op sum --dtype fp32 --gen normal --n 100 --backend ") + b);
    std::cout << "  eval --backend " << b << " -> exit " << r.code << " " << r.err;
    INFO(b << ": " << r.out << r.err);
    CHECK((r.code == 0 || (r.code == 2 && Lines(r.err) == 1 && r.out.empty())));
  }
  // Special values are accepted on request and follow the project's table.
  Run special = Carrier("eval --op lse --dtype fp32 --allow-nonfinite --input " + nan);
  CHECK(special.code == 0);
  CHECK(special.out.find("result                     nan") != std::string::npos);
  std::system(("rm -rf " + dir).c_str());
}

// eval's JSON is valid whatever the --input path holds: its strings go through nlohmann-json
// (experiments/io/json.hpp, shared with manifest.json and the tree JSON), which writes every
// control character escaped (\t, \u0001), and nlohmann's parser accepts the line; the field
// names are the sweep CSV's (FORMAT.md: reference_bits, cond, seconds, schedule_used).
TEST_CASE("carrier eval JSON escapes control characters and uses the CSV's names",
          "[fast][cli][eval]") {
  const std::string path = "/tmp/carrier_cli_ctl_" + std::to_string(getpid()) + "_\x01\ttab.txt";
  std::ofstream(path) << "1\n2\n3\n";
  std::string quoted = "'" + path + "'";
  Run r = Carrier("eval --op sum --dtype fp32 --format json --input " + quoted);
  std::remove(path.c_str());
  INFO("input path with \\x01 and a tab; stdout: " << r.out << " stderr: " << r.err);
  REQUIRE(r.code == 0);
  REQUIRE(!r.out.empty());
  std::size_t controls = 0;
  for (std::size_t i = 0; i + 1 < r.out.size(); ++i)
    controls += static_cast<unsigned char>(r.out[i]) < 0x20 ? 1 : 0;
  std::cout << "eval JSON with a control character in --input: " << controls
            << " raw control characters before the final newline\n";
  CHECK(controls == 0);
  CHECK(r.out.find("\\u0001\\ttab.txt") != std::string::npos);
  CHECK(nlohmann::json::accept(r.out));
  CHECK(nlohmann::json::parse(r.out).at("input") == "file:" + path);
  for (const char* key : {"\"reference_bits\":", "\"cond\":", "\"seconds\":", "\"schedule_used\":"})
    CHECK(r.out.find(key) != std::string::npos);
  for (const char* old_key : {"reference_precision_bits", "condition_number", "compute_seconds"})
    CHECK(r.out.find(old_key) == std::string::npos);
}

// Two-level accumulation (FABsum, acc INNER>OUTER): binary16 tiles of 32, float tile sums.
// The expectation is a plain loop: each tile folded from +0 with every sum rounded to binary16
// (the float sum of two binary16 values rounded once more to 11 bits is the correctly rounded
// sum: 24 >= 2 * 11 + 2), then the tile sums added left to right in float.
TEST_CASE("carrier eval runs FABsum with acc fp16>fp32 like a plain loop", "[fast][cli][eval]") {
  const std::uint64_t seed = 31;
  carrier::test::Rng rng(seed);
  const std::size_t n = 1000, b = 32;
  std::vector<float> x(n);
  const std::string file = "/tmp/carrier_cli_fabsum_" + std::to_string(getpid()) + ".txt";
  {
    std::ofstream f(file);
    for (auto& v : x) {
      v = carrier::Half(rng.Uniform01()).ToFloat();
      f << carrier::test::Exact(v) << "\n";
    }
  }
  float outer = 0.0f, all16 = 0.0f;
  for (std::size_t lo = 0; lo < n; lo += b) {
    float tile = 0.0f;
    for (std::size_t i = lo; i < n && i < lo + b; ++i) tile = carrier::Half(tile + x[i]).ToFloat();
    outer = lo == 0 ? tile : outer + tile;
    all16 = lo == 0 ? tile : carrier::Half(all16 + tile).ToFloat();
  }
  Run r = Carrier(
      "eval --op sum --dtype fp16 --acc 'fp16>fp32' --schedule blocked:32 --format json --input " +
      file);
  Run same =
      Carrier("eval --op sum --dtype fp16 --schedule blocked:32 --format json --input " + file);
  std::remove(file.c_str());
  INFO("reproduce: seed=" << seed << " n=" << n
                          << " schedule=blocked:32 types=fp16 tiles, fp32 "
                             "tile sums; loop "
                          << carrier::test::Exact(outer) << "\n"
                          << r.out << r.err);
  REQUIRE(r.code == 0);
  auto field = [](const std::string& json, const std::string& key) {
    const auto at = json.find("\"" + key + "\":");
    return at == std::string::npos ? std::string() : json.substr(at + key.size() + 3, 40);
  };
  const float got = std::strtof(field(r.out, "result").c_str(), nullptr);
  const float got16 = std::strtof(field(same.out, "result").c_str(), nullptr);
  std::cout << "eval fp16>fp32 blocked:32 n=1000: " << carrier::test::Exact(got) << " (loop "
            << carrier::test::Exact(outer) << "; all-fp16: eval " << carrier::test::Exact(got16)
            << ", loop " << carrier::test::Exact(all16) << ")\n";
  CHECK(got == outer);
  CHECK(r.out.find("\"acc\":\"fp16>fp32\"") != std::string::npos);
  CHECK(r.out.find("FABsum") != std::string::npos);  // the bound's formula names it
  // u is the inner (binary16) unit roundoff.
  CHECK(std::strtod(field(r.out, "u").c_str(), nullptr) == 0x1p-11);
  // The all-fp16 run differs (so the two-level run is not one-precision by accident).
  CHECK(got16 == all16);
  CHECK(all16 != outer);

  CheckRejected("eval --op sum --dtype fp32 --acc 'fp32>fp16' --gen normal --n 10", "wider");
  CheckRejected("eval --op sum --dtype fp16 --acc 'bf16>fp16' --gen normal --n 10", "wider");
  CheckRejected("eval --op max --dtype fp16 --acc 'fp16>fp32' --gen normal --n 10", "not 'max'");
  CheckRejected("eval --op sum --dtype fp16 --acc 'fp16>' --gen normal --n 10", "INNER>OUTER");
  CheckRejected("eval --op sum --dtype fp16 --acc 'mpfr:30>fp64' --gen normal --n 10", "inner");
  CheckRejected("eval --op sum --dtype fp16 --acc 'fp16>fp32' --backend simd --gen normal --n 10",
                "replay only");
}

#else  // a build without MPFR: eval has no certified reference and says so

TEST_CASE("carrier eval without MPFR refuses with one line", "[fast][cli][eval]") {
  CheckRejected("eval --op sum --dtype fp32 --gen normal --n 10", "no MPFR");
  CheckRejected("laws sum", "MPFR");
}

#endif

// Help is generated from the tables (issue 36 item 6): every schedule kind, generator, matrix-unit
// profile and precision preset appears where a user looks, and a study's help is its own.
TEST_CASE("help lists every schedule kind, generator, mma profile and preset", "[fast][cli]") {
  Run eval = Carrier("eval --help");
  Run tree = Carrier("tree --help");
  REQUIRE(eval.code == 0);
  REQUIRE(tree.code == 0);
  for (const carrier::ScheduleKindDoc& d : carrier::kScheduleKindDocs) {
    INFO("schedule syntax " << d.syntax);
    CHECK(eval.out.find(d.syntax) != std::string::npos);
    CHECK(tree.out.find(d.syntax) != std::string::npos);
  }
  for (const carrier::inputs::GeneratorDoc& d : carrier::inputs::kGeneratorDocs) {
    INFO("generator syntax " << d.syntax);
    CHECK(eval.out.find(d.syntax) != std::string::npos);
  }
  for (const carrier::MmaProfile& p : carrier::kMmaProfiles) {
    INFO("mma profile " << p.name);
    CHECK(eval.out.find(" " + std::string(p.name)) != std::string::npos);
    CHECK(tree.out.find(" " + std::string(p.name)) != std::string::npos);
  }
  for (const carrier::PrecisionPreset& p : carrier::PrecisionPresets()) {
    INFO("preset " << p.name);
    CHECK(eval.out.find(" " + p.name) != std::string::npos);
  }
  CHECK(eval.out.find('{') == std::string::npos);      // every placeholder filled
  CHECK(tree.out.find("| dot") == std::string::npos);  // no pipe into a tool nothing installs

  Run study = Carrier("study attention-deviation --help");
  CHECK(study.code == 0);
  CHECK(study.out.rfind("usage: carrier study", 0) == 0);
  CHECK(study.out.find("attention-deviation --precision") != std::string::npos);
  CHECK(study.out.find("stagnation --series") == std::string::npos);
  Run all = Carrier("study --help");
  CHECK(all.out.find("stagnation --series") != std::string::npos);
  CHECK(all.out.find("attention-deviation --precision") != std::string::npos);

  Run demo = Carrier("demo --help");
  CHECK(demo.out.find("long double") == std::string::npos);
  CHECK(demo.out.find("certified") != std::string::npos);
}

TEST_CASE("every documented generator parses and an unknown one lists them all", "[fast][cli]") {
  for (const carrier::inputs::GeneratorDoc& d : carrier::inputs::kGeneratorDocs) {
    Run r = Carrier(std::string("eval --op sum --dtype fp32 --n 64 --gen ") + d.example);
    INFO("generator example " << d.example << ": " << r.err);
    CHECK(r.code == (CARRIER_TEST_HAVE_MPFR ? 0 : 2));
  }
  Run bad = Carrier("eval --op sum --dtype fp32 --gen gaussian --n 10");
  CHECK(bad.code == 2);
  for (const carrier::inputs::GeneratorDoc& d : carrier::inputs::kGeneratorDocs) {
    INFO("generator syntax " << d.syntax << " in: " << bad.err);
    CHECK(bad.err.find(d.syntax) != std::string::npos);
  }
}
