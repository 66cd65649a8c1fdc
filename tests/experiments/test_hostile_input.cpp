// Hostile input (issue 35): each case is a command that once crashed, hung, grew without bound,
// answered silently wrong or reported a meaningless number. Each must now give one line and
// exit 2 within seconds, or a correct result whose flags say what happened. Then a property
// over random ops, formats, orders and adversarial inputs (huge offsets and magnitudes, mixed
// infinities and NaN): every reported bound is >= 0 or absent, a rigorous bound holds against
// the certified error, and error/bound is never NaN when both sides are numbers. On failure
// the command (with its seed) is printed: rerun it with the carrier binary.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "sweep_test_util.hpp"

using namespace sweep_test;

namespace {

// Runs `carrier ARGS`, checks it failed with exactly one line on stderr and exit 2 within
// `seconds`, and returns that line.
std::string Refused(const std::string& args, double seconds = 20) {
  const auto t0 = std::chrono::steady_clock::now();
  const Run r = Carrier(args);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO("carrier " << args << "\nexit " << r.code << " after " << s << " s\nstdout: " << r.out
                  << "\nstderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(Lines(r.err) == 1);
  CHECK(r.err.find("internal error") == std::string::npos);
  CHECK(s < seconds);
  std::cout << "  refused in " << s << " s: " << r.err;
  return r.err;
}

nlohmann::json EvalJson(const std::string& args) {
  const Run r = Carrier(args + " --format json");
  INFO("carrier " << args << " --format json\nexit " << r.code << "\nstdout: " << r.out
                  << "\nstderr: " << r.err);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out);
}

// A JSON number, or the strings nan / inf / -inf eval writes for them.
double Number(const nlohmann::json& v) {
  if (v.is_number()) return v.get<double>();
  const std::string s = v.get<std::string>();
  if (s == "nan") return NAN;
  if (s == "inf") return INFINITY;
  if (s == "-inf") return -INFINITY;
  return NAN;
}

}  // namespace

TEST_CASE("hostile: tree files that are deep, huge or not text are refused in one line",
          "[fast][hostile]") {
  const int k = 100000;
  const std::string deep =
      Write("deep.json", "{\"n\":4,\"x\":" + std::string(k, '[') + std::string(k, ']') +
                             ",\"chains\":[{\"first\":0,\"count\":4}],"
                             "\"combines\":[]}");
  CHECK(Refused("tree --schedule file:" + deep + " --n 4").find("nested deeper") !=
        std::string::npos);
  Refused("tree --schedule file:" + deep);
  Refused("eval --op sum --dtype fp32 --gen normal --n 4 --schedule file:" + deep);
  for (const std::string n : {"18446744073709551615", "1099511627776", "4294967296"}) {
    const std::string f =
        Write("n" + n + ".json",
              "{\"n\":" + n + ",\"chains\":[{\"first\":0,\"count\":4}],\"combines\":[]}");
    CHECK(Refused("tree --schedule file:" + f + " --n 4", 5).find("cover 4 inputs") !=
          std::string::npos);
    Refused("eval --op sum --dtype fp32 --gen normal --n 4 --schedule file:" + f, 5);
    Refused("equiv --n 4 file:" + f + " seq", 5);
  }
  const std::string nul = Write("nul.json", std::string("{\"n\":4,\0\"chains\":[]}", 21));
  CHECK(Refused("tree --schedule file:" + nul).find("NUL") != std::string::npos);
  CHECK(Refused("tree --schedule file:/dev/zero").find("NUL") != std::string::npos);
  // In a sweep config the same file is a config error, found before any trial runs.
  const std::string cfg = Write("deep.toml",
                                "[sweep]\nname = \"d\"\n[grid]\nop = [\"sum\"]\n"
                                "dtype = [\"fp32\"]\nn = [4]\ninput = [\"normal\"]\n"
                                "schedule = [\"file:" +
                                    deep + "\"]\n");
  Refused("sweep " + cfg + " --quiet -o " + Tmp() + "/deep-sweep");
  const std::string missing = Write("missing.toml",
                                    "[sweep]\nname = \"m\"\n[grid]\nop = [\"sum\"]\n"
                                    "dtype = [\"fp32\"]\nn = [4]\ninput = [\"normal\"]\n"
                                    "schedule = [\"file:/nonexistent/tree.json\"]\n");
  CHECK(Refused("sweep " + missing + " --quiet -o " + Tmp() + "/missing-sweep")
            .find("/nonexistent/tree.json") != std::string::npos);
  CHECK(!Exists(Tmp() + "/missing-sweep/trials.csv"));
  Cleanup();
}

