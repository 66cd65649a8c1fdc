// StoredColumn (precision/stored_column.hpp): every value of every predefined format (and of
// small custom ones) comes back bit for bit from the layout the format is given; values a layout
// cannot hold (a NaN payload, a value outside the format) turn the column into fp64 without
// changing any value; and the references that read a column by chunks (ReferenceSumFast,
// ReferenceWelfordFast, ReferenceNorm2Fast, ReferenceLse, ReferenceMax, ReferenceArgMax) give
// the Reference of their span form field for field, on one thread and split across two; a
// column packed across pass threads is the one-thread column, and the lse bound's softmax
// statistics are the same on any number of pass threads.
#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "precision/format.hpp"
#include "precision/op_bounds.hpp"
#include "precision/parallel_pass.hpp"
#include "precision/reference/fast_sum.hpp"
#include "precision/reference/fixed_exp.hpp"
#include "precision/reference/reference.hpp"
#include "precision/rounding.hpp"
#include "precision/stored_column.hpp"
#include "support/reference_check.hpp"
#include "support/test_support.hpp"

using namespace carrier;
using carrier::test::Rng;

namespace {

// Every finite value of f (both signs, both zeros), +-inf where f has it, and one NaN.
std::vector<double> AllValues(const Format& f) {
  std::vector<double> v;
  const int p = f.precision;
  const double max = f.MaxFinite();
  auto both = [&](double a) {
    v.push_back(a);
    v.push_back(-a);
  };
  both(0.0);
  if (f.subnormals)
    for (int k = 1; k < (1 << (p - 1)); ++k) both(std::ldexp(k, f.emin - p + 1));
  for (int e = f.emin; e <= f.emax; ++e)
    for (int k = 0; k < (1 << (p - 1)); ++k) {
      const double a = std::ldexp((1 << (p - 1)) + k, e - p + 1);
      if (a <= max) both(a);
    }
  if (f.has_inf) both(std::numeric_limits<double>::infinity());
  v.push_back(std::numeric_limits<double>::quiet_NaN());
  return v;
}

bool SameBits(const std::vector<double>& a, const std::vector<double>& b, std::size_t& at) {
  if (a.size() != b.size()) {
    at = std::min(a.size(), b.size());
    return false;
  }
  for (at = 0; at < a.size(); ++at)
    if (std::bit_cast<std::uint64_t>(a[at]) != std::bit_cast<std::uint64_t>(b[at])) return false;
  return true;
}

StoredColumn Build(const Format* f, const std::vector<double>& v, std::size_t piece) {
  StoredColumn::Builder b(f, v.size());
  for (std::size_t lo = 0; lo < v.size(); lo += piece)
    b.Append(std::span<const double>(v).subspan(lo, std::min(piece, v.size() - lo)));
  return b.Finish();
}

// The column gives v back: whole, by Read at odd offsets, and by ForEachChunk over a range.
void RequireGivesBack(const StoredColumn& c, const std::vector<double>& v,
                      const std::string& what) {
  INFO(what << ": n=" << v.size() << " layout=" << StoredColumn::LayoutName(c.layout()));
  REQUIRE(c.size() == v.size());
  std::size_t at = 0;
  const std::vector<double> back = c.ToDoubles();
  INFO("first difference at " << at);
  REQUIRE(SameBits(back, v, at));
  for (std::uint64_t lo : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{v.size() / 3}}) {
    if (lo >= v.size()) continue;
    const std::size_t count = std::min<std::size_t>(v.size() - lo, 5000);
    std::vector<double> got(count);
    c.Read(lo, count, got.data());
    REQUIRE(SameBits(got,
                     std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(lo),
                                         v.begin() + static_cast<std::ptrdiff_t>(lo + count)),
                     at));
  }
  // The codes, where the layout has them, name the same doubles in the code table.
  const std::span<const double> table = c.CodeValues();
  if (table.empty()) {
    std::uint16_t code = 0;
    if (!v.empty()) CHECK_THROWS_AS(c.ReadCodes(0, 1, &code), std::logic_error);
  } else {
    std::vector<std::uint16_t> codes(v.size());
    c.ReadCodes(0, v.size(), codes.data());
    std::vector<double> named(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) named[i] = table[codes[i]];
    REQUIRE(SameBits(named, v, at));
    CHECK_THROWS_AS(c.ReadCodes(v.size(), 1, codes.data()), std::out_of_range);
  }
  std::vector<double> chunks;
  std::uint64_t next = v.size() / 4;
  c.ForEachChunk(v.size() / 4, v.size(), [&](std::uint64_t lo, std::span<const double> s) {
    REQUIRE(lo == next);
    REQUIRE(s.size() <= StoredColumn::kChunk);
    next += s.size();
    chunks.insert(chunks.end(), s.begin(), s.end());
  });
  REQUIRE(SameBits(
      chunks, std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(v.size() / 4), v.end()),
      at));
}

}  // namespace

