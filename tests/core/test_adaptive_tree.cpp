// Higham 1993's data-dependent orders (core/adaptive_tree.hpp): insertion and psum trees are
// valid merge orders, follow their definitions (checked against a direct list transcription
// and against the greedy property step by step), and replay to the values their decisions saw.
#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <span>
#include <vector>

#include "core/adaptive_tree.hpp"
#include "core/carriers/sum.hpp"
#include "core/merge_tree.hpp"
#include "core/replay_oracle.hpp"

using namespace carrier;

namespace {

// Signed values of spread magnitudes, exactly representable in fp32 (24-bit significands,
// exponents -12..11), from a fixed LCG so a failure is reproducible from (seed, n). fp32 is
// the working arithmetic of these tests (core/ tests use no emulated format).
std::vector<double> SignedValues(std::size_t n, std::uint64_t seed) {
  std::vector<double> x(n);
  std::uint64_t s = seed;
  for (auto& v : x) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    const double m = 8388608 + static_cast<double>((s >> 16) % 8388608);  // 24 bits
    const int e = static_cast<int>((s >> 40) % 24) - 12;
    v = std::ldexp(m, e - 23) * (((s >> 60) & 1) ? -1.0 : 1.0);
  }
  return x;
}

double AddF(double a, double b) {
  return static_cast<double>(static_cast<float>(a) + static_cast<float>(b));
}

// Insertion summation transcribed from its definition: a list kept in increasing |value|
// (stable: equal magnitudes in input order), the two first removed, their fp32 sum inserted
// after every entry of no greater magnitude.
double InsertionByList(std::vector<double> x) {
  std::stable_sort(x.begin(), x.end(),
                   [](double a, double b) { return std::fabs(a) < std::fabs(b); });
  while (x.size() > 1) {
    const double s = AddF(x[0], x[1]);
    x.erase(x.begin(), x.begin() + 2);
    auto at = std::upper_bound(x.begin(), x.end(), std::fabs(s),
                               [](double m, double v) { return m < std::fabs(v); });
    x.insert(at, s);
  }
  return x.empty() ? 0.0 : x[0];
}

double ReplayF(const MergeTree& t, const std::vector<double>& x) {
  std::vector<float> in(x.begin(), x.end());
  return static_cast<double>(ReplayOracleResult<Sum<float>>(t, std::span<const float>(in)));
}

// The order in which a sequential tree (increasing, decreasing, psum) adds the inputs: the
// first combine holds the first two (the first being the one `before` puts first), every
// later one the running sum (the previous combine) and the next input.
std::vector<std::uint64_t> SequentialOrder(const MergeTree& t,
                                           bool (*before)(std::uint64_t, std::uint64_t)) {
  const std::uint64_t n = t.n;
  std::uint64_t a = t.combines[0].left, b = t.combines[0].right;
  if (!before(a, b)) std::swap(a, b);
  std::vector<std::uint64_t> order = {a, b};
  for (std::size_t k = 1; k < t.combines.size(); ++k) {
    const CombineOp op = t.combines[k];
    const bool right_is_input = op.right < n;
    CHECK((right_is_input ? op.left : op.right) == n + k - 1);
    order.push_back(right_is_input ? op.right : op.left);
  }
  return order;
}

}  // namespace

TEST_CASE("insertion and psum trees are valid merge orders over every input", "[fast]") {
  for (AdaptiveOrder order : {AdaptiveOrder::kInsertion, AdaptiveOrder::kPsum}) {
    for (std::size_t n : {0, 1, 2, 3, 17, 300}) {
      const auto x = SignedValues(n, 7 + n);
      const MergeTree t = BuildAdaptiveTree(order, x, AddF);
      INFO(ToString(order) << " n=" << n << " seed=" << 7 + n);
      CHECK(ValidateTree(t) == "");
      CHECK(t.n == n);
      CHECK(t.chains.size() == n);
      CHECK(t.combines.size() == (n > 0 ? n - 1 : 0));
      CHECK(t.permutes);
      CHECK(t.schedule == ToString(order));
    }
  }
  AdaptiveOrder o;
  CHECK(ParseAdaptiveOrder("insertion", o));
  CHECK(o == AdaptiveOrder::kInsertion);
  CHECK(ParseAdaptiveOrder("psum", o));
  CHECK(o == AdaptiveOrder::kPsum);
  CHECK_FALSE(ParseAdaptiveOrder("seq", o));
}

TEST_CASE("insertion in fp32 equals its list transcription and replays to the same bits",
          "[fast]") {
  for (std::size_t n : {2, 5, 64, 1000}) {
    for (std::uint64_t seed : {1, 2, 3}) {
      const auto x = SignedValues(n, seed);
      const MergeTree t = BuildAdaptiveTree(AdaptiveOrder::kInsertion, x, AddF);
      const double list = InsertionByList(x), replay = ReplayF(t, x);
      std::cout << "insertion fp32 n=" << n << " seed=" << seed << ": list " << list << ", replay "
                << replay << "\n";
      INFO("n=" << n << " seed=" << seed);
      CHECK(std::bit_cast<std::uint64_t>(list) == std::bit_cast<std::uint64_t>(replay));
      // Each combine takes the two smallest magnitudes available at that point: operands
      // never grow in magnitude faster than the sums they make allow, and the first combine
      // is the two inputs of least magnitude.
      std::vector<double> mags(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) mags[i] = std::fabs(x[i]);
      std::sort(mags.begin(), mags.end());
      const double m0 = std::fabs(x[t.combines[0].left]), m1 = std::fabs(x[t.combines[0].right]);
      CHECK(std::min(m0, m1) == mags[0]);
      CHECK(std::max(m0, m1) == mags[1]);
    }
  }
}

