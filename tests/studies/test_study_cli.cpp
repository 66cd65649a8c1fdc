// `carrier study` as a user meets it: the CSV each study writes, -o written whole (a failing
// run leaves an existing file alone), and bad input answered by one line on stderr, exit 2.
// lse-mnist runs on the committed BHH2021 logits and checks the paper's qualitative findings
// against the measured errors.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli_support.hpp"

namespace {

using carrier_test::Carrier;
using carrier_test::CheckRejected;
using carrier_test::Lines;
using carrier_test::Run;
using carrier_test::Slurp;
using carrier_test::TempPath;

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> f;
  std::stringstream ss(line);
  std::string item;
  while (std::getline(ss, item, ',')) f.push_back(item);
  if (!line.empty() && line.back() == ',') f.push_back("");
  return f;
}

// Rows of a CSV text as maps column -> value.
std::vector<std::map<std::string, std::string>> ParseCsv(const std::string& text) {
  std::stringstream ss(text);
  std::string line;
  std::getline(ss, line);
  const auto header = Split(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(ss, line)) {
    const auto f = Split(line);
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < f.size(); ++i) row[header[i]] = f[i];
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

TEST_CASE("carrier study stagnation writes the published points as CSV", "[fast][study][cli]") {
  Run r = Carrier("study stagnation --series harmonic --dtype fp16");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out ==
        "series,dtype,round,seed,stagnation_term,stagnation_value,"
        "exact_partial_sum_at_stagnation\nharmonic,fp16,rne,0,513,7.0859375,6.818465852288514\n");
  Run sr = Carrier(
      "study stagnation --series harmonic --dtype bf16 --round sr --seed 5 --max-terms 3000");
  REQUIRE(sr.code == 0);
  const auto rows = ParseCsv(sr.out);
  REQUIRE(rows.size() == 1);
  std::cout << "  harmonic bf16 sr seed 5, 3000 terms: " << sr.out;
  CHECK(rows[0].at("stagnation_term").empty());
  CHECK(rows[0].at("round") == "sr");
  CHECK(std::stod(rows[0].at("stagnation_value")) > 5.0625);
}

TEST_CASE("carrier study -o writes the file whole and keeps it on failure", "[fast][study][cli]") {
  const std::string path = TempPath("out.csv");
  Run ok = Carrier("study stagnation --series ones --dtype bf16 -o " + path);
  REQUIRE(ok.code == 0);
  CHECK(ok.out.empty());
  const std::string written = Slurp(path);
  CHECK(written.find("ones,bf16,rne,0,257,256,257\n") != std::string::npos);
  Run bad = Carrier("study stagnation --series ones --dtype fp64 -o " + path);
  CHECK(bad.code == 2);
  CHECK(Slurp(path) == written);
  std::remove(path.c_str());
}

TEST_CASE("carrier study rejects bad command lines with one line and exit 2",
          "[fast][study][cli]") {
  CheckRejected("study", "missing study NAME");
  CheckRejected("study nosuch", "unknown study 'nosuch'");
  CheckRejected("study stagnation --dtype fp16", "--series");
  CheckRejected("study stagnation --series ones", "--dtype");
  CheckRejected("study stagnation --series ones --dtype fp16 --round up", "--round");
  CheckRejected("study stagnation --series ones --dtype fp16 --max-terms 0", "--max-terms");
  CheckRejected("study stagnation --series ones --dtype fp16 --bogus 1", "--bogus");
  CheckRejected("study stagnation --series ones --dtype fp16 -o /nonexistent-dir/x.csv",
                "/nonexistent-dir/x.csv");
  CheckRejected("study softmax-passes --repeats 0", "--repeats");
  CheckRejected("study softmax-passes --n 10,abc --timing /dev/null", "abc");
  CheckRejected("study softmax-passes --scale -1", "--scale");
#if CARRIER_TEST_HAVE_MPFR
  CheckRejected("study lse-mnist --input /nonexistent.csv", "/nonexistent.csv");
  CheckRejected("study lse-mnist --dtype fp16,fp99", "fp99");
  const std::string bad = TempPath("bad.csv");
  std::ofstream(bad) << "x0,x1\n1,2\n3,nan\n";
  CheckRejected("study lse-mnist --input " + bad, bad + ":3");
  std::ofstream(bad) << "x0,x1\n1,2\n3\n";
  CheckRejected("study lse-mnist --input " + bad, bad + ":3");
  std::ofstream(bad) << "x0,x1\n";
  CheckRejected("study lse-mnist --input " + bad, "no data rows");
  std::remove(bad.c_str());
#endif
  Run help = Carrier("study --help");
  CHECK(help.code == 0);
  CHECK(help.out.rfind("usage: carrier study", 0) == 0);
}

