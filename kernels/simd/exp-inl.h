// kernels/simd/exp-inl.h: the vector exps of the exp policies, lane for lane the bits of the
// scalar functions (PortableExp in precision/math_policy.hpp, VectorFastExp in
// kernels/simd/fast_exp.hpp).
// Re-included once per Highway target (the per-target include guard below toggles with
// HWY_TARGET_TOGGLE, as in hwy/contrib); included through kernels/simd/carriers-inl.h.
#if defined(CARRIER_KERNELS_SIMD_EXP_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CARRIER_KERNELS_SIMD_EXP_INL_H_
#undef CARRIER_KERNELS_SIMD_EXP_INL_H_
#else
#define CARRIER_KERNELS_SIMD_EXP_INL_H_
#endif

#include <cstddef>
#include <limits>
#include <type_traits>

#include "hwy/highway.h"
#include "kernels/simd/fast_exp.hpp"
#include "precision/math_policy.hpp"

HWY_BEFORE_NAMESPACE();
namespace carrier::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ------------------------------------------------------------------ portable exp

// True where MulAdd/NegMulAdd are one fused operation, i.e. equal to std::fma.
#undef CARRIER_SIMD_FUSED_MULADD
#if HWY_ARCH_X86 && (HWY_TARGET <= HWY_AVX2) && (HWY_TARGET != HWY_SCALAR)
#define CARRIER_SIMD_FUSED_MULADD 1
#else
#define CARRIER_SIMD_FUSED_MULADD 0
#endif

// PortableExp::Exp lane by lane: precision/math_policy.hpp's portable_detail::ExpF/ExpD with
// the same operations in the same order (fma where they use std::fma, Mul then Add where they
// write x * c + s), so the bits are those of the scalar function. NaN -> NaN, +inf -> +inf,
// -inf -> +0, x > 89 / 710 -> +inf, x < -104 / -746 -> +0.
template <class D>
HWY_INLINE hn::Vec<D> ExpPortable(D d, hn::Vec<D> x) {
  using T = hn::TFromD<D>;
#if CARRIER_SIMD_FUSED_MULADD
  const hn::RebindToSigned<D> di;
  using TI = hn::TFromD<hn::RebindToSigned<hn::ScalableTag<T>>>;
  constexpr bool kF32 = std::is_same_v<T, float>;
  const auto kHi = hn::Set(d, kF32 ? T(89.0f) : T(710.0));
  const auto kLo = hn::Set(d, kF32 ? T(-104.0f) : T(-746.0));
  // Clamp so the integer part stays in range; the out-of-range lanes are replaced below.
  const auto xc = hn::Min(hn::Max(x, kLo), kHi);
  hn::Vec<D> kf, r, p;
  if constexpr (kF32) {
    constexpr float kLog2e = 1.44269504088896340736f;
    constexpr float kShift = 12582912.0f;
    constexpr float kLn2Hi = 0.693147182464599609375f;
    constexpr float kLn2Lo =
        static_cast<float>(0.6931471805599453094172321 - 0.693147182464599609375);
    kf = hn::Sub(hn::Add(hn::Mul(xc, hn::Set(d, kLog2e)), hn::Set(d, kShift)), hn::Set(d, kShift));
    r = hn::NegMulAdd(kf, hn::Set(d, kLn2Hi), xc);
    r = hn::NegMulAdd(kf, hn::Set(d, kLn2Lo), r);
    p = hn::Set(d, 1.0f / 5040.0f);
    p = hn::MulAdd(p, r, hn::Set(d, 1.0f / 720.0f));
    p = hn::MulAdd(p, r, hn::Set(d, 1.0f / 120.0f));
    p = hn::MulAdd(p, r, hn::Set(d, 1.0f / 24.0f));
    p = hn::MulAdd(p, r, hn::Set(d, 1.0f / 6.0f));
    p = hn::MulAdd(p, r, hn::Set(d, 0.5f));
    p = hn::MulAdd(p, r, hn::Set(d, 1.0f));
    p = hn::MulAdd(p, r, hn::Set(d, 1.0f));
  } else {
    constexpr double kLog2e = 1.44269504088896340735992468100189214;
    constexpr double kShift = 6755399441055744.0;
    constexpr double kLn2Hi = 0x1.62e42fefa39efp-1;
    constexpr double kLn2Lo = 0x1.abc9e3b39803fp-56;
    constexpr double kInvFact[] = {1.0 / 6227020800.0,
                                   1.0 / 479001600.0,
                                   1.0 / 39916800.0,
                                   1.0 / 3628800.0,
                                   1.0 / 362880.0,
                                   1.0 / 40320.0,
                                   1.0 / 5040.0,
                                   1.0 / 720.0,
                                   1.0 / 120.0,
                                   1.0 / 24.0,
                                   1.0 / 6.0,
                                   0.5,
                                   1.0,
                                   1.0};
    kf = hn::Sub(hn::Add(hn::Mul(xc, hn::Set(d, kLog2e)), hn::Set(d, kShift)), hn::Set(d, kShift));
    r = hn::NegMulAdd(kf, hn::Set(d, kLn2Hi), xc);
    r = hn::NegMulAdd(kf, hn::Set(d, kLn2Lo), r);
    p = hn::Set(d, kInvFact[0]);
    for (int i = 1; i < 14; ++i) p = hn::MulAdd(p, r, hn::Set(d, kInvFact[i]));
  }
  // k = (int)kf; k1 = k / 2 rounded toward zero (C division): (k + (k < 0)) >> 1.
  const auto k = hn::ConvertTo(di, kf);
  constexpr int kSignShift = static_cast<int>(sizeof(TI) * 8 - 1);
  const auto neg =
      hn::BitCast(di, hn::ShiftRight<kSignShift>(hn::BitCast(hn::RebindToUnsigned<D>(), k)));
  const auto k1 = hn::ShiftRight<1>(hn::Add(k, neg));
  const auto k2 = hn::Sub(k, k1);
  constexpr TI kBias = kF32 ? 127 : 1023;
  constexpr int kMant = kF32 ? 23 : 52;
  const auto pow1 = hn::BitCast(d, hn::ShiftLeft<kMant>(hn::Add(k1, hn::Set(di, kBias))));
  const auto pow2 = hn::BitCast(d, hn::ShiftLeft<kMant>(hn::Add(k2, hn::Set(di, kBias))));
  auto y = hn::Mul(hn::Mul(p, pow1), pow2);
  y = hn::IfThenElse(hn::Gt(x, kHi), hn::Set(d, std::numeric_limits<T>::infinity()), y);
  y = hn::IfThenElse(hn::Lt(x, kLo), hn::Zero(d), y);
  return hn::IfThenElse(hn::IsNaN(x), hn::Add(x, x), y);
#else
  // MulAdd is not fused here: evaluate the scalar function per lane (exact by construction).
  HWY_ALIGN T buf[hn::MaxLanes(d)];
  hn::Store(x, d, buf);
  for (std::size_t i = 0; i < hn::Lanes(d); ++i) buf[i] = PortableExp::Exp<T>(buf[i]);
  return hn::Load(d, buf);
#endif
}

