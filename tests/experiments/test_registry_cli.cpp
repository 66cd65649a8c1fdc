// User-defined carriers (experiments/registry/, experiments/user_carriers/): the registry
// finds the example carrier `range` (its registration source is compiled into this binary, as
// into `carrier`), and `carrier laws|derive|eval` run it end to end; an unknown name still
// exits 2 with one line that lists the registered names among the choices.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <span>
#include <sstream>
#include <string>

#include "ops/register.hpp"
#include "registry/registry.hpp"
#include "run/memory.hpp"
#include "support/cli_support.hpp"
#include "user_carriers/range.hpp"

namespace {

using carrier_test::Carrier;
using carrier_test::CheckRejected;
using carrier_test::Lines;
using carrier_test::Run;
using carrier_test::Slurp;
using carrier_test::TempPath;

// The value of `key` in eval's text output ("key   value" lines).
std::string Field(const std::string& out, const std::string& key) {
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + " ", 0) == 0) {
      const auto v = line.find_first_not_of(' ', key.size());
      return v == std::string::npos ? "" : line.substr(v);
    }
  }
  return "<missing>";
}

}  // namespace

TEST_CASE("registry: the example carrier range is registered with every part", "[fast][registry]") {
  namespace reg = carrier::registry;
  const reg::Entry* e = reg::Find("range");
  REQUIRE(e != nullptr);
  CHECK(e->name == "range");
  CHECK(e->commutative);
  CHECK(e->components == 1);
  CHECK(e->laws != nullptr);
  CHECK(e->derive != nullptr);
  CHECK(e->replay_oracle != nullptr);
  CHECK(e->reference != nullptr);
  CHECK(reg::Find("no-such-carrier") == nullptr);
  const auto names = reg::Names();
  CHECK(std::find(names.begin(), names.end(), "range") != names.end());
  CHECK(std::is_sorted(names.begin(), names.end()));
  CHECK(reg::NamesSuffix().find(" range") != std::string::npos);
  CHECK(e->user);
  CHECK(e->bound == nullptr);  // a user carrier declares no a-priori bound
  // The op table lists it with the built-ins, after them.
  const auto trial_ops = reg::TrialOps();
  REQUIRE(!trial_ops.empty());
  CHECK(trial_ops.front() == "sum");
  CHECK(std::find(trial_ops.begin(), trial_ops.end(), "range") != trial_ops.end());
  // The MPFR reference in process: max - min of {3, -1.5, 2} is 4.5, certified at 128 bits.
  const double x[] = {3.0, -1.5, 2.0};
  const reg::CarrierReference ref =
      reg::ReferenceOf<carrier::user::Range>(std::span<const double>(x));
  CHECK(ref.certified);
  CHECK(ref.precision_bits == 128);
  REQUIRE(ref.as_double.size() == 1);
  CHECK(ref.as_double[0] == 4.5);
}

TEST_CASE("registry: carrier laws range passes every declaration", "[fast][registry]") {
  for (const char* dtype : {"bf16", "fp32", "fp64"}) {
    const std::string args = std::string("laws range --dtype ") + dtype + " --trials 60";
    Run r = Carrier(args);
    INFO("carrier " << args << "\nstdout:\n" << r.out << "\nstderr: " << r.err);
    CHECK(r.code == 0);
    CHECK(r.out.find("MISMATCH") == std::string::npos);
    CHECK(r.out.find("exact at every precision") != std::string::npos);
    CHECK(r.out.find("verdict: every declaration of range matches") != std::string::npos);
    CHECK(r.err.empty());
  }
}

TEST_CASE("registry: carrier derive range agrees with the hand-written combine",
          "[fast][registry]") {
  Run r = Carrier("derive range --trials 300");
  std::cout << r.out;
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("verdict: AGREES") != std::string::npos);
  CHECK(r.out.find("max relative difference 0 = 0 u") != std::string::npos);  // exact
}