TEST_CASE("StoredColumn keeps every value of each format in its layout", "[fast][stored_column]") {
  const std::vector<std::pair<std::string, StoredColumn::Layout>> formats = {
      {"fp8e4m3", StoredColumn::Layout::kCode8},
      {"fp8e4m3sat", StoredColumn::Layout::kCode8},
      {"fp8e5m2", StoredColumn::Layout::kCode8},
      {"fp16", StoredColumn::Layout::kCode16},
      {"bf16", StoredColumn::Layout::kCode16},
      {"custom:p=5,emin=-10,emax=10,subnormals=0", StoredColumn::Layout::kCode16},
      {"custom:p=2,emin=-1022,emax=1023", StoredColumn::Layout::kCode16},
      {"tf32", StoredColumn::Layout::kFloat},
      {"fp32", StoredColumn::Layout::kFloat},
      {"fp64", StoredColumn::Layout::kDouble},
  };
  for (const auto& [name, layout] : formats) {
    const Format f = ParseFormat(name);
    REQUIRE(StoredColumn::LayoutFor(&f) == layout);
    // Every value where there are few enough (16-bit layouts); else values rounded from
    // random doubles of every magnitude, with the specials.
    std::vector<double> v;
    if (layout == StoredColumn::Layout::kCode8 || layout == StoredColumn::Layout::kCode16) {
      v = AllValues(f);
    } else {
      Rng rng(17);
      for (int i = 0; i < 20000; ++i)
        v.push_back(RoundToFormat(std::ldexp(rng.Normal(), static_cast<int>(rng.Below(300)) - 150),
                                  f, Rounding::kNearestEven));
      for (double s :
           {0.0, -0.0, f.MaxFinite(), -f.MaxFinite(), f.MinSubnormal(),
            std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()})
        v.push_back(s);
    }
    const StoredColumn c = Build(&f, v, 1000);
    std::cout << name << ": " << v.size() << " values, layout "
              << StoredColumn::LayoutName(c.layout()) << ", " << c.Bytes() << " bytes\n";
    CHECK(c.layout() == layout);
    const std::uint64_t per = layout == StoredColumn::Layout::kCode8    ? 1
                              : layout == StoredColumn::Layout::kCode16 ? 2
                              : layout == StoredColumn::Layout::kFloat  ? 4
                                                                        : 8;
    CHECK(c.Bytes() == per * v.size());
    RequireGivesBack(c, v, name);
    // CodeValues holds every value the column gives back (the in-place test reads it instead of
    // the column: register.hpp ColumnConvertsToItself); none for the other layouts.
    const std::span<const double> table = c.CodeValues();
    if (per > 2) {
      CHECK(table.empty());
      continue;
    }
    std::unordered_set<std::uint64_t> codes;
    for (const double t : table) codes.insert(std::bit_cast<std::uint64_t>(t));
    std::size_t missing = 0;
    for (const double x : c.ToDoubles())
      missing += codes.count(std::bit_cast<std::uint64_t>(x)) == 0;
    std::cout << "  code table: " << table.size() << " entries, " << missing
              << " column values outside it\n";
    CHECK(missing == 0);
  }
}

