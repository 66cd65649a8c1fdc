// precision/format.hpp: a binary floating-point format described as data.
//
// Contract. A Format is the set of values
//   0, +-n * 2^(e - p + 1)   with 2^(p-1) <= n < 2^p and emin <= e <= emax   (normals),
//   +-n * 2^(emin - p + 1)   with 1 <= n < 2^(p-1)                             (subnormals, if on),
// minus, when `top_significand_is_nan` is set, the largest significand of the top binade (OCP
// FP8 E4M3 spends that pattern on NaN, so its largest finite value is 448, not 480), plus +-inf
// when `has_inf`, plus NaN when `has_nan`. Every format here is a subset of fp64:
// 2 <= p <= 53, -1022 <= emin <= emax <= 1023, so each of its values is exactly a double.
//
// The accessors derive everything else from the fields: unit roundoff u = 2^-p (the relative
// error bound of round-to-nearest), the largest finite value, the smallest normal 2^emin, the
// smallest subnormal 2^(emin-p+1) (2^emin when subnormals are off), the overflow threshold
// (the midpoint above the largest finite value: round-to-nearest sends larger magnitudes to
// inf, or NaN in a format without inf) and natural logs of both (exp(x) overflows for x above
// LogOverflowThreshold(); log-sum-exp and softmax studies need them).
//
// `saturate` selects how RoundToFormat treats overflow: when set, every non-NaN result is
// finite (overflow and infinite inputs clamp to +-max finite, as OCP's saturation mode and
// CUDA's __NV_SATFINITE do). `fp8e4m3sat` is E4M3 with it set.
//
// Text form (ParseFormat / Format::name): fp8e4m3 fp8e4m3sat fp8e5m2 fp16 bf16 tf32 fp32 fp64,
// or custom:p=P,emin=E,emax=E[,subnormals=0|1][,inf=0|1][,saturate=0|1][,topnan=0|1]. A custom
// format always has NaN. Error rule: bad text throws std::invalid_argument whose message is one
// line naming the bad part and the allowed values; Validate() does the same for a hand-built
// Format. Functions taking a Format assume it is valid (they are hot paths and do not check).
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace carrier {

namespace format_detail {
// 2^e as a double for -1074 <= e <= 1023, built from its bits so that it is constexpr.
constexpr double Pow2(int e) {
  if (e >= -1022) return std::bit_cast<double>(static_cast<std::uint64_t>(e + 1023) << 52);
  return std::bit_cast<double>(std::uint64_t{1} << (e + 1074));
}
}  // namespace format_detail

struct Format {
  std::string name;        // canonical text form; ParseFormat(name) gives this format back
  int precision = 53;      // p: significand bits including the implicit leading bit
  int emin = -1022;        // exponent of the smallest normal number 2^emin
  int emax = 1023;         // exponent of the top binade [2^emax, 2^(emax+1))
  bool subnormals = true;  // gradual underflow below 2^emin; off: only 0 and 2^emin there
  bool has_inf = true;     // +-inf exist (OCP E4M3 has none)
  bool has_nan = true;     // NaN exists (every predefined and custom format has it)
  bool saturate = false;   // overflow clamps to +-max finite instead of inf/NaN
  bool top_significand_is_nan = false;  // OCP E4M3: all-ones significand at emax is NaN

  bool operator==(const Format&) const = default;

  constexpr double UnitRoundoff() const { return format_detail::Pow2(-precision); }
  // Largest finite value: (2^p - 1 - [top_significand_is_nan]) * 2^(emax-p+1).
  constexpr double MaxFinite() const { return std::bit_cast<double>(MaxFiniteBits()); }
  // The same value as the bits of a double: RoundToFormat compares against it.
  constexpr std::uint64_t MaxFiniteBits() const {
    const std::uint64_t trailing =
        ((std::uint64_t{1} << (precision - 1)) - 1 - (top_significand_is_nan ? 1 : 0));
    return (static_cast<std::uint64_t>(emax + 1023) << 52) | (trailing << (53 - precision));
  }
  constexpr double MinNormal() const { return format_detail::Pow2(emin); }
  constexpr double MinSubnormal() const {
    return subnormals ? format_detail::Pow2(emin - precision + 1) : MinNormal();
  }
  // Spacing of the values in the top binade.
  constexpr double MaxUlp() const { return format_detail::Pow2(emax - precision + 1); }
  // max finite + MaxUlp()/2. For fp64 the sum is not a double and this rounds it to
  // 2^1024 = inf; use LogOverflowThreshold(), which is exact enough for every format.
  constexpr double OverflowThreshold() const { return MaxFinite() + MaxUlp() / 2; }
  double LogMaxFinite() const;
  double LogOverflowThreshold() const;

  // Throws std::invalid_argument (one line) when the fields break the contract above.
  void Validate() const;
};

// Whether every finite value of `inner` is a value of `outer`: inner's precision at most
// outer's and its exponent range, subnormals included, inside outer's. Converting such a
// value to outer is exact in every rounding mode.
constexpr bool ValuesWithin(const Format& inner, const Format& outer) {
  return inner.precision <= outer.precision && inner.emax <= outer.emax &&
         inner.emin >= outer.emin && inner.emin - inner.precision >= outer.emin - outer.precision;
}

// Predefined formats (OCP 8-bit floating point spec v1.0, IEEE 754 binary16/32/64, Google
// bfloat16, NVIDIA TensorFloat-32).
Format Fp8E4M3();     // p=4, emin=-6, emax=8, no inf, one NaN pattern per sign, max 448
Format Fp8E4M3Sat();  // the same values; overflow and inf saturate to +-448
Format Fp8E5M2();     // p=3, emin=-14, emax=15, inf and NaN, max 57344
Format Fp16();        // p=11, emin=-14, emax=15, max 65504
Format BF16();        // p=8, emin=-126, emax=127
Format TF32();        // p=11, emin=-126, emax=127 (stored in 32 bits; 19 of them significant)
Format Fp32();        // p=24, emin=-126, emax=127
Format Fp64();        // p=53, emin=-1022, emax=1023

// All predefined formats, in the order listed above.
const std::vector<Format>& PredefinedFormats();

// Parses a format name or a custom:... description (see the contract above).
Format ParseFormat(std::string_view text);

// The canonical custom:... text for the given fields (the name ParseFormat gives a custom
// format): keys p, emin, emax always, then each flag that differs from its default.
std::string CustomFormatName(int precision, int emin, int emax, bool subnormals, bool has_inf,
                             bool saturate, bool top_significand_is_nan);

}  // namespace carrier
