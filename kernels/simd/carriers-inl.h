// kernels/simd/carriers-inl.h: the per-target SIMD carriers (Highway), re-included once per
// target by each dispatched simd_<type>.cc.
//
// Contract. Every kernel here realises a declared merge order and equals the scalar Replay of
// it bit for bit, on every target:
//   strided:K              lane k of K virtual lanes pushes x[k], x[k+K], ... from Identity
//                          with exactly the carrier's Push (core/carriers/*.hpp); the K lane
//                          states are then merged pairwise in lane order by the carrier's own
//                          scalar Combine (ReduceLanes below), as BuildTree(strided:K) says.
//   strided:K:tile:T:lift  (lse, welford) lane k lifts its elements in tiles of T with the
//                          carrier's LiftTile algorithm, merges the tile states in order with
//                          Combine (Assimilate...), then the lanes pairwise as above.
// K virtual lanes are K / N hardware vectors of N lanes, so the tree does not depend on the
// target's width. What makes the bits equal: -ffp-contract=off (Mul then Add, never fused
// unless the scalar code calls fma), the portable exp below (same operation sequence as
// PortableExp, with MulAdd where it has std::fma: fused on AVX2/AVX3, and lane by lane
// through the scalar function on targets whose MulAdd is not fused), the carriers' special-value
// rules written out with masks (never Highway's Max, whose NaN and signed-zero choices differ
// per target, nor hn::Exp, which returns 0 for NaN), and no SumOfLanes.
// Verbs (STYLE.md): Update... pushes one vector of inputs into a lane state, Assimilate...
// combines another state into it, Reduce... stores the lanes and merges them in the declared
// order. Lane states are small structs of vectors: valid on the x86 and scalar targets this
// project compiles (not on SVE/RVV, whose vectors are sizeless).
#if defined(CARRIER_KERNELS_SIMD_CARRIERS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CARRIER_KERNELS_SIMD_CARRIERS_INL_H_
#undef CARRIER_KERNELS_SIMD_CARRIERS_INL_H_
#else
#define CARRIER_KERNELS_SIMD_CARRIERS_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/carriers/argmax.hpp"
#include "core/carriers/compensated.hpp"
#include "core/carriers/dot.hpp"
#include "core/carriers/max.hpp"
#include "core/carriers/online_softmax.hpp"
#include "core/carriers/scaled_norm2.hpp"
#include "core/carriers/sum.hpp"
#include "core/carriers/welford.hpp"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/simd/fast_exp.hpp"
#include "kernels/simd/plan.hpp"
#include "precision/bfloat16.hpp"
#include "precision/half.hpp"
#include "precision/math_policy.hpp"

HWY_BEFORE_NAMESPACE();
namespace carrier::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ------------------------------------------------------------------ storage and compute types

template <class TS>
using ComputeOf = std::conditional_t<std::is_same_v<TS, double>, double, float>;

// binary16 -> binary32 with integer operations, exact for every input (inf and NaN included).
// Highway 1.0.3's emulated PromoteTo (targets without F16C: SSE4, SSSE3, SCALAR) turns +-inf
// into +-65536, so those targets use this instead.
template <class D>
HWY_INLINE hn::Vec<D> PromoteF16Exact(D d, hn::Vec<hn::Rebind<hwy::float16_t, D>> v) {
  const hn::RebindToUnsigned<D> du;
  const hn::RebindToSigned<D> di;
  const hn::Rebind<std::uint16_t, D> du16;
  const auto h = hn::PromoteTo(du, hn::BitCast(du16, v));
  const auto sign = hn::ShiftLeft<16>(hn::And(h, hn::Set(du, 0x8000u)));
  const auto e = hn::And(hn::ShiftRight<10>(h), hn::Set(du, 0x1Fu));
  const auto m = hn::And(h, hn::Set(du, 0x3FFu));
  const auto normal =
      hn::Or(hn::ShiftLeft<23>(hn::Add(e, hn::Set(du, 112u))), hn::ShiftLeft<13>(m));
  const auto inf_nan = hn::Or(hn::Set(du, 0x7F800000u), hn::ShiftLeft<13>(m));
  const auto subnormal =
      hn::BitCast(du, hn::Mul(hn::ConvertTo(d, hn::BitCast(di, m)), hn::Set(d, 0x1.0p-24f)));
  const auto mag = hn::IfThenElse(hn::Eq(e, hn::Set(du, 31u)), inf_nan,
                                  hn::IfThenElse(hn::Eq(e, hn::Zero(du)), subnormal, normal));
  return hn::BitCast(d, hn::Or(mag, sign));
}

// Loads N storage values and promotes them exactly to the compute type.
template <class D, class TS>
HWY_INLINE hn::Vec<D> LoadC(D d, const TS* HWY_RESTRICT p) {
  using T = hn::TFromD<D>;
  if constexpr (std::is_same_v<TS, T>) {
    return hn::LoadU(d, p);
#if !(HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2 && HWY_TARGET != HWY_SCALAR)
  } else if constexpr (std::is_same_v<TS, hwy::float16_t>) {
    const hn::Rebind<TS, D> ds;
    return PromoteF16Exact(d, hn::LoadU(ds, p));
#endif
  } else {
    const hn::Rebind<TS, D> ds;
    return hn::PromoteTo(d, hn::LoadU(ds, p));
  }
}

// 16-bit storage <-> float through precision/'s exact conversions (same bit layouts).
template <class TS>
HWY_INLINE float ToCompute(TS v) {
  std::uint16_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  if constexpr (std::is_same_v<TS, hwy::float16_t>) {
    return Half::FromBits(bits).ToFloat();
  } else {
    return BFloat16::FromBits(bits).ToFloat();
  }
}
template <class TS>
HWY_INLINE TS FromFloat(float f) {
  std::uint16_t bits;
  if constexpr (std::is_same_v<TS, hwy::float16_t>) {
    bits = Half(f).ToBits();
  } else {
    bits = BFloat16(f).ToBits();
  }
  TS v;
  std::memcpy(&v, &bits, sizeof(bits));
  return v;
}

// Copies x[0, count) (count < cap) into a buffer of cap storage values padded with `pad`
// (given in the compute type and representable in the storage type), so a partial block is
// read without touching memory past the input.
template <class TS, class T>
HWY_INLINE void FillPadded(TS* buf, std::size_t cap, const TS* x, std::size_t count, T pad) {
  for (std::size_t i = 0; i < count && i < cap; ++i) buf[i] = x[i];
  TS p;
  if constexpr (std::is_same_v<TS, T>) {
    p = pad;
  } else {
    p = FromFloat<TS>(static_cast<float>(pad));  // -0, +0, -inf: exact
  }
  for (std::size_t i = count; i < cap; ++i) buf[i] = p;
}

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