TEST_CASE("StoredColumn turns fp64 for a value its layout cannot give back",
          "[fast][stored_column]") {
  const Format bf16 = ParseFormat("bf16");
  const Format fp32 = ParseFormat("fp32");
  const Format e4m3 = ParseFormat("fp8e4m3");  // no infinity
  const double payload_nan = std::bit_cast<double>(std::uint64_t{0x7ff0000000000123});
  for (const Format* f : {&bf16, &fp32, &e4m3}) {
    for (const double odd : {payload_nan, 1.0 / 3.0, 1e300, std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::quiet_NaN()}) {
      std::vector<double> v;
      for (int i = 0; i < 9000; ++i) v.push_back(std::ldexp(1.0 + (i % 7) / 8.0, i % 10 - 5));
      v[7000] = odd;  // after more than one piece has been packed
      const StoredColumn c = Build(f, v, 4096);
      INFO(f->name << " with " << test::Exact(odd));
      // -NaN (the sign bit set) is a value of every layout, inf of those whose format has it:
      // only the others change the layout.
      const bool representable =
          (std::isnan(odd) &&
           std::bit_cast<std::uint64_t>(odd) != std::bit_cast<std::uint64_t>(payload_nan)) ||
          (std::isinf(odd) && f->has_inf);
      CHECK((c.layout() == StoredColumn::Layout::kDouble) == !representable);
      RequireGivesBack(c, v, f->name + " fallback");
    }
  }
  // A column of doubles given whole.
  const StoredColumn d(std::vector<double>{1.0, -0.0, payload_nan});
  CHECK(d.layout() == StoredColumn::Layout::kDouble);
  CHECK(d.Doubles().size() == 3);
  RequireGivesBack(d, {1.0, -0.0, payload_nan}, "doubles");
  CHECK_THROWS_AS(d.Read(2, 2, nullptr), std::out_of_range);
}

namespace {

void RequireSameReference(const reference::Reference& want, const reference::Reference& got,
                          const std::string& what) {
  INFO(what);
  test::RequireSameReference(want, got);
}

void RequireSameReferences(const Format& f, const std::vector<double>& v, const std::string& what) {
  const StoredColumn c = Build(&f, v, 1 << 16);
  const std::string w = what + " " + f.name + " n=" + std::to_string(v.size()) + " layout " +
                        StoredColumn::LayoutName(c.layout());
  RequireSameReference(reference::ReferenceSumFast(v), reference::ReferenceSumFast(c), w + " sum");
  RequireSameReference(reference::ReferenceWelfordFast(v), reference::ReferenceWelfordFast(c),
                       w + " welford");
  RequireSameReference(reference::ReferenceNorm2Fast(v), reference::ReferenceNorm2Fast(c),
                       w + " norm2");
  RequireSameReference(reference::ReferenceLse(v), reference::ReferenceLse(c), w + " lse");
  RequireSameReference(reference::ReferenceMax(v), reference::ReferenceMax(c), w + " max");
  RequireSameReference(reference::ReferenceArgMax(v), reference::ReferenceArgMax(c), w + " argmax");
}

}  // namespace

