// kernels/omp/omp.cpp: the explicit static partition, per-chunk SIMD reductions and the
// one-thread declared merge of omp.hpp.
#include "kernels/omp/omp.hpp"

#include <omp.h>

#include <string>
#include <vector>

#include "core/pairwise.hpp"
#include "core/schedule.hpp"

namespace carrier::omp {
namespace {

std::size_t ChunkStart(std::size_t n, std::size_t parts, std::size_t c) {
  return static_cast<std::size_t>(OmpChunkStart(n, parts, c));
}

// BuildTree gives an empty tree (no node) for an empty chunk unless the inner schedule keeps
// its K lanes (strided), whose Identity states take part in the combines.
bool InnerEmpty(const Schedule& inner, std::size_t len) {
  return len == 0 && inner.kind() != ScheduleKind::kStrided;
}

// Runs chunk(c, lo, len) for every chunk in parallel, then merges the non-empty ones.
template <class C, class Chunk>
typename C::State Run(std::size_t n, const orders::OmpParams& s, const Schedule& inner,
                      Chunk chunk) {
  const std::size_t parts = s.parts;
  std::vector<typename C::State> states(parts, C::Identity());
  const long long count = static_cast<long long>(parts);
#pragma omp parallel for schedule(static)
  for (long long c = 0; c < count; ++c) {
    const std::size_t lo = ChunkStart(n, parts, static_cast<std::size_t>(c));
    const std::size_t hi = ChunkStart(n, parts, static_cast<std::size_t>(c) + 1);
    states[static_cast<std::size_t>(c)] = chunk(lo, hi - lo);
  }
  std::vector<typename C::State> roots;
  for (std::size_t c = 0; c < parts; ++c) {
    const std::size_t len = ChunkStart(n, parts, c + 1) - ChunkStart(n, parts, c);
    if (!InnerEmpty(inner, len)) roots.push_back(states[c]);
  }
  if (roots.empty()) return C::Identity();
  if (s.outer == OuterOrder::kPairwise) return CombinePairwise<C>(roots.data(), 0, roots.size());
  typename C::State acc = roots[0];
  for (std::size_t i = 1; i < roots.size(); ++i) acc = C::Combine(acc, roots[i]);
  return acc;
}

}  // namespace

int MaxThreads() { return omp_get_max_threads(); }

template <class C, class TS>
Schedule Executed(const Schedule& s) {
  if (s.kind() != ScheduleKind::kOmp)
    throw ScheduleError("omp: schedule '" + ToString(s) +
                        "' is not an omp schedule; expected omp:P[:seq|pairwise][:INNER]");
  Schedule out = s;
  NestedSchedule& inner = out.As<orders::OmpParams>().inner;
  if (!inner.IsSet()) inner = NestedSchedule(simd::NativeSchedule<C, TS>());
  try {
    simd::CheckRealisable<C, TS>(out.Inner());
  } catch (const ScheduleError& e) {
    throw ScheduleError("omp: inner schedule of '" + ToString(s) +
                        "' is not realised: " + e.what());
  }
  return out;
}

template <class C, class TS>
typename C::State Reduce(const TS* x, std::size_t n, const Schedule& s) {
  const Schedule run = Executed<C, TS>(s);
  const Schedule& inner = run.Inner();
  return Run<C>(n, run.As<orders::OmpParams>(), inner, [&](std::size_t lo, std::size_t len) {
    typename C::State st = simd::Reduce<C, TS>(x + lo, len, inner);
    if constexpr (std::is_same_v<C, ArgMax<typename C::Scalar>>) {
      if (st.index >= 0) st.index += static_cast<std::int64_t>(lo);  // chunk-relative -> global
    }
    return st;
  });
}

template <class TS>
typename Dot<simd::Compute<TS>>::State ReduceDot(const TS* a, const TS* b, std::size_t n,
                                                 const Schedule& s) {
  using C = Dot<simd::Compute<TS>>;
  const Schedule run = Executed<C, TS>(s);
  const Schedule& inner = run.Inner();
  return Run<C>(n, run.As<orders::OmpParams>(), inner, [&](std::size_t lo, std::size_t len) {
    return simd::ReduceDot<TS>(a + lo, b + lo, len, inner);
  });
}

#define CARRIER_OMP_INSTANTIATE_ONE(C, TS)            \
  template Schedule Executed<C, TS>(const Schedule&); \
  template C::State Reduce<C, TS>(const TS*, std::size_t, const Schedule&);
#define CARRIER_OMP_INSTANTIATE(TS)                                                       \
  CARRIER_OMP_INSTANTIATE_ONE(Sum<simd::Compute<TS>>, TS)                                 \
  CARRIER_OMP_INSTANTIATE_ONE(Compensated<simd::Compute<TS>>, TS)                         \
  CARRIER_OMP_INSTANTIATE_ONE(Max<simd::Compute<TS>>, TS)                                 \
  CARRIER_OMP_INSTANTIATE_ONE(ArgMax<simd::Compute<TS>>, TS)                              \
  CARRIER_OMP_INSTANTIATE_ONE(ScaledNorm2<simd::Compute<TS>>, TS)                         \
  CARRIER_OMP_INSTANTIATE_ONE(Welford<simd::Compute<TS>>, TS)                             \
  using Lse_##TS = OnlineSoftmax<simd::Compute<TS>, PortableExp>;                         \
  CARRIER_OMP_INSTANTIATE_ONE(Lse_##TS, TS)                                               \
  template Schedule Executed<Dot<simd::Compute<TS>>, TS>(const Schedule&);                \
  template Dot<simd::Compute<TS>>::State ReduceDot<TS>(const TS*, const TS*, std::size_t, \
                                                       const Schedule&);

CARRIER_OMP_INSTANTIATE(float)
CARRIER_OMP_INSTANTIATE(double)
CARRIER_OMP_INSTANTIATE(Half)
CARRIER_OMP_INSTANTIATE(BFloat16)

}  // namespace carrier::omp
