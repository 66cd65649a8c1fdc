// core/carriers/welford.hpp: Welford<T>, count, mean and sum of squared deviations.
//
// State      (n, mean, m2): n the count (exact integer), mean, m2 = sum (x_i - mean)^2.
//            Empty: (0, +0, +0).
// Formulas   Counts convert with ScalarTraits<T>::FromCount, written T(k) below.
//            Lift(x) = (1, x, +0) for finite x; (1, x, NaN) for inf or NaN x.
//            Push(s, x) (Welford 1962):
//              x or s.mean not finite -> (n + 1, (s.n == 0) ? x : s.mean + x, NaN);
//              n' = n + 1;  delta = x - mean;  mean' = mean + delta / T(n');
//              m2' = m2 + delta * (x - mean').
//            Combine(a, b) (Chan, Golub & LeVeque 1979):
//              a.n == 0 -> b;  b.n == 0 -> a;
//              a.mean or b.mean not finite -> (a.n + b.n, a.mean + b.mean, NaN);
//              n = a.n + b.n;  delta = b.mean - a.mean;
//              mean = a.mean + delta * (T(b.n) / T(n));
//              m2 = (a.m2 + b.m2) + (delta * delta) * ((T(a.n) * T(b.n)) / T(n)).
//            LiftTile(x, k) (two-pass inside the tile): k == 0 -> Identity; sum = +0, then
//              sum = sum + x_i in order; mean = sum / T(k); mean not finite -> (k, mean, NaN);
//              m2 = +0, then m2 = m2 + (x_i - mean) * (x_i - mean) in order.
//            Finalize = {n, mean, var_population = m2 / T(n), var_sample = m2 / T(n - 1)},
//              mean and var_population NaN when n == 0, var_sample NaN when n < 2.
// Special    NaN in -> mean and variances NaN. Any inf (no NaN): mean = that inf (+inf and
//            -inf together: NaN), variances NaN; the guard adds means instead of evaluating
//            inf - inf, and sets m2 = NaN on every path (Lift of an inf included), so Fold,
//            trees and tiles agree. Empty -> mean NaN, variances NaN; one element -> variance
//            0 (population), NaN (sample). The tile mean is a plain sum: it overflows (and
//            then yields m2 NaN) when a tile's sum exceeds the range although its mean does
//            not; push and combine never form that sum.
// Bound      (stated tolerance, not rigorous.) Chan, Golub & LeVeque, "Algorithms for
//            computing the sample variance: analysis and recommendations", Amer. Statist. 37
//            (1983), Table 1: the updating algorithms have relative error in m2 of order
//            D kappa u, with kappa = sqrt(1 + n mean^2 / m2) the condition number and D the
//            merge depth (n - 1 sequential, log2 n pairwise). The tests assert
//            |m2_hat - m2| <= 8 (D + 2) kappa u m2 and |mean_hat - mean| <= 4 (D + 2) u
//            mean(|x|) and print the measured ratio.
// Properties Commutative in exact arithmetic (the pooled formulas are symmetric in a, b), but
//            not bitwise: a.mean + delta * (b.n / n) and b.mean + (-delta) * (a.n / n) round
//            differently (the tests print a witness); n and m2 do commute bitwise (delta^2,
//            a.m2 + b.m2 and T(a.n) * T(b.n) are symmetric), so only the mean moves, by a few
//            roundings of |a.mean| + |b.mean|. Push is not Combine(s, Lift(x)): Push
//            divides delta by T(n') and forms delta * (x - mean'), Combine multiplies delta by
//            (1 / T(n')) and forms delta^2 * (n / n'); both differ in the last bits (witness
//            printed). No pad input: every push increments n.
// Assumes    no FMA contraction; n < 2^53 (double) or 2^24 (float) for exact count
//            conversion; mean and m2 stay within range.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <tuple>

#include "core/platform.hpp"
#include "core/scalar.hpp"

namespace carrier {

template <class T>
struct Welford {
  using Scalar = T;
  using Input = T;
  struct State {
    std::uint64_t n;
    T mean;
    T m2;
    auto Tie() const { return std::tie(n, mean, m2); }
  };
  struct Result {
    std::uint64_t n;
    T mean;
    T var_population;
    T var_sample;
  };
  static constexpr const char* kName = "welford";
  static constexpr bool kCommutative = true;
  static constexpr bool kBitwiseCommutative = false;
  static constexpr bool kPushIsCombineLift = false;
  static constexpr bool kHasPadInput = false;

  CARRIER_HD static State Identity() {
    return {0, ScalarTraits<T>::Zero(), ScalarTraits<T>::Zero()};
  }
  CARRIER_HD static State Lift(const Input& x) {
    return {1, x,
            ScalarTraits<T>::IsFinite(x) ? ScalarTraits<T>::Zero() : ScalarTraits<T>::QuietNaN()};
  }
  CARRIER_HD static State Push(const State& s, const Input& x) {
    const std::uint64_t n = s.n + 1;
    if (!ScalarTraits<T>::IsFinite(x) || !ScalarTraits<T>::IsFinite(s.mean))
      return {n, s.n == 0 ? x : s.mean + x, ScalarTraits<T>::QuietNaN()};
    T delta = x - s.mean;
    T mean = s.mean + delta / ScalarTraits<T>::FromCount(n);
    T m2 = s.m2 + delta * (x - mean);
    return {n, mean, m2};
  }
  CARRIER_HD static State Combine(const State& a, const State& b) {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const std::uint64_t n = a.n + b.n;
    if (!ScalarTraits<T>::IsFinite(a.mean) || !ScalarTraits<T>::IsFinite(b.mean))
      return {n, a.mean + b.mean, ScalarTraits<T>::QuietNaN()};
    const T tn = ScalarTraits<T>::FromCount(n);
    const T ta = ScalarTraits<T>::FromCount(a.n);
    const T tb = ScalarTraits<T>::FromCount(b.n);
    T delta = b.mean - a.mean;
    T mean = a.mean + delta * (tb / tn);
    T m2 = (a.m2 + b.m2) + (delta * delta) * ((ta * tb) / tn);
    return {n, mean, m2};
  }
  CARRIER_HD static State LiftTile(const Input* x, std::size_t k) {
    if (k == 0) return Identity();
    T sum = ScalarTraits<T>::Zero();
    for (std::size_t i = 0; i < k; ++i) sum = sum + x[i];
    T mean = sum / ScalarTraits<T>::FromCount(k);
    if (!ScalarTraits<T>::IsFinite(mean)) return {k, mean, ScalarTraits<T>::QuietNaN()};
    T m2 = ScalarTraits<T>::Zero();
    for (std::size_t i = 0; i < k; ++i) {
      T dev = x[i] - mean;
      m2 = m2 + dev * dev;
    }
    return {k, mean, m2};
  }
  CARRIER_HD static Result Finalize(const State& s) {
    const T nan = ScalarTraits<T>::QuietNaN();
    if (s.n == 0) return {0, nan, nan, nan};
    T var_population = s.m2 / ScalarTraits<T>::FromCount(s.n);
    T var_sample = s.n < 2 ? nan : s.m2 / ScalarTraits<T>::FromCount(s.n - 1);
    return {s.n, s.mean, var_population, var_sample};
  }
  static std::array<T, 3> Components(const Result& r) {
    return {r.mean, r.var_population, r.var_sample};
  }
};

}  // namespace carrier
