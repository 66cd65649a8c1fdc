// The exp/log policies. PortableExp is checked over fp32 inputs of its valid range against
// double-precision libm (whose own error, below 2^-52 relative, is negligible at fp32's 2^-24):
// the worst error in ulps is printed and asserted against the documented bound.
//
// Which inputs. [slow] (every CTest run, CI included): every input of the binades where the
// functions' special paths live (exp: |x| >= 32, where results underflow to subnormals or
// overflow, and 2^-26 <= |x| < 2^-20, where exp(x) starts to round to 1; log: the subnormals and
// [1/2, 2), where log x nears 0) and every 16th pattern of the rest, all binades touched.
// [.exhaustive] (hidden; `precision_tests "[exhaustive]"`, about 5 CPU-minutes): every fp32
// pattern, as the documented bounds were found; run it after changing PortableExp. The full walks
// were 78 s and 61 s of wall time on two threads in CI.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "core/carrier.hpp"
#include "core/carriers/online_softmax.hpp"
#include "precision/math_policy.hpp"
#include "support/test_support.hpp"

using carrier::PortableExp;

namespace {

// Error of `got` against the exact value `ref` in ulps of fp32 at ref (subnormal spacing below
// 2^-126); results that overflow fp32 must be +inf.
double UlpErrorF32(float got, double ref) {
  if (std::isinf(static_cast<float>(ref)) || std::isinf(got))
    return got == static_cast<float>(ref) ? 0.0 : INFINITY;
  double ulp = 0x1.0p-149;
  if (std::fabs(ref) >= 0x1.0p-126) ulp = std::ldexp(1.0, std::ilogb(ref) - 23);
  return std::fabs(static_cast<double>(got) - ref) / ulp;
}

double UlpErrorF64(double got, long double ref) {
  if (std::isinf(static_cast<double>(ref)) || std::isinf(got))
    return got == static_cast<double>(ref) ? 0.0 : INFINITY;
  long double ulp = 0x1.0p-1074L;
  if (std::fabs(ref) >= 0x1.0p-1022L) ulp = std::ldexp(1.0L, std::ilogb(ref) - 52);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / ulp);
}

struct Worst {
  double ulps = 0;
  float at = 0;
  std::uint64_t checked = 0;
};

// Runs f over fp32 bit patterns on two threads and keeps the worst error: every pattern where
// full(bits) holds, every `stride`-th of the others (stride 1: all 2^32).
template <class F, class Full>
Worst Walk(std::uint32_t stride, Full full, F f) {
  Worst w[2];
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      for (std::uint64_t b = t; b < (std::uint64_t{1} << 32); b += 2) {
        const auto bits = static_cast<std::uint32_t>(b);
        if (stride > 1 && (bits / 2) % stride != 0 && !full(bits)) continue;
        float x;
        std::memcpy(&x, &bits, sizeof x);
        double e;
        if (!f(x, e)) continue;
        ++w[t].checked;
        if (e > w[t].ulps) w[t] = {e, x, w[t].checked};
      }
    });
  for (auto& th : threads) th.join();
  Worst out = w[0].ulps >= w[1].ulps ? w[0] : w[1];
  out.checked = w[0].checked + w[1].checked;
  return out;
}

// The biased exponent of an fp32 pattern.
std::uint32_t BiasedExponent(std::uint32_t bits) { return (bits >> 23) & 0xff; }

// What a walk measured, on one line: how many inputs of which kind, the largest error and where.
template <class Bound>
void Report(const char* what, const char* inputs, const Worst& w, std::uint32_t stride,
            Bound bound) {
  std::cout << what << ": " << w.checked << " " << inputs << " (every "
            << (stride > 1 ? std::to_string(stride) + "th pattern, and all of the edge binades"
                           : std::string("one"))
            << "), max error " << w.ulps << " ulp at x = " << std::hexfloat << w.at
            << std::defaultfloat << " (documented bound " << bound << ")\n";
}

void CheckExp(std::uint32_t stride) {
  const Worst w = Walk(
      stride,
      [](std::uint32_t bits) {
        const std::uint32_t e = BiasedExponent(bits);
        return e >= 127 + 5 || (e >= 127 - 26 && e < 127 - 20);  // |x| >= 32, 2^-26 .. 2^-20
      },
      [](float x, double& e) {
        if (!(x >= -104.0f && x <= 89.0f)) return false;
        e = UlpErrorF32(PortableExp::Exp(x), std::exp(static_cast<double>(x)));
        return true;
      });
  Report("portable exp(fp32)", "inputs in [-104, 89]", w, stride, carrier::kPortableExpMaxUlpF32);
  CHECK(w.checked > 2000000000u / stride);
  CHECK(w.ulps <= carrier::kPortableExpMaxUlpF32);
}