// ------------------------------------------------------------------ shared lane helpers

// Max<T>::Of for non-NaN operands: the larger, +0 above -0 (equal values: bitwise And keeps
// +0 when either is +0, and equal non-zero values have equal bits). NaNs are tracked apart.
template <class D>
HWY_INLINE hn::Vec<D> OfNoNaN(D /*d*/, hn::Vec<D> a, hn::Vec<D> b) {
  const auto r = hn::IfThenElse(hn::Gt(b, a), b, a);
  return hn::IfThenElse(hn::Eq(a, b), hn::And(a, b), r);
}

template <class D>
HWY_INLINE hn::Vec<D> NaNBits(D d, hn::Vec<D> x) {
  return hn::VecFromMask(d, hn::IsNaN(x));
}

template <class D>
HWY_INLINE hn::Vec<D> NegInf(D d) {
  return hn::Set(d, -std::numeric_limits<hn::TFromD<D>>::infinity());
}

// Prefetches `count` storage values from p, one request per 64-byte line.
template <class TS>
HWY_INLINE void PrefetchRow(const TS* p, std::size_t count) {
  const char* c = reinterpret_cast<const char*>(p);
  for (std::size_t b = 0; b < count * sizeof(TS); b += 64) hwy::Prefetch(c + b);
}

// Merges lane states [lo, hi) with C::Combine exactly as merge_tree's PairwiseOver does (the
// left half takes the extra lane).
template <class C>
typename C::State ReduceLanes(const typename C::State* s, std::size_t lo, std::size_t hi) {
  if (hi - lo == 1) return s[lo];
  const std::size_t mid = lo + (hi - lo + 1) / 2;
  return C::Combine(ReduceLanes<C>(s, lo, mid), ReduceLanes<C>(s, mid, hi));
}

// ------------------------------------------------------------------ SIMD carriers (push)
// Each Ops type: T, the core carrier C, a lane state VState, Init, Update(d, st, x[, y], ctx),
// the pad value of a partial block (the tail is masked anyway) and Store into K scalar states.
// ctx.count is the number of elements each lane holds after this update (a lane's count is the
// same in every full block).

struct Ctx {
  std::uint64_t count;  // elements per lane after this update (full blocks)
};

template <class T>
struct SumOps {
  using C = Sum<T>;
  template <class D>
  struct VState {
    hn::Vec<D> s;
  };
  template <class D>
  static HWY_INLINE void Init(D d, VState<D>& st) {
    st.s = hn::Zero(d);
  }
  template <class D>
  static HWY_INLINE void Update(D, VState<D>& st, hn::Vec<D> x, hn::Vec<D>, const Ctx&) {
    st.s = hn::Add(st.s, x);
  }
  template <class D>
  static HWY_INLINE void Select(hn::Mask<D> m, VState<D>& st, const VState<D>& old) {
    st.s = hn::IfThenElse(m, st.s, old.s);
  }
  template <class D>
  static void Store(D d, const VState<D>& st, typename C::State* out, const std::uint64_t*) {
    HWY_ALIGN T s[hn::MaxLanes(d)];
    hn::Store(st.s, d, s);
    for (std::size_t i = 0; i < hn::Lanes(d); ++i) out[i] = {s[i]};
  }
};

template <class T>
struct DotOps {
  using C = Dot<T>;
  template <class D>
  using VState = typename SumOps<T>::template VState<D>;
  template <class D>
  static HWY_INLINE void Init(D d, VState<D>& st) {
    st.s = hn::Zero(d);
  }
  template <class D>
  static HWY_INLINE void Update(D, VState<D>& st, hn::Vec<D> a, hn::Vec<D> b, const Ctx&) {
    st.s = hn::Add(st.s, hn::Mul(a, b));  // two roundings, as Dot::Push
  }
  template <class D>
  static HWY_INLINE void Select(hn::Mask<D> m, VState<D>& st, const VState<D>& old) {
    st.s = hn::IfThenElse(m, st.s, old.s);
  }
  template <class D>
  static void Store(D d, const VState<D>& st, typename C::State* out, const std::uint64_t*) {
    HWY_ALIGN T s[hn::MaxLanes(d)];
    hn::Store(st.s, d, s);
    for (std::size_t i = 0; i < hn::Lanes(d); ++i) out[i] = {s[i]};
  }
};

template <class T>
struct CompensatedOps {
  using C = Compensated<T>;
  template <class D>
  struct VState {
    hn::Vec<D> s, c;
  };
  template <class D>
  static HWY_INLINE void Init(D d, VState<D>& st) {
    st.s = hn::Zero(d);
    st.c = hn::Zero(d);
  }
  // Neumaier's push: Fast2Sum with the larger magnitude first; c frozen once t is not finite.
  template <class D>
  static HWY_INLINE void Update(D, VState<D>& st, hn::Vec<D> x, hn::Vec<D>, const Ctx&) {
    const auto t = hn::Add(st.s, x);
    const auto big_s = hn::Ge(hn::Abs(st.s), hn::Abs(x));
    const auto err =
        hn::IfThenElse(big_s, hn::Add(hn::Sub(st.s, t), x), hn::Add(hn::Sub(x, t), st.s));
    st.c = hn::IfThenElse(hn::IsFinite(t), hn::Add(st.c, err), st.c);
    st.s = t;
  }
  template <class D>
  static HWY_INLINE void Select(hn::Mask<D> m, VState<D>& st, const VState<D>& old) {
    st.s = hn::IfThenElse(m, st.s, old.s);
    st.c = hn::IfThenElse(m, st.c, old.c);
  }
  template <class D>
  static void Store(D d, const VState<D>& st, typename C::State* out, const std::uint64_t*) {
    HWY_ALIGN T s[hn::MaxLanes(d)];
    HWY_ALIGN T c[hn::MaxLanes(d)];
    hn::Store(st.s, d, s);
    hn::Store(st.c, d, c);
    for (std::size_t i = 0; i < hn::Lanes(d); ++i) out[i] = {s[i], c[i]};
  }
};

