// `carrier eval --op dot --schedule mma:...` and `carrier tree --schedule mma:...` end to end:
// the modelled bits for inputs whose answer differs between the matrix-unit models and IEEE
// fp32 (worked out by hand in the comments), and the one-line refusals.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/dot_arithmetic.hpp"
#include "core/mma.hpp"
#include "core/schedule.hpp"
#include "core/tree_hash.hpp"
#include "core/tree_io.hpp"
#include "io/tree_file.hpp"
#include "precision/bfloat16.hpp"
#include "precision/block_scaled.hpp"  // block-scaled dots: the quantised codes
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
  // The block-scaled profiles take their own block-scaled storage. mxfp8e4m3 (floor): one block,
  // amax 1, scale 2^-8: elements (256, 4) and (256, 1); products 2^16 and 4 with the scale
  // exponents -16 inside the fused sum: 1 + 2^-14 again.
  CHECK(Eval(fp8, "mxfp8e4m3", "mma:blackwell-mxf8") == 1 + std::ldexp(1.0f, -14));
  // mxfp4: 200 pairs (6, 1.5) (amax 6, floor scale 2^0: elements 6 and 1.5), each 9, in
  // instructions of 64 (groups of 16 summed exactly): 1800 exactly, with and without promotion.
  const std::string fp4 = TempPath("pairs4bw.txt");
  {
    std::ofstream f(fp4);
    for (int i = 0; i < 200; ++i) f << "6 1.5\n";
  }
  CHECK(Eval(fp4, "mxfp4", "mma:blackwell-mxf4") == 1800.0f);
  CHECK(Eval(fp4, "mxfp4", "mma:blackwell-mxf4:promote:128") == 1800.0f);
  CheckRejected(
      "eval --op dot --dtype fp8e4m3 --acc fp32 --schedule mma:blackwell-nvf4 --input " + fp8,
      "takes block-scaled inputs nvfp4");
  CheckRejected("tree --schedule mma:blackwell-nvf4:promote:96 --n 8", "multiple of");
  const Run json = Carrier("tree --schedule mma:blackwell-nvf4 --n 70 --format json");
  CHECK(json.code == 0);
  CHECK(json.out.find("\"frac_bits\":35,\"align\":\"truncate\",\"output\":\"fp32-rz\","
                      "\"two_stage\":false,\"group\":16}") != std::string::npos);
  std::remove(fp8.c_str());
  std::remove(fp4.c_str());
}

namespace {

// Pairs written one per line in %a (exact), for eval --input.
std::string WriteExactPairs(const std::string& name, const std::vector<double>& a,
                            const std::vector<double>& b) {
  const std::string path = TempPath(name);
  std::FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f != nullptr);
  for (std::size_t i = 0; i < a.size(); ++i) std::fprintf(f, "%a %a\n", a[i], b[i]);
  std::fclose(f);
  return path;
}

float EvalArgs(const std::string& args) {
  const Run r = Carrier(args + " --format json");
  INFO("carrier " << args << "\nstderr: " << r.err << "\nstdout: " << r.out);
  REQUIRE(r.code == 0);
  const float v = static_cast<float>(Result(r));
  std::cout << "  carrier " << args << "  -> result " << std::hexfloat << v << std::defaultfloat
            << "\n";
  return v;
}

}  // namespace

TEST_CASE("block-scaled dots: the block scales applied where the unit applies them",
          "[fast][cli][mma]") {
  // nvfp4 -> blackwell-nvf4, two blocks of 16. Both columns have tensor amax 2688, so S_enc =
  // 448 * 6 / 2688 = 1 and the tensor scales are 1. Block 0: a = (6, 0.5, 0, ...) 2^-9,
  // b = (0, 0.5, 6, 0, ...) 2^-9: amax 6 2^-9, scale ue4m3(2^-9) = 2^-9 (the smallest
  // subnormal: exponent -6, significand 2^-3), elements (6, 0.5) and (0, 0.5, 6); group sum
  // 0.25, value 2^-20. Block 1: a = (2688, 2688), b = (2688, -2688): scale 448 (2^8 1.75),
  // elements 6, 6 and 6, -6; group sum 0, but its exponent is the scales', 16. The fused sum
  // aligns to 16 with F = 35 (quantum 2^-19) and truncates block 0's 2^-20 to 0: result 0,
  // the exact dot 2^-20.
  std::vector<double> a(32, 0.0), b(32, 0.0);
  a[0] = 6 * std::ldexp(1.0, -9), a[1] = 0.5 * std::ldexp(1.0, -9);
  b[1] = 0.5 * std::ldexp(1.0, -9), b[2] = 6 * std::ldexp(1.0, -9);
  a[16] = a[17] = b[16] = 2688, b[17] = -2688;
  const std::string nv = WriteExactPairs("bs_nv.txt", a, b);
  CHECK(EvalArgs("eval --op dot --precision nvfp4-gemm --input " + nv) == 0.0f);
  CHECK(EvalArgs("eval --op dot --dtype nvfp4 --acc fp32 --schedule mma:blackwell-nvf4 --input " +
                 nv) == 0.0f);
  {
    const Run r = Carrier("eval --op dot --precision nvfp4-gemm --input " + nv + " --format json");
    CHECK(r.out.find("\"reference\":9.5367431640625e-07") != std::string::npos);  // 2^-20
  }

  // mxfp8e4m3 -> blackwell-mxf8, two blocks of 32 (one instruction each, the scale pair's
  // exponents inside the fused sum). Block 0: 1 * 1 (scale 2^-8, elements 256): 1. Block 1:
  // 32 pairs 2^-12 * 2^-12 (floor scale 2^-20, elements 256; exponent 8 + 8 - 40 = -24): with
  // c = 1 (exponent 0, F = 25, quantum 2^-25) each 2^-24 is kept: 1 + 2^-19, fp32 RZ exact.
  // IEEE fp32 seq on the same values rounds every 1 + 2^-24 back to 1.
  std::vector<double> x(64, 0.0);
  x[0] = 1;
  for (int i = 32; i < 64; ++i) x[i] = std::ldexp(1.0, -12);
  const std::string mx = WriteExactPairs("bs_mx8.txt", x, x);
  CHECK(EvalArgs("eval --op dot --precision mxfp8-gemm --input " + mx) ==
        1 + std::ldexp(1.0f, -19));
  CHECK(EvalArgs("eval --op dot --dtype mxfp8e4m3 --acc fp32 --schedule seq --input " + mx) ==
        1.0f);

  // deepgemm-fp8: mx:e4m3:128:fp32:amax through hopper-fp8, promoted every 128 with the scale
  // pair. Block 0: (448, 1 x 127) twice: amax 448, scale 1, elements as given; the first wgmma
  // k32 aligns to 448 * 448 (exponent 16, F = 13, quantum 8) and cuts every 1 * 1, the next
  // ones align to 200704 (exponent 17): 200704. Block 1: 128 pairs 0.4375 = 448 2^-10:
  // scale fp32(448 2^-10 / 448) = 2^-10, elements 448; the chunk sums 128 * 200704 =
  // 25690112 exactly; promotion: fma(2^-20, 25690112, 200704) = 200728.5. Exact: 200855.5.
  std::vector<double> d(256, 1.0);
  d[0] = 448;
  for (int i = 128; i < 256; ++i) d[i] = 448 * std::ldexp(1.0, -10);
  const std::string dg = WriteExactPairs("bs_dg.txt", d, d);
  CHECK(EvalArgs("eval --op dot --precision deepgemm-fp8 --input " + dg) == 200728.5f);
  CHECK(EvalArgs("eval --op dot --dtype mx:e4m3:128:fp32:amax --acc fp32 --schedule "
                 "mma:hopper-fp8:promote:128 --input " +
                 dg) == 200728.5f);
  for (const std::string& f : {nv, mx, dg}) std::remove(f.c_str());
}

