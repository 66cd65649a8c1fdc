// kernels/omp/omp.hpp: OpenMP kernels behind a plain C++ API.
//
// Contract. Reduce<C>(x, n, S) with S = omp:P[:seq|pairwise]:INNER equals
// ReplayOracle<C>(BuildTree(S, n), x promoted) bit for bit, whatever the thread count and timing:
//   partition  chunk c = [floor(c n / P), floor((c + 1) n / P)), c = 0..P-1, explicit and static
//              (core/merge_tree.hpp builds the same chunks);
//   chunks     each reduced by the SIMD kernel realising INNER (kernels/simd/simd.hpp: strided:K,
//              strided:K:tile:T:lift, or seq for argmax), one chunk per loop iteration of a
//              `parallel for schedule(static)`; each writes only its own slot;
//   merge      one thread combines the chunk states in the declared outer order (seq: left to
//              right; pairwise: recursive halving, the left half taking the extra chunk),
//              skipping the chunks whose inner tree is empty, as BuildTree does. Never an
//              OpenMP `reduction` clause, whose order is unspecified.
// An omitted INNER means the native SIMD schedule; the schedule actually run is returned by
// Executed(). Schedules that are not omp, or whose INNER the SIMD kernel does not realise, throw
// ScheduleError (one line).
#pragma once

#include <cstddef>

#include "core/schedule.hpp"
#include "kernels/simd/simd.hpp"

namespace carrier::omp {

// s with its inner schedule made explicit (native SIMD schedule when omitted); throws
// ScheduleError when the kernels do not realise it.
template <class C, class TS>
Schedule Executed(const Schedule& s);

template <class C, class TS>
typename C::State Reduce(const TS* x, std::size_t n, const Schedule& s);

template <class TS>
typename Dot<simd::Compute<TS>>::State ReduceDot(const TS* a, const TS* b, std::size_t n,
                                                 const Schedule& s);

// Threads an OpenMP parallel region would use now (omp_get_max_threads()).
int MaxThreads();

}  // namespace carrier::omp
