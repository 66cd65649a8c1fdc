// kernels/simd/lanes-inl.h: what every SIMD carrier family shares: storage loads with exact
// promotion to the compute type, padded tails, the special-value lane helpers, the lane merge
// (core's pairwise tree) and the strided:K push driver RunStrided over an Ops type.
// Re-included once per Highway target (the per-target include guard below toggles with
// HWY_TARGET_TOGGLE, as in hwy/contrib); included through kernels/simd/carriers-inl.h.
//
// Contract. LoadC promotes exactly (fp16 by integer operations on targets whose PromoteTo
// mishandles inf); RunStrided(a, b, n, lanes) leaves in lanes[k] the state lane k of K reaches
// by pushing x[k], x[k+K], ... from Identity with the carrier's own Push, the partial last
// block masked; ReduceLanes merges them as BuildTree(strided:K) does.
#if defined(CARRIER_KERNELS_SIMD_LANES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CARRIER_KERNELS_SIMD_LANES_INL_H_
#undef CARRIER_KERNELS_SIMD_LANES_INL_H_
#else
#define CARRIER_KERNELS_SIMD_LANES_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/pairwise.hpp"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "precision/bfloat16.hpp"
#include "precision/half.hpp"

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

// Merges lane states [lo, hi) with C::Combine by core/pairwise.hpp's split: exactly the tree
// merge_tree's PairwiseOver builds over the K lanes of strided:K (the left half takes the extra
// lane). The lane tree is core's, not rewritten here.
template <class C>
typename C::State ReduceLanes(const typename C::State* s, std::size_t lo, std::size_t hi) {
  return CombinePairwise<C>(s, lo, hi);
}

// ------------------------------------------------------------------ SIMD carriers (push)
// Each Ops type: T, the core carrier C, a lane state VState, Init, Update(d, st, x[, y], ctx),
// the pad value of a partial block (the tail is masked anyway) and Store into K scalar states.
// ctx.count is the number of elements each lane holds after this update (a lane's count is the
// same in every full block).

struct Ctx {
  std::uint64_t count;  // elements per lane after this update (full blocks)
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

}  // namespace carrier::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard (per target)
