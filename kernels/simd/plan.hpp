// kernels/simd/plan.hpp: what the dispatched per-target code is asked to do. Internal to
// kernels/simd (the .cc files and simd.cpp); callers use simd.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

namespace carrier::simd::detail {

enum class OpCode : int {
  kSum,
  kCompensated,
  kMax,
  kArgMax,
  kLse,
  kWelford,
  kNorm2,
  kDot,
  kLseFast,          // lse with VectorFastExp (kernels/simd/fast_exp.hpp)
  kTwoPassLse,       // bench baseline: global max pass, then a sum-of-exp pass (not a carrier)
  kTwoPassLseFast,   // the same with VectorFastExp
  kTwoPassVariance,  // bench baseline: mean pass, then a squared-deviation pass
};

// Virtual lanes K (a compile-time choice among kLaneChoices) and, for the tile-lifting
// kernels, the lane tile T (0 = push every element).
struct Plan {
  std::uint32_t lanes = 32;
  std::uint32_t tile = 0;
};

inline constexpr std::uint32_t kLaneChoices[] = {16, 32, 64};
inline constexpr std::uint32_t kMaxTile = 1024;

// One reduction: a (and b for dot) hold n storage values; `state` points to the core
// carrier's State of the op (OnlineSoftmax<T, PortableExp>::State for lse, ...).
struct ReduceArgs {
  OpCode op = OpCode::kSum;
  const void* a = nullptr;
  const void* b = nullptr;
  std::size_t n = 0;
  Plan plan;
  void* state = nullptr;
};

// The softmax output pass: out[i] = OnlineSoftmax::SoftmaxOutput(x[i], (m, d), policy).
struct SoftmaxArgs {
  const void* x = nullptr;
  std::size_t n = 0;
  double m = 0;  // the row state, in the compute type (exact: float -> double -> float)
  double d = 0;
  bool zeros_for_empty = false;
  void* out = nullptr;  // compute type
};

// Per storage type, dispatched to the best (or the test-selected) Highway target.
void ReduceF32(const ReduceArgs& args);
void ReduceF64(const ReduceArgs& args);
void ReduceF16(const ReduceArgs& args);
void ReduceBF16(const ReduceArgs& args);
void SoftmaxF32(const SoftmaxArgs& args);
void SoftmaxF64(const SoftmaxArgs& args);
void SoftmaxF16(const SoftmaxArgs& args);
void SoftmaxBF16(const SoftmaxArgs& args);
// The lane count the current target prefers for the compute type of that storage (native mode).
std::uint32_t NativeLanesF32();
std::uint32_t NativeLanesF64();

}  // namespace carrier::simd::detail
