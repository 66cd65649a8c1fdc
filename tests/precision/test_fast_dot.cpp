// ReferenceDotFast (precision/reference/fast_sum.hpp) gives ReferenceDot's Reference field for
// field — the correctly rounded double and long double, the exact MPFR value (precision and
// bits), the certificate — on empty, zero, cancelling, random, wide-range, subnormal,
// ill-conditioned and special inputs, at ChunkSum's product range edges (which it must flag
// exactly where chunk_sum.hpp says) and split across pass threads; ChunkSum's products path
// equals ExactSum over exact two-product splits, merged or not. The column forms of
// ReferenceDotFast and ReferenceAffine equal their span forms on the same pairs.
#include <catch2/catch.hpp>
#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "precision/format.hpp"
#include "precision/parallel_pass.hpp"
#include "precision/reference/chunk_sum.hpp"
#include "precision/reference/exact_sum.hpp"
#include "precision/reference/fast_sum.hpp"
#include "precision/reference/reference.hpp"
#include "precision/rounding.hpp"
#include "precision/stored_column.hpp"
#include "support/reference_check.hpp"
#include "support/test_support.hpp"

using namespace carrier;
using carrier::test::Rng;

namespace {

using DotPairs = std::vector<ValuePair<double>>;
constexpr double kNaNd = std::numeric_limits<double>::quiet_NaN();
constexpr double kInfd = std::numeric_limits<double>::infinity();

std::string JoinDotPairs(const DotPairs& x, std::size_t max_items = 8) {
  std::ostringstream os;
  os << "[";
  for (std::size_t i = 0; i < x.size() && i < max_items; ++i)
    os << (i ? ", " : "") << "(" << test::Exact(x[i].a) << ", " << test::Exact(x[i].b) << ")";
  if (x.size() > max_items) os << ", ... (" << x.size() << " pairs)";
  os << "]";
  return os.str();
}

// Whether ChunkSum's products path serves x (else ReferenceDotFast answers with ReferenceDot).
bool DotServed(const DotPairs& x) {
  const auto c = std::make_unique<reference::ChunkSum>();
  if (!x.empty()) c->ScanProducts(&x.front().a, &x.front().b, x.size(), 2);
  return !c->OutOfProductRange();
}

struct DotTally {
  int cases = 0, served = 0;
};

void RequireSameDot(const DotPairs& x, const std::string& kind, std::uint64_t seed,
                    DotTally& tally) {
  INFO("reproduce: seed=" << seed << " n=" << x.size() << " kind=" << kind
                          << " pairs=" << JoinDotPairs(x));
  const reference::Reference want = reference::ReferenceDot(x);
  const reference::Reference got = reference::ReferenceDotFast(x);
  test::RequireSameReference(want, got);
  REQUIRE(want.value.size() == 1);
  // The exact value's sign too (an exact zero sum is +0 in both).
  if (!mpfr_nan_p(want.value[0].get()))
    REQUIRE(mpfr_signbit(got.value[0].get()) == mpfr_signbit(want.value[0].get()));
  ++tally.cases;
  tally.served += DotServed(x) ? 1 : 0;
}

// (2 - 2^-52) 2^e: the largest significand.
double Big(int e) { return std::ldexp(std::nextafter(2.0, 0.0), e); }

}  // namespace