TEST_CASE("block-scaled dots equal MmaScaledChain on the quantised codes", "[fast][cli][mma]") {
  // Normal pairs, quantised here by precision/block_scaled.hpp as eval quantises a file's
  // columns (each one tensor), then run through the profile directly.
  std::mt19937_64 rng(31);
  std::normal_distribution<double> normal;
  const std::size_t n = 1000;  // not a multiple of the instruction's k: a short last one
  std::vector<double> a(n), b(n);
  for (std::size_t i = 0; i < n; ++i) a[i] = normal(rng), b[i] = normal(rng);
  const std::string path = WriteExactPairs("bs_direct.txt", a, b);
  struct Case {
    const char* dtype;
    const char* profile;
    std::uint64_t promote;
  };
  for (const Case& c :
       {Case{"nvfp4", "blackwell-nvf4", 0}, Case{"nvfp4:4/6", "blackwell-nvf4", 128},
        Case{"mxfp4:rceil", "blackwell-mxf4", 0}, Case{"mxfp8e4m3", "blackwell-mxf8", 0},
        Case{"mxfp8e4m3", "blackwell-mxf8", 256}}) {
    const carrier::BlockScaledFormat f = carrier::ParseBlockScaledFormat(c.dtype);
    const auto qa = carrier::Quantize(f, a), qb = carrier::Quantize(f, b);
    const carrier::MmaProfile& p = *carrier::FindMmaProfile(c.profile);
    double want =
        carrier::MmaScaledChain(p, 0.0, qa.elements, qb.elements, qa.scales, qb.scales, c.promote);
    // NVFP4's tensor scales on the fp32 output (run/scaled_dot.hpp: the GEMM's alpha).
    const float alpha = static_cast<float>(qa.tensor_scale) * static_cast<float>(qb.tensor_scale);
    want = static_cast<float>(alpha * static_cast<float>(want));
    const std::string sched = std::string("mma:") + c.profile +
                              (c.promote ? ":promote:" + std::to_string(c.promote) : "");
    const float got = EvalArgs(std::string("eval --op dot --dtype ") + c.dtype +
                               " --acc fp32 --schedule " + sched + " --input " + path);
    INFO(c.dtype << " through " << sched);
    CHECK(got == static_cast<float>(want));
  }
  std::remove(path.c_str());
}

