#include "precision/emulated_oracle.hpp"

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace carrier {
namespace {

// Empty when f is emulable, else the reason (one line, without the format's name).
std::string WhyNotEmulable(const Format& f) {
  if (f.precision > kEmulatedMaxPrecision)
    return "p=" + std::to_string(f.precision) + " exceeds " +
           std::to_string(kEmulatedMaxPrecision) +
           ": Emulated needs the product of two values to be exact in a double";
  if (f.emax > kEmulatedExponentLimit)
    return "emax=" + std::to_string(f.emax) + " exceeds " + std::to_string(kEmulatedExponentLimit) +
           ": Emulated needs every exact product to stay inside double's range";
  if (f.emin - f.precision + 1 < -kEmulatedExponentLimit)
    return "smallest quantum 2^" + std::to_string(f.emin - f.precision + 1) + " is below 2^-" +
           std::to_string(kEmulatedExponentLimit) +
           ": Emulated needs every exact product to stay normal in a double";
  if (f.emin > 0 || f.emax < 0)
    return "1 is not a value (emin=" + std::to_string(f.emin) + ", emax=" + std::to_string(f.emax) +
           "): a compute format needs emin <= 0 <= emax";
  return {};
}

}  // namespace

namespace emulated_oracle_detail {
namespace {

double Round(double x, const Env& e) {
  return RoundToFormat(x, *e.format, e.rounding, e.stochastic);
}

// RNE with p <= 25: a double result rounded once more is already correct (Figueroa).
bool DoubleRoundingIsInnocuous(const Env& e) {
  return e.rounding == Rounding::kNearestEven && e.format->precision <= 25;
}

// IEEE's sign of an exact zero sum a + b: +0, except -0 under rd (and for -0 + -0).
double ZeroSum(double a, double b, Rounding r) {
  if (r == Rounding::kDown) return (std::signbit(a) || std::signbit(b)) ? -0.0 : 0.0;
  return a + b;  // +0 unless both are -0
}

// Below every emulable format's smallest subnormal / 4 (2^-512), all values round alike in the
// deterministic modes; the smallest double stands for them.
constexpr double kTiny = 0x1p-600;

// y: libm's value of a function at the finite argument x whose exact value is not a double
// (exp, exp2, log away from their exact points). Returns y nudged one double ulp toward the
// exact value where y is even and could sit on a format value or midpoint, so that the
// result is the round-to-odd double of the exact value whenever y is faithful and on the
// right side of every boundary. `wide()` is the long double function; `hint` the side to use
// when even long double cannot tell (exp(x) near 1: the sign of x).
template <class Wide>
double NudgeInexact(double y, const Format& f, Wide wide, int hint) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(y);
  // y can be a format value or midpoint only if its low 52 - p fraction bits are zero.
  const std::uint64_t low = (std::uint64_t{1} << (52 - f.precision)) - 1;
  if ((bits & low) != 0) return y;
  const long double w = wide();
  const int side = (w > y) ? 1 : ((w < y) ? -1 : hint);
  if (side == 0) return y;
  return RoundToOdd(y, static_cast<double>(side));
}

}  // namespace

double Add(double a, double b, const Env& e) {
  const double hi = a + b;
  if (!std::isfinite(hi)) return hi;  // an infinite or NaN operand: no emulable sum overflows
  if (DoubleRoundingIsInnocuous(e)) return Round(hi, e);
  if (hi == 0) return Round(ZeroSum(a, b, e.rounding), e);
  const double bb = hi - a;  // TwoSum: err = (a + b) - hi exactly
  const double err = (a - (hi - bb)) + (b - bb);
  return Round(RoundToOdd(hi, err), e);
}

double Mul(double a, double b, const Env& e) {
  const double p = a * b;  // exact for values of an emulable format
  if (!std::isfinite(p)) return p;
  return Round(p, e);
}

double Div(double a, double b, const Env& e) {
  const double q = a / b;
  if (!std::isfinite(q)) return q;  // x / 0, NaN, inf / x
  if (q == 0 || DoubleRoundingIsInnocuous(e)) return Round(q, e);
  const double r = std::fma(-q, b, a);  // a - q*b, exact
  const double err = (r == 0) ? 0.0 : (((r > 0) == (b > 0)) ? 1.0 : -1.0);
  return Round(RoundToOdd(q, err), e);
}

double Sqrt(double a, const Env& e) {
  const double s = std::sqrt(a);
  if (!std::isfinite(s)) return s;  // NaN, negative, +inf
  if (s == 0) return Round(s, e);   // sqrt(+-0) = +-0
  if (DoubleRoundingIsInnocuous(e)) return Round(s, e);
  const double r = std::fma(-s, s, a);  // a - s*s, exact
  return Round(RoundToOdd(s, r), e);
}

double Fma(double a, double b, double c, const Env& e) {
  if (!std::isfinite(a) || !std::isfinite(b) || !std::isfinite(c)) return std::fma(a, b, c);
  const double p = a * b;  // exact
  const double hi = p + c;
  if (hi == 0) return Round(ZeroSum(p, c, e.rounding), e);
  const double bb = hi - p;
  const double err = (p - (hi - bb)) + (c - bb);
  return Round(RoundToOdd(hi, err), e);
}

double FromDouble(double x, const Env& e) {
  if (!std::isfinite(x)) return x;
  return Round(x, e);
}

double FromLongDouble(long double x, const Env& e) {
  if (!std::isfinite(x)) return static_cast<double>(x);
  if (x == 0) return Round(static_cast<double>(x), e);
  const long double mag = x < 0 ? -x : x;
  if (mag > static_cast<long double>(DBL_MAX))  // beyond every format: rounds like DBL_MAX
    return Round(std::copysign(DBL_MAX, static_cast<double>(x)), e);
  if (mag < static_cast<long double>(kTiny))
    return Round(std::copysign(std::numeric_limits<double>::denorm_min(), static_cast<double>(x)),
                 e);
  const double hi = static_cast<double>(x);
  const long double err = x - static_cast<long double>(hi);  // exact
  return Round(RoundToOdd(hi, static_cast<double>(err)), e);
}

// |n| as a double pair hi + lo (each exact), rounded to odd, then into the format.
double FromMagnitude(std::uint64_t n, bool negative, const Env& e) {
  double v;
  if (n < (std::uint64_t{1} << 53)) {
    v = static_cast<double>(n);
  } else {
    const double a = static_cast<double>(n >> 32) * 0x1p32;
    const double b = static_cast<double>(n & 0xffffffffULL);
    const double hi = a + b;
    const double bb = hi - a;
    const double err = (a - (hi - bb)) + (b - bb);
    v = RoundToOdd(hi, err);
  }
  return Round(negative ? -v : v, e);
}

double Exp(double x, const Env& e) {
  const double y = std::exp(x);
  if (!std::isfinite(x) || x == 0) return FromDouble(y, e);  // NaN, exp(+-inf), exp(0) = 1
  if (std::isinf(y)) return Round(DBL_MAX, e);               // overflow of an exact finite value
  if (y == 0) return Round(std::numeric_limits<double>::denorm_min(), e);
  return Round(
      NudgeInexact(
          y, *e.format, [x] { return std::exp(static_cast<long double>(x)); }, x > 0 ? 1 : -1),
      e);
}

double Exp2(double x, const Env& e) {
  const double y = std::exp2(x);
  if (!std::isfinite(x)) return FromDouble(y, e);  // NaN, exp2(+-inf)
  if (std::isinf(y)) return Round(DBL_MAX, e);
  if (y == 0) return Round(std::numeric_limits<double>::denorm_min(), e);
  if (x == std::nearbyint(x)) return Round(y, e);  // an exact power of two
  return Round(
      NudgeInexact(
          y, *e.format, [x] { return std::exp2(static_cast<long double>(x)); }, x > 0 ? 1 : -1),
      e);
}

double Log(double x, const Env& e) {
  const double y = std::log(x);
  // NaN, x < 0, log(+-0) = -inf (a pole, exact), log(inf), log(1) = 0: exact or special.
  if (!std::isfinite(y) || x == 1) return FromDouble(y, e);
  // Everywhere else log(x) is irrational (x = 2^k gives k ln 2).
  return Round(NudgeInexact(
                   y, *e.format, [x] { return std::log(static_cast<long double>(x)); }, 0),
               e);
}

}  // namespace emulated_oracle_detail

