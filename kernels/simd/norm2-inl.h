// kernels/simd/norm2-inl.h: the scaled 2-norm (ScaledNorm2<T>, LAPACK's (scale, ssq)) as a
// lane carrier.
// Re-included once per Highway target (the per-target include guard below toggles with
// HWY_TARGET_TOGGLE, as in hwy/contrib); included through kernels/simd/carriers-inl.h.
#if defined(CARRIER_KERNELS_SIMD_NORM2_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CARRIER_KERNELS_SIMD_NORM2_INL_H_
#undef CARRIER_KERNELS_SIMD_NORM2_INL_H_
#else
#define CARRIER_KERNELS_SIMD_NORM2_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/carriers/scaled_norm2.hpp"
#include "hwy/highway.h"
#include "kernels/simd/lanes-inl.h"

HWY_BEFORE_NAMESPACE();
namespace carrier::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

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

}  // namespace carrier::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard (per target)
