// `carrier eval --op dot --schedule mma:...` and `carrier tree --schedule mma:...` end to end:
// the modelled bits for inputs whose answer differs between the matrix-unit models and IEEE
// fp32 (worked out by hand in the comments), and the one-line refusals.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "support/cli_support.hpp"

namespace {

using carrier_test::Carrier;
using carrier_test::CheckRejected;
using carrier_test::Run;
using carrier_test::TempPath;

// The "result" field of eval's JSON, as a double.
double Result(const Run& r) {
  const std::string key = "\"result\":";
  const auto pos = r.out.find(key);
  REQUIRE(pos != std::string::npos);
  std::size_t at = pos + key.size();
  if (r.out[at] == '"') ++at;
  return std::strtod(r.out.c_str() + at, nullptr);
}

// eval prints an fp32 result as its shortest decimal: compare it as the float it reads back to.
float Eval(const std::string& file, const std::string& dtype, const std::string& schedule) {
  const std::string args = "eval --op dot --dtype " + dtype + " --acc fp32 --schedule " + schedule +
                           " --input " + file + " --format json";
  const Run r = Carrier(args);
  INFO("carrier " << args << "\nstderr: " << r.err << "\nstdout: " << r.out);
  REQUIRE((r.code == 0 || r.code == 1));  // 1 = reference not certified; never here
  CHECK(r.code == 0);
  const float v = static_cast<float>(Result(r));
  std::cout << "  carrier " << args << "  -> result " << std::hexfloat << v << std::defaultfloat
            << "\n";
  return v;
}

}  // namespace

TEST_CASE("carrier eval --op dot --schedule mma:... gives the modelled bits", "[fast][cli][mma]") {
  // fp16: a = (1, 0, 0, 0, 1, 1, 1, 1), b = (1, 0, 0, 0, 2^-24 x 4). Volta (k4, F = 23): the
  // first step gives 1, the second cuts the four 2^-24 against 1 (quantum 2^-23): 1. Turing and
  // Ampere (8 terms, F = 24) and Hopper (16 terms, F = 25) keep them: 1 + 2^-22. IEEE fp32 seq
  // rounds 1 + 2^-24 to 1 four times: 1.
  const std::string fp16 = TempPath("pairs16.txt");
  {
    std::ofstream f(fp16);
    f << "1 1\n0 0\n0 0\n0 0\n";
    for (int i = 0; i < 4; ++i) f << "1 0x1p-24\n";
  }
  const float big = 1 + std::ldexp(1.0f, -22);
  CHECK(Eval(fp16, "fp16", "mma:volta") == 1.0f);
  CHECK(Eval(fp16, "fp16", "mma:turing") == big);
  CHECK(Eval(fp16, "fp16", "mma:ampere") == big);
  CHECK(Eval(fp16, "fp16", "mma:hopper") == big);
  CHECK(Eval(fp16, "fp16", "seq") == 1.0f);

  // e4m3: a.b = 1 * 1, then 255 products 2^-9 * 2^-9 = 2^-18. hopper-fp8 (F = 13, e8m13):
  // every product is cut against the running 1: 1. With promote:128 the second chunk of 128
  // sums its products exactly from 0 (2^-11) and the fp32 accumulator adds it: 1 + 2^-11. IEEE
  // fp32 seq keeps every one: 1 + 255 2^-18.
  const std::string fp8 = TempPath("pairs8.txt");
  {
    std::ofstream f(fp8);
    f << "1 1\n";
    for (int i = 0; i < 255; ++i) f << "0x1p-9 0x1p-9\n";
  }
  CHECK(Eval(fp8, "fp8e4m3", "mma:hopper-fp8") == 1.0f);
  CHECK(Eval(fp8, "fp8e4m3", "mma:hopper-fp8:promote:128") == 1 + std::ldexp(1.0f, -11));
  CHECK(Eval(fp8, "fp8e4m3", "seq") == 1 + 255 * std::ldexp(1.0f, -18));

  // The bound follows the fused node (first order), and the error stays under it.
  const Run r = Carrier(
      "eval --op dot --dtype fp16 --acc fp32 --schedule mma:volta --gen normal "
      "--n 4096 --format json");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("fused steps, first order") != std::string::npos);
  const auto pos = r.out.find("\"error_to_bound\":");
  REQUIRE(pos != std::string::npos);
  const double ratio = std::strtod(r.out.c_str() + pos + 17, nullptr);
  std::cout << "  mma:volta, normal, n 4096: error_to_bound " << ratio << "\n";
  CHECK(ratio < 1);
  std::remove(fp16.c_str());
  std::remove(fp8.c_str());
}

