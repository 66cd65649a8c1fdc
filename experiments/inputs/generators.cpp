#include "inputs/generators.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>

#include "core/hash.hpp"
#include "inputs/draw_targets.hpp"
#include "inputs/normal_block.hpp"
#include "inputs/portable_math.hpp"
#include "precision/parallel_pass.hpp"

namespace carrier::inputs {

namespace draw_detail {
void NormalBaseline(std::uint64_t ms, std::uint64_t lo, std::size_t count, double* out) {
  NormalBlockBody(ms, lo, count, out);
}
void BoxMullerBaseline(const double* u1, const double* u2, std::size_t n, double* out) {
  BoxMullerBody(u1, u2, n, out);
}
}  // namespace draw_detail

namespace {

using draw_detail::UniformMixed;

// The variants this CPU runs, baseline first, best last (generators_x86.cpp adds AVX2 and
// AVX-512 where core/cpu_features.hpp says the CPU has them).
const std::vector<draw_detail::DrawVariant>& Variants() {
  static const std::vector<draw_detail::DrawVariant> variants = [] {
    std::vector<draw_detail::DrawVariant> v{
        {"baseline", draw_detail::NormalBaseline, draw_detail::BoxMullerBaseline}};
    draw_detail::AddX86Variants(v);
    return v;
  }();
  return variants;
}

void NormalBlock(std::uint64_t mixed_seed, std::uint64_t lo, std::size_t count, double* out) {
  static const draw_detail::NormalFn best = Variants().back().normal;
  best(mixed_seed, lo, count, out);
}

// Student's t (Bailey's polar method, generators.hpp): value i from its own stream of uniforms.
double StudentMixed(std::uint64_t mixed_seed, std::uint64_t i, double nu) {
  const std::uint64_t stream = SplitMix64(mixed_seed ^ SplitMix64(i ^ 0x5EED5EED5EED5EEDULL));
  for (std::uint64_t j = 0;; j += 2) {
    const double u = 2.0 * UniformMixed(stream, j) - 1.0;
    const double v = 2.0 * UniformMixed(stream, j + 1) - 1.0;
    const double w = u * u + v * v;
    if (w > 0 && w <= 1) return u * std::sqrt(nu * (std::pow(w, -2.0 / nu) - 1.0) / w);
  }
}

// Values [lo, hi) of a counter-based distribution (uniform01, uniform11, normal, offset,
// lognormal, student) into out[0 .. hi - lo), then each rounded: the same values as drawing
// all, then rounding all. One loop per distribution (the name compared once, not per value).
void DrawRange(const GeneratorSpec& spec, std::uint64_t ms, std::uint64_t lo, std::uint64_t hi,
               double* out, RoundFn round, const void* context) {
  const std::size_t len = hi - lo;
  if (spec.dist == "uniform01") {
    for (std::size_t j = 0; j < len; ++j) out[j] = UniformMixed(ms, lo + j);
  } else if (spec.dist == "uniform11") {
    for (std::size_t j = 0; j < len; ++j) out[j] = 2.0 * UniformMixed(ms, lo + j) - 1.0;
  } else if (spec.dist == "student") {
    for (std::size_t j = 0; j < len; ++j) out[j] = StudentMixed(ms, lo + j, spec.nu);
  } else {  // normal, offset, lognormal
    NormalBlock(ms, lo, len, out);
    if (spec.dist == "offset") {
      const double mu = spec.offset;
      for (std::size_t j = 0; j < len; ++j) out[j] = mu + out[j];
    } else if (spec.dist == "lognormal") {
      for (std::size_t j = 0; j < len; ++j) out[j] = PortableExp(out[j]);
    }
  }
  if (round)
    for (std::size_t j = 0; j < len; ++j) out[j] = round(out[j], context);
}

}  // namespace

bool Chunked(const GeneratorSpec& spec) {
  return spec.order.empty() &&
         (spec.dist == "uniform01" || spec.dist == "uniform11" || spec.dist == "normal" ||
          spec.dist == "offset" || spec.dist == "lognormal" || spec.dist == "student");
}

void DrawPieces(const GeneratorSpec& spec, std::uint64_t n, std::uint64_t seed,
                const std::function<void(std::uint64_t, std::span<double>)>& piece) {
  if (!Chunked(spec))
    throw std::invalid_argument("DrawPieces: generator '" + spec.text +
                                "' does not draw each value from (seed, index) alone");
  const std::uint64_t ms = SplitMix64(seed);
  SplitPass(n, PassParts(n), [&](std::size_t, std::uint64_t lo, std::uint64_t hi) {
    std::vector<double> buf(std::min(kDrawPiece, hi - lo));
    for (std::uint64_t p = lo; p < hi; p += kDrawPiece) {
      const std::uint64_t q = std::min(hi, p + kDrawPiece);
      DrawRange(spec, ms, p, q, buf.data(), nullptr, nullptr);
      piece(p, std::span<double>(buf.data(), q - p));
    }
  });
}

double UniformAt(std::uint64_t seed, std::uint64_t i) { return UniformMixed(SplitMix64(seed), i); }

std::vector<std::string> DrawTargets() {
  std::vector<std::string> names;
  for (const draw_detail::DrawVariant& v : Variants()) names.emplace_back(v.name);
  return names;
}

void BoxMullerBlock(const double* u1, const double* u2, std::size_t n, double* out) {
  static const draw_detail::BoxMullerFn best = Variants().back().box_muller;
  best(u1, u2, n, out);
}

void BoxMullerBlockFor(const std::string& target, const double* u1, const double* u2, std::size_t n,
                       double* out) {
  for (const draw_detail::DrawVariant& v : Variants())
    if (v.name == target) return v.box_muller(u1, u2, n, out);
  throw std::invalid_argument("BoxMullerBlockFor: no draw target '" + target + "' on this CPU");
}

GeneratorSpec ParseGenerator(const std::string& text) {
  GeneratorSpec spec;
  spec.text = text;
  const auto colon = text.find(':');
  spec.dist = text.substr(0, colon);
  if (spec.dist == "ill") {
    const std::string arg = colon == std::string::npos ? "" : text.substr(colon + 1);
    char* end = nullptr;
    spec.cond = std::strtod(arg.c_str(), &end);
    if (arg.empty() || *end != '\0' || !(spec.cond >= 1) || !std::isfinite(spec.cond))
      throw std::invalid_argument("ill:COND needs a condition number >= 1, got '" + arg + "'");
    return spec;
  }
  if (spec.dist == "offset") {
    // MU + N(0, 1): a variance whose condition number kappa grows like sqrt(1 + MU^2).
    const std::string arg = colon == std::string::npos ? "" : text.substr(colon + 1);
    char* end = nullptr;
    spec.offset = std::strtod(arg.c_str(), &end);
    if (arg.empty() || *end != '\0' || !std::isfinite(spec.offset))
      throw std::invalid_argument("offset:MU needs a finite number MU, got '" + arg + "'");
    return spec;
  }
  if (spec.dist == "exact") {
    spec.base = colon == std::string::npos ? "normal" : text.substr(colon + 1);
    if (spec.base.rfind("exact", 0) == 0 || spec.base.rfind("ill", 0) == 0 || spec.base == "p4016")
      throw std::invalid_argument(
          "exact:DIST takes uniform01, uniform11, normal, lognormal or "
          "offset:MU, got '" +
          spec.base + "'");
    ParseGenerator(spec.base);  // validates it
    return spec;
  }
  if (spec.dist == "blockscaled") {
    const std::string rest = colon == std::string::npos ? "" : text.substr(colon + 1);
    const auto colon2 = rest.find(':');
    const std::string arg = rest.substr(0, colon2);
    spec.base = colon2 == std::string::npos ? "normal" : rest.substr(colon2 + 1);
    char* end = nullptr;
    const double b = std::strtod(arg.c_str(), &end);
    if (arg.empty() || *end != '\0' || !(b >= 0) || b > 0x1p52 || b != std::floor(b))
      throw std::invalid_argument(
          "blockscaled:B[:DIST] needs a block length B (an integer >= 1, or 0 for one block), "
          "got '" +
          arg + "'");
    spec.block = static_cast<std::uint64_t>(b);
    const GeneratorSpec base = ParseGenerator(spec.base);  // validates it
    if (base.dist == "exact" || base.dist == "ill" || base.dist == "p4016" ||
        base.dist == "blockscaled")
      throw std::invalid_argument(
          "blockscaled:B:DIST takes uniform01, uniform11, normal, lognormal (with :asc or "
          ":desc) or offset:MU, got '" +
          spec.base + "'");
    return spec;
  }
  if (spec.dist == "outliers" || spec.dist == "student") {
    // Colon-separated numbers, each optional from the right.
    std::vector<std::string> args;
    for (std::size_t at = colon; at != std::string::npos;) {
      const auto next = text.find(':', at + 1);
      args.push_back(text.substr(at + 1, next == std::string::npos ? next : next - at - 1));
      at = next;
    }
    auto number = [&](std::size_t k, const char* what) {
      char* end = nullptr;
      const double v = std::strtod(args[k].c_str(), &end);
      if (args[k].empty() || *end != '\0' || !std::isfinite(v))
        throw std::invalid_argument(spec.dist + ": " + what + " must be a number, got '" + args[k] +
                                    "'");
      return v;
    };
    if (spec.dist == "student") {
      if (args.size() > 1) throw std::invalid_argument("student[:NU] takes one number, NU");
      if (!args.empty()) spec.nu = number(0, "NU");
      if (!(spec.nu > 0))
        throw std::invalid_argument("student:NU needs NU > 0 degrees of freedom, got '" + args[0] +
                                    "'");
      return spec;
    }
    if (args.size() > 3)
      throw std::invalid_argument("outliers[:P[:S[:C]]] takes at most three numbers");
    if (args.size() > 0) spec.fraction = number(0, "P");
    if (args.size() > 1) spec.scale = number(1, "S");
    if (args.size() > 2) {
      const double c = number(2, "C");
      if (!(c >= 1) || c != std::floor(c) || c > 0x1p40)
        throw std::invalid_argument("outliers: C must be a channel count >= 1, got '" + args[2] +
                                    "'");
      spec.channels = static_cast<std::uint64_t>(c);
    }
    if (!(spec.fraction >= 0 && spec.fraction <= 1))
      throw std::invalid_argument("outliers: P must be a fraction in [0, 1], got '" + args[0] +
                                  "'");
    return spec;
  }
  if (spec.dist == "p4016") {
    if (colon != std::string::npos)
      throw std::invalid_argument("p4016 takes no argument (its seed is --seed)");
    return spec;
  }
  if (colon != std::string::npos) spec.order = text.substr(colon + 1);
  if (spec.dist != "uniform01" && spec.dist != "uniform11" && spec.dist != "normal" &&
      spec.dist != "lognormal") {
    std::string expected;
    for (const GeneratorDoc& d : kGeneratorDocs)
      expected += (expected.empty() ? "" : ", ") + std::string(d.syntax);
    throw std::invalid_argument("unknown generator '" + spec.dist + "'; expected " + expected);
  }
  if (colon != std::string::npos && spec.order != "asc" && spec.order != "desc")
    throw std::invalid_argument("generator order must be asc or desc, got '" + spec.order + "'");
  return spec;
}

std::vector<double> IllConditioned(double cond, std::uint64_t n, std::uint64_t seed, RoundFn round,
                                   const void* context) {
  auto rnd = [&](double v) { return round ? round(v, context) : v; };
  std::vector<double> x(n);
  if (n == 0) return x;
  const double half_bits = std::log2(cond) / 2;
  const std::uint64_t n1 = (n + 1) / 2;
  std::uint64_t draw = 0;
  auto uniform = [&] { return UniformAt(seed, draw++); };
  long double running = 0;  // exact enough: only steers the cancellation
  for (std::uint64_t i = 0; i < n1; ++i) {
    double e = std::round(uniform() * half_bits);
    if (i == 0) e = std::round(half_bits);
    if (i + 1 == n1) e = 0;
    x[i] = rnd((2 * uniform() - 1) * std::ldexp(1.0, static_cast<int>(e)));
    running += x[i];
  }
  for (std::uint64_t i = n1; i < n; ++i) {
    const double frac =
        n - n1 > 1 ? static_cast<double>(i - n1) / static_cast<double>(n - n1 - 1) : 1;
    const double e = std::round(half_bits * (1 - frac));
    x[i] = rnd((2 * uniform() - 1) * std::ldexp(1.0, static_cast<int>(e)) -
               static_cast<double>(running));
    running += x[i];
  }
  // Fisher-Yates with the same counter-based stream.
  for (std::uint64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<std::uint64_t>(uniform() * static_cast<double>(i + 1));
    std::swap(x[i], x[std::min(j, i)]);
  }
  return x;
}

namespace {

// The precision p of the storage rounding: the largest p with 1 + 2^(1-p) representable.
int StoragePrecision(RoundFn round, const void* context) {
  if (!round) return 53;
  // A format of precision P holds 1 + 2^-(P-1) but not 1 + 2^-P (both exact in double).
  int p = 1;
  while (p < 53) {
    const double v = 1.0 + std::ldexp(1.0, -p);
    if (round(v, context) != v) break;
    ++p;
  }
  return p;
}

std::vector<double> ExactGrid(const GeneratorSpec& spec, std::uint64_t n, std::uint64_t seed,
                              RoundFn round, const void* context) {
  std::vector<double> x = Generate(ParseGenerator(spec.base), n, seed, round, context);
  double largest = 0;
  for (double v : x) largest = std::max(largest, std::fabs(v));
  if (n == 0 || largest == 0) return x;
  int log2n = 0;
  while ((std::uint64_t{1} << log2n) < n) ++log2n;
  const int p = StoragePrecision(round, context);
  const int b = p - 1 - log2n;
  if (b < 1)
    throw std::invalid_argument("exact: n = " + std::to_string(n) + " is too large for a " +
                                std::to_string(p) + "-bit format (needs n < 2^" +
                                std::to_string(p - 2) + ")");
  const double q = std::ldexp(1.0, std::ilogb(largest) - b);
  for (auto& v : x) v = std::nearbyint(v / q) * q;  // exact: a power-of-two scaling
  if (round)
    for (auto& v : x) v = round(v, context);  // already representable: unchanged
  return x;
}

// The largest finite value of the storage rounding: the top binade 2^e is the largest power
// of two the rounding keeps, and its largest value 2^e (2 - 2^-j) the last one kept as j grows
// (IEEE formats keep j = 1..p-1; OCP E4M3 loses j = p-1 to its NaN encoding: 448).
double StorageMaxFinite(RoundFn round, const void* context) {
  if (!round) return 1.0;
  int e = 1023;
  while (e > -1074 && round(std::ldexp(1.0, e), context) != std::ldexp(1.0, e)) --e;
  double m = std::ldexp(1.0, e);
  for (int j = 1; j <= 52; ++j) {
    const double v = std::ldexp(2.0 - std::ldexp(1.0, -j), e);
    if (round(v, context) != v) break;
    m = v;
  }
  return m;
}

std::vector<double> BlockScaled(const GeneratorSpec& spec, std::uint64_t n, std::uint64_t seed,
                                RoundFn round, const void* context) {
  std::vector<double> x = Generate(ParseGenerator(spec.base), n, seed);  // unrounded
  const double target = StorageMaxFinite(round, context);
  const std::uint64_t b = spec.block == 0 ? std::max<std::uint64_t>(n, 1) : spec.block;
  for (std::uint64_t lo = 0; lo < n; lo += b) {
    const std::uint64_t hi = std::min(n, lo + b);
    double amax = 0;
    for (std::uint64_t i = lo; i < hi; ++i) amax = std::max(amax, std::fabs(x[i]));
    const double s = amax > 0 ? amax / target : 1.0;
    for (std::uint64_t i = lo; i < hi; ++i) {
      x[i] /= s;
      if (round) x[i] = round(x[i], context);
    }
  }
  return x;
}

// N(0,1) with round(P C) channels times S (generators.hpp). The chosen channels are those with
// the `count` smallest hashes (ties, improbable, broken by the lower channel): 8 bytes per
// channel while they are picked.
std::vector<double> Outliers(const GeneratorSpec& spec, std::uint64_t n, std::uint64_t seed,
                             RoundFn round, const void* context) {
  const std::uint64_t c = spec.channels == 0 ? n : spec.channels;
  if (c > n && n > 0)
    throw std::invalid_argument("outliers: C = " + std::to_string(c) +
                                " channels, more than the n = " + std::to_string(n) + " values");
  GeneratorSpec normal;
  normal.dist = "normal";
  std::vector<double> x = Generate(normal, n, seed);
  const auto count =
      static_cast<std::uint64_t>(std::llround(spec.fraction * static_cast<double>(c)));
  std::vector<bool> outlier(c, false);
  if (count > 0) {
    const std::uint64_t ms = SplitMix64(seed ^ 0x0717E55C4A77E15ULL);
    std::vector<std::uint64_t> hash(c);
    for (std::uint64_t k = 0; k < c; ++k) hash[k] = SplitMix64(ms ^ k);
    std::vector<std::uint64_t> sorted = hash;
    std::nth_element(sorted.begin(), sorted.begin() + (count - 1), sorted.end());
    const std::uint64_t threshold = sorted[count - 1];
    std::vector<std::uint64_t>().swap(sorted);
    std::uint64_t picked = 0;
    for (std::uint64_t k = 0; k < c; ++k) {
      if (hash[k] >= threshold) continue;
      outlier[k] = true;
      ++picked;
    }
    for (std::uint64_t k = 0; k < c && picked < count; ++k) {
      if (hash[k] != threshold) continue;
      outlier[k] = true;
      ++picked;
    }
  }
  for (std::uint64_t i = 0; i < n; ++i) {
    if (outlier[i % c]) x[i] *= spec.scale;
    if (round) x[i] = round(x[i], context);
  }
  return x;
}

std::vector<double> P4016Data(std::uint64_t n, std::uint64_t seed) {
  std::vector<double> x(n);
  std::uint64_t state = seed;
  for (auto& v : x) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto top = static_cast<std::int64_t>(state >> 11);
    v = static_cast<double>(top - (std::int64_t{1} << 52)) / 4503599627370496.0;
  }
  return x;
}

}  // namespace

