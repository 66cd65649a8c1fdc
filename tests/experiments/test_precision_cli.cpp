// carrier eval --precision: a policy the one-precision ops can run gives exactly the bits of
// its --dtype/--acc/--round shorthand; policies they cannot honour, and mixing the two forms,
// are one-line errors (exit 2).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli_support.hpp"

using carrier_test::Carrier;
using carrier_test::CheckRejected;
using carrier_test::JsonField;
using carrier_test::JsonNumber;
using carrier_test::Run;
using carrier_test::TempPath;

namespace {
// The JSON text without the timing fields (they differ between runs) and the fields only
// --precision prints (the policy text and its per-role bound note).
std::string Untimed(std::string json) {
  for (const char* key : {"\"seconds\":", "\"reference_seconds\":", "\"precision\":",
                          "\"role_bound\":", "\"role_bound_kind\":", "\"role_bound_note\":"}) {
    auto at = json.find(key);
    if (at == std::string::npos) continue;
    // From the comma before the key to the end of its value (a string value may hold commas).
    std::size_t v = at + std::string(key).size();
    const auto end = json[v] == '"' ? json.find('"', v + 1) + 1 : json.find_first_of(",}", v);
    if (at > 0 && json[at - 1] == ',') --at;
    json.erase(at, end - at);
  }
  return json;
}
}  // namespace

TEST_CASE("eval --precision equals its --dtype/--acc/--round shorthand bit for bit",
          "[fast][cli]") {
  struct Case {
    const char* policy;
    const char* shorthand;
  };
  for (const Case& c : {Case{"in=bf16,acc=fp32", "--dtype bf16 --acc fp32"},
                        Case{"in=fp16,acc=fp16@rz", "--dtype fp16 --acc fp16 --round rz"},
                        Case{"in=bf16,acc=fp32,combine=fp32", "--dtype bf16 --acc fp32"},
                        Case{"all-bf16", "--dtype bf16 --acc bf16"},
                        // XLA's dot algorithms, by their proto names
                        Case{"ALG_DOT_BF16_BF16_F32", "--dtype bf16 --acc fp32"},
                        Case{"ALG_DOT_BF16_BF16_BF16", "--dtype bf16 --acc bf16"},
                        Case{"ALG_DOT_F16_F16_F32", "--dtype fp16 --acc fp32"},
                        Case{"ALG_DOT_F16_F16_F16", "--dtype fp16 --acc fp16"},
                        Case{"ALG_DOT_TF32_TF32_F32", "--dtype tf32 --acc fp32"},
                        Case{"ALG_DOT_F32_F32_F32", "--dtype fp32 --acc fp32"},
                        Case{"ALG_DOT_F64_F64_F64", "--dtype fp64 --acc fp64"},
                        Case{"ALG_DOT_ANY_F8_ANY_F8_F32", "--dtype fp8e4m3 --acc fp32"}}) {
    const std::string common =
        " --op sum --schedule blocked:16 --gen uniform11 --n 2000 --format json";
    const Run a = Carrier(std::string("eval --precision '") + c.policy + "'" + common);
    const Run b = Carrier(std::string("eval ") + c.shorthand + common);
    INFO("policy " << c.policy << " vs " << c.shorthand << "\n" << a.err << b.err);
    REQUIRE(a.code == 0);
    REQUIRE(b.code == 0);
    CHECK(Untimed(a.out) == Untimed(b.out));
  }
}

// x rounded to nearest even at p significant bits (a normal, finite x), and the ulp there.
double RoundToBits(double x, int p) {
  int e = 0;
  const double m = std::frexp(x, &e);
  return std::ldexp(std::nearbyint(std::ldexp(m, p)), e - p);
}
double UlpAt(double x, int p) {
  int e = 0;
  (void)std::frexp(x, &e);
  return std::ldexp(1.0, e - p);
}

