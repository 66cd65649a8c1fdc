// kernels/simd/sum-inl.h: the summation family's lane carriers: Sum, Dot (two roundings per
// term, as Dot::Push) and Neumaier's compensated sum (Compensated<T>), each the core
// carrier's Push written with vectors; driven by RunStrided (lanes-inl.h).
// Re-included once per Highway target (the per-target include guard below toggles with
// HWY_TARGET_TOGGLE, as in hwy/contrib); included through kernels/simd/carriers-inl.h.
#if defined(CARRIER_KERNELS_SIMD_SUM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CARRIER_KERNELS_SIMD_SUM_INL_H_
#undef CARRIER_KERNELS_SIMD_SUM_INL_H_
#else
#define CARRIER_KERNELS_SIMD_SUM_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "core/carriers/compensated.hpp"
#include "core/carriers/dot.hpp"
#include "core/carriers/sum.hpp"
#include "hwy/highway.h"
#include "kernels/simd/lanes-inl.h"

HWY_BEFORE_NAMESPACE();
namespace carrier::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

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

}  // namespace carrier::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard (per target)
