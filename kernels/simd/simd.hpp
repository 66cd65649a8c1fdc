// kernels/simd/simd.hpp: the SIMD CPU kernels (Highway, dynamic dispatch) behind a plain C++
// API: no Highway type appears here, states are core's carrier states.
//
// Contract (DESIGN.md, "the bit-exact contract"). For every supported carrier C, storage type
// TS and realisable schedule S, on every compiled Highway target,
//   Reduce<C>(x, n, S)  ==  ReplayOracle<C>(BuildTree(S, n), x promoted to Compute<TS>)
// bit for bit (StatesBitEqual). Storage: float, double, Half, BFloat16; Compute<TS> is double
// for double storage and float otherwise (fp16/bf16 promote exactly). Carriers: Sum,
// Compensated, Max, ArgMax, OnlineSoftmax<T, PortableExp>, OnlineSoftmax<T, VectorFastExp> (the
// fast exp policy, fast_exp.hpp: fewer operations, larger error, same bits as its scalar
// twin), Welford, ScaledNorm2 (and Dot through ReduceDot). Realisable schedules (pinned mode):
//   strided:K                  K in {16, 32, 64}; every carrier but ArgMax;
//   strided:K:tile:T:lift      K as above, 1 <= T <= 1024; OnlineSoftmax and Welford (lane
//                              chains cut into lifted tiles: softmax one exp per element and
//                              one rescale per tile, Welford a two-pass tile and Chan merges);
//   seq                        ArgMax only. ArgMax's Combine is not commutative, so strided
//                              trees are refused by ReplayOracle; the kernel runs K lanes and
//                              merges them by index, which equals every order-preserving tree
//                              (ArgMax is exact), so it declares `seq`.
// Other schedules throw ScheduleError naming what is realisable. Native mode picks the lane
// count of the running target (4 vectors, 16..64 lanes) and, for lse and welford, lifted tiles
// of 64, and reports that schedule: it replays to the same bits.
// Special values are the carriers' own (core/carriers/*.hpp) on every target.
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>

#include "core/carriers/argmax.hpp"
#include "core/carriers/compensated.hpp"
#include "core/carriers/dot.hpp"
#include "core/carriers/max.hpp"
#include "core/carriers/online_softmax.hpp"
#include "core/carriers/scaled_norm2.hpp"
#include "core/carriers/sum.hpp"
#include "core/carriers/welford.hpp"
#include "core/schedule.hpp"
#include "kernels/simd/fast_exp.hpp"
#include "precision/bfloat16.hpp"
#include "precision/half.hpp"
#include "precision/math_policy.hpp"

namespace carrier::simd {

template <class TS>
using Compute = std::conditional_t<std::is_same_v<TS, double>, double, float>;

// Reduces x[0, n) with carrier C through schedule s (see the contract above).
template <class C, class TS>
typename C::State Reduce(const TS* x, std::size_t n, const Schedule& s);

// Dot over the pairs (a[i], b[i]).
template <class TS>
typename Dot<Compute<TS>>::State ReduceDot(const TS* a, const TS* b, std::size_t n,
                                           const Schedule& s);

// The schedule native mode runs for carrier C on the current target.
template <class C, class TS>
Schedule NativeSchedule();

// Throws ScheduleError (one line) unless Reduce<C, TS> realises s.
template <class C, class TS>
void CheckRealisable(const Schedule& s);

// out[i] = OnlineSoftmax<T, PortableExp>::SoftmaxOutput(x[i], s, policy), T = Compute<TS>.
template <class TS>
void SoftmaxOutputs(const TS* x, std::size_t n,
                    const typename OnlineSoftmax<Compute<TS>, PortableExp>::State& s,
                    Compute<TS>* out, SoftmaxEmptyRow policy = SoftmaxEmptyRow::kNaN);

// Bench baselines built from the same SIMD blocks, not carriers and not replayable: log-sum-exp
// in two passes (global max, then a K-lane sum of Exp(x - max)) and variance in two passes
// (K-lane sum for the mean, then a K-lane sum of squared deviations).
template <class TS>
typename OnlineSoftmax<Compute<TS>, PortableExp>::State TwoPassLse(const TS* x, std::size_t n,
                                                                   unsigned lanes = 64);
template <class TS>
typename OnlineSoftmax<Compute<TS>, VectorFastExp>::State TwoPassLseFast(const TS* x, std::size_t n,
                                                                         unsigned lanes = 64);
template <class TS>
typename Welford<Compute<TS>>::State TwoPassVariance(const TS* x, std::size_t n,
                                                     unsigned lanes = 64);

// Name of the Highway target the dispatcher runs now (AVX3, AVX2, SSE4, ...).
std::string CurrentTarget();

}  // namespace carrier::simd