TEST_CASE("hostile: number input without newlines or with NUL bytes is refused",
          "[fast][hostile]") {
  CHECK(Refused("eval --op sum --dtype fp32 --input /dev/zero", 5).find("NUL") !=
        std::string::npos);
  const std::string nul = Write("nul.txt", std::string("5\0abc\n7\n", 8));
  CHECK(Refused("eval --op sum --dtype fp64 --input " + nul, 5).find(":1: a NUL byte") !=
        std::string::npos);
  const std::string long_line = Write("long.txt", std::string(200000, '1'));
  CHECK(Refused("eval --op sum --dtype fp64 --input " + long_line, 5).find("longer than") !=
        std::string::npos);
  Refused("sweep /dev/zero --quiet -o " + Tmp() + "/zero-sweep", 5);
  Refused("study lse-mnist --input /dev/zero", 5);
  CHECK(Refused("sweep " + Tmp() + " --quiet").find("folder") != std::string::npos);
  Cleanup();
}

TEST_CASE("hostile: --resume over a trials.csv that is not a file is refused", "[fast][hostile]") {
  const std::string cfg =
      Write("r.toml",
            "[sweep]\nname = \"r\"\n[grid]\nop = [\"sum\"]\ndtype = [\"fp32\"]\nn = [8]\n"
            "input = [\"normal\"]\n");
  const std::string dir = Tmp() + "/dir-csv", fifo = Tmp() + "/fifo-csv",
                    link = Tmp() + "/link-csv";
  REQUIRE(std::system(("mkdir -p " + dir + "/trials.csv").c_str()) == 0);
  REQUIRE(std::system(("mkdir -p " + fifo + " && mkfifo " + fifo + "/trials.csv").c_str()) == 0);
  REQUIRE(std::system(
              ("mkdir -p " + link + " && ln -s /dev/null " + link + "/trials.csv").c_str()) == 0);
  for (const std::string& d : {dir, fifo, link})
    CHECK(Refused("sweep " + cfg + " --quiet --resume -o " + d, 10).find("not a regular file") !=
          std::string::npos);
  CHECK(Refused("merge " + dir).find("-o OUT") != std::string::npos);
  Cleanup();
}

TEST_CASE("hostile: lse and softmax bounds stay non-negative at huge offsets",
          "[fast][hostile][bounds]") {
  struct Case {
    std::string args;
  };
  const std::string big = Write("big.txt", "1e20\n1e20\n1e20\n");
  const std::string huge64 = Write("huge64.txt", "3e38\n3e38\n3e38\n");
  const std::string minf = Write("minf.txt", "1\n-inf\n2\n");
  for (const std::string& args : std::vector<std::string>{
           "eval --op lse --dtype fp32 --input " + big,
           "eval --op lse --dtype fp64 --input " + huge64,
           "eval --op softmax --dtype fp32 --gen offset:1e12 --n 1000",
           "eval --op lse --dtype fp32 --gen offset:1e12 --n 1000",
           "eval --op lse --dtype fp32 --allow-nonfinite --input " + minf,
           "eval --op lse --dtype fp32 --allow-nonfinite --backend simd --input " + minf,
           "eval --op lse --dtype fp32 --allow-nonfinite --backend omp --input " + minf}) {
    const Run probe = Carrier(args + " --format json");
    if (probe.code == 2 && args.find("--backend") != std::string::npos) continue;  // not built
    const auto j = EvalJson(args);
    const double bound = Number(j["bound"]), ratio = Number(j["error_to_bound"]);
    const double err = Number(j.contains("abs_error") ? j["abs_error"] : j["componentwise_error"]);
    std::cout << "  " << args << ": error " << err << ", bound " << bound << ", ratio " << ratio
              << "\n";
    INFO(args << "\n" << j.dump());
    CHECK(bound >= 0);
    CHECK(std::isfinite(ratio));
  }
  Cleanup();
}