TEST_CASE("block-scaled profiles and storages refuse a mismatch, in one line", "[fast][cli][mma]") {
  const std::string gen = " --gen normal --n 256";
  CheckRejected("eval --op dot --precision in=nvfp4,mma=blackwell-mxf4" + gen,
                "not --dtype nvfp4 (e2m1 elements, blocks of 16, ue4m3 scales)");
  CheckRejected("eval --op dot --precision in=mxfp4,mma=blackwell-nvf4" + gen,
                "takes block-scaled inputs nvfp4");
  CheckRejected("eval --op dot --dtype fp8e4m3 --acc fp32 --schedule mma:blackwell-mxf8" + gen,
                "not --dtype fp8e4m3");
  CheckRejected("eval --op dot --dtype mxfp8e5m2 --acc fp32 --schedule mma:blackwell-mxf8" + gen,
                "mxfp8e5m2 (e5m2 elements");
  CheckRejected(
      "eval --op dot --dtype mxfp8e4m3 --acc fp32 --schedule mma:blackwell-f8f6f4" + gen,
      "--dtype mxfp8e4m3 (e4m3 elements, blocks of 32, e8m0 scales) needs a block-scaled profile");
  CheckRejected(
      "eval --op dot --precision deepgemm-fp8 --schedule mma:hopper-fp8:promote:256" + gen,
      "promote:N must be the block, 128");
  CheckRejected("eval --op dot --dtype nvfp4 --acc fp64 --schedule mma:blackwell-nvf4" + gen,
                "accumulates in fp32");
  CheckRejected("eval --op matmul --m 2 --n 2 --k 64 --precision in=nvfp4,mma=blackwell-mxf8",
                "takes block-scaled inputs mxfp8e4m3");
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

TEST_CASE("carrier probe dot: recovers every mma profile run as a black box", "[fast][cli][mma]") {
  // The probe is not told the profile: it sees only the target's outputs on its test vectors.
  // The profile it prints must have the target's fused node and promotion interval (profiles
  // with the same node, e.g. ampere and turing, give the same bits and may be named instead).
  auto line = [](const std::string& text, const std::string& label) {
    const auto at = text.find(label);
    if (at == std::string::npos) return std::string();
    const auto from = at + label.size();
    return text.substr(from, text.find('\n', from) - from);
  };
  for (const carrier::MmaProfile& p : carrier::kMmaProfiles) {
    const std::string dtype(carrier::MmaInputName(p.node.input));
    if (p.node.input == carrier::MmaInput::kFp4E2m1) {
      // e2m1 factors (|x| <= 6, exponents 0..2) make at most 64 products within 2^-2 .. 2^6:
      // every profile sums them exactly, so no output can tell their nodes apart without
      // control of the block scales (which the dot: protocol does not carry).
      std::cout << "  mma:" << p.name << ": not probed (fp4 e2m1 inputs)\n";
      continue;
    }
    for (const std::uint32_t promote : {0u, 2 * p.k}) {
      const std::string truth =
          "mma:" + std::string(p.name) + (promote ? ":promote:" + std::to_string(promote) : "");
      const std::string args = "probe dot:" + truth + " --k 64 --dtype " + dtype;
      const Run r = Carrier(args);
      INFO("carrier " << args << "\n" << r.out << r.err);
      REQUIRE(r.code == 0);
      const std::string got = line(r.out, "profile         ");
      const carrier::MergeTree want = carrier::BuildTree(truth, 64);
      const carrier::MergeTree have = carrier::BuildTree(got, 64);
      CHECK(have.fused == want.fused);
      CHECK(carrier::TreeHash(have) == carrier::TreeHash(want));
      CHECK(r.out.find("verified        8 of 8") != std::string::npos);
      std::cout << "  " << truth << " -> " << got << " (" << line(r.out, "queries         ")
                << ")\n";
    }
  }
  // An IEEE fp32 sequential dot served over exec: is no matrix unit: said so, exit 1.
  const std::string script = TempPath("seqdot.py");
  std::ofstream(script)
      << "import os, sys\nn = int(os.environ['CARRIER_PROBE_N']) // 2\n"
         "import struct\nf = lambda v: struct.unpack('f', struct.pack('f', v))[0]\n"
         "v = [float.fromhex(l) for l in sys.stdin]\n"
         "for q in range(int(os.environ['CARRIER_PROBE_VECTORS'])):\n"
         "    a, s = v[2 * n * q:2 * n * (q + 1)], 0.0\n"
         "    for i in range(n):\n        s = f(s + f(a[i] * a[n + i]))\n"
         "    print(s.hex())\n";
  const Run e = Carrier("probe 'dot:exec:/usr/bin/python3 " + script + "' --k 16 --dtype fp16");
  INFO(e.out << e.err);
  CHECK(e.code == 1);
  CHECK(e.out.find("no mma: profile") != std::string::npos);
  CheckRejected("probe dot:mma:volta --k 64 --dtype bf16", "fp16 inputs");
  CheckRejected("probe dot:nothing --k 64", "unknown dot target");
}

namespace {

std::string Line(const std::string& text, const std::string& label) {
  const auto at = text.find(label);
  if (at == std::string::npos) return std::string();
  const auto from = at + label.size();
  return text.substr(from, text.find('\n', from) - from);
}

// K fresh pairs (not the probe's): full significands, mixed signs, 2^-8..2^7, in the format.
void WritePairs(const std::string& file, int k, bool single, std::uint64_t seed) {
  std::ofstream f(file);
  std::uint64_t s = seed;
  auto value = [&] {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    const double u = static_cast<double>(s >> 11) * 0x1.0p-53;
    const double v = (2 * u - 1) * std::ldexp(1.0, static_cast<int>((s >> 5) % 16) - 8);
    return single ? static_cast<double>(static_cast<float>(v)) : v;
  };
  char buf[64];
  for (int q = 0; q < k; ++q) {
    const double a = value(), b = value();
    std::snprintf(buf, sizeof buf, "%a %a\n", a, b);
    f << buf;
  }
}

// The probe's printed replay line run by carrier on the pairs in `file` (eval's JSON result).
double RunReplayLine(const std::string& replay, const std::string& file) {
  REQUIRE(replay.rfind("carrier eval ", 0) == 0);
  const std::string eval = replay.substr(8) + " --input " + file + " --format json";
  const Run e = Carrier(eval);
  INFO("carrier " << eval << "\n" << e.out << e.err);
  REQUIRE((e.code == 0 || e.code == 1));
  return Result(e);
}

}  // namespace

TEST_CASE("carrier probe dot:numpy.dot --dtype fp32|fp64 replays numpy's bits",
          "[fast][cli][mma][probe]") {
  // The probe recovers numpy.dot's order as the sum x -> dot(x, ones), each node's format and
  // the push rule, saves the tree with its arithmetic (-o), and prints the carrier eval line that
  // replays it; here that line is run on other fresh inputs and compared with numpy.dot's bits
  // computed by numpy itself, for whichever BLAS numpy loads: Debian's reference BLAS
  // (libblas3: a sequential dot with rounded products) or OpenBLAS 0.3.21 (x86_64 sdot: FMA lanes
  // in fp32 over the first n & -32 products, the tail and the lanes' sum added in a double,
  // kernel/x86_64/sdot.c), whose fp64 nodes the probe must find and name.
  const std::string python = "/usr/bin/python3";
  if (std::system((python + " -c 'import numpy' >/dev/null 2>&1").c_str()) != 0) {
    WARN("skipped: numpy is not importable under " << python);
    return;
  }
  const std::string blas_out = TempPath("npdot_blas.out");
  REQUIRE(std::system(
              (python +
               " -c \"import numpy as np; np.dot(np.ones(3), np.ones(3)); print(' '.join(sorted({"
               "l.split()[-1] for l in open('/proc/self/maps') if 'blas' in l})))\" > " +
               blas_out)
                  .c_str()) == 0);
  const std::string blas = carrier_test::Slurp(blas_out);
  // OpenBLAS's sdot runs when libblas.so.3 itself is OpenBLAS's (its LAPACK may load OpenBLAS
  // beside the reference BLAS, e.g. with LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/blas).
  std::string libblas;
  {
    std::istringstream words(blas);
    for (std::string w; words >> w;)
      if (w.find("/libblas.so") != std::string::npos) libblas = w;
  }
  const bool openblas = libblas.find("openblas") != std::string::npos;
  std::cout << "  numpy's BLAS: " << blas;
  // OpenBLAS picks its sdot kernel by CPU, and OPENBLAS_CORETYPE overrides the choice. On an
  // AVX-512 CPU its SkylakeX/Cooperlake kernel folds 16-wide lanes holding one product each
  // into 8-wide ones by plain adds and then adds products to them by FMA (per-input pushes);
  // the Haswell kernel runs 8-wide FMA lanes throughout. Both run here wherever they can.
  std::vector<std::string> cores = {""};
  if (openblas) {
    cores.push_back("Haswell");
    if (carrier_test::Slurp("/proc/cpuinfo").find(" avx512f") != std::string::npos)
      cores.push_back("SkylakeX");
  }
  const char* env_core = std::getenv("OPENBLAS_CORETYPE");
  const std::string saved_core = env_core ? env_core : "";
  auto restore_core = [&] {
    if (env_core) {
      setenv("OPENBLAS_CORETYPE", saved_core.c_str(), 1);
    } else {
      unsetenv("OPENBLAS_CORETYPE");
    }
  };
  for (const std::string& core : cores) {
    if (core.empty()) {
      restore_core();
    } else {
      setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
    }
    std::cout << "  OpenBLAS kernel: "
              << (core.empty() ? "as this environment chooses (OPENBLAS_CORETYPE=" +
                                     (env_core ? saved_core : std::string("unset")) + ")"
                               : "OPENBLAS_CORETYPE=" + core)
              << "\n";
    for (const auto& [dtype, k] : {std::pair<std::string, int>{"fp32", 37},
                                   {"fp32", 64},
                                   {"fp32", 100},
                                   {"fp32", 1000},
                                   {"fp64", 777}}) {
      const std::string tree = TempPath("npdot_" + dtype + "_" + std::to_string(k) + ".json");
      const std::string args =
          "probe dot:numpy.dot --k " + std::to_string(k) + " --dtype " + dtype + " -o " + tree;
      const Run r = Carrier(args);
      INFO("carrier " << args << "\n" << r.out << r.err << "numpy's BLAS: " << blas);
      REQUIRE(r.code == 0);
      CHECK(r.out.find("verified        8 of 8") != std::string::npos);
      CHECK(Line(r.out, "saved           ").find("read back: 8 of 8") != std::string::npos);
      const std::string formats = Line(r.out, "formats         ");
      std::cout
          << "  " << args << ": push "
          << Line(r.out, "push            ").substr(0, Line(r.out, "push            ").find(':'))
          << "; formats " << (formats.empty() ? "(" + dtype + ")" : formats) << "\n";
      if (dtype == "fp32" && openblas) {
        // OpenBLAS's tail: products n1..k-1 (n1 = k & -32) and the final join in fp64.
        const int n1 = k & -32;
        if (n1 == k) {
          CHECK(formats == "every addition in fp32");
        } else {
          CHECK(formats.find("the products of x[" + std::to_string(n1) + ".." +
                             std::to_string(k - 1) + "]") != std::string::npos);
          CHECK(formats.find("the final join") != std::string::npos);
          CHECK(Line(r.out, "fp64 products   ").find("rounded to fp32") != std::string::npos);
        }
      } else if (dtype == "fp32") {
        CHECK(formats == "every addition in fp32");
        if (k == 1000) {  // the reference BLAS's sequential dot needs no file: seq is named
          const Run plain = Carrier("probe dot:numpy.dot --k 1000 --dtype fp32");
          INFO(plain.out << plain.err);
          CHECK(Line(plain.out, "replay          ") ==
                "carrier eval --op dot --dtype fp32 --schedule seq");
        }
      }
      const std::string file = TempPath("npdot_" + dtype + ".txt");
      WritePairs(file, k, dtype == "fp32", 0x5eedf00dULL + static_cast<std::uint64_t>(k));
      // numpy.dot of contiguous arrays (a strided view takes OpenBLAS's inc != 1 loop instead).
      const std::string np_out = TempPath("npdot_" + dtype + ".out");
      const std::string np_type = dtype == "fp32" ? "float32" : "float64";
      const std::string cmd = python +
                              " -c \"import numpy as np; x = np.array([[float.fromhex(t) "
                              "for t in l.split()] for l in open('" +
                              file + "')], dtype=np." + np_type +
                              "); print(float(np.dot(x[:, 0].copy(), x[:, 1].copy())).hex())\" > " +
                              np_out;
      REQUIRE(std::system(cmd.c_str()) == 0);
      const double want = std::strtod(carrier_test::Slurp(np_out).c_str(), nullptr);
      const std::string replay = Line(r.out, "replay          ");
      const double raw = RunReplayLine(replay, file);
      const double got = dtype == "fp32" ? static_cast<double>(static_cast<float>(raw)) : raw;
      std::cout << "    " << replay << " -> " << std::hexfloat << got << ", numpy.dot " << want
                << std::defaultfloat << "\n";
      CHECK(got == want);
    }
  }
  restore_core();
}

TEST_CASE("carrier probe dot: --dtype fp32 finds a planted tree's fp64 nodes",
          "[fast][cli][mma][probe]") {
  // An exec: target whose arithmetic is known (so this runs without OpenBLAS): eight fp32 FMA
  // lanes over the first n & -16 products (computed exactly with fractions), summed pairwise in
  // fp32; the tail added in a double with exact products (float * float is exact there), the
  // lanes' sum joined to it in the double, the result rounded to fp32. With `roundtail` the
  // double tail is rounded to fp32 before an fp32 join instead: its fp64 additions are then not
  // closed upward, which the probe must refuse in one line.
  const std::string script = TempPath("planted_mixed.py");
  std::ofstream(script)
      << "import math, os, sys\nfrom fractions import Fraction as Q\n"
         "n = int(os.environ['CARRIER_PROBE_N']) // 2\nroundtail = len(sys.argv) > 1\n"
         "def f32(v):\n    if v == 0:\n        return 0.0\n"
         "    e = math.frexp(float(abs(v)))[1] - 1\n"
         "    e -= Q(2) ** e > abs(v)\n    e += Q(2) ** (e + 1) <= abs(v)\n"
         "    q = Q(2) ** (max(e, -126) - 23)\n    return float(round(v / q) * q)\n"
         "v = [float.fromhex(l) for l in sys.stdin]\nn1 = n & -16\n"
         "for k in range(int(os.environ['CARRIER_PROBE_VECTORS'])):\n"
         "    x, acc, tail = v[2 * n * k:2 * n * (k + 1)], [0.0] * 8, 0.0\n"
         "    for i in range(n1):\n"
         "        acc[i % 8] = f32(Q(x[i]) * Q(x[n + i]) + Q(acc[i % 8]))\n"
         "    while len(acc) > 1:\n"
         "        acc = [f32(Q(acc[j]) + Q(acc[j + 1])) for j in range(0, len(acc), 2)]\n"
         "    for i in range(n1, n):\n        tail += x[i] * x[n + i]\n"
         "    print((f32(Q(f32(Q(tail))) + Q(acc[0])) if roundtail else f32(Q(tail + acc[0])))"
         ".hex())\n";
  const int k = 100;  // n1 = 96: twelve rounds of the eight lanes, a tail of four
  const std::string tree = TempPath("planted_mixed.json");
  const std::string args = "probe 'dot:exec:/usr/bin/python3 " + script + "' --k " +
                           std::to_string(k) + " --dtype fp32 -o " + tree;
  const Run r = Carrier(args);
  INFO("carrier " << args << "\n" << r.out << r.err);
  REQUIRE(r.code == 0);
  const auto at = r.out.find("formats         ");
  std::cout << "  planted, k = " << k << ":\n" << r.out.substr(at, r.out.find("saved") - at);
  CHECK(r.out.find("push            fma:") != std::string::npos);
  CHECK(r.out.find("mul-add gives the same bits") == std::string::npos);  // the lanes tell
  CHECK(r.out.find("verified        8 of 8") != std::string::npos);
  CHECK(Line(r.out, "formats         ")
            .find("fp64 (2 of 17 nodes): the products of x[96..99]; the final join of x[0..95] "
                  "with x[96..99]; every other addition in fp32") != std::string::npos);
  CHECK(Line(r.out, "fp64 products   ").find("exact") != std::string::npos);
  // The saved tree: the eight lanes (strided:8 over 0..95) and the tail chain, the arithmetic's
  // fp64 nodes exactly the tail and the root.
  const carrier::MergeTree t = carrier::io::LoadTreeFile(tree, k);
  const std::string text = carrier_test::Slurp(tree);
  const auto arith = carrier::ReadDotArithmetic(text, tree, t.NodeCount());
  REQUIRE(arith.has_value());
  CHECK(arith->push == carrier::DotPush::kFma);
  CHECK(arith->wide_products == carrier::WideProducts::kExact);
  for (std::uint64_t x = 0; x < t.NodeCount(); ++x) {
    const bool tail = x < t.chains.size() && t.chains[x].first == 96 && t.chains[x].count == 4 &&
                      t.chains[x].stride == 1;
    INFO("node " << x);
    CHECK(arith->Wide(x) == (tail || x == t.Root()));
  }
  // The printed line, run by carrier on fresh inputs, gives the target's bits.
  const std::string replay = Line(r.out, "replay          ");
  const std::string file = TempPath("planted_mixed.txt");
  for (std::uint64_t seed : {11u, 12u, 13u}) {
    WritePairs(file, k, true, seed);
    const std::string stdin_file = TempPath("planted_mixed.in");
    {
      std::ifstream in(file);
      std::vector<std::string> a, b;
      std::string x, y;
      while (in >> x >> y) {
        a.push_back(x);
        b.push_back(y);
      }
      std::ofstream out(stdin_file);
      for (const auto& v : a) out << v << "\n";
      for (const auto& v : b) out << v << "\n";
    }
    const std::string out = TempPath("planted_mixed.out");
    REQUIRE(std::system(("CARRIER_PROBE_N=" + std::to_string(2 * k) +
                         " CARRIER_PROBE_VECTORS=1 /usr/bin/python3 " + script + " < " +
                         stdin_file + " > " + out)
                            .c_str()) == 0);
    const double want = std::strtod(carrier_test::Slurp(out).c_str(), nullptr);
    const double got = static_cast<float>(RunReplayLine(replay, file));
    std::cout << "    " << replay << " (seed " << seed << ") -> " << std::hexfloat << got
              << ", target " << want << std::defaultfloat << "\n";
    CHECK(got == want);
  }
  // A saved arithmetic eval cannot honour is refused in one line: another compute type, a bad
  // push, fp64 nodes that are not closed upward (node 0, a lane, under an fp32 combine).
  const std::string& input = file;
  CheckRejected(
      "eval --op dot --dtype fp32 --acc fp64 --schedule file:" + tree + " --input " + input,
      "replay it with --acc fp32");
  for (const auto& [from, to, why] :
       {std::tuple<std::string, std::string, std::string>{"\"push\":\"fma\"", "\"push\":\"fused\"",
                                                          "mul-add, fma or per-input"},
        {"\"fp64_nodes\":[", "\"fp64_nodes\":[0,", "closed upward"}}) {
    std::string edited = text;
    REQUIRE(edited.find(from) != std::string::npos);
    edited.replace(edited.find(from), from.size(), to);
    const std::string bad_tree = TempPath("planted_bad.json");
    std::ofstream(bad_tree) << edited;
    CheckRejected(
        "eval --op dot --dtype fp32 --acc fp32 --schedule file:" + bad_tree + " --input " + input,
        why);
  }
  // The tail rounded to fp32 before an fp32 join: refused, naming why.
  const std::string bad =
      "probe 'dot:exec:/usr/bin/python3 " + script + " roundtail' --k 40 --dtype fp32";
  const Run e = Carrier(bad);
  INFO("carrier " << bad << "\n" << e.out << e.err);
  CHECK(e.code == 1);
  CHECK(e.out.find("not closed upward") != std::string::npos);
  CHECK(Line(e.out, "replay          ").empty());
}

TEST_CASE("carrier probe dot: --dtype fp32 tells FMA lanes from rounded products",
          "[fast][cli][mma][probe]") {
  // Two exec: targets whose arithmetic is known: eight strided FMA lanes summed pairwise (what
  // an AVX2 FMA kernel does), computed exactly with fractions; and a sequential dot that rounds
  // each product before adding it.
  const std::string lanes = TempPath("fmalanes.py");
  std::ofstream(lanes)
      << "import math, os, sys\nfrom fractions import Fraction as Q\n"
         "n = int(os.environ['CARRIER_PROBE_N']) // 2\n"
         "def f32(v):\n    if v == 0:\n        return 0.0\n"
         "    e = math.frexp(float(abs(v)))[1] - 1\n"
         "    e -= Q(2) ** e > abs(v)\n    e += Q(2) ** (e + 1) <= abs(v)\n"
         "    q = Q(2) ** (max(e, -126) - 23)\n    return float(round(v / q) * q)\n"
         "v = [float.fromhex(l) for l in sys.stdin]\n"
         "for k in range(int(os.environ['CARRIER_PROBE_VECTORS'])):\n"
         "    x, acc = v[2 * n * k:2 * n * (k + 1)], [0.0] * 8\n"
         "    for i in range(n):\n"
         "        acc[i % 8] = f32(Q(x[i]) * Q(x[n + i]) + Q(acc[i % 8]))\n"
         "    while len(acc) > 1:\n"
         "        acc = [f32(Q(acc[j]) + Q(acc[j + 1])) for j in range(0, len(acc), 2)]\n"
         "    print(acc[0].hex())\n";
  const std::string seq = TempPath("seqdot32.py");
  std::ofstream(seq) << "import os, sys, struct\nn = int(os.environ['CARRIER_PROBE_N']) // 2\n"
                        "f = lambda v: struct.unpack('f', struct.pack('f', v))[0]\n"
                        "v = [float.fromhex(l) for l in sys.stdin]\n"
                        "for q in range(int(os.environ['CARRIER_PROBE_VECTORS'])):\n"
                        "    a, s = v[2 * n * q:2 * n * (q + 1)], 0.0\n"
                        "    for i in range(n):\n        s = f(s + f(a[i] * a[n + i]))\n"
                        "    print(s.hex())\n";
  for (const auto& [script, push, order] :
       {std::tuple<std::string, std::string, std::string>{lanes, "fma", "strided:8"},
        {seq, "mul-add", "seq"}}) {
    // K = 100: twelve full rounds of the eight lanes and a tail of four.
    const std::string args =
        "probe 'dot:exec:/usr/bin/python3 " + script + "' --k 100 --dtype fp32";
    const Run r = Carrier(args);
    INFO("carrier " << args << "\n" << r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out.find("push            " + push + ":") != std::string::npos);
    CHECK(r.out.find("order           " + order) != std::string::npos);
    CHECK(r.out.find("verified        8 of 8") != std::string::npos);
    std::cout << "  " << script << ": " << r.out.substr(r.out.find("order")) << "\n";
  }
  CheckRejected("probe dot:mma:volta --k 64 --dtype fp32", "dot:LIB.so:SYMBOL or dot:exec");
}

namespace {

// `python3 -c CODE`'s stdout (one hex float) as a double; the code reads the pairs in `file`
// as the lists a and b (hex floats, two per line).
double PythonDot(const std::string& prelude, const std::string& file, const std::string& expr) {
  const std::string code = TempPath("pydot.py"), out = TempPath("pydot.out");
  std::ofstream(code) << prelude
                      << "\nrows = [[float.fromhex(t) for t in l.split()] for l in open('" << file
                      << "')]\na = [r[0] for r in rows]\nb = [r[1] for r in rows]\nprint(" << expr
                      << ")\n";
  REQUIRE(std::system(("/usr/bin/python3 " + code + " > " + out).c_str()) == 0);
  return std::strtod(carrier_test::Slurp(out).c_str(), nullptr);
}

void RequireTorch() {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
    // Exit 77: CTest reports the case Skipped (SKIPPABLE in CMakeLists.txt), never Passed.
    std::cout << "skipped: `import torch` fails under /usr/bin/python3 (Debian's python3-torch is "
                 "not installed)"
              << std::endl;
    std::exit(77);
  }
}

}  // namespace

