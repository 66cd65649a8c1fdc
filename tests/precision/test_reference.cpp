// Certified references (precision/reference/reference.hpp): each op on hand-checkable inputs,
// the special-values table, escalation actually happening (and reported) where it is needed,
// a result that cannot be certified saying so, and the exact tiers against the mpfr tier on
// random inputs (both correctly rounded, so their doubles must be identical).
#include <catch2/catch.hpp>

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <mpfr.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "precision/reference/reference.hpp"
#include "support/test_support.hpp"

namespace carrier {
namespace {

using namespace reference;
using test::Exact;
using test::Join;
using test::Rng;

using test::kInf;
using test::kNaN;
using test::SameBits;

bool SameValue(long double a, long double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

std::string Describe(const Reference& r) {
  std::string s = r.op + " tier=" + std::string(TierName(r.cert.tier)) +
                  " certified=" + std::to_string(r.cert.certified) +
                  " correctly_rounded=" + std::to_string(r.cert.correctly_rounded) +
                  " bits=" + std::to_string(r.cert.precision_bits) + " bound=2^" +
                  std::to_string(r.cert.error_bound_log2) + " note='" + r.cert.note + "' values=";
  for (double d : r.as_double) s += Exact(d) + " ";
  return s;
}

// The component values, each checked bit for bit, and the result certified and correctly
// rounded.
void CheckValues(const Reference& r, const std::vector<double>& want) {
  INFO(Describe(r));
  REQUIRE(r.as_double.size() == want.size());
  REQUIRE(r.as_long_double.size() == want.size());
  CHECK(r.cert.certified);
  CHECK(r.cert.correctly_rounded);
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("component " << i << " want " << Exact(want[i]));
    CHECK(SameBits(r.as_double[i], want[i]));
  }
}

// A double computed by MPFR at 1000 bits from a function of its argument, for expectations.
double HighPrecision(void (*f)(mpfr_ptr), long double* ld = nullptr) {
  mpfr_t v;
  mpfr_init2(v, 1000);
  f(v);
  const double d = mpfr_get_d(v, MPFR_RNDN);
  if (ld != nullptr) *ld = mpfr_get_ld(v, MPFR_RNDN);
  mpfr_clear(v);
  return d;
}

}  // namespace

TEST_CASE("reference sum and dot are exact on hand-checked inputs", "[fast][reference]") {
  CheckValues(ReferenceSum(std::vector<double>{1e16, 1, -1e16}), {1.0});
  CheckValues(ReferenceSum(std::vector<double>{1, 0x1p-53}), {1.0});  // the tie goes to even
  CheckValues(ReferenceSum(std::vector<double>{1, 0x1p-53, 0x1p-500}), {1 + 0x1p-52});
  CheckValues(ReferenceSum(std::vector<double>{1e308, 1e308, -1e308}), {1e308});
  CheckValues(ReferenceSum(std::vector<double>{0x1p-1074, 0x1p-1074, -0x1p-1074}), {0x1p-1074});
  const Reference s = ReferenceSum(std::vector<double>{1e16, 1, -1e16});
  CHECK(s.cert.tier == Tier::kExact);
  CHECK(s.cert.error_bound_log2 == -kInf);
  CHECK(mpfr_cmp_ui(s.value[0].get(), 1) == 0);
  std::vector<ValuePair<double>> dot = {{1e16, 1}, {1, 1}, {-1e16, 1}};
  CheckValues(ReferenceDot(dot), {1.0});
  // 3 * RN(0.1) needs 55 bits: its correct rounding is the plain product's.
  CheckValues(ReferenceDot(std::vector<ValuePair<double>>{{0.1, 3}}), {0.1 * 3});
  // x * y - RN(x * y) is recovered exactly: the exact product's low part.
  const double x = 1 + 0x1p-30, y = 1 - 0x1p-29;
  CheckValues(ReferenceDot(std::vector<ValuePair<double>>{{x, y}, {-(x * y), 1}}),
              {std::fma(x, y, -(x * y))});
}

TEST_CASE("reference max and argmax are exact selections", "[fast][reference]") {
  CheckValues(ReferenceMax(std::vector<double>{1, -0.0, 3, 2}), {3.0});
  CheckValues(ReferenceMax(std::vector<double>{-0.0, 0.0}), {0.0});
  CheckValues(ReferenceMax(std::vector<double>{0.0, -0.0}), {0.0});
  CheckValues(ReferenceMax(std::vector<double>{}), {-kInf});
  CheckValues(ReferenceMax(std::vector<double>{1, kNaN, 2}), {kNaN});
  const Reference a = ReferenceArgMax(std::vector<double>{1, 3, 3, 2});
  CheckValues(a, {3.0, 1.0});
  CHECK(a.index == 1);
  CheckValues(ReferenceArgMax(std::vector<double>{1, kNaN, kNaN}), {kNaN, 1.0});
  CheckValues(ReferenceArgMax(std::vector<double>{}), {-kInf, -1.0});
  CheckValues(ReferenceArgMax(std::vector<double>{-kInf, -kInf}), {-kInf, 0.0});
}

TEST_CASE("reference lse and softmax on hand-checked inputs", "[fast][reference]") {
  // log 2 to the last bit of the double and of the long double.
  const Reference two = ReferenceLse(std::vector<double>{0, 0});
  CheckValues(two, {0x1.62e42fefa39efp-1});
  CHECK(two.as_long_double[0] == 0xb.17217f7d1cf79acp-4L);
  CHECK(two.cert.tier == Tier::kFast);
  CheckValues(ReferenceLse(std::vector<double>{3.5}), {3.5});
  CheckValues(ReferenceLse(std::vector<double>{3.5, -kInf}), {3.5});
  // lse(1, 2, 3) = 3 + log(1 + e^-1 + e^-2).
  const double lse123 = HighPrecision([](mpfr_ptr v) {
    mpfr_t t;
    mpfr_init2(t, 1000);
    mpfr_set_si(v, -1, MPFR_RNDN);
    mpfr_exp(v, v, MPFR_RNDN);
    mpfr_set_si(t, -2, MPFR_RNDN);
    mpfr_exp(t, t, MPFR_RNDN);
    mpfr_add(v, v, t, MPFR_RNDN);
    mpfr_log1p(v, v, MPFR_RNDN);
    mpfr_add_ui(v, v, 3, MPFR_RNDN);
    mpfr_clear(t);
  });
  CheckValues(ReferenceLse(std::vector<double>{1, 2, 3}), {lse123});
  CheckValues(ReferenceSoftmax(std::vector<double>{0, 0}), {0.5, 0.5});
  CheckValues(ReferenceSoftmax(std::vector<double>{7, -kInf}), {1.0, 0.0});
  // softmax(0, log 3 rounded) is not 1/4, 3/4 exactly; but (1, 1, 1, 1) is 1/4 each.
  CheckValues(ReferenceSoftmax(std::vector<double>{-2, -2, -2, -2}), {0.25, 0.25, 0.25, 0.25});
}

TEST_CASE("reference welford and norm2 on hand-checked inputs", "[fast][reference]") {
  CheckValues(ReferenceWelford(std::vector<double>{0.1, 0.1, 0.1}), {0.1, 0.0, 0.0});
  CheckValues(ReferenceWelford(std::vector<double>{1, 2, 3, 4}), {2.5, 1.25, 5.0 / 3.0});
  // A huge mean with a tiny spread: the exact form has no cancellation problem.
  CheckValues(ReferenceWelford(std::vector<double>{1e17, 1e17 + 16, 1e17 + 32}),
              {1e17 + 16, 512.0 / 3.0, 256.0});
  Rng rng(5);
  for (int t = 0; t < test::Trials(50); ++t) {
    const double c = std::ldexp(rng.Uniform(-1, 1), static_cast<int>(rng.Below(200)) - 100);
    const std::size_t n = 2 + rng.Below(40);
    const Reference r = ReferenceWelford(std::vector<double>(n, c));
    INFO("reproduce: constant " << Exact(c) << " n=" << n);
    CheckValues(r, {c, 0.0, 0.0});  // variance of constant inputs is exactly 0
  }
  CheckValues(ReferenceNorm2(std::vector<double>{3, -4}), {5.0});
  CheckValues(ReferenceNorm2(std::vector<double>{}), {0.0});
  const double sqrt2 = HighPrecision([](mpfr_ptr v) { mpfr_sqrt_ui(v, 2, MPFR_RNDN); });
  CheckValues(ReferenceNorm2(std::vector<double>{0x1p1000, -0x1p1000}), {sqrt2 * 0x1p1000});
  CheckValues(ReferenceNorm2(std::vector<double>{0x1p-1000, 0x1p-1000}), {sqrt2 * 0x1p-1000});
  // sqrt(2) * 2^-1074 rounds to the smallest subnormal; sqrt(8) * 2^-1074 to 3 * 2^-1074.
  CheckValues(ReferenceNorm2(std::vector<double>{0x1p-1074, 0x1p-1074}), {0x1p-1074});
  CheckValues(ReferenceNorm2(std::vector<double>{0x1p-1073, 0x1p-1073}), {3 * 0x1p-1074});
}

TEST_CASE("reference affine and attention on hand-checked inputs", "[fast][reference]") {
  CheckValues(ReferenceAffine(std::vector<ValuePair<double>>{{2, 0}, {1, 1}}), {2.0, 1.0});
  CheckValues(ReferenceAffine(std::vector<ValuePair<double>>{{1, 1}, {2, 0}}), {2.0, 2.0});
  CheckValues(ReferenceAffine(std::vector<ValuePair<double>>{}), {1.0, 0.0});
  // h -> 3h + 1 three times: a = 27, b = 1 + 3 + 9 = 13.
  CheckValues(ReferenceAffine(std::vector<ValuePair<double>>(3, {3, 1})), {27.0, 13.0});
  const std::vector<double> scores = {0, 0}, values = {1, 10, 3, 20};
  CheckValues(ReferenceAttention(scores, values, 2), {2.0, 15.0});
  // A masked row is never read, even when its values are NaN.
  CheckValues(ReferenceAttention(std::vector<double>{1, -kInf}, std::vector<double>{4, kNaN}, 1),
              {4.0});
  CHECK_THROWS_AS(ReferenceAttention(scores, std::vector<double>{1, 2, 3}, 2),
                  std::invalid_argument);
}

TEST_CASE("reference special values follow the project table", "[fast][reference]") {
  using V = std::vector<double>;
  CheckValues(ReferenceSum(V{}), {0.0});
  CheckValues(ReferenceSum(V{-0.0}), {0.0});
  CheckValues(ReferenceSum(V{kInf, 1}), {kInf});
  CheckValues(ReferenceSum(V{kInf, -kInf}), {kNaN});
  CheckValues(ReferenceSum(V{1, kNaN}), {kNaN});
  CheckValues(ReferenceDot(std::vector<ValuePair<double>>{{kInf, 0}}), {kNaN});
  CheckValues(ReferenceDot(std::vector<ValuePair<double>>{{kInf, -1}, {1, 1}}), {-kInf});
  CheckValues(ReferenceDot(std::vector<ValuePair<double>>{{kInf, 1}, {-kInf, 1}}), {kNaN});
  CheckValues(ReferenceDot(std::vector<ValuePair<double>>{}), {0.0});
  CheckValues(ReferenceLse(V{}), {-kInf});
  CheckValues(ReferenceLse(V{-kInf, -kInf}), {-kInf});
  CheckValues(ReferenceLse(V{1, kInf}), {kInf});
  CheckValues(ReferenceLse(V{kInf, kNaN}), {kNaN});
  CheckValues(ReferenceSoftmax(V{}), {});
  CheckValues(ReferenceSoftmax(V{-kInf, -kInf}), {kNaN, kNaN});
  Options zeros;
  zeros.empty_row = SoftmaxEmptyRow::kZeros;
  CheckValues(ReferenceSoftmax(V{-kInf, -kInf}, zeros), {0.0, 0.0});
  CheckValues(ReferenceSoftmax(V{kInf, 1, kInf, kInf}), {1.0 / 3, 0.0, 1.0 / 3, 1.0 / 3});
  CheckValues(ReferenceSoftmax(V{1, kNaN}), {kNaN, kNaN});
  CheckValues(ReferenceWelford(V{}), {kNaN, kNaN, kNaN});
  CheckValues(ReferenceWelford(V{2.5}), {2.5, 0.0, kNaN});
  CheckValues(ReferenceWelford(V{1, kInf}), {kInf, kNaN, kNaN});
  CheckValues(ReferenceWelford(V{-kInf, kInf}), {kNaN, kNaN, kNaN});
  CheckValues(ReferenceWelford(V{1, kNaN}), {kNaN, kNaN, kNaN});
  CheckValues(ReferenceNorm2(V{kInf, kNaN}), {kNaN});
  CheckValues(ReferenceNorm2(V{-kInf, 1}), {kInf});
  CheckValues(ReferenceNorm2(V{0.0, -0.0}), {0.0});
  CheckValues(ReferenceAffine(std::vector<ValuePair<double>>{{kNaN, 1}, {2, 1}}), {kNaN, 3.0});
  CheckValues(ReferenceAffine(std::vector<ValuePair<double>>{{kInf, 0}, {2, 1}}), {kInf, 1.0});
  CheckValues(ReferenceAffine(std::vector<ValuePair<double>>{{2, 1}, {0, 1}, {kInf, 1}}),
              {kNaN, kInf});
  CheckValues(ReferenceAttention(V{kNaN, 1}, V{1, 2}, 1), {kNaN});
  CheckValues(ReferenceAttention(V{}, V{}, 2), {kNaN, kNaN});
  CheckValues(ReferenceAttention(V{-kInf}, V{5}, 1, zeros), {0.0});
  CheckValues(ReferenceAttention(V{kInf, 0, kInf}, V{1, 100, 2}, 1), {1.5});
  CheckValues(ReferenceAttention(V{kInf, 0}, V{1, kInf}, 1), {kNaN});  // 0 * inf
  CheckValues(ReferenceAttention(V{1, 0}, V{1, kInf}, 1), {kInf});
}

TEST_CASE("the mpfr tier escalates where a case needs it and reports the precision",
          "[fast][reference][escalation]") {
  Options escalate;
  escalate.method = Method::kEscalate;
  // 1 + 2^-200 - 1: a 128-bit sequential sum loses the 2^-200 entirely, 256 bits keep it.
  const std::vector<double> cancel = {1, 0x1p-200, -1};
  const Reference s = ReferenceSum(cancel, escalate);
  std::cout << "escalation: sum [1, 2^-200, -1] -> " << Describe(s) << "\n";
  CheckValues(s, {0x1p-200});
  CHECK(s.cert.tier == Tier::kMpfr);
  CHECK(s.cert.precision_bits == 256);
  CHECK(s.value[0].precision() == 512);

  // With the cap below what the case needs, the result says it is not certified.
  Options capped = escalate;
  capped.max_bits = 256;
  const Reference c = ReferenceSum(cancel, capped);
  INFO(Describe(c));
  CHECK_FALSE(c.cert.certified);
  CHECK_FALSE(c.cert.note.empty());

  // lse(x1, x2) = x1 + log(1 + e^(x2 - x1)) with x1 = -RN(log(1 + e^-1)), x2 = x1 - 1: the two
  // parts cancel to about 2^-55 of their size. The fast tier's absolute bound 2^-111 is then
  // only 2^-56 relative (not certified); kAuto falls back to the mpfr tier, where 128 bits leave
  // about 2^-73 relative, so the pair (128, 256) disagrees and (256, 512) certifies.
  const double c1 = HighPrecision([](mpfr_ptr v) {
    mpfr_set_si(v, -1, MPFR_RNDN);
    mpfr_exp(v, v, MPFR_RNDN);
    mpfr_log1p(v, v, MPFR_RNDN);
  });
  const std::vector<double> x = {-c1, -c1 - 1};
  Options fast;
  fast.method = Method::kFast;
  const Reference f = ReferenceLse(x, fast);
  std::cout << "escalation: lse cancelling -> fast: " << Describe(f) << "\n";
  CHECK(f.cert.tier == Tier::kFast);
  CHECK_FALSE(f.cert.certified);
  CHECK_FALSE(f.cert.note.empty());
  const Reference a = ReferenceLse(x);
  std::cout << "escalation: lse cancelling -> auto: " << Describe(a) << "\n";
  CHECK(a.cert.tier == Tier::kMpfr);
  CHECK(a.cert.certified);
  CHECK(a.cert.precision_bits == 256);
  CHECK(a.cert.note.find("fell back") != std::string::npos);
  // An independent evaluation at 2000 bits.
  mpfr_t v, t;
  mpfr_inits2(2000, v, t, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_d(v, x[1], MPFR_RNDN);
  mpfr_sub_d(v, v, x[0], MPFR_RNDN);
  mpfr_exp(v, v, MPFR_RNDN);
  mpfr_log1p(v, v, MPFR_RNDN);
  mpfr_add_d(v, v, x[0], MPFR_RNDN);
  const double want = mpfr_get_d(v, MPFR_RNDN);
  mpfr_sub(t, a.value[0].get(), v, MPFR_RNDN);
  mpfr_div(t, t, v, MPFR_RNDN);
  const double rel = std::fabs(mpfr_get_d(t, MPFR_RNDN));
  std::cout << "escalation: lse cancelling: relative error of the certified value vs 2000 bits "
            << rel << " (bound 2^" << a.cert.error_bound_log2 << ")\n";
  CHECK(rel <= std::ldexp(1.0, -100));
  CHECK(rel <= std::exp2(std::ceil(a.cert.error_bound_log2)));
  CheckValues(a, {want});
  mpfr_clears(v, t, static_cast<mpfr_ptr>(nullptr));

  // A tighter tolerance needs more bits.
  Options tight = escalate;
  tight.tolerance_log2 = -300;
  const Reference l = ReferenceLse(std::vector<double>{1, 2, 3}, tight);
  INFO(Describe(l));
  CHECK(l.cert.certified);
  CHECK(l.cert.precision_bits >= 256);
  CHECK(l.cert.error_bound_log2 <= -300);
}

TEST_CASE("exact tiers and the mpfr tier agree on random inputs", "[fast][reference]") {
  Options escalate;
  escalate.method = Method::kEscalate;
  Rng rng(31337);
  int checked = 0;
  for (int trial = 0; trial < test::Trials(30); ++trial) {
    const std::uint64_t seed = rng.Next();
    Rng local(seed);
    const std::size_t n = 2 + local.Below(300);
    std::vector<double> x(n);
    std::vector<ValuePair<double>> pairs(n);
    const int spread = static_cast<int>(local.Below(60));
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = std::ldexp(local.Uniform(-1, 1), static_cast<int>(local.Below(spread + 1)));
      pairs[i] = {local.Normal(),
                  std::ldexp(local.Uniform(-1, 1), static_cast<int>(local.Below(20)))};
    }
    if (trial % 3 == 0) x.push_back(-x[0] + 0x1p-30);  // some cancellation
    INFO("reproduce: seed=" << seed << " n=" << x.size() << " inputs=" << Join(x, 12));
    const std::vector<Reference> exact = {ReferenceSum(x), ReferenceDot(pairs), ReferenceWelford(x),
                                          ReferenceNorm2(x)};
    const std::vector<Reference> mpfr = {ReferenceSum(x, escalate), ReferenceDot(pairs, escalate),
                                         ReferenceWelford(x, escalate),
                                         ReferenceNorm2(x, escalate)};
    for (std::size_t k = 0; k < exact.size(); ++k) {
      INFO(Describe(exact[k]) << "\n  vs " << Describe(mpfr[k]));
      REQUIRE(exact[k].cert.tier == Tier::kExact);
      REQUIRE(mpfr[k].cert.tier == Tier::kMpfr);
      REQUIRE(mpfr[k].cert.certified);
      for (std::size_t i = 0; i < exact[k].as_double.size(); ++i) {
        if (!mpfr[k].cert.correctly_rounded) continue;
        CHECK(SameBits(exact[k].as_double[i], mpfr[k].as_double[i]));
        CHECK(SameValue(exact[k].as_long_double[i], mpfr[k].as_long_double[i]));
      }
      ++checked;
    }
  }
  std::cout << "exact vs mpfr tier: " << checked << " references agree in double and long double\n";
}

TEST_CASE("attention and affine agree with softmax and sum references", "[fast][reference]") {
  // attention with V = the identity gives the softmax weights; affine with all slopes 1 gives
  // the sum of the constants. Different tiers, both correctly rounded: identical doubles.
  Rng rng(8);
  for (int trial = 0; trial < test::Trials(10); ++trial) {
    const std::uint64_t seed = rng.Next();
    Rng local(seed);
    const std::size_t n = 1 + local.Below(24);
    std::vector<double> s(n), eye(n * n, 0.0), b(n);
    std::vector<ValuePair<double>> maps(n);
    for (std::size_t i = 0; i < n; ++i) {
      s[i] = static_cast<float>(3 * local.Normal());
      eye[i * n + i] = 1;
      b[i] = local.Normal();
      maps[i] = {1.0, b[i]};
    }
    INFO("reproduce: seed=" << seed << " n=" << n << " scores=" << Join(s));
    const Reference att = ReferenceAttention(s, eye, n);
    const Reference soft = ReferenceSoftmax(s);
    REQUIRE(att.cert.correctly_rounded);
    REQUIRE(soft.cert.correctly_rounded);
    for (std::size_t i = 0; i < n; ++i) {
      CHECK(SameBits(att.as_double[i], soft.as_double[i]));
      CHECK(SameValue(att.as_long_double[i], soft.as_long_double[i]));
    }
    const Reference aff = ReferenceAffine(maps);
    const Reference sum = ReferenceSum(b);
    CHECK(SameBits(aff.as_double[1], sum.as_double[0]));
    CHECK(aff.as_double[0] == 1.0);
  }
}

TEST_CASE("references computed on several threads match the single-threaded ones",
          "[fast][reference]") {
  // MPFR keeps its exponent range per thread and each call widens and restores it; nothing
  // else is shared. Results are collected first: Catch2's assertions are not thread-safe.
  Rng rng(3);
  std::vector<std::vector<double>> rows(8);
  for (auto& row : rows) {
    row.resize(200 + rng.Below(200));
    for (auto& v : row) v = static_cast<float>(4 * rng.Normal());
  }
  auto compute = [&](std::size_t k) {
    Options escalate;
    escalate.method = Method::kEscalate;
    return std::vector<double>{
        ReferenceLse(rows[k]).as_double[0], ReferenceLse(rows[k], escalate).as_double[0],
        ReferenceWelford(rows[k]).as_double[2], ReferenceSoftmax(rows[k]).as_double[0]};
  };
  std::vector<std::vector<double>> threaded(rows.size());
  std::vector<std::thread> pool;
  for (std::size_t k = 0; k < rows.size(); ++k)
    pool.emplace_back([&, k] {
      threaded[k] = compute(k);
      mpfr_free_cache();  // MPFR's per-thread constant caches and pools (see reference.hpp)
    });
  for (auto& t : pool) t.join();
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const std::vector<double> want = compute(k);
    INFO("row " << k << " inputs=" << Join(rows[k], 8));
    REQUIRE(threaded[k].size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) CHECK(SameBits(threaded[k][i], want[i]));
  }
}

}  // namespace carrier

#endif  // CARRIER_HAVE_MPFR
