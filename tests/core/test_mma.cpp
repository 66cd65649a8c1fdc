// The matrix-unit fused node (core/mma.hpp) pinned three ways: the published test vectors of
// Fasi, Higham, Mikaitis and Pranesh (PeerJ CS 7:e330, 2021; their suite's
// tc_test_numerics-V100.cu, sections C and D) reproduced exactly for Volta, with the Hopper
// counterparts the F = 25 model predicts; random fused steps against an independent
// big-integer implementation of the same rule (Boost cpp_int: every value an exact integer
// multiple of 2^-400, cuts by integer division, no floating point); and the special values.
#include <boost/multiprecision/cpp_int.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "core/carriers/dot.hpp"
#include "core/mma.hpp"
#include "support/test_support.hpp"

using namespace carrier;
using carrier::test::Exact;
using carrier::test::Rng;
using BigInt = boost::multiprecision::cpp_int;

namespace {

using P = ValuePair<double>;

const MmaProfile& Profile(const char* name) {
  const MmaProfile* p = FindMmaProfile(name);
  REQUIRE(p != nullptr);
  return *p;
}

// One fused step of profile `name` over c and a.b (a.size() <= node terms).
double Step(const char* name, double c, const std::vector<double>& a,
            const std::vector<double>& b) {
  std::vector<P> p;
  for (std::size_t i = 0; i < a.size(); ++i) p.push_back({a[i], b[i]});
  return MmaFusedStep(Profile(name).node, c, p.data(), p.size());
}

const std::vector<double> kOnes4 = {1, 1, 1, 1};

}  // namespace

TEST_CASE("Fasi et al. V100 vectors reproduce exactly under mma:volta", "[fast][mma]") {
  // C: round-down (toward zero) for positive values. IEEE fp32 would give 2 + 2^-22.
  const double tiny = std::ldexp(1.0, -23) + std::ldexp(1.0, -24);
  const double rz = Step("volta", 0, kOnes4, {2, tiny, 0, 0});
  float ieee = 0.0f;
  for (double v : {2.0, tiny, 0.0, 0.0}) ieee += static_cast<float>(v);
  std::cout << "volta [1^4].[2, 2^-23+2^-24, 0, 0] + 0 = " << Exact(rz) << " (IEEE fp32 chain "
            << Exact(ieee) << ")\n";
  CHECK(rz == 2.0);
  CHECK(static_cast<double>(ieee) == 2.0 + std::ldexp(1.0, -22));
  CHECK(Step("volta", 0, kOnes4, {-2, -tiny, 0, 0}) == -2.0);  // round-up for negatives

  // D4: two carry-out bits; RZ in normalisation.
  CHECK(Step("volta", 1.875, kOnes4, {1, 1.5, 1.75, 1.875}) == 8.0);
  const double c3 = 1 + std::ldexp(1.0, -22) + std::ldexp(1.0, -23);
  CHECK(Step("volta", c3, kOnes4, {1, 1, 1, 1}) == 5.0);
  CHECK(Step("volta", -c3, kOnes4, {-1, -1, -1, -1}) == -5.0);
  for (int i = 0; i < 4; ++i) {
    std::vector<double> b = {1, 1, 1, 1};
    b[i] = std::ldexp(1.0, -23);  // an fp16 subnormal
    CHECK(Step("volta", c3, kOnes4, b) == 4 + std::ldexp(1.0, -21));
  }

  // D5: not monotonic. c = 1 - 2^-24 gives 1 + 2^-23, the larger c = 1 gives 1.
  const std::vector<double> b24(4, std::ldexp(1.0, -24));
  const double below = Step("volta", 1 - std::ldexp(1.0, -24), kOnes4, b24);
  const double at_one = Step("volta", 1, kOnes4, b24);
  std::cout << "volta c = 1-2^-24: " << Exact(below) << ", c = 1: " << Exact(at_one) << "\n";
  CHECK(below == 1 + std::ldexp(1.0, -23));
  CHECK(at_one == 1.0);

  // D1: no guard bits in the alignment; D3: normalisation after cancellation; B: exact
  // products, accumulation from the largest term.
  CHECK(Step("volta", -(1 - std::ldexp(1.0, -24)), {1}, {1}) == std::ldexp(1.0, -23));
  CHECK(Step("volta", -1 + std::ldexp(1.0, -24), {1, 1}, {1, -std::ldexp(1.0, -24)}) ==
        std::ldexp(1.0, -23));
  const double b1 = 1 - std::ldexp(1.0, -11);  // largest fp16 below one
  CHECK(Step("volta", 0, {b1}, {b1}) == 1 - std::ldexp(1.0, -10) + std::ldexp(1.0, -22));
  CHECK(Step("volta", 0, {b1, b1, b1, b1}, {b1, b1, b1, b1}) ==
        4 * (1 - std::ldexp(1.0, -10) + std::ldexp(1.0, -22)));
  for (int j = 0; j < 4; ++j) {
    std::vector<double> b = b24;
    b[j] = 1;
    CHECK(Step("volta", std::ldexp(1.0, -24), kOnes4, b) == 1.0);
  }
  // C (binary16 mode): the fp16-output instruction rounds to nearest: 2^-25 + 2^-26 -> 2^-24.
  CHECK(Step("volta-f16", 0, {std::ldexp(1.0, -24), std::ldexp(1.0, -24)}, {0.5, 0.25}) ==
        std::ldexp(1.0, -24));
}

