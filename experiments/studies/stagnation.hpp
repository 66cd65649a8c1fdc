// experiments/studies/stagnation.hpp: where recursive summation stops growing.
//
// Contract. RunStagnation sums the series term by term, s_k = fl(s_{k-1} + t_k), s_0 = 0, in
// the format with the given rounding (precision/emulated_oracle.hpp: one correctly rounded addition
// per term, the stochastic stream seeded with `seed` and counted from 0), and reports the
// first k whose addition leaves s unchanged *with certainty*:
//   - deterministic modes: fl(s + t_k) == s. For the two series here the terms never grow,
//     so once a term is absorbed every later one is too (this is Higham's stagnation);
//   - sr: an unchanged sum is a chance event whenever t_k != 0 (s + t_k rounds up with
//     probability t_k / ulp), so only a certain one counts: t_k == 0 or s infinite. With
//     nonzero terms sr therefore does not stagnate; within max_terms the result says so.
// The terms are the series' values stored in the format: harmonic t_k = 1/k rounded to
// nearest even (1/k is formed in long double, 64 bits >= 2p + 2, so the double rounding is
// innocuous and t_k is the correctly rounded 1/k); ones t_k = 1. exact_partial_sum is the
// exact partial sum of the *mathematical* series up to the reported term (harmonic: H_k,
// accumulated in long double with Neumaier's compensation, relative error below 1e-18;
// ones: k), i.e. what the computed sum should have been.
#pragma once

#include <cstdint>
#include <string>

#include "precision/format.hpp"
#include "precision/rounding.hpp"

namespace carrier::studies {

enum class Series { kHarmonic, kOnes };

struct StagnationSpec {
  Series series = Series::kHarmonic;
  Format format;
  Rounding rounding = Rounding::kNearestEven;
  std::uint64_t seed = 0;       // stochastic rounding's stream (unused by the other modes)
  std::uint64_t max_terms = 0;  // stop after this many terms when nothing stagnates
};

struct StagnationResult {
  bool stagnated = false;
  std::uint64_t term = 0;             // the stagnating k when stagnated, else max_terms
  double value = 0;                   // the computed sum after `term` terms
  long double exact_partial_sum = 0;  // sum of the mathematical terms 1..term
};

StagnationResult RunStagnation(const StagnationSpec& spec);

}  // namespace carrier::studies
