// EmulatedOracle's + - * / sqrt fma against two independent MPFR references, bit for bit, for every
// predefined format (and two custom ones through the dynamic tag) and every deterministic mode:
//   native    MPFR's own arithmetic at precision p in the format's exponent range with
//             mpfr_subnormalize (the manual's recipe for emulating an IEEE format; MPFR's
//             exponent E puts |x| in [2^(E-1), 2^E), so its emin is the IEEE emin - p + 2),
//             then the format's overflow rule where MPFR cannot model it (E4M3's 448, no inf).
//             Modes rne rz ru rd, formats with subnormals.
//   quantum   the exact result rounded to odd at 128 bits (MPFR's truncation with its sticky
//             bit), divided by the format's quantum 2^qe and rounded to an integer by MPFR
//             (mpfr_rint / mpfr_round / trunc + sticky), then the same overflow rule. Every mode,
//             including rna and ro, which MPFR lacks, and formats without subnormals.
// Where both apply they must agree with each other too. Operands mix: uniform bit patterns,
// nearby exponents (real cancellation), the top binade (overflow), the subnormal range, exact
// ties for + and * (and fma), exact cancellation, and signed zeros. Counts are printed.
#include <catch2/catch.hpp>

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <mpfr.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <tuple>
#include <vector>

#include "precision/emulated_oracle.hpp"
#include "precision/format.hpp"
#include "precision/rounding.hpp"
#include "support/test_support.hpp"

namespace carrier {
namespace {

enum class Op { kAdd, kSub, kMul, kDiv, kSqrt, kFma };
constexpr Op kOps[] = {Op::kAdd, Op::kSub, Op::kMul, Op::kDiv, Op::kSqrt, Op::kFma};
constexpr const char* kOpNames[] = {"add", "sub", "mul", "div", "sqrt", "fma"};
constexpr int kOpCount = 6;

class MpfrVar {
 public:
  explicit MpfrVar(mpfr_prec_t prec) { mpfr_init2(v_, prec); }
  ~MpfrVar() { mpfr_clear(v_); }
  MpfrVar(const MpfrVar&) = delete;
  MpfrVar& operator=(const MpfrVar&) = delete;
  mpfr_ptr get() { return v_; }

 private:
  mpfr_t v_;
};

// MPFR's exponent range narrowed to the format's (per thread in MPFR), restored at the end.
class FormatExponentRange {
 public:
  explicit FormatExponentRange(const Format& f)
      : old_emin_(mpfr_get_emin()), old_emax_(mpfr_get_emax()) {
    mpfr_set_emin(f.emin - f.precision + 2);
    // Two binades of headroom: values just past max finite (E4M3's 480 pattern, ties at the
    // overflow threshold) stay visible to the overflow rule below instead of becoming inf.
    mpfr_set_emax(f.emax + 3);
  }
  ~FormatExponentRange() {
    mpfr_set_emin(old_emin_);
    mpfr_set_emax(old_emax_);
  }

