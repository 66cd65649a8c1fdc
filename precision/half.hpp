// precision/half.hpp: Half, IEEE 754 binary16 as a 16-bit storage type.
//
// Contract. `bits` is the binary16 encoding (1 sign, 5 exponent, 10 trailing significand bits;
// the layout of CUDA's __half and of Highway's hwy::float16_t), so a Half can be memcpy'd to
// and from either. Half is trivially copyable and standard-layout; `Half{}` is +0.
//   Half(float), Half(double): round to nearest, ties to even, computed once from the argument
//     (a double is never rounded to float first: that double rounding would turn some values
//     just above a half-way point into ties). Overflow (|x| >= 65520) gives +-inf; values at
//     or below 2^-25 give +-0; every NaN gives 0x7FFF. Bit for bit the same as CUDA's
//     __float2half_rn and __double2half, on host and device.
//   ToFloat(), ToDouble(): exact (every binary16 value is a float); NaN stays NaN.
// Pure integer bit manipulation, no intrinsics and no host-only calls: every member is
// CARRIER_HD, so the same conversions run inside CUDA kernels.
#pragma once

#include <cstdint>

#include "core/platform.hpp"
#include "precision/binary16_detail.hpp"

namespace carrier {

struct Half {
  std::uint16_t bits;

  Half() = default;
  CARRIER_HD explicit Half(float f) : bits(binary16_detail::NarrowFloat<10, 5>(f)) {}
  CARRIER_HD explicit Half(double d) : bits(binary16_detail::NarrowDouble<10, 5>(d)) {}

  CARRIER_HD static constexpr Half FromBits(std::uint16_t b) {
    Half h{};
    h.bits = b;
    return h;
  }
  CARRIER_HD constexpr std::uint16_t ToBits() const { return bits; }

  CARRIER_HD float ToFloat() const {
    const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
    const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
    std::uint32_t trailing = bits & 0x3FFu;
    if (exponent == 0x1F)  // inf or NaN: keep the payload (a NaN stays a NaN, quiet or not)
      return binary16_detail::FloatFromBits(sign | 0x7F800000u | (trailing << 13));
    if (exponent != 0)
      return binary16_detail::FloatFromBits(sign | ((exponent + 112) << 23) | (trailing << 13));
    if (trailing == 0) return binary16_detail::FloatFromBits(sign);
    // Subnormal trailing * 2^-24: normalise so the leading bit becomes the implicit one.
    std::uint32_t float_exponent = 113;  // biased exponent of 2^-14
    while ((trailing & 0x400u) == 0) {
      trailing <<= 1;
      --float_exponent;
    }
    return binary16_detail::FloatFromBits(sign | (float_exponent << 23) |
                                          ((trailing & 0x3FFu) << 13));
  }
  CARRIER_HD double ToDouble() const { return static_cast<double>(ToFloat()); }
  CARRIER_HD explicit operator float() const { return ToFloat(); }
  CARRIER_HD explicit operator double() const { return ToDouble(); }

  CARRIER_HD constexpr bool IsNaN() const { return (bits & 0x7FFFu) > 0x7C00u; }
};

}  // namespace carrier