// VectorFastExp::Exp lane by lane (kernels/simd/fast_exp.hpp): t = x * log2e, k = round(t),
// f = t - k, degree-6 Horner with fma, 2^k added to the exponent field. double: ExpPortable.
template <class D>
HWY_INLINE hn::Vec<D> ExpFast(D d, hn::Vec<D> x) {
  using T = hn::TFromD<D>;
  if constexpr (!std::is_same_v<T, float>) {
    return ExpPortable(d, x);
  } else {
#if CARRIER_SIMD_FUSED_MULADD
    namespace fe = fast_exp_detail;
    const hn::RebindToSigned<D> di;
    const auto xc = hn::Min(hn::Max(x, hn::Set(d, fe::kLo)), hn::Set(d, fe::kHi));
    const auto t = hn::Mul(xc, hn::Set(d, fe::kLog2e));
    const auto kf = hn::Sub(hn::Add(t, hn::Set(d, fe::kShift)), hn::Set(d, fe::kShift));
    const auto f = hn::Sub(t, kf);
    auto p = hn::Set(d, fe::kC[6]);
    p = hn::MulAdd(p, f, hn::Set(d, fe::kC[5]));
    p = hn::MulAdd(p, f, hn::Set(d, fe::kC[4]));
    p = hn::MulAdd(p, f, hn::Set(d, fe::kC[3]));
    p = hn::MulAdd(p, f, hn::Set(d, fe::kC[2]));
    p = hn::MulAdd(p, f, hn::Set(d, fe::kC[1]));
    p = hn::MulAdd(p, f, hn::Set(d, fe::kC[0]));
    const auto k = hn::ConvertTo(di, kf);
    auto y = hn::BitCast(d, hn::Add(hn::BitCast(di, p), hn::ShiftLeft<23>(k)));
    y = hn::IfThenElse(hn::Gt(x, hn::Set(d, fe::kHi)),
                       hn::Set(d, std::numeric_limits<T>::infinity()), y);
    y = hn::IfThenElse(hn::Lt(x, hn::Set(d, fe::kLo)), hn::Zero(d), y);
    return hn::IfThenElse(hn::IsNaN(x), hn::Add(x, x), y);
#else
    HWY_ALIGN T buf[hn::MaxLanes(d)];
    hn::Store(x, d, buf);
    for (std::size_t i = 0; i < hn::Lanes(d); ++i) buf[i] = VectorFastExp::Exp<T>(buf[i]);
    return hn::Load(d, buf);
#endif
  }
}

// The vector exp of an exp policy.
template <class Policy, class D>
HWY_INLINE hn::Vec<D> PolicyExp(D d, hn::Vec<D> x) {
  if constexpr (std::is_same_v<Policy, VectorFastExp>) {
    return ExpFast(d, x);
  } else {
    static_assert(std::is_same_v<Policy, PortableExp>, "vector exp: portable or vecfast");
    return ExpPortable(d, x);
  }
}

}  // namespace carrier::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard (per target)
