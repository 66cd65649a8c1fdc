// Generator carrier-gen/2 (experiments/inputs/generators.hpp, portable_math.hpp): the project's
// own log, cos(2 pi u) and exp meet their documented ulp bounds against long double; the
// vectorised block path in generators.cpp gives the same bits as the scalar functions compiled
// here (other flags, no vector loop), near every reduction boundary too; Generate's normal,
// offset and lognormal values are those functions of (seed, i) whatever n and thread count; the
// uniform streams are carrier-gen/1's; the normal stream is N(0,1) by its moments, tails and a
// Kolmogorov-Smirnov distance at a fixed seed; and its bits are pinned by a checksum.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/hash.hpp"
#include "inputs/draw_targets.hpp"
#include "inputs/generators.hpp"
#include "inputs/portable_math.hpp"
#include "precision/parallel_pass.hpp"

namespace {

namespace inputs = carrier::inputs;

std::uint64_t Bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// |got - want| in units of the last place of want rounded to double.
double UlpError(double got, long double want) {
  const double w = static_cast<double>(want);
  if (w == 0) return got == 0 ? 0 : INFINITY;
  const long double ulp = std::ldexp(1.0L, std::ilogb(w) - 52);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - want) / ulp);
}

// cos(2 pi u) in long double with the same exact reduction as PortableCos2Pi (u minus its
// nearest integer, reflections at 1/4 and 1/2 are exact in double), so only cosl/sinl err.
long double Cos2PiReference(double u) {
  const long double two_pi = 6.283185307179586476925286766559005768L;
  const double a = std::fabs(u - std::nearbyint(u));
  if (a <= 0.125) return std::cos(two_pi * a);
  if (a <= 0.375) return std::sin(two_pi * (0.25 - a));
  return -std::cos(two_pi * (0.5 - a));
}

// A deterministic spread of test points: uniforms of stream `seed`.
double U(std::uint64_t seed, std::uint64_t i) { return inputs::UniformAt(seed, i); }

}  // namespace

TEST_CASE("carrier-gen/2: own log, cos(2 pi u), exp within their ulp bounds (long double)",
          "[fast]") {
  // PortableLog: positive normal doubles over every binade, plus 1 +- a few ulp and the
  // Box-Muller grid k 2^-53.
  double worst_log = 0, worst_log_at = 0;
  auto check_log = [&](double x) {
    const double e = UlpError(inputs::PortableLog(x), std::log(static_cast<long double>(x)));
    if (e > worst_log) worst_log = e, worst_log_at = x;
  };
  for (std::uint64_t i = 0; i < 200000; ++i)
    check_log(std::ldexp(1.0 + U(1, i), static_cast<int>(U(2, i) * 2044) - 1022));
  for (int k = 1; k <= 4096; ++k) {
    check_log(1.0 + k * 0x1.0p-52);
    check_log(1.0 - k * 0x1.0p-53);
    check_log(k * 0x1.0p-53);
    check_log(1.0 - std::ldexp(1.0, -(k % 53) - 1));
  }
  check_log(0x1.6a09e667f3bcdp-1);  // sqrt(2)/2 and sqrt(2): the reduction's edges
  check_log(0x1.6a09e667f3bcdp+0);
  // PortableCos2Pi: the generator's uniforms and every boundary of the reduction +- k ulp.
  double worst_cos = 0, worst_cos_at = 0;
  auto check_cos = [&](double u) {
    const long double want = Cos2PiReference(u);
    const double got = inputs::PortableCos2Pi(u);
    const double e = want == 0 ? (got == 0 ? 0 : INFINITY) : UlpError(got, want);
    if (e > worst_cos) worst_cos = e, worst_cos_at = u;
  };
  for (std::uint64_t i = 0; i < 200000; ++i) check_cos(U(3, i));
  for (double edge : {0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0})
    for (int k = -2048; k <= 2048; ++k) {
      const double u = edge + k * 0x1.0p-53;
      if (u >= 0 && u <= 1) check_cos(u);
    }
  for (int k = 1; k <= 60; ++k) check_cos(std::ldexp(1.0, -k));  // tiny u: cos near 1
  CHECK(inputs::PortableCos2Pi(0.25) == 0.0);                    // the zeros are exact
  CHECK(inputs::PortableCos2Pi(0.75) == 0.0);
  CHECK(inputs::PortableCos2Pi(0.0) == 1.0);
  CHECK(inputs::PortableCos2Pi(0.5) == -1.0);
  // PortableExp: the whole documented range and the lognormal range |x| < 9 densely.
  double worst_exp = 0, worst_exp_at = 0;
  auto check_exp = [&](double x) {
    const double e = UlpError(inputs::PortableExp(x), std::exp(static_cast<long double>(x)));
    if (e > worst_exp) worst_exp = e, worst_exp_at = x;
  };
  for (std::uint64_t i = 0; i < 100000; ++i) {
    check_exp(1416 * U(4, i) - 708);
    check_exp(18 * U(5, i) - 9);
  }
  for (int k = -64; k <= 64; ++k) check_exp(k * 0x1.0p-6), check_exp(k * 0.34657359027997264);
  std::cout << "carrier-gen/2 math, worst error against long double: log " << worst_log
            << " ulp at " << worst_log_at << ", cos(2 pi u) " << worst_cos
            << " ulp at u = " << worst_cos_at << ", exp " << worst_exp << " ulp at " << worst_exp_at
            << "\n";
  // The bounds documented in portable_math.hpp.
  CHECK(worst_log <= 1.0);
  CHECK(worst_cos <= 2.0);
  CHECK(worst_exp <= 1.0);
}

