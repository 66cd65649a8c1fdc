// The op table end to end for the carriers added through it alone (a header, a registration,
// a bound): each runs in eval (against its certified reference, with its bound), in a sweep,
// passes `carrier laws`, and is refused by the fast backends with one line naming the ops they
// run. What each op must show is in its own TEST_CASE.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "support/cli_support.hpp"

namespace {

using carrier_test::Carrier;
using carrier_test::JsonField;
using carrier_test::JsonNumber;
using carrier_test::Lines;
using carrier_test::Run;

double Num(const std::string& json, const std::string& key) { return JsonNumber(json, key); }

// Every fast backend refuses `op` in one line that names it, exit 2.
void CheckBackendsRefuse(const std::string& op) {
  for (const char* b : {"simd", "omp", "cuda"}) {
    Run r = Carrier("eval --op " + op + " --dtype fp32 --gen normal --n 100 --backend " + b);
    std::cout << "  eval --op " << op << " --backend " << b << " -> exit " << r.code << " "
              << r.err;
    INFO(op << " on " << b << ": " << r.out << r.err);
    CHECK(r.code == 2);
    CHECK(Lines(r.err) == 1);
    CHECK(r.err.find(op) != std::string::npos);
  }
}

// `carrier laws op` passes every declaration in bf16 and fp32.
void CheckLaws(const std::string& op) {
  for (const char* dtype : {"bf16", "fp32"}) {
    const std::string args = "laws " + op + " --dtype " + dtype + " --trials 60";
    Run r = Carrier(args);
    INFO("carrier " << args << " (seed 1)\nstdout:\n" << r.out << "\nstderr: " << r.err);
    CHECK(r.code == 0);
    CHECK(r.out.find("MISMATCH") == std::string::npos);
    CHECK(r.out.find("verdict: every declaration of " + op + " matches") != std::string::npos);
  }
}

// A sweep over `op` gives ok rows only.
void CheckSweep(const std::string& op) {
  const std::string dir = "/tmp/carrier_ops_sweep_" + op + "_" + std::to_string(getpid());
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  std::ofstream(dir + "/grid.toml")
      << "[sweep]\nname = \"ops\"\nseed = 3\ntrials = 2\n[grid]\nop = [\"" << op
      << "\"]\ndtype = [\"bf16\", \"fp32\"]\nschedule = [\"seq\", \"pairwise\", \"blocked:16\"]\n"
         "n = [200]\ninput = [\"uniform01\"]\n";
  Run r = Carrier("sweep " + dir + "/grid.toml -o " + dir + "/out");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  std::ifstream csv(dir + "/out/trials.csv");
  std::string line;
  int ok = 0, rows = 0;
  std::getline(csv, line);  // header
  while (std::getline(csv, line)) {
    ++rows;
    ok += line.find("," + op + ",") != std::string::npos && line.find(",ok,") != std::string::npos;
  }
  std::cout << "  sweep of " << op << ": " << ok << " ok rows of " << rows << "\n";
  CHECK(rows == 2 * 3 * 2);
  CHECK(ok == rows);
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace

TEST_CASE("op kahan: Kahan's original sum through the table", "[fast][ops][kahan]") {
  // Positive fp32 data (sum|x| = |sum x|): Kahan's 2u + O(n u^2) holds as a relative error and
  // the plain sum is far worse. Ill-conditioned data (terms larger than the running sum, where
  // Kahan's Fast2Sum-style correction is inexact and Neumaier's test matters): still well
  // inside its bound and better than the plain sum, and worse than neumaier (printed).
  const std::string pos = " --dtype fp32 --gen uniform01 --n 100000 --seed 5 --format json";
  Run kp = Carrier("eval --op kahan" + pos);
  Run sp = Carrier("eval --op sum" + pos);
  INFO(kp.out << kp.err << sp.out);
  REQUIRE(kp.code == 0);
  REQUIRE(sp.code == 0);
  const double u = 0x1p-24;
  std::cout << "kahan fp32 uniform01 n=1e5 seq: rel " << JsonField(kp.out, "rel_error")
            << " (2u = " << 2 * u << "); sum rel " << JsonField(sp.out, "rel_error") << "\n";
  CHECK(Num(kp.out, "rel_error") <= 2 * u);
  CHECK(Num(kp.out, "rel_error") * 10 < Num(sp.out, "rel_error"));
  const std::string args = " --dtype fp32 --gen ill:1e6 --n 4000 --seed 5 --format json";
  Run k = Carrier("eval --op kahan" + args);
  Run s = Carrier("eval --op sum" + args);
  Run nm = Carrier("eval --op neumaier" + args);
  INFO(k.out << k.err << s.out << nm.out);
  REQUIRE(k.code == 0);
  REQUIRE(s.code == 0);
  REQUIRE(nm.code == 0);
  std::cout << "kahan fp32 ill:1e6 n=4000 seq: rel " << JsonField(k.out, "rel_error")
            << " err/bound " << JsonField(k.out, "error_to_bound") << "; sum rel "
            << JsonField(s.out, "rel_error") << "; neumaier rel " << JsonField(nm.out, "rel_error")
            << "\n";
  CHECK(JsonField(k.out, "reference_certified") == "true");
  CHECK(JsonField(k.out, "reference") == JsonField(s.out, "reference"));  // shared sum reference
  CHECK(Num(k.out, "rel_error") * 10 < Num(s.out, "rel_error"));
  CHECK(JsonField(k.out, "bound_formula").find("Kahan") != std::string::npos);
  CHECK(Num(k.out, "error_to_bound") <= 1);
  // Two-level accumulation comes with the family.
  Run mixed = Carrier(
      "eval --op kahan --dtype fp16 --acc 'fp16>fp32' --schedule blocked:32 "
      "--gen normal --n 1000 --format json");
  INFO(mixed.out << mixed.err);
  CHECK(mixed.code == 0);
  CheckLaws("kahan");
  CheckSweep("kahan");
  CheckBackendsRefuse("kahan");
}

TEST_CASE("op prod: the product through the table", "[fast][ops][prod]") {
  // A product of values near 1 (lognormal would under/overflow at this n): every order within
  // gamma_{n-1}, a rigorous bound, against the carrier's own MPFR reference.
  const std::string path = "/tmp/carrier_ops_prod_" + std::to_string(getpid()) + ".txt";
  {
    std::ofstream f(path);
    for (int i = 0; i < 3000; ++i) f << 1.0 + ((i * 7919) % 1001 - 500) * 1e-4 << "\n";
  }
  for (const char* sched : {"seq", "pairwise", "blocked:64", "strided:8", "random:2"}) {
    Run r = Carrier(std::string("eval --op prod --dtype fp32 --schedule ") + sched +
                    " --format json --input " + path);
    INFO(sched << ": " << r.out << r.err);
    REQUIRE(r.code == 0);
    std::cout << "prod fp32 n=3000 " << sched << ": rel " << JsonField(r.out, "rel_error")
              << " bound " << JsonField(r.out, "bound") << " err/bound "
              << JsonField(r.out, "error_to_bound") << "\n";
    CHECK(JsonField(r.out, "reference_tier") == "mpfr-carrier");
    CHECK(JsonField(r.out, "reference_certified") == "true");
    CHECK(JsonField(r.out, "bound_kind") == "relative, rigorous");
    CHECK(JsonField(r.out, "bound_vacuous") == "false");
    CHECK(Num(r.out, "error_to_bound") <= 1);
  }
  std::remove(path.c_str());
  CheckLaws("prod");
  CheckSweep("prod");
  CheckBackendsRefuse("prod");
}
