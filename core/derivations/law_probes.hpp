// core/derivations/law_probes.hpp: the laws that hold only in exact arithmetic, measured in the
// carrier's own scalar type T (for `carrier laws`, T = Mpfr at several precisions), and the
// associativity defect of a working format in ulps. Complements core/laws.hpp (the bitwise
// laws), which it reuses.
//
//   ExactRelativeDifference   |x - y| / max(|x|, |y|) computed in T (so a 512-bit difference is
//                             not lost in a long double), then returned as long double;
//                             0 for equal infinities or two NaNs, +inf for one NaN.
//   ExactResultDifference     the same per component, but relative to max(|x|, |y|, the
//                             operands' magnitude): the gaps below use it, so a result that
//                             cancels to 0 exactly does not turn a 2^-p residue into 1.
//   AssociativityGap          Combine(Combine(a, b), c) against Combine(a, Combine(b, c)).
//   CommutativityGap          Combine(a, b) against Combine(b, a), pairs (s_i, s_i+1).
//   HomomorphismGap           h(x ++ y) against Combine(h x, h y), h = Fold (Push).
//   AssociativityUlps         the associativity defect of each triple in ulps of the result,
//                             ulp_of(|r|) supplied by the caller (precision/metrics' UlpOf).
//   ClassifyAcrossPrecisions  from the gaps at 64, 128, 256, 512 bits: the observed slope
//                             (log2 of the gap per 64-bit step) and the verdict. A law that
//                             holds exactly leaves only rounding, which falls by about 2^-64
//                             per step; a law that fails leaves an O(1) gap whose slope is 0.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "core/carrier.hpp"
#include "core/laws.hpp"
#include "core/scalar.hpp"

