// core/hash.hpp: SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014), the project's one counter-based hash: SplitMix64(x) is one step of
// the generator from state x (add the golden-ratio increment, then the finaliser), so
// SplitMix64(seed + i) is value i of the stream `seed`, independent of how values are visited.
// SplitMix64Mix(z) is the finaliser alone (SplitMix64(x) == SplitMix64Mix(x + golden)), for
// callers that form the state themselves (the stochastic-rounding bits, the random tree split).
// The one copy of these constants in the project: the input generators, the benchmark data,
// the stochastic-rounding streams, random:SEED trees, the sweep's trial seeds and the tests'
// Rng all call these two functions.
#pragma once

#include <cstdint>

#include "core/platform.hpp"

namespace carrier {

// The golden-ratio increment of the SplitMix64 stream.
inline constexpr std::uint64_t kSplitMix64Gamma = 0x9e3779b97f4a7c15ULL;

CARRIER_HD constexpr std::uint64_t SplitMix64Mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

CARRIER_HD constexpr std::uint64_t SplitMix64(std::uint64_t x) {
  return SplitMix64Mix(x + kSplitMix64Gamma);
}

}  // namespace carrier
