// core/derivations/counterexamples.hpp: two loops that are NOT secretly associative in their
// naive state, written as carriers so that `carrier laws` and `carrier derive` can reject them
// with evidence. Their declarations claim what a hopeful author would claim (a monoid whose
// fold is its combine); the laws must refute that.
//
// NaiveMean<T> ("naive-mean"), the mean without a count:
//   State (nonempty, m); Identity (0, +0); Lift(x) = (1, x);
//   Combine(a, b) = a empty -> b; b empty -> a; otherwise (1, (a.m + b.m) / 2).
//   Push = Combine(s, Lift(x)), so the fold is an exponentially weighted average, and
//   Combine is not associative even in exact arithmetic: ((a + b)/2 + c)/2 != (a + (b + c)/2)/2.
//   The missing state is the count: with (n, mean) the pooled mean is a homomorphism (Welford).
// NaiveLse<T> ("naive-lse"), online softmax without the rescale:
//   State (m, d); Identity (-inf, +0); Lift(x) = (x, 1) (-inf -> Identity);
//   Push(s, x) = (M, s.d + exp(x - M)) with M = max(s.m, x): d is never rescaled when the
//   maximum moves; Combine(a, b) = (max(a.m, b.m), a.d + b.d).
//   Combine is associative (it is (max, +)), but it is not the loop's combine: the leftward and
//   rightward folds of [0, 1] differ ((1, 2) against (1, 1 + e^-1)), and h(x ++ y) differs from
//   Combine(h x, h y). The rescale is exactly the twist that transport of structure explains.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "core/carriers/max.hpp"
#include "core/derivations/common.hpp"
#include "core/scalar.hpp"

namespace carrier {

template <class T>
struct NaiveMean {
  using Scalar = T;
  using Input = T;
  using Result = T;
  struct State {
    std::uint64_t nonempty;
    T m;
    auto Tie() const { return std::tie(nonempty, m); }
  };
  static constexpr const char* kName = "naive-mean";
  static constexpr bool kCommutative = true;
  static constexpr bool kBitwiseCommutative = true;
  static constexpr bool kPushIsCombineLift = true;
  static constexpr bool kHasPadInput = false;

  static State Identity() { return {0, ScalarTraits<T>::Zero()}; }
  static State Lift(const Input& x) { return {1, x}; }
  static State Combine(const State& a, const State& b) {
    if (a.nonempty == 0) return b;
    if (b.nonempty == 0) return a;
    T sum = a.m + b.m;
    return {1, sum / ScalarTraits<T>::FromCount(2)};
  }
  static State Push(const State& s, const Input& x) { return Combine(s, Lift(x)); }
  static Result Finalize(const State& s) { return s.nonempty ? s.m : ScalarTraits<T>::QuietNaN(); }
  static std::array<T, 1> Components(const Result& r) { return {r}; }
};

template <class T>
struct NaiveLse {
  using Scalar = T;
  using Input = T;
  struct State {
    T m;
    T d;
    auto Tie() const { return std::tie(m, d); }
  };
  struct Result {
    T lse;
  };
  static constexpr const char* kName = "naive-lse";
  static constexpr bool kCommutative = true;
  static constexpr bool kBitwiseCommutative = true;
  static constexpr bool kPushIsCombineLift = true;
  static constexpr bool kHasPadInput = false;

  static State Identity() { return {-ScalarTraits<T>::Infinity(), ScalarTraits<T>::Zero()}; }
  static State Lift(const Input& x) {
    if (x == -ScalarTraits<T>::Infinity()) return Identity();
    return {x, ScalarTraits<T>::One()};
  }
  static State Combine(const State& a, const State& b) { return {Max<T>::Of(a.m, b.m), a.d + b.d}; }
  static State Push(const State& s, const Input& x) {
    if (x == -ScalarTraits<T>::Infinity()) return s;
    using std::exp;
    T big = Max<T>::Of(s.m, x);
    T term = (x == big) ? ScalarTraits<T>::One() : T(exp(x - big));
    return {big, s.d + term};
  }
  static Result Finalize(const State& s) {
    using std::log;
    if (s.m == -ScalarTraits<T>::Infinity()) return {s.m};
    return {s.m + T(log(s.d))};
  }
  static std::array<T, 1> Components(const Result& r) { return {r.lse}; }
};

struct NaiveMeanDerivation : CarrierDerivation<NaiveMean<double>> {
  static constexpr const char* kName = "naive-mean";
  static std::vector<double> Inverse(const State& s) {
    if (s.nonempty == 0) return {};
    return {s.m};
  }
  static std::vector<double> RandomList(std::mt19937_64& rng) {
    std::vector<double> x(2 + rng() % 6);
    for (auto& v : x) v = static_cast<double>(rng() % 10);  // small integers: readable evidence
    return x;
  }
  static std::string DescribeInput(double x) { return DescribeDouble(x); }
};

struct NaiveLseDerivation : CarrierDerivation<NaiveLse<double>> {
  static constexpr const char* kName = "naive-lse";
  static State PushFront(const Input& x, const State& s) {
    if (x == -std::numeric_limits<double>::infinity()) return s;
    const double big = Max<double>::Of(s.m, x);
    return {big, ((x == big) ? 1.0 : std::exp(x - big)) + s.d};
  }
  static std::vector<double> Inverse(const State& s) {
    if (s.m == -std::numeric_limits<double>::infinity()) return {};
    return {s.m};
  }
  static std::vector<double> RandomList(std::mt19937_64& rng) {
    std::vector<double> x(2 + rng() % 6);
    for (auto& v : x) v = static_cast<double>(rng() % 4);
    return x;
  }
  static std::string DescribeInput(double x) { return DescribeDouble(x); }
};

}  // namespace carrier
