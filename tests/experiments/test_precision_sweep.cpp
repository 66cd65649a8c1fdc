// The sweep grid key `precision` (experiments/sweep/FORMAT.md, "Precision by role"): a config
// sweeping policies gives, row for row, the numbers `carrier eval --precision` gives for the
// same input (eval --seed = the row's input_seed); the row's dtype/acc/round are the policy's
// shorthand and its `precision` column the value as written; bad values and a precision that
// disagrees with dtype/acc are refused in one line (exit 2, nothing written).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "support/cli_support.hpp"
#include "sweep_test_util.hpp"

using carrier_test::Carrier;
using carrier_test::Run;
using carrier_test::Slurp;
using carrier_test::TempPath;

namespace {

// trials.csv as one map column -> value per row.
std::vector<std::map<std::string, std::string>> ReadRows(const std::string& path) {
  const std::string all = Slurp(path);
  std::vector<std::map<std::string, std::string>> rows;
  std::vector<std::string> header;
  std::size_t pos = 0;
  while (pos < all.size()) {
    const std::size_t nl = all.find('\n', pos);
    const std::string line = all.substr(pos, nl - pos);
    pos = nl == std::string::npos ? all.size() : nl + 1;
    const auto f = sweep_test::Split(line);
    if (header.empty()) {
      header = f;
      continue;
    }
    REQUIRE(f.size() == header.size());
    std::map<std::string, std::string> r;
    for (std::size_t i = 0; i < f.size(); ++i) r[header[i]] = f[i];
    rows.push_back(r);
  }
  return rows;
}

// The value of "key" in eval's one-line JSON (numbers and strings; quotes dropped).
std::string JsonField(const std::string& json, const std::string& key) {
  const std::string k = "\"" + key + "\":";
  const auto at = json.find(k);
  if (at == std::string::npos) return "<missing>";
  std::size_t b = at + k.size();
  if (json[b] == '"') {
    const auto e = json.find('"', b + 1);
    return json.substr(b + 1, e - b - 1);
  }
  const auto e = json.find_first_of(",}", b);
  return json.substr(b, e - b);
}

double Num(const std::string& s) {
  if (s == "nan" || s.empty()) return NAN;
  if (s == "inf") return INFINITY;
  if (s == "-inf") return -INFINITY;
  return std::strtod(s.c_str(), nullptr);
}

std::string WriteConfig(const std::string& grid) {
  const std::string path = TempPath("precision.toml");
  std::ofstream(path) << "[sweep]\nname = \"precision-test\"\nseed = 7\ntrials = 2\n[grid]\n"
                      << grid;
  return path;
}

}  // namespace

TEST_CASE("sweep precision = [presets and specs] equals eval --precision row for row",
          "[fast][cli]") {
  const std::string cfg = WriteConfig(
      "op = [\"sum\", \"lse\"]\n"
      "precision = [\"all-bf16\", \"eager-bf16,s=fp32,p=fp32,out=fp32\", \"in=bf16,acc=fp32\", "
      "\"in=fp16,acc=fp16@rz\"]\n"
      "schedule = [\"blocked:16\", \"pairwise\"]\n"
      "n = 1500\ninput = \"uniform11\"\n");
  const std::string out = TempPath("precision-out");
  const Run s = Carrier("sweep " + cfg + " -o " + out + " --quiet");
  INFO("sweep stderr: " << s.err);
  REQUIRE(s.code == 0);
  const auto rows = ReadRows(out + "/trials.csv");
  REQUIRE(rows.size() == 2 * 4 * 2 * 2);
  // The shorthand each policy stands for (precision/precision_policy.hpp ToShorthand).
  const std::map<std::string, std::vector<std::string>> shorthand = {
      {"all-bf16", {"bf16", "bf16", "rne"}},
      // a second preset, its S, P and output roles overridden to acc's fp32 (the form a
      // one-precision op runs)
      {"eager-bf16,s=fp32,p=fp32,out=fp32", {"bf16", "fp32", "rne"}},
      {"in=bf16,acc=fp32", {"bf16", "fp32", "rne"}},
      {"in=fp16,acc=fp16@rz", {"fp16", "fp16", "rz"}}};
  for (const auto& r : rows) {
    const std::string& pol = r.at("precision");
    INFO("row " << r.at("trial_id") << ": op " << r.at("op") << ", precision " << pol
                << ", schedule " << r.at("schedule") << ", input_seed " << r.at("input_seed"));
    REQUIRE(shorthand.count(pol) == 1);
    CHECK(r.at("status") == "ok");
    CHECK(r.at("dtype") == shorthand.at(pol)[0]);
    CHECK(r.at("acc") == shorthand.at(pol)[1]);
    CHECK(r.at("round") == shorthand.at(pol)[2]);
    const Run e = Carrier("eval --op " + r.at("op") + " --precision '" + pol + "' --schedule " +
                          r.at("schedule") + " --gen uniform11 --n 1500 --seed " +
                          r.at("input_seed") + " --format json");
    INFO("eval: " << e.out << e.err);
    REQUIRE(e.code == 0);
    CHECK(JsonField(e.out, "precision") == pol);
    for (const char* k : {"result", "reference", "abs_error", "rel_error", "ulp_error", "bound",
                          "error_to_bound", "u"}) {
      const double a = Num(r.at(k)), b = Num(JsonField(e.out, k));
      INFO(k << ": sweep " << r.at(k) << ", eval " << JsonField(e.out, k));
      // eval prints an fp32 result as its shortest float decimal, the CSV as 17 digits.
      const bool as_float = std::string(k) == "result" && r.at("acc") == "fp32";
      CHECK(((std::isnan(a) && std::isnan(b)) || a == b ||
             (as_float && static_cast<float>(a) == static_cast<float>(b))));
    }
    CHECK(r.at("tree_hash") == JsonField(e.out, "tree_hash"));
  }
  std::system(("rm -rf " + out + " " + cfg).c_str());
}