template <class T>
struct MaxOps {
  using C = Max<T>;
  template <class D>
  struct VState {
    hn::Vec<D> m, nan;
  };
  template <class D>
  static HWY_INLINE void Init(D d, VState<D>& st) {
    st.m = NegInf(d);
    st.nan = hn::Zero(d);
  }
  template <class D>
  static HWY_INLINE void Update(D d, VState<D>& st, hn::Vec<D> x, hn::Vec<D>, const Ctx&) {
    st.nan = hn::Or(st.nan, NaNBits(d, x));
    st.m = OfNoNaN(d, st.m, x);
  }
  template <class D>
  static HWY_INLINE void Select(hn::Mask<D> m, VState<D>& st, const VState<D>& old) {
    st.m = hn::IfThenElse(m, st.m, old.m);
    st.nan = hn::IfThenElse(m, st.nan, old.nan);
  }
  template <class D>
  static void Store(D d, const VState<D>& st, typename C::State* out, const std::uint64_t*) {
    const auto v = hn::IfThenElse(hn::MaskFromVec(st.nan),
                                  hn::Set(d, std::numeric_limits<T>::quiet_NaN()), st.m);
    HWY_ALIGN T m[hn::MaxLanes(d)];
    hn::Store(v, d, m);
    for (std::size_t i = 0; i < hn::Lanes(d); ++i) out[i] = {m[i]};
  }
};

// OnlineSoftmax<T, PortableExp>::Push, one exp per element: with diff = x - m,
//   x == -inf          -> unchanged (Lift(-inf) is Identity, Combine(s, Identity) == s);
//   x > m              -> (x, d * Exp(m - x) + 1)      [fl(m - x) == -fl(x - m)];
//   x < m              -> (m, d + Exp(x - m))          [1 * Exp(.) is exact];
//   x == m             -> (Of(m, x), d + 1)            [the == M guards];
// NaN inputs are tracked apart and make the lane NaNState.
template <class T, class Policy = PortableExp>
struct LseOps {
  using C = OnlineSoftmax<T, Policy>;
  template <class D>
  struct VState {
    hn::Vec<D> m, d, nan;
  };
  template <class D>
  static HWY_INLINE void Init(D d, VState<D>& st) {
    st.m = NegInf(d);
    st.d = hn::Zero(d);
    st.nan = hn::Zero(d);
  }
  template <class D>
  static HWY_INLINE void Update(D d, VState<D>& st, hn::Vec<D> x, hn::Vec<D>, const Ctx&) {
    const auto one = hn::Set(d, T(1));
    const auto diff = hn::Sub(x, st.m);
    auto e = PolicyExp<Policy>(d, hn::Neg(hn::Abs(diff)));
    e = hn::IfThenElse(hn::Eq(x, st.m), one, e);
    const auto dnew =
        hn::IfThenElse(hn::Gt(x, st.m), hn::Add(hn::Mul(st.d, e), one), hn::Add(st.d, e));
    const auto keep = hn::Eq(x, NegInf(d));
    st.d = hn::IfThenElse(keep, st.d, dnew);
    st.m = hn::IfThenElse(keep, st.m, OfNoNaN(d, st.m, x));
    st.nan = hn::Or(st.nan, NaNBits(d, x));
  }
  template <class D>
  static HWY_INLINE void Select(hn::Mask<D> m, VState<D>& st, const VState<D>& old) {
    st.m = hn::IfThenElse(m, st.m, old.m);
    st.d = hn::IfThenElse(m, st.d, old.d);
    st.nan = hn::IfThenElse(m, st.nan, old.nan);
  }
  // Combine(a, b) of OnlineSoftmax for non-NaN states (a earlier; NaN flags are or-ed).
  template <class D>
  static HWY_INLINE void Assimilate(D d, VState<D>& a, const VState<D>& b) {
    const auto big = OfNoNaN(d, a.m, b.m);
    const auto da = hn::IfThenElse(hn::Eq(a.m, big), a.d,
                                   hn::Mul(a.d, PolicyExp<Policy>(d, hn::Sub(a.m, big))));
    const auto db = hn::IfThenElse(hn::Eq(b.m, big), b.d,
                                   hn::Mul(b.d, PolicyExp<Policy>(d, hn::Sub(b.m, big))));
    const auto empty = hn::Eq(big, NegInf(d));
    a.m = big;
    a.d = hn::IfThenElse(empty, hn::Zero(d), hn::Add(da, db));
    a.nan = hn::Or(a.nan, b.nan);
  }
  // LiftTile of V * N lane tiles at once: lane group g's row r is x[r * stride + g * N .. + N)
  // (rows outer, so memory is read in order): the tile max in order, then d = sum in order of
  // (x == max ? 1 : Exp(x - max)).
  // `next` (may be null) is the next block: it is prefetched during the exp pass, so the memory
  // traffic of the one-pass kernel overlaps its arithmetic (a tile's max pass must wait for its
  // data; without the prefetch the two phases serialise and the one pass is no faster than two).
  template <std::size_t V, class D, class TS>
  static HWY_INLINE void LiftTiles(D d, VState<D>* t, const TS* HWY_RESTRICT x, std::size_t rows,
                                   std::size_t stride, const TS* next = nullptr) {
    constexpr std::size_t N = hn::MaxLanes(D());
    // Fast path, bit-identical to the exact one below when every lane's tile max is finite and
    // non-zero: hn::Max may then differ from Max<T>::Of only by dropping NaNs (its choice
    // between +0 and -0 and its NaN rule vary per target), a NaN input makes the tile's sum NaN
    // (Exp(NaN - max) is NaN), which is how the NaN flag is set, and the `x == max ? 1` guard is
    // bit-neutral (x - max = +0 and Exp(+0) == 1 exactly in both policies).
    {
      for (std::size_t g = 0; g < V; ++g) t[g].m = NegInf(d);
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t g = 0; g < V; ++g)
          t[g].m = hn::Max(t[g].m, LoadC(d, x + r * stride + g * N));
      bool ordinary = true;
      for (std::size_t g = 0; g < V; ++g)
        ordinary =
            ordinary && hn::AllTrue(d, hn::And(hn::IsFinite(t[g].m), hn::Ne(t[g].m, hn::Zero(d))));
      if (ordinary) {
        for (std::size_t g = 0; g < V; ++g) t[g].d = hn::Zero(d);
        for (std::size_t r = 0; r < rows; ++r) {
          if (next != nullptr) PrefetchRow(next + r * stride, stride);
          for (std::size_t g = 0; g < V; ++g)
            t[g].d = hn::Add(
                t[g].d, PolicyExp<Policy>(d, hn::Sub(LoadC(d, x + r * stride + g * N), t[g].m)));
        }
        for (std::size_t g = 0; g < V; ++g) t[g].nan = NaNBits(d, t[g].d);
        return;
      }
    }
    for (std::size_t g = 0; g < V; ++g) {
      t[g].m = NegInf(d);
      t[g].nan = hn::Zero(d);
      t[g].d = hn::Zero(d);
    }
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t g = 0; g < V; ++g) {
        const auto v = LoadC(d, x + r * stride + g * N);
        t[g].nan = hn::Or(t[g].nan, NaNBits(d, v));
        t[g].m = OfNoNaN(d, t[g].m, v);
      }
    const auto one = hn::Set(d, T(1));
    for (std::size_t r = 0; r < rows; ++r) {
      if (next != nullptr) PrefetchRow(next + r * stride, stride);
      for (std::size_t g = 0; g < V; ++g) {
        const auto v = LoadC(d, x + r * stride + g * N);
        const auto e = PolicyExp<Policy>(d, hn::Sub(v, t[g].m));
        t[g].d = hn::Add(t[g].d, hn::IfThenElse(hn::Eq(v, t[g].m), one, e));
      }
    }
    for (std::size_t g = 0; g < V; ++g)
      t[g].d = hn::IfThenElse(hn::Eq(t[g].m, NegInf(d)), hn::Zero(d), t[g].d);
  }
  template <class D>
  static void Store(D d, const VState<D>& st, typename C::State* out, const std::uint64_t*) {
    HWY_ALIGN T m[hn::MaxLanes(d)];
    HWY_ALIGN T dd[hn::MaxLanes(d)];
    HWY_ALIGN T nan[hn::MaxLanes(d)];
    hn::Store(st.m, d, m);
    hn::Store(st.d, d, dd);
    hn::Store(st.nan, d, nan);
    for (std::size_t i = 0; i < hn::Lanes(d); ++i) {
      std::uint64_t bits = 0;
      std::memcpy(&bits, &nan[i], sizeof(T));
      out[i] = bits ? C::NaNState() : typename C::State{m[i], dd[i]};
    }
  }
};

