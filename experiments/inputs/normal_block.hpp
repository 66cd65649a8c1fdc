// experiments/inputs/normal_block.hpp: the normal family's block routines (generators.cpp),
// shared by the baseline build in generators.cpp and the AVX2 / AVX-512 builds of the same
// source in generators_x86.cpp. Internal to experiments/inputs.
//
// Values are drawn a block at a time: the uniforms of a block first, then one straight-line
// transform loop over them (both vectorise; portable_math.hpp says why the bits do not depend
// on it). The block is a buffer on the stack, so it does not change any value. Every variant
// performs the same IEEE operations per value in the same order (-ffp-contract=off holds in
// each, so no FMA appears though AVX-512 has it), so every variant gives the same bits:
// tests/experiments/test_generators.cpp compares each one this CPU runs with the scalar call.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/hash.hpp"
#include "inputs/portable_math.hpp"

namespace carrier::inputs::draw_detail {

// UniformAt with the stream's constant first step SplitMix64(seed) done once by the caller
// (the same expression, so the same value).
inline double UniformMixed(std::uint64_t mixed_seed, std::uint64_t i) {
  return UnitFromHash(SplitMix64(mixed_seed ^ i));
}

inline constexpr std::size_t kDrawBlock = 256;

// N(0,1) values lo, lo + 1, ..., lo + count - 1 of the stream into out: value i is
// BoxMuller(u(2i), u(2i + 1)).
[[gnu::always_inline]] inline void NormalBlockBody(std::uint64_t mixed_seed, std::uint64_t lo,
                                                   std::size_t count, double* out) {
  alignas(64) double u1[kDrawBlock];
  alignas(64) double u2[kDrawBlock];
  for (std::size_t b = 0; b < count; b += kDrawBlock) {
    const std::size_t len = std::min(kDrawBlock, count - b);
    const std::uint64_t first = 2 * (lo + b);
    for (std::size_t j = 0; j < len; ++j) {
      u1[j] = UniformMixed(mixed_seed, first + 2 * j);
      u2[j] = UniformMixed(mixed_seed, first + 2 * j + 1);
    }
    for (std::size_t j = 0; j < len; ++j) out[b + j] = BoxMuller(u1[j], u2[j]);
  }
}
[[gnu::always_inline]] inline void BoxMullerBody(const double* u1, const double* u2, std::size_t n,
                                                 double* out) {
  for (std::size_t j = 0; j < n; ++j) out[j] = BoxMuller(u1[j], u2[j]);
}

using NormalFn = void (*)(std::uint64_t, std::uint64_t, std::size_t, double*);
using BoxMullerFn = void (*)(const double*, const double*, std::size_t, double*);
struct DrawVariant {
  const char* name;
  NormalFn normal;
  BoxMullerFn box_muller;
};

// The baseline build (generators.cpp).
void NormalBaseline(std::uint64_t ms, std::uint64_t lo, std::size_t count, double* out);
void BoxMullerBaseline(const double* u1, const double* u2, std::size_t n, double* out);

// Appends the AVX2 and AVX-512 (F, DQ for the 64-bit multiplies, VL) builds this CPU runs, in
// that order (generators_x86.cpp; nothing off x86-64 with GCC).
void AddX86Variants(std::vector<DrawVariant>& v);

}  // namespace carrier::inputs::draw_detail