TEST_CASE("eval --precision with a combine wider than acc delivers the out role's format",
          "[fast][cli]") {
  // in=fp16,acc=fp16,combine=fp32: chains in fp16, combines in fp32 (the two-level shorthand
  // fp16>fp32), and the out role (= acc, fp16) rounds the fp32 result once more; ulps are
  // fp16's. The shorthand alone keeps the fp32 result and counts fp32 ulps.
  const std::string common =
      " --op sum --schedule blocked:16 --gen uniform11 --n 2000 --seed 3 --format json";
  const Run pol = Carrier("eval --precision 'in=fp16,acc=fp16,combine=fp32'" + common);
  const Run two = Carrier("eval --dtype fp16 --acc 'fp16>fp32'" + common);
  INFO(pol.out << pol.err << two.out << two.err);
  REQUIRE(pol.code == 0);
  REQUIRE(two.code == 0);
  // Both results are fp32 values, printed as the shortest text that reads back as that float.
  const double r = static_cast<float>(JsonNumber(pol.out, "result"));
  const double r2 = static_cast<float>(JsonNumber(two.out, "result"));
  const double ref = JsonNumber(pol.out, "reference");
  std::cout << "  in=fp16,acc=fp16,combine=fp32: result " << r << " (fp32 before out: " << r2
            << "), reference " << ref << ", ulp_error " << JsonField(pol.out, "ulp_error")
            << " fp16 ulps (shorthand: " << JsonField(two.out, "ulp_error") << " fp32 ulps)\n";
  CHECK(JsonField(pol.out, "out") == "fp16");
  CHECK(JsonField(two.out, "out").empty());
  CHECK(JsonField(pol.out, "acc") == "fp16>fp32");
  CHECK(r == RoundToBits(r2, 11));
  CHECK(r2 != RoundToBits(r2, 11));  // the input makes the last rounding visible
  CHECK(JsonNumber(pol.out, "ulp_error") == Approx(std::fabs(r - ref) / UlpAt(ref, 11)));
  CHECK(JsonNumber(two.out, "ulp_error") == Approx(std::fabs(r2 - ref) / UlpAt(ref, 24)));
  CHECK(JsonNumber(pol.out, "bound") > JsonNumber(two.out, "bound"));
  CHECK(JsonField(pol.out, "bound_formula").find("rounding to out=fp16") != std::string::npos);
  CHECK(JsonNumber(pol.out, "abs_error") <= JsonNumber(pol.out, "bound"));
}

TEST_CASE("eval --op dot --precision ALG_DOT_...: XLA's dot algorithms as aliases", "[fast][cli]") {
  const std::string common = " --op dot --gen normal --n 3000 --format json";
  // The plain aliases are their role shorthand, for dot as for sum.
  const Run bf = Carrier("eval --precision ALG_DOT_BF16_BF16_F32" + common);
  const Run bf_short = Carrier("eval --dtype bf16 --acc fp32" + common);
  INFO(bf.err << bf_short.err);
  REQUIRE(bf.code == 0);
  REQUIRE(bf_short.code == 0);
  CHECK(Untimed(bf.out) == Untimed(bf_short.out));
  std::cout << "  dot ALG_DOT_BF16_BF16_F32, normal, n 3000: result " << JsonField(bf.out, "result")
            << ", relative error " << JsonField(bf.out, "relative_error") << "\n";
  // FAST_ACCUM is Hopper's FP8 fused sum without promotion: --schedule mma:hopper-fp8.
  for (const char* tail : {"", " --schedule mma:hopper-fp8:promote:128"}) {
    const std::string order = *tail ? "mma:hopper-fp8:promote:128" : "mma:hopper-fp8";
    const Run fast = Carrier(std::string("eval --precision ALG_DOT_ANY_F8_ANY_F8_F32_FAST_ACCUM") +
                             tail + common);
    const Run sched = Carrier("eval --dtype fp8e4m3 --acc fp32 --schedule " + order + common);
    INFO(fast.err << sched.err);
    REQUIRE(fast.code == 0);
    REQUIRE(sched.code == 0);
    // "schedule" is what was asked (the default seq for the alias), "schedule_used" what ran.
    CHECK(JsonField(fast.out, "schedule_used") == order);
    CHECK(JsonField(sched.out, "schedule_used") == order);
    const auto without_schedule = [](std::string json) {
      const auto at = json.find("\"schedule\":");
      if (at != std::string::npos) json.erase(at, json.find(',', at) + 1 - at);
      return Untimed(json);
    };
    CHECK(without_schedule(fast.out) == without_schedule(sched.out));
    std::cout << "  dot FAST_ACCUM" << tail << ": result " << JsonField(fast.out, "result")
              << ", relative error " << JsonField(fast.out, "relative_error") << "\n";
  }
  CheckRejected(
      "eval --precision ALG_DOT_ANY_F8_ANY_F8_F32_FAST_ACCUM --schedule pairwise" + common,
      "runs as --schedule mma:hopper-fp8");
  CheckRejected("eval --op sum --precision ALG_DOT_ANY_F8_ANY_F8_F32_FAST_ACCUM --gen normal --n 8",
                "mma");
  CheckRejected("eval --op sum --precision ALG_DOT_BF16_BF16_F32_X3 --gen normal --n 8",
                "applies to op dot and matmul");
}