TEST_CASE("Hopper's F = 25 makes the same pair monotone", "[fast][mma]") {
  const std::vector<double> b24(16, 0.0);
  std::vector<double> b = b24, a(16, 0.0);
  for (int i = 0; i < 4; ++i) a[i] = 1, b[i] = std::ldexp(1.0, -24);
  const double below = Step("hopper", 1 - std::ldexp(1.0, -24), a, b);
  const double at_one = Step("hopper", 1, a, b);
  std::cout << "hopper c = 1-2^-24: " << Exact(below) << ", c = 1: " << Exact(at_one) << "\n";
  CHECK(below == 1 + std::ldexp(1.0, -23));
  CHECK(at_one == 1 + std::ldexp(1.0, -22));
  CHECK(at_one >= below);
  // With two guard bits the V100 round-down case keeps its tail until the final RZ.
  const double tiny = std::ldexp(1.0, -23) + std::ldexp(1.0, -24);
  CHECK(Step("hopper", 0, {1, 1}, {2, tiny}) == 2.0);  // 2 + 0.75 ulp, RZ -> 2
  CHECK(Step("hopper", 0, {1, 1, 1}, {2, tiny, tiny}) == 2.0 + std::ldexp(1.0, -22));
}

TEST_CASE("Fused step special values", "[fast][mma]") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(std::isnan(Step("volta", 0, {nan, 1}, {1, 1})));
  CHECK(std::isnan(Step("volta", 0, {inf, 1}, {0, 1})));
  CHECK(std::isnan(Step("volta", 0, {inf, 1}, {1, -inf})));
  CHECK(Step("volta", 0, {inf, 1}, {1, 1}) == inf);
  CHECK(Step("volta", -inf, {1}, {1}) == -inf);
  const double z = Step("volta", -0.0, {-0.0, 1}, {1, -0.0});
  CHECK(z == 0);
  CHECK(!std::signbit(z));  // an exact-zero sum is +0
  CHECK(!std::signbit(Step("volta", 1, {1}, {-1})));
  // Overflow of the RZ output: (2^15)^2 * 4 terms... fp16 cannot reach it; bf16 can.
  CHECK(Step("hopper-bf16", 0x1.fep127, {0x1p127f, 0x1p127f}, {2, 2}) == inf);
  // An input outside the instruction's format is refused.
  CHECK_THROWS_AS(Step("volta", 0, {0.1}, {1}), MmaInputError);
  CHECK_THROWS_AS(Step("hopper-fp8", 0, {1.0625}, {1}), MmaInputError);  // not e4m3
  CHECK_THROWS_AS(Step("hopper-fp8", 0, {480}, {1}), MmaInputError);     // above 448
  CHECK_NOTHROW(Step("hopper-fp8", 0, {448, std::ldexp(1.0, -9)}, {1, 1}));
}

// ---------------------------------------------------------------------------------------------
// The oracle: the same rule in big integers. Every value is X * 2^-kShift with X a BigInt.