 private:
  mpfr_exp_t old_emin_, old_emax_;
};

mpfr_rnd_t ToMpfr(Rounding r) {
  switch (r) {
    case Rounding::kTowardZero:
      return MPFR_RNDZ;
    case Rounding::kUp:
      return MPFR_RNDU;
    case Rounding::kDown:
      return MPFR_RNDD;
    default:
      return MPFR_RNDN;
  }
}

bool NativeMode(Rounding r) {
  return r == Rounding::kNearestEven || r == Rounding::kTowardZero || r == Rounding::kUp ||
         r == Rounding::kDown;
}

// rounding.hpp's overflow rule, written out again: a rounded magnitude beyond max finite.
double Overflow(bool negative, const Format& f, Rounding r) {
  const bool toward_zero = r == Rounding::kTowardZero || r == Rounding::kToOdd ||
                           (r == Rounding::kDown && !negative) || (r == Rounding::kUp && negative);
  double v;
  if (f.saturate || toward_zero) {
    v = f.MaxFinite();
  } else {
    v = f.has_inf ? INFINITY : NAN;
  }
  return negative ? -v : v;
}

double ApplyOverflow(double rounded, const Format& f, Rounding r) {
  if (std::isnan(rounded) || std::fabs(rounded) <= f.MaxFinite()) return rounded;
  return Overflow(std::signbit(rounded), f, r);
}

// op(a, b, c) into `out`, with MPFR rounding mode `rnd`; returns the ternary value.
int MpfrOp(Op op, mpfr_ptr out, mpfr_ptr a, mpfr_ptr b, mpfr_ptr c, mpfr_rnd_t rnd) {
  switch (op) {
    case Op::kAdd:
      return mpfr_add(out, a, b, rnd);
    case Op::kSub:
      return mpfr_sub(out, a, b, rnd);
    case Op::kMul:
      return mpfr_mul(out, a, b, rnd);
    case Op::kDiv:
      return mpfr_div(out, a, b, rnd);
    case Op::kSqrt:
      return mpfr_sqrt(out, a, rnd);
    case Op::kFma:
      return mpfr_fma(out, a, b, c, rnd);
  }
  return 0;
}

// What the exact result looks like relative to the format (mode independent).
struct Shape {
  bool exact = false;      // a value of the format (before the overflow rule)
  bool tie = false;        // exactly a midpoint
  bool subnormal = false;  // 0 < |x| < 2^emin
  bool overflow = false;   // |x| > max finite
};

// The high-precision reference and its shape, for one operation.
class Reference {
 public:
  explicit Reference(const Format& f)
      : f_(f),
        a_(kPrecision),
        b_(kPrecision),
        c_(kPrecision),
        x_(kPrecision),
        t_(kPrecision),
        n_(kPrecision),
        frac_(kPrecision),
        max_(kPrecision),
        pa_(f.precision),
        pb_(f.precision),
        pc_(f.precision),
        px_(f.precision) {
    mpfr_set_d(max_.get(), f.MaxFinite(), MPFR_RNDN);
  }

  // The operands, once per sample (exact at both precisions: values of the format).
  void SetOperands(double a, double b, double c) {
    for (auto [v, hp, p] : {std::tuple{a, a_.get(), pa_.get()}, std::tuple{b, b_.get(), pb_.get()},
                            std::tuple{c, c_.get(), pc_.get()}}) {
      mpfr_set_d(hp, v, MPFR_RNDN);
      mpfr_set(p, hp, MPFR_RNDN);
    }
  }

  // x = op(a, b, c) rounded to odd at kPrecision = 128 bits: MPFR's truncation, its last bit
  // forced to 1 when inexact. Any rounding of that to p <= 126 bits, in any mode, is the same
  // rounding of the exact result (Boldo & Melquiond 2008); exact results, ties included (at
  // most p + 1 bits), stay exact.
  void Set(Op op) {
    op_ = op;
    const int ternary = MpfrOp(op, x_.get(), a_.get(), b_.get(), c_.get(), MPFR_RNDZ);
    // A kPrecision-bit value with last bit 1 needs all its bits.
    if (ternary != 0 && mpfr_min_prec(x_.get()) < kPrecision) {
      if (mpfr_signbit(x_.get())) {
        mpfr_nextbelow(x_.get());
      } else {
        mpfr_nextabove(x_.get());
      }
    }
    sticky_ = ternary != 0;
    ComputeShape();
  }

  const Shape& shape() const { return shape_; }

  // Quantum reference: any mode, any format.
  double Quantum(Rounding r) {
    mpfr_ptr x = x_.get();
    if (mpfr_nan_p(x)) return NAN;
    if (mpfr_zero_p(x)) {
      // An exact zero: its sign is IEEE's rule for the mode (-0 for x - x only under rd),
      // which the RNDZ computation above does not reflect.
      if (r == Rounding::kDown) {
        MpfrOp(op_, n_.get(), a_.get(), b_.get(), c_.get(), MPFR_RNDD);
        return mpfr_signbit(n_.get()) ? -0.0 : 0.0;
      }
      return mpfr_signbit(x) ? -0.0 : 0.0;
    }
    const bool negative = mpfr_signbit(x) != 0;
    // t_ = x / 2^qe (signed, exact), set by ComputeShape.
    switch (r) {
      case Rounding::kNearestAway:
        mpfr_round(n_.get(), t_.get());
        break;
      case Rounding::kToOdd: {
        mpfr_trunc(n_.get(), t_.get());
        // |n| < 2^(p+1): an even n steps away from zero to its odd neighbour.
        if (!shape_.exact && mpfr_get_si(n_.get(), MPFR_RNDZ) % 2 == 0)
          mpfr_add_si(n_.get(), n_.get(), negative ? -1 : 1, MPFR_RNDN);
        break;
      }
      default:
        mpfr_rint(n_.get(), t_.get(), ToMpfr(r));
        break;
    }
    double v = std::ldexp(mpfr_get_d(n_.get(), MPFR_RNDN), qe_);  // exact: |n| <= 2^(p+1)
    if (v == 0) v = negative ? -0.0 : 0.0;
    return ApplyOverflow(v, f_, r);
  }

