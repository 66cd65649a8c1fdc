// kernels/simd/softmax-inl.h: the softmax family: OnlineSoftmax (log-sum-exp) as a lane
// carrier with one exp per element, its tile lift (strided:K:tile:T:lift), the two-pass bench
// baseline and the elementwise softmax output.
// Re-included once per Highway target (the per-target include guard below toggles with
// HWY_TARGET_TOGGLE, as in hwy/contrib); included through kernels/simd/carriers-inl.h.
#if defined(CARRIER_KERNELS_SIMD_SOFTMAX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CARRIER_KERNELS_SIMD_SOFTMAX_INL_H_
#undef CARRIER_KERNELS_SIMD_SOFTMAX_INL_H_
#else
#define CARRIER_KERNELS_SIMD_SOFTMAX_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/carriers/max.hpp"
#include "core/carriers/online_softmax.hpp"
#include "hwy/highway.h"
#include "kernels/simd/exp-inl.h"
#include "kernels/simd/lanes-inl.h"
#include "kernels/simd/max-inl.h"
#include "kernels/simd/plan.hpp"
#include "precision/math_policy.hpp"

HWY_BEFORE_NAMESPACE();
namespace carrier::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

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

// Bench baseline (not a carrier, not replayable): two-pass log-sum-exp over the same blocks,
// M = max (K lanes), then d = sum over K lanes of Exp(x - M), lanes summed in order; returned
// as the (M, d) state.
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

}  // namespace carrier::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard (per target)
