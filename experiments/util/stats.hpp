// experiments/util/stats.hpp: the drivers' one Median and one wall-clock timer, shared by the
// benchmark verbs, the sweep summary and the studies (so a "median of R runs" means the same in
// every table the project prints).
//
// Contract. Median(v): the middle value of v sorted ascending; for an even count the mean of the
// two middle values, (a + b) / 2; NaN for an empty v. Seconds(f): the wall time of one call f(),
// in seconds, by std::chrono::steady_clock (monotonic; not CPU time).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace carrier::util {

inline double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t k = v.size() / 2;
  return v.size() % 2 ? v[k] : (v[k - 1] + v[k]) / 2;
}

template <class F>
double Seconds(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  std::forward<F>(f)();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace carrier::util