TEST_CASE("References read a StoredColumn as they read its values", "[fast][stored_column]") {
  const std::uint64_t seed = 4242;
  Rng rng(seed);
  int cases = 0;
  for (const char* name : {"bf16", "fp16", "fp8e4m3", "fp8e5m2", "tf32", "fp32"}) {
    const Format f = ParseFormat(name);
    for (int t = 0; t < test::Trials(12); ++t) {
      const std::uint64_t n = t == 0  ? 0
                              : t < 4 ? rng.Below(8)
                                      : rng.Below(t % 3 == 0 ? 30000 : 600);
      std::vector<double> v(n);
      const int kind = t % 4;
      for (auto& x : v) {
        const double r = kind == 0   ? rng.Normal()
                         : kind == 1 ? 3.0 + rng.Normal()  // lse: many equal maxima
                         : kind == 2
                             ? std::ldexp(rng.Normal(), static_cast<int>(rng.Below(40)) - 20)
                             : 1e3 * rng.Normal();
        x = RoundToFormat(r, f, Rounding::kNearestEven);
      }
      if (kind == 3 && n > 2) v[n / 2] = std::numeric_limits<double>::infinity();  // specials
      INFO("reproduce: seed=" << seed << " trial=" << t << " kind=" << kind);
      RequireSameReferences(f, v, "kind " + std::to_string(kind));
      ++cases;
    }
  }
  // Long enough for two pass threads (precision/parallel_pass.hpp), and across chunk edges.
  {
    const PassThreadsScope threads(2);
    const Format f = ParseFormat("bf16");
    std::vector<double> v(2 * kMinPassPart + 4099);
    for (auto& x : v) x = RoundToFormat(rng.Normal(), f, Rounding::kNearestEven);
    RequireSameReferences(f, v, "two threads");
    ++cases;
  }
  std::cout << "references equal on packed columns in " << cases << " cases\n";
}

TEST_CASE("A column packed across pass threads is the one-thread column", "[fast][stored_column]") {
  // Builder::Append splits the encoding across PassThreads() (precision/parallel_pass.hpp);
  // a value the layout cannot give back, in any part, must end the coded run exactly where one
  // pass in order ends it (then the column turns fp64 from there on, as on one thread).
  const std::uint64_t seed = 977;
  Rng rng(seed);
  const std::size_t n = 2 * kMinPassPart + 4099;  // two parts of at least kMinPassPart
  int cases = 0;
  for (const char* name : {"bf16", "fp32"}) {
    const Format f = ParseFormat(name);
    std::vector<double> v(n);
    for (auto& x : v) x = RoundToFormat(rng.Normal(), f, Rounding::kNearestEven);
    // none; one in the second part; one in each part (the first decides)
    for (int odd = 0; odd < 3; ++odd) {
      std::vector<double> w = v;
      if (odd >= 1) w[n - 100] = 1.0 / 3.0;
      if (odd == 2) w[kMinPassPart / 2] = 1.0 / 3.0;
      for (const std::size_t piece : {n, kMinPassPart + 7}) {
        INFO("reproduce: seed=" << seed << " " << name << " odd=" << odd << " piece=" << piece);
        StoredColumn one, three;
        {
          const PassThreadsScope threads(1);
          one = Build(&f, w, piece);
        }
        {
          const PassThreadsScope threads(3);
          three = Build(&f, w, piece);
        }
        CHECK(one.layout() == three.layout());
        CHECK((three.layout() == StoredColumn::Layout::kDouble) == (odd >= 1));
        std::size_t at1 = 0, at3 = 0;
        const bool same1 = SameBits(one.ToDoubles(), w, at1);
        const bool same3 = SameBits(three.ToDoubles(), w, at3);
        INFO("first difference: one thread at " << at1 << ", three threads at " << at3);
        REQUIRE(same1);
        REQUIRE(same3);
        ++cases;
      }
    }
  }
  std::cout << "packed columns equal across pass threads in " << cases << " cases\n";
}

