// The compute scalars of precision/: EmulatedOracle (conversions, special values, signed zeros,
// exp/log against MPFR, the dynamic format and its thread isolation, stochastic rounding),
// Half and BFloat16 arithmetic (bit for bit equal to EmulatedOracle fp16/bf16, i.e. correctly
// rounded), and Mpfr (known values, precision rules, threads with different precisions).
#include <atomic>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "precision/scalars.hpp"
#include "support/test_support.hpp"

namespace carrier {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool Same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

// A random double spread over many binades (both signs), occasionally special.
double RandomDouble(test::Rng& rng) {
  switch (rng.Below(16)) {
    case 0:
      return kInf;
    case 1:
      return -kInf;
    case 2:
      return kNaN;
    case 3:
      return (rng.Next() & 1) ? 0.0 : -0.0;
    default:
      return std::ldexp(rng.Uniform(-2, 2), static_cast<int>(rng.Below(300)) - 150);
  }
}

// ---------------------------------------------------------------------------------------
// EmulatedOracle

template <class T>
void CheckConversions(test::Rng& rng) {
  const Format& f = T::GetFormat();
  for (int i = 0; i < test::Trials(20000); ++i) {
    const double x = RandomDouble(rng);
    const double got = T(x).Value();
    // Finite inputs round like RoundToFormat; +-inf and NaN convert to themselves.
    const double want = std::isfinite(x) ? RoundToFormat(x, f, T::kRounding) : x;
    INFO(f.name << " " << RoundingName(T::kRounding) << " from " << test::Exact(x) << ": got "
                << test::Exact(got) << " want " << test::Exact(want));
    REQUIRE(Same(got, want));
    const float xf = static_cast<float>(x);
    REQUIRE(Same(T(xf).Value(),
                 std::isfinite(xf) ? RoundToFormat(xf, f, T::kRounding) : static_cast<double>(xf)));
  }
}

TEST_CASE("emulated conversions round once into the format", "[fast][scalars]") {
  test::Rng rng(11);
  CheckConversions<EmulatedOracle<Fp8E4M3Tag>>(rng);
  CheckConversions<EmulatedOracle<Fp8E5M2Tag, Rounding::kUp>>(rng);
  CheckConversions<EmulatedOracle<Fp16Tag, Rounding::kTowardZero>>(rng);
  CheckConversions<EmulatedOracle<BF16Tag, Rounding::kDown>>(rng);
  CheckConversions<EmulatedOracle<TF32Tag, Rounding::kNearestAway>>(rng);
  CheckConversions<EmulatedOracle<Fp32Tag, Rounding::kToOdd>>(rng);
}

TEST_CASE("emulated integer and long double conversions avoid double rounding", "[fast][scalars]") {
  // 2^60 + 2^52 + 1 is just above a bf16 midpoint; as a double it becomes the midpoint itself
  // (2^60 + 2^52), which ties-to-even would send down to 2^60.
  const std::uint64_t n = (std::uint64_t{1} << 60) + (std::uint64_t{1} << 52) + 1;
  const double up = 0x1p60 + 0x1p53;
  CHECK(EmulatedOracle<BF16Tag>(n).Value() == up);
  CHECK(EmulatedOracle<BF16Tag>(-static_cast<std::int64_t>(n)).Value() == -up);
  CHECK(ScalarTraits<EmulatedOracle<BF16Tag>>::FromCount(n).Value() == up);
  CHECK(EmulatedOracle<BF16Tag>(static_cast<long double>(n)).Value() == up);
  CHECK(ScalarTraits<BFloat16>::FromCount(n).ToDouble() == up);
  CHECK(EmulatedOracle<BF16Tag, Rounding::kTowardZero>(n).Value() == 0x1p60);
  CHECK(EmulatedOracle<Fp16Tag>(2049).Value() == 2048);  // tie to even
  CHECK(EmulatedOracle<Fp16Tag>(2051).Value() == 2052);
  CHECK(EmulatedOracle<Fp16Tag, Rounding::kUp>(2049).Value() == 2050);
  CHECK(EmulatedOracle<Fp8E4M3Tag>(17).Value() == 16);
  CHECK(static_cast<float>(EmulatedOracle<Fp32Tag>(0.1)) == 0.1f);
}

TEST_CASE("emulated special values and overflow", "[fast][scalars]") {
  using E4 = EmulatedOracle<Fp8E4M3Tag>;
  using E4z = EmulatedOracle<Fp8E4M3Tag, Rounding::kTowardZero>;
  using E4sat = EmulatedOracle<Fp8E4M3SatTag>;
  using H = EmulatedOracle<Fp16Tag>;
  using Tr = ScalarTraits<E4>;
  // Finite overflow follows the format: E4M3 has no inf.
  CHECK(std::isnan((E4(448.0) + E4(448.0)).Value()));
  CHECK((E4z(448.0) + E4z(448.0)).Value() == 448);
  CHECK((E4sat(448.0) * E4sat(2.0)).Value() == 448);
  CHECK((E4(448.0) + E4(16.0)).Value() == 448);  // 464: the tie between 448 and NaN's 480
  CHECK(std::isinf((H(65504.0) + H(16.0)).Value()));
  CHECK((H(65504.0) + H(15.0)).Value() == 65504);
  // Infinities exist as sentinels in every format and propagate with IEEE rules.
  CHECK(Tr::IsInf(Tr::Infinity()));
  CHECK((Tr::Infinity() + E4(1.0)).Value() == kInf);
  CHECK((-Tr::Infinity() * E4(2.0)).Value() == -kInf);
  CHECK(Tr::IsNaN(Tr::Infinity() - Tr::Infinity()));
  CHECK(E4(kInf).Value() == kInf);
  CHECK((E4(1.0) / E4(0.0)).Value() == kInf);
  CHECK((E4(-1.0) / E4(0.0)).Value() == -kInf);
  CHECK(Tr::IsNaN(E4(0.0) / E4(0.0)));
  CHECK(Tr::IsNaN(sqrt(E4(-1.0))));
  CHECK(Same(sqrt(E4(-0.0)).Value(), -0.0));
  CHECK(Tr::IsNaN(Tr::QuietNaN() + E4(1.0)));
  CHECK(-Tr::Infinity() < E4(-448.0));
  CHECK_FALSE(Tr::QuietNaN() == Tr::QuietNaN());
  CHECK(Tr::BitEqual(Tr::QuietNaN(), E4(0.0) / E4(0.0)));
  CHECK_FALSE(Tr::BitEqual(Tr::Zero(), Tr::NegZero()));
  CHECK(Tr::SignBit(Tr::NegZero()));
  CHECK(Tr::Abs(E4(-3.0)).Value() == 3);
  CHECK(Tr::Sqrt(E4(4.0)).Value() == 2);
  CHECK(Tr::One().Value() == 1);
  CHECK(Tr::FromCount(16).Value() == 16);
  CHECK(Tr::IsFinite(E4(448.0)));
  CHECK_FALSE(Tr::IsFinite(Tr::Infinity()));
  // Exact zero sums: +0, except -0 under rd.
  CHECK(Same((H(3.0) - H(3.0)).Value(), 0.0));
  CHECK(Same((EmulatedOracle<Fp16Tag, Rounding::kDown>(3.0) -
              EmulatedOracle<Fp16Tag, Rounding::kDown>(3.0))
                 .Value(),
             -0.0));
  CHECK(Same((H(-0.0) + H(-0.0)).Value(), -0.0));
  CHECK(Same((H(-0.0) + H(0.0)).Value(), 0.0));
  // A nonzero result that underflows to zero keeps its sign.
  CHECK(Same((H(-0x1p-20) * H(0x1p-20)).Value(), -0.0));
  CHECK((EmulatedOracle<Fp16Tag, Rounding::kUp>(0x1p-20) *
         EmulatedOracle<Fp16Tag, Rounding::kUp>(0x1p-20))
            .Value() == 0x1p-24);
}

// A format that EmulatedOracle cannot round into exactly, behind a static tag without kPrecision.
struct TooPreciseTag {
  static const Format& Get() {
    static const Format f = ParseFormat("custom:p=30,emin=-126,emax=127");
    return f;
  }
};

TEST_CASE("emulated rejects formats it cannot emulate exactly", "[fast][scalars]") {
  CHECK_THROWS_AS(EmulatedOracle<TooPreciseTag>(1.0), std::invalid_argument);
  CHECK_THROWS_AS(EmulationScope(Fp64()), std::invalid_argument);
  CHECK_THROWS_AS(EmulationScope(ParseFormat("custom:p=11,emin=-14,emax=600")),
                  std::invalid_argument);
  CHECK_THROWS_AS(EmulationScope(ParseFormat("custom:p=11,emin=-1000,emax=15")),
                  std::invalid_argument);
  CHECK_THROWS_AS(EmulationScope(Fp16(), kDynamicRounding), std::invalid_argument);
  CHECK_NOTHROW(EmulationScope(ParseFormat("custom:p=26,emin=-126,emax=127")));
  for (const Format& f : PredefinedFormats()) CHECK(IsEmulableFormat(f) == (f.precision <= 26));
  try {
    EmulationScope scope(Fp64());
  } catch (const std::invalid_argument& e) {
    std::cout << "EmulationScope(fp64): " << e.what() << "\n";
    CHECK(std::string(e.what()).find("p=53") != std::string::npos);
  }
}

TEST_CASE("emulated dynamic format comes from the thread's scope", "[fast][scalars]") {
  CHECK_THROWS_AS(EmulatedOracleDynamic(1.0), std::logic_error);
  {
    EmulationScope outer(ParseFormat("custom:p=5,emin=-6,emax=7"), Rounding::kUp);
    CHECK(EmulatedOracleDynamic::GetFormat().precision == 5);
    CHECK(EmulatedOracleDynamic::GetRounding() == Rounding::kUp);
    CHECK(EmulatedOracleDynamic(1.0 + 0x1p-10).Value() == 1.0625);  // up to the next 5-bit value
    {
      EmulationScope inner(Fp16(), Rounding::kTowardZero);
      CHECK(EmulatedOracleDynamic(1.0 + 0x1p-10 + 0x1p-12).Value() == 1.0 + 0x1p-10);
      // A static rounding with the dynamic format.
      CHECK((EmulatedOracle<DynamicFormatTag, Rounding::kNearestEven>(1.0 + 0x1p-11 + 0x1p-13))
                .Value() == 1.0 + 0x1p-10);
    }
    CHECK(EmulatedOracleDynamic::GetFormat().precision == 5);
    CHECK((EmulatedOracleDynamic(1.0) / EmulatedOracleDynamic(3.0)).Value() ==
          0.34375);  // 11/32, up
  }
  CHECK_THROWS_AS(EmulatedOracleDynamic(1.0), std::logic_error);
}

// Two threads with different dynamic formats and modes, at the same time, each getting the
// results of its own format.
TEST_CASE("emulated dynamic formats do not interfere across threads", "[fast][scalars]") {
  struct Job {
    Format format;
    Rounding rounding;
    std::vector<double> got, want;
  };
  std::vector<Job> jobs = {{Fp16(), Rounding::kUp, {}, {}},
                           {ParseFormat("custom:p=4,emin=-5,emax=6"), Rounding::kDown, {}, {}}};
  constexpr int kSteps = 20000;
  // Expected values, the same steps with RoundToFormat: 1 / i in double is never a value of a
  // p <= 11 format unless exact (|1/x - m| is far above 2^-53 relative), and sums of two such
  // values are exact in double, so rounding the double results is correct here.
  for (Job& job : jobs) {
    auto round = [&job](double v) { return RoundToFormat(v, job.format, job.rounding); };
    double s = 0;
    for (int i = 1; i <= kSteps; ++i) {
      s = round(s + round(1.0 / round(i)));
      job.want.push_back(s);
    }
  }
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (Job& job : jobs) {
    threads.emplace_back([&job, &ready] {
      EmulationScope scope(job.format, job.rounding);
      ready.fetch_add(1);
      while (ready.load() < 2) {
      }
      EmulatedOracleDynamic s(0.0);
      for (int i = 1; i <= kSteps; ++i) {
        s = s + EmulatedOracleDynamic(1.0) / EmulatedOracleDynamic(i);
        job.got.push_back(s.Value());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const Job& job : jobs) {
    INFO("format " << job.format.name << " mode " << RoundingName(job.rounding));
    CHECK(job.got == job.want);
  }
  CHECK(jobs[0].got.back() != jobs[1].got.back());
}

TEST_CASE("emulated stochastic rounding is reproducible and unbiased", "[fast][scalars]") {
  using S = EmulatedOracle<Fp16Tag, Rounding::kStochastic>;
  const S one(1.0);  // exact: 1 is a value
  const S quarter_ulp(0x1p-12);
  auto run = [&](std::uint64_t seed) {
    StochasticSeedScope scope(seed);
    std::vector<double> out;
    for (int i = 0; i < 64; ++i) out.push_back((one + quarter_ulp).Value());
    return out;
  };
  CHECK(run(7) == run(7));
  CHECK(run(7) != run(8));
  // Mean of many roundings of 1 + 2^-12 (a quarter of fp16's ulp 2^-10 at 1).
  StochasticSeedScope scope(2024);
  const int n = test::Trials(40000);
  double sum = 0;
  int ups = 0;
  for (int i = 0; i < n; ++i) {
    const double r = (one + quarter_ulp).Value();
    REQUIRE((r == 1.0 || r == 1.0 + 0x1p-10));
    ups += r > 1.0;
    sum += r - 1.0;
  }
  const double mean = sum / n;
  // Binomial(n, 1/4) in units of 2^-10: sd of the mean = 2^-10 * sqrt(3/16 / n).
  const double sd = 0x1p-10 * std::sqrt(3.0 / 16.0 / n);
  std::cout << "stochastic fp16 1 + 2^-12: " << ups << " of " << n << " up, mean excess "
            << mean / 0x1p-12 << " x 2^-12 (sd " << sd / 0x1p-12 << ")\n";
  CHECK(std::fabs(mean - 0x1p-12) < 5 * sd);
  // The dynamic form takes its seed from the scope.
  auto dynamic = [](std::uint64_t seed) {
    EmulationScope s(Fp16(), Rounding::kStochastic, seed);
    std::vector<double> out;
    for (int i = 0; i < 32; ++i)
      out.push_back((EmulatedOracleDynamic(1.0) + EmulatedOracleDynamic(0x1p-12)).Value());
    return out;
  };
  CHECK(dynamic(3) == dynamic(3));
  CHECK(dynamic(3) != dynamic(4));
}

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

// f(x) correctly rounded into the format by MPFR (exact real rounded once by RoundToFormat's
// MPFR overload at 200 bits: transcendental values are never ties, so 200 bits decide).
template <class F>
double CorrectlyRounded(F mpfr_fn, double x, const Format& f, Rounding r) {
  mpfr_t v;
  mpfr_init2(v, 200);
  mpfr_set_d(v, x, MPFR_RNDN);
  mpfr_fn(v, v, MPFR_RNDN);
  const double out = RoundToFormat(v, f, r);
  mpfr_clear(v);
  return out;
}

template <class T>
void CheckTranscendentals(test::Rng& rng, long& total, long& wrong) {
  const Format& f = T::GetFormat();
  const double top = f.LogMaxFinite();
  for (int i = 0; i < test::Trials(4000); ++i) {
    // Arguments that are values of the format: across exp's whole range, near 0, and log's.
    const double ex = T(rng.Uniform(-1.1 * top, 1.1 * top)).Value();
    const double small =
        T(std::ldexp(rng.Uniform(-1, 1), -static_cast<int>(rng.Below(30)))).Value();
    const double lx =
        T(std::ldexp(rng.Uniform(0, 2), static_cast<int>(rng.Below(40)) - 20)).Value();
    for (double x : {ex, small}) {
      const double got = exp(T::FromFormatValue(x)).Value();
      const double want = CorrectlyRounded(mpfr_exp, x, f, T::kRounding);
      const double got2 = exp2(T::FromFormatValue(x)).Value();
      const double want2 = CorrectlyRounded(mpfr_exp2, x, f, T::kRounding);
      total += 2;
      if (!Same(got, want)) {
        ++wrong;
        std::cout << "exp " << f.name << " " << RoundingName(T::kRounding) << " " << test::Exact(x)
                  << ": " << test::Exact(got) << " vs " << test::Exact(want) << "\n";
      }
      if (!Same(got2, want2)) {
        ++wrong;
        std::cout << "exp2 " << f.name << " " << RoundingName(T::kRounding) << " " << test::Exact(x)
                  << ": " << test::Exact(got2) << " vs " << test::Exact(want2) << "\n";
      }
    }
    if (lx > 0) {
      const double got = log(T::FromFormatValue(lx)).Value();
      const double want = CorrectlyRounded(mpfr_log, lx, f, T::kRounding);
      ++total;
      if (!Same(got, want)) {
        ++wrong;
        std::cout << "log " << f.name << " " << RoundingName(T::kRounding) << " " << test::Exact(lx)
                  << ": " << test::Exact(got) << " vs " << test::Exact(want) << "\n";
      }
    }
  }
}

TEST_CASE("emulated exp exp2 log are correctly rounded on samples", "[fast][scalars]") {
  test::Rng rng(5);
  long total = 0, wrong = 0;
  CheckTranscendentals<EmulatedOracle<Fp8E4M3Tag>>(rng, total, wrong);
  CheckTranscendentals<EmulatedOracle<Fp8E5M2Tag, Rounding::kDown>>(rng, total, wrong);
  CheckTranscendentals<EmulatedOracle<Fp16Tag>>(rng, total, wrong);
  CheckTranscendentals<EmulatedOracle<Fp16Tag, Rounding::kUp>>(rng, total, wrong);
  CheckTranscendentals<EmulatedOracle<BF16Tag, Rounding::kTowardZero>>(rng, total, wrong);
  CheckTranscendentals<EmulatedOracle<TF32Tag, Rounding::kToOdd>>(rng, total, wrong);
  CheckTranscendentals<EmulatedOracle<Fp32Tag>>(rng, total, wrong);
  CheckTranscendentals<EmulatedOracle<Fp32Tag, Rounding::kDown>>(rng, total, wrong);
  std::cout << "emulated exp/exp2/log vs MPFR: " << wrong << " of " << total
            << " not correctly rounded\n";
  CHECK(wrong == 0);
  // Exact points and overflow/underflow of finite arguments.
  using H = EmulatedOracle<Fp16Tag>;
  using Hz = EmulatedOracle<Fp16Tag, Rounding::kTowardZero>;
  using Hu = EmulatedOracle<Fp16Tag, Rounding::kUp>;
  CHECK(exp(H(0.0)).Value() == 1);
  CHECK(log(H(1.0)).Value() == 0);
  CHECK(exp2(H(3.0)).Value() == 8);
  CHECK(exp(H(-kInf)).Value() == 0);
  CHECK(log(H(0.0)).Value() == -kInf);
  CHECK(std::isinf(exp(H(1000.0)).Value()));
  CHECK(exp(Hz(1000.0)).Value() == 65504);
  CHECK(exp(Hu(-1000.0)).Value() == 0x1p-24);
  CHECK(exp(Hu(0x1p-24)).Value() == 1 + 0x1p-10);  // exp of a tiny positive: just above 1
  CHECK(exp(EmulatedOracle<Fp32Tag, Rounding::kDown>(-0x1p-100)).Value() == 1 - 0x1p-24);
}

#endif  // CARRIER_HAVE_MPFR

// ---------------------------------------------------------------------------------------
// Half and BFloat16

template <class H>
double D(H h) {
  return h.ToDouble();
}

// All ops of H on random bit patterns against EmulatedOracle<Tag> (correctly rounded): equal bits
// (NaN results: both NaN, and H's is the canonical 0x7FFF).
template <class H, class Tag>
void CheckBinary16AgainstEmulatedOracle(std::uint64_t seed, const char* name) {
  using E = EmulatedOracle<Tag>;
  test::Rng rng(seed);
  long compared = 0;
  auto random_h = [&] {
    // Mostly finite patterns; one in 64 is inf or NaN.
    H h = H::FromBits(static_cast<std::uint16_t>(rng.Next()));
    return h;
  };
  auto check = [&](const char* op, H a, H b, H got, double want) {
    ++compared;
    if (!Same(D(got), want) || (std::isnan(D(got)) && got.bits != 0x7FFF)) {
      FAIL_CHECK(name << " " << op << "(" << test::Exact(D(a)) << ", " << test::Exact(D(b))
                      << "): got " << test::Exact(D(got)) << " bits " << got.bits << " want "
                      << test::Exact(want));
    }
  };
  for (int i = 0; i < test::Trials(200000); ++i) {
    const H a = random_h(), b = random_h(), c = random_h();
    const E ea(D(a)), eb(D(b)), ec(D(c));
    check("add", a, b, a + b, (ea + eb).Value());
    check("sub", a, b, a - b, (ea - eb).Value());
    check("mul", a, b, a * b, (ea * eb).Value());
    check("div", a, b, a / b, (ea / eb).Value());
    check("fma", a, b, fma(a, b, c), fma(ea, eb, ec).Value());
  }
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const H a = H::FromBits(static_cast<std::uint16_t>(bits));
    check("sqrt", a, a, sqrt(a), sqrt(E(D(a))).Value());
  }
  std::cout << name << " arithmetic vs EmulatedOracle: " << compared << " results compared\n";
}

TEST_CASE("Half arithmetic is correctly rounded fp16", "[fast][scalars]") {
  CheckBinary16AgainstEmulatedOracle<Half, Fp16Tag>(21, "Half");
}

TEST_CASE("BFloat16 arithmetic is correctly rounded bf16", "[fast][scalars]") {
  CheckBinary16AgainstEmulatedOracle<BFloat16, BF16Tag>(22, "BFloat16");
}

template <class H>
void CheckBinary16Traits(std::uint16_t one_bits, std::uint16_t inf_bits) {
  using Tr = ScalarTraits<H>;
  CHECK(Tr::Zero().bits == 0);
  CHECK(Tr::NegZero().bits == 0x8000);
  CHECK(Tr::One().bits == one_bits);
  CHECK(Tr::Infinity().bits == inf_bits);
  CHECK(Tr::IsNaN(Tr::QuietNaN()));
  CHECK(Tr::IsInf(-Tr::Infinity()));
  CHECK_FALSE(Tr::IsFinite(Tr::Infinity()));
  CHECK_FALSE(Tr::IsFinite(Tr::QuietNaN()));
  CHECK(Tr::IsFinite(Tr::One()));
  CHECK(Tr::SignBit(-Tr::Zero()));
  CHECK(Tr::Abs(-Tr::One()).bits == one_bits);
  CHECK(Tr::Sqrt(Tr::FromCount(4)).ToDouble() == 2);
  CHECK(Tr::FromCount(3).ToDouble() == 3);
  CHECK(Tr::Zero() == Tr::NegZero());
  CHECK_FALSE(Tr::BitEqual(Tr::Zero(), Tr::NegZero()));
  CHECK_FALSE(Tr::QuietNaN() == Tr::QuietNaN());
  CHECK(Tr::BitEqual(Tr::QuietNaN(), Tr::Zero() / Tr::Zero()));
  CHECK((Tr::Zero() / Tr::Zero()).bits == 0x7FFF);
  CHECK(-Tr::Infinity() < Tr::Zero());
  CHECK(Tr::One() > Tr::Zero());
  CHECK((Tr::One() + Tr::One()).ToDouble() == 2);
  H x = Tr::One();
  x += Tr::One();
  x *= x;
  CHECK(x.ToDouble() == 4);
  // exp/log through float: within one unit of the correctly rounded result.
  for (double v : {-3.0, -0.5, 0.25, 1.0, 2.0, 7.0}) {
    const H h(v);
    const double e = exp(h).ToDouble(), want = H(std::exp(h.ToDouble())).ToDouble();
    CHECK(std::fabs(e - want) <= std::fabs(want) * 0x1p-7);
    if (v > 0) CHECK(std::fabs(log(h).ToDouble() - std::log(h.ToDouble())) <= 0x1p-7);
  }
  CHECK(exp(H(0.0)).ToDouble() == 1);
  CHECK(log(H(1.0)).ToDouble() == 0);
  CHECK(exp2(H(3.0)).ToDouble() == 8);
}

TEST_CASE("Half and BFloat16 scalar traits", "[fast][scalars]") {
  CheckBinary16Traits<Half>(0x3C00, 0x7C00);
  CheckBinary16Traits<BFloat16>(0x3F80, 0x7F80);
}

// ---------------------------------------------------------------------------------------
// Mpfr

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

// 100 significant digits: far more than 256 bits (77 digits) need.
constexpr const char* kSqrt2 =
    "1.414213562373095048801688724209698078569671875376948073176679737990732478462107038850387534"
    "327641573";
constexpr const char* kE =
    "2.718281828459045235360287471352662497757247093699959574966967627724076630353547594571382178"
    "525166427";
constexpr const char* kLn2 =
    "0.693147180559945309417232121458176568075500134360255254120680009493393621969694715605863326"
    "996418687";
constexpr const char* kThird =
    "0.333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333"
    "333333333";

TEST_CASE("Mpfr arithmetic against known values", "[fast][scalars]") {
  for (long bits : {64L, 256L}) {
    MpfrPrecisionScope scope(bits);
    INFO("precision " << bits);
    const Mpfr two(2), one(1), three(3);
    CHECK(sqrt(two) == Mpfr::FromString(kSqrt2));
    CHECK(exp(one) == Mpfr::FromString(kE));
    CHECK(log(two) == Mpfr::FromString(kLn2));
    CHECK(one / three == Mpfr::FromString(kThird));
    CHECK(exp2(Mpfr(0.5)) == sqrt(two));
    CHECK(fma(three, three, -one) == Mpfr(8));
    CHECK((two * two - three) == one);
    CHECK(sqrt(two).Precision() == bits);
    CHECK(abs(-three) == three);
    std::cout << "Mpfr " << bits << " bits: sqrt(2) = " << sqrt(two) << "\n";
  }
  // 1/3 at 256 bits, rounded to double, is the double nearest 1/3.
  MpfrPrecisionScope scope(256);
  CHECK((Mpfr(1) / Mpfr(3)).ToDouble() == 1.0 / 3.0);
  CHECK(static_cast<float>(Mpfr(1) / Mpfr(3)) == 1.0f / 3.0f);
  CHECK(static_cast<long double>(Mpfr(1) / Mpfr(3)) == 1.0L / 3.0L);
  // Ties and near-ties on the way to double: 1 + 2^-53 ties to 1, anything above goes up.
  CHECK(Mpfr::FromString("0x1.00000000000008p0").ToDouble() == 1.0);
  CHECK(Mpfr::FromString("0x1.000000000000080000001p0").ToDouble() == 1.0 + 0x1p-52);
  CHECK(Mpfr::FromString("0x1p-1074").ToDouble() == std::numeric_limits<double>::denorm_min());
  CHECK(Mpfr::FromString("0x1.8p-1075").ToDouble() == std::numeric_limits<double>::denorm_min());
  CHECK_THROWS_AS(Mpfr::FromString("1.5x"), std::invalid_argument);
  CHECK_THROWS_AS(Mpfr::FromString(""), std::invalid_argument);
  CHECK_THROWS_AS(MpfrPrecisionScope(0), std::invalid_argument);
}

TEST_CASE("Mpfr precision rules", "[fast][scalars]") {
  MpfrPrecisionScope scope(100);
  CHECK(MpfrWorkingPrecision() == 100);
  const Mpfr a(0.1);  // exact: 100 >= 53
  CHECK(a.ToDouble() == 0.1);
  CHECK(a.Precision() == 100);
  const Mpfr narrow = Mpfr::FromDouble(0.1, 24);
  CHECK(narrow.ToDouble() == static_cast<double>(0.1f));
  CHECK((a + narrow).Precision() == 100);
  CHECK((narrow * narrow).Precision() == 24);
  CHECK(fma(narrow, narrow, a).Precision() == 100);
  CHECK(sqrt(narrow).Precision() == 24);
  Mpfr b = narrow;  // copy keeps the precision
  CHECK(b.Precision() == 24);
  b = a;  // assignment takes the source's precision and value
  CHECK(b.Precision() == 100);
  CHECK(ScalarTraits<Mpfr>::BitEqual(a, b));
  Mpfr moved = std::move(b);
  CHECK(moved.Precision() == 100);
  b = narrow;  // a moved-from value can be assigned to
  CHECK(b.Precision() == 24);
  {
    MpfrPrecisionScope inner(30);
    CHECK(Mpfr(1).Precision() == 30);
    CHECK(ScalarTraits<Mpfr>::Zero().Precision() == 30);
  }
  CHECK(Mpfr(1).Precision() == 100);
  CHECK(Mpfr(std::uint64_t{1} << 63).ToDouble() == 0x1p63);
  CHECK(ScalarTraits<Mpfr>::FromCount(12345).ToDouble() == 12345);
  // Special values.
  using Tr = ScalarTraits<Mpfr>;
  CHECK(Tr::IsNaN(Tr::QuietNaN()));
  CHECK_FALSE(Tr::QuietNaN() == Tr::QuietNaN());
  CHECK_FALSE(Tr::QuietNaN() < Tr::One());
  CHECK(Tr::BitEqual(Tr::QuietNaN(), Tr::Infinity() - Tr::Infinity()));
  CHECK(Tr::IsInf(-Tr::Infinity()));
  CHECK(Tr::SignBit(Tr::NegZero()));
  CHECK(Tr::Zero() == Tr::NegZero());
  CHECK_FALSE(Tr::BitEqual(Tr::Zero(), Tr::NegZero()));
  CHECK(Tr::IsFinite(Tr::One()));
  CHECK_FALSE(Tr::IsFinite(Tr::Infinity()));
  CHECK(Tr::Abs(-Tr::One()) == Tr::One());
  CHECK(Tr::Sqrt(Mpfr(4)) == Mpfr(2));
  CHECK(Tr::IsInf(Tr::One() / Tr::Zero()));
  CHECK((-Tr::Infinity()) < Tr::Zero());
  CHECK(Tr::Infinity().ToString() == "inf");
  CHECK(Mpfr(0.5).ToString() == "0.5");
}

// A computation whose result depends on the precision in every bit: the harmonic sum with a
// log and an exp mixed in.
Mpfr Workload(int steps) {
  Mpfr s;
  const Mpfr one(1);
  for (int i = 1; i <= steps; ++i) s = s + one / Mpfr(i);
  return exp(s) - log(s + one);
}

TEST_CASE("Mpfr threads with different precisions get their own results", "[fast][scalars]") {
  constexpr int kSteps = 3000;
  constexpr int kRounds = 8;
  const long precisions[] = {64, 256};
  Mpfr expected[2];
  for (int k = 0; k < 2; ++k) {
    MpfrPrecisionScope scope(precisions[k]);
    expected[k] = Workload(kSteps);
  }
  REQUIRE_FALSE(expected[0] == expected[1]);
  std::atomic<int> ready{0};
  std::atomic<int> wrong[2] = {0, 0};
  std::vector<std::thread> threads;
  for (int k = 0; k < 2; ++k) {
    threads.emplace_back([&, k] {
      {
        MpfrPrecisionScope scope(precisions[k]);
        ready.fetch_add(1);
        while (ready.load() < 2) {
        }
        for (int round = 0; round < kRounds; ++round) {
          const Mpfr got = Workload(kSteps);
          if (!(got == expected[k]) || got.Precision() != precisions[k]) wrong[k].fetch_add(1);
        }
      }
      MpfrReleaseThreadCaches();
    });
  }
  for (std::thread& t : threads) t.join();
  std::cout << "Mpfr threads: 64-bit result " << expected[0].ToString(25) << ", 256-bit result "
            << expected[1].ToString(25) << "; wrong rounds " << wrong[0] << " and " << wrong[1]
            << " of " << kRounds << "\n";
  CHECK(wrong[0] == 0);
  CHECK(wrong[1] == 0);
}

#endif  // CARRIER_HAVE_MPFR

}  // namespace
}  // namespace carrier