TEST_CASE("carrier-gen/2: the vectorised block gives the scalar function's bits", "[fast]") {
  // Edge uniforms: u1 at and near 0 (raised to 2^-53) and near 1; u2 at every reduction
  // boundary (1/8 .. 7/8) +- a few ulp, 0 and 1 - 2^-53; then many of the stream's own.
  std::vector<double> u1s, u2s;
  for (int k = 0; k <= 40; ++k) u1s.push_back(k * 0x1.0p-53);
  for (int k = 1; k <= 40; ++k) u1s.push_back(1.0 - k * 0x1.0p-53);
  for (double edge : {0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0})
    for (int k = -5; k <= 5; ++k) {
      const double u = edge + k * 0x1.0p-53;
      if (u >= 0 && u < 1) u2s.push_back(u);
    }
  std::vector<double> u1, u2;
  for (double a : u1s)
    for (double b : u2s) u1.push_back(a), u2.push_back(b);
  for (std::uint64_t i = 0; i < 100003; ++i)
    u1.push_back(U(6, 2 * i)), u2.push_back(U(6, 2 * i + 1));
  std::vector<double> block(u1.size());
  for (const std::string& target : inputs::DrawTargets()) {
    std::fill(block.begin(), block.end(), std::nan(""));
    inputs::BoxMullerBlockFor(target, u1.data(), u2.data(), u1.size(), block.data());
    std::size_t differ = 0;
    for (std::size_t j = 0; j < u1.size(); ++j) {
      const double scalar = inputs::BoxMuller(u1[j], u2[j]);
      if (Bits(scalar) != Bits(block[j])) {
        if (++differ <= 5)
          std::cout << "  " << target << " differs: u1 = " << u1[j] << " u2 = " << u2[j]
                    << ": block " << block[j] << ", scalar " << scalar << "\n";
      }
    }
    std::cout << "carrier-gen/2 block (" << target << ") vs scalar: " << u1.size() << " pairs, "
              << differ << " differ\n";
    INFO("draw target " << target);
    CHECK(differ == 0);
  }
  CHECK_THROWS_AS(inputs::BoxMullerBlockFor("no-such-isa", u1.data(), u2.data(), 1, block.data()),
                  std::invalid_argument);

  // Generate: value i is a function of (seed, i) alone, the scalar formula, for every n and
  // pass thread count (block and part boundaries fall elsewhere; 2^21 + 3 splits in parts).
  const std::uint64_t seed = 2026;
  const int threads = carrier::PassThreads();
  for (int t : {1, 3}) {
    carrier::SetPassThreads(t);
    for (std::uint64_t n : {1ULL, 255ULL, 256ULL, 257ULL, 1000ULL, 70001ULL, (1ULL << 21) + 3}) {
      const auto normal = inputs::Generate(inputs::ParseGenerator("normal"), n, seed);
      const auto offset = inputs::Generate(inputs::ParseGenerator("offset:1e4"), n, seed);
      const auto lognormal = inputs::Generate(inputs::ParseGenerator("lognormal"), n, seed);
      const auto uniform = inputs::Generate(inputs::ParseGenerator("uniform01"), n, seed);
      std::size_t bad = 0;
      const std::uint64_t ms = carrier::SplitMix64(seed);
      for (std::uint64_t i = 0; i < n; ++i) {
        const double z = inputs::BoxMuller(U(seed, 2 * i), U(seed, 2 * i + 1));
        // carrier-gen/1's uniform formula, unchanged.
        const double u = static_cast<double>(carrier::SplitMix64(ms ^ i) >> 11) * 0x1.0p-53;
        bad += Bits(normal[i]) != Bits(z);
        bad += Bits(offset[i]) != Bits(1e4 + z);
        bad += Bits(lognormal[i]) != Bits(inputs::PortableExp(z));
        bad += Bits(uniform[i]) != Bits(u);
      }
      // DrawPieces hands every value over once, at its index, in pieces of at most
      // kDrawPiece that its callback may change in place (here: negated, then kept).
      std::vector<double> drawn(n, 0.0);
      std::vector<int> times(n, 0);
      std::mutex piece_mutex;
      std::size_t largest_piece = 0;
      inputs::DrawPieces(inputs::ParseGenerator("lognormal"), n, seed,
                         [&](std::uint64_t lo, std::span<double> piece) {
                           for (double& v : piece) v = -v;
                           const std::lock_guard<std::mutex> lock(piece_mutex);
                           largest_piece = std::max(largest_piece, piece.size());
                           for (std::size_t j = 0; j < piece.size(); ++j) {
                             drawn[lo + j] = piece[j];
                             ++times[lo + j];
                           }
                         });
      for (std::uint64_t i = 0; i < n; ++i)
        bad += times[i] != 1 || Bits(drawn[i]) != Bits(-lognormal[i]);
      INFO("seed " << seed << ", n " << n << ", pass threads " << t << ", largest piece "
                   << largest_piece);
      CHECK(bad == 0);
      CHECK(largest_piece <= inputs::kDrawPiece);
    }
  }
  carrier::SetPassThreads(threads);
}