TEST_CASE("The softmax weights' statistics are the one loop's on any number of pass threads",
          "[fast][stored_column]") {
  // SoftmaxSpreadOf and the lse bound (precision/op_bounds.cpp) take exp(x_i - M) (correctly
  // rounded to long double: reference::ExpShiftedLongDouble, tested in test_reference_fast.cpp)
  // split across PassThreads() and sum in index order: every statistic equals, bit for bit, the one
  // loop in long double written here, for the values given as a span and as a packed column; for
  // bf16 and fp8e4m3 the packed column (a table of 2^16 and 2^8 codes, here under half of n) takes
  // each code's exp once and looks them up.
  const std::uint64_t seed = 31337;
  Rng rng(seed);
  const std::size_t n = 3 * (std::size_t{1} << 17) + 5;  // three exp parts and a remainder
  for (const char* name : {"fp32", "bf16", "fp8e4m3"}) {
    const Format f = ParseFormat(name);
    std::vector<double> v(n);
    for (auto& x : v) x = RoundToFormat(2 * rng.Normal() + 1, f, Rounding::kNearestEven);
    long double m = -INFINITY, d = 0, spread = 0, weighted_abs = 0;
    for (double x : v) m = std::max<long double>(m, x);
    const auto md = static_cast<double>(m);
    for (double x : v) d += reference::ExpShiftedLongDouble(x, md);
    for (double x : v) {
      const long double w = reference::ExpShiftedLongDouble(x, md) / d;
      if (w > 0) {
        spread += w * (m - x);
        weighted_abs += w * std::fabs(static_cast<long double>(x));
      }
    }
    const long double lse[1] = {m + std::log(d)};
    const StoredColumn c = Build(&f, v, n);
    CHECK(c.CodeValues().empty() == (std::string(name) == "fp32"));
    for (const int threads : {1, 2, 3}) {
      const PassThreadsScope scope(threads);
      for (const bool packed : {false, true}) {
        INFO("reproduce: seed=" << seed << " format=" << name << " n=" << n
                                << " threads=" << threads << " packed=" << packed);
        BoundInputs in;
        if (packed) {
          in.column = &c;
        } else {
          in.x = v;
        }
        in.exact = lse;
        BoundMemo memo;
        for (BoundMemo* through : {static_cast<BoundMemo*>(nullptr), &memo, &memo}) {
          in.memo = through;
          const SoftmaxSpread s = SoftmaxSpreadOf(in);
          REQUIRE(s.finite);
          INFO("spread " << test::Exact(static_cast<double>(s.spread)) << " want "
                         << test::Exact(static_cast<double>(spread)) << "; sum w|x| "
                         << test::Exact(static_cast<double>(s.weighted_abs)) << " want "
                         << test::Exact(static_cast<double>(weighted_abs)));
          CHECK(std::memcmp(&s.m, &m, 10) == 0);
          CHECK(std::memcmp(&s.spread, &spread, 10) == 0);
          CHECK(std::memcmp(&s.weighted_abs, &weighted_abs, 10) == 0);
        }
      }
    }
    std::cout << name << ": softmax spread " << static_cast<double>(spread) << ", sum w|x| "
              << static_cast<double>(weighted_abs) << " equal on 1, 2, 3 threads\n";
  }
}

