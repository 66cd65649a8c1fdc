// kernels/simd/carriers-inl.h: the per-target SIMD carriers (Highway), re-included once per
// target by each dispatched simd_<type>.cc.
//
// Contract. Every kernel here realises a declared merge order and equals the scalar ReplayOracle of
// it bit for bit, on every target:
//   strided:K              lane k of K virtual lanes pushes x[k], x[k+K], ... from Identity
//                          with exactly the carrier's Push (core/carriers/*.hpp); the K lane
//                          states are then merged pairwise in lane order by the carrier's own
//                          scalar Combine (ReduceLanes: core/pairwise.hpp's tree), as
//                          BuildTree(strided:K) says.
//   strided:K:tile:T:lift  (lse, welford) lane k lifts its elements in tiles of T with the
//                          carrier's LiftTile algorithm, merges the tile states in order with
//                          Combine (Assimilate...), then the lanes pairwise as above.
// K virtual lanes are K / N hardware vectors of N lanes, so the tree does not depend on the
// target's width. What makes the bits equal: -ffp-contract=off (Mul then Add, never fused
// unless the scalar code calls fma), the portable exp of exp-inl.h (same operations as
// PortableExp, with MulAdd where it has std::fma: fused on AVX2/AVX3, and lane by lane
// through the scalar function on targets whose MulAdd is not fused), the carriers' special-value
// rules written out with masks (never Highway's Max, whose NaN and signed-zero choices differ
// per target, nor hn::Exp, which returns 0 for NaN), and no SumOfLanes.
// Verbs (STYLE.md): Update... pushes one vector of inputs into a lane state, Assimilate...
// combines another state into it, Reduce... stores the lanes and merges them in the declared
// order. Lane states are small structs of vectors: valid on the x86 and scalar targets this
// project compiles (not on SVE/RVV, whose vectors are sizeless).
// Layout (per carrier family, as hwy/contrib splits dot/math/sort; each file is re-included per
// target with its own toggling guard): lanes-inl.h (loads, lane helpers, core's lane tree, the
// strided push driver), exp-inl.h (vector exps), sum-inl.h, max-inl.h, softmax-inl.h,
// variance-inl.h, norm2-inl.h; this file holds only the dispatch entry points.
#if defined(CARRIER_KERNELS_SIMD_CARRIERS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CARRIER_KERNELS_SIMD_CARRIERS_INL_H_
#undef CARRIER_KERNELS_SIMD_CARRIERS_INL_H_
#else
#define CARRIER_KERNELS_SIMD_CARRIERS_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/carriers/argmax.hpp"
#include "core/carriers/welford.hpp"
#include "hwy/highway.h"
#include "kernels/simd/exp-inl.h"
#include "kernels/simd/lanes-inl.h"
#include "kernels/simd/max-inl.h"
#include "kernels/simd/norm2-inl.h"
#include "kernels/simd/plan.hpp"
#include "kernels/simd/softmax-inl.h"
#include "kernels/simd/sum-inl.h"
#include "kernels/simd/variance-inl.h"
#include "precision/math_policy.hpp"

HWY_BEFORE_NAMESPACE();
namespace carrier::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

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

// Native mode: four vectors per lane group, at least 16 lanes.
template <class T>
std::uint32_t NativeLanes() {
  const std::size_t n = 4 * hn::Lanes(hn::ScalableTag<T>());
  return n <= 16 ? 16u : n >= 64 ? 64u : static_cast<std::uint32_t>(n);
}

}  // namespace carrier::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard (per target)