TEST_CASE("ReferenceDotFast == ReferenceDot, field for field", "[fast][reference][fast_sum]") {
  DotTally tally;
  const std::uint64_t fixed_seed = 0;  // the fixed cases draw nothing
  auto fixed = [&](const DotPairs& x, const std::string& kind) {
    RequireSameDot(x, kind, fixed_seed, tally);
  };
  const double tiny = std::numeric_limits<double>::denorm_min();
  fixed({}, "empty");
  fixed({{1.5, -2.25}}, "one pair");
  fixed({{0.0, 0.0}, {-0.0, 5.0}, {3.0, -0.0}}, "zeros");
  fixed({{-0.0, 1.0}}, "negative zero product");
  fixed({{-1.0, 0.0}, {0.0, -7.0}}, "signed zeros");
  fixed({{3.0, 5.0}, {-3.0, 5.0}}, "exact cancellation");
  fixed({{1e300, 1e-300}, {1e-300, -1e300}}, "exact cancellation, wide factors");
  fixed({{kNaNd, 1.0}}, "nan a");
  fixed({{1.0, 2.0}, {0.0, kNaNd}}, "nan b");
  fixed({{kInfd, 2.0}}, "+inf");
  fixed({{kInfd, -2.0}, {1.0, 1.0}}, "-inf");
  fixed({{kInfd, 1.0}, {-kInfd, 1.0}}, "both infs");
  fixed({{kInfd, 0.0}}, "inf * 0");
  fixed({{1.0, 1.0}, {-0.0, -kInfd}}, "0 * -inf");
  fixed({{tiny, 0x1p1000}, {-3 * tiny, 0x1p999}}, "subnormal factors, served");
  fixed({{tiny, 1.0}}, "subnormal times one (product below the limbs' q range)");
  fixed({{tiny, tiny}}, "subnormal squared");
  // ChunkSum's product range (chunk_sum.hpp): q = pa + pb - 1074 in [0, 1990].
  const double low_in = std::ldexp(1.0 + 0x1p-52, -485);  // pa = 537: q = 0 for its square
  const double low_out = std::ldexp(1.0 + 0x1p-52, -486);
  const std::vector<std::pair<DotPairs, bool>> edges = {
      {{{low_in, low_in}}, true},                   // q = 0, lowest bit 2^-1074
      {{{low_in, -low_in}, {1.0, 1.0}}, true},      // q = 0 beside an ordinary product
      {{{low_out, low_in}}, false},                 // q = -1: lowest bit 2^-1075
      {{{0x1p-486, 0x1p-485}}, false},              // q = -1 (2^-971: the limbs could hold it)
      {{{0.0, low_out}, {low_out, 0.0}}, true},     // zero products anywhere
      {{{Big(510), Big(510)}}, true},               // q = 1990, just below 2^1022
      {{{Big(510), -Big(510)}, {1.0, 3.0}}, true},  // q = 1990, negative
      {{{0x1p511, 0x1p510}}, false},                // q = 1991: 2^1021
      {{{1.5 * 0x1p511, 1.5 * 0x1p510}}, false},    // q = 1991
      {{{0.0, 0x1p1023}, {0x1p1023, -0.0}}, true},  // zero products of huge factors
  };
  int edge_cases = 0;
  for (const auto& [x, inside] : edges) {
    const std::string kind = std::string("range edge, ") + (inside ? "inside" : "outside") + " #" +
                             std::to_string(edge_cases++);
    INFO(kind << " pairs=" << JoinDotPairs(x));
    REQUIRE(DotServed(x) == inside);
    fixed(x, kind);
  }
  // Many products just below 2^1022 of one sign: the exact sum is beyond the double range.
  fixed(DotPairs(5000, {Big(510), Big(510)}), "sum beyond the double range");
  fixed(DotPairs(5000, {-Big(510), Big(510)}), "negative sum beyond the double range");
  const int fixed_cases = tally.cases;

  for (const std::uint64_t seed : {std::uint64_t{6262}, std::uint64_t{6263}, std::uint64_t{6264}}) {
    Rng rng(seed);
    for (int t = 0; t < test::Trials(150); ++t) {
      const std::uint64_t n = rng.Below(t % 10 == 0 ? 5000 : 60);
      const int kind = static_cast<int>(rng.Below(6));
      DotPairs x(n);
      auto exp_normal = [&](int lo, int hi) {
        return std::ldexp(rng.Normal(), lo + static_cast<int>(rng.Below(hi - lo + 1)));
      };
      for (std::uint64_t i = 0; i < n; ++i) {
        auto& [a, b] = x[i];
        switch (kind) {
          case 0:  // random normal pairs
            a = rng.Normal();
            b = rng.Normal();
            break;
          case 1: {  // products from 2^-960 to 2^1000 (inside the products' range)
            const int e = -960 + static_cast<int>(rng.Below(1961));
            const int ea = e / 2 + static_cast<int>(rng.Below(41)) - 20;
            a = std::ldexp(1.0 + rng.Uniform01(), ea) * (rng.Below(2) ? -1 : 1);
            b = std::ldexp(1.0 + rng.Uniform01(), e - ea);
            break;
          }
          case 2: {  // products from 2^-1000 to 2^1000 (most inputs fall back)
            const int e = -1000 + static_cast<int>(rng.Below(2001));
            a = std::ldexp(rng.Normal(), e / 2);
            b = std::ldexp(rng.Normal(), e - e / 2);
            break;
          }
          case 3:  // subnormal factors times large ones
            a = (rng.Below(2) ? -1.0 : 1.0) *
                std::ldexp(static_cast<double>(rng.Below(1ULL << 52)), -1074);
            b = exp_normal(60, 1000);
            break;
          case 4:  // ill-conditioned: big products cancelling to far below them
            a = exp_normal(-100, 100);
            b = exp_normal(-100, 100);
            break;
          default:  // products that cancel exactly (second half negates the first)
            a = exp_normal(-300, 300);
            b = exp_normal(-300, 300);
        }
      }
      if (kind == 4 || kind == 5) {
        for (std::uint64_t i = n / 2; i < n; ++i) {
          x[i] = x[i - n / 2];
          (rng.Below(2) ? x[i].a : x[i].b) *= -1;  // one factor negated: exact cancellation
        }
        for (std::uint64_t i = n; i > 1; --i) std::swap(x[i - 1], x[rng.Below(i)]);
      }
      if (kind == 4) x.push_back({0x1p-450, std::ldexp(1.0 + rng.Uniform01(), -450)});
      if (rng.Below(20) == 0 && n > 0) {  // a special value somewhere
        const double s[] = {kNaNd, kInfd, -kInfd};
        auto& p = x[rng.Below(n)];
        p.a = s[rng.Below(3)];
        if (rng.Below(2)) p.b = 0.0;  // inf * 0 (or NaN * 0)
      }
      RequireSameDot(x, "kind " + std::to_string(kind), seed, tally);
    }
  }
  std::cout << "ReferenceDotFast == ReferenceDot in " << tally.cases << " cases (" << fixed_cases
            << " fixed, " << edges.size() << " range edges flagged as documented), " << tally.served
            << " served by the products scan, the rest by the fallback\n";
  CHECK(tally.served > tally.cases / 2);  // the fast path is what most cases test

  // One larger normal input (carrier replay-bench times the two; this only compares them).
  Rng rng(6265);
  DotPairs big(200000);
  for (auto& [a, b] : big) {
    a = rng.Normal();
    b = rng.Normal();
  }
  const reference::Reference slow = reference::ReferenceDot(big);
  const reference::Reference fast = reference::ReferenceDotFast(big);
  test::RequireSameReference(slow, fast);
}

