// experiments/inputs/generators.hpp: deterministic input generators.
//
// A generator is named by text, DIST[:asc|:desc]: uniform01 (U[0,1)), uniform11 (U[-1,1)),
// normal (N(0,1)), lognormal (exp of N(0,1)); `:asc`/`:desc` sort the values. Values come
// from a counter-based SplitMix64 stream of (seed, index), so value i does not depend on how
// many values are drawn or on the thread that draws them; normals use Box-Muller on the pair
// (2i, 2i+1). The values are doubles; callers round them to their storage type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace carrier::inputs {

struct GeneratorSpec {
  std::string dist;     // uniform01 | uniform11 | normal | lognormal
  std::string order;    // "" | asc | desc
  std::string Text() const { return order.empty() ? dist : dist + ":" + order; }
};

// Throws std::invalid_argument with a one-line message naming the bad part.
GeneratorSpec ParseGenerator(const std::string& text);

std::vector<double> Generate(const GeneratorSpec& spec, std::uint64_t n, std::uint64_t seed);

// The i-th uniform in [0, 1) of stream `seed` (53 random bits).
double UniformAt(std::uint64_t seed, std::uint64_t i);

}  // namespace carrier::inputs