TEST_CASE("registry: carrier eval --op range is exact with a certified MPFR reference",
          "[fast][registry]") {
  const std::string file = "/tmp/carrier_registry_cli_input_" + std::to_string(getpid()) + ".txt";
  {
    std::ofstream f(file);
    f << "# max 7.25, min -3.5: range 10.75 (exact in fp32)\n1\n-3.5\n7.25\n0.5\n2\n";
  }
  for (const char* schedule : {"seq", "pairwise", "blocked:2", "strided:2"}) {
    const std::string args =
        std::string("eval --op range --dtype fp32 --input ") + file + " --schedule " + schedule;
    Run r = Carrier(args);
    std::cout << "carrier " << args << " -> exit " << r.code << "\n" << r.out;
    INFO("carrier " << args << "\nstdout:\n" << r.out << "\nstderr: " << r.err);
    CHECK(r.code == 0);
    CHECK(Field(r.out, "result") == "10.75");
    CHECK(Field(r.out, "reference") == "10.75");
    CHECK(Field(r.out, "abs_error") == "0");
    CHECK(Field(r.out, "reference_tier") == "mpfr-carrier");
    CHECK(Field(r.out, "reference_certified") == "true");
    CHECK(Field(r.out, "reference_bits") == "128");
    CHECK(Field(r.out, "bound") == "unavailable");
  }
  Run gen = Carrier(
      "eval --op range --dtype bf16 --acc fp32 --gen normal --n 1000 "
      "--schedule pairwise --format json");
  INFO(gen.out << gen.err);
  CHECK(gen.code == 0);
  CHECK(gen.out.find("\"reference_tier\":\"mpfr-carrier\"") != std::string::npos);
  CHECK(gen.out.find("\"abs_error\":0") != std::string::npos);
  std::remove(file.c_str());
}

TEST_CASE("registry: unknown names exit 2 with one line listing the registered ones",
          "[fast][registry]") {
  CheckRejected("laws no-such-carrier", "range");
  CheckRejected("derive no-such-carrier", "range");
  CheckRejected("eval --op no-such-carrier --dtype fp32 --gen normal --n 10", "range");
  CheckRejected("eval --op range --dtype fp32 --gen normal --n 10 --exp fast", "built-in ops only");
}

