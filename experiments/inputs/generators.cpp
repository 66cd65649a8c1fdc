#include "inputs/generators.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

namespace carrier::inputs {

namespace {

std::uint64_t Mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double NormalAt(std::uint64_t seed, std::uint64_t i) {
  double u1 = UniformAt(seed, 2 * i);
  const double u2 = UniformAt(seed, 2 * i + 1);
  if (u1 <= 0) u1 = 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586476925 * u2);
}

}  // namespace

double UniformAt(std::uint64_t seed, std::uint64_t i) {
  return static_cast<double>(Mix(Mix(seed) ^ i) >> 11) * 0x1.0p-53;
}

GeneratorSpec ParseGenerator(const std::string& text) {
  GeneratorSpec spec;
  const auto colon = text.find(':');
  spec.dist = text.substr(0, colon);
  if (colon != std::string::npos) spec.order = text.substr(colon + 1);
  if (spec.dist != "uniform01" && spec.dist != "uniform11" && spec.dist != "normal" &&
      spec.dist != "lognormal")
    throw std::invalid_argument("unknown generator '" + spec.dist +
                                "'; expected uniform01, uniform11, normal or lognormal");
  if (colon != std::string::npos && spec.order != "asc" && spec.order != "desc")
    throw std::invalid_argument("generator order must be asc or desc, got '" + spec.order + "'");
  return spec;
}

std::vector<double> Generate(const GeneratorSpec& spec, std::uint64_t n, std::uint64_t seed) {
  std::vector<double> x(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    if (spec.dist == "uniform01") {
      x[i] = UniformAt(seed, i);
    } else if (spec.dist == "uniform11") {
      x[i] = 2.0 * UniformAt(seed, i) - 1.0;
    } else if (spec.dist == "normal") {
      x[i] = NormalAt(seed, i);
    } else {
      x[i] = std::exp(NormalAt(seed, i));
    }
  }
  if (spec.order == "asc") std::sort(x.begin(), x.end());
  if (spec.order == "desc") std::sort(x.begin(), x.end(), std::greater<double>());
  return x;
}

}  // namespace carrier::inputs