// Welford<T>::Push with the count n' shared by all lanes of a full block.
template <class T>
struct WelfordOps {
  using C = Welford<T>;
  template <class D>
  struct VState {
    hn::Vec<D> mean, m2;
  };
  template <class D>
  static HWY_INLINE void Init(D d, VState<D>& st) {
    st.mean = hn::Zero(d);
    st.m2 = hn::Zero(d);
  }
  template <class D>
  static HWY_INLINE void Update(D d, VState<D>& st, hn::Vec<D> x, hn::Vec<D>, const Ctx& ctx) {
    const auto tn = hn::Set(d, ScalarTraits<T>::FromCount(ctx.count));
    const auto bad = hn::Not(hn::And(hn::IsFinite(x), hn::IsFinite(st.mean)));
    const auto delta = hn::Sub(x, st.mean);
    const auto mean = hn::Add(st.mean, hn::Div(delta, tn));
    const auto m2 = hn::Add(st.m2, hn::Mul(delta, hn::Sub(x, mean)));
    const auto bad_mean = ctx.count == 1 ? x : hn::Add(st.mean, x);
    st.mean = hn::IfThenElse(bad, bad_mean, mean);
    st.m2 = hn::IfThenElse(bad, hn::Set(d, std::numeric_limits<T>::quiet_NaN()), m2);
  }
  template <class D>
  static HWY_INLINE void Select(hn::Mask<D> m, VState<D>& st, const VState<D>& old) {
    st.mean = hn::IfThenElse(m, st.mean, old.mean);
    st.m2 = hn::IfThenElse(m, st.m2, old.m2);
  }
  // Chan's Combine(a, b) for lanes holding na and nb elements (tn = na + nb), a earlier.
  template <class D>
  static HWY_INLINE void Assimilate(D d, VState<D>& a, const VState<D>& b, hn::Vec<D> ta,
                                    hn::Vec<D> tb, hn::Vec<D> tn, hn::Mask<D> a_empty,
                                    hn::Mask<D> b_empty) {
    const auto bad = hn::Not(hn::And(hn::IsFinite(a.mean), hn::IsFinite(b.mean)));
    const auto delta = hn::Sub(b.mean, a.mean);
    auto mean = hn::Add(a.mean, hn::Mul(delta, hn::Div(tb, tn)));
    auto m2 =
        hn::Add(hn::Add(a.m2, b.m2), hn::Mul(hn::Mul(delta, delta), hn::Div(hn::Mul(ta, tb), tn)));
    mean = hn::IfThenElse(bad, hn::Add(a.mean, b.mean), mean);
    m2 = hn::IfThenElse(bad, hn::Set(d, std::numeric_limits<T>::quiet_NaN()), m2);
    mean = hn::IfThenElse(b_empty, a.mean, hn::IfThenElse(a_empty, b.mean, mean));
    m2 = hn::IfThenElse(b_empty, a.m2, hn::IfThenElse(a_empty, b.m2, m2));
    a.mean = mean;
    a.m2 = m2;
  }
  // LiftTile (two-pass inside the tile) of V * N full lane tiles at once, rows outer as in
  // LseOps::LiftTiles; tk = T(rows) in every lane.
  template <std::size_t V, class D, class TS>
  static HWY_INLINE void LiftTiles(D d, VState<D>* t, const TS* HWY_RESTRICT x, std::size_t rows,
                                   std::size_t stride, hn::Vec<D> tk, const TS* next = nullptr) {
    constexpr std::size_t N = hn::MaxLanes(D());
    for (std::size_t g = 0; g < V; ++g) t[g].mean = hn::Zero(d);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t g = 0; g < V; ++g)
        t[g].mean = hn::Add(t[g].mean, LoadC(d, x + r * stride + g * N));
    for (std::size_t g = 0; g < V; ++g) {
      t[g].mean = hn::Div(t[g].mean, tk);
      t[g].m2 = hn::Zero(d);
    }
    for (std::size_t r = 0; r < rows; ++r) {
      if (next != nullptr) PrefetchRow(next + r * stride, stride);
      for (std::size_t g = 0; g < V; ++g) {
        const auto dev = hn::Sub(LoadC(d, x + r * stride + g * N), t[g].mean);
        t[g].m2 = hn::Add(t[g].m2, hn::Mul(dev, dev));
      }
    }
    for (std::size_t g = 0; g < V; ++g)
      t[g].m2 = hn::IfThenElse(hn::IsFinite(t[g].mean), t[g].m2,
                               hn::Set(d, std::numeric_limits<T>::quiet_NaN()));
  }
  // The same over a partial tile: row r counts in lane i only while r < count_i (pads are -0
  // in the sum, which leaves it bit-identical, and masked out of m2).
  template <class D, class TS>
  static HWY_INLINE void LiftTileMasked(D d, VState<D>& t, const TS* HWY_RESTRICT x,
                                        std::size_t rows, std::size_t stride, hn::Vec<D> tk) {
    auto sum = hn::Zero(d);
    for (std::size_t r = 0; r < rows; ++r) sum = hn::Add(sum, LoadC(d, x + r * stride));
    const auto mean = hn::Div(sum, tk);
    auto m2 = hn::Zero(d);
    for (std::size_t r = 0; r < rows; ++r) {
      const auto dev = hn::Sub(LoadC(d, x + r * stride), mean);
      const auto valid = hn::Gt(tk, hn::Set(d, static_cast<T>(r)));
      m2 = hn::IfThenElse(valid, hn::Add(m2, hn::Mul(dev, dev)), m2);
    }
    t.mean = mean;
    t.m2 = hn::IfThenElse(hn::IsFinite(mean), m2, hn::Set(d, std::numeric_limits<T>::quiet_NaN()));
  }
  template <class D>
  static void Store(D d, const VState<D>& st, typename C::State* out, const std::uint64_t* counts) {
    HWY_ALIGN T mean[hn::MaxLanes(d)];
    HWY_ALIGN T m2[hn::MaxLanes(d)];
    hn::Store(st.mean, d, mean);
    hn::Store(st.m2, d, m2);
    for (std::size_t i = 0; i < hn::Lanes(d); ++i)
      out[i] = counts[i] == 0 ? C::Identity() : typename C::State{counts[i], mean[i], m2[i]};
  }
};