TEST_CASE("mma schedules refuse what they cannot model, in one line", "[fast][cli][mma]") {
  CheckRejected("eval --op sum --dtype fp16 --acc fp32 --schedule mma:volta --gen normal --n 8",
                "dot only");
  CheckRejected("eval --op dot --dtype fp32 --acc fp32 --schedule mma:volta --gen normal --n 8",
                "multiplies fp16 values");
  CheckRejected(
      "eval --op dot --dtype fp16 --acc fp32 --schedule mma:hopper-fp8 --gen normal "
      "--n 8",
      "fp8e4m3");
  CheckRejected("eval --op dot --dtype fp16 --acc bf16 --schedule mma:volta --gen normal --n 8",
                "fp32 or fp64");
  CheckRejected(
      "eval --op dot --dtype fp16 --acc fp32 --schedule mma:volta --backend simd "
      "--gen normal --n 8",
      "backend replay only");
  CheckRejected("eval --op dot --dtype fp16 --acc fp32 --schedule mma:pascal --gen normal --n 8",
                "unknown mma profile");
  CheckRejected("tree --schedule mma:hopper-fp8:promote:100 --n 8", "multiple of");
}

TEST_CASE("carrier tree draws mma schedules", "[fast][cli][mma]") {
  const Run text = Carrier("tree --schedule mma:hopper-fp8:promote:128 --n 300");
  CHECK(text.code == 0);
  std::cout << text.out;
  CHECK(text.out.find("fused node      32 products per step, F = 13") != std::string::npos);
  const Run json = Carrier("tree --schedule mma:volta --n 10 --format json");
  CHECK(json.code == 0);
  CHECK(json.out.find("\"fused\":{\"input\":\"fp16\",\"terms\":4,\"frac_bits\":23") !=
        std::string::npos);
  const Run dot = Carrier("tree --schedule mma:ampere:promote:16 --n 40 --format dot");
  CHECK(dot.code == 0);
  CHECK(dot.out.find("mma x[32..39]") != std::string::npos);
}

// eval --op matmul (experiments/run/matmul.hpp): every output (i, j) is eval --op dot on row i
// of A and column j of B under the same flags, bit for bit, the file's raw values rounded to
// storage by the same path.
TEST_CASE("carrier eval --op matmul: every output is eval --op dot on its row and column",
          "[fast][cli][mma][matmul]") {
  const int m = 3, n = 4, k = 200;
  std::mt19937_64 rng(20261205);
  std::normal_distribution<double> normal;
  std::vector<double> a(m * k), b(k * n);
  for (double& v : a) v = normal(rng);
  for (double& v : b) v = normal(rng);
  const std::string matrices = TempPath("matmul.txt");
  {
    std::ofstream f(matrices);
    f << std::hexfloat;
    for (double v : a) f << v << "\n";
    for (double v : b) f << v << "\n";
  }
  for (const std::string schedule :
       {"mma:hopper", "mma:hopper:promote:64", "splitk:4", "splitk:3:pairwise", "blocked:32"}) {
    const std::string csv = TempPath("outputs.csv");
    const std::string args = "eval --op matmul --m 3 --n 4 --k 200 --dtype fp16 --acc fp32 " +
                             std::string("--schedule ") + schedule + " --input " + matrices +
                             " --outputs " + csv + " --format json --threads 2";
    const Run r = Carrier(args);
    INFO("carrier " << args << "\nstderr: " << r.err << "\nstdout: " << r.out);
    REQUIRE(r.code == 0);
    std::cout << "  carrier " << args << "\n    -> " << r.out;
    std::ifstream in(csv);
    std::string line;
    std::getline(in, line);
    CHECK(line == "i,j,result,reference");
    int rows = 0;
    while (std::getline(in, line)) {
      int i = 0, j = 0;
      char result[64] = "", reference[64] = "";
      REQUIRE(std::sscanf(line.c_str(), "%d,%d,%63[^,],%63s", &i, &j, result, reference) == 4);
      ++rows;
      const std::string pairs = TempPath("pairs.txt");
      {
        std::ofstream f(pairs);
        f << std::hexfloat;
        for (int t = 0; t < k; ++t) f << a[i * k + t] << " " << b[t * n + j] << "\n";
      }
      const std::string dot_args = "eval --op dot --dtype fp16 --acc fp32 --schedule " + schedule +
                                   " --input " + pairs + " --format json";
      const Run d = Carrier(dot_args);
      INFO("carrier " << dot_args << "\nstderr: " << d.err << "\nstdout: " << d.out
                      << "\nmatmul row: " << line);
      REQUIRE(d.code == 0);
      const float dot = static_cast<float>(carrier_test::JsonNumber(d.out, "result"));
      const float mm = static_cast<float>(std::strtod(result, nullptr));
      CHECK(std::memcmp(&dot, &mm, sizeof dot) == 0);
      CHECK(carrier_test::JsonNumber(d.out, "reference") == std::strtod(reference, nullptr));
    }
    CHECK(rows == m * n);
  }
}