namespace {

constexpr int kShift = 400;

BigInt Scaled(double v) {
  if (v == 0) return 0;
  int e = 0;
  const double frac = std::frexp(std::fabs(v), &e);  // |v| = frac 2^e, frac in [0.5, 1)
  BigInt m = static_cast<long long>(std::ldexp(frac, 53));
  const int sh = e - 53 + kShift;
  REQUIRE(sh >= 0);
  m <<= sh;
  return v < 0 ? BigInt(-m) : m;
}

int Msb(const BigInt& x) { return static_cast<int>(boost::multiprecision::msb(abs(x))); }

// floor(log2 |v|) by ilogb, clamped below at emin.
int OracleExponent(double v, int emin) { return std::max(static_cast<int>(std::ilogb(v)), emin); }

// x / 2^sh toward zero or toward -inf.
BigInt Shift(const BigInt& x, int sh, bool floor) {
  if (sh <= 0) return x << -sh;
  const BigInt d = BigInt(1) << sh;
  BigInt q = x / d;  // cpp_int divides toward zero
  if (floor && x < 0 && q * d != x) q -= 1;
  return q;
}

double ToDouble(const BigInt& x, int exp2) {  // x * 2^exp2, x small enough to be exact
  return std::ldexp(static_cast<double>(x.convert_to<long double>()), exp2);
}

// Round X * 2^-kShift to `frac` fractional bits, exponent range from emin, by RZ or RNE. A
// result that rounds to zero is +0, except for fp32 RNE (CDNA3), whose hardware conversion
// keeps the sign (MMA-Sim converts the exact double with torch; a truncation to an integer
// has no sign).
double Round(const BigInt& x, int frac, int emin, bool nearest, double max_finite,
             bool signed_zero = false) {
  if (x == 0) return 0.0;
  const int e = std::max(Msb(x) - kShift, emin);
  const int q = e - frac;  // quantum exponent
  const int sh = q + kShift;
  BigInt a = abs(x);
  BigInt r = a >> sh;
  if (nearest) {
    const BigInt rem = a - (r << sh);
    const BigInt half = BigInt(1) << (sh - 1);
    if (rem > half || (rem == half && (r & 1) != 0)) r += 1;
  }
  if (r == 0) return signed_zero && x < 0 ? -0.0 : 0.0;
  double out = ToDouble(r, q);
  if (out > max_finite) out = std::numeric_limits<double>::infinity();
  return x < 0 ? -out : out;
}

struct FormatBits {
  int ebits, mbits, bias;
  bool ieee_specials;        // exponent all ones reserved (fp16, bf16, tf32); e4m3: only S.1111.111
  bool no_specials = false;  // e2m1: every code is a number
};

FormatBits BitsOf(MmaInput f) {
  switch (f) {
    case MmaInput::kFp16:
      return {5, 10, 15, true};
    case MmaInput::kBf16:
      return {8, 7, 127, true};
    case MmaInput::kTf32:
      return {8, 10, 127, true};
    case MmaInput::kFp8E4m3:
      return {4, 3, 7, false};
    case MmaInput::kFp8E5m2:
      return {5, 2, 15, true};
    case MmaInput::kFp4E2m1:
      return {2, 1, 1, false, true};
  }
  return {5, 10, 15, true};
}

// A random finite value of the format, exponent field drawn in [elo, ehi] (0 = subnormal).
double RandomValue(Rng& rng, const FormatBits& f, int elo, int ehi) {
  while (true) {
    const int ef = elo + static_cast<int>(rng.Below(static_cast<std::uint64_t>(ehi - elo + 1)));
    const std::uint64_t m = rng.Below(std::uint64_t{1} << f.mbits);
    const int emax_field = (1 << f.ebits) - 1;
    if (f.ieee_specials && ef == emax_field) continue;
    if (!f.ieee_specials && !f.no_specials && ef == emax_field &&
        m == (std::uint64_t{1} << f.mbits) - 1)
      continue;
    double v = ef == 0 ? std::ldexp(static_cast<double>(m), 1 - f.bias - f.mbits)
                       : std::ldexp(static_cast<double>(m + (std::uint64_t{1} << f.mbits)),
                                    ef - f.bias - f.mbits);
    if (rng.Below(2)) v = -v;
    if (rng.Below(16) == 0) v = 0;
    return v;
  }
}

double OracleRound(MmaOutput output, const BigInt& exact);
double OracleGroupStep(const MmaNode& node, double c, const std::vector<P>& p,
                       const std::vector<double>& sa, const std::vector<double>& sb,
                       std::size_t block, bool e8m0);

// The rule of core/mma.hpp's contract, written again from it.
double OracleStep(const MmaNode& node, double c, const std::vector<P>& p) {
  if (node.group > 0) {  // unit scales
    const std::vector<double> ones((p.size() + node.group - 1) / node.group + 1, 1.0);
    return OracleGroupStep(node, c, p, ones, ones, node.group, true);
  }
  const FormatBits fb = BitsOf(node.input);
  const int emin_in = 1 - fb.bias;
  const int emin_c = node.output == MmaOutput::kFp16Rne ? -14 : -126;
  std::vector<BigInt> terms;
  std::vector<int> exps;
  for (const P& pr : p) {
    if (pr.a == 0 || pr.b == 0) continue;
    terms.push_back(Scaled(pr.a) * Scaled(pr.b) >> kShift);  // exact: both are multiples
    exps.push_back(OracleExponent(pr.a, emin_in) + OracleExponent(pr.b, emin_in));
  }
  const bool has_c = c != 0;
  const int ec = has_c ? OracleExponent(c, emin_c) : 0;
  BigInt sum = 0;
  int q = 0;  // sum * 2^q is the exact cut sum
  if (!node.two_stage) {
    if (terms.empty() && !has_c) return 0.0;
    int emax = has_c ? ec : exps[0];
    for (int e : exps) emax = std::max(emax, e);
    q = emax - node.frac_bits;
    const bool floor = node.align == MmaAlign::kFloor;
    if (has_c) sum += Shift(Scaled(c), q + kShift, floor);
    for (const BigInt& t : terms) sum += Shift(t, q + kShift, floor);
  } else {
    BigInt partial = 0;
    int ep = std::numeric_limits<int>::min();
    for (int e : exps) ep = std::max(ep, e);
    if (!terms.empty())
      for (const BigInt& t : terms) partial += Shift(t, ep - node.frac_bits + kShift, false);
    if (terms.empty() && !has_c) return 0.0;
    const int emax = terms.empty() ? ec : has_c ? std::max(ep, ec) : ep;
    q = emax - 31;
    // partial * 2^(ep - F) floored to multiples of 2^q; c floored to multiples of 2^(emax-24).
    if (!terms.empty()) sum += Shift(partial, q - (ep - node.frac_bits), true);
    if (has_c) sum += Shift(Scaled(c), emax - 24 + kShift, true) << 7;
  }
  const BigInt exact = q + kShift >= 0 ? BigInt(sum << (q + kShift)) : BigInt(0);
  REQUIRE(q + kShift >= 0);
  return OracleRound(node.output, exact);
}

double OracleRound(MmaOutput output, const BigInt& exact) {
  switch (output) {
    case MmaOutput::kFp32Rz:
      return Round(exact, 23, -126, false, 0x1.fffffep127);
    case MmaOutput::kE8m13Rz:
      return Round(exact, 13, -126, false, 0x1.fffffep127);
    case MmaOutput::kFp16Rne:
      return Round(exact, 10, -14, true, 65504.0);
    case MmaOutput::kFp32Rne:
      return Round(exact, 23, -126, true, 0x1.fffffep127, true);
  }
  return NAN;
}

// A scale's exponent and significand as the contract states them: E8M0 2^e is (1, e); a
// UE4M3 value |s| has exponent max(floor(log2 |s|), -6); zero has exponent -126.
int OracleScaleExponent(double s, bool e8m0) {
  if (s == 0) return -126;
  return e8m0 ? static_cast<int>(std::ilogb(s)) : OracleExponent(std::fabs(s), -6);
}

// Group nodes (mxf4, nvf4): exact group sums of `node.group` products, times the scale
// pair's significands, at the scale pair's exponent; c at its exponent (zero: -126); all cut
// toward zero at F below the largest exponent, added, rounded.
double OracleGroupStep(const MmaNode& node, double c, const std::vector<P>& p,
                       const std::vector<double>& sa, const std::vector<double>& sb,
                       std::size_t block, bool e8m0) {
  if (!std::isfinite(c)) return c;  // an earlier step overflowed: finite products keep it
  std::vector<BigInt> value;        // term value * 2^kShift
  std::vector<int> exps;
  for (std::size_t j = 0; j < p.size(); j += node.group) {
    BigInt sum = 0;
    for (std::size_t i = j; i < std::min(p.size(), j + node.group); ++i)
      sum += Scaled(p[i].a) * Scaled(p[i].b) >> kShift;
    const double x = std::fabs(sa[j / block]), y = std::fabs(sb[j / block]);
    value.push_back(sum * Scaled(x) * Scaled(y) >> (2 * kShift));
    exps.push_back(OracleScaleExponent(x, e8m0) + OracleScaleExponent(y, e8m0));
  }
  int emax = c != 0 ? OracleExponent(c, -126) : -126;
  for (int e : exps) emax = std::max(emax, e);
  const int q = emax - node.frac_bits;
  BigInt sum = c != 0 ? Shift(Scaled(c), q + kShift, false) : BigInt(0);
  for (const BigInt& v : value) sum += Shift(v, q + kShift, false);
  REQUIRE(q + kShift >= 0);
  return OracleRound(node.output, BigInt(sum << (q + kShift)));
}

// mxf8: one scale pair per instruction; every product's exponent raised by the pair's
// exponents; c at its exponent (zero: -126); zero products have none.
double OracleMxf8Step(const MmaNode& node, double c, const std::vector<P>& p, double sa,
                      double sb) {
  if (!std::isfinite(c)) return c;  // an earlier step overflowed: finite products keep it
  const FormatBits fb = BitsOf(node.input);
  const int es = static_cast<int>(std::ilogb(sa)) + static_cast<int>(std::ilogb(sb));
  int emax = c != 0 ? OracleExponent(c, -126) : -126;
  std::vector<BigInt> terms;
  for (const P& pr : p) {
    if (pr.a == 0 || pr.b == 0) continue;
    BigInt t = Scaled(pr.a) * Scaled(pr.b) >> kShift;
    t = es >= 0 ? BigInt(t << es) : BigInt(t >> -es);  // exact: kShift leaves room
    terms.push_back(t);
    emax =
        std::max(emax, OracleExponent(pr.a, 1 - fb.bias) + OracleExponent(pr.b, 1 - fb.bias) + es);
  }
  const int q = emax - node.frac_bits;
  BigInt sum = c != 0 ? Shift(Scaled(c), q + kShift, false) : BigInt(0);
  for (const BigInt& t : terms) sum += Shift(t, q + kShift, false);
  REQUIRE(q + kShift >= 0);
  return OracleRound(node.output, BigInt(sum << (q + kShift)));
}

// A random accumulator value of the node's output format, near 2^e.
double RandomAccumulator(Rng& rng, const MmaNode& node, int e) {
  const int bits = node.output == MmaOutput::kE8m13Rz   ? 14
                   : node.output == MmaOutput::kFp16Rne ? 11
                                                        : 24;
  const double m = static_cast<double>(rng.Below(std::uint64_t{1} << bits) | 1);
  double c = std::ldexp(m, e - bits + 1);
  if (node.output == MmaOutput::kFp16Rne)
    c = std::ldexp(std::round(std::ldexp(c, 24)), -24);
  else
    c = static_cast<double>(static_cast<float>(c));
  if (node.output == MmaOutput::kFp16Rne && std::fabs(c) > 65504) c = 0;
  if (node.output == MmaOutput::kE8m13Rz) c = mma_detail::RoundTowardZero(c, 13);
  return rng.Below(2) ? -c : c;
}

}  // namespace