TEST_CASE("sweep precision = the block-scaled GEMM presets: dot rows equal eval",
          "[fast][cli][mma]") {
  // A policy's mma= is dot's mma:PROFILE order (run/resolve.cpp ApplyPolicy), in a sweep too:
  // the block scales are applied in the unit (run/scaled_dot.hpp), row for row as eval does.
  const std::string cfg = WriteConfig(
      "op = [\"dot\"]\n"
      "precision = [\"deepgemm-fp8\", \"mxfp8-gemm\", \"nvfp4-gemm\"]\n"
      "n = 1000\ninput = \"normal\"\n");
  const std::string out = TempPath("precision-bs-out");
  const Run s = Carrier("sweep " + cfg + " -o " + out + " --quiet");
  INFO("sweep stderr: " << s.err);
  REQUIRE(s.code == 0);
  const auto rows = ReadRows(out + "/trials.csv");
  REQUIRE(rows.size() == 3 * 2);  // trials = 2
  const std::map<std::string, std::vector<std::string>> want = {
      {"deepgemm-fp8", {"mx:e4m3:128:fp32:amax", "mma:hopper-fp8:promote:128"}},
      {"mxfp8-gemm", {"mxfp8e4m3", "mma:blackwell-mxf8"}},
      {"nvfp4-gemm", {"nvfp4", "mma:blackwell-nvf4"}}};
  for (const auto& r : rows) {
    const std::string& pol = r.at("precision");
    INFO("precision " << pol << ", input_seed " << r.at("input_seed"));
    REQUIRE(want.count(pol) == 1);
    CHECK(r.at("status") == "ok");
    CHECK(r.at("dtype") == want.at(pol)[0]);
    CHECK(r.at("schedule_used") == want.at(pol)[1]);
    const Run e = Carrier("eval --op dot --precision " + pol + " --gen normal --n 1000 --seed " +
                          r.at("input_seed") + " --format json");
    INFO("eval: " << e.out << e.err);
    REQUIRE(e.code == 0);
    std::cout << "  sweep/eval dot " << pol << ": result " << JsonField(e.out, "result")
              << ", rel_error " << JsonField(e.out, "rel_error") << "\n";
    CHECK(static_cast<float>(Num(r.at("result"))) ==
          static_cast<float>(Num(JsonField(e.out, "result"))));
    CHECK(Num(r.at("reference")) == Num(JsonField(e.out, "reference")));
    CHECK(Num(r.at("rel_error")) == Num(JsonField(e.out, "rel_error")));
  }
  std::system(("rm -rf " + out + " " + cfg).c_str());
}

