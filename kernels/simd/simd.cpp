// kernels/simd/simd.cpp: the plain API of simd.hpp over the dispatched kernels: schedule
// checks, the carrier -> op mapping, and one instantiation per (carrier, storage type).
#include "kernels/simd/simd.hpp"

#include <string>

#include "hwy/targets.h"
#include "kernels/simd/plan.hpp"

namespace carrier::simd {
namespace {

using detail::OpCode;

template <class C>
struct OpOf;
template <class T>
struct OpOf<Sum<T>> {
  static constexpr OpCode kOp = OpCode::kSum;
};
template <class T>
struct OpOf<Compensated<T>> {
  static constexpr OpCode kOp = OpCode::kCompensated;
};
template <class T>
struct OpOf<Max<T>> {
  static constexpr OpCode kOp = OpCode::kMax;
};
template <class T>
struct OpOf<ArgMax<T>> {
  static constexpr OpCode kOp = OpCode::kArgMax;
};
template <class T>
struct OpOf<OnlineSoftmax<T, PortableExp>> {
  static constexpr OpCode kOp = OpCode::kLse;
};
template <class T>
struct OpOf<OnlineSoftmax<T, VectorFastExp>> {
  static constexpr OpCode kOp = OpCode::kLseFast;
};
template <class T>
struct OpOf<Welford<T>> {
  static constexpr OpCode kOp = OpCode::kWelford;
};
template <class T>
struct OpOf<ScaledNorm2<T>> {
  static constexpr OpCode kOp = OpCode::kNorm2;
};
template <class T>
struct OpOf<Dot<T>> {
  static constexpr OpCode kOp = OpCode::kDot;
};

template <class TS>
void Dispatch(const detail::ReduceArgs& args) {
  if constexpr (std::is_same_v<TS, float>) {
    detail::ReduceF32(args);
  } else if constexpr (std::is_same_v<TS, double>) {
    detail::ReduceF64(args);
  } else if constexpr (std::is_same_v<TS, Half>) {
    detail::ReduceF16(args);
  } else {
    detail::ReduceBF16(args);
  }
}

template <class TS>
std::uint32_t NativeLanes() {
  if constexpr (std::is_same_v<TS, double>) {
    return detail::NativeLanesF64();
  } else {
    return detail::NativeLanesF32();
  }
}

bool TileLifting(OpCode op) {
  return op == OpCode::kLse || op == OpCode::kLseFast || op == OpCode::kWelford;
}

// The kernel plan of s for op, or a ScheduleError naming what is realisable.
detail::Plan PlanFor(OpCode op, const char* name, const Schedule& s) {
  const std::string text = ToString(s);
  auto fail = [&](const std::string& why) -> detail::Plan {
    throw ScheduleError("simd: " + std::string(name) + " cannot run schedule '" + text +
                        "': " + why);
  };
  if (op == OpCode::kArgMax) {
    if (s.kind() != ScheduleKind::kSeq)
      return fail("argmax realises only seq (its lanes are merged by index)");
    return {32, 0};
  }
  const auto* strided = s.If<orders::StridedParams>();
  if (!strided)
    return fail(TileLifting(op)
                    ? "realisable: strided:K or strided:K:tile:T:lift, K in {16, 32, 64}"
                    : "realisable: strided:K, K in {16, 32, 64}");
  const orders::StridedParams& p = *strided;
  bool lanes_ok = false;
  for (std::uint32_t k : detail::kLaneChoices) lanes_ok = lanes_ok || p.lanes == k;
  if (!lanes_ok) return fail("K must be 16, 32 or 64");
  if (p.tile == 0 && p.lift) return fail("strided:K:lift (whole lanes lifted) is not realised");
  if (p.tile != 0) {
    if (!TileLifting(op)) return fail("lane tiles are realised for lse and welford only");
    if (!p.lift) return fail("lane tiles are realised lifted only (strided:K:tile:T:lift)");
    if (p.tile > detail::kMaxTile) return fail("T must be at most 1024");
  }
  return {static_cast<std::uint32_t>(p.lanes), static_cast<std::uint32_t>(p.tile)};
}

}  // namespace

template <class C, class TS>
void CheckRealisable(const Schedule& s) {
  PlanFor(OpOf<C>::kOp, C::kName, s);
}

template <class C, class TS>
typename C::State Reduce(const TS* x, std::size_t n, const Schedule& s) {
  static_assert(std::is_same_v<typename C::Scalar, Compute<TS>>, "compute type of TS");
  typename C::State state{};
  detail::ReduceArgs args;
  args.op = OpOf<C>::kOp;
  args.a = x;
  args.n = n;
  args.plan = PlanFor(args.op, C::kName, s);
  args.state = &state;
  Dispatch<TS>(args);
  return state;
}

template <class TS>
typename Dot<Compute<TS>>::State ReduceDot(const TS* a, const TS* b, std::size_t n,
                                           const Schedule& s) {
  typename Dot<Compute<TS>>::State state{};
  detail::ReduceArgs args;
  args.op = OpCode::kDot;
  args.a = a;
  args.b = b;
  args.n = n;
  args.plan = PlanFor(args.op, "dot", s);
  args.state = &state;
  Dispatch<TS>(args);
  return state;
}

template <class C, class TS>
Schedule NativeSchedule() {
  constexpr OpCode op = OpOf<C>::kOp;
  if constexpr (op == OpCode::kArgMax) {
    return Schedule::Seq();
  } else {
    const std::uint32_t lanes = NativeLanes<TS>();
    if (TileLifting(op)) return Schedule::StridedTiles(lanes, 64, true);
    return Schedule::Strided(lanes);
  }
}

template <class TS>
void SoftmaxOutputs(const TS* x, std::size_t n,
                    const typename OnlineSoftmax<Compute<TS>, PortableExp>::State& s,
                    Compute<TS>* out, SoftmaxEmptyRow policy) {
  detail::SoftmaxArgs args;
  args.x = x;
  args.n = n;
  args.m = static_cast<double>(s.m);
  args.d = static_cast<double>(s.d);
  args.zeros_for_empty = policy == SoftmaxEmptyRow::kZeros;
  args.out = out;
  if constexpr (std::is_same_v<TS, float>) {
    detail::SoftmaxF32(args);
  } else if constexpr (std::is_same_v<TS, double>) {
    detail::SoftmaxF64(args);
  } else if constexpr (std::is_same_v<TS, Half>) {
    detail::SoftmaxF16(args);
  } else {
    detail::SoftmaxBF16(args);
  }
}

// The two-pass baselines share one call shape: a state filled by the kernel of `op`.
template <class State, class TS>
State RunTwoPass(OpCode op, const TS* x, std::size_t n, unsigned lanes) {
  State state{};
  detail::ReduceArgs args;
  args.op = op;
  args.a = x;
  args.n = n;
  args.plan = {lanes, 0};
  args.state = &state;
  Dispatch<TS>(args);
  return state;
}

template <class TS>
typename OnlineSoftmax<Compute<TS>, PortableExp>::State TwoPassLse(const TS* x, std::size_t n,
                                                                   unsigned lanes) {
  return RunTwoPass<typename OnlineSoftmax<Compute<TS>, PortableExp>::State>(OpCode::kTwoPassLse, x,
                                                                             n, lanes);
}

template <class TS>
typename OnlineSoftmax<Compute<TS>, VectorFastExp>::State TwoPassLseFast(const TS* x, std::size_t n,
                                                                         unsigned lanes) {
  return RunTwoPass<typename OnlineSoftmax<Compute<TS>, VectorFastExp>::State>(
      OpCode::kTwoPassLseFast, x, n, lanes);
}

template <class TS>
typename Welford<Compute<TS>>::State TwoPassVariance(const TS* x, std::size_t n, unsigned lanes) {
  return RunTwoPass<typename Welford<Compute<TS>>::State>(OpCode::kTwoPassVariance, x, n, lanes);
}

std::string CurrentTarget() {
  // The dispatcher picks the best of the supported targets (or the one a test selected).
  const std::int64_t targets = hwy::SupportedTargets() & HWY_TARGETS;
  return hwy::TargetName(targets & -targets);
}

#define CARRIER_SIMD_INSTANTIATE(TS)                                                              \
  template Sum<Compute<TS>>::State Reduce<Sum<Compute<TS>>, TS>(const TS*, std::size_t,           \
                                                                const Schedule&);                 \
  template Compensated<Compute<TS>>::State Reduce<Compensated<Compute<TS>>, TS>(                  \
      const TS*, std::size_t, const Schedule&);                                                   \
  template Max<Compute<TS>>::State Reduce<Max<Compute<TS>>, TS>(const TS*, std::size_t,           \
                                                                const Schedule&);                 \
  template ArgMax<Compute<TS>>::State Reduce<ArgMax<Compute<TS>>, TS>(const TS*, std::size_t,     \
                                                                      const Schedule&);           \
  template OnlineSoftmax<Compute<TS>, PortableExp>::State                                         \
  Reduce<OnlineSoftmax<Compute<TS>, PortableExp>, TS>(const TS*, std::size_t, const Schedule&);   \
  template OnlineSoftmax<Compute<TS>, VectorFastExp>::State                                       \
  Reduce<OnlineSoftmax<Compute<TS>, VectorFastExp>, TS>(const TS*, std::size_t, const Schedule&); \
  template Schedule NativeSchedule<OnlineSoftmax<Compute<TS>, VectorFastExp>, TS>();              \
  template void CheckRealisable<OnlineSoftmax<Compute<TS>, VectorFastExp>, TS>(const Schedule&);  \
  template OnlineSoftmax<Compute<TS>, VectorFastExp>::State TwoPassLseFast<TS>(                   \
      const TS*, std::size_t, unsigned);                                                          \
  template Welford<Compute<TS>>::State Reduce<Welford<Compute<TS>>, TS>(const TS*, std::size_t,   \
                                                                        const Schedule&);         \
  template ScaledNorm2<Compute<TS>>::State Reduce<ScaledNorm2<Compute<TS>>, TS>(                  \
      const TS*, std::size_t, const Schedule&);                                                   \
  template Dot<Compute<TS>>::State ReduceDot<TS>(const TS*, const TS*, std::size_t,               \
                                                 const Schedule&);                                \
  template Schedule NativeSchedule<Sum<Compute<TS>>, TS>();                                       \
  template Schedule NativeSchedule<Compensated<Compute<TS>>, TS>();                               \
  template Schedule NativeSchedule<Max<Compute<TS>>, TS>();                                       \
  template Schedule NativeSchedule<ArgMax<Compute<TS>>, TS>();                                    \
  template Schedule NativeSchedule<OnlineSoftmax<Compute<TS>, PortableExp>, TS>();                \
  template Schedule NativeSchedule<Welford<Compute<TS>>, TS>();                                   \
  template Schedule NativeSchedule<ScaledNorm2<Compute<TS>>, TS>();                               \
  template Schedule NativeSchedule<Dot<Compute<TS>>, TS>();                                       \
  template void CheckRealisable<Sum<Compute<TS>>, TS>(const Schedule&);                           \
  template void CheckRealisable<Compensated<Compute<TS>>, TS>(const Schedule&);                   \
  template void CheckRealisable<Max<Compute<TS>>, TS>(const Schedule&);                           \
  template void CheckRealisable<ArgMax<Compute<TS>>, TS>(const Schedule&);                        \
  template void CheckRealisable<OnlineSoftmax<Compute<TS>, PortableExp>, TS>(const Schedule&);    \
  template void CheckRealisable<Welford<Compute<TS>>, TS>(const Schedule&);                       \
  template void CheckRealisable<ScaledNorm2<Compute<TS>>, TS>(const Schedule&);                   \
  template void CheckRealisable<Dot<Compute<TS>>, TS>(const Schedule&);                           \
  template void SoftmaxOutputs<TS>(const TS*, std::size_t,                                        \
                                   const OnlineSoftmax<Compute<TS>, PortableExp>::State&,         \
                                   Compute<TS>*, SoftmaxEmptyRow);                                \
  template OnlineSoftmax<Compute<TS>, PortableExp>::State TwoPassLse<TS>(const TS*, std::size_t,  \
                                                                         unsigned);               \
  template Welford<Compute<TS>>::State TwoPassVariance<TS>(const TS*, std::size_t, unsigned);

CARRIER_SIMD_INSTANTIATE(float)
CARRIER_SIMD_INSTANTIATE(double)
CARRIER_SIMD_INSTANTIATE(Half)
CARRIER_SIMD_INSTANTIATE(BFloat16)

#undef CARRIER_SIMD_INSTANTIATE

}  // namespace carrier::simd
