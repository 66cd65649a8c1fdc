// tests/support/test_support.hpp: what every carrier test shares.
//
// - Trials(n): a random-trial count scaled by the CARRIER_TEST_MULTIPLIER environment
//   variable (a positive number; default 1), as FLINT's tests do.
// - Rng: a seeded SplitMix64 generator, so a failure reproduces from its printed seed.
// - Repro: the block of text a failing assertion prints (seed, n, schedule, types, inputs).
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "core/hash.hpp"

namespace carrier::test {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Bit-for-bit equality, every NaN equal to every other NaN.
inline bool SameBits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b) ||
         (std::isnan(a) && std::isnan(b));
}

// "float" or "double": a carrier test's scalar type in its output.
template <class T>
const char* ScalarName() {
  return std::is_same_v<T, float> ? "float" : "double";
}

// Carrier C's state over x[0, n), merged as a balanced binary tree split at n / 2: the order the
// carrier tests hold the others against.
template <class C>
typename C::State Pairwise(const typename C::Input* x, std::size_t n) {
  if (n == 0) return C::Identity();
  if (n == 1) return C::Lift(x[0]);
  const std::size_t h = n / 2;
  return C::Combine(Pairwise<C>(x, h), Pairwise<C>(x + h, n - h));
}

inline double Multiplier() {
  const char* env = std::getenv("CARRIER_TEST_MULTIPLIER");
  if (env == nullptr || *env == '\0') return 1.0;
  char* end = nullptr;
  double m = std::strtod(env, &end);
  if (end == env || *end != '\0' || !(m > 0) || !std::isfinite(m)) return 1.0;
  return m;
}

inline int Trials(int base) {
  double t = std::ceil(base * Multiplier());
  return t < 1 ? 1 : static_cast<int>(t);
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t Next() {
    const std::uint64_t z = SplitMix64(state_);  // core/hash.hpp: the project's one SplitMix64
    state_ += kSplitMix64Gamma;
    return z;
  }
  // Uniform in [0, 1) with 53 random bits.
  double Uniform01() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform01(); }
  // Standard normal by Box-Muller (deterministic given the seed).
  double Normal() {
    double u1 = Uniform01(), u2 = Uniform01();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  std::uint64_t Below(std::uint64_t bound) { return bound == 0 ? 0 : Next() % bound; }

 private:
  std::uint64_t state_;
};

// Shortest text that reads back to the same double (hex float: exact and unambiguous).
inline std::string Exact(double x) {
  std::ostringstream os;
  os << std::hexfloat << x;
  return os.str();
}

template <class T>
std::string Join(const std::vector<T>& v, std::size_t max_items = 64) {
  std::ostringstream os;
  os << "[";
  for (std::size_t i = 0; i < v.size() && i < max_items; ++i)
    os << (i ? ", " : "") << Exact(static_cast<double>(v[i]));
  if (v.size() > max_items) os << ", ... (" << v.size() << " values)";
  os << "]";
  return os.str();
}

// Reproduction block for a failing check.
struct Repro {
  std::uint64_t seed = 0;
  std::size_t n = 0;
  std::string schedule;
  std::string types;
  std::string inputs;
  std::string Text() const {
    std::ostringstream os;
    os << "reproduce: seed=" << seed << " n=" << n << " schedule=" << schedule
       << " types=" << types;
    if (!inputs.empty()) os << " inputs=" << inputs;
    return os.str();
  }
};

}  // namespace carrier::test