TEST_CASE("Fused steps equal an independent big-integer model", "[fast][mma]") {
  Rng rng(20251114);
  int checked = 0;
  for (const MmaProfile& prof : kMmaProfiles) {
    const MmaNode& node = prof.node;
    const FormatBits fb = BitsOf(node.input);
    const int emax_field = (1 << fb.ebits) - 1;
    for (int trial = 0; trial < test::Trials(1500); ++trial) {
      // Narrow exponent windows give overlapping terms (carries, cancellation, cuts); wide ones
      // give alignment shifts past F; some windows include subnormals.
      const int width =
          1 + static_cast<int>(rng.Below(trial % 3 == 0 ? emax_field : std::min(6, emax_field)));
      const int lo =
          static_cast<int>(rng.Below(static_cast<std::uint64_t>(emax_field - width + 1)));
      const std::size_t m = 1 + rng.Below(node.terms);
      std::vector<P> p(m);
      for (P& pr : p)
        pr = {RandomValue(rng, fb, lo, lo + width - 1), RandomValue(rng, fb, lo, lo + width - 1)};
      double c = 0;
      if (rng.Below(4) != 0) {
        const int ep = 2 * (lo + width / 2 - fb.bias) + static_cast<int>(rng.Below(9)) - 4;
        c = RandomAccumulator(rng, node, std::clamp(ep, -130, 127));
      }
      if (trial % 5 == 1 && !p.empty()) c = -mma_detail::RoundTowardZero(p[0].a * p[0].b, 13);
      if (!std::isfinite(c)) c = 0;  // a bf16 product beyond fp32's range
      const double want = OracleStep(node, c, p);
      // The generic path (double pairs) and the fast path (float pairs, the replay's case).
      std::vector<ValuePair<float>> pf;
      for (const P& pr : p) pf.push_back({static_cast<float>(pr.a), static_cast<float>(pr.b)});
      const double got_f = MmaFusedStep(node, c, pf.data(), pf.size());
      const double got_d = MmaFusedStep(node, c, p.data(), p.size());
      const double got = std::signbit(got_f) == std::signbit(got_d) && got_f == got_d ? got_d : NAN;
      if (!(got == want && std::signbit(got) == std::signbit(want))) {
        std::ostringstream os;
        os << "profile " << prof.name << " trial " << trial << " c " << Exact(c) << "\n";
        for (const P& pr : p) os << "  " << Exact(pr.a) << " * " << Exact(pr.b) << "\n";
        os << "got " << Exact(got) << " want " << Exact(want);
        FAIL(os.str());
      }
      ++checked;
    }
  }
  std::cout << "fused steps checked against the big-integer model: " << checked << " over "
            << kMmaProfiles.size() << " profiles\n";
}

