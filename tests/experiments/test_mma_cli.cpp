// `carrier eval --op dot --schedule mma:...` and `carrier tree --schedule mma:...` end to end:
// the modelled bits for inputs whose answer differs between the matrix-unit models and IEEE
// fp32 (worked out by hand in the comments), and the one-line refusals.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

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

TEST_CASE("carrier eval runs the Blackwell profiles on plain (unit-scale) inputs",
          "[fast][cli][mma]") {
  // e4m3: 1 * 1 + 2^-6 * 2^-8 (an e4m3 subnormal, exponent clamped to -6): the product 2^-14
  // has exponent -12. blackwell-f8f6f4 (F = 25, fp32 out) keeps it: 1 + 2^-14; hopper-fp8
  // (F = 13) cuts it: 1.
  const std::string fp8 = TempPath("pairs8bw.txt");
  {
    std::ofstream f(fp8);
    f << "1 1\n0x1p-6 0x1p-8\n";
  }
  CHECK(Eval(fp8, "fp8e4m3", "mma:blackwell-f8f6f4") == 1 + std::ldexp(1.0f, -14));
  CHECK(Eval(fp8, "fp8e4m3", "mma:hopper-fp8") == 1.0f);
  CHECK(Eval(fp8, "fp8e4m3", "mma:blackwell-mxf8") == 1 + std::ldexp(1.0f, -14));
  // e2m1 (a custom format: carrier has no fp4 dtype name): 200 pairs (6, 1.5), each 9, in
  // instructions of 64 (groups of 16 summed exactly): 1800 exactly, with and without promotion.
  const std::string e2m1 = "custom:p=2,emin=0,emax=2,inf=0";
  const std::string fp4 = TempPath("pairs4bw.txt");
  {
    std::ofstream f(fp4);
    for (int i = 0; i < 200; ++i) f << "6 1.5\n";
  }
  CHECK(Eval(fp4, e2m1, "mma:blackwell-nvf4") == 1800.0f);
  CHECK(Eval(fp4, e2m1, "mma:blackwell-mxf4:promote:128") == 1800.0f);
  CheckRejected(
      "eval --op dot --dtype fp8e4m3 --acc fp32 --schedule mma:blackwell-nvf4 --input " + fp8,
      "multiplies fp4e2m1 values");
  CheckRejected("tree --schedule mma:blackwell-nvf4:promote:96 --n 8", "multiple of");
  const Run json = Carrier("tree --schedule mma:blackwell-nvf4 --n 70 --format json");
  CHECK(json.code == 0);
  CHECK(json.out.find("\"frac_bits\":35,\"align\":\"truncate\",\"output\":\"fp32-rz\","
                      "\"two_stage\":false,\"group\":16}") != std::string::npos);
  std::remove(fp8.c_str());
  std::remove(fp4.c_str());
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