TEST_CASE("hostile: finite inputs that overflow the storage format are flagged, not measured",
          "[fast][hostile]") {
  const std::string f8 = Write("f8.txt", "1000\n1000\n");
  CHECK(Refused("eval --op sum --dtype fp8e4m3 --input " + f8).find("overflow fp8e4m3") !=
        std::string::npos);
  const std::string f16 = Write("f16.txt", "70000\n1\n");
  Refused("eval --op sum --dtype fp16 --input " + f16);
  Refused("eval --op sum --dtype fp16 --gen offset:1e6 --n 100");
  Refused("eval --op attention --dtype fp8e4m3 --acc fp32 --gen offset:1000 --n 16 --head-dim 16");
  const auto j = EvalJson("eval --op sum --dtype fp8e4m3 --allow-nonfinite --input " + f8);
  INFO(j.dump());
  CHECK(j["storage_overflow"].get<int>() == 2);
  // A sweep row of such an input gets its own status.
  const std::string cfg =
      Write("o.toml",
            "[sweep]\nname = \"o\"\n[grid]\nop = [\"sum\"]\ndtype = [\"fp16\", \"fp32\"]\n"
            "n = [16]\ninput = [\"offset:1e6\"]\n");
  const std::string out = Tmp() + "/overflow-sweep";
  const Run r = Carrier("sweep " + cfg + " --quiet -o " + out);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string csv = Slurp(out + "/trials.csv");
  INFO(csv);
  CHECK(csv.find(",storage_overflow,") != std::string::npos);
  CHECK(csv.find(",ok,") != std::string::npos);  // fp32 holds 1e6
  Cleanup();
}

TEST_CASE("hostile: a NaN result reports no error 0 and no rigorous bound 0", "[fast][hostile]") {
  const std::string nan = Write("nan.txt", "1\nnan\n2\n");
  const auto s = EvalJson("eval --op softmax --dtype fp32 --allow-nonfinite --input " + nan);
  INFO(s.dump());
  CHECK(std::isnan(Number(s["componentwise_error"])));
  CHECK(s["bound"] == "unavailable");
  const auto l = EvalJson("eval --op lse --dtype fp32 --allow-nonfinite --input " + nan);
  INFO(l.dump());
  CHECK(std::isnan(Number(l["abs_error"])));
  CHECK(l["bound"] == "unavailable");
  const std::string big = Write("prod.txt", "1000\n1000\n");
  const auto p = EvalJson("eval --op prod --dtype fp16 --input " + big);
  INFO(p.dump());
  CHECK(std::isinf(Number(p["abs_error"])));
  CHECK(!std::isnan(Number(p["error_to_bound"])));
  Cleanup();
}

TEST_CASE("hostile: exec: probe targets fail in one line and never hang", "[fast][hostile]") {
  const std::string sleeper = "probe 'exec:sleep 1000' --dtype fp64 --n 4 --timeout 1";
  CHECK(Refused(sleeper, 10).find("no answer within 1 s") != std::string::npos);
  const std::string fails = Refused(
      "probe 'exec:echo partial; echo \"line one\nline two\" >&2; exit 3' --dtype fp64 --n 4");
  CHECK(fails.find("exited with code 3") != std::string::npos);
  CHECK(fails.find("line one\\nline two") != std::string::npos);
  const std::string two = Refused("probe 'exec:printf \"1\\n2\\n\"' --dtype fp64 --n 4");
  CHECK(two.find("\\n") != std::string::npos);
  Refused("probe 'exec:cat' --dtype fp64 --n 4 --timeout -1");
  Cleanup();
}

TEST_CASE("hostile: work past --max-seconds is refused before it starts, naming what fits",
          "[fast][hostile]") {
  CHECK(Refused("eval --op attention --dtype fp32 --head-dim 128 --gen normal --n 2^20", 30)
            .find("fits") != std::string::npos);
  CHECK(Refused("eval --op sum --dtype fp64 --acc mpfr:1048576 --gen normal --n 1e8", 30)
            .find("fits") != std::string::npos);
  CHECK(
      Refused("study attention-deviation --precision fa2-ampere-bf16 --n 16384 --trials 10000", 60)
          .find("fits") != std::string::npos);
  CHECK(Refused("tree --schedule numpy --n 2^30", 30).find("use n <=") != std::string::npos);
  Refused("eval --op sum --dtype fp32 --gen normal --n 2^20 --max-seconds x");
  Cleanup();
}