TEST_CASE("carrier probe dot:numpy.matmul --dtype fp32|fp64 replays numpy's bits",
          "[fast][cli][mma][probe]") {
  // np.matmul of two 1-D arrays: recovered like numpy.dot (whatever BLAS call numpy routes it
  // to), saved with -o, and the printed carrier eval line run on other fresh pairs gives
  // np.matmul's bits computed by numpy itself.
  if (std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0) {
    WARN("skipped: numpy is not importable under /usr/bin/python3");
    return;
  }
  for (const auto& [dtype, k] : {std::pair<std::string, int>{"fp32", 100}, {"fp64", 777}}) {
    const std::string tree = TempPath("npmatmul_" + dtype + ".json");
    const std::string args =
        "probe dot:numpy.matmul --k " + std::to_string(k) + " --dtype " + dtype + " -o " + tree;
    const Run r = Carrier(args);
    INFO("carrier " << args << "\n" << r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out.find("verified        8 of 8") != std::string::npos);
    CHECK(Line(r.out, "saved           ").find("read back: 8 of 8") != std::string::npos);
    std::cout
        << "  " << args << ":\n    order " << Line(r.out, "order           ").substr(0, 60)
        << "...\n    formats " << Line(r.out, "formats         ") << "\n    push "
        << Line(r.out, "push            ").substr(0, Line(r.out, "push            ").find(':'))
        << "\n";
    const std::string file = TempPath("npmatmul_" + dtype + ".txt");
    WritePairs(file, k, dtype == "fp32", 0xa11ce + static_cast<std::uint64_t>(k));
    const std::string np_type = dtype == "fp32" ? "float32" : "float64";
    const double want = PythonDot("import numpy as np", file,
                                  "float(np.matmul(np.array(a, dtype=np." + np_type +
                                      "), np.array(b, dtype=np." + np_type + "))).hex()");
    const double raw = RunReplayLine(Line(r.out, "replay          "), file);
    const double got = dtype == "fp32" ? static_cast<double>(static_cast<float>(raw)) : raw;
    std::cout << "    " << Line(r.out, "replay          ") << " -> " << std::hexfloat << got
              << ", np.matmul " << want << std::defaultfloat << "\n";
    CHECK(got == want);
  }
  CheckRejected("probe dot:numpy.matmul --k 64 --dtype fp16", "takes --dtype fp32 or fp64");
  CheckRejected("probe numpy.matmul --dtype fp32 --n 8", "carrier probe dot:numpy.matmul");
}

