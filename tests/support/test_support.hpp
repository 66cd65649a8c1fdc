// tests/support/test_support.hpp: what every carrier test shares.
//
// - Trials(n): a random-trial count scaled by the CARRIER_TEST_MULTIPLIER environment
//   variable (a positive number; default 1), as FLINT's tests do.
// - Rng: a seeded SplitMix64 generator, so a failure reproduces from its printed seed.
// - Repro: the block of text a failing assertion prints (seed, n, schedule, types, inputs).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/hash.hpp"

namespace carrier::test {

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