  // Native reference: MPFR at precision p in the format's range (formats with subnormals).
  double Native(Rounding r) {
    const mpfr_rnd_t rnd = ToMpfr(r);
    double v;
    {
      FormatExponentRange range(f_);
      int t = MpfrOp(op_, px_.get(), pa_.get(), pb_.get(), pc_.get(), rnd);
      t = mpfr_subnormalize(px_.get(), t, rnd);
      v = mpfr_get_d(px_.get(), MPFR_RNDN);  // exact
    }
    return ApplyOverflow(v, f_, r);
  }

 private:
  void ComputeShape() {
    mpfr_ptr x = x_.get();
    shape_ = Shape{};
    if (mpfr_nan_p(x) || mpfr_zero_p(x)) {
      qe_ = 0;
      shape_.exact = !mpfr_nan_p(x);
      return;
    }
    const long e = static_cast<long>(mpfr_get_exp(x)) - 1;  // |x| in [2^e, 2^(e+1))
    if (e >= f_.emin) {
      qe_ = static_cast<int>(e) - f_.precision + 1;
    } else {
      qe_ = f_.subnormals ? f_.emin - f_.precision + 1 : f_.emin;
      shape_.subnormal = true;
    }
    mpfr_mul_2si(t_.get(), x, -qe_, MPFR_RNDN);   // exact
    mpfr_frac(frac_.get(), t_.get(), MPFR_RNDN);  // exact, signed
    shape_.exact = mpfr_zero_p(frac_.get()) && !sticky_;
    // |fraction| == 1/2 exactly: MPFR exponent 0 (|f| in [1/2, 1)) and a single bit.
    shape_.tie = !sticky_ && !mpfr_zero_p(frac_.get()) && mpfr_get_exp(frac_.get()) == 0 &&
                 mpfr_min_prec(frac_.get()) == 1;
    shape_.overflow = mpfr_cmpabs(x, max_.get()) > 0;
  }

  static constexpr mpfr_prec_t kPrecision = 128;

  const Format& f_;
  MpfrVar a_, b_, c_, x_, t_, n_, frac_, max_;
  MpfrVar pa_, pb_, pc_, px_;
  Op op_ = Op::kAdd;
  bool sticky_ = false;
  int qe_ = 0;
  Shape shape_;
};

// Random values of a format (as doubles), of several kinds.
class OperandSource {
 public:
  OperandSource(const Format& f, std::uint64_t seed) : f_(f), rng_(seed) {}