std::vector<double> Generate(const GeneratorSpec& spec, std::uint64_t n, std::uint64_t seed,
                             RoundFn round, const void* context) {
  if (spec.dist == "ill") return IllConditioned(spec.cond, n, seed, round, context);
  if (spec.dist == "exact") return ExactGrid(spec, n, seed, round, context);
  if (spec.dist == "blockscaled") return BlockScaled(spec, n, seed, round, context);
  if (spec.dist == "outliers") return Outliers(spec, n, seed, round, context);
  if (spec.dist == "p4016") {
    std::vector<double> x = P4016Data(n, seed);
    if (round)
      for (auto& v : x) v = round(v, context);
    return x;
  }
  std::vector<double> x(n);
  // Each value is a function of (seed, i) alone, so the fill may be split across
  // PassThreads() (precision/parallel_pass.hpp; round must then be thread-safe, as every
  // RoundFn given here is: a pure function of the value and the format).
  SplitPass(n, PassParts(n), [&](std::size_t, std::uint64_t lo, std::uint64_t hi) {
    DrawRange(spec, SplitMix64(seed), lo, hi, x.data() + lo, round, context);
  });
  if (spec.order == "asc") std::sort(x.begin(), x.end());
  if (spec.order == "desc") std::sort(x.begin(), x.end(), std::greater<double>());
  return x;
}

}  // namespace carrier::inputs