#if CARRIER_TEST_HAVE_MPFR
// BHH2021 on their 2500 MNIST vectors: the basic algorithms overflow in fp16 on every vector
// whose largest logit exceeds log(65520) ~ 11.09 (where exp rounds to inf), never in bf16, and
// the shifted ones never; wherever nothing overflows, every error against the
// certified reference stays below the leading term of its bound.
TEST_CASE("carrier study lse-mnist: overflow and errors against the bounds", "[fast][study][cli]") {
  const std::string data = std::string(CARRIER_TEST_SOURCE_DIR) +
                           "/papers/bhh2021-lse-softmax/data/bhh2021_mnist_presoftmax.csv";
  Run r = Carrier("study lse-mnist --input " + data);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto rows = ParseCsv(r.out);
  REQUIRE(rows.size() == 2 * 2500 * 6);
  std::map<std::string, int> overflows;
  std::map<std::string, double> worst_ratio;
  const double fp16_threshold = std::log(65504.0 + 16.0);  // exp(x) rounds to inf above it
  for (const auto& row : rows) {
    const std::string key = row.at("dtype") + " " + row.at("algorithm");
    const bool overflow = row.at("overflow") == "1";
    overflows[key] += overflow;
    const double max_x = std::stod(row.at("max_x"));
    const bool basic = row.at("algorithm").find("basic") != std::string::npos;
    INFO("dtype " << row.at("dtype") << " vector " << row.at("vector") << " algorithm "
                  << row.at("algorithm") << " max_x " << max_x);
    // An exp overflows beyond the threshold; the sum of 10 exps can overflow from
    // threshold - log(10) on.
    if (row.at("dtype") == "fp16" && basic && max_x > fp16_threshold) CHECK(overflow);
    if (overflow) CHECK(max_x > fp16_threshold - std::log(10.0));
    if (row.at("dtype") == "bf16" || !basic) CHECK_FALSE(overflow);
    if (!overflow) {
      const double ratio = std::stod(row.at("err_ref_u")) / std::stod(row.at("bound_u"));
      worst_ratio[key] = std::max(worst_ratio[key], ratio);
      CHECK(ratio <= 1.0);
    }
  }
  for (const auto& [key, count] : overflows)
    std::cout << "  " << key << ": " << count << " overflow(s), worst error/bound "
              << worst_ratio[key] << "\n";
}
#endif

TEST_CASE("carrier study attention-deviation writes one row per cell with the golden deviations",
          "[fast][study][cli]") {
  const std::string out = TempPath("attention_deviation.csv");
  Run r = Carrier(
      "study attention-deviation --precision 'all-bf16;in=fp32' --algorithm fa2,fa1 "
      "--n 16,40 --block-r 8 --block-c 4,16 --head-dim 8 --trials 2 -o " +
      out);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto rows = ParseCsv(Slurp(out));
  // 2 policies x 2 algorithms x 2 n x 2 Bc x 2 trials.
  REQUIRE(rows.size() == 32);
  double worst_fp32 = 0, worst_bf16 = 0;
  for (const auto& row : rows) {
    INFO("row policy " << row.at("policy") << " algorithm " << row.at("algorithm") << " n "
                       << row.at("n") << " Bc " << row.at("block_c"));
    const double fa = std::stod(row.at("fa_max")), ba = std::stod(row.at("ba_max"));
    CHECK(std::stod(row.at("fa_mean")) <= fa);
    CHECK(std::stod(row.at("fa_ba_max")) <= fa + ba);  // the triangle inequality
    (row.at("policy") == "\"in=fp32\"" ? worst_fp32 : worst_bf16) =
        std::max(row.at("policy") == "\"in=fp32\"" ? worst_fp32 : worst_bf16, fa);
  }
  INFO("worst |FA - golden|: fp32 " << worst_fp32 << ", all-bf16 " << worst_bf16);
  CHECK(worst_fp32 < 1e-5);
  CHECK(worst_bf16 > 100 * worst_fp32);
  std::remove(out.c_str());
}