  // Value with significand bits `sig` at exponent e (normal: 2^(p-1) <= sig < 2^p), clamped
  // into the finite range.
  double Make(bool negative, int e, std::uint64_t sig) const {
    double v = std::ldexp(static_cast<double>(sig), e - f_.precision + 1);
    if (!(v <= f_.MaxFinite())) v = f_.MaxFinite();
    return negative ? -v : v;
  }
  std::uint64_t RandomSignificand() {
    const std::uint64_t top = std::uint64_t{1} << (f_.precision - 1);
    return top | (rng_.Next() & (top - 1));
  }
  double Normal(int e) { return Make(rng_.Next() & 1, e, RandomSignificand()); }
  // Any finite value: uniform over binades, subnormals (when on) and zero included.
  double Uniform() {
    const int binades = f_.emax - f_.emin + 1;
    const int k = static_cast<int>(rng_.Below(binades + 1));
    if (k == 0) {
      if (!f_.subnormals) return (rng_.Next() & 1) ? -0.0 : 0.0;
      const std::uint64_t sig = rng_.Next() & ((std::uint64_t{1} << (f_.precision - 1)) - 1);
      return Make(rng_.Next() & 1, f_.emin, sig);
    }
    return Normal(f_.emin + k - 1);
  }
  double Near(double a) {  // exponent within p + 2 of a's
    const int ea = a == 0 ? 0 : std::ilogb(a);
    const int span = f_.precision + 2;
    int e = ea - span + static_cast<int>(rng_.Below(2 * span + 1));
    e = std::clamp(e, f_.emin, f_.emax);
    return Normal(e);
  }
  double Top() { return Normal(f_.emax - static_cast<int>(rng_.Below(2))); }
  double Subnormal() {
    if (rng_.Below(3) == 0) return Normal(f_.emin + static_cast<int>(rng_.Below(2)));
    return Make(rng_.Next() & 1, f_.emin,
                rng_.Next() & ((std::uint64_t{1} << (f_.precision - 1)) - 1));
  }
  // Half an ulp of a normal a (so a + it is a tie), if that is a value of the format.
  double HalfUlp(double a) {
    const double h = std::ldexp(1.0, std::max(std::ilogb(a), f_.emin) - f_.precision);
    return Representable(h) ? h : f_.MinSubnormal();
  }
  // Two values whose product is exactly a midpoint: odd significands s, t with s * t of
  // exactly p + 1 bits.
  std::pair<double, double> MulTie() {
    for (int tries = 0; tries < 100; ++tries) {
      const int bits_s = 1 + static_cast<int>(rng_.Below(f_.precision));
      const std::uint64_t s = (rng_.Next() & ((std::uint64_t{1} << bits_s) - 1)) |
                              (std::uint64_t{1} << (bits_s - 1)) | 1;
      const int width_s = 64 - std::countl_zero(s);
      const int bits_t = f_.precision + 1 - width_s + static_cast<int>(rng_.Below(2));
      if (bits_t < 1 || bits_t > f_.precision) continue;
      const std::uint64_t t = (rng_.Next() & ((std::uint64_t{1} << bits_t) - 1)) |
                              (std::uint64_t{1} << (bits_t - 1)) | 1;
      const std::uint64_t st = s * t;
      if (64 - std::countl_zero(st) != f_.precision + 1) continue;
      // Spread the exponent so the tie lands anywhere in the range, subnormals included.
      const int e = f_.emin - 2 + static_cast<int>(rng_.Below(f_.emax - f_.emin + 4));
      const int es = e / 2 - static_cast<int>(rng_.Below(3));
      const double a = std::ldexp(static_cast<double>(s), es - width_s + 1);
      const double b = std::ldexp(static_cast<double>(t), e - es - bits_t + 1);
      if (!Representable(a) || !Representable(b)) continue;
      return {(rng_.Next() & 1) ? -a : a, (rng_.Next() & 1) ? -b : b};
    }
    return {Uniform(), Uniform()};
  }
  bool Representable(double v) const {
    return std::fabs(v) <= f_.MaxFinite() && RoundToFormat(v, f_, Rounding::kToOdd) == v;
  }