TEST_CASE("Fused chains equal the big-integer model step by step", "[fast][mma]") {
  // Long chains of full and partial groups through MmaFusedChain's unrolled float path,
  // against OracleStep applied group by group.
  Rng rng(77);
  for (const MmaProfile& prof : kMmaProfiles) {
    const MmaNode& node = prof.node;
    const FormatBits fb = BitsOf(node.input);
    for (int trial = 0; trial < test::Trials(40); ++trial) {
      const std::size_t n = 1 + rng.Below(8 * node.terms);
      const int lo = 1 + static_cast<int>(rng.Below(static_cast<std::uint64_t>(fb.bias)));
      const int hi = std::min(lo + 3, (1 << fb.ebits) - 1);
      std::vector<ValuePair<float>> pf(n);
      for (auto& v : pf)
        v = {static_cast<float>(RandomValue(rng, fb, lo, hi)),
             static_cast<float>(RandomValue(rng, fb, lo, hi))};
      const double got = MmaFusedChain(node, 0.0, pf.data(), n);
      double want = 0;
      for (std::size_t j = 0; j < n; j += node.terms) {
        std::vector<P> group;
        for (std::size_t i = j; i < std::min(n, j + node.terms); ++i)
          group.push_back({pf[i].a, pf[i].b});
        want = OracleStep(node, want, group);
      }
      INFO("profile " << prof.name << " trial " << trial << " n " << n << " exponent field " << lo);
      CHECK(got == want);
    }
  }
}

TEST_CASE("Profiles are well formed", "[fast][mma]") {
  for (const MmaProfile& p : kMmaProfiles) {
    INFO("profile " << p.name);
    CHECK(p.k % p.split == 0);
    CHECK(p.node.terms == p.k / p.split);
    CHECK(p.node.terms <= kMmaMaxTerms);
    CHECK(!p.source.empty());
    CHECK(FindMmaProfile(p.name) == &p);
  }
  CHECK(Profile("volta").node.frac_bits == 23);
  CHECK(Profile("ampere").node.frac_bits == 24);
  CHECK(Profile("hopper").node.frac_bits == 25);
  CHECK(Profile("hopper-fp8").node.frac_bits == 13);
  CHECK(Profile("hopper-fp8").node.output == MmaOutput::kE8m13Rz);
  CHECK(Profile("cdna3").node.align == MmaAlign::kFloor);
}