namespace {
// eval's JSON "result" read back as the fp32 value it prints (shortest decimal).
float ResultOf(const Run& r) { return static_cast<float>(JsonNumber(r.out, "result")); }
}  // namespace

TEST_CASE("eval --op dot --precision ALG_DOT_..._X3/_X6/_X9: XLA's split dots, derived by hand",
          "[fast][cli]") {
  // a = (1 + 2^-10 + 2^-20, 1), b = (1 + 2^-10 + 2^-20, -1); exact dot, in long double (41
  // bits): e = 2^-10 + 2^-20, (1 + e)^2 - 1 = 2^-9 + 2^-19 + 2^-20 + 2^-29 + 2^-40.
  const long double e = std::ldexp(1.0L, -10) + std::ldexp(1.0L, -20);
  const long double exact = (1 + e) * (1 + e) - 1;
  REQUIRE(exact == std::ldexp(1.0L, -9) + std::ldexp(1.0L, -19) + std::ldexp(1.0L, -20) +
                       std::ldexp(1.0L, -29) + std::ldexp(1.0L, -40));
  const std::string file = TempPath("split_dot.txt");
  {
    std::ofstream f(file);
    f << std::hexfloat << static_cast<double>(1 + e) << " " << static_cast<double>(1 + e)
      << "\n1 -1\n";
  }
  auto p2 = [](std::initializer_list<int> exps) {
    float v = 0;
    for (int k : exps) v += std::ldexp(1.0f, k);  // exact: the terms fit 24 bits
    return v;
  };
  struct Case {
    const char* precision;
    float want;
    const char* why;
  };
  const Case cases[] = {
      // bf16 rounds 1 + e to 1: 1 - 1 = 0.
      {"ALG_DOT_BF16_BF16_F32", 0.0f, "operands rounded to bf16: 1*1 - 1*1"},
      // fp32: fl(1 + 2^-9 + 2^-19 + 2^-20 + 2^-29 + 2^-40) drops the last two; minus 1.
      {"ALG_DOT_F32_F32_F32", p2({-9, -19, -20}), "the product rounded to fp32"},
      // hi = 1 (truncated), lo = bf16(e) = 2^-10 (2^-20 is below its half ulp): lo hi + hi lo
      // = 2^-9; hi hi's dot is 1 - 1 = 0.
      {"ALG_DOT_BF16_BF16_F32_X3", p2({-9}), "lo hi + hi lo, lo = bf16(2^-10 + 2^-20)"},
      // hi = 1, mid = 2^-10, lo = 2^-20: mm + hl + lh = 3 2^-20, + hm + mh = 2^-9 + 3 2^-20,
      // + hh (0); mid lo, lo mid (2^-30 each) and lo lo are left out.
      {"ALG_DOT_BF16_BF16_F32_X6", p2({-9, -19, -20}), "six products, 2^-29 and 2^-40 left out"},
      // X9 adds ll + lm + ml = 2^-29 + 2^-40 first: ... + hm = 2^-10 + 3 2^-20 + 2^-29 + 2^-40
      // rounds 2^-40 away (ulp 2^-33), + mh, + hh (0): 2^-9 + 2^-19 + 2^-20 + 2^-29.
      {"ALG_DOT_BF16_BF16_F32_X9", p2({-9, -19, -20, -29}), "nine products, 2^-40 rounded away"},
      // tf32 (11 bits): hi = 1 + 2^-10, lo = 2^-20: lo hi + hi lo = 2^-19 + 2^-29; hi hi's dot
      // fl((1 + 2^-10)^2 - 1) = 2^-9 + 2^-20; the sum 2^-9 + 2^-19 + 2^-20 + 2^-29.
      {"ALG_DOT_TF32_TF32_F32_X3", p2({-9, -19, -20, -29}), "tf32 hi keeps 2^-10"},
  };
  for (const Case& c : cases) {
    const std::string args = std::string("eval --op dot --precision ") + c.precision + " --input " +
                             file + " --format json";
    const Run r = Carrier(args);
    INFO("carrier " << args << "\nstderr: " << r.err << "\nstdout: " << r.out);
    REQUIRE(r.code == 0);
    const float got = ResultOf(r);
    const double err = static_cast<double>(std::fabs(got - exact) / exact);
    std::cout << "  " << c.precision << ": " << std::hexfloat << got << std::defaultfloat
              << " (want " << std::hexfloat << c.want << std::defaultfloat << ", " << c.why
              << "), relative error " << err << "\n";
    CHECK(got == c.want);
    // The reference is exact on the stored inputs: the fp32 ones but for the bf16 alias (whose
    // stored inputs are 1 and -1, so its reference is 0).
    if (std::string(c.precision) != "ALG_DOT_BF16_BF16_F32") {
      CHECK(JsonNumber(r.out, "reference") == static_cast<double>(exact));
      CHECK(JsonNumber(r.out, "rel_error") == Approx(err).epsilon(1e-6));
    }
  }
}