TEST_CASE("PipelinePass hands use every block once, in order, filled as one thread fills it",
          "[fast][stored_column]") {
  // PipelinePass (precision/parallel_pass.hpp, the lse/softmax bounds' exps): on 1 to 4 pass
  // threads, for lengths around the block size and pieces that do and do not divide it, use
  // sees blocks [0, n) in order, each once, with every value its fill wrote for exactly that
  // index; an exception thrown by fill on any thread, or by use, leaves the pass (no hang).
  auto value = [](std::uint64_t i) { return static_cast<double>((i * 2654435761u) % 1000003); };
  int cases = 0;
  for (const int threads : {1, 2, 3, 4}) {
    const PassThreadsScope scope(threads);
    for (const std::uint64_t block : {8u, 64u}) {
      for (const std::uint64_t piece : {1u, 3u, 8u, 100u}) {
        for (const std::uint64_t n :
             {std::uint64_t{0}, std::uint64_t{1}, block - 1, block, block + 1, 5 * block + 3}) {
          INFO("reproduce: threads=" << threads << " block=" << block << " piece=" << piece
                                     << " n=" << n);
          std::vector<double> slot[2] = {std::vector<double>(block, -1.0),
                                         std::vector<double>(block, -1.0)};
          std::uint64_t next_lo = 0;
          bool ok = true;
          PipelinePass(
              n, block, piece,
              [&](int s, std::uint64_t lo, std::uint64_t len) {
                for (std::uint64_t i = 0; i < len; ++i) slot[s][(lo + i) % block] = value(lo + i);
              },
              [&](int s, std::uint64_t lo, std::uint64_t len) {
                ok = ok && lo == next_lo && len == std::min(block, n - lo) &&
                     s == static_cast<int>(lo / block % 2);
                for (std::uint64_t i = 0; i < len; ++i) {
                  ok = ok && slot[s][i] == value(lo + i);
                  slot[s][i] = -1.0;  // a block not filled again would show
                }
                next_lo = lo + len;
              });
          CHECK(ok);
          CHECK(next_lo == n);
          ++cases;
        }
      }
    }
    for (const std::uint64_t bad : {std::uint64_t{0}, std::uint64_t{37}, std::uint64_t{199}}) {
      INFO("reproduce: threads=" << threads << " fill throws at piece " << bad);
      CHECK_THROWS_AS(PipelinePass(
                          200, 16, 1,
                          [&](int, std::uint64_t lo, std::uint64_t) {
                            if (lo == bad) throw std::runtime_error("fill");
                          },
                          [](int, std::uint64_t, std::uint64_t) {}),
                      std::runtime_error);
    }
    CHECK_THROWS_AS(PipelinePass(
                        200, 16, 1, [](int, std::uint64_t, std::uint64_t) {},
                        [](int, std::uint64_t lo, std::uint64_t) {
                          if (lo == 32) throw std::runtime_error("use");
                        }),
                    std::runtime_error);
  }
  std::cout << "PipelinePass: " << cases << " cases in order on 1 to 4 threads\n";
}

TEST_CASE("A column filled by Put out of order, on two threads, is the appended column",
          "[fast][stored_column]") {
  // Builder::Size + Put (the generator's pass threads encode their pieces in place): ranges
  // written in any order, from several threads at once, give the column that appending the
  // values in index order gives, layout included; a value the layout cannot give back in any
  // range turns the whole column fp64 with every value kept.
  const std::uint64_t seed = 4111;
  Rng rng(seed);
  const std::size_t n = 50000, piece = 4096;
  int cases = 0;
  for (const char* name : {"bf16", "fp32", "fp8e4m3", "fp64"}) {
    const Format f = ParseFormat(name);
    std::vector<double> v(n);
    for (auto& x : v) x = RoundToFormat(rng.Normal(), f, Rounding::kNearestEven);
    for (int odd = 0; odd < 3; ++odd) {  // none; one in a middle range; one in the first and last
      std::vector<double> w = v;
      if (odd == 1) w[n / 2 + 3] = 1.0 / 3.0;
      if (odd == 2) w[5] = w[n - 1] = std::bit_cast<double>(std::uint64_t{0x7ff0000000000123});
      INFO("reproduce: seed=" << seed << " " << name << " odd=" << odd << " n=" << n);
      const StoredColumn appended = Build(&f, w, piece);
      StoredColumn::Builder b(&f, n);
      b.Size(n);
      // The ranges backwards, odd-numbered ones on a second thread.
      const std::size_t ranges = (n + piece - 1) / piece;
      auto put = [&](std::size_t parity) {
        for (std::size_t r = ranges; r-- > 0;) {
          if (r % 2 != parity) continue;
          const std::size_t lo = r * piece;
          b.Put(lo, std::span<const double>(w).subspan(lo, std::min(piece, n - lo)));
        }
      };
      std::thread other(put, 1);
      put(0);
      other.join();
      const StoredColumn filled = b.Finish();
      CHECK(filled.layout() == appended.layout());
      CHECK((filled.layout() == StoredColumn::Layout::kDouble) == (odd > 0 || f.name == "fp64"));
      RequireGivesBack(filled, w, std::string(name) + " put");
      ++cases;
    }
  }
  StoredColumn::Builder small(nullptr, 4);
  small.Size(4);
  CHECK_THROWS_AS(small.Put(3, std::vector<double>{1.0, 2.0}), std::out_of_range);
  // Size's new elements are left unwritten (no zeroing pass): a Put that misses one is an error
  // at Finish, not a column with an unwritten value in it.
  const Format fp32 = ParseFormat("fp32");
  StoredColumn::Builder partial(&fp32, 8);
  partial.Size(8);
  partial.Put(0, std::vector<double>{1.0, 2.0, 3.0, 4.0, 5.0});
  CHECK_THROWS_AS(partial.Finish(), std::logic_error);
  std::cout << "columns filled by Put equal the appended ones in " << cases << " cases\n";
}