TEST_CASE("carrier probe dot:torch.matmul --dtype fp32 replays torch's bits",
          "[fast][cli][mma][probe]") {
  // The probe checks its tree on 8 fresh inputs and the saved file, read back as carrier eval
  // reads it, on 8 others, each against torch.matmul of fresh torch tensors; the eval line itself
  // is run against the library in the numpy tests (one `import torch` less here: ~1.5 s).
  RequireTorch();
  const std::string tree = TempPath("torchmm32.json");
  const std::string args = "probe dot:torch.matmul --k 100 --dtype fp32 -o " + tree;
  const Run r = Carrier(args);
  INFO("carrier " << args << "\n" << r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("verified        8 of 8") != std::string::npos);
  CHECK(Line(r.out, "saved           ").find("read back: 8 of 8") != std::string::npos);
  CHECK(Line(r.out, "replay          ") ==
        "carrier eval --op dot --dtype fp32 --acc fp32 --schedule file:" + tree);
  std::cout << "  " << args << ":\n    " << Line(r.out, "target          ") << "\n    formats "
            << Line(r.out, "formats         ") << "\n    push "
            << Line(r.out, "push            ").substr(0, Line(r.out, "push            ").find(':'))
            << "\n";
  CheckRejected("probe dot:torch.matmul --k 64 --dtype fp16", "takes --dtype fp32 or fp64 or bf16");
}