TEST_CASE("split dots: --schedule orders each partial dot (an independent split in the test)",
          "[fast][cli]") {
  // 64 fp32 pairs from an LCG; the parts cut here without carrier: hi = the fp32 bits with the
  // low 16 cleared, lo = x - hi rounded to 8 significant bits, ties to even (nearbyint). Each
  // partial dot is `eval --op dot --dtype fp32 --acc fp32` on the parts (exact in fp32) through
  // the same schedule; X3 = fl(fl(lo.hi + hi.lo) + hi.hi) must equal the preset's bits.
  std::uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<float>(static_cast<double>(state >> 11) * 0x1p-53 * 4 - 2);
  };
  const int n = 64;
  std::vector<float> a(n), b(n);
  // Magnitudes spread over 2^-12 .. 2^12, so the partial dots round and their order shows.
  for (int k = 0; k < n; ++k) {
    a[k] = std::ldexp(next(), (k * 7) % 25 - 12);
    b[k] = next();
  }
  auto hi = [](float x) {
    std::uint32_t u = 0;
    std::memcpy(&u, &x, 4);
    u &= 0xFFFF0000u;
    float y = 0;
    std::memcpy(&y, &u, 4);
    return y;
  };
  auto lo = [&](float x) {
    const double r = static_cast<double>(x) - hi(x);  // exact
    if (r == 0) return 0.0f;
    const int e = std::ilogb(r) - 7;
    return static_cast<float>(std::ldexp(std::nearbyint(std::ldexp(r, -e)), e));
  };
  auto write = [&](const std::string& tag, auto fa, auto fb) {
    const std::string file = TempPath(tag);
    std::ofstream f(file);
    f << std::hexfloat;
    for (int k = 0; k < n; ++k) f << static_cast<double>(fa(a[k])) << " " << fb(b[k]) << "\n";
    return file;
  };
  const auto id = [](float x) { return static_cast<double>(x); };
  const std::string input = write("split_in.txt", id, id);
  const std::string lh = write("split_lh.txt", lo, hi), hl = write("split_hl.txt", hi, lo),
                    hh = write("split_hh.txt", hi, hi);
  std::vector<float> results;
  for (const std::string schedule : {"seq", "reverse", "pairwise", "blocked:8"}) {
    auto dot = [&](const std::string& file) {
      const Run r = Carrier("eval --op dot --dtype fp32 --acc fp32 --schedule " + schedule +
                            " --input " + file + " --format json");
      INFO(r.err);
      REQUIRE(r.code == 0);
      return ResultOf(r);
    };
    const float want = (dot(lh) + dot(hl)) + dot(hh);
    for (const char* engine : {"fast", "oracle"}) {
      const Run x3 =
          Carrier("eval --op dot --precision ALG_DOT_BF16_BF16_F32_X3 --schedule " + schedule +
                  " --engine " + engine + " --input " + input + " --format json");
      INFO(x3.err);
      REQUIRE(x3.code == 0);
      std::cout << "  X3 " << schedule << " (" << engine << "): " << std::hexfloat << ResultOf(x3)
                << ", partial dots summed here: " << want << std::defaultfloat << "\n";
      CHECK(ResultOf(x3) == want);
      CHECK(JsonField(x3.out, "schedule_used") == schedule);
    }
    results.push_back(want);
  }
  // The input is one where the order changes the bits (else this test could not fail).
  CHECK(std::count(results.begin(), results.end(), results[0]) < 4);
}