// ScaledNorm2<T>::Push: a = |x|; a == 0 -> unchanged; scale >= a -> (scale, ssq + r*r) with
// r = (a == scale) ? 1 : a / scale; otherwise (a, 1 + ssq * (r*r)) with r = scale / a. The
// Identity (scale 0) falls in the second branch and gives (a, 1 + 0 * 0) = (a, 1).
template <class T>
struct Norm2Ops {
  using C = ScaledNorm2<T>;
  template <class D>
  struct VState {
    hn::Vec<D> scale, ssq, nan;
  };
  template <class D>
  static HWY_INLINE void Init(D d, VState<D>& st) {
    st.scale = hn::Zero(d);
    st.ssq = hn::Zero(d);
    st.nan = hn::Zero(d);
  }
  template <class D>
  static HWY_INLINE void Update(D d, VState<D>& st, hn::Vec<D> x, hn::Vec<D>, const Ctx&) {
    const auto one = hn::Set(d, T(1));
    const auto a = hn::Abs(x);
    const auto ge = hn::Ge(st.scale, a);
    auto r = hn::Div(hn::IfThenElse(ge, a, st.scale), hn::IfThenElse(ge, st.scale, a));
    r = hn::IfThenElse(hn::Eq(a, st.scale), one, r);
    const auto rr = hn::Mul(r, r);
    const auto ssq = hn::IfThenElse(ge, hn::Add(st.ssq, rr), hn::Add(one, hn::Mul(st.ssq, rr)));
    const auto keep = hn::Eq(a, hn::Zero(d));
    st.ssq = hn::IfThenElse(keep, st.ssq, ssq);
    st.scale = hn::IfThenElse(keep, st.scale, hn::IfThenElse(ge, st.scale, a));
    st.nan = hn::Or(st.nan, NaNBits(d, x));
  }
  template <class D>
  static HWY_INLINE void Select(hn::Mask<D> m, VState<D>& st, const VState<D>& old) {
    st.scale = hn::IfThenElse(m, st.scale, old.scale);
    st.ssq = hn::IfThenElse(m, st.ssq, old.ssq);
    st.nan = hn::IfThenElse(m, st.nan, old.nan);
  }
  template <class D>
  static void Store(D d, const VState<D>& st, typename C::State* out, const std::uint64_t*) {
    HWY_ALIGN T scale[hn::MaxLanes(d)];
    HWY_ALIGN T ssq[hn::MaxLanes(d)];
    HWY_ALIGN T nan[hn::MaxLanes(d)];
    hn::Store(st.scale, d, scale);
    hn::Store(st.ssq, d, ssq);
    hn::Store(st.nan, d, nan);
    const T qnan = std::numeric_limits<T>::quiet_NaN();
    for (std::size_t i = 0; i < hn::Lanes(d); ++i) {
      std::uint64_t bits = 0;
      std::memcpy(&bits, &nan[i], sizeof(T));
      out[i] = bits ? typename C::State{qnan, qnan} : typename C::State{scale[i], ssq[i]};
    }
  }
};

// ------------------------------------------------------------------ drivers

// strided:K by pushes: K / N vectors per block of K inputs; the last partial block is read from
// a padded copy and its updates are masked to the lanes that hold an element.
template <class Ops, std::size_t K, class TS>
void RunStrided(const TS* HWY_RESTRICT a, const TS* HWY_RESTRICT b, std::size_t n,
                typename Ops::C::State* lanes) {
  using T = ComputeOf<TS>;
  const hn::ScalableTag<T> d;
  constexpr std::size_t N = hn::MaxLanes(d);
  static_assert(K % N == 0, "K virtual lanes must be whole vectors");
  constexpr std::size_t V = K / N;
  using VS = typename Ops::template VState<hn::ScalableTag<T>>;
  VS st[V];
  for (std::size_t v = 0; v < V; ++v) Ops::Init(d, st[v]);
  const std::size_t blocks = n / K;
  const auto zero = hn::Zero(d);
  for (std::size_t blk = 0; blk < blocks; ++blk) {
    const Ctx ctx{blk + 1};
    const TS* pa = a + blk * K;
    if (b != nullptr) {
      const TS* pb = b + blk * K;
      for (std::size_t v = 0; v < V; ++v)
        Ops::Update(d, st[v], LoadC(d, pa + v * N), LoadC(d, pb + v * N), ctx);
    } else {
      for (std::size_t v = 0; v < V; ++v) Ops::Update(d, st[v], LoadC(d, pa + v * N), zero, ctx);
    }
  }
  const std::size_t rest = n - blocks * K;
  if (rest) {
    HWY_ALIGN TS ba[K];
    HWY_ALIGN TS bb[K];
    FillPadded(ba, K, a + blocks * K, rest, T(0));
    if (b != nullptr) FillPadded(bb, K, b + blocks * K, rest, T(0));
    const Ctx ctx{blocks + 1};
    for (std::size_t v = 0; v < V; ++v) {
      if (v * N >= rest) break;
      const VS old = st[v];
      Ops::Update(d, st[v], LoadC(d, ba + v * N), b != nullptr ? LoadC(d, bb + v * N) : zero, ctx);
      Ops::Select(hn::FirstN(d, rest - v * N), st[v], old);
    }
  }
  std::uint64_t counts[K];
  for (std::size_t k = 0; k < K; ++k) counts[k] = blocks + (k < rest ? 1 : 0);
  for (std::size_t v = 0; v < V; ++v) Ops::Store(d, st[v], lanes + v * N, counts + v * N);
}