TEST_CASE("sweep precision: rows without it keep dtype/acc and an empty precision column",
          "[fast][cli]") {
  const std::string cfg =
      WriteConfig("op = \"sum\"\ndtype = \"bf16\"\nacc = \"fp32\"\nn = 100\ninput = \"normal\"\n");
  const std::string out = TempPath("shorthand-out");
  const Run s = Carrier("sweep " + cfg + " -o " + out + " --quiet");
  REQUIRE(s.code == 0);
  const auto rows = ReadRows(out + "/trials.csv");
  REQUIRE(rows.size() == 2);
  for (const auto& r : rows) {
    CHECK(r.at("precision").empty());
    CHECK(r.at("acc") == "fp32");
  }
  std::system(("rm -rf " + out + " " + cfg).c_str());
}

TEST_CASE("sweep precision: bad values and conflicts are one line, exit 2, nothing written",
          "[fast][cli]") {
  struct Case {
    const char* grid;
    std::vector<const char*> mention;
  };
  for (const Case& c : {
           // an unknown preset: the message lists the presets of the table eval uses
           Case{"precision = \"fa9-bf16\"", {"fa9-bf16", "fa2-ampere-bf16", "all-bf16"}},
           // a bad role format
           Case{"precision = \"in=bf17\"", {"bf17"}},
           // a policy the one-precision ops cannot run (as eval refuses it)
           Case{"precision = \"fa2-ampere-bf16\"", {"mma"}},
           // precision and dtype/acc that disagree: both keys named
           Case{"precision = \"in=bf16,acc=fp32\"\ndtype = \"fp16\"",
                {"[grid] precision", "[grid] dtype", "fp16"}},
           Case{"precision = \"all-bf16\"\nacc = \"fp32\"", {"[grid] precision", "[grid] acc"}},
       }) {
    const std::string cfg =
        WriteConfig(std::string("op = \"sum\"\nn = 10\ninput = \"normal\"\n") + c.grid + "\n");
    const std::string out = TempPath("bad-out");
    const Run r = Carrier("sweep " + cfg + " -o " + out);
    std::cout << "  " << c.grid << " -> exit " << r.code << ": " << r.err;
    INFO(c.grid << "\nstderr: " << r.err);
    CHECK(r.code == 2);
    CHECK(carrier_test::Lines(r.err) == 1);
    for (const char* m : c.mention) CHECK(r.err.find(m) != std::string::npos);
    CHECK(Slurp(out + "/trials.csv").empty());
    std::system(("rm -rf " + out + " " + cfg).c_str());
  }
  // Consistent duplicates are allowed: dtype bf16 is what every precision value says.
  const std::string ok = WriteConfig(
      "op = \"sum\"\nn = 10\ninput = \"normal\"\nprecision = [\"all-bf16\", "
      "\"in=bf16,acc=bf16\"]\ndtype = \"bf16\"\n");
  const Run d = Carrier("sweep " + ok + " --dry-run");
  INFO(d.err);
  CHECK(d.code == 0);
  std::system(("rm -f " + ok).c_str());
}

TEST_CASE("eval --precision prints the bound's terms by role", "[fast][cli]") {
  const std::string common =
      " --op sum --schedule blocked:16 --gen uniform11 --n 512 --seed 3"
      " --format json";
  const Run a = Carrier("eval --precision in=bf16,acc=fp32" + common);
  const Run b = Carrier("eval --precision in=bf16,acc=bf16" + common);
  INFO(a.out << a.err << "\n" << b.out << b.err);
  REQUIRE(a.code == 0);
  REQUIRE(b.code == 0);
  const std::string na = JsonField(a.out, "role_bound_note");
  std::cout << "  acc=fp32: role_bound " << JsonField(a.out, "role_bound") << ": " << na << "\n"
            << "  acc=bf16: role_bound " << JsonField(b.out, "role_bound") << "\n";
  CHECK(na.find("rigorous") != std::string::npos);
  CHECK(na.find("acc 15 x 2^-24") != std::string::npos);  // blocked:16: 15 chain additions
  CHECK(na.find("combine") != std::string::npos);
  CHECK(na.find("stored inputs") != std::string::npos);  // no in term against this reference
  CHECK(JsonField(a.out, "role_bound_kind") == "absolute, rigorous");
  // Every rounding is in acc (and combine = acc): the role bound scales with u_acc, by 2^16 to
  // first order, and holds on the measured error.
  const double ra = Num(JsonField(a.out, "role_bound")), rb = Num(JsonField(b.out, "role_bound"));
  CHECK(rb / ra >= 65536 * 0.99);
  CHECK(rb / ra <= 65536 * 1.2);  // (1+2^-8)^46 - 1 = 1.09 x 46 2^-8
  CHECK(Num(JsonField(a.out, "abs_error")) <= ra);
  CHECK(Num(JsonField(b.out, "abs_error")) <= rb);
  // lse: first order only, and said so.
  const Run l = Carrier(
      "eval --op lse --precision in=bf16,acc=fp32 --schedule pairwise --gen "
      "normal --n 1000 --format json");
  REQUIRE(l.code == 0);
  CHECK(JsonField(l.out, "role_bound_kind") == "absolute, first-order estimate");
  CHECK(JsonField(l.out, "role_bound_note").find("first-order estimate only") != std::string::npos);
}

