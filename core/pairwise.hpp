// core/pairwise.hpp: the project's one pairwise split, and the pairwise merge of an array of
// states built on it.
//
// Contract. PairwiseMid(lo, hi) splits [lo, hi) (hi - lo >= 2) at lo + ceil((hi - lo) / 2): the
// left half takes the extra element when the length is odd. Every pairwise tree in the project
// uses this rule: BuildTree's pairwise[:LEAF] and the pairwise outer order of blocked/omp/strided
// schedules (core/merge_tree.hpp), the CUDA block trees (core/cuda_tree.hpp,
// kernels/cuda/block_reduce.cuh), the fast replay (core/replay.hpp), the SIMD lane merge
// (kernels/simd) and the OpenMP chunk merge (kernels/omp). A kernel that realises a pairwise
// order equals ReplayOracle of its tree bit for bit only because all of them split in the same
// place.
//
// CombinePairwise<C>(s, lo, hi) (hi > lo) merges the states s[lo, hi) with C::Combine by that
// recursion, operands in order (the earlier segment on the left): the tree PairwiseOver builds.
#pragma once

#include <cstddef>

#include "core/platform.hpp"

namespace carrier {

template <class I>
CARRIER_HD constexpr I PairwiseMid(I lo, I hi) {
  return lo + (hi - lo + 1) / 2;
}

template <class C>
typename C::State CombinePairwise(const typename C::State* s, std::size_t lo,
                                  std::size_t hi) {  // NOLINT(misc-no-recursion)
  if (hi - lo == 1) return s[lo];
  const std::size_t mid = PairwiseMid(lo, hi);
  const typename C::State a = CombinePairwise<C>(s, lo, mid);
  const typename C::State b = CombinePairwise<C>(s, mid, hi);
  return C::Combine(a, b);
}

}  // namespace carrier