// ChunkSum's products path against an independent exact sum: each product split exactly as
// p + e (p = a * b, e = fma(a, b, -p): exact for products far from the double range's ends)
// into ExactSum, canonical state limb for limb; over inputs that cross carry passes, with every
// limb near its bound, with lanes whose carries cancel, split in three parts and merged.
TEST_CASE("ChunkSum's products equal ExactSum of exact two-product splits",
          "[fast][reference][fast_sum]") {
  const std::uint64_t seed = 7272;
  Rng rng(seed);
  const std::size_t pass =
      reference::ChunkSum::kLanes * reference::ChunkSum::kBlock;  // terms per carry pass
  DotTally tally;
  auto check = [&](const DotPairs& x, const std::string& kind) {
    INFO("reproduce: seed=" << seed << " n=" << x.size() << " kind=" << kind
                            << " pairs=" << JoinDotPairs(x));
    reference::ExactSum::State want = reference::ExactSum::Identity();
    for (const auto& [a, b] : x) {
      const double p = a * b;
      reference::ExactSum::Add(want, p);
      reference::ExactSum::Add(want, std::fma(a, b, -p));
    }
    want = reference::ExactSum::Canonical(want);
    const auto whole = std::make_unique<reference::ChunkSum>();
    whole->ScanProducts(&x.front().a, &x.front().b, x.size(), 2);
    REQUIRE(!whole->OutOfProductRange());
    whole->Finish();
    // Three parts of random lengths, merged out of order (as threads would be).
    const std::size_t cut1 = rng.Below(x.size() + 1), cut2 = cut1 + rng.Below(x.size() - cut1 + 1);
    std::vector<std::unique_ptr<reference::ChunkSum>> part;
    for (int k = 0; k < 3; ++k) part.push_back(std::make_unique<reference::ChunkSum>());
    const double* ab = &x.front().a;
    part[0]->ScanProducts(ab, ab + 1, cut1, 2);
    part[1]->ScanProducts(ab + 2 * cut1, ab + 2 * cut1 + 1, cut2 - cut1, 2);
    part[2]->ScanProducts(ab + 2 * cut2, ab + 2 * cut2 + 1, x.size() - cut2, 2);
    part[2]->Merge(*part[0]);
    part[2]->Merge(*part[1]);
    part[2]->Finish();
    INFO("split at " << cut1 << ", " << cut2);
    for (int i = 0; i < reference::ExactSum::kLimbs; ++i) {
      INFO("limb " << i);
      REQUIRE(whole->Products().limb[i] == want.limb[i]);
      REQUIRE(part[2]->Products().limb[i] == want.limb[i]);
    }
    REQUIRE(whole->Products().pending == want.pending);
    REQUIRE(part[2]->ProductTop() == whole->ProductTop());
    REQUIRE(part[2]->ProductLow() == whole->ProductLow());
    REQUIRE(!part[2]->OutOfProductRange());
    RequireSameDot(x, kind, seed, tally);
  };
  for (const std::size_t n : {pass - 1, pass, pass + 3, 3 * pass + 7}) {
    const std::string at = " n=" + std::to_string(n);
    DotPairs x(n);
    for (auto& p : x) p = {Big(450), Big(450)};  // one sign, every limb near its bound
    check(x, "largest, one sign" + at);
    for (auto& p : x) p = {-Big(static_cast<int>(rng.Below(64))), Big(0)};  // every q mod 32
    check(x, "negative, all shifts" + at);
    for (std::size_t i = 0; i < n; ++i)  // +p in one lane, -p in the next: carries cancel
      x[i] = {(i % 2 ? -1.0 : 1.0) * Big(static_cast<int>(rng.Below(40)) - 20), Big(3)};
    x[n / 2].b = 0x1p-30;
    check(x, "alternating cancellation" + at);
    for (auto& p : x) {
      const int e = static_cast<int>(rng.Below(1701)) - 850;
      p = {std::ldexp(rng.Normal(), e / 2), std::ldexp(rng.Normal(), e - e / 2)};
    }
    x[n / 3] = {0.0, 1e300};  // a zero product
    check(x, "products from 2^-850 to 2^850" + at);
    for (auto& p : x)
      p = {std::ldexp(static_cast<double>(rng.Below(1ULL << 52)), -1074), Big(900) * rng.Normal()};
    check(x, "subnormal factors" + at);
    for (std::size_t i = 0; i < n / 2; ++i)
      x[i] = {std::ldexp(rng.Normal(), static_cast<int>(rng.Below(600)) - 300), rng.Normal()};
    for (std::size_t i = n / 2; i < n; ++i) x[i] = {x[i - n / 2].a, -x[i - n / 2].b};
    if (n % 2) x[n - 1] = {0.0, 0.0};
    check(x, "exact zero" + at);
    // Special values and a range edge after a carry pass: the fallback answers.
    DotPairs z(n, {1.5, -0.75});
    z[n - 1] = {kNaNd, 1.0};
    RequireSameDot(z, "nan last" + at, seed, tally);
    z[n - 1] = {-kInfd, 2.0};
    RequireSameDot(z, "-inf last" + at, seed, tally);
    z[1] = {0.0, kInfd};
    RequireSameDot(z, "inf * 0 and -inf" + at, seed, tally);
    DotPairs w(n, {1.5, -0.75});
    w[n - 1] = {0x1p511, 0x1p510};
    RequireSameDot(w, "q = 1991 last" + at, seed, tally);
    w[n - 1] = {0x1p-486, 0x1p-485};
    RequireSameDot(w, "q = -1 last" + at, seed, tally);
  }
  std::cout << "ChunkSum's products == ExactSum and ReferenceDot on inputs of " << pass - 1
            << " to " << 3 * pass + 7 << " pairs (" << tally.cases << " cases, " << tally.served
            << " served)\n";
}

