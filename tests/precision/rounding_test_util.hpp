// tests/precision/rounding_test_util.hpp: inputs and reporting shared by the rounding tests.
//
// - SpecialFloatPatterns(f): fp32 bit patterns that sit where a rounding into f can go wrong:
//   every significand the format has (for p <= 7; else the extremes, the middle and 16 random
//   ones) in every fp32 binade that
//   meets f's range, each with the dropped bits set to 0, 1, half-1, half, half+1 and all ones
//   (exact values, +-1 fp32 ulp around them, ties and their neighbours), both signs, plus
//   zeros, infinities, NaNs and the fp32 extremes.
// - CheckFloatPatterns / CheckDoublePatterns: RoundToFormat against the reference, counting
//   mismatches and keeping the first few with everything needed to reproduce them.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "precision/format.hpp"
#include "precision/rounding.hpp"
#include "reference_rounding.hpp"
#include "support/test_support.hpp"

namespace carrier::test {

struct Mismatch {
  std::uint64_t input;  // source bits (fp32 or fp64)
  std::uint64_t want;   // reference result, double bits (kRefNaN: any NaN)
  std::uint64_t got;    // RoundToFormat result, double bits
};

inline std::string DescribeMismatch(const Mismatch& m, bool source_is_float, const Format& f,
                                    Rounding r) {
  std::ostringstream os;
  const double in =
      source_is_float
          ? static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(m.input)))
          : std::bit_cast<double>(m.input);
  os << "input " << (source_is_float ? "fp32 " : "fp64 ") << Hex(m.input, source_is_float ? 8 : 16)
     << " (" << Exact(in) << ") format " << f.name << " mode " << RoundingName(r) << ": got "
     << Hex(m.got, 16) << " (" << Exact(std::bit_cast<double>(m.got)) << ") want "
     << (m.want == kRefNaN ? std::string("NaN")
                           : Hex(m.want, 16) + " (" + Exact(std::bit_cast<double>(m.want)) + ")");
  return os.str();
}

inline std::uint64_t CheckFloatPatterns(const std::vector<std::uint32_t>& patterns, const Format& f,
                                        Rounding r, std::vector<Mismatch>* first,
                                        std::size_t keep = 8) {
  const RefFormat rf = ToRefFormat(f);
  const RefMode mode = ToRefMode(r);
  std::uint64_t count = 0;
  for (std::uint32_t u : patterns) {
    const double got = RoundToFormat(static_cast<double>(std::bit_cast<float>(u)), f, r);
    const std::uint64_t want = RefRoundFloat(u, rf, mode);
    if (!RefAgrees(want, got)) {
      ++count;
      if (first && first->size() < keep)
        first->push_back({u, want, std::bit_cast<std::uint64_t>(got)});
    }
  }
  return count;
}

inline std::uint64_t CheckDoublePatterns(const std::vector<std::uint64_t>& patterns,
                                         const Format& f, Rounding r, std::vector<Mismatch>* first,
                                         std::size_t keep = 8) {
  const RefFormat rf = ToRefFormat(f);
  const RefMode mode = ToRefMode(r);
  std::uint64_t count = 0;
  for (std::uint64_t u : patterns) {
    const double got = RoundToFormat(std::bit_cast<double>(u), f, r);
    const std::uint64_t want = RefRoundDouble(u, rf, mode);
    if (!RefAgrees(want, got)) {
      ++count;
      if (first && first->size() < keep)
        first->push_back({u, want, std::bit_cast<std::uint64_t>(got)});
    }
  }
  return count;
}

inline std::vector<std::uint32_t> SpecialFloatPatterns(const Format& f, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::uint32_t> out = {0x00000000u, 0x7f800000u, 0x7fc00000u, 0x7fffffffu,
                                    0x7f800001u, 0x7fa00000u, 0x00000001u, 0x00000002u,
                                    0x007fffffu, 0x00800000u, 0x7f7fffffu, 0x3f800000u};
  // fp32 binades (biased exponents) that meet f's range, from well below its smallest
  // subnormal to above its overflow threshold.
  const int lo_exp = std::max(0, f.emin - f.precision - 2 + 127);
  const int hi_exp = std::min(254, f.emax + 2 + 127);
  for (int biased = lo_exp; biased <= hi_exp; ++biased) {
    const int e = (biased == 0 ? 1 : biased) - 127;  // exponent of this binade's 2^e
    // Dropped trailing bits in this binade: below 2^emin the quantum stays 2^(emin-p+1).
    int quantum =
        (e >= f.emin ? e : (f.subnormals ? f.emin : f.emin + f.precision - 1)) - (f.precision - 1);
    int dropped = std::clamp(quantum - (e - 23), 0, 23);
    const int kept_bits = 23 - dropped;
    std::vector<std::uint32_t> tops;
    if (kept_bits <= 6) {  // every significand of the fp8 formats; samples of wider ones
      for (std::uint32_t t = 0; t < (1u << kept_bits); ++t) tops.push_back(t);
    } else {
      const std::uint32_t max_top = (1u << kept_bits) - 1;
      tops = {0, 1, 2, max_top / 2, max_top / 2 + 1, max_top - 1, max_top};
      for (int i = 0; i < 16; ++i) tops.push_back(static_cast<std::uint32_t>(rng.Next()) & max_top);
    }
    std::vector<std::uint32_t> lows = {0};
    if (dropped > 0) {
      const std::uint32_t half = 1u << (dropped - 1);
      const std::uint32_t all = (1u << dropped) - 1;
      lows = {0, 1, half - 1, half, half + 1, all - 1, all};
      if (dropped > 2) lows.push_back(static_cast<std::uint32_t>(rng.Next()) & all);
    }
    for (std::uint32_t top : tops)
      for (std::uint32_t low : lows) {
        const std::uint32_t bits = (static_cast<std::uint32_t>(biased) << 23) | (top << dropped) |
                                   (low & ((1u << dropped) - 1));
        out.push_back(bits);
      }
  }
  // Every pattern with both signs.
  const std::size_t n = out.size();
  for (std::size_t i = 0; i < n; ++i) out.push_back(out[i] | 0x80000000u);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Random fp32 patterns: half uniformly over all 2^32, half with an exponent near f's range.
inline std::vector<std::uint32_t> RandomFloatPatterns(const Format& f, std::size_t count,
                                                      std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::uint32_t> out;
  out.reserve(count);
  const int lo_exp = std::max(0, f.emin - f.precision - 3 + 127);
  const int hi_exp = std::min(254, f.emax + 3 + 127);
  for (std::size_t i = 0; i < count; ++i) {
    std::uint32_t u = static_cast<std::uint32_t>(rng.Next());
    if (i % 2 == 1) {
      const auto biased = static_cast<std::uint32_t>(lo_exp + rng.Below(hi_exp - lo_exp + 1));
      u = (u & 0x807fffffu) | (biased << 23);
    }
    out.push_back(u);
  }
  return out;
}

}  // namespace carrier::test