TEST_CASE(
    "registry: a replay reads the stored doubles in place exactly when its conversion "
    "would not change them",
    "[fast][registry][memory]") {
  // register.hpp CachedInputs: fp64 compute, and an emulated format under a deterministic
  // rounding whose conversion gives every stored double back bit for bit, read the stored
  // doubles themselves (no n-sized copy: eval and sweep then hold the input once); anything
  // else converts. Either way the values are ToInputs's, bit for bit, for the oracle's
  // EmulatedOracle and the fast engine's Emulated alike.
  namespace reg = carrier::registry;
  using carrier::EmulationScope;
  using carrier::Rounding;
  using EmuOracle = carrier::EmulatedOracle<carrier::DynamicFormatTag, carrier::kDynamicRounding>;
  using Emu = carrier::Emulated<carrier::DynamicFormatTag, carrier::kDynamicRounding>;
  // bf16 values (exact in bf16, fp32, tf32; not all in fp16 or fp8), a -0, an inf, and
  // values that fp16 rounds.
  std::vector<double> bf16_values = {0.0,      -0.0,        1.0,
                                     -3.5,     0x1.fep+100, 0x1p-130,
                                     0x1.02p0, 65536.0,     std::numeric_limits<double>::infinity(),
                                     0.15625};
  const std::vector<double> no_b;
  auto input = [&](const std::vector<double>& a) {
    reg::ReplayInput in;
    in.a = a;
    in.b = no_b;
    in.n = a.size();
    return in;
  };
  auto check = [&]<class T>(const char* format, Rounding r, const std::vector<double>& a,
                            bool in_place) {
    EmulationScope scope(carrier::ParseFormat(format), r);
    const reg::ReplayInput in = input(a);
    std::vector<T> own;
    const std::span<const T> got = reg::CachedInputs<carrier::Sum<T>>(in, own);
    const std::vector<T> want = reg::ToInputs<carrier::Sum<T>>(in);
    INFO("format " << format << ", rounding " << static_cast<int>(r) << ", n " << a.size());
    CHECK((static_cast<const void*>(got.data()) == static_cast<const void*>(a.data())) == in_place);
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      INFO("i " << i << ", stored " << a[i]);
      CHECK(std::bit_cast<std::uint64_t>(static_cast<double>(got[i])) ==
            std::bit_cast<std::uint64_t>(static_cast<double>(want[i])));
    }
  };
  for (const Rounding r : {Rounding::kNearestEven, Rounding::kTowardZero, Rounding::kUp}) {
    check.operator()<double>("bf16", r, bf16_values, true);
    check.operator()<EmuOracle>("bf16", r, bf16_values, true);
    check.operator()<Emu>("bf16", r, bf16_values, true);
    check.operator()<Emu>("fp32", r, bf16_values, true);
    check.operator()<Emu>("fp16", r, bf16_values, false);  // 2^100 overflows, 1.0078 rounds
    check.operator()<EmuOracle>("fp8e4m3", r, bf16_values, false);
  }
  // float compute always converts (4-byte values); a NaN whose payload the conversion
  // canonicalises is a change too.
  check.operator()<float>("fp32", Rounding::kNearestEven, bf16_values, false);
  std::vector<double> with_nan = bf16_values;
  with_nan.push_back(std::bit_cast<double>(std::uint64_t{0x7ff0000000000123}));
  bool payload_kept = false;
  {
    EmulationScope scope(carrier::BF16());
    payload_kept = std::bit_cast<std::uint64_t>(Emu(with_nan.back()).Value()) == 0x7ff0000000000123;
  }
  std::cout << "bf16 conversion keeps a NaN payload: " << payload_kept << "\n";
  check.operator()<Emu>("bf16", Rounding::kNearestEven, with_nan, payload_kept);
  // The estimate eval and sweep check memory with counts no compute copy for these.
  carrier::run::TrialSpec spec;
  spec.op = "sum";
  spec.dtype = "bf16";
  spec.acc = "same";
  const auto bytes = [&](const char* dtype, const char* acc) {
    spec.dtype = dtype;
    spec.acc = acc;
    return carrier::run::TrialBytes(carrier::run::ResolveTrial(spec), 1000);
  };
  std::cout << "TrialBytes(n = 1000): bf16 " << bytes("bf16", "same") << ", fp16 acc tf32 "
            << bytes("fp16", "tf32") << ", fp32 " << bytes("fp32", "same") << ", fp32 acc bf16 "
            << bytes("fp32", "bf16") << ", fp64 " << bytes("fp64", "same") << "\n";
  // The input held packed (2 bytes bf16/fp16, 4 fp32, 8 fp64), read a window at a time by the
  // fast engine: no copy in any compute type.
  CHECK(bytes("bf16", "same") == 2000);
  CHECK(bytes("fp64", "same") == 8000);
  CHECK(bytes("fp32", "same") == 4000);
  CHECK(bytes("fp32", "bf16") == 4000);
  CHECK(bytes("fp16", "tf32") == 2000);
  // The oracle: the column decoded (8), the fp32 copy (4) and the tree (2 x 96) per value.
  spec.engine = "oracle";
  CHECK(bytes("fp32", "same") == (4 + 8 + 4 + 192) * 1000);
  // A generator that makes every value first (ill:) adds them as doubles.
  spec.engine = "fast";
  spec.dtype = "bf16";
  spec.acc = "same";
  CHECK(carrier::run::TrialBytes(carrier::run::ResolveTrial(spec), 1000, "ill:1e8") == 10000);
  CHECK(carrier::run::TrialBytes(carrier::run::ResolveTrial(spec), 1000, "normal") == 2000);
  // Pairs (dot, affine): two packed columns, read by chunks by the fast replay, their references
  // and the bounds; the oracle decodes both (8 each) and copies the pairs (2 x 4 in fp32).
  for (const char* op : {"dot", "affine"}) {
    spec.op = op;
    spec.engine = "fast";
    INFO("op " << op);
    CHECK(bytes("bf16", "same") == 4000);
    CHECK(bytes("fp32", "same") == 8000);
    CHECK(bytes("fp8e4m3", "fp32") == 2000);
    spec.engine = "oracle";
    CHECK(bytes("fp32", "same") == (2 * (4 + 8 + 4) + 192) * 1000);
  }
}