TEST_CASE("carrier probe dot:torch.matmul --dtype bf16 replays torch or refuses in one line",
          "[fast][cli][mma][probe]") {
  // torch's CPU bf16 dot (1.13: a sequential sum += x * y in c10::BFloat16, each product and
  // each addition rounded to bf16) is an IEEE dot in bf16: the probe prints the carrier eval
  // line that replays it, run here on other fresh bf16 pairs against torch. A torch whose
  // kernel keeps fp32 partial sums has no bf16 replay: then the probe must say so in one line.
  RequireTorch();
  const int k = 100;
  const std::string args = "probe dot:torch.matmul --k " + std::to_string(k) + " --dtype bf16";
  const Run r = Carrier(args);
  INFO("carrier " << args << "\n" << r.out << r.err);
  std::cout << "  " << args << " -> exit " << r.code << "\n" << r.out;
  if (r.code == 1) {
    CHECK(Line(r.out, "result          ").find("keeps fp32's bits") != std::string::npos);
    CHECK(Line(r.out, "replay          ").empty());
    return;
  }
  REQUIRE(r.code == 0);
  CHECK(r.out.find("verified        8 of 8") != std::string::npos);
  CHECK(Line(r.out, "formats         ").rfind("every addition in bf16", 0) == 0);
  const std::string file = TempPath("torchmmbf16.txt");
  {
    // Fresh bf16 pairs: the fp32 pairs' values rounded to bf16.
    const std::string raw = TempPath("torchmmbf16.raw");
    WritePairs(raw, k, true, 0xbf16);
    std::ifstream in(raw);
    std::ofstream out(file);
    char buf[64];
    for (std::string x, y; in >> x >> y;) {
      std::snprintf(buf, sizeof buf, "%a %a\n",
                    carrier::BFloat16(std::strtod(x.c_str(), nullptr)).ToDouble(),
                    carrier::BFloat16(std::strtod(y.c_str(), nullptr)).ToDouble());
      out << buf;
    }
  }
  const double want = PythonDot("import torch", file,
                                "float(torch.matmul(torch.tensor(a, dtype=torch.bfloat16), "
                                "torch.tensor(b, dtype=torch.bfloat16))).hex()");
  const std::string replay = Line(r.out, "replay          ");
  const double got = carrier::BFloat16(RunReplayLine(replay, file)).ToDouble();
  std::cout << "    " << replay << " -> " << std::hexfloat << got << ", torch.matmul " << want
            << std::defaultfloat << "\n";
  CHECK(got == want);
  CheckRejected("probe dot:torch.matmul --k 300 --dtype bf16", "at most 256 for bf16");
  CheckRejected("probe dot:torch.matmul --k 64 --dtype bf16 -o " + TempPath("x.json"),
                "a bf16 dot is replayed by the carrier eval line");
}