TEST_CASE("split dots: error bf16 > X3 > X6 >= X9 ~ fp32 on random inputs, and bad combinations",
          "[fast][cli]") {
  // Relative errors against the exact dot of the fp32 inputs (the reference of the runs that
  // store fp32: the bf16 alias's own reference is on its bf16-rounded inputs), summed over 4
  // seeds, n 4096, seq order.
  const char* names[] = {"ALG_DOT_BF16_BF16_F32",    "ALG_DOT_BF16_BF16_F32_X3",
                         "ALG_DOT_BF16_BF16_F32_X6", "ALG_DOT_BF16_BF16_F32_X9",
                         "ALG_DOT_F32_F32_F32",      "ALG_DOT_TF32_TF32_F32_X3"};
  std::vector<double> err(6, 0.0);
  for (int seed = 1; seed <= 4; ++seed) {
    double reference = NAN;
    for (int i = 5; i >= 0; --i) {  // ALG_DOT_F32_F32_F32 (fp32 storage) before the bf16 alias
      const std::string args = std::string("eval --op dot --precision ") + names[i] +
                               " --gen normal --n 4096 --seed " + std::to_string(seed) +
                               " --format json";
      const Run r = Carrier(args);
      INFO("carrier " << args << "\nstderr: " << r.err);
      REQUIRE(r.code == 0);
      if (i > 0) {
        if (std::isnan(reference)) reference = JsonNumber(r.out, "reference");
        CHECK(JsonNumber(r.out, "reference") == reference);  // the same fp32 inputs
      }
      const double e = std::fabs(JsonNumber(r.out, "result") - reference) / std::fabs(reference);
      err[i] += e;
      std::cout << "  seed " << seed << " " << names[i] << ": result " << JsonField(r.out, "result")
                << ", relative error against the fp32 inputs' exact dot " << e << "\n";
    }
  }
  for (int i = 0; i < 6; ++i)
    std::cout << "  " << names[i] << ": summed relative error over 4 seeds " << err[i] << "\n";
  CHECK(err[0] > 10 * err[1]);  // bf16 (8 bits) against about 16 bits per operand
  CHECK(err[1] > 4 * err[2]);   // X3 drops lo lo and rounds lo; X6 keeps 24 bits
  CHECK(err[3] <= 2 * err[2]);  // X9 adds only terms below 2^-24 relative
  CHECK(err[3] <= 4 * err[4]);  // X9 and fp32: both at fp32's accumulation error
  CHECK(err[4] <= 4 * err[3]);
  CHECK(err[5] < err[1]);  // tf32 parts (11 bits) beat bf16 ones
  // matmul: every output a split dot, against the exact products of the same fp32 inputs.
  const std::string shape = " --m 3 --n 4 --k 256 --gen normal --format json";
  const Run mm3 = Carrier("eval --op matmul --precision ALG_DOT_BF16_BF16_F32_X3" + shape);
  const Run mm9 = Carrier("eval --op matmul --precision ALG_DOT_BF16_BF16_F32_X9" + shape);
  const Run mm32 = Carrier("eval --op matmul --precision ALG_DOT_F32_F32_F32" + shape);
  INFO(mm3.err << mm9.err << mm32.err);
  REQUIRE(mm3.code == 0);
  REQUIRE(mm9.code == 0);
  REQUIRE(mm32.code == 0);
  const double n3 = JsonNumber(mm3.out, "normwise_fro_error"),
               n9 = JsonNumber(mm9.out, "normwise_fro_error"),
               n32 = JsonNumber(mm32.out, "normwise_fro_error");
  std::cout << "  matmul 3x4x256 normwise error: X3 " << n3 << ", X9 " << n9 << ", fp32 " << n32
            << "\n";
  CHECK(n3 > 4 * n9);
  CHECK(n9 <= 4 * n32);

  const std::string gen = " --gen normal --n 8";
  CheckRejected("eval --op lse --precision ALG_DOT_BF16_BF16_F32_X6" + gen,
                "applies to op dot and matmul");
  CheckRejected("eval --op dot --precision in=bf16,acc=fp32,split=bf16x3" + gen, "in=fp32");
  CheckRejected("eval --op dot --precision in=fp32,acc=fp16,split=bf16x3" + gen, "acc=fp16");
  CheckRejected("eval --op dot --precision in=fp32,acc=fp32,combine=fp64,split=bf16x9" + gen,
                "combine=fp64");
  CheckRejected("eval --op dot --precision in=fp32,split=bf16x4" + gen, "bf16x3 bf16x6");
  CheckRejected("eval --op dot --precision ALG_DOT_BF16_BF16_F32_X3 --schedule mma:hopper" + gen,
                "declared schedule");
  CheckRejected("eval --op dot --precision ALG_DOT_BF16_BF16_F32_X3 --backend simd" + gen,
                "backend replay");
  CheckRejected("eval --op dot --precision ALG_DOT_BF16_BF16_F32_X3,mma=hopper-fp8" + gen,
                "not mma=hopper-fp8");
}