TEST_CASE("sweep precision axis runs attention by role, rows equal eval, role bound reported",
          "[fast][cli]") {
  const std::string cfg = WriteConfig(
      "op = \"attention\"\n"
      "precision = [\"fa2-ampere-bf16\", \"eager-bf16\"]\n"
      "schedule = \"blocked:64:lift\"\n"
      "n = 128\ninput = \"normal\"\nhead_dim = 64\n");
  const std::string out = TempPath("attention-out");
  const Run s = Carrier("sweep " + cfg + " -o " + out + " --quiet");
  INFO("sweep stderr: " << s.err);
  REQUIRE(s.code == 0);
  const auto rows = ReadRows(out + "/trials.csv");
  REQUIRE(rows.size() == 2 * 2);  // two policies x trials = 2
  std::map<std::string, int> per_policy;
  for (const auto& r : rows) {
    const std::string& pol = r.at("precision");
    INFO("row " << r.at("trial_id") << ": precision " << pol << ", input_seed "
                << r.at("input_seed") << ", error " << r.at("error"));
    ++per_policy[pol];
    REQUIRE(r.at("status") == "ok");
    CHECK(r.at("dtype") == "bf16");  // both presets store q, k, v in bf16
    CHECK(r.at("acc") == "fp32");
    CHECK(r.at("role_bound_kind") == "relative first-order");
    const double err = Num(r.at("abs_error")), rb = Num(r.at("role_bound"));
    std::cout << "  attention " << pol << " trial " << r.at("trial") << ": normwise error " << err
              << ", role_bound " << rb << ", error_to_bound " << r.at("error_to_bound") << "\n";
    CHECK(std::isfinite(err));
    CHECK(err <= rb);
    CHECK(Num(r.at("bound")) == rb);
    const Run e = Carrier("eval --op attention --precision " + pol +
                          " --head-dim 64 --schedule blocked:64:lift --gen normal --n 128 --seed " +
                          r.at("input_seed") + " --format json");
    INFO("eval: " << e.out << e.err);
    REQUIRE(e.code == 0);
    CHECK(Num(JsonField(e.out, "normwise_inf_error")) == err);
    CHECK(Num(JsonField(e.out, "role_bound")) == rb);
    CHECK(r.at("tree_hash") == JsonField(e.out, "tree_hash"));
  }
  CHECK(per_policy["fa2-ampere-bf16"] == 2);
  CHECK(per_policy["eager-bf16"] == 2);
  std::system(("rm -rf " + out + " " + cfg).c_str());
  // A policy one op of the grid cannot run is still a config error naming that op.
  const std::string bad = WriteConfig(
      "op = [\"attention\", \"sum\"]\nprecision = \"fa2-ampere-bf16\"\nn = 16\ninput = "
      "\"normal\"\n");
  const std::string bad_out = TempPath("attention-bad-out");
  const Run b = Carrier("sweep " + bad + " -o " + bad_out);
  std::cout << "  op attention + sum, fa2-ampere-bf16 -> exit " << b.code << ": " << b.err;
  CHECK(b.code == 2);
  CHECK(carrier_test::Lines(b.err) == 1);
  CHECK(b.err.find("op sum") != std::string::npos);
  CHECK(b.err.find("mma") != std::string::npos);
  CHECK(Slurp(bad_out + "/trials.csv").empty());
  std::system(("rm -rf " + bad_out + " " + bad).c_str());
}