// strided:K:tile:T:lift for OnlineSoftmax: per block of K * T inputs, each lane lifts its T
// elements (row r of the block is inputs r*K .. r*K + K - 1) and Assimilates the tile.
template <std::size_t K, class TS, class Policy>
void RunLseTiles(const TS* HWY_RESTRICT x, std::size_t n, std::size_t tile,
                 typename LseOps<ComputeOf<TS>, Policy>::C::State* lanes) {
  using T = ComputeOf<TS>;
  using Ops = LseOps<T, Policy>;
  const hn::ScalableTag<T> d;
  constexpr std::size_t N = hn::MaxLanes(d);
  constexpr std::size_t V = K / N;
  using VS = typename Ops::template VState<hn::ScalableTag<T>>;
  VS st[V];
  for (std::size_t v = 0; v < V; ++v) Ops::Init(d, st[v]);
  const std::size_t per_block = K * tile;
  const std::size_t blocks = n / per_block;
  for (std::size_t blk = 0; blk < blocks; ++blk) {
    VS t[V];
    const TS* next = blk + 1 < blocks ? x + (blk + 1) * per_block : nullptr;
    Ops::template LiftTiles<V>(d, t, x + blk * per_block, tile, K, next);
    for (std::size_t v = 0; v < V; ++v) Ops::Assimilate(d, st[v], t[v]);
  }
  const std::size_t rest = n - blocks * per_block;
  if (rest) {
    // Pads are -inf: they leave a tile's max and sum bit-identical, and a lane with no element
    // lifts to Identity, which Assimilate leaves bit-identical (as the tree has no chain there).
    const std::size_t rows = (rest + K - 1) / K;
    std::vector<TS> buf(rows * K);
    FillPadded(buf.data(), rows * K, x + blocks * per_block, rest,
               -std::numeric_limits<T>::infinity());
    VS t[V];
    Ops::template LiftTiles<V>(d, t, buf.data(), rows, K);
    for (std::size_t v = 0; v < V; ++v) Ops::Assimilate(d, st[v], t[v]);
  }
  for (std::size_t v = 0; v < V; ++v) Ops::Store(d, st[v], lanes + v * N, nullptr);
}

// strided:K:tile:T:lift for Welford: tile states by the two-pass LiftTile, merged into the lane
// by Chan's Combine (all lanes of a full block hold the same counts).
template <std::size_t K, class TS>
void RunWelfordTiles(const TS* HWY_RESTRICT x, std::size_t n, std::size_t tile,
                     typename WelfordOps<ComputeOf<TS>>::C::State* lanes) {
  using T = ComputeOf<TS>;
  using Ops = WelfordOps<T>;
  const hn::ScalableTag<T> d;
  constexpr std::size_t N = hn::MaxLanes(d);
  constexpr std::size_t V = K / N;
  using VS = typename Ops::template VState<hn::ScalableTag<T>>;
  VS st[V];
  for (std::size_t v = 0; v < V; ++v) Ops::Init(d, st[v]);
  const std::size_t per_block = K * tile;
  const std::size_t blocks = n / per_block;
  const auto tt = hn::Set(d, ScalarTraits<T>::FromCount(tile));
  const auto no = hn::Lt(tt, hn::Zero(d));  // all false
  for (std::size_t blk = 0; blk < blocks; ++blk) {
    const TS* p = x + blk * per_block;
    const auto ta = hn::Set(d, ScalarTraits<T>::FromCount(blk * tile));
    const auto tn = hn::Set(d, ScalarTraits<T>::FromCount((blk + 1) * tile));
    const auto a_empty = blk == 0 ? hn::Not(no) : no;
    VS t[V];
    const TS* next = blk + 1 < blocks ? p + per_block : nullptr;
    Ops::template LiftTiles<V>(d, t, p, tile, K, tt, next);
    for (std::size_t v = 0; v < V; ++v) Ops::Assimilate(d, st[v], t[v], ta, tt, tn, a_empty, no);
  }
  const std::size_t rest = n - blocks * per_block;
  std::uint64_t counts[K];
  for (std::size_t k = 0; k < K; ++k) counts[k] = blocks * tile;
  if (rest) {
    const std::size_t rows = (rest + K - 1) / K;
    std::vector<TS> buf(rows * K);
    FillPadded(buf.data(), rows * K, x + blocks * per_block, rest, -T(0));
    for (std::size_t v = 0; v < V; ++v) {
      HWY_ALIGN T tk[N], ta[N], tn[N];
      for (std::size_t i = 0; i < N; ++i) {
        const std::size_t k = v * N + i;
        const std::uint64_t c = k < rest ? (rest - k + K - 1) / K : 0;
        tk[i] = ScalarTraits<T>::FromCount(c);
        ta[i] = ScalarTraits<T>::FromCount(counts[k]);
        tn[i] = ScalarTraits<T>::FromCount(counts[k] + c);
        counts[k] += c;
      }
      const auto vtk = hn::Load(d, tk);
      VS t;
      Ops::LiftTileMasked(d, t, buf.data() + v * N, rows, K, vtk);
      Ops::Assimilate(d, st[v], t, hn::Load(d, ta), vtk, hn::Load(d, tn),
                      hn::Eq(hn::Load(d, ta), hn::Zero(d)), hn::Eq(vtk, hn::Zero(d)));
    }
  }
  for (std::size_t v = 0; v < V; ++v) Ops::Store(d, st[v], lanes + v * N, counts + v * N);
}