TEST_CASE("eval --precision refuses what a one-precision op cannot honour", "[fast][cli]") {
  CheckRejected("eval --op sum --precision fa2-ampere-bf16 --gen normal --n 10", "mma");
  CheckRejected("eval --op sum --precision in=bf16,acc=fp32,out=bf16 --gen normal --n 10", "out");
  CheckRejected("eval --op sum --precision in=bf16 --dtype bf16 --gen normal --n 10",
                "one or the other");
  CheckRejected("eval --op sum --precision in=bf17 --gen normal --n 10", "bf17");
}

TEST_CASE("eval --precision runs attention role by role under the kernel presets", "[fast][cli]") {
  // The policy is typed into the trial (run::TrialSpec::precision): attention's policy replay
  // (precision/attention_model.hpp's FA2) rounds every role, and its bound is the role bound.
  struct Case {
    const char* preset;
    const char* in;  // the in role's format: the stored inputs' dtype
    const char* schedule;
  };
  for (const Case& c : {Case{"fa2-ampere-bf16", "bf16", ""}, Case{"fa3-hopper-fp8", "fp8e4m3", ""},
                        Case{"eager-bf16", "bf16", ""}, Case{"fa4-blackwell-bf16", "bf16", ""},
                        Case{"fa4-blackwell-fp8", "fp8e4m3", ""},
                        Case{"fa2-ampere-bf16", "bf16", " --schedule blocked:64:lift"}}) {
    const Run r = Carrier(std::string("eval --op attention --precision ") + c.preset +
                          " --head-dim 64 --gen normal --n 256" + c.schedule + " --format json");
    INFO(c.preset << c.schedule << "\n" << r.out << r.err);
    REQUIRE(r.code == 0);
    const double err = JsonNumber(r.out, "normwise_inf_error");
    const double rb = JsonNumber(r.out, "role_bound");
    std::cout << "  attention " << c.preset << c.schedule << ": normwise_inf_error " << err
              << ", componentwise " << JsonField(r.out, "componentwise_error") << ", role_bound "
              << rb << " (" << JsonField(r.out, "role_bound_kind") << "), error/bound "
              << JsonField(r.out, "error_to_bound") << "\n";
    CHECK(JsonField(r.out, "precision") == c.preset);
    CHECK(JsonField(r.out, "dtype") == c.in);
    CHECK(JsonField(r.out, "acc") == "fp32");
    CHECK(std::isfinite(err));
    CHECK(err > 0);  // bf16/fp8 roles leave a visible error
    CHECK(std::isfinite(rb));
    CHECK(err <= rb);
    CHECK(JsonField(r.out, "role_bound_kind") == "relative, first-order estimate");
    CHECK(JsonNumber(r.out, "bound") == rb);  // run by role, the role bound is the trial's
    CHECK(JsonField(r.out, "role_bound_note").find("first-order estimate only") !=
          std::string::npos);
  }
}

