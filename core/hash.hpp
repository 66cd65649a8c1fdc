// core/hash.hpp: SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014), the project's one counter-based hash: SplitMix64(x) is one step of
// the generator from state x (add the golden-ratio increment, then the finaliser), so
// SplitMix64(seed + i) is value i of the stream `seed`, independent of how values are visited.
// Used by the input generators, the benchmark data and the second stochastic-rounding stream.
#pragma once

#include <cstdint>

#include "core/platform.hpp"

namespace carrier {

CARRIER_HD constexpr std::uint64_t SplitMix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace carrier