TEST_CASE("psum adds, at every step, the term that makes the computed partial sum smallest",
          "[fast]") {
  // By hand: {3, -2, -2, 1}: S1 = 1 (least |x|), S2 = 1 - 2 = -1 (index 1 before 2 on the
  // tie), S3 = -1 + 3 = 2, S4 = 0. So the order is 3, 1, 0, 2.
  {
    const std::vector<double> x = {3, -2, -2, 1};
    const MergeTree t = BuildAdaptiveTree(AdaptiveOrder::kPsum, x, AddF);
    REQUIRE(t.combines.size() == 3);
    // Operands in input order: {1, 3}, then {0, node 4}, then {node 5, 2}.
    CHECK(t.combines[0] == CombineOp{1, 3});
    CHECK(t.combines[1] == CombineOp{0, 4});
    CHECK(t.combines[2] == CombineOp{5, 2});
    CHECK(ValidateTree(t) == "");
    CHECK(ReplayF(t, x) == 0.0);
  }
  for (std::size_t n : {2, 9, 200}) {
    const std::uint64_t seed = 11 + n;
    const auto x = SignedValues(n, seed);
    const MergeTree t = BuildAdaptiveTree(AdaptiveOrder::kPsum, x, AddF);
    INFO("n=" << n << " seed=" << seed);
    // The first term has the least |x| (ties: the lower index), as psum's first step picks.
    static std::vector<double> xs;
    xs = x;
    const auto order = SequentialOrder(t, [](std::uint64_t a, std::uint64_t b) {
      return std::fabs(xs[a]) < std::fabs(xs[b]) || (std::fabs(xs[a]) == std::fabs(xs[b]) && a < b);
    });
    std::vector<bool> used(n, false);
    double s = 0;
    bool greedy = true;
    for (std::uint64_t i : order) {
      const double mine = std::fabs(AddF(s, x[i]));
      for (std::size_t j = 0; j < n; ++j)
        if (!used[j] && std::fabs(AddF(s, x[j])) < mine) greedy = false;
      used[i] = true;
      s = AddF(s, x[i]);
    }
    const double replay = ReplayF(t, x);
    std::cout << "psum fp32 n=" << n << " seed=" << seed << ": greedy " << s << ", replay "
              << replay << "\n";
    CHECK(greedy);
    CHECK(std::bit_cast<std::uint64_t>(s) == std::bit_cast<std::uint64_t>(replay));
  }
}

TEST_CASE("increasing and decreasing are recursive summation in sorted order of |x|", "[fast]") {
  const std::vector<double> x = {0.5, -4, 2, -0.5, 1};
  const MergeTree up = BuildAdaptiveTree(AdaptiveOrder::kIncreasing, x, AddF);
  const MergeTree down = BuildAdaptiveTree(AdaptiveOrder::kDecreasing, x, AddF);
  // |x| = .5 4 2 .5 1: increasing 0, 3, 4, 2, 1 (ties by index); decreasing 1, 2, 4, 0, 3.
  const std::vector<std::uint64_t> want_up = {0, 3, 4, 2, 1}, want_down = {1, 2, 4, 0, 3};
  static const std::vector<double> xs = x;
  const auto order_up = SequentialOrder(up, [](std::uint64_t a, std::uint64_t b) {
    return std::fabs(xs[a]) < std::fabs(xs[b]) || (std::fabs(xs[a]) == std::fabs(xs[b]) && a < b);
  });
  const auto order_down = SequentialOrder(down, [](std::uint64_t a, std::uint64_t b) {
    return std::fabs(xs[a]) > std::fabs(xs[b]) || (std::fabs(xs[a]) == std::fabs(xs[b]) && a < b);
  });
  CHECK(order_up == want_up);
  CHECK(order_down == want_down);
  CHECK(ValidateTree(up) == "");
  CHECK(ValidateTree(down) == "");
  // Replayed, they equal the plain loop over the sorted values (fp32, random signed data).
  for (std::uint64_t seed : {4, 5}) {
    auto v = SignedValues(500, seed);
    for (AdaptiveOrder o : {AdaptiveOrder::kIncreasing, AdaptiveOrder::kDecreasing}) {
      auto sorted = v;
      std::stable_sort(sorted.begin(), sorted.end(), [o](double a, double b) {
        return o == AdaptiveOrder::kIncreasing ? std::fabs(a) < std::fabs(b)
                                               : std::fabs(a) > std::fabs(b);
      });
      double s = 0;
      for (double e : sorted) s = AddF(s, e);
      const double replay = ReplayF(BuildAdaptiveTree(o, v, AddF), v);
      INFO(ToString(o) << " n=500 seed=" << seed << ": loop " << s << ", replay " << replay);
      CHECK(std::bit_cast<std::uint64_t>(s) == std::bit_cast<std::uint64_t>(replay));
    }
  }
}