TEST_CASE("eval --precision for attention: bad presets and roles are one line, exit 2",
          "[fast][cli]") {
  const std::string common = " --head-dim 64 --gen normal --n 16";
  CheckRejected("eval --op attention --precision fa9-bf16" + common, "fa9-bf16");
  // ampere-bf16's tensor cores multiply bf16, not the fp16 this override stores
  CheckRejected("eval --op attention --precision fa2-ampere-bf16,in=fp16" + common, "in=fp16");
  // FA2's key tiles: no other merge order
  CheckRejected("eval --op attention --precision eager-bf16 --schedule pairwise" + common,
                "blocked:BC:lift");
  CheckRejected("eval --op attention --precision eager-bf16 --backend cuda" + common, "replay");
  // a one-precision op still refuses what it cannot honour, naming the role
  CheckRejected("eval --op sum --precision fa3-hopper-fp8 --gen normal --n 10", "mma");
}

TEST_CASE("eval --precision in=BLOCKFMT quantises the inputs block-wise before the reduction",
          "[fast][cli]") {
  // By hand, OCP floor rule: amax 5 gives the E8M0 scale 2^(floor(log2 5) - 2) = 1; E2M1 rounds
  // 1 -> 1, -3 -> -3, 0.25 -> 0 (tie, even), 5 -> 4 (tie between 4 and 6, even): the sum is 2.
  const std::string file = carrier_test::TempPath("mx.txt");
  {
    std::ofstream f(file);
    f << "1\n-3\n0.25\n5\n";
  }
  const Run mx = Carrier("eval --op sum --precision in=mxfp4 --schedule seq --input " + file +
                         " --format json");
  INFO(mx.out << mx.err);
  REQUIRE(mx.code == 0);
  CHECK(JsonNumber(mx.out, "reference") == 2.0);
  CHECK(JsonNumber(mx.out, "result") == 2.0);
  CHECK(JsonField(mx.out, "dtype") == "mxfp4");
  CHECK(JsonField(mx.out, "acc") == "fp32");  // a block-scaled in leaves acc to fp32

  // NVFP4 over 45 values (two full blocks of 16 and a tail of 13): eval's stored inputs are
  // `carrier quantize`'s dequantised values, so its exact reference is their sum (each value
  // has at most 30 significant bits within a few binades: exact in long double).
  {
    std::ofstream f(file);
    for (int i = 0; i < 45; ++i) f << std::sin(0.7 * i) * (1 + i % 9) * 0.37 << "\n";
  }
  const Run nv = Carrier("eval --op sum --precision in=nvfp4 --schedule pairwise --input " + file +
                         " --format json");
  const Run q = Carrier("quantize --dtype nvfp4 --input " + file);
  INFO(nv.out << nv.err << q.err);
  REQUIRE(nv.code == 0);
  REQUIRE(q.code == 0);
  std::istringstream rows(q.out);
  std::string line;
  std::getline(rows, line);  // header; value is the last column
  long double sum = 0;
  int count = 0;
  while (std::getline(rows, line)) {
    sum += std::strtold(line.substr(line.rfind(',') + 1).c_str(), nullptr);
    ++count;
  }
  std::cout << "  nvfp4 sum of " << count << " quantised values " << static_cast<double>(sum)
            << ", eval reference " << JsonField(nv.out, "reference") << "\n";
  CHECK(count == 45);
  CHECK(JsonNumber(nv.out, "reference") == static_cast<double>(sum));

  // --dtype F (acc fp32 by default) is the same trial as --precision in=F; dot quantises each
  // column as its own tensor.
  const std::string common = " --op dot --schedule blocked:16 --gen normal --n 3000 --format json";
  const Run a = Carrier("eval --precision in=nvfp4:ru" + common);
  const Run b = Carrier("eval --dtype nvfp4:ru --acc fp32" + common);
  INFO(a.out << a.err << b.out << b.err);
  REQUIRE(a.code == 0);
  REQUIRE(b.code == 0);
  CHECK(Untimed(a.out) == Untimed(b.out));
  std::remove(file.c_str());

  CheckRejected("eval --op sum --precision in=nvfp4:2d16 --gen normal --n 100", "two-dimensional");
  CheckRejected("eval --op sum --precision in=fp32,acc=nvfp4 --gen normal --n 100",
                "storage formats");
  CheckRejected("eval --op sum --precision in=nvfp4@rz --gen normal --n 100", "own rule");
  CheckRejected("eval --op sum --precision in=nvfp5 --gen normal --n 100", "nvfp5");
  CheckRejected("eval --op sum --dtype mxfp4 --acc fp32 --backend simd --gen normal --n 100",
                "replay");
}

