// precision/binary16_detail.hpp: the one rounding shared by Half and BFloat16.
//
// Contract of NarrowToBinary16<kTrailingBits, kExponentBits>(source bits): the 16-bit pattern
// of the IEEE-style format with that many trailing significand and exponent bits (bias
// 2^(kExponentBits-1) - 1, subnormals, inf, NaN) nearest to the source value, ties to even,
// computed once from the source (fp32 or fp64) with integer operations only, so no double
// rounding and identical results on host and device. Overflow gives +-inf (round to nearest
// has no saturation). Every NaN becomes 0x7FFF, the canonical quiet NaN that CUDA's
// __float2half_rn / __float2bfloat16_rn return on host and device (sign and payload dropped).
#pragma once

#include <cstdint>
#include <cstring>

#include "core/platform.hpp"

namespace carrier::binary16_detail {

CARRIER_HD inline std::uint32_t FloatBits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
CARRIER_HD inline float FloatFromBits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
CARRIER_HD inline std::uint64_t DoubleBits(double d) {
  std::uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

inline constexpr std::uint16_t kCanonicalNaN = 0x7FFF;

// UInt: uint32_t for an fp32 source, uint64_t for fp64. kSrcTrailing/kSrcBias describe it.
template <int kTrailingBits, int kExponentBits, class UInt, int kSrcTrailing, int kSrcBias>
CARRIER_HD constexpr std::uint16_t NarrowToBinary16(UInt bits) {
  constexpr int kTotal = sizeof(UInt) * 8;
  constexpr int kBias = (1 << (kExponentBits - 1)) - 1;
  constexpr int kShift = kSrcTrailing - kTrailingBits;  // trailing bits dropped in normals
  constexpr UInt kSrcSign = UInt{1} << (kTotal - 1);
  constexpr UInt kSrcInf = ((UInt{1} << (kTotal - 1 - kSrcTrailing)) - 1) << kSrcTrailing;
  constexpr UInt kSrcImplicit = UInt{1} << kSrcTrailing;
  // Smallest normal of the target, 2^(1-kBias), as a source pattern.
  constexpr UInt kMinNormal = static_cast<UInt>(kSrcBias + 1 - kBias) << kSrcTrailing;
  constexpr std::uint32_t kInf = ((1u << kExponentBits) - 1) << kTrailingBits;

  const std::uint16_t sign = static_cast<std::uint16_t>((bits & kSrcSign) >> (kTotal - 16));
  const UInt mag = bits & ~kSrcSign;
  if (mag > kSrcInf) return kCanonicalNaN;

  UInt kept;  // target magnitude pattern before rounding (may carry into the exponent)
  UInt rem;   // dropped bits
  UInt half;  // the dropped bits' value of one half target ulp
  if (mag >= kMinNormal) {
    // Rebias in place: exponent and trailing bits shift down together.
    kept = (mag >> kShift) - (static_cast<UInt>(kSrcBias - kBias) << kTrailingBits);
    rem = mag & ((UInt{1} << kShift) - 1);
    half = UInt{1} << (kShift - 1);
  } else {
    // Target subnormal (or zero): value = sig * 2^(max(E,1) - bias - trailing) and the target
    // quantum is 2^(1 - kBias - kTrailingBits).
    const int biased = static_cast<int>(mag >> kSrcTrailing);
    const UInt sig = (mag & (kSrcImplicit - 1)) | (biased != 0 ? kSrcImplicit : 0);
    const int shift = (kSrcBias + kSrcTrailing + 1 - kBias - kTrailingBits) -
                      (biased != 0 ? biased : 1);  // >= kShift + 1 >= 1 here
    // sig < 2^(kSrcTrailing+1) <= 2^(shift-1) means below half the smallest subnormal.
    if (shift > kSrcTrailing + 1) return sign;
    kept = sig >> shift;
    rem = sig & ((UInt{1} << shift) - 1);
    half = UInt{1} << (shift - 1);
  }
  if (rem > half || (rem == half && (kept & 1) != 0)) ++kept;
  if (kept >= kInf) return static_cast<std::uint16_t>(sign | kInf);
  return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(kept));
}

template <int kTrailingBits, int kExponentBits>
CARRIER_HD inline std::uint16_t NarrowFloat(float f) {
  return NarrowToBinary16<kTrailingBits, kExponentBits, std::uint32_t, 23, 127>(FloatBits(f));
}

template <int kTrailingBits, int kExponentBits>
CARRIER_HD inline std::uint16_t NarrowDouble(double d) {
  return NarrowToBinary16<kTrailingBits, kExponentBits, std::uint64_t, 52, 1023>(DoubleBits(d));
}

}  // namespace carrier::binary16_detail
