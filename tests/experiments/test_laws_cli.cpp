// `carrier laws` and `carrier derive` end to end: every core carrier passes its laws (exit 0),
// the counterexamples fail with their evidence (exit 1), bad input is one line on stderr and
// exit 2.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "support/cli_support.hpp"

namespace {

using carrier_test::Carrier;
using carrier_test::CheckRejected;
using carrier_test::Lines;
using carrier_test::Run;
using carrier_test::Slurp;
using carrier_test::TempPath;

}  // namespace

TEST_CASE("laws: every core carrier's declarations match in bf16 and fp32", "[fast][laws]") {
  for (const char* op : {"sum", "neumaier", "max", "argmax", "lse", "welford", "norm2", "dot",
                         "affine", "attention"}) {
    for (const char* dtype : {"bf16", "fp32"}) {
      const std::string args = std::string("laws ") + op + " --dtype " + dtype + " --trials 60";
      Run r = Carrier(args);
      INFO("carrier " << args << " (seed 1)\nstdout:\n" << r.out << "\nstderr: " << r.err);
      CHECK(r.code == 0);
      CHECK(r.out.find("MISMATCH") == std::string::npos);
      CHECK(r.out.find("associative (exact, MPFR)") != std::string::npos);
      CHECK(r.out.find("bitwise commutative") != std::string::npos);
      CHECK(r.err.empty());
    }
  }
  Run lse = Carrier("laws lse --dtype bf16");
  std::cout << "carrier laws lse --dtype bf16 -> exit " << lse.code << "\n" << lse.out;
  CHECK(lse.code == 0);
  CHECK(lse.out.find("slope -6") != std::string::npos);  // about -64 per 64-bit step
}

TEST_CASE("laws: declared non-commutativity and non-bitwise commutativity are witnessed",
          "[fast][laws]") {
  Run affine = Carrier("laws affine --dtype bf16 --trials 60");
  Run welford = Carrier("laws welford --dtype bf16 --trials 60");
  std::cout << affine.out << welford.out;
  CHECK(affine.code == 0);
  CHECK(affine.out.find("GPU xor butterfly NOT allowed") != std::string::npos);
  CHECK(welford.code == 0);
  CHECK(welford.out.find("GPU xor butterfly NOT allowed") != std::string::npos);
}

TEST_CASE("laws: the counterexamples fail with their evidence", "[fast][laws]") {
  Run mean = Carrier("laws naive-mean --dtype fp32 --trials 60");
  std::cout << "carrier laws naive-mean -> exit " << mean.code << "\n" << mean.out;
  CHECK(mean.code == 1);
  CHECK(mean.out.find("MISMATCH") != std::string::npos);
  CHECK(mean.out.find("slope 0.0") != std::string::npos);
  CHECK(mean.out.find("Combine(Combine(a, b), c) = ") != std::string::npos);
  Run lse = Carrier("laws naive-lse --dtype bf16 --trials 60");
  std::cout << "carrier laws naive-lse -> exit " << lse.code << "\n" << lse.out;
  CHECK(lse.code == 1);
  CHECK(lse.out.find("h(x ++ y) = ") != std::string::npos);
  CHECK(lse.out.find("Combine(h x, h y) = ") != std::string::npos);
}

TEST_CASE("derive: worked derivations agree and counterexamples are rejected", "[fast][derive]") {
  for (const char* op : {"sum", "max", "lse", "welford", "affine"}) {
    Run r = Carrier(std::string("derive ") + op + " --trials 300");
    std::cout << r.out;
    INFO("carrier derive " << op << "\n" << r.out << r.err);
    CHECK(r.code == 0);
    CHECK(r.out.find("verdict: AGREES") != std::string::npos);
  }
  for (const char* op : {"naive-mean", "naive-lse"}) {
    Run r = Carrier(std::string("derive ") + op);
    std::cout << r.out;
    INFO("carrier derive " << op << "\n" << r.out << r.err);
    CHECK(r.code == 1);
    CHECK(r.out.find("not a list homomorphism") != std::string::npos);
    CHECK(r.out.find("leftward fold") != std::string::npos);
    CHECK(r.out.find("rightward fold") != std::string::npos);
  }
}

TEST_CASE("laws and derive: bad input is one line and exit 2", "[fast][laws]") {
  CheckRejected("laws", "missing OP");
  CheckRejected("laws softmax", "unknown OP 'softmax'");
  CheckRejected("laws sum --dtype fp7", "--dtype 'fp7'");
  CheckRejected("laws sum --trials 0", "--trials");
  CheckRejected("laws sum --trials x", "--trials");
  CheckRejected("laws sum --bogus 1", "unknown flag '--bogus'");
  CheckRejected("laws sum max", "unexpected argument 'max'");
  CheckRejected("derive", "missing OP");
  CheckRejected("derive kahan", "unknown OP 'kahan'");
  CheckRejected("derive sum --seed -1", "--seed");
  Run help = Carrier("laws --help");
  CHECK(help.code == 0);
  CHECK(help.out.find("usage: carrier laws OP") != std::string::npos);
  Run dhelp = Carrier("derive --help");
  CHECK(dhelp.code == 0);
  CHECK(dhelp.out.find("usage: carrier derive OP") != std::string::npos);
}