TEST_CASE("ReferenceDotFast split across PassThreads equals the one-thread pass",
          "[fast][reference][fast_sum]") {
  // precision/parallel_pass.hpp: above 2 kMinPassPart pairs the products scan runs in parts
  // merged exactly; the inputs mix binades, the largest product is in the first part only and
  // the lowest bit in the last part only.
  const std::uint64_t seed = 20261203;
  Rng rng(seed);
  const std::uint64_t n = 2 * kMinPassPart + 4099;
  DotPairs x(n);
  for (auto& [a, b] : x) {
    a = std::ldexp(rng.Normal(), static_cast<int>(rng.Below(80)) - 40);
    b = std::ldexp(rng.Normal(), static_cast<int>(rng.Below(80)) - 40);
  }
  x[7] = {0x1p+60, 0x1p+60};
  x[n - 1] = {0x1p-300, 0x1p-20};
  std::vector<double> va(n), vb(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    va[i] = x[i].a;
    vb[i] = x[i].b;
  }
  const StoredColumn ca(va), cb(vb);
  const reference::Reference want = reference::ReferenceDot(x);
  REQUIRE(DotServed(x));
  for (const int threads : {1, 2, 3}) {
    const PassThreadsScope scope(threads);
    INFO("reproduce: seed=" << seed << " n=" << n << " kind=mixed binades threads=" << threads
                            << " parts=" << PassParts(n));
    if (threads > 1) REQUIRE(PassParts(n) >= 2);
    test::RequireSameReference(want, reference::ReferenceDotFast(x));
    test::RequireSameReference(want, reference::ReferenceDotFast(ca, cb));
    // A special value in the last part only: the merged flag sends it to the fallback.
    DotPairs y = x;
    y[n - 2] = {kInfd, 0.0};
    test::RequireSameReference(reference::ReferenceDotFast(y), reference::ReferenceDot(y));
  }
  REQUIRE(PassThreads() == 1);  // the scopes restored the default
  std::cout << "ReferenceDotFast split over 1, 2 and 3 pass threads equals ReferenceDot at n = "
            << n << "\n";
}

