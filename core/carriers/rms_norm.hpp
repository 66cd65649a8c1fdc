// core/carriers/rms_norm.hpp: RmsNorm<T>, the statistic of RMSNorm (Zhang & Sennrich 2019, as
// torch.nn.functional.rms_norm and the LLM kernels compute it): the root mean square of a row,
// rms = sqrt(sum x_i^2 / n), by which every element is then divided (eps left out: it is added
// after the reduction and changes no order question).
//
// State      (n, ssq): n the count (exact integer), ssq the sum of squares. Empty: (0, +0).
// Formulas   Identity = (0, +0); Lift(x) = (1, x * x); Push(s, x) = (n + 1, ssq + x * x);
//            Combine(a, b) = (a.n + b.n, a.ssq + b.ssq);
//            Finalize = {rms = Sqrt(ssq / T(n)), mean_square = ssq / T(n)} (NaN for n = 0).
// Special    NaN in -> NaN; any inf -> +inf; empty -> NaN (0 / 0). Finite inputs above
//            sqrt(max finite) overflow ssq to +inf (the kernels do the same: they square in the
//            compute type, as this carrier does; the scaled carrier of `norm2` does not).
// Bound      Every term x_i^2 >= 0, so (Higham, ASNA 2nd ed., Sec. 4.2, non-negative terms)
//            |ssq_hat - ssq| <= gamma_{D+1} ssq with D the tree's max leaf depth (the +1 is the
//            square); the division and the square root add one rounding each, so rms is within
//            about ((D + 1) / 2 + 2) u relative. No bound hook is declared: eval reports the
//            error against the certified reference only.
// Properties Commutative and bitwise commutative (one IEEE addition in Combine, the count is
//            exact); Push == Combine(s, Lift(x)). No pad input: every input counts in n (a
//            padded row divides by the padded length, so padding must be masked, not zeroed).
// Assumes    no FMA contraction; n < 2^53 (double) or 2^24 (float) for exact count conversion.
#pragma once

#include <array>
#include <cstdint>
#include <tuple>

#include "core/platform.hpp"
#include "core/scalar.hpp"

namespace carrier {

template <class T>
struct RmsNorm {
  using Scalar = T;
  using Input = T;
  struct State {
    std::uint64_t n;
    T ssq;
    auto Tie() const { return std::tie(n, ssq); }
  };
  struct Result {
    T rms;
    T mean_square;
  };
  static constexpr const char* kName = "rmsnorm";
  static constexpr bool kCommutative = true;
  static constexpr bool kBitwiseCommutative = true;
  static constexpr bool kPushIsCombineLift = true;
  static constexpr bool kHasPadInput = false;

  CARRIER_HD static State Identity() { return {0, ScalarTraits<T>::Zero()}; }
  CARRIER_HD static State Lift(const Input& x) { return {1, x * x}; }
  CARRIER_HD static State Push(const State& s, const Input& x) { return {s.n + 1, s.ssq + x * x}; }
  CARRIER_HD static State Combine(const State& a, const State& b) {
    return {a.n + b.n, a.ssq + b.ssq};
  }
  CARRIER_HD static Result Finalize(const State& s) {
    const T ms = s.ssq / ScalarTraits<T>::FromCount(s.n);
    return {ScalarTraits<T>::Sqrt(ms), ms};
  }
  static std::array<T, 2> Components(const Result& r) { return {r.rms, r.mean_square}; }
};

}  // namespace carrier