// ---------------------------------------------------------------------------------------------
// Blackwell (MMA-Sim simulator/nv_ptx.py tcgen05mma and tcgen05mma_block_scale; arithmetic.py
// fused_dot_add and nv_fused_dot_add_with_block_scale): each case worked out by hand from the
// contract in core/mma.hpp.

namespace {

double Scaled1(const char* name, double c, const std::vector<double>& a,
               const std::vector<double>& b, const std::vector<double>& sa,
               const std::vector<double>& sb) {
  return MmaScaledStep(Profile(name), c, a, b, sa, sb);
}

// a and b of length 64 with the given (index, value) entries, zeros elsewhere.
std::vector<double> Sparse64(std::initializer_list<std::pair<int, double>> entries) {
  std::vector<double> v(64, 0.0);
  for (const auto& [i, x] : entries) v[static_cast<std::size_t>(i)] = x;
  return v;
}

}  // namespace

TEST_CASE("blackwell-f8f6f4 keeps 25 bits and an fp32 output where hopper-fp8 keeps 13",
          "[fast][mma]") {
  // 1 + 2^-14: the product 2^-6 * 2^-8 has exponent -6 + -6 = -12 (2^-8 is an e4m3 subnormal,
  // exponent clamped to -6) and value 2^-14. Hopper cuts it at 2^(0-13); Blackwell keeps it and
  // its fp32 output holds 1 + 2^-14 (e8m13 could not).
  const double bw = Step("blackwell-f8f6f4", 0, {1, 0x1p-6}, {1, 0x1p-8});
  const double hp = Step("hopper-fp8", 0, {1, 0x1p-6}, {1, 0x1p-8});
  std::cout << "[1, 2^-6].[1, 2^-8]: blackwell-f8f6f4 " << Exact(bw) << ", hopper-fp8 " << Exact(hp)
            << "\n";
  CHECK(bw == 1 + 0x1p-14);
  CHECK(hp == 1.0);
  // Exactly 25 bits: 32*32 - 32*32 + (3 * 2^-9) * 2^-7 = 3 * 2^-16 exactly, but e_max = 10 cuts
  // every term to a multiple of 2^(10-25) = 2^-15: 2^-15 (F = 26 would keep 3 * 2^-16, F = 24
  // would give 0).
  const double cut = Step("blackwell-f8f6f4", 0, {32, -32, 3 * 0x1p-9}, {32, 32, 0x1p-7});
  std::cout << "32*32 - 32*32 + 3*2^-16 through blackwell-f8f6f4: " << Exact(cut) << "\n";
  CHECK(cut == 0x1p-15);
  // The exponent clamp follows the element format: 2^-9 * 2^-9 has exponent -12 in e4m3 (two
  // subnormals) but -18 in e5m2, so c = 2^-18 + 2^-38 loses its 2^-38 (cut at 2^(-12-25)) in
  // the e4m3 node only.
  const double c = 0x1p-18 + 0x1p-38;
  CHECK(Step("blackwell-f8f6f4", c, {0x1p-9}, {0x1p-9}) == 0x1p-17);
  CHECK(Step("blackwell-f8f6f4-e5m2", c, {0x1p-9}, {0x1p-9}) == 0x1p-17 + 0x1p-38);
  // RZ output: 256 + 3 * 2^-16 is 1.5 fp32 ulps above 256 (RNE would give 256 + 2^-14).
  CHECK(Step("blackwell-f8f6f4", 0, {16, 3 * 0x1p-9}, {16, 0x1p-7}) == 256 + 0x1p-15);
  CHECK(Step("blackwell-f8f6f4", 0, {-16, -3 * 0x1p-9}, {16, 0x1p-7}) == -(256 + 0x1p-15));
  CHECK_THROWS_AS(Step("blackwell-f8f6f4", 0, {1.0625}, {1}), MmaInputError);
}

TEST_CASE("blackwell-mxf8: the E8M0 exponents enter the one fused sum", "[fast][mma]") {
  // (1 + 1) * 2^-3 * 2^5 = 8.
  CHECK(Scaled1("blackwell-mxf8", 0, {1, 1}, {1, 1}, {0x1p-3}, {0x1p5}) == 8.0);
  // 2^10 * 2^10 * (1 - 1) + c: the products' exponents are 20, so c = 1 + 2^-10 is cut to a
  // multiple of 2^(20-25): 1. With unit scales e_max = 0 and c stays whole.
  const double scaled = Scaled1("blackwell-mxf8", 1 + 0x1p-10, {1, -1}, {1, 1}, {0x1p10}, {0x1p10});
  const double unit = Scaled1("blackwell-mxf8", 1 + 0x1p-10, {1, -1}, {1, 1}, {1.0}, {1.0});
  std::cout << "blackwell-mxf8 c = 1 + 2^-10, products +-2^20: " << Exact(scaled)
            << "; with unit scales " << Exact(unit) << "\n";
  CHECK(scaled == 1.0);
  CHECK(unit == 1 + 0x1p-10);
  CHECK(unit == Step("blackwell-mxf8", 1 + 0x1p-10, {1, -1}, {1, 1}));  // the plain path
  // Overflow of the fp32 output, and the range of E8M0.
  CHECK(Scaled1("blackwell-mxf8", 0, {1}, {1}, {0x1p127}, {0x1p127}) ==
        std::numeric_limits<double>::infinity());
  CHECK(Scaled1("blackwell-mxf8", 0, {448}, {448}, {0x1p-127}, {0x1p127}) == 448.0 * 448.0);
  CHECK(std::isnan(Scaled1("blackwell-mxf8", 0, {1}, {1}, {NAN}, {1.0})));
  CHECK_THROWS_AS(Scaled1("blackwell-mxf8", 0, {1}, {1}, {3.0}, {1.0}), MmaInputError);
  CHECK_THROWS_AS(Scaled1("blackwell-mxf8", 0, {1}, {1}, {0x1p128}, {1.0}), MmaInputError);
  CHECK_THROWS_AS(Scaled1("blackwell-mxf8", 0, {1}, {1}, {0.0}, {1.0}), MmaInputError);
  CHECK_THROWS_AS(Scaled1("blackwell-mxf8", 0, {1}, {1}, {1.0, 1.0}, {1.0, 1.0}), MmaInputError);
}

