// kernels/simd/variance-inl.h: the variance family: Welford as a lane carrier (the count
// shared by the lanes of a full block), its two-pass tile lift merged by Chan's combine
// (strided:K:tile:T:lift), and the two-pass bench baseline.
// Re-included once per Highway target (the per-target include guard below toggles with
// HWY_TARGET_TOGGLE, as in hwy/contrib); included through kernels/simd/carriers-inl.h.
#if defined(CARRIER_KERNELS_SIMD_VARIANCE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CARRIER_KERNELS_SIMD_VARIANCE_INL_H_
#undef CARRIER_KERNELS_SIMD_VARIANCE_INL_H_
#else
#define CARRIER_KERNELS_SIMD_VARIANCE_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/carriers/sum.hpp"
#include "core/carriers/welford.hpp"
#include "core/scalar.hpp"
#include "hwy/highway.h"
#include "kernels/simd/lanes-inl.h"
#include "kernels/simd/sum-inl.h"

HWY_BEFORE_NAMESPACE();
namespace carrier::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

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

// Bench baseline (not a carrier, not replayable): two-pass variance over the same blocks, mean
// by K-lane sums, then m2 by K-lane sums of squared deviations.
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

}  // namespace carrier::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard (per target)
