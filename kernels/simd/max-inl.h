// kernels/simd/max-inl.h: the max family: Max<T> as a lane carrier (NaN tracked apart, +0
// above -0) and ArgMax over K lanes (value, lowest index).
// Re-included once per Highway target (the per-target include guard below toggles with
// HWY_TARGET_TOGGLE, as in hwy/contrib); included through kernels/simd/carriers-inl.h.
#if defined(CARRIER_KERNELS_SIMD_MAX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CARRIER_KERNELS_SIMD_MAX_INL_H_
#undef CARRIER_KERNELS_SIMD_MAX_INL_H_
#else
#define CARRIER_KERNELS_SIMD_MAX_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <limits>

#include "core/carriers/argmax.hpp"
#include "core/carriers/max.hpp"
#include "hwy/highway.h"
#include "kernels/simd/lanes-inl.h"

HWY_BEFORE_NAMESPACE();
namespace carrier::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

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

}  // namespace carrier::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard (per target)