TEST_CASE("blackwell-mxf4 and nvf4: exact groups of 16 times the scale pair, then 35 bits, RZ",
          "[fast][mma]") {
  const std::vector<double> ones(64, 1.0);
  // Scale application: every group sums to 16; nvf4 has one scale per 16, mxf4 per 32.
  CHECK(Scaled1("blackwell-nvf4", 0, ones, ones, {1, 2, 4, 8}, {1, 1, 1, 1}) == 16.0 * 15);
  CHECK(Scaled1("blackwell-mxf4", 0, ones, ones, {1, 2}, {1, 1}) == 16.0 * 6);
  // UE4M3 significands multiply the group sum; the sign bit is ignored.
  const auto one_pair = Sparse64({{0, 1.0}});
  CHECK(Scaled1("blackwell-nvf4", 0, one_pair, one_pair, {1.5, 1, 1, 1}, {1.25, 1, 1, 1}) == 1.875);
  CHECK(Scaled1("blackwell-nvf4", 0, one_pair, one_pair, {-1.5, 1, 1, 1}, {1.25, 1, 1, 1}) ==
        1.875);
  // 35 bits below the scale pair's exponent: groups 0 and 1 (scale 2^12 * 2^12) sum to
  // +0.25 and -0.25, so e_max = 24 (from the scales, not the group sums' own exponent 22) and
  // c = 1 + 2^-11 + 2^-12 is cut to a multiple of 2^(24-35): 1 + 2^-11. blackwell-mxf8, with
  // the same pair of products, aligns at the products' exponent 22 with 25 bits: 1.
  const auto a = Sparse64({{0, 0.5}, {16, 0.5}});
  const auto b = Sparse64({{0, 0.5}, {16, -0.5}});
  const double c = 1 + 0x1p-11 + 0x1p-12;
  const double f35 = Scaled1("blackwell-mxf4", c, a, b, {0x1p12, 1.0}, {0x1p12, 1.0});
  const double f25 = Scaled1("blackwell-mxf8", c, {0.5, 0.5}, {0.5, -0.5}, {0x1p12}, {0x1p12});
  std::cout << "c = 1 + 2^-11 + 2^-12 with +-0.25 at scale 2^24: blackwell-mxf4 " << Exact(f35)
            << ", blackwell-mxf8 " << Exact(f25) << "\n";
  CHECK(f35 == 1 + 0x1p-11);
  CHECK(f25 == 1.0);
  // A zero group still carries its scales' exponent: alone at 2^20 it cuts c = 1 + 2^-20 to a
  // multiple of 2^-15.
  CHECK(Scaled1("blackwell-mxf4", 1 + 0x1p-20, std::vector<double>(64, 0.0),
                std::vector<double>(64, 0.0), {0x1p10, 1.0}, {0x1p10, 1.0}) == 1.0);
  // RZ: 2^25 (group 0 at scale 2^25) + 3 (group 2 at scale 1) is 2^25 + 0.75 ulp: 2^25.
  const auto a2 = Sparse64({{0, 1.0}, {32, 3.0}});
  const auto b2 = Sparse64({{0, 1.0}, {32, 1.0}});
  CHECK(Scaled1("blackwell-mxf4", 0, a2, b2, {0x1p25, 1.0}, {1.0, 1.0}) == 0x1p25);
  CHECK(Scaled1("blackwell-mxf4", 0, a2, Sparse64({{0, -1.0}, {32, -1.0}}), {0x1p25, 1.0},
                {1.0, 1.0}) == -0x1p25);
  // Group sums are exact: two groups of 16 products 6 * 6, 576 each (a short instruction of
  // 32 elements takes two scales).
  CHECK(Scaled1("blackwell-nvf4", 0, std::vector<double>(32, 6.0), std::vector<double>(32, 6.0),
                {1, 1}, {1, 1}) == 1152.0);
  // Specials and refusals.
  CHECK(std::isnan(Scaled1("blackwell-nvf4", 0, ones, ones, {NAN, 1, 1, 1}, {1, 1, 1, 1})));
  CHECK(std::isnan(Scaled1("blackwell-mxf4", NAN, ones, ones, {1, 1}, {1, 1})));
  CHECK(Scaled1("blackwell-nvf4", 0, ones, ones, {0, 0, 0, 0}, {1, 1, 1, 1}) == 0.0);
  CHECK_THROWS_AS(Scaled1("blackwell-nvf4", 0, {2.5}, {1}, {1}, {1}), MmaInputError);  // not e2m1
  CHECK_THROWS_AS(Scaled1("blackwell-nvf4", 0, {1}, {1}, {1.0625}, {1}), MmaInputError);
  CHECK_THROWS_AS(Scaled1("blackwell-mxf4", 0, {1}, {1}, {1.5}, {1}), MmaInputError);
  CHECK_THROWS_AS(Scaled1("hopper-fp8", 0, {1}, {1}, {1}, {1}), MmaInputError);
  // Unit scales are the plain path mma:blackwell-nvf4 replays.
  CHECK(Scaled1("blackwell-nvf4", 0.75, a2, b2, {1, 1, 1, 1}, {1, 1, 1, 1}) ==
        MmaFusedChain(
            Profile("blackwell-nvf4").node, 0.75,
            [&] {
              std::vector<P> p;
              for (int i = 0; i < 64; ++i) p.push_back({a2[i], b2[i]});
              return p;
            }()
                .data(),
            64));
}