TEST_CASE("carrier study attention-deviation: the rows do not depend on --jobs",
          "[fast][study][cli]") {
  const std::string common =
      "study attention-deviation --precision 'all-bf16;fa2-ampere-bf16' --algorithm fa2,fa1 "
      "--n 24,40 --block-c 8,16 --head-dim 8 --trials 3";
  const std::string one = TempPath("ad_jobs1.csv"), three = TempPath("ad_jobs3.csv");
  const Run a = Carrier(common + " --jobs 1 -o " + one);
  const Run b = Carrier(common + " --jobs 3 -o " + three);
  INFO(a.err << b.err);
  REQUIRE(a.code == 0);
  REQUIRE(b.code == 0);
  const std::string rows1 = Slurp(one), rows3 = Slurp(three);
  std::cout << "  attention-deviation: " << ParseCsv(rows1).size()
            << " rows, --jobs 1 and --jobs 3 byte-identical: " << (rows1 == rows3) << "\n";
  CHECK(ParseCsv(rows1).size() == 2 * 2 * 2 * 2 * 3);  // policies x algorithms x n x Bc x trials
  CHECK(rows1 == rows3);
  std::remove(one.c_str());
  std::remove(three.c_str());
}

TEST_CASE("carrier study attention-deviation rejects bad input with one line",
          "[fast][study][cli]") {
  CheckRejected("study attention-deviation", "--precision");
  CheckRejected("study attention-deviation --precision fa9", "fa9");
  CheckRejected("study attention-deviation --precision 'in=bf16;;in=fp16'", "empty item");
  CheckRejected("study attention-deviation --precision in=bf16 --algorithm fa3", "fa3");
  CheckRejected("study attention-deviation --precision in=bf16 --algorithm baseline", "always");
  CheckRejected("study attention-deviation --precision in=bf16 --n 0", "--n");
  CheckRejected("study attention-deviation --precision in=bf16 --block-c 0", "--block-c");
  CheckRejected("study attention-deviation --precision in=bf16 --trials 0", "--trials");
  CheckRejected("study attention-deviation --precision in=bf16 --tiles 64", "BRxBC");
  CheckRejected("study attention-deviation --precision in=bf16 --tiles 0x64", "--tiles");
  CheckRejected("study attention-deviation --precision in=bf16 --tiles 8x8 --block-c 8", "--tiles");
  CheckRejected("study attention-deviation --precision torch-bf17", "bf17");
  CheckRejected("study attention-deviation --precision in=bf16 --jobs 0", "--jobs");
  CheckRejected("study attention-deviation --precision in=fp16 --baseline-precision eager-bf16",
                "same inputs");
  CheckRejected(
      "study attention-deviation --precision 'in=bf16;in=fp16;in=fp32' --baseline-precision "
      "'in=bf16;in=fp16'",
      "one per policy");
}

TEST_CASE("carrier study attention-deviation: tile pairs, one baseline policy, Br reuses FA",
          "[fast][study][cli]") {
  const std::string out = TempPath("attention_deviation_tiles.csv");
  Run r = Carrier(
      "study attention-deviation --precision 'torch-bf16;fa2-ampere-bf16' --baseline-precision "
      "eager-bf16 --algorithm fa1 --n 48 --tiles '16x16;4x16;16x4' --head-dim 8 --trials 2 -o " +
      out);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto rows = ParseCsv(Slurp(out));
  REQUIRE(rows.size() == 2 * 3 * 2);  // policies x tiles x trials
  std::map<std::string, std::string> ba_by_trial;
  std::map<std::string, std::string> fa_by_cell;
  for (const auto& row : rows) {
    INFO("row policy " << row.at("policy") << " tile " << row.at("block_r") << "x"
                       << row.at("block_c") << " trial " << row.at("trial"));
    CHECK(row.at("baseline") == "\"eager-bf16\"");
    // One baseline for every policy: the same BA deviation per trial.
    auto [it, fresh] = ba_by_trial.emplace(row.at("trial"), row.at("ba_max"));
    if (!fresh) CHECK(it->second == row.at("ba_max"));
    // Br groups rows only: 16x16 and 4x16 report the same FA.
    if (row.at("block_c") == "16") {
      auto [jt, first] = fa_by_cell.emplace(row.at("policy") + row.at("trial"),
                                            row.at("fa_max") + row.at("fa_mean"));
      if (!first) CHECK(jt->second == row.at("fa_max") + row.at("fa_mean"));
    }
  }
  // One baseline per policy, in order.
  Run per = Carrier(
      "study attention-deviation --precision 'all-bf16;in=fp16' --baseline-precision "
      "'torch-bf16;torch-fp16' --algorithm fa1 --n 32 --tiles 8x8 --head-dim 8 --trials 1 -o " +
      out);
  INFO(per.err);
  REQUIRE(per.code == 0);
  const auto prow = ParseCsv(Slurp(out));
  REQUIRE(prow.size() == 2);
  CHECK(prow[0].at("baseline") == "\"torch-bf16\"");
  CHECK(prow[1].at("baseline") == "\"torch-fp16\"");
  std::remove(out.c_str());
}