namespace carrier {

template <class T>
long double ExactRelativeDifference(const T& x, const T& y) {
  using Tr = ScalarTraits<T>;
  const bool xn = Tr::IsNaN(x), yn = Tr::IsNaN(y);
  if (xn || yn) return (xn && yn) ? 0 : std::numeric_limits<long double>::infinity();
  if (Tr::IsInf(x) || Tr::IsInf(y))
    return x == y ? 0 : std::numeric_limits<long double>::infinity();
  if (x == y) return 0;
  const T ax = x < Tr::Zero() ? -x : x;
  const T ay = y < Tr::Zero() ? -y : y;
  const T scale = ax < ay ? ay : ax;
  const T diff = x - y;
  const T ad = diff < Tr::Zero() ? -diff : diff;
  return static_cast<long double>(ad / scale);
}

// The scale of each component over some results: max |component| over the finite ones.
template <Carrier C, class... R>
auto ComponentScales(const R&... results) {
  using T = typename C::Scalar;
  using Tr = ScalarTraits<T>;
  auto out = C::Components(C::Finalize(C::Identity()));
  for (auto& v : out) v = Tr::Zero();
  auto fold_in = [&](const typename C::Result& r) {
    const auto comp = C::Components(r);
    for (std::size_t i = 0; i < comp.size(); ++i) {
      if (!Tr::IsFinite(comp[i])) continue;
      const T mag = comp[i] < Tr::Zero() ? -comp[i] : comp[i];
      if (out[i] < mag) out[i] = mag;
    }
  };
  (fold_in(results), ...);
  return out;
}

// Largest over components of |a - b| / max(|a|, |b|, scale): relative to the result, or to the
// operands' magnitude where the result cancels (an exact 0 against a residue 2^-66 |operand|
// is rounding, not a broken law).
template <Carrier C, class Scales>
long double ExactResultDifference(const typename C::Result& a, const typename C::Result& b,
                                  const Scales& scales) {
  using T = typename C::Scalar;
  using Tr = ScalarTraits<T>;
  const auto ca = C::Components(a);
  const auto cb = C::Components(b);
  long double worst = 0;
  for (std::size_t i = 0; i < ca.size(); ++i) {
    const long double rel = ExactRelativeDifference(ca[i], cb[i]);
    if (rel == 0 || std::isinf(static_cast<double>(rel)) || !(scales[i] > Tr::Zero())) {
      worst = std::max(worst, rel);
      continue;
    }
    const T diff = ca[i] - cb[i];
    const T ad = diff < Tr::Zero() ? -diff : diff;
    const T aa = ca[i] < Tr::Zero() ? -ca[i] : ca[i];
    const T ab = cb[i] < Tr::Zero() ? -cb[i] : cb[i];
    T scale = aa < ab ? ab : aa;
    if (scale < scales[i]) scale = scales[i];
    worst = std::max(worst, static_cast<long double>(ad / scale));
  }
  return worst;
}

struct GapReport {
  std::string law;
  std::size_t checked = 0;
  long double max_gap = 0;
  std::string worst;  // the case with the largest gap, printable
};

template <Carrier C>
GapReport AssociativityGap(std::span<const typename C::State> a,
                           std::span<const typename C::State> b,
                           std::span<const typename C::State> c) {
  GapReport r;
  r.law = "associativity";
  for (std::size_t i = 0; i < a.size() && i < b.size() && i < c.size(); ++i) {
    const auto left = C::Combine(C::Combine(a[i], b[i]), c[i]);
    const auto right = C::Combine(a[i], C::Combine(b[i], c[i]));
    const long double g = ExactResultDifference<C>(
        C::Finalize(left), C::Finalize(right),
        ComponentScales<C>(C::Finalize(a[i]), C::Finalize(b[i]), C::Finalize(c[i])));
    ++r.checked;
    if (g > r.max_gap || (r.worst.empty() && g == r.max_gap && i == 0)) {
      r.max_gap = g;
      r.worst = "a = " + DescribeState<C>(a[i]) + ", b = " + DescribeState<C>(b[i]) +
                ", c = " + DescribeState<C>(c[i]) +
                ": Combine(Combine(a, b), c) = " + DescribeState<C>(left) +
                ", Combine(a, Combine(b, c)) = " + DescribeState<C>(right);
    }
  }
  return r;
}

template <Carrier C>
GapReport CommutativityGap(std::span<const typename C::State> states) {
  GapReport r;
  r.law = "commutativity";
  for (std::size_t i = 0; i + 1 < states.size(); ++i) {
    const auto ab = C::Combine(states[i], states[i + 1]);
    const auto ba = C::Combine(states[i + 1], states[i]);
    const long double g = ExactResultDifference<C>(
        C::Finalize(ab), C::Finalize(ba),
        ComponentScales<C>(C::Finalize(states[i]), C::Finalize(states[i + 1])));
    ++r.checked;
    if (g > r.max_gap || (r.worst.empty() && i == 0)) {
      r.max_gap = std::max(r.max_gap, g);
      r.worst = "a = " + DescribeState<C>(states[i]) + ", b = " + DescribeState<C>(states[i + 1]) +
                ": Combine(a, b) = " + DescribeState<C>(ab) +
                ", Combine(b, a) = " + DescribeState<C>(ba);
    }
  }
  return r;
}

// One list and its split points.
template <Carrier C>
GapReport HomomorphismGap(std::span<const typename C::Input> x,
                          std::span<const std::size_t> splits) {
  GapReport r;
  r.law = "homomorphism";
  const auto whole = Fold<C>(x.data(), x.size());
  // The scale: the operands' results and every element's own (a split can cancel inside x).
  auto element_scales = ComponentScales<C>(C::Finalize(C::Identity()));
  for (const auto& v : x) {
    const auto e = ComponentScales<C>(C::Finalize(C::Lift(v)));
    for (std::size_t i = 0; i < e.size(); ++i)
      if (element_scales[i] < e[i]) element_scales[i] = e[i];
  }
  for (std::size_t k : splits) {
    if (k > x.size()) continue;
    const auto left = Fold<C>(x.data(), k);
    const auto right = Fold<C>(x.data() + k, x.size() - k);
    const auto merged = C::Combine(left, right);
    auto scales = ComponentScales<C>(C::Finalize(left), C::Finalize(right));
    for (std::size_t i = 0; i < scales.size(); ++i)
      if (scales[i] < element_scales[i]) scales[i] = element_scales[i];
    const long double g = ExactResultDifference<C>(C::Finalize(whole), C::Finalize(merged), scales);
    ++r.checked;
    if (g > r.max_gap || (r.worst.empty())) {
      r.max_gap = std::max(r.max_gap, g);
      r.worst = "list of " + std::to_string(x.size()) + " split at " + std::to_string(k) +
                ": h(x) = " + DescribeState<C>(left) + ", h(y) = " + DescribeState<C>(right) +
                ", h(x ++ y) = " + DescribeState<C>(whole) +
                ", Combine(h x, h y) = " + DescribeState<C>(merged);
    }
  }
  return r;
}

// Ulps of the associativity defect of each triple (largest over the result's components);
// +inf where the two groupings disagree on a non-finite component.
template <Carrier C, class UlpOf>
std::vector<double> AssociativityUlps(std::span<const typename C::State> a,
                                      std::span<const typename C::State> b,
                                      std::span<const typename C::State> c, UlpOf ulp_of) {
  std::vector<double> out;
  for (std::size_t i = 0; i < a.size() && i < b.size() && i < c.size(); ++i) {
    const auto left = C::Components(C::Finalize(C::Combine(C::Combine(a[i], b[i]), c[i])));
    const auto right = C::Components(C::Finalize(C::Combine(a[i], C::Combine(b[i], c[i]))));
    double worst = 0;
    for (std::size_t j = 0; j < left.size(); ++j) {
      const long double x = static_cast<long double>(left[j]);
      const long double y = static_cast<long double>(right[j]);
      if (std::isnan(x) || std::isnan(y) || std::isinf(x) || std::isinf(y)) {
        const bool same = (std::isnan(x) && std::isnan(y)) || x == y;
        if (!same) worst = std::numeric_limits<double>::infinity();
        continue;
      }
      const long double scale = std::max(std::fabs(x), std::fabs(y));
      worst = std::max(worst, static_cast<double>(std::fabs(x - y) / ulp_of(scale)));
    }
    out.push_back(worst);
  }
  return out;
}

struct PrecisionClassification {
  std::vector<int> bits;
  std::vector<long double> gaps;
  double slope = 0;            // log2(gap) per 64-bit step, least squares over the nonzero gaps
  bool exact = false;          // every gap 0
  bool floor_limited = false;  // the top-precision gap is below 2^-(bits/2)
  bool holds = false;  // exact, the gap falls with the precision (slope <= -32 per step), or
                       // floor_limited
};

inline PrecisionClassification ClassifyAcrossPrecisions(std::vector<int> bits,
                                                        std::vector<long double> gaps) {
  PrecisionClassification c;
  c.bits = std::move(bits);
  c.gaps = std::move(gaps);
  c.exact = std::all_of(c.gaps.begin(), c.gaps.end(), [](long double g) { return g == 0; });
  if (c.exact) {
    c.holds = true;
    return c;
  }
  // Zero gaps count as the rounding floor of their precision (2^-bits) for the slope.
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = static_cast<double>(c.gaps.size());
  for (std::size_t i = 0; i < c.gaps.size(); ++i) {
    const double x = c.bits[i] / 64.0;
    const double y = c.gaps[i] > 0 ? static_cast<double>(std::log2(c.gaps[i])) : -c.bits[i];
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double denom = n * sxx - sx * sx;
  c.slope = denom > 0 ? (n * sxy - sx * sy) / denom : 0;
  const long double last = c.gaps.back();
  // Holds when the gap falls with the precision, or is already below 2^-(bits/2) at the top
  // precision: operands 2^1000 apart (fp64's huge-range lists) leave a residue that no
  // precision below ~1000 bits removes, so its slope is flat but its size is rounding.
  c.floor_limited = last <= std::ldexp(1.0L, -c.bits.back() / 2);
  c.holds = (std::isfinite(c.slope) && c.slope <= -32) || c.floor_limited;
  return c;
}

}  // namespace carrier
