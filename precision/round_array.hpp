// precision/round_array.hpp: RoundToFormat over a contiguous array (carrier.round in Python).
//
// Contract of RoundArray(in, out, f, r, seed, counter): out[i] = RoundToFormat(in[i], f, r) for
// every i, bit for bit, with rounding.hpp's rules for NaN, +-0, +-inf, overflow, subnormals and
// saturation; for r = kStochastic, out[i] = RoundStochastic(in[i], f, seed, counter + i), so
// rounding an array in chunks (counter = the chunk's first index) gives the bits of one call.
// seed and counter are ignored by the deterministic modes. `in` and `out` have the same length
// and may be the same array (in place); otherwise they must not overlap.
//
// The float overload reads and writes binary32: each input is widened to double exactly and each
// result narrowed back exactly, which needs every result to be a float: true when the format's
// values are all floats (ValuesWithin(f, Fp32()): fp8*, fp16, bf16, tf32, fp32) or include all
// floats (ValuesWithin(Fp32(), f): fp64; then out[i] == in[i], NaN quieted; with saturation
// only if its max finite is a float). RoundsWithinFloat(f) says which; the float overload throws
// std::invalid_argument (one line) for any other format.
//
// How: one loop per mode, with the format's constants hoisted out of it and rounding.cpp's
// pattern arithmetic inlined (see RoundBits there: drop the low `drop` bits of the value's
// pattern, the carry walks into the exponent field). Inside [2^emin, 2^emax) `drop` is the
// constant (fraction bits) - (p - 1), so each block of 256 elements is first rounded by that
// arithmetic without branches (the compiler vectorises it, SSE2 at baseline); a block holding an
// element outside that range (subnormal results, the underflow gap, the top binade, +-0, inf,
// NaN) is scanned again and those elements go through RoundToFormat / RoundStochastic
// themselves. For a format with the storage type's whole exponent range, subnormals, inf and no
// saturation (bf16 and tf32 on float) only NaN leaves the range. tests/precision/
// test_round_array.cpp and experiments/python/tests/test_round.py check the bits against
// RoundToFormat and RoundStochastic for every predefined format, custom ones, and every mode.
#pragma once

#include <cstdint>
#include <span>

#include "precision/format.hpp"
#include "precision/rounding.hpp"

namespace carrier {

// Whether the float overload of RoundArray accepts f (see the contract above).
bool RoundsWithinFloat(const Format& f);

// in.size() == out.size(); f valid (Format::Validate). Throws std::invalid_argument for a
// length mismatch (and, for float, a format that RoundsWithinFloat refuses).
void RoundArray(std::span<const double> in, std::span<double> out, const Format& f, Rounding r,
                std::uint64_t seed = 0, std::uint64_t counter = 0);
void RoundArray(std::span<const float> in, std::span<float> out, const Format& f, Rounding r,
                std::uint64_t seed = 0, std::uint64_t counter = 0);

}  // namespace carrier
