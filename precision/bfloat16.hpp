// precision/bfloat16.hpp: BFloat16, Google's bfloat16 as a 16-bit storage type.
//
// Contract. `bits` is the top half of an fp32 encoding (1 sign, 8 exponent, 7 trailing
// significand bits; the layout of CUDA's __nv_bfloat16 and of Highway's hwy::bfloat16_t), so a
// BFloat16 can be memcpy'd to and from either. Trivially copyable, standard-layout;
// `BFloat16{}` is +0. Subnormals are kept, as on CUDA (x86's AVX512-BF16 flushes them).
//   BFloat16(float), BFloat16(double): round to nearest, ties to even, computed once from the
//     argument (a double is never rounded to float first). Overflow (|x| >= 0x1.FFp127) gives
//     +-inf; every NaN gives 0x7FFF. Bit for bit the same as CUDA's __float2bfloat16_rn and
//     __double2bfloat16. Highway 1.0.3's BF16FromF32 and DemoteTo truncate instead: never use
//     them where rounding matters.
//   ToFloat(), ToDouble(): exact; NaN stays NaN.
// Pure integer bit manipulation; every member is CARRIER_HD.
#pragma once

#include <cstdint>

#include "core/platform.hpp"
#include "precision/binary16_detail.hpp"

namespace carrier {

struct BFloat16 {
  std::uint16_t bits;

  BFloat16() = default;
  CARRIER_HD explicit BFloat16(float f) : bits(binary16_detail::NarrowFloat<7, 8>(f)) {}
  CARRIER_HD explicit BFloat16(double d) : bits(binary16_detail::NarrowDouble<7, 8>(d)) {}

  CARRIER_HD static constexpr BFloat16 FromBits(std::uint16_t b) {
    BFloat16 h{};
    h.bits = b;
    return h;
  }
  CARRIER_HD constexpr std::uint16_t ToBits() const { return bits; }

  CARRIER_HD float ToFloat() const {
    return binary16_detail::FloatFromBits(static_cast<std::uint32_t>(bits) << 16);
  }
  CARRIER_HD double ToDouble() const { return static_cast<double>(ToFloat()); }
  CARRIER_HD explicit operator float() const { return ToFloat(); }
  CARRIER_HD explicit operator double() const { return ToDouble(); }

  CARRIER_HD constexpr bool IsNaN() const { return (bits & 0x7FFFu) > 0x7F80u; }
};

}  // namespace carrier
