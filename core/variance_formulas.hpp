// core/variance_formulas.hpp: the classical variance formulas beside Welford's carrier
// (carriers/welford.hpp), each of its sums through a merge tree in the compute scalar T, so that
// the order of every addition is the tree's (the ops var-twopass, var-corrected, var-textbook of
// experiments/ops/variance.cpp register these and nothing else).
//
// Formulas (n = x.size() >= 1, counts converted as T(double(k)); every sum is
// Sum<T>::Finalize(ReplayOracle<Sum<T>>(tree, ...)), the tree's order, plain T additions):
//   TwoPassVariance        mean = sum(x) / n; d_i = x_i - mean; m2 = sum(d_i * d_i).
//   CorrectedTwoPassVariance  Chan, Golub & LeVeque, "Algorithms for computing the sample
//                          variance", Amer. Statist. 37(3), 1983: as two-pass, then
//                          m2 = sum(d_i * d_i) - s1 * s1 / n with s1 = sum(d_i): 0 in exact
//                          arithmetic; in floating point it cancels the n delta^2 that an error
//                          delta of the computed mean adds to the two-pass sum.
//   TextbookVariance       one pass carrying (sum x, sum x^2), i.e. two Sum replays over the
//                          same tree: s1 = sum(x_i), s2 = sum(x_i * x_i); mean = s1 / n;
//                          m2 = s2 - s1 * s1 / n (its error grows like kappa^2 u).
//   ShiftedTextbookVariance  the textbook pass over y_i = x_i - d, d = x_1 (CGL's shifted
//                          algorithm; each y_i rounded once): mean = d + s1 / n, m2 as above
//                          on y, so its error grows with the shifted data's condition number.
// Result (each): {mean, var_population = m2 / n, var_sample = m2 / (n - 1)} in T (n == 1: the
// sample variance is m2 / 0, whatever T's division gives). Special values follow T's arithmetic
// (NaN in -> NaN; no guards: these are the formulas as written, not carriers).
// Bound: none stated here (the ops declare none; Chan, Golub & LeVeque's Table 1 gives the
// orders: two-pass O(n u + n^2 kappa^2 u^2), textbook O(n kappa^2 u)).
// Assumes no FMA contraction (the project's -ffp-contract=off), like every carrier.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/carriers/sum.hpp"
#include "core/merge_tree.hpp"
#include "core/replay_oracle.hpp"
#include "core/schedule.hpp"

namespace carrier {

template <class T>
struct VarianceMoments {
  T mean;
  T var_population;
  T var_sample;
};

namespace variance_detail {

template <class T>
T SumOver(const MergeTree& tree, const std::vector<T>& x) {
  return Sum<T>::Finalize(ReplayOracle<Sum<T>>(tree, std::span<const T>(x)));
}

template <class T>
VarianceMoments<T> Moments(const T& mean, const T& m2, std::size_t n) {
  const T count = T(static_cast<double>(n));
  return {mean, m2 / count, m2 / T(static_cast<double>(n - 1))};
}

}  // namespace variance_detail

template <class T>
VarianceMoments<T> TwoPassVariance(const MergeTree& tree, const std::vector<T>& x) {
  using variance_detail::SumOver;
  // Pass 1: the mean; pass 2: the centred squares, both through the same tree.
  const T mean = SumOver(tree, x) / T(static_cast<double>(x.size()));
  std::vector<T> d2;
  d2.reserve(x.size());
  for (const T& v : x) {
    const T d = v - mean;
    d2.push_back(d * d);
  }
  return variance_detail::Moments(mean, SumOver(tree, d2), x.size());
}

template <class T>
VarianceMoments<T> CorrectedTwoPassVariance(const MergeTree& tree, const std::vector<T>& x) {
  using variance_detail::SumOver;
  // Pass 1: the mean; pass 2: the centred values and their squares, both sums through the same
  // tree; then M2 = sum d^2 - (sum d)^2 / n.
  const T count = T(static_cast<double>(x.size()));
  const T mean = SumOver(tree, x) / count;
  std::vector<T> d, d2;
  d.reserve(x.size());
  d2.reserve(x.size());
  for (const T& v : x) {
    d.push_back(v - mean);
    d2.push_back(d.back() * d.back());
  }
  const T s1 = SumOver(tree, d);
  return variance_detail::Moments(mean, SumOver(tree, d2) - s1 * s1 / count, x.size());
}

template <class T>
VarianceMoments<T> TextbookVariance(const MergeTree& tree, const std::vector<T>& x) {
  using variance_detail::SumOver;
  // One pass carrying (sum x, sum x^2): two Sum replays over the same tree are exactly that
  // pair carrier, component by component.
  const T count = T(static_cast<double>(x.size()));
  std::vector<T> sq;
  sq.reserve(x.size());
  for (const T& v : x) sq.push_back(v * v);
  const T s1 = SumOver(tree, x);
  const T s2 = SumOver(tree, sq);
  return variance_detail::Moments(s1 / count, s2 - s1 * s1 / count, x.size());
}

template <class T>
VarianceMoments<T> ShiftedTextbookVariance(const MergeTree& tree, const std::vector<T>& x) {
  using variance_detail::SumOver;
  const T count = T(static_cast<double>(x.size()));
  const T d = x.empty() ? T(0.0) : x.front();  // n = 0 is refused earlier; no UB here
  std::vector<T> y, sq;
  y.reserve(x.size());
  sq.reserve(x.size());
  for (const T& v : x) {
    y.push_back(v - d);
    sq.push_back(y.back() * y.back());
  }
  const T s1 = SumOver(tree, y);
  const T s2 = SumOver(tree, sq);
  return variance_detail::Moments(d + s1 / count, s2 - s1 * s1 / count, x.size());
}

}  // namespace carrier