TEST_CASE("Block-scaled steps and chains equal the big-integer model", "[fast][mma]") {
  Rng rng(20261205);
  int checked = 0;
  for (const MmaProfile& prof : kMmaProfiles) {
    if (prof.scale == MmaScale::kNone) continue;
    const bool e8m0 = prof.scale == MmaScale::kE8m0;
    const FormatBits fb = BitsOf(prof.node.input);
    const int emax_field = (1 << fb.ebits) - 1;
    auto scale = [&] {
      if (e8m0) {
        const int e = rng.Below(8) == 0 ? static_cast<int>(rng.Below(255)) - 127
                                        : static_cast<int>(rng.Below(41)) - 20;
        return std::ldexp(1.0, e);
      }
      return std::fabs(RandomValue(rng, BitsOf(MmaInput::kFp8E4m3), 0, 15));
    };
    for (int trial = 0; trial < test::Trials(600); ++trial) {
      const std::size_t n = 1 + rng.Below(3 * prof.k);
      const int width = 1 + static_cast<int>(rng.Below(static_cast<std::uint64_t>(emax_field)));
      const int lo =
          static_cast<int>(rng.Below(static_cast<std::uint64_t>(emax_field - width + 1)));
      std::vector<double> a(n), b(n), sa, sb;
      for (std::size_t i = 0; i < n; ++i)
        a[i] = RandomValue(rng, fb, lo, lo + width - 1),
        b[i] = RandomValue(rng, fb, lo, lo + width - 1);
      for (std::size_t i = 0; i < (n + prof.scale_block - 1) / prof.scale_block; ++i)
        sa.push_back(scale()), sb.push_back(scale());
      const double c0 = rng.Below(3) == 0 ? 0.0
                                          : RandomAccumulator(rng, prof.node,
                                                              static_cast<int>(rng.Below(60)) - 30);
      // The chain, instruction by instruction through the oracle.
      double want = c0;
      for (std::size_t j = 0; j < n; j += prof.k) {
        std::vector<P> p;
        for (std::size_t i = j; i < std::min(n, j + prof.k); ++i) p.push_back({a[i], b[i]});
        const std::size_t s = j / prof.scale_block;
        want = prof.node.group > 0
                   ? OracleGroupStep(
                         prof.node, want, p, std::vector<double>(sa.begin() + s, sa.end()),
                         std::vector<double>(sb.begin() + s, sb.end()), prof.scale_block, e8m0)
                   : OracleMxf8Step(prof.node, want, p, sa[s], sb[s]);
      }
      const double got = MmaScaledChain(prof, c0, a, b, sa, sb);
      if (!(got == want || (std::isnan(got) && std::isnan(want)))) {
        std::ostringstream os;
        os << "profile " << prof.name << " trial " << trial << " c " << Exact(c0) << "\n";
        for (std::size_t i = 0; i < n; ++i)
          os << "  " << Exact(a[i]) << " * " << Exact(b[i]) << "\n";
        for (std::size_t i = 0; i < sa.size(); ++i)
          os << "  scales " << Exact(sa[i]) << " " << Exact(sb[i]) << "\n";
        os << "got " << Exact(got) << " want " << Exact(want);
        FAIL(os.str());
      }
      ++checked;
    }
  }
  std::cout << "block-scaled chains checked against the big-integer model: " << checked << "\n";
  // promote:N: chunks from zero, added onto c in fp32.
  const MmaProfile& nv = Profile("blackwell-nvf4");
  const std::vector<double> ones(192, 1.0), sc(12, 1.0);
  CHECK(MmaScaledChain(nv, 0, ones, ones, sc, sc, 64) == 192.0);
  CHECK_THROWS_AS(MmaScaledChain(nv, 0, ones, ones, sc, sc, 32), MmaInputError);
}