  // One (a, b, c) triple of a randomly chosen kind.
  std::array<double, 3> Next() {
    double a, b, c;
    switch (rng_.Below(10)) {
      case 0:
        a = Uniform();
        b = Uniform();
        break;
      case 1:
      case 2:
        a = Uniform();
        b = Near(a);
        break;
      case 3:
        a = Top();
        b = (rng_.Below(2) == 0) ? Top() : Near(a);
        break;
      case 4:
        a = Subnormal();
        b = (rng_.Below(2) == 0) ? Subnormal() : Uniform();
        break;
      case 5:  // a + b and a - (-b) exact ties
        a = Normal(f_.emin + 1 + static_cast<int>(rng_.Below(f_.emax - f_.emin)));
        b = std::copysign(HalfUlp(a), (rng_.Next() & 1) ? a : -a);
        break;
      case 6: {
        auto [x, y] = MulTie();
        a = x;
        b = y;
        break;
      }
      case 7:  // exact or near cancellation
        a = Uniform();
        b = rng_.Below(2) == 0 ? -a : -RoundToFormat(a * (1 + 0x1p-20), f_, Rounding::kUp);
        if (std::isnan(b) || std::isinf(b)) b = -a;
        break;
      case 8:  // signed zeros and small integers
        a = static_cast<double>(static_cast<int>(rng_.Below(7)) - 3);
        b = (rng_.Below(2) == 0) ? -0.0 : static_cast<double>(static_cast<int>(rng_.Below(7)) - 3);
        if (a == 0 && (rng_.Next() & 1)) a = -0.0;
        break;
      default:
        a = Near(1.0);
        b = Near(a);
        break;
    }
    switch (rng_.Below(6)) {
      case 0:
        c = Uniform();
        break;
      case 1: {  // cancels the product's leading bits
        const double p = RoundToFormat(a * b, f_, Rounding::kNearestEven);
        c = std::isfinite(p) ? -p : Uniform();
        break;
      }
      case 2:  // with a tie pair (case 6) this keeps a*b + c a tie
        c = rng_.Below(2) == 0 ? 0.0 : -0.0;
        break;
      case 3: {  // half an ulp of the rounded product: ties and near-ties of the sum
        const double p = RoundToFormat(a * b, f_, Rounding::kNearestEven);
        c = (std::isfinite(p) && p != 0) ? std::copysign(HalfUlp(p), rng_.Next() & 1 ? p : -p)
                                         : Uniform();
        break;
      }
      default:
        c = Near(a * b == 0 ? 1.0
                            : std::clamp(std::fabs(a * b), f_.MinSubnormal(), f_.MaxFinite()));
        break;
    }
    for (double* v : {&a, &b, &c})
      if (!Representable(*v)) *v = 0.0;  // never expected; keeps the operands honest
    return {a, b, c};
  }