TEST_CASE("quantize round-trips: its dequantised values quantise to the same codes and values",
          "[fast][cli]") {
  // The value column of `carrier quantize` fed back as input (shortest round-trip text). For
  // the OCP floor rule the block scales cannot move (the block max keeps its binade), so codes
  // and scales come back too.
  for (const char* fmt : {"mxfp8e4m3", "mxfp6e2m3", "mxfp4", "mxint8", "mxfp8e5m2"}) {
    const Run first = Carrier(std::string("quantize --dtype ") + fmt + " --gen normal --n 100");
    REQUIRE(first.code == 0);
    const std::string file = carrier_test::TempPath("values.txt");
    std::vector<std::string> rows;
    {
      std::istringstream in(first.out);
      std::string line;
      std::getline(in, line);
      std::ofstream f(file);
      while (std::getline(in, line)) {
        rows.push_back(line.substr(line.find(',', line.find(',', line.find(',') + 1) + 1) + 1));
        f << line.substr(line.rfind(',') + 1) << "\n";
      }
    }
    const Run second = Carrier(std::string("quantize --dtype ") + fmt + " --input " + file);
    REQUIRE(second.code == 0);
    std::istringstream in(second.out);
    std::string line;
    std::getline(in, line);
    std::size_t i = 0, same = 0;
    while (std::getline(in, line) && i < rows.size()) {
      // x,code,element,block,scale_code,scale,tensor_scale,value: from code on must match.
      const std::string got =
          line.substr(line.find(',', line.find(',', line.find(',') + 1) + 1) + 1);
      const std::string want = rows[i++];
      same += got.substr(got.find(',') + 1) == want.substr(want.find(',') + 1);
    }
    std::cout << "  quantize " << fmt << ": " << same << " of " << rows.size()
              << " rows re-quantise to the same code, block scale and value\n";
    CHECK(i == rows.size());
    CHECK(same == rows.size());
    std::remove(file.c_str());
  }
  CheckRejected("quantize --dtype nvfp4", "--input FILE or --gen");
  CheckRejected("quantize --dtype mxfp9 --gen normal --n 4", "mxfp9");
  CheckRejected("quantize --dtype nvfp4 --gen normal --n 4 --format xml", "xml");
}