void CheckEmulableFormat(const Format& f) {
  f.Validate();
  if (std::string why = WhyNotEmulable(f); !why.empty())
    throw std::invalid_argument("format '" + f.name + "': " + why);
}

bool IsEmulableFormat(const Format& f) {
  try {
    f.Validate();
  } catch (const std::invalid_argument&) {
    return false;
  }
  return WhyNotEmulable(f).empty();
}

EmulationScope::EmulationScope(Format format, Rounding rounding, std::uint64_t seed)
    : format_(std::move(format)), saved_(ThreadEmulationContext()) {
  CheckEmulableFormat(format_);
  if (rounding == kDynamicRounding)
    throw std::invalid_argument(
        "EmulationScope: kDynamicRounding is not a rounding mode: expected one of rne, rna, "
        "rz, ru, rd, ro, sr");
  EmulationContext& context = ThreadEmulationContext();
  context.format = &format_;
  context.rounding = rounding;
  context.stochastic = StochasticBits{seed, 0};
}

EmulationScope::~EmulationScope() { ThreadEmulationContext() = saved_; }

StochasticSeedScope::StochasticSeedScope(std::uint64_t seed, std::uint64_t counter)
    : saved_(ThreadEmulationContext().stochastic) {
  ThreadEmulationContext().stochastic = StochasticBits{seed, counter};
}

StochasticSeedScope::~StochasticSeedScope() { ThreadEmulationContext().stochastic = saved_; }

void DynamicFormatTag::ThrowNoEmulationScope() {
  throw std::logic_error("Emulated<DynamicFormatTag>: no EmulationScope is active on this thread");
}

const Format& Fp8E4M3Tag::Get() {
  static const Format f = Fp8E4M3();
  return f;
}
const Format& Fp8E4M3SatTag::Get() {
  static const Format f = Fp8E4M3Sat();
  return f;
}
const Format& Fp8E5M2Tag::Get() {
  static const Format f = Fp8E5M2();
  return f;
}
const Format& Fp16Tag::Get() {
  static const Format f = Fp16();
  return f;
}
const Format& BF16Tag::Get() {
  static const Format f = BF16();
  return f;
}
const Format& TF32Tag::Get() {
  static const Format f = TF32();
  return f;
}
const Format& Fp32Tag::Get() {
  static const Format f = Fp32();
  return f;
}

}  // namespace carrier