// ArgMax over K lanes (value, block index); realises `seq`: ArgMax is exact and associative,
// so every order-preserving tree gives the same (value, lowest index), and the lanes are
// merged by index (ties and NaNs: the lowest index), which is that result.
template <std::size_t K, class TS>
typename ArgMax<ComputeOf<TS>>::State RunArgMax(const TS* HWY_RESTRICT x, std::size_t n) {
  using T = ComputeOf<TS>;
  const hn::ScalableTag<T> d;
  const hn::RebindToSigned<decltype(d)> di;
  using TI = hn::TFromD<hn::RebindToSigned<hn::ScalableTag<T>>>;
  constexpr std::size_t N = hn::MaxLanes(d);
  constexpr std::size_t V = K / N;
  hn::Vec<hn::ScalableTag<T>> val[V];
  hn::Vec<hn::RebindToSigned<hn::ScalableTag<T>>> idx[V];
  for (std::size_t v = 0; v < V; ++v) {
    val[v] = NegInf(d);
    idx[v] = hn::Set(di, TI(-1));
  }
  auto update = [&](std::size_t v, hn::Vec<hn::ScalableTag<T>> xv, TI blk,
                    hn::Mask<hn::ScalableTag<T>> valid) {
    const auto empty = hn::RebindMask(d, hn::Lt(idx[v], hn::Zero(di)));
    const auto better = hn::AndNot(hn::IsNaN(val[v]), hn::Or(hn::IsNaN(xv), hn::Gt(xv, val[v])));
    const auto take = hn::And(valid, hn::Or(empty, better));
    val[v] = hn::IfThenElse(take, xv, val[v]);
    idx[v] = hn::IfThenElse(hn::RebindMask(di, take), hn::Set(di, blk), idx[v]);
  };
  const std::size_t blocks = n / K;
  const auto all = hn::FirstN(d, N);
  for (std::size_t blk = 0; blk < blocks; ++blk)
    for (std::size_t v = 0; v < V; ++v)
      update(v, LoadC(d, x + blk * K + v * N), static_cast<TI>(blk), all);
  const std::size_t rest = n - blocks * K;
  if (rest) {
    HWY_ALIGN TS buf[K];
    FillPadded(buf, K, x + blocks * K, rest, T(0));
    for (std::size_t v = 0; v * N < rest; ++v)
      update(v, LoadC(d, buf + v * N), static_cast<TI>(blocks), hn::FirstN(d, rest - v * N));
  }
  typename ArgMax<T>::State best = ArgMax<T>::Identity();
  for (std::size_t v = 0; v < V; ++v) {
    HWY_ALIGN T vals[N];
    HWY_ALIGN TI ids[N];
    hn::Store(val[v], d, vals);
    hn::Store(idx[v], di, ids);
    for (std::size_t i = 0; i < N; ++i) {
      if (ids[i] < 0) continue;
      const typename ArgMax<T>::State s{
          vals[i], static_cast<std::int64_t>(ids[i]) * static_cast<std::int64_t>(K) +
                       static_cast<std::int64_t>(v * N + i)};
      // Combine with the operands in index order, so ties and NaNs go to the lowest index.
      if (best.index < 0) {
        best = s;
      } else if (s.index < best.index) {
        best = ArgMax<T>::Combine(s, best);
      } else {
        best = ArgMax<T>::Combine(best, s);
      }
    }
  }
  return best;
}

// Bench baselines (not carriers, not replayable): two passes over the input with the same
// blocks. Two-pass log-sum-exp: M = max (K lanes), then d = sum over K lanes of Exp(x - M),
// lanes summed in order; returned as the (M, d) state. Two-pass variance: mean by K-lane
// sums, then m2 by K-lane sums of squared deviations.
template <std::size_t K, class TS, class Policy>
void RunTwoPassLse(const TS* HWY_RESTRICT x, std::size_t n,
                   typename LseOps<ComputeOf<TS>, Policy>::C::State* out) {
  using T = ComputeOf<TS>;
  const hn::ScalableTag<T> d;
  constexpr std::size_t N = hn::MaxLanes(d);
  constexpr std::size_t V = K / N;
  typename MaxOps<T>::C::State mx[K];
  RunStrided<MaxOps<T>, K, TS>(x, nullptr, n, mx);
  const T big = ReduceLanes<Max<T>>(mx, 0, K).m;
  if (big != big || big == -std::numeric_limits<T>::infinity()) {
    *out = big != big ? LseOps<T, Policy>::C::NaNState() : LseOps<T, Policy>::C::Identity();
    return;
  }
  const auto vbig = hn::Set(d, big);
  hn::Vec<hn::ScalableTag<T>> acc[V];
  for (std::size_t v = 0; v < V; ++v) acc[v] = hn::Zero(d);
  const std::size_t blocks = n / K;
  for (std::size_t blk = 0; blk < blocks; ++blk)
    for (std::size_t v = 0; v < V; ++v)
      acc[v] = hn::Add(acc[v], PolicyExp<Policy>(d, hn::Sub(LoadC(d, x + blk * K + v * N), vbig)));
  T sum = 0;
  for (std::size_t v = 0; v < V; ++v) {
    HWY_ALIGN T lane[N];
    hn::Store(acc[v], d, lane);
    for (std::size_t i = 0; i < N; ++i) sum += lane[i];
  }
  for (std::size_t i = blocks * K; i < n; ++i) {
    const T xi = [&] {
      if constexpr (std::is_same_v<TS, T>)
        return x[i];
      else
        return ToCompute(x[i]);
    }();
    sum += Policy::template Exp<T>(xi - big);
  }
  *out = {big, sum};
}

template <std::size_t K, class TS>
void RunTwoPassVariance(const TS* HWY_RESTRICT x, std::size_t n,
                        typename Welford<ComputeOf<TS>>::State* out) {
  using T = ComputeOf<TS>;
  const hn::ScalableTag<T> d;
  constexpr std::size_t N = hn::MaxLanes(d);
  constexpr std::size_t V = K / N;
  if (n == 0) {
    *out = Welford<T>::Identity();
    return;
  }
  typename Sum<T>::State sums[K];
  RunStrided<SumOps<T>, K, TS>(x, nullptr, n, sums);
  const T mean = ReduceLanes<Sum<T>>(sums, 0, K).s / ScalarTraits<T>::FromCount(n);
  const auto vmean = hn::Set(d, mean);
  hn::Vec<hn::ScalableTag<T>> acc[V];
  for (std::size_t v = 0; v < V; ++v) acc[v] = hn::Zero(d);
  const std::size_t blocks = n / K;
  for (std::size_t blk = 0; blk < blocks; ++blk)
    for (std::size_t v = 0; v < V; ++v) {
      const auto dev = hn::Sub(LoadC(d, x + blk * K + v * N), vmean);
      acc[v] = hn::Add(acc[v], hn::Mul(dev, dev));
    }
  T m2 = 0;
  for (std::size_t v = 0; v < V; ++v) {
    HWY_ALIGN T lane[N];
    hn::Store(acc[v], d, lane);
    for (std::size_t i = 0; i < N; ++i) m2 += lane[i];
  }
  for (std::size_t i = blocks * K; i < n; ++i) {
    const T xi = [&] {
      if constexpr (std::is_same_v<TS, T>)
        return x[i];
      else
        return ToCompute(x[i]);
    }();
    m2 += (xi - mean) * (xi - mean);
  }
  *out = {static_cast<std::uint64_t>(n), mean, m2};
}