// fp32 storage and compute, seq, K = 2, B = (1, 1)^T; the rows of A give C = 1 + 2^-25 (fp32:
// 1, error 2^-25), 1 + 3 2^-24 (a tie between 1 + 2^-23 and 1 + 2^-22: the even 1 + 2^-22,
// error 2^-24) and 2 (exact).
TEST_CASE("carrier eval --op matmul: the error statistics of a hand-made product",
          "[fast][cli][matmul]") {
  const std::string file = TempPath("hand.txt");
  {
    std::ofstream f(file);
    f << "1\n0x1p-25\n1\n0x3p-24\n2\n0\n1\n1\n";
  }
  const std::string args =
      "eval --op matmul --m 3 --n 1 --k 2 --dtype fp32 --acc fp32 --schedule seq --input " + file +
      " --format json";
  const Run r = Carrier(args);
  INFO("carrier " << args << "\nstderr: " << r.err << "\nstdout: " << r.out);
  REQUIRE(r.code == 0);
  std::cout << "  carrier " << args << "\n    -> " << r.out;
  const double e1 = std::ldexp(1.0, -25), e2 = std::ldexp(1.0, -24);
  const double c1 = 1 + e1, c2 = 1 + 3 * e2, c3 = 2;
  const double fro = std::sqrt(e1 * e1 + e2 * e2) / std::sqrt(c1 * c1 + c2 * c2 + c3 * c3);
  auto near = [](double got, double want) { return std::fabs(got - want) <= 1e-12 * want; };
  using carrier_test::JsonNumber;
  CHECK(JsonNumber(r.out, "max_abs_error") == e2);
  CHECK(near(JsonNumber(r.out, "max_rel_error"), e2 / c2));
  CHECK(near(JsonNumber(r.out, "median_rel_error"), e1 / c1));
  CHECK(near(JsonNumber(r.out, "normwise_fro_error"), fro));
  CHECK(JsonNumber(r.out, "normwise_max_error") == e2 / 2);
  CHECK(JsonNumber(r.out, "outputs") == 3);
  CHECK(carrier_test::JsonField(r.out, "reference_certified") == "true");
}

TEST_CASE("carrier eval --op matmul refuses bad sizes in one line", "[fast][cli][matmul]") {
  const std::string gen = " --dtype fp16 --acc fp32 --schedule mma:hopper --gen normal";
  CheckRejected("eval --op matmul --m 0 --n 2 --k 2" + gen, "m must be at least 1");
  CheckRejected("eval --op matmul --m 2 --n 2" + gen, "--k");
  CheckRejected("eval --op matmul --m 2 --n 2 --k 2000000000" + gen, "at most 2^30");
  CheckRejected("eval --op matmul --m 1000000 --n 1000 --k 1000000" + gen, "GiB");
  CheckRejected("eval --op matmul --m 3000 --n 3000 --k 16384 --max-seconds 10" + gen,
                "--max-seconds");
  const std::string file = TempPath("short.txt");
  {
    std::ofstream f(file);
    f << "1\n2\n3\n";
  }
  CheckRejected("eval --op matmul --m 2 --n 2 --k 2 --dtype fp32 --input " + file, "numbers");
}