TEST_CASE("carrier probe dot: --dtype bf16 refuses a bf16 dot with an fp32 accumulator",
          "[fast][cli][mma][probe]") {
  // A planted driver in target.py's protocol (CARRIER_PROBE_SCRIPT) serving torch.matmul as a
  // bf16 dot that adds in fp32 and rounds only its result to bf16 (a later torch's kernel):
  // no bf16-throughout replay exists, and the probe says which addition keeps fp32's bits.
  const std::string script = TempPath("planted_bf16acc.py");
  std::ofstream(script)
      << "import struct, sys\nn = int(sys.argv[3])\nk = n // 2\n"
         "f32 = lambda v: struct.unpack('f', struct.pack('f', v))[0]\n"
         "def bf16(v):\n    u = struct.unpack('I', struct.pack('f', v))[0]\n"
         "    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000\n"
         "    return struct.unpack('f', struct.pack('I', u))[0]\n"
         "def dot(x):\n    s = 0.0\n    for i in range(k):\n        s = f32(s + x[i] * x[k + i])\n"
         "    return bf16(s)\n"
         "print('ok planted bf16 dot, fp32 accumulator', flush=True)\n"
         "for line in sys.stdin:\n    w = line.split()\n    if not w or w[0] == 'q':\n"
         "        break\n    if w[0] == 'x':\n"
         "        print(dot([float.fromhex(t) for t in w[1:]]).hex(), flush=True)\n"
         "        continue\n    res = []\n    for _ in range(int(w[1])):\n"
         "        v = sys.stdin.readline().split()\n        x = [float.fromhex(v[1])] * n\n"
         "        for j in range(2, len(v), 4):\n"
         "            for q in range(int(v[j + 1])):\n"
         "                x[int(v[j]) + q * int(v[j + 2])] = float.fromhex(v[j + 3])\n"
         "        res.append(dot(x))\n    print(' '.join(r.hex() for r in res), flush=True)\n";
  REQUIRE(setenv("CARRIER_PROBE_SCRIPT", script.c_str(), 1) == 0);
  const std::string args = "probe dot:torch.matmul --k 32 --dtype bf16";
  const Run r = Carrier(args);
  unsetenv("CARRIER_PROBE_SCRIPT");
  INFO("carrier " << args << "\n" << r.out << r.err);
  std::cout << "  planted: " << Line(r.out, "result          ") << "\n";
  CHECK(r.code == 1);
  CHECK(Line(r.out, "target          ") == "planted bf16 dot, fp32 accumulator");
  CHECK(Line(r.out, "result          ").find("keeps fp32's bits (1 + 2^-12 - 1 gave 2^-12)") !=
        std::string::npos);
  CHECK(Line(r.out, "replay          ").empty());
}