// ------------------------------------------------------------------ entry points

template <class Ops, std::size_t K, class TS>
void ReduceStrided(const detail::ReduceArgs& args) {
  using C = typename Ops::C;
  typename C::State lanes[K];
  RunStrided<Ops, K, TS>(static_cast<const TS*>(args.a), static_cast<const TS*>(args.b), args.n,
                         lanes);
  *static_cast<typename C::State*>(args.state) = ReduceLanes<C>(lanes, 0, K);
}

template <std::size_t K, class TS, class Policy>
void ReduceLse(const detail::ReduceArgs& args) {
  using T = ComputeOf<TS>;
  using C = typename LseOps<T, Policy>::C;
  if (args.plan.tile == 0) return ReduceStrided<LseOps<T, Policy>, K, TS>(args);
  typename C::State lanes[K];
  RunLseTiles<K, TS, Policy>(static_cast<const TS*>(args.a), args.n, args.plan.tile, lanes);
  *static_cast<typename C::State*>(args.state) = ReduceLanes<C>(lanes, 0, K);
}

template <std::size_t K, class TS>
void ReduceK(const detail::ReduceArgs& args) {
  using T = ComputeOf<TS>;
  using detail::OpCode;
  const TS* x = static_cast<const TS*>(args.a);
  switch (args.op) {
    case OpCode::kSum:
      return ReduceStrided<SumOps<T>, K, TS>(args);
    case OpCode::kCompensated:
      return ReduceStrided<CompensatedOps<T>, K, TS>(args);
    case OpCode::kMax:
      return ReduceStrided<MaxOps<T>, K, TS>(args);
    case OpCode::kNorm2:
      return ReduceStrided<Norm2Ops<T>, K, TS>(args);
    case OpCode::kDot:
      return ReduceStrided<DotOps<T>, K, TS>(args);
    case OpCode::kArgMax:
      *static_cast<typename ArgMax<T>::State*>(args.state) = RunArgMax<K, TS>(x, args.n);
      return;
    case OpCode::kLse:
      return ReduceLse<K, TS, PortableExp>(args);
    case OpCode::kLseFast:
      return ReduceLse<K, TS, VectorFastExp>(args);
    case OpCode::kWelford: {
      if (args.plan.tile == 0) return ReduceStrided<WelfordOps<T>, K, TS>(args);
      typename Welford<T>::State lanes[K];
      RunWelfordTiles<K, TS>(x, args.n, args.plan.tile, lanes);
      *static_cast<typename Welford<T>::State*>(args.state) = ReduceLanes<Welford<T>>(lanes, 0, K);
      return;
    }
    case OpCode::kTwoPassLse:
      return RunTwoPassLse<K, TS, PortableExp>(
          x, args.n, static_cast<typename LseOps<T>::C::State*>(args.state));
    case OpCode::kTwoPassLseFast:
      return RunTwoPassLse<K, TS, VectorFastExp>(
          x, args.n, static_cast<typename LseOps<T, VectorFastExp>::C::State*>(args.state));
    case OpCode::kTwoPassVariance:
      return RunTwoPassVariance<K, TS>(x, args.n,
                                       static_cast<typename Welford<T>::State*>(args.state));
  }
}

template <class TS>
void ReduceImpl(const detail::ReduceArgs& args) {
  using T = ComputeOf<TS>;
  constexpr std::size_t N = hn::MaxLanes(hn::ScalableTag<T>());
  static_assert(16 % N == 0, "K = 16 must be whole vectors on every target");
  switch (args.plan.lanes) {
    case 16:
      return ReduceK<16, TS>(args);
    case 32:
      return ReduceK<32, TS>(args);
    case 64:
      return ReduceK<64, TS>(args);
    default:
      throw std::invalid_argument("simd: unsupported lane count " +
                                  std::to_string(args.plan.lanes));
  }
}

// out[i] = OnlineSoftmax<T, PortableExp>::SoftmaxOutput(x[i], (m, d), policy).
template <class TS>
void SoftmaxImpl(const detail::SoftmaxArgs& args) {
  using T = ComputeOf<TS>;
  const hn::ScalableTag<T> d;
  constexpr std::size_t N = hn::MaxLanes(d);
  const TS* x = static_cast<const TS*>(args.x);
  T* out = static_cast<T*>(args.out);
  const T m = static_cast<T>(args.m);
  const T den = static_cast<T>(args.d);
  const T qnan = std::numeric_limits<T>::quiet_NaN();
  if (m != m || m == -std::numeric_limits<T>::infinity()) {
    const T fill = (m == m && args.zeros_for_empty) ? T(0) : qnan;
    for (std::size_t i = 0; i < args.n; ++i) out[i] = fill;
    return;
  }
  const auto vm = hn::Set(d, m);
  const auto vd = hn::Set(d, den);
  const auto one = hn::Set(d, T(1));
  auto one_output = [&](hn::Vec<hn::ScalableTag<T>> v) {
    const auto e = hn::IfThenElse(hn::Eq(v, vm), one, ExpPortable(d, hn::Sub(v, vm)));
    const auto y = hn::Div(e, vd);
    return hn::IfThenElse(hn::IsNaN(v), hn::Set(d, qnan), y);
  };
  std::size_t i = 0;
  for (; i + N <= args.n; i += N) hn::StoreU(one_output(LoadC(d, x + i)), d, out + i);
  if (i < args.n) {
    HWY_ALIGN TS buf[N];
    HWY_ALIGN T res[N];
    FillPadded(buf, N, x + i, args.n - i, T(0));
    hn::Store(one_output(LoadC(d, buf)), d, res);
    for (std::size_t j = 0; i + j < args.n; ++j) out[i + j] = res[j];
  }
}

// Native mode: four vectors per lane group, at least 16 lanes.
template <class T>
std::uint32_t NativeLanes() {
  const std::size_t n = 4 * hn::Lanes(hn::ScalableTag<T>());
  return n <= 16 ? 16u : n >= 64 ? 64u : static_cast<std::uint32_t>(n);
}

}  // namespace carrier::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard (per target)
