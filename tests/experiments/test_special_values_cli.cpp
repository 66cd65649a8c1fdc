// The special-values table (DESIGN.md) through every op, backend and precision pair that
// `carrier eval` runs on a CPU: NaN in, +inf in, all -inf, +inf with -inf, signed zeros,
// subnormals and values at the format's max. For each cell: the run succeeds; eval's own
// comparison with the table reports no special_value_mismatch (except at the max, where a
// finite exact value may really overflow to inf, which eval rightly flags); a fast backend
// (simd, omp) gives the same result text as replay of the schedule it reports (the bit-exact
// contract on special values); and the table's fixed rows hold (NaN in -> nan; log-sum-exp
// and max of all -inf are -inf, never NaN; +inf in a sum, max or lse -> inf). A combination a
// backend does not run (it says so in one line, exit 2) is counted and printed. An empty
// input cannot be written as a number file (it needs one record); core's carrier tests cover
// Finalize(Identity()).
#include <catch2/catch.hpp>

#include "sweep_test_util.hpp"

using namespace sweep_test;

namespace {

std::string JsonField(const std::string& json, const std::string& key) {
  const std::string needle = "\"" + key + "\":";
  const auto p = json.find(needle);
  if (p == std::string::npos) return "";
  auto b = p + needle.size(), e = b;
  if (json[b] == '"') {
    e = json.find('"', b + 1);
    return json.substr(b + 1, e - b - 1);
  }
  e = json.find_first_of(",}", b);
  return json.substr(b, e - b);
}

}  // namespace

TEST_CASE("eval: the special-values table through every op x backend x precision",
          "[fast][special]") {
  struct Input {
    std::string name, one_column, two_columns;
  };
  const std::vector<Input> inputs = {
      {"nan", "1\nnan\n2\n", "1 2\nnan 1\n3 4\n"},
      {"+inf", "1\ninf\n2\n", "1 2\ninf 1\n3 4\n"},
      {"all-inf", "-inf\n-inf\n-inf\n", "-inf 1\n-inf 1\n-inf 1\n"},
      {"+inf-inf", "inf\n-inf\n1\n", "inf 1\n-inf 1\n1 1\n"},
      {"-0", "-0\n-0\n-0\n", "-0 1\n-0 1\n0 -1\n"},
      {"subnormal", "4.9e-324\n-1e-310\n2.2e-308\n", "1e-200 1e-200\n-1e-160 1e-160\n1 1\n"},
      {"max", "65504\n65504\n3.4028234663852886e38\n", "65504 65504\n1e300 1e10\n1 1\n"},
  };
  const std::vector<std::string> ops = {"sum",     "kahan",   "max",   "argmax", "lse",
                                        "softmax", "welford", "norm2", "dot"};
  const std::vector<std::pair<std::string, std::string>> precisions = {
      {"fp64", "fp64"}, {"fp32", "fp32"}, {"bf16", "fp32"}, {"bf16", "bf16"}};
  const std::map<std::string, std::vector<std::string>> backend_schedules = {
      {"replay", {"seq", "pairwise", "strided:4"}},
      {"simd", {"strided:16", "seq"}},
      {"omp", {"omp:2", "omp:2:seq:seq"}}};
  int ran = 0, refused = 0, compared = 0;
  for (const auto& in : inputs) {
    const std::string f1 = Write("in1_" + in.name + ".txt", in.one_column);
    const std::string f2 = Write("in2_" + in.name + ".txt", in.two_columns);
    for (const auto& op : ops) {
      const std::string file = op == "dot" ? f2 : f1;
      for (const auto& [dtype, acc] : precisions) {
        // The exp that every backend shares bit for bit needs native compute (fp32/fp64).
        const std::string exp = acc == "fp32" || acc == "fp64" ? "portable" : "libm";
        for (const auto& [backend, schedules] : backend_schedules) {
          for (const auto& schedule : schedules) {
            const std::string args = "eval --op " + op + " --dtype " + dtype + " --acc " + acc +
                                     " --input " + file + " --allow-nonfinite --format json" +
                                     " --exp " + exp + " --backend " + backend + " --schedule " +
                                     schedule;
            Run r = Carrier(args);
            INFO("carrier " << args << "\nstdout: " << r.out << "\nstderr: " << r.err);
            if (r.code == 2 && backend != "replay") {
              CHECK(Lines(r.err) == 1);
              ++refused;
              continue;
            }
            REQUIRE(r.code == 0);
            ++ran;
            // Values at the format's max may overflow for real (a finite exact value, an inf
            // result): eval flags that as a mismatch, rightly; the table covers the rest.
            if (in.name != "max") CHECK(JsonField(r.out, "special_value_mismatch") != "true");
            const std::string result = JsonField(r.out, "result");
            if (op != "softmax" && op != "argmax") {
              if (in.name == "nan") CHECK(result == "nan");
              if (in.name == "+inf" && (op == "sum" || op == "max" || op == "lse"))
                CHECK(result == "inf");
              if (in.name == "all-inf" && op == "lse") CHECK(result == "-inf");
              if (in.name == "all-inf" && op == "max") CHECK(result == "-inf");
            }
            if (backend != "replay" && op != "softmax") {
              // The same tree through replay gives the same text (bits).
              const std::string used = JsonField(r.out, "schedule");
              Run rep =
                  Carrier("eval --op " + op + " --dtype " + dtype + " --acc " + acc + " --input " +
                          file + " --allow-nonfinite --format json --exp " + exp +
                          " --backend replay "
                          "--schedule " +
                          used);
              INFO("replay of " << used << ": " << rep.out << rep.err);
              REQUIRE(rep.code == 0);
              CHECK(JsonField(rep.out, "result") == result);
              ++compared;
            }
            break;  // one schedule each backend accepts is enough per cell
          }
        }
      }
    }
  }
  std::cout << "  " << ran << " runs, " << compared << " fast-backend results equal to replay, "
            << refused << " combinations a backend does not run (refused in one line)\n";
  CHECK(compared > 0);
  Cleanup();
}