TEST_CASE("carrier probe dot:LIB.so:SYMBOL recovers a planted C dot's per-node formats",
          "[fast][cli][mma][probe]") {
  // A C dot built here: four fp32 lanes (i % 4) over the first k & -8 products, rounded products
  // (-ffp-contract=off), joined (l0 + l1) + (l2 + l3) in fp32; the tail's products exact in a
  // double, added there, the join with the lanes in the double, the result rounded to fp32.
  // And a sequential double dot. The probe must find exactly the tail chain and the root in fp64.
  const std::string src = TempPath("plantdot.c"), lib = TempPath("plantdot.so");
  std::ofstream(src) << "#include <stddef.h>\n"
                        "float dot4(const float* a, const float* b, size_t k) {\n"
                        "  float l[4] = {0, 0, 0, 0};\n  const size_t n1 = k & ~(size_t)7;\n"
                        "  for (size_t i = 0; i < n1; ++i) l[i % 4] += a[i] * b[i];\n"
                        "  double tail = 0;\n"
                        "  for (size_t i = n1; i < k; ++i) tail += (double)a[i] * b[i];\n"
                        "  return (float)(tail + ((l[0] + l[1]) + (l[2] + l[3])));\n}\n"
                        "double dseq(const double* a, const double* b, size_t k) {\n"
                        "  double s = 0;\n  for (size_t i = 0; i < k; ++i) s += a[i] * b[i];\n"
                        "  return s;\n}\n";
  REQUIRE(std::system(("cc -O2 -ffp-contract=off -shared -fPIC -o " + lib + " " + src).c_str()) ==
          0);
  const int k = 100;  // n1 = 96: 24 products per lane, a tail of four
  const std::string tree = TempPath("plantdot.json");
  const std::string args =
      "probe dot:" + lib + ":dot4 --k " + std::to_string(k) + " --dtype fp32 -o " + tree;
  const Run r = Carrier(args);
  INFO("carrier " << args << "\n" << r.out << r.err);
  REQUIRE(r.code == 0);
  std::cout << "  " << args << ":\n    formats " << Line(r.out, "formats         ") << "\n";
  CHECK(Line(r.out, "formats         ")
            .rfind("fp64 (2 of 9 nodes): the products of x[96..99]; the final join of x[0..95] "
                   "with x[96..99]; every other addition in fp32",
                   0) == 0);
  CHECK(Line(r.out, "fp64 products   ").find("exact") != std::string::npos);
  CHECK(Line(r.out, "push            ").rfind("mul-add:", 0) == 0);
  CHECK(r.out.find("verified        8 of 8") != std::string::npos);
  CHECK(Line(r.out, "saved           ").find("read back: 8 of 8") != std::string::npos);
  const carrier::MergeTree t = carrier::io::LoadTreeFile(tree, k);
  const auto arith = carrier::ReadDotArithmetic(carrier_test::Slurp(tree), tree, t.NodeCount());
  REQUIRE(arith.has_value());
  CHECK(arith->push == carrier::DotPush::kMulAdd);
  CHECK(arith->wide_products == carrier::WideProducts::kExact);
  REQUIRE(t.chains.size() == 5);
  for (std::uint64_t x = 0; x < t.NodeCount(); ++x) {
    const bool lane = x < 4 && t.chains[x].count == 24 && t.chains[x].stride == 4;
    const bool tail = x < t.chains.size() && t.chains[x].first == 96 && t.chains[x].count == 4 &&
                      t.chains[x].stride == 1;
    INFO("node " << x);
    if (x < 4) CHECK(lane);
    CHECK(arith->Wide(x) == (tail || x == t.Root()));
  }
  const std::string seq = "probe dot:" + lib + ":dseq --k 50 --dtype fp64";
  const Run s = Carrier(seq);
  INFO("carrier " << seq << "\n" << s.out << s.err);
  REQUIRE(s.code == 0);
  CHECK(Line(s.out, "replay          ") == "carrier eval --op dot --dtype fp64 --schedule seq");
  CheckRejected("probe dot:" + lib + ":nosuch --k 8 --dtype fp32", "no symbol 'nosuch'");
  CheckRejected("probe dot:" + lib + ":dot4 --k 8 --dtype bf16", "takes --dtype fp32 or fp64");
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