TEST_CASE("The vector and the portable column encoders and decoders agree",
          "[fast][stored_column]") {
  // Builder's encoder takes blocks of normal values eight at a time where the CPU has AVX-512
  // F+DQ (precision/stored_column_x86.hpp), and Read decodes eight codes per gather: their
  // columns (layout and values) must be the portable loops' for every format, with values the
  // fast path must hand back to the careful one (zeros, subnormals, inf, NaN, values without a
  // code) anywhere in a block, and each column must read back the same through either decoder.
  const std::uint64_t seed = 8821;
  Rng rng(seed);
  const bool vector = UseColumnCodesVectorised(true);
  std::cout << "vector encoder on this CPU: " << (vector ? "yes" : "no (portable twice)") << "\n";
  int cases = 0;
  for (const char* name : {"bf16", "fp16", "fp8e4m3", "fp8e5m2", "fp32"}) {
    const Format f = ParseFormat(name);
    std::vector<double> normals(5000);
    for (auto& x : normals) x = RoundToFormat(rng.Normal(), f, Rounding::kNearestEven);
    // Every value of a coded format; fp32 (not coded): its specials and subnormals.
    const std::vector<double> all =
        f.name == "fp32" ? std::vector<double>{0.0,
                                               -0.0,
                                               std::numeric_limits<double>::infinity(),
                                               std::numeric_limits<double>::quiet_NaN(),
                                               0x1p-149,
                                               -0x1p-126}
                         : AllValues(f);
    for (int odd = 0; odd < 4; ++odd) {
      std::vector<double> v = normals;
      if (odd == 1) v.insert(v.begin() + 1000, all.begin(), all.end());  // every value, mid-run
      if (odd == 2) v[4093] = 1.0 / 3.0;  // no code: the column turns fp64 here
      if (odd == 3) v[7] = f.has_inf ? -std::numeric_limits<double>::infinity() : 0.0;
      INFO("reproduce: seed=" << seed << " " << name << " odd=" << odd << " n=" << v.size());
      UseColumnCodesVectorised(false);
      const StoredColumn portable = Build(&f, v, 1000);
      UseColumnCodesVectorised(true);
      const StoredColumn fast = Build(&f, v, 1000);
      CHECK(portable.layout() == fast.layout());
      for (const bool read_vector : {false, true}) {  // each column read by both decoders
        UseColumnCodesVectorised(read_vector);
        const std::string reader = read_vector ? ", vector reader" : ", portable reader";
        RequireGivesBack(portable, v, std::string(name) + " portable" + reader);
        RequireGivesBack(fast, v, std::string(name) + " vector" + reader);
      }
      ++cases;
    }
  }
  UseColumnCodesVectorised(vector);
  std::cout << "vector and portable encoders and decoders agree in " << cases << " cases\n";
}