 private:
  const Format& f_;
  test::Rng rng_;
};

template <class T>
double EmulatedOp(Op op, double a, double b, double c) {
  const T x = T::FromFormatValue(a), y = T::FromFormatValue(b), z = T::FromFormatValue(c);
  switch (op) {
    case Op::kAdd:
      return (x + y).Value();
    case Op::kSub:
      return (x - y).Value();
    case Op::kMul:
      return (x * y).Value();
    case Op::kDiv:
      return (x / y).Value();
    case Op::kSqrt:
      return sqrt(x).Value();
    case Op::kFma:
      return fma(x, y, z).Value();
  }
  return NAN;
}

bool Same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

constexpr int kModeCount = 6;  // kDeterministicRoundings: rne rna rz ru rd ro

struct Counts {
  std::array<long, kOpCount> compared{}, exact{}, ties{}, subnormal{}, overflow{};
  std::array<long, kModeCount> mismatches{}, reference_disagreements{};
};

// EmulatedOracle<Tag, R> for every deterministic R (with the dynamic tag, the format comes from the
// caller's EmulationScope) against both references, on the same operands for all modes.
template <class Tag>
Counts Compare(const Format& f, std::uint64_t seed) {
  Counts counts;
  OperandSource source(f, seed);
  Reference ref(f);
  const int n = test::Trials(100000);
  for (int i = 0; i < n; ++i) {
    const auto [a, b, c] = source.Next();
    ref.SetOperands(a, b, c);
    for (Op op : kOps) {
      if (op == Op::kDiv && b == 0) continue;  // x/0 = inf is not a rounding: test_scalars
      const int k = static_cast<int>(op);
      ref.Set(op);
      const Shape& s = ref.shape();
      ++counts.compared[k];
      counts.exact[k] += s.exact;
      counts.ties[k] += s.tie;
      counts.subnormal[k] += s.subnormal;
      counts.overflow[k] += s.overflow;
      const double got[kModeCount] = {
          EmulatedOp<EmulatedOracle<Tag, Rounding::kNearestEven>>(op, a, b, c),
          EmulatedOp<EmulatedOracle<Tag, Rounding::kNearestAway>>(op, a, b, c),
          EmulatedOp<EmulatedOracle<Tag, Rounding::kTowardZero>>(op, a, b, c),
          EmulatedOp<EmulatedOracle<Tag, Rounding::kUp>>(op, a, b, c),
          EmulatedOp<EmulatedOracle<Tag, Rounding::kDown>>(op, a, b, c),
          EmulatedOp<EmulatedOracle<Tag, Rounding::kToOdd>>(op, a, b, c)};
      for (int m = 0; m < kModeCount; ++m) {
        const Rounding r = kDeterministicRoundings[m];
        const double want = ref.Quantum(r);
        const double want_native = (NativeMode(r) && f.subnormals) ? ref.Native(r) : want;
        if (!Same(want, want_native)) ++counts.reference_disagreements[m];
        if (Same(got[m], want) && Same(got[m], want_native)) continue;
        if (++counts.mismatches[m] <= 5) {
          std::cout << "MISMATCH " << f.name << " " << RoundingName(r) << " " << kOpNames[k] << "("
                    << test::Exact(a) << ", " << test::Exact(b) << ", " << test::Exact(c)
                    << "): emulated " << test::Exact(got[m]) << " quantum ref " << test::Exact(want)
                    << " native ref " << test::Exact(want_native) << " (seed " << seed
                    << ", sample " << i << ")\n";
        }
      }
    }
  }
  return counts;
}

template <class Tag>
void Run(const Format& f, std::uint64_t seed) {
  const Counts c = Compare<Tag>(f, seed);
  long total = 0;
  for (long x : c.compared) total += x;
  std::cout << "emulated vs mpfr " << f.name << ": " << total << " ops per mode ("
            << test::Trials(100000) << " operand triples, seed " << seed << ")\n   ";
  for (int k = 0; k < kOpCount; ++k)
    std::cout << " " << kOpNames[k] << ": n=" << c.compared[k] << " exact=" << c.exact[k]
              << " ties=" << c.ties[k] << " subnormal=" << c.subnormal[k]
              << " overflow=" << c.overflow[k] << ";";
  std::cout << "\n   ";
  for (int m = 0; m < kModeCount; ++m) {
    const Rounding r = kDeterministicRoundings[m];
    std::cout << " " << RoundingName(r) << " ("
              << ((NativeMode(r) && f.subnormals) ? "native+quantum" : "quantum")
              << "): mismatches " << c.mismatches[m] << ", reference disagreements "
              << c.reference_disagreements[m] << ";";
  }
  std::cout << "\n";
  for (int m = 0; m < kModeCount; ++m) {
    INFO("format " << f.name << " mode " << RoundingName(kDeterministicRoundings[m]) << " seed "
                   << seed);
    CHECK(c.reference_disagreements[m] == 0);
    CHECK(c.mismatches[m] == 0);
  }
}

TEST_CASE("emulated arithmetic equals MPFR fp8e4m3", "[fast][scalars]") {
  Run<Fp8E4M3Tag>(Fp8E4M3Tag::Get(), 100);
}
TEST_CASE("emulated arithmetic equals MPFR fp8e4m3sat", "[fast][scalars]") {
  Run<Fp8E4M3SatTag>(Fp8E4M3SatTag::Get(), 150);
}
TEST_CASE("emulated arithmetic equals MPFR fp8e5m2", "[fast][scalars]") {
  Run<Fp8E5M2Tag>(Fp8E5M2Tag::Get(), 200);
}
TEST_CASE("emulated arithmetic equals MPFR fp16", "[fast][scalars]") {
  Run<Fp16Tag>(Fp16Tag::Get(), 300);
}
TEST_CASE("emulated arithmetic equals MPFR bf16", "[fast][scalars]") {
  Run<BF16Tag>(BF16Tag::Get(), 400);
}
TEST_CASE("emulated arithmetic equals MPFR tf32", "[fast][scalars]") {
  Run<TF32Tag>(TF32Tag::Get(), 500);
}
TEST_CASE("emulated arithmetic equals MPFR fp32", "[fast][scalars]") {
  Run<Fp32Tag>(Fp32Tag::Get(), 600);
}

// Custom formats through the dynamic tag (with each static rounding mode): p = 26, the largest
// emulable precision, where even rne takes the round-to-odd path; and a format without
// subnormals (rounding in the gap below 2^emin).
TEST_CASE("emulated arithmetic equals MPFR for custom formats via EmulationScope",
          "[fast][scalars]") {
  std::uint64_t seed = 700;
  for (const char* name :
       {"custom:p=26,emin=-60,emax=60", "custom:p=7,emin=-10,emax=12,subnormals=0"}) {
    const Format f = ParseFormat(name);
    EmulationScope scope(f);
    Run<DynamicFormatTag>(f, ++seed);
  }
}

}  // namespace
}  // namespace carrier

#endif  // CARRIER_HAVE_MPFR
