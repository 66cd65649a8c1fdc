// experiments/cli/cost.hpp: what a verb's run will cost, measured before the run starts.
//
// EstimateCost(n, start, exponent, run) times run(m) at m = start, 4 start, 16 start, ... until
// one call takes at least kMinTimedSeconds, m reaches n or the next call would take over a
// second (or, given clear_below, the estimate is clearly below it), and scales that call's time to
// n as (n / m)^exponent (1 for a reduction, 2 for attention's n x n scores). Each call is a real,
// smaller run of the same work, so the estimate carries whatever the work costs per element
// (an MPFR precision of a million bits, a slow tree), which no table of constants would.
// run(m) returns false when the small run cannot be made (its own error then comes from the
// real run): no estimate. FittingN inverts the scaling: the largest n whose estimate stays
// within a limit. RefusalText is the one line a verb fails with past its limit, naming both.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace carrier::cli {

struct CostEstimate {
  bool known = false;   // false: no small run could be made
  double seconds = 0;   // the estimate at n
  std::uint64_t m = 0;  // the size of the timed run
  double m_seconds = 0;
  double exponent = 1;
};

inline constexpr double kMinTimedSeconds = 0.05;

// clear_below > 0: also stop as soon as the estimate is below clear_below / kClearMargin, where
// the caller's every decision with it (a limit, whether to show a progress line) is at or above
// clear_below: a quick trial is then not run at every size up to kMinTimedSeconds (which cost
// eval a third of its wall time at n = 2^24), and an estimate off by up to kClearMargin (a
// small run's fixed costs, a large run's cache misses) decides the same.
inline constexpr double kClearMargin = 2;
inline CostEstimate EstimateCost(std::uint64_t n, std::uint64_t start, double exponent,
                                 const std::function<bool(std::uint64_t)>& run,
                                 double clear_below = 0) {
  CostEstimate e;
  e.exponent = exponent;
  for (std::uint64_t m = std::min(start, n); m >= 1;) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!run(m)) return e;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    e.known = true;
    e.m = m;
    e.m_seconds = s;
    e.seconds = s * std::pow(static_cast<double>(n) / static_cast<double>(m), exponent);
    // Enough time measured, the whole n done, or the next size would itself take over a second.
    if (s >= kMinTimedSeconds || m >= n || s * std::pow(4.0, exponent) > 1.0) break;
    if (clear_below > 0 && e.seconds * kClearMargin < clear_below) break;
    m = std::min(n, m * 4);
  }
  return e;
}

// The largest n the estimate allows within limit_seconds (at least e.m, the size timed).
inline std::uint64_t FittingN(const CostEstimate& e, double limit_seconds) {
  if (!e.known || e.m_seconds <= 0) return e.m;
  const double n =
      static_cast<double>(e.m) * std::pow(limit_seconds / e.m_seconds, 1.0 / e.exponent);
  return n >= 1.8e19 ? UINT64_MAX : static_cast<std::uint64_t>(std::max(n, 1.0));
}

inline std::string SecondsText(double s) {
  char buf[48];
  if (s < 120) {
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  } else if (s < 7200) {
    std::snprintf(buf, sizeof buf, "%.0f min", s / 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  }
  return buf;
}

// "WHAT would take about 3.2 h (measured at n = 4096: 0.21 s, scaled as n^2), past the limit
// of 10 min (FLAG): n <= 12000 fits".
inline std::string RefusalText(const std::string& what, const CostEstimate& e, double limit,
                               const std::string& flag, const std::string& n_name = "n") {
  const std::string scaling =
      e.exponent == 1 ? "n" : "n^" + std::to_string(static_cast<int>(e.exponent));
  return what + " would take about " + SecondsText(e.seconds) + " (measured at " + n_name + " = " +
         std::to_string(e.m) + ": " + SecondsText(e.m_seconds) + ", scaled as " + scaling +
         "), past the limit of " + SecondsText(limit) + " (" + flag + "): " + n_name +
         " <= " + std::to_string(FittingN(e, limit)) + " fits";
}

}  // namespace carrier::cli