namespace {

StoredColumn BuildDotColumn(const Format* f, const std::vector<double>& v) {
  StoredColumn::Builder builder(f, v.size());
  const std::size_t piece = 1000;  // several Appends, not aligned with the chunks
  for (std::size_t lo = 0; lo < v.size(); lo += piece)
    builder.Append(std::span<const double>(v).subspan(lo, std::min(piece, v.size() - lo)));
  return builder.Finish();
}

DotPairs Zip(const std::vector<double>& a, const std::vector<double>& b) {
  DotPairs x(a.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = {a[i], b[i]};
  return x;
}

}  // namespace

TEST_CASE("ReferenceDotFast and ReferenceAffine read two StoredColumns as their pairs",
          "[fast][reference][fast_sum]") {
  const std::uint64_t seed = 8282;
  Rng rng(seed);
  int dot_cases = 0, affine_cases = 0;
  const std::vector<std::pair<std::string, StoredColumn::Layout>> formats = {
      {"bf16", StoredColumn::Layout::kCode16},
      {"fp16", StoredColumn::Layout::kCode16},
      {"fp8e4m3", StoredColumn::Layout::kCode8},
      {"fp32", StoredColumn::Layout::kFloat},
      {"fp64", StoredColumn::Layout::kDouble}};
  const Format fp64 = ParseFormat("fp64");
  for (const auto& [name, layout] : formats) {
    const Format f = ParseFormat(name);
    for (const std::uint64_t n : {0, 1, 7, 600, 4096, 4097, 10000}) {
      for (int kind = 0; kind < 3; ++kind) {
        std::vector<double> a(n), b(n);
        for (std::uint64_t i = 0; i < n; ++i) {
          const double scale =
              kind == 1 ? std::ldexp(1.0, static_cast<int>(rng.Below(16)) - 8) : 1.0;
          a[i] = RoundToFormat(scale * rng.Normal(), f, Rounding::kNearestEven);
          b[i] = RoundToFormat(rng.Normal() / scale, f, Rounding::kNearestEven);
        }
        if (kind == 2 && n > 0) {  // a special value: inf where the format has one, else NaN
          a[n / 3] = RoundToFormat(-3.0, f, Rounding::kNearestEven);
          a[n / 2] = f.has_inf ? kInfd : kNaNd;
        }
        const StoredColumn ca = BuildDotColumn(&f, a), cb = BuildDotColumn(&f, b);
        const DotPairs x = Zip(a, b);
        INFO("reproduce: seed=" << seed << " n=" << n << " kind=" << kind << " format=" << name
                                << " layout=" << StoredColumn::LayoutName(ca.layout())
                                << " pairs=" << JoinDotPairs(x));
        REQUIRE(ca.layout() == layout);  // inf and NaN have codes too
        const reference::Reference want = reference::ReferenceDot(x);
        test::RequireSameReference(want, reference::ReferenceDotFast(x));
        test::RequireSameReference(want, reference::ReferenceDotFast(ca, cb));
        // Mixed layouts: the first column as fp64 (read in place), the second packed.
        test::RequireSameReference(want, reference::ReferenceDotFast(BuildDotColumn(&fp64, a), cb));
        ++dot_cases;
        if (n <= 4097 && kind != 1) {  // affine: a few inputs per format, one past a chunk
          std::vector<double> g(n);
          for (auto& v : g) v = RoundToFormat(1.0 + rng.Normal() / 64, f, Rounding::kNearestEven);
          if (kind == 2 && n > 0) g[n / 2] = a[n / 2];
          const StoredColumn cg = BuildDotColumn(&f, g);
          test::RequireSameReference(reference::ReferenceAffine(Zip(g, b)),
                                     reference::ReferenceAffine(cg, cb));
          ++affine_cases;
        }
      }
    }
  }
  // Affine over more than two chunks, packed and in place.
  {
    const Format bf16 = ParseFormat("bf16");
    const std::uint64_t n = 2 * StoredColumn::kChunk + 123;
    std::vector<double> g(n), b(n);
    for (std::uint64_t i = 0; i < n; ++i) {
      g[i] = RoundToFormat(1.0 + rng.Normal() / 256, bf16, Rounding::kNearestEven);
      b[i] = RoundToFormat(rng.Normal(), bf16, Rounding::kNearestEven);
    }
    INFO("reproduce: seed=" << seed << " n=" << n << " kind=affine, three chunks");
    const reference::Reference want = reference::ReferenceAffine(Zip(g, b));
    test::RequireSameReference(
        want, reference::ReferenceAffine(BuildDotColumn(&bf16, g), BuildDotColumn(&bf16, b)));
    test::RequireSameReference(
        want, reference::ReferenceAffine(StoredColumn(g), BuildDotColumn(&bf16, b)));
    affine_cases += 2;
  }
  const StoredColumn three(std::vector<double>{1.0, 2.0, 3.0}), two(std::vector<double>{1.0, 2.0});
  REQUIRE_THROWS_AS(reference::ReferenceDotFast(three, two), std::invalid_argument);
  REQUIRE_THROWS_AS(reference::ReferenceAffine(three, two), std::invalid_argument);
  std::cout << "ReferenceDotFast(column, column) == ReferenceDot in " << dot_cases
            << " cases, ReferenceAffine(column, column) == ReferenceAffine(pairs) in "
            << affine_cases << " cases\n";
}
