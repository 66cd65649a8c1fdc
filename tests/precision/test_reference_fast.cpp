// The fast certified tier (precision/reference/fixed_exp.hpp): its constants recomputed by
// MPFR, the exp kernel's error against MPFR (worst case printed, the proven bound asserted),
// the shifted sum of exponentials within its bound, and fast lse / softmax against the mpfr
// tier on random samples (max relative difference printed; identical correctly rounded
// doubles asserted). A [slow] case times the three lse methods on 10^6 fp32 values and only
// prints the times (the benchmark command `carrier reference-bench` measures).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "precision/reference/fixed_exp.hpp"
#include "support/test_support.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <gmp.h>
#include <mpfr.h>

#include <algorithm>
#include <chrono>

#include "precision/reference/reference.hpp"

namespace carrier {
namespace {

using namespace reference;
using test::Exact;
using test::Join;
using test::Rng;

using test::kInf;

// v = integer * 2^exp2 exactly (precision grows to fit).
void SetU128(mpfr_ptr v, U128 x, long exp2) {
  mpz_t z;
  mpz_init(z);
  const std::uint64_t words[2] = {Lo64(x), Hi64(x)};
  mpz_import(z, 2, -1, sizeof(std::uint64_t), 0, 0, words);
  mpfr_set_prec(v, 130);
  mpfr_set_z_2exp(v, z, exp2, MPFR_RNDN);
  mpz_clear(z);
}

// |q - target * 2^127| in units of 2^-127, target given by MPFR at 400 bits.
double ConstantError(U128 q, mpfr_srcptr target) {
  mpfr_t a, b;
  mpfr_init2(a, 400);
  mpfr_init2(b, 130);
  SetU128(b, q, -127);
  mpfr_sub(a, b, target, MPFR_RNDN);
  mpfr_mul_2si(a, a, 127, MPFR_RNDN);
  const double e = std::fabs(mpfr_get_d(a, MPFR_RNDN));
  mpfr_clears(a, b, static_cast<mpfr_ptr>(nullptr));
  return e;
}

using test::SameBits;

// Relative difference |a - b| / |b| of two MPFR values, as a double (0 when both are 0).
double RelDiff(mpfr_srcptr a, mpfr_srcptr b) {
  if (mpfr_equal_p(a, b)) return 0;
  mpfr_t t;
  mpfr_init2(t, 64);
  mpfr_sub(t, a, b, MPFR_RNDA);
  mpfr_div(t, t, b, MPFR_RNDA);
  const double r = std::fabs(mpfr_get_d(t, MPFR_RNDU));
  mpfr_clear(t);
  return r;
}

// |S_hat - S| / S of SumExpShifted's result s on x (maximum m) against S = sum exp(x_i - m) at
// 400 bits (-inf terms contribute 0).
double ShiftedSumRelError(const std::vector<double>& x, double m, const ShiftedExpSum& s) {
  mpfr_t want, got, t;
  mpfr_inits2(400, want, got, t, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_zero(want, 1);
  for (double v : x) {
    if (v == -kInf) continue;
    mpfr_set_d(t, v, MPFR_RNDN);
    mpfr_sub_d(t, t, m, MPFR_RNDN);
    mpfr_exp(t, t, MPFR_RNDN);
    mpfr_add(want, want, t, MPFR_RNDN);
  }
  mpz_t z;
  mpz_init(z);
  mpz_import(z, 4, -1, sizeof(std::uint64_t), 0, 0, s.word);
  mpfr_set_z_2exp(got, z, -192, MPFR_RNDN);
  mpz_clear(z);
  const double rel = RelDiff(got, want);
  mpfr_clears(want, got, t, static_cast<mpfr_ptr>(nullptr));
  return rel;
}

// Random rows of the kinds the references meet: fp32-rounded normals, wide uniform ranges,
// attention-like scores with a few masked (-inf) entries, and near-ties.
std::vector<double> RandomRow(Rng& rng, std::size_t n, int kind) {
  std::vector<double> x(n);
  for (auto& v : x) {
    switch (kind) {
      case 0:
        v = static_cast<float>(rng.Normal());
        break;
      case 1:
        v = rng.Uniform(-700, 10);
        break;
      case 2:
        v = rng.Below(10) == 0 ? -kInf : static_cast<float>(8 * rng.Normal());
        break;
      default:
        v = 1 + std::ldexp(rng.Uniform(-1, 1), -40);
        break;
    }
  }
  if (x[0] == -kInf) x[0] = 0;
  return x;
}

}  // namespace

TEST_CASE("fixed exp constants match MPFR to half a unit", "[fast][reference][fixed_exp]") {
  mpfr_t v, l2, scaled;
  mpfr_inits2(400, v, l2, scaled, static_cast<mpfr_ptr>(nullptr));
  mpfr_const_log2(l2, MPFR_RNDN);
  double worst = 0, worst_narrow = 0;
  mpfr_ui_div(v, 1, l2, MPFR_RNDN);
  worst = std::max(worst, ConstantError(fixed_exp_constants::Log2E(), v));
  mpfr_set_ui(v, 1, MPFR_RNDN);
  for (int k = 0; k <= fixed_exp_constants::kDegree; ++k) {
    if (k > 0) {
      mpfr_mul(v, v, l2, MPFR_RNDN);
      mpfr_div_ui(v, v, k, MPFR_RNDN);
    }
    if (k <= fixed_exp_constants::kWideDegree) {
      worst = std::max(worst, ConstantError(fixed_exp_constants::Coefficient(k), v));
    } else {
      // round(c_k 2^scale) as a Q1.127 value scaled back: the error in units of 2^-scale.
      const int scale = fixed_exp_constants::NarrowScale(k);
      mpfr_mul_2si(scaled, v, scale - 127, MPFR_RNDN);
      const double e = ConstantError(fixed_exp_constants::NarrowCoefficient(k), scaled);
      INFO("narrow coefficient k=" << k << " scale " << scale << " error " << e);
      worst_narrow = std::max(worst_narrow, e);
    }
  }
  constexpr int kEntries = 1 << fixed_exp_constants::kTableBits;
  for (int i = 0; i < kEntries; ++i) {
    mpfr_set_si(v, -(i + 1), MPFR_RNDN);
    mpfr_div_ui(v, v, kEntries, MPFR_RNDN);
    mpfr_exp2(v, v, MPFR_RNDN);
    worst = std::max(worst, ConstantError(fixed_exp_constants::Table(i), v));
  }
  mpfr_clears(v, l2, scaled, static_cast<mpfr_ptr>(nullptr));
  std::cout << "fixed exp constants: worst error " << worst << " units of 2^-127 (log2(e), "
            << fixed_exp_constants::kWideDegree + 1 << " coefficients, " << kEntries
            << " table entries); narrow coefficients " << worst_narrow << " units\n";
  CHECK(worst <= 0.5);
  CHECK(worst_narrow <= 0.5);
}

TEST_CASE("fixed exp kernel stays within its proven bound", "[fast][reference][fixed_exp]") {
  Rng rng(4242);
  mpfr_t y, want, got, rel;
  mpfr_inits2(300, y, want, got, rel, static_cast<mpfr_ptr>(nullptr));
  double worst = 0;
  double worst_s = 0, worst_e = 0;
  const int trials = test::Trials(200000);
  for (int t = 0; t < trials; ++t) {
    double s = 0;
    switch (t % 5) {
      case 0:
        s = -rng.Uniform01();
        break;
      case 1:
        s = -rng.Uniform(0, 134);
        break;
      case 2:
        s = -std::ldexp(rng.Uniform(0.5, 1), -static_cast<int>(rng.Below(200)));
        break;
      case 3:
        s = -rng.Uniform(0, kFixedExpArgumentLimit);
        break;
      default:  // near the table's and the binade's edges (h near 0 and near 2^-12)
        s = -(static_cast<double>(rng.Below(60000)) / 4096 * 0.6931471805599453) +
            std::ldexp(rng.Uniform(-1, 1), -static_cast<int>(40 + rng.Below(14)));
        if (s > 0) s = -s;
        break;
    }
    double e = t % 2 ? std::ldexp(s, -54) * rng.Uniform(-1, 1) : 0.0;
    if (s + e > 0 || s == 0) e = 0;
    const FixedExp f = FixedExpNeg(s, e);
    mpfr_set_d(y, s, MPFR_RNDN);
    mpfr_add_d(y, y, e, MPFR_RNDN);  // exact at 300 bits
    mpfr_exp(want, y, MPFR_RNDN);
    SetU128(got, f.mant, -127 - f.shift);
    mpfr_sub(rel, got, want, MPFR_RNDN);
    mpfr_div(rel, rel, want, MPFR_RNDN);
    const double r = std::fabs(mpfr_get_d(rel, MPFR_RNDN));
    if (r > worst) {
      worst = r;
      worst_s = s;
      worst_e = e;
    }
  }
  mpfr_clears(y, want, got, rel, static_cast<mpfr_ptr>(nullptr));
  std::cout << "fixed exp kernel: worst relative error 2^" << std::log2(worst) << " over " << trials
            << " arguments (bound 2^" << std::log2(kFixedExpRelError) << ")\n";
  INFO("worst at s=" << Exact(worst_s) << " e=" << Exact(worst_e));
  CHECK(worst <= kFixedExpRelError);
}

TEST_CASE("fixed exp batch equals the scalar kernel bit for bit", "[fast][reference][fixed_exp]") {
  // FixedExpNegBatch (AVX-512 IFMA when the CPU has it) against FixedExpNeg on random arguments
  // of the kernel test's kinds, with and without a low part e, mixed with edge arguments: +-0
  // and tiny s (q = 0, right-shifted significands), subnormal e, the largest |s| (shift near
  // 2^14 / ln 2), table and binade edges, and every tail length of a batch.
  Rng rng(5150);
  const int n = test::Trials(200000);
  std::vector<double> s(n), e(n);
  const double edges[] = {-0.0,
                          0.0,
                          -0x1p-1074,
                          -0x1p-1022,
                          -0x1p-115,
                          -0x1p-114,
                          -0x1.8p-114,
                          -0x1p-113,
                          -0x1p-64,
                          -0x1p-63,
                          -0x1p-62,
                          -0x1p-61,
                          -0x1.fffffffffffffp-53,
                          -0x1p-12,
                          -0.6931471805599453,
                          -1.0,
                          -133.99999999999997,
                          -134.0,
                          -8192.0,
                          -(kFixedExpArgumentLimit - 0x1p-38),
                          -16382.5,
                          std::nextafter(-kFixedExpArgumentLimit, 0.0)};
  for (int i = 0; i < n; ++i) {
    double si = 0;
    switch (i % 7) {
      case 0:
        si = -rng.Uniform01();
        break;
      case 1:
        si = -rng.Uniform(0, 134);
        break;
      case 2:
        si = -std::ldexp(rng.Uniform(0.5, 1), -static_cast<int>(rng.Below(1100)));
        break;
      case 3:
        si = -rng.Uniform(0, kFixedExpArgumentLimit);
        break;
      case 4:  // near the table's and the binade's edges
        si = -(static_cast<double>(rng.Below(60000)) / 4096 * 0.6931471805599453) +
             std::ldexp(rng.Uniform(-1, 1), -static_cast<int>(40 + rng.Below(14)));
        if (si > 0) si = -si;
        break;
      case 5:
        si = static_cast<float>(-std::fabs(5 * rng.Normal()));
        break;
      default:
        si = edges[rng.Below(std::size(edges))];
        break;
    }
    double ei = 0;
    switch (rng.Below(4)) {
      case 0:
        ei = std::ldexp(si, -54) * rng.Uniform(-1, 1);
        break;
      case 1:
        ei = rng.Below(2) ? 0x1p-1074 * static_cast<double>(rng.Below(4)) : -0x1p-1074;
        break;
      default:
        break;
    }
    if (si + ei > 0 || (si == 0 && ei > 0)) ei = -ei;
    s[i] = si;
    e[i] = ei;
  }
  std::vector<FixedExp> got(n);
  int mismatches = 0;
  auto compare = [&](int lo, int count) {
    FixedExpNegBatch(s.data() + lo, e.data() + lo, static_cast<std::size_t>(count), got.data());
    for (int i = 0; i < count; ++i) {
      const FixedExp want = FixedExpNeg(s[lo + i], e[lo + i]);
      if (got[i].mant != want.mant || got[i].shift != want.shift) {
        ++mismatches;
        INFO("s=" << Exact(s[lo + i]) << " e=" << Exact(e[lo + i]) << " shift " << got[i].shift
                  << " vs " << want.shift);
        CHECK(false);
      }
    }
  };
  compare(0, n);
  for (int count = 0; count <= 70; ++count) compare(count * 3, count);  // every tail length
  std::cout << "fixed exp batch (" << (FixedExpVectorized() ? "AVX-512 IFMA" : "scalar")
            << "): " << n << " arguments, " << mismatches << " differ from FixedExpNeg\n";
  CHECK(mismatches == 0);
}

TEST_CASE("exp(v - m) to long double is the correctly rounded value",
          "[fast][reference][fixed_exp]") {
  // ExpShiftedLongDouble (the bounds' exps, precision/op_bounds.cpp) against MPFR: v - m exact
  // at 2200 bits, its exp at 200 bits, rounded to long double by mpfr_get_ld (gradual
  // underflow included). Pairs (v, m) of every range the bounds meet: fp32 normals below their
  // max, gaps up to the kernel's limit (results in long double's subnormal range and below
  // it), tiny gaps, and the values outside the kernel (v == m, -inf, NaN). The batch form
  // equals the scalar one, with and without the vector kernel, at every tail length. glibc's
  // expl on the same rounded argument is counted (printed, not asserted): x87 f2xm1 misses the
  // correctly rounded value for about 9% of arguments.
  const std::uint64_t seed = 6021;
  Rng rng(seed);
  const int n = test::Trials(100000);
  std::vector<double> v(n), m(n);
  for (int i = 0; i < n; ++i) {
    double mi = rng.Normal() * std::ldexp(1.0, static_cast<int>(rng.Below(21)) - 10);
    double vi = 0;
    switch (i % 8) {
      case 0:
        vi = static_cast<float>(rng.Normal());
        mi = 4;
        break;
      case 1:
        vi = mi - rng.Uniform(0, 134);
        break;
      case 2:
        vi = mi - rng.Uniform(0, 11400);
        break;
      case 3:  // long double's subnormal results: exp(-11355) ~ 2^-16382
        vi = mi - rng.Uniform(11340, 11410);
        break;
      case 4:
        vi = mi - std::ldexp(rng.Uniform(0.5, 1), -static_cast<int>(rng.Below(60)));
        break;
      case 5:
        vi = mi - rng.Uniform(11410, 17000);  // +0, in and past the kernel's limit
        break;
      case 6:
        vi = std::nextafter(mi, -kInf);
        break;
      default: {
        const double specials[] = {mi, -kInf, std::nan("")};
        vi = specials[rng.Below(3)];
        break;
      }
    }
    if (vi > mi) std::swap(vi, mi);
    v[i] = vi;
    m[i] = mi;
  }
  mpfr_t a, x;
  mpfr_init2(a, 2200);
  mpfr_init2(x, 200);
  int wrong = 0, expl_differs = 0, subnormal = 0;
  for (int i = 0; i < n; ++i) {
    const long double got = ExpShiftedLongDouble(v[i], m[i]);
    long double want;
    if (std::isnan(v[i])) {
      want = v[i];
    } else {
      mpfr_set_d(a, v[i], MPFR_RNDN);
      mpfr_sub_d(a, a, m[i], MPFR_RNDN);  // exact at 2200 bits
      mpfr_exp(x, a, MPFR_RNDN);
      want = mpfr_get_ld(x, MPFR_RNDN);
    }
    if (want != 0 && std::fabs(want) < std::numeric_limits<long double>::min()) ++subnormal;
    const bool same = std::isnan(want) ? std::isnan(got) : got == want;
    if (!same) {
      ++wrong;
      INFO("reproduce: seed=" << seed << " i=" << i << " v=" << Exact(v[i]) << " m=" << Exact(m[i])
                              << " got " << static_cast<double>(got) << " want "
                              << static_cast<double>(want));
      CHECK(same);
    }
    const long double old = std::exp(static_cast<long double>(v[i]) - m[i]);
    if (!std::isnan(want) && old != want) ++expl_differs;
  }
  mpfr_clears(a, x, static_cast<mpfr_ptr>(nullptr));
  // Above the maximum (outside the contract: a code table's codes above the values' maximum)
  // the value is libm's, in both forms.
  const double above[] = {0.5, 1.0};
  long double above_batch[2];
  ExpShiftedLongDouble(above, 0.0, above_batch);
  CHECK(ExpShiftedLongDouble(1.0, 0.0) == std::exp(1.0L));
  CHECK(above_batch[0] == std::exp(0.5L));
  CHECK(above_batch[1] == std::exp(1.0L));
  // The batch: per pair, one m for a run of values (as the bounds call it).
  int batch_differs = 0;
  for (const bool vector : {false, true}) {
    const bool before = SetFixedExpVectorAllowed(vector);
    for (int count = 0; count <= 300; count += (count < 70 ? 1 : 37)) {
      const int lo = (count * 131) % (n - count);
      const double mm = m[lo];
      std::vector<double> xs(v.begin() + lo, v.begin() + lo + count);
      for (double& xv : xs)
        if (xv > mm) xv = mm;
      std::vector<long double> out(static_cast<std::size_t>(count));
      ExpShiftedLongDouble(xs, mm, out.data());
      for (int k = 0; k < count; ++k) {
        const long double one = ExpShiftedLongDouble(xs[k], mm);
        if (std::memcmp(&one, &out[k], 10) != 0) {
          ++batch_differs;
          INFO("reproduce: seed=" << seed << " count=" << count << " k=" << k << " v="
                                  << Exact(xs[k]) << " m=" << Exact(mm) << " vector=" << vector);
          CHECK(false);
        }
      }
    }
    SetFixedExpVectorAllowed(before);
  }
  std::cout << "exp(v - m) to long double: " << n << " pairs (" << subnormal
            << " subnormal results), " << wrong << " not correctly rounded; glibc expl differs "
            << "from the correctly rounded value in " << expl_differs << "; batch vs scalar "
            << batch_differs << " differ\n";
  CHECK(wrong == 0);
  CHECK(batch_differs == 0);
}

TEST_CASE("shifted exp sum is the same with and without the vector kernel",
          "[fast][reference][fixed_exp]") {
  // Rows of every kind, short and past the memo's window (fp32 normals drop the memo after 4096
  // kernel terms, so the rest is batched), with -inf entries and terms below exp(-134).
  Rng rng(9001);
  int rows = 0;
  for (int trial = 0; trial < test::Trials(24); ++trial) {
    const std::uint64_t seed = rng.Next();
    Rng local(seed);
    const std::size_t n = trial % 3 == 0 ? 4096 + local.Below(30000) : 1 + local.Below(3000);
    std::vector<double> x = RandomRow(local, n, trial % 4);
    if (trial % 5 == 1)
      for (std::size_t i = 0; i < n; i += 7) x[i] = -kInf;
    if (trial % 5 == 2)
      for (std::size_t i = 0; i < n; i += 5) x[i] -= 200;
    if (x[0] == -kInf) x[0] = 0;
    const double m = *std::max_element(x.begin(), x.end());
    const bool before = SetFixedExpVectorAllowed(false);
    const ShiftedExpSum scalar = SumExpShifted(x, m);
    SetFixedExpVectorAllowed(true);
    const ShiftedExpSum vector = SumExpShifted(x, m);
    SetFixedExpVectorAllowed(before);
    INFO("reproduce: seed=" << seed << " n=" << n << " kind=" << trial % 4);
    for (int w = 0; w < 4; ++w) CHECK(vector.word[w] == scalar.word[w]);
    CHECK(vector.exact_terms == scalar.exact_terms);
    CHECK(vector.approx_terms == scalar.approx_terms);
    ++rows;
  }
  std::cout << "shifted exp sum: " << rows << " rows, vector path "
            << (FixedExpVectorized() ? "on" : "not available") << ", words equal\n";
}

TEST_CASE("lse and softmax see a NaN, +inf or signed zero maximum anywhere in a row",
          "[fast][reference][fixed_exp]") {
  // The row scan (maximum, NaN flag, +inf count) runs eight interleaved lanes plus a tail: put
  // the special value at every position of rows of lengths around multiples of eight.
  for (std::size_t n = 1; n <= 27; ++n)
    for (std::size_t at = 0; at < n; ++at) {
      INFO("n=" << n << " at=" << at);
      std::vector<double> x(n);
      for (std::size_t i = 0; i < n; ++i) x[i] = -1.0 - static_cast<double>(i % 5);
      x[at] = std::numeric_limits<double>::quiet_NaN();
      CHECK(std::isnan(ReferenceLse(x).as_double[0]));
      x[at] = kInf;
      CHECK(ReferenceLse(x).as_double[0] == kInf);
      const Reference sm = ReferenceSoftmax(x);
      CHECK(sm.as_double[at] == 1.0);
      // Maximum zero: lse = log(count of zeros + the rest) whatever the zeros' signs.
      x[at] = -0.0;
      if (at + 1 < n) x[at + 1] = 0.0;
      std::vector<double> plus = x;
      for (double& v : plus)
        if (v == 0) v = 0.0;
      CHECK(SameBits(ReferenceLse(x).as_double[0], ReferenceLse(plus).as_double[0]));
      const Reference a = ReferenceSoftmax(x), b = ReferenceSoftmax(plus);
      for (std::size_t i = 0; i < n; ++i) CHECK(SameBits(a.as_double[i], b.as_double[i]));
    }
}

TEST_CASE("shifted exp sum stays within its bound", "[fast][reference][fixed_exp]") {
  Rng rng(7);
  double worst_ratio = 0;
  for (int trial = 0; trial < test::Trials(40); ++trial) {
    const std::uint64_t seed = rng.Next();
    Rng local(seed);
    const std::size_t n = 1 + local.Below(2000);
    const std::vector<double> x = RandomRow(local, n, trial % 4);
    const double m = *std::max_element(x.begin(), x.end());
    const ShiftedExpSum s = SumExpShifted(x, m);
    const double rel = ShiftedSumRelError(x, m, s);
    INFO("reproduce: seed=" << seed << " n=" << n << " kind=" << trial % 4
                            << " inputs=" << Join(x, 12));
    INFO("relative error " << rel << " bound " << s.RelErrorBound());
    CHECK(rel <= s.RelErrorBound());
    if (s.RelErrorBound() > 0) worst_ratio = std::max(worst_ratio, rel / s.RelErrorBound());
  }
  std::cout << "shifted exp sum: worst error / bound = " << worst_ratio << "\n";
}

TEST_CASE("shifted exp sum without the memo stays within its bound",
          "[fast][reference][fixed_exp]") {
  // fp32 normals do not repeat, so the memo is dropped after its first window of 4096 kernel
  // terms and the rest goes through the kernel alone; n = 4097 leaves one term past that
  // window, 20011 several windows and a partial one.
  Rng rng(31337);
  double worst_ratio = 0;
  for (const std::size_t n : {std::size_t{4097}, std::size_t{20011}}) {
    std::vector<double> x(n);
    for (auto& v : x) v = static_cast<float>(rng.Normal());
    x[n / 2] = x[n / 3];  // one repeated value
    const double m = *std::max_element(x.begin(), x.end());
    const ShiftedExpSum s = SumExpShifted(x, m);
    const double rel = ShiftedSumRelError(x, m, s);
    INFO("reproduce: seed=31337 n=" << n << " fp32 normals; relative error " << rel << " bound "
                                    << s.RelErrorBound());
    CHECK(s.exact_terms + s.approx_terms == n);
    CHECK(rel <= s.RelErrorBound());
    worst_ratio = std::max(worst_ratio, rel / s.RelErrorBound());
    std::cout << "shifted exp sum of " << n << " fp32 normals: relative error 2^" << std::log2(rel)
              << " (bound 2^" << std::log2(s.RelErrorBound()) << ")\n";
  }
  CHECK(worst_ratio > 0);  // the kernel's terms are inexact: an exact S_hat would be suspicious
}

TEST_CASE("fast lse and softmax agree with the mpfr tier on random samples",
          "[fast][reference][fixed_exp]") {
  Options escalate;
  escalate.method = Method::kEscalate;
  Options fast;
  fast.method = Method::kFast;
  Rng rng(2025);
  double max_lse = 0, max_softmax = 0;
  int rows = 0, components = 0;
  for (int trial = 0; trial < test::Trials(40); ++trial) {
    const std::uint64_t seed = rng.Next();
    Rng local(seed);
    const std::size_t n = 1 + local.Below(trial < 30 ? 64 : 1500);
    const std::vector<double> x = RandomRow(local, n, trial % 4);
    INFO("reproduce: seed=" << seed << " n=" << n << " kind=" << trial % 4
                            << " inputs=" << Join(x, 12));
    const Reference f = ReferenceLse(x, fast);
    const Reference e = ReferenceLse(x, escalate);
    INFO("fast bound 2^" << f.cert.error_bound_log2 << " note " << f.cert.note);
    REQUIRE(f.cert.tier == Tier::kFast);
    REQUIRE(f.cert.certified);
    REQUIRE(e.cert.certified);
    const double rel = RelDiff(f.value[0].get(), e.value[0].get());
    max_lse = std::max(max_lse, rel);
    CHECK(rel <= std::ldexp(1.0, -100));
    if (f.cert.correctly_rounded && e.cert.correctly_rounded) {
      CHECK(SameBits(f.as_double[0], e.as_double[0]));
      CHECK(f.as_long_double[0] == e.as_long_double[0]);
    }
    const Reference fs = ReferenceSoftmax(x, fast);
    const Reference es = ReferenceSoftmax(x, escalate);
    REQUIRE(fs.cert.certified);
    REQUIRE(es.cert.certified);
    REQUIRE(fs.as_double.size() == n);
    for (std::size_t i = 0; i < n; ++i) {
      INFO("component " << i << " fast " << Exact(fs.as_double[i]) << " mpfr "
                        << Exact(es.as_double[i]));
      if (fs.cert.correctly_rounded && es.cert.correctly_rounded) {
        CHECK(SameBits(fs.as_double[i], es.as_double[i]));
        CHECK(fs.as_long_double[i] == es.as_long_double[i]);
      }
      if (es.as_long_double[i] != 0)
        max_softmax =
            std::max(max_softmax,
                     static_cast<double>(std::fabs((fs.as_long_double[i] - es.as_long_double[i]) /
                                                   es.as_long_double[i])));
      ++components;
    }
    ++rows;
  }
  std::cout << "fast vs mpfr tier: " << rows << " rows; lse max relative difference " << max_lse
            << " (2^" << std::log2(max_lse) << "); softmax " << components
            << " components, max relative difference of the long doubles " << max_softmax
            << " (both correctly rounded)\n";
}

TEST_CASE("fast attention agrees with the mpfr tier on random samples",
          "[fast][reference][fixed_exp]") {
  Options escalate;
  escalate.method = Method::kEscalate;
  Options fast;
  fast.method = Method::kFast;
  Rng rng(606);
  double max_rel = 0;
  int rows = 0, components = 0, fast_certified = 0;
  for (int trial = 0; trial < test::Trials(30); ++trial) {
    const std::uint64_t seed = rng.Next();
    Rng local(seed);
    const std::size_t n = 1 + local.Below(trial < 20 ? 32 : 400);
    const std::size_t dv = 1 + local.Below(8);
    std::vector<double> scores = RandomRow(local, n, trial % 3);
    std::vector<double> values(n * dv);
    for (auto& v : values)
      v = trial % 2 ? static_cast<float>(local.Normal())
                    : std::ldexp(local.Uniform(0.5, 1), static_cast<int>(local.Below(40)) - 20);
    INFO("reproduce: seed=" << seed << " n=" << n << " dv=" << dv << " scores=" << Join(scores, 12)
                            << " values=" << Join(values, 12));
    const Reference f = ReferenceAttention(scores, values, dv, fast);
    const Reference e = ReferenceAttention(scores, values, dv, escalate);
    INFO("fast: tier " << TierName(f.cert.tier) << " bound 2^" << f.cert.error_bound_log2
                       << " note " << f.cert.note);
    REQUIRE(f.cert.tier == Tier::kFast);
    REQUIRE(e.cert.certified);
    REQUIRE(f.as_double.size() == dv);
    for (std::size_t j = 0; j < dv; ++j) {
      const double rel = RelDiff(f.value[j].get(), e.value[j].get());
      // The fast value is within its own bound of the truth, the mpfr one within its own
      // (exp2, not ldexp of an int: an exact tier's bound is 2^-inf = 0).
      CHECK(rel <= std::exp2(std::ceil(f.cert.error_bound_log2)) +
                       std::exp2(std::ceil(e.cert.error_bound_log2)));
      if (f.cert.certified) max_rel = std::max(max_rel, rel);
      if (f.cert.correctly_rounded && e.cert.correctly_rounded) {
        CHECK(SameBits(f.as_double[j], e.as_double[j]));
        CHECK(f.as_long_double[j] == e.as_long_double[j]);
      }
      ++components;
    }
    fast_certified += f.cert.certified ? 1 : 0;
    ++rows;
  }
  std::cout << "fast vs mpfr attention: " << rows << " rows (" << fast_certified
            << " certified by the fast tier), " << components
            << " outputs, max relative difference " << max_rel << " (2^" << std::log2(max_rel)
            << ")\n";
  CHECK(fast_certified > rows / 2);

  // A numerator that cancels: o = (1 * (-RN(e^-1)) + e^-1 * 1) / S is about 2^-55 of its
  // terms, so the fast bound is only about 2^-56 relative; kAuto falls back and certifies.
  const double e1 = std::exp(-1.0);  // any double near e^-1 will do
  const std::vector<double> scores = {0.0, -1.0}, values = {-e1, 1.0};
  const Reference f = ReferenceAttention(scores, values, 1, fast);
  INFO("fast: bound 2^" << f.cert.error_bound_log2 << " note " << f.cert.note);
  CHECK(f.cert.tier == Tier::kFast);
  CHECK_FALSE(f.cert.certified);
  const Reference a = ReferenceAttention(scores, values, 1);
  INFO("auto: tier " << TierName(a.cert.tier) << " p " << a.cert.precision_bits << " note "
                     << a.cert.note);
  CHECK(a.cert.tier == Tier::kMpfr);
  CHECK(a.cert.certified);
  CHECK(a.cert.note.find("fell back") != std::string::npos);
  // Non-finite values: the fast tier declines, the mpfr tier propagates the inf.
  const Reference inf =
      ReferenceAttention(std::vector<double>{0.0, -3.0}, std::vector<double>{1.0, kInf}, 1);
  CHECK(inf.cert.tier == Tier::kMpfr);
  CHECK(inf.as_double[0] == kInf);
}

TEST_CASE("lse reference timing on 10^6 fp32 values", "[slow][reference][timing]") {
  // Prints times only: timed unit tests are not allowed to assert (carrier reference-bench
  // measures side by side, with medians).
  Rng rng(42);
  std::vector<double> x(1000000);
  for (auto& v : x) v = static_cast<float>(rng.Normal());
  auto time = [](auto&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  Reference fast, mpfr;
  Options escalate;
  escalate.method = Method::kEscalate;
  const double t_fast = time([&] { fast = ReferenceLse(x); });
  const double t_mpfr = time([&] { mpfr = ReferenceLse(x, escalate); });
  MpfrValue plain;
  const double t_plain = time([&] { plain = PlainMpfrLse(x, 256); });
  std::cout << "lse of 10^6 fp32: fast tier " << t_fast << " s (" << TierName(fast.cert.tier)
            << ", certified " << fast.cert.certified << "), mpfr tier " << t_mpfr
            << " s (p = " << mpfr.cert.precision_bits << "), plain MPFR 256 " << t_plain
            << " s; ratio " << t_plain / t_fast << "x\n";
  CHECK(fast.cert.certified);
  CHECK(SameBits(fast.as_double[0], mpfr.as_double[0]));
  CHECK(SameBits(fast.as_double[0], plain.ToDouble()));
}

}  // namespace carrier

#endif  // CARRIER_HAVE_MPFR
