// carrier explain (experiments/run/explain.hpp): held-back runs are recovered from their
// outputs alone.
//
// Contract held: for a sum replayed by the trial runner (run::RunTrial, the path of `carrier
// eval`) under an order drawn from the library (run::LibraryOrders) and a precision drawn from
// explain's default space (acc format x rounding, or a wide accumulator rounded once to a
// narrower output), and for a dot replayed under a drawn mma profile and promotion interval,
// Explain with the default search space lists the true configuration among the configurations
// that reproduce the output bit for bit. 30 sum cases and 24 dot cases from a fixed seed; on
// failure each prints its seed, case, n, dtype and configuration, which reproduce it with
// `carrier eval ... --format json` and `carrier explain ... --observed HEX`.
// Also: two observations get a one-step difference; bad input exits 2 with one line.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "core/mma.hpp"
#include "run/explain.hpp"
#include "run/trial.hpp"
#include "support/cli_support.hpp"

using namespace carrier;

namespace {

constexpr std::uint64_t kSeed = 20261205;

struct Truth {
  std::string schedule, acc, round, out;
  std::string Precision() const { return acc + " " + round + (out.empty() ? "" : " > " + out); }
};

// The held-back run: the trial runner's result for this configuration.
double HeldBack(const std::string& op, const std::string& dtype, const std::string& gen,
                std::uint64_t n, std::uint64_t seed, const Truth& t) {
  run::TrialSpec spec;
  spec.op = op;
  spec.dtype = dtype;
  spec.acc = t.acc;
  spec.round = t.round;
  spec.out = t.out;
  spec.schedule = t.schedule;
  const run::ResolvedTrial trial = run::ResolveTrial(spec);
  const run::TrialInput in = run::MakeInput(trial, inputs::ParseGenerator(gen), n, seed);
  const run::SharedReference ref = run::ComputeReference(trial, in);
  const run::TrialOutcome o = run::RunTrial(trial, in, ref);
  return static_cast<double>(o.components[o.main]);
}

std::string Hex(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

bool Found(const run::ExplainObservation& ob, const Truth& t) {
  for (const run::ExplainConfig& c : ob.matches)
    if (c.schedule == t.schedule && c.precision == t.Precision()) return true;
  return false;
}

void Recover(const std::string& op, const std::string& dtype, const std::string& gen,
             std::uint64_t n, std::uint64_t seed, const Truth& t, int index, double& seconds) {
  const double observed = HeldBack(op, dtype, gen, n, seed, t);
  run::ExplainSpec spec;
  spec.op = op;
  spec.dtype = dtype;
  spec.gen = gen;
  spec.n = n;
  spec.seed = seed;
  spec.observed = {observed};
  const run::ExplainResult r = run::Explain(spec);
  seconds += r.seconds;
  const run::ExplainObservation& ob = r.observed[0];
  INFO("test seed " << kSeed << ", case " << index << ": carrier eval --op " << op << " --dtype "
                    << dtype << " --acc " << t.acc << " --round " << t.round
                    << (t.out.empty() ? "" : " --precision ... out=" + t.out) << " --schedule "
                    << t.schedule << " --gen " << gen << " --n " << n << " --seed " << seed
                    << "  -> " << Hex(observed) << "; explain found " << ob.matches.size()
                    << " matches in " << ob.groups.size() << " groups, " << r.replays
                    << " replays");
  CHECK(Found(ob, t));
}

}  // namespace

TEST_CASE("explain recovers a sum's order and precision from its output", "[fast][explain]") {
  std::mt19937_64 rng(kSeed);
  const std::vector<std::string> dtypes = {"fp32", "fp32", "bf16", "fp16"};
  const std::vector<std::string> gens = {"normal", "uniform11", "uniform01", "lognormal"};
  // explain's default precisions: every acc in every rounding (fp64: rne), and fp32/fp64
  // accumulators rounded once to a narrower output.
  std::vector<Truth> precisions;
  for (const char* acc : {"fp8e4m3", "fp8e5m2", "fp16", "bf16", "tf32", "fp32", "fp64"})
    for (const char* r : {"rne", "rna", "rz", "ru", "rd", "ro"})
      if (std::string(acc) != "fp64" || std::string(r) == "rne")
        precisions.push_back({"", acc, r, ""});
  for (const char* out : {"fp32", "bf16", "fp16"}) precisions.push_back({"", "fp64", "rne", out});
  for (const char* out : {"bf16", "fp16"}) precisions.push_back({"", "fp32", "rne", out});
  double seconds = 0;
  const int cases = 30;
  for (int c = 0; c < cases; ++c) {
    const std::uint64_t n = 16 + rng() % 1200;
    const std::string dtype = dtypes[rng() % dtypes.size()];
    const std::string gen = gens[rng() % gens.size()];
    const std::vector<std::string> orders = run::LibraryOrders(n);
    Truth t = precisions[rng() % precisions.size()];
    t.schedule = orders[rng() % orders.size()];
    Recover("sum", dtype, gen, n, 1 + rng() % 1000, t, c, seconds);
  }
  std::cout << "  explain sum: " << cases << " held-back cases, search " << seconds << " s\n";
}

TEST_CASE("explain recovers a dot's mma profile and promotion interval", "[fast][explain]") {
  std::mt19937_64 rng(kSeed + 1);
  const std::vector<std::string> dtypes = {"fp16", "bf16", "fp8e4m3"};
  double seconds = 0;
  const int cases = 24;
  for (int c = 0; c < cases; ++c) {
    const std::uint64_t n = 64 + rng() % 960;
    const std::string dtype = dtypes[c % dtypes.size()];
    std::vector<const MmaProfile*> fit;
    for (const MmaProfile& p : kMmaProfiles)
      if (MmaInputAccepts(p.node.input, dtype) && p.scale == MmaScale::kNone)  // plain inputs
        fit.push_back(&p);
    REQUIRE(!fit.empty());
    const MmaProfile& p = *fit[rng() % fit.size()];
    std::vector<std::uint64_t> intervals = {0};
    for (std::uint64_t m = p.k; m < n; m *= 2) intervals.push_back(m);
    const std::uint64_t promote = intervals[rng() % intervals.size()];
    Truth t{"mma:" + std::string(p.name) + (promote ? ":promote:" + std::to_string(promote) : ""),
            "fp32", "rne", ""};
    Recover("dot", dtype, c % 2 ? "normal" : "uniform11", n, 1 + rng() % 1000, t, c, seconds);
  }
  std::cout << "  explain dot: " << cases << " held-back cases, search " << seconds << " s\n";
}

TEST_CASE("explain names a one-step difference between two observations", "[fast][explain]") {
  // blocked:128 and blocked:64 over the same fp32 inputs, and a promotion interval.
  auto observe = [](const std::string& op, const std::string& dtype, const Truth& t) {
    return HeldBack(op, dtype, "normal", 1000, 7, t);
  };
  run::ExplainSpec sum;
  sum.op = "sum";
  sum.gen = "normal";
  sum.n = 1000;
  sum.seed = 7;
  sum.observed = {observe("sum", "fp32", {"blocked:128", "fp32", "rne", ""}),
                  observe("sum", "fp32", {"blocked:64", "fp32", "rne", ""})};
  REQUIRE(sum.observed[0] != sum.observed[1]);
  const run::ExplainResult r = run::Explain(sum);
  std::cout << "  two sums: " << r.difference << "\n";
  CHECK(r.difference.rfind("same ", 0) == 0);
  CHECK(Found(r.observed[0], {"blocked:128", "fp32", "rne", ""}));
  CHECK(Found(r.observed[1], {"blocked:64", "fp32", "rne", ""}));

  run::ExplainSpec dot = sum;
  dot.op = "dot";
  dot.dtype = "fp16";
  dot.observed = {observe("dot", "fp16", {"mma:hopper:promote:128", "fp32", "rne", ""}),
                  observe("dot", "fp16", {"mma:hopper", "fp32", "rne", ""})};
  REQUIRE(dot.observed[0] != dot.observed[1]);
  const run::ExplainResult d = run::Explain(dot);
  std::cout << "  two dots: " << d.difference << "\n";
  CHECK(d.difference.rfind("same ", 0) == 0);
  CHECK(Found(d.observed[0], {"mma:hopper:promote:128", "fp32", "rne", ""}));
}

TEST_CASE("carrier explain: bad input is one line and exit 2", "[fast][explain][cli]") {
  using carrier_test::CheckRejected;
  CheckRejected("explain --op lse --gen normal --n 10 --observed 1", "--op");
  CheckRejected("explain --op sum --gen normal --n 10", "--observed");
  CheckRejected("explain --op sum --gen normal --n 10 --observed 0x1.8q+3", "not a number");
  CheckRejected("explain --op sum --gen normal --n 10 --observed 1 --search orders=bogus", "bogus");
  CheckRejected("explain --op sum --gen normal --n 10 --observed 1 --search mma=hopper", "dot");
  CheckRejected("explain --op sum --observed 1", "--input");
  CheckRejected("explain --op sum --gen normal --n 10 --observed 1 --search 'acc=fp64;round=rz'",
                "rne only");
  // round= alone leaves fp64 at rne (no refusal); nothing matches 2^40-ish: exit 1.
  const carrier_test::Run rz = carrier_test::Carrier(
      "explain --op sum --gen normal --n 100 --observed 0x1.234566p+40 --search round=rz");
  INFO(rz.err);
  CHECK(rz.code == 1);
  // The text report names the matching order for a small exact case: 1 + 2^-24 + 2^-24 in fp32.
  const std::string file = carrier_test::TempPath("explain.txt");
  {
    std::FILE* f = std::fopen(file.c_str(), "w");
    std::fputs("1\n0x1p-24\n0x1p-24\n", f);
    std::fclose(f);
  }
  const carrier_test::Run r = carrier_test::Carrier(
      "explain --op sum --input " + file +
      " --observed 0x1.000002p+0 --search 'orders=seq,reverse;acc=fp32;round=rne;out=none'");
  std::cout << r.out;
  CHECK(r.code == 0);
  CHECK(r.out.find(": reverse\n") != std::string::npos);                // 1 + (2^-24 + 2^-24)
  CHECK(r.out.find("1 matching configurations") != std::string::npos);  // seq rounds to 1
}