TEST_CASE("bounds property: never negative, rigorous ones hold, no NaN ratio between numbers",
          "[fast][bounds]") {
  std::mt19937_64 rng(20261204);
  auto pick = [&](const auto& v) { return v[rng() % v.size()]; };
  const std::vector<std::string> ops = {"sum",     "kahan", "lse", "softmax",
                                        "welford", "norm2", "dot", "prod"};
  const std::vector<std::string> dtypes = {"fp8e4m3", "fp8e5m2", "fp16", "bf16", "fp32", "fp64"};
  const std::vector<std::string> schedules = {"seq",       "pairwise", "blocked:8",
                                              "strided:4", "random:3", "reverse"};
  int cases = 0, with_bound = 0, rigorous = 0, nonfinite_inputs = 0;
  for (int trial = 0; trial < 160; ++trial) {
    const std::string op = pick(ops), dtype = pick(dtypes), schedule = pick(schedules);
    const int n = 2 + static_cast<int>(rng() % 40);
    const int kind = static_cast<int>(rng() % 5);
    // Values: normal around an offset (0, 1e3, 1e12, 1e20, 3e38 in magnitude), with a few
    // infinities and NaNs in the last kind.
    const double offsets[] = {0, 1e3, 1e12, 1e20, 3e38};
    const double offset = offsets[rng() % 5];
    std::normal_distribution<double> normal(0, 1);
    std::string text;
    bool nonfinite = false;
    for (int i = 0; i < n; ++i) {
      std::string v;
      if (kind == 4 && rng() % 5 == 0) {
        v = pick(std::vector<std::string>{"inf", "-inf", "nan"});
        nonfinite = true;
      } else {
        char buf[40];
        const double x = offset + (offset == 0 ? 1 : offset * 1e-3) * normal(rng);
        std::snprintf(buf, sizeof buf, "%.17g", kind == 3 ? x * (i % 2 ? -1 : 1) : x);
        v = buf;
      }
      text += v + (op == "dot" ? " 0.5" : "") + "\n";
    }
    const std::string file = Write("p" + std::to_string(trial) + ".txt", text);
    const std::string args = "eval --op " + op + " --dtype " + dtype + " --schedule " + schedule +
                             " --allow-nonfinite --input " + file + " --format json";
    const Run r = Carrier(args);
    INFO("carrier " << args << "\ninput:\n"
                    << text << "\nstdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.code != 1);  // no internal error
    if (r.code == 2) {
      CHECK(Lines(r.err) == 1);
      continue;
    }
    ++cases;
    nonfinite_inputs += nonfinite;
    const auto j = nlohmann::json::parse(r.out);
    if (j["bound"] == "unavailable") continue;
    ++with_bound;
    const double bound = Number(j["bound"]);
    const bool relative = j["bound_kind"].get<std::string>().rfind("relative", 0) == 0;
    const double err = Number(j.contains("abs_error") ? (relative ? j["rel_error"] : j["abs_error"])
                                                      : j["componentwise_error"]);
    const double ratio = Number(j["error_to_bound"]);
    CHECK(!(bound < 0));
    CHECK(!std::isnan(bound));
    if (!std::isnan(err) && !std::isnan(bound) && !j["bound_vacuous"].get<bool>())
      CHECK(!std::isnan(ratio));
    const bool is_rigorous =
        j["bound_kind"].get<std::string>().find("rigorous") != std::string::npos;
    const bool overflowed = j.contains("storage_overflow") ||
                            (j.contains("result") && !std::isfinite(Number(j["result"])));
    // A vacuous bound says it does not apply (its assumptions fail: underflow, overflow).
    if (is_rigorous && !overflowed && !j["bound_vacuous"].get<bool>() && std::isfinite(err) &&
        std::isfinite(bound)) {
      ++rigorous;
      CHECK(err <= bound);
    }
  }
  std::cout << "  bounds property: " << cases << " evals (" << nonfinite_inputs
            << " with inf/nan inputs), " << with_bound << " with a bound, " << rigorous
            << " rigorous bounds checked against the certified error\n";
  CHECK(with_bound > 40);
  CHECK(rigorous > 10);
  Cleanup();
}