TEST_CASE("carrier-gen/2: normal is N(0,1) (moments, tails, KS) and its bits are pinned",
          "[fast]") {
  const std::uint64_t n = std::uint64_t{1} << 20, seed = 20260101;
  std::vector<double> z = inputs::Generate(inputs::ParseGenerator("normal"), n, seed);
  long double sum = 0, sum2 = 0;
  std::uint64_t beyond2 = 0, beyond3 = 0, checksum = 0;
  double largest = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    sum += z[i];
    sum2 += static_cast<long double>(z[i]) * z[i];
    beyond2 += std::fabs(z[i]) > 2;
    beyond3 += std::fabs(z[i]) > 3;
    largest = std::max(largest, std::fabs(z[i]));
    if (i < 4096) checksum = carrier::SplitMix64(checksum ^ Bits(z[i]));
  }
  const double nd = static_cast<double>(n);
  const double mean = static_cast<double>(sum / nd);
  const double var = static_cast<double>(sum2 / nd) - mean * mean;
  const double p2 = static_cast<double>(beyond2) / nd, p3 = static_cast<double>(beyond3) / nd;
  std::sort(z.begin(), z.end());
  double ks = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const double cdf = 0.5 * std::erfc(-z[i] / std::sqrt(2.0));
    ks = std::max({ks, std::fabs(cdf - static_cast<double>(i) / nd),
                   std::fabs(static_cast<double>(i + 1) / nd - cdf)});
  }
  std::cout << "carrier-gen/2 normal, seed " << seed << ", n 2^20: mean " << mean << ", variance "
            << var << ", P(|z|>2) " << p2 << " (0.0455), P(|z|>3) " << p3 << " (0.0027), max |z| "
            << largest << ", KS distance " << ks << ", checksum of the first 4096 0x" << std::hex
            << checksum << std::dec << "\n";
  // Tolerances: 5 standard errors of each statistic at n = 2^20; the KS bound is the 0.1%
  // critical value 1.95 / sqrt(n).
  const double se = 1 / std::sqrt(nd);
  CHECK(std::fabs(mean) <= 5 * se);
  CHECK(std::fabs(var - 1) <= 5 * std::sqrt(2.0) * se);
  CHECK(std::fabs(p2 - 0.0455003) <= 5 * std::sqrt(0.0455 * 0.9545) * se);
  CHECK(std::fabs(p3 - 0.0026998) <= 5 * std::sqrt(0.0027 * 0.9973) * se);
  CHECK(ks <= 1.95 * se);
  // Box-Muller with u1 >= 2^-53 cannot exceed sqrt(-2 ln 2^-53) = 8.57.
  CHECK(largest <= 8.58);
  // The stream's bits, pinned: a machine, compiler or libm that changes them fails here. A
  // deliberate change of the generator must bump kGeneratorVersion and this constant.
  CHECK(std::string(inputs::kGeneratorVersion) == "carrier-gen/2");
  CHECK(checksum == 0xb1a254feb713d128ULL);
}