void CheckLog(std::uint32_t stride) {
  const Worst w = Walk(
      stride,
      [](std::uint32_t bits) {
        const std::uint32_t e = BiasedExponent(bits);
        return e == 0 || e == 126 || e == 127;  // subnormals, [1/2, 2)
      },
      [](float x, double& e) {
        if (!(x > 0.0f) || std::isinf(x)) return false;
        e = UlpErrorF32(PortableExp::Log(x), std::log(static_cast<double>(x)));
        return true;
      });
  Report("portable log(fp32)", "positive finite inputs", w, stride, carrier::kPortableLogMaxUlpF32);
  CHECK(w.ulps <= carrier::kPortableLogMaxUlpF32);
}

}  // namespace

TEST_CASE("portable exp is within its documented ulp bound on fp32 edge binades and samples",
          "[slow][math]") {
  CheckExp(16);
}

TEST_CASE("portable log is within its documented ulp bound on fp32 edge binades and samples",
          "[slow][math]") {
  CheckLog(16);
}

TEST_CASE("portable exp is within its documented ulp bound on every fp32 input",
          "[.exhaustive][math]") {
  CheckExp(1);
}

TEST_CASE("portable log is within its documented ulp bound on every positive fp32",
          "[.exhaustive][math]") {
  CheckLog(1);
}

TEST_CASE("portable exp and log in fp64 on random inputs", "[fast][math]") {
  const std::uint64_t seed = 6060;
  carrier::test::Rng rng(seed);
  double worst_exp = 0, worst_log = 0;
  double at_exp = 0, at_log = 0;
  for (int i = 0; i < carrier::test::Trials(200000); ++i) {
    const double x = rng.Uniform(-745.0, 709.0);
    const double e = UlpErrorF64(PortableExp::Exp(x), std::exp(static_cast<long double>(x)));
    if (e > worst_exp) worst_exp = e, at_exp = x;
    const double y = std::ldexp(rng.Uniform(0.5, 1.0), static_cast<int>(rng.Below(2100)) - 1070);
    const double l = UlpErrorF64(PortableExp::Log(y), std::log(static_cast<long double>(y)));
    if (l > worst_log) worst_log = l, at_log = y;
  }
  std::cout << "portable fp64: exp max " << worst_exp << " ulp at " << std::hexfloat << at_exp
            << ", log max " << std::defaultfloat << worst_log << " ulp at " << std::hexfloat
            << at_log << std::defaultfloat << " (seed " << seed << ")\n";
  INFO("seed=" << seed);
  CHECK(worst_exp <= 1.0);
  CHECK(worst_log <= 1.0);
}

TEST_CASE("portable exp and log special values", "[fast][math]") {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(std::isnan(PortableExp::Exp(std::nanf(""))));
  CHECK(PortableExp::Exp(inf) == inf);
  CHECK(PortableExp::Exp(-inf) == 0.0f);
  CHECK(PortableExp::Exp(0.0f) == 1.0f);
  CHECK(PortableExp::Exp(-0.0f) == 1.0f);
  CHECK(PortableExp::Exp(89.0f) == inf);
  CHECK(PortableExp::Exp(-200.0f) == 0.0f);
  CHECK(PortableExp::Exp(0.0) == 1.0);
  CHECK(PortableExp::Exp(1000.0) == std::numeric_limits<double>::infinity());
  CHECK(PortableExp::Exp(-1000.0) == 0.0);
  CHECK(PortableExp::Exp(-745.0) == 0x1.0p-1074);  // rounds up to the smallest subnormal
  CHECK(PortableExp::Log(1.0f) == 0.0f);
  CHECK(PortableExp::Log(0.0f) == -inf);
  CHECK(std::isnan(PortableExp::Log(-1.0f)));
  CHECK(PortableExp::Log(inf) == inf);
  CHECK(PortableExp::Log(0x1.0p-149f) == Approx(-103.27892990343185));
  CHECK(PortableExp::Log(1.0) == 0.0);
  CHECK(PortableExp::Log(0x1.0p-1074) == Approx(-744.4400719213812));
}

TEST_CASE("carriers run with the portable and fast policies", "[fast][math]") {
  std::vector<float> x = {1.0f, 2.0f, -3.0f, 0.5f};
  using P = carrier::OnlineSoftmax<float, PortableExp>;
  using F = carrier::OnlineSoftmax<float, carrier::FastExp>;
  const double want = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(-3.0) + std::exp(0.5));
  const float p = P::Finalize(carrier::Fold<P>(x.data(), x.size())).lse;
  const float f = F::Finalize(carrier::Fold<F>(x.data(), x.size())).lse;
  std::cout << "lse: portable " << p << ", fast " << f << ", exact " << want << "\n";
  CHECK(p == Approx(want).epsilon(1e-6));
  CHECK(f == Approx(want).epsilon(1e-6));
}
