// The project's special-values table (DESIGN.md, "core/: the Carrier"), checked on every carrier
// in float and double through every path a schedule can take: the sequential Fold, a combine of
// the two folded halves, a full pairwise tree of lifts, and, where the carrier has one, a tile
// lift of the whole input and a combine of two tile-lifted halves. Every path must give the
// same documented answer, bit for bit (any NaN equals any NaN).
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/carrier.hpp"
#include "core/carriers/all.hpp"
#include "support/test_support.hpp"

namespace carrier {
namespace {

using test::Pairwise;
using test::ScalarName;

// Every path, named, with the state it reaches.
template <class C>
std::vector<std::pair<std::string, typename C::State>> AllPaths(
    const std::vector<typename C::Input>& x) {
  const std::size_t n = x.size(), h = n / 2;
  std::vector<std::pair<std::string, typename C::State>> out;
  out.emplace_back("fold", Fold<C>(x.data(), n));
  out.emplace_back("halves", C::Combine(Fold<C>(x.data(), h), Fold<C>(x.data() + h, n - h)));
  out.emplace_back("pairwise", Pairwise<C>(x.data(), n));
  if constexpr (HasTileLift<C>) {
    out.emplace_back("tile", C::LiftTile(x.data(), n));
    out.emplace_back("tile-halves",
                     C::Combine(C::LiftTile(x.data(), h), C::LiftTile(x.data() + h, n - h)));
  }
  return out;
}

template <class T>
std::string ShowValues(const std::vector<T>& v) {
  return test::Join(v);
}

template <class C, class F>
std::vector<typename C::Scalar> ComponentsOf(const typename C::State& s, F finalize) {
  auto c = C::Components(finalize(s));
  return {c.begin(), c.end()};
}

// Checks that every path's components equal `expected` bitwise (NaN == NaN).
template <class C, class F>
void CheckRow(const std::string& what, const std::vector<typename C::Input>& x,
              const std::string& shown_inputs, const std::vector<typename C::Scalar>& expected,
              F finalize) {
  using T = typename C::Scalar;
  for (const auto& [path, state] : AllPaths<C>(x)) {
    const auto got = ComponentsOf<C>(state, finalize);
    test::Repro repro{0, x.size(), path, std::string(C::kName) + "<" + ScalarName<T>() + ">",
                      shown_inputs};
    INFO(what << ": expected " << ShowValues(expected) << ", got " << ShowValues(got) << "\n"
              << repro.Text());
    REQUIRE(got.size() == expected.size());
    for (std::size_t k = 0; k < got.size(); ++k)
      REQUIRE(ScalarTraits<T>::BitEqual(got[k], expected[k]));
  }
}

template <class C>
void CheckRow(const std::string& what, const std::vector<typename C::Input>& x,
              const std::string& shown_inputs, const std::vector<typename C::Scalar>& expected) {
  CheckRow<C>(what, x, shown_inputs, expected,
              [](const typename C::State& s) { return C::Finalize(s); });
}

// A scalar-input carrier: rows are plain value lists.
template <class C>
void CheckScalarRow(const std::string& what, const std::vector<typename C::Scalar>& x,
                    const std::vector<typename C::Scalar>& expected) {
  CheckRow<C>(what, x, ShowValues(x), expected);
}

// NaN at every position of a five-element row -> `expected`.
template <class C>
void CheckNaNEverywhere(const std::vector<typename C::Scalar>& expected) {
  using T = typename C::Scalar;
  for (std::size_t k = 0; k < 5; ++k) {
    std::vector<T> x = {T(1), T(-2), T(3), T(0.5), T(4)};
    x[k] = std::numeric_limits<T>::quiet_NaN();
    CheckScalarRow<C>("NaN at position " + std::to_string(k), x, expected);
  }
}

template <class T>
struct V {
  static constexpr T inf = std::numeric_limits<T>::infinity();
  static constexpr T nan = std::numeric_limits<T>::quiet_NaN();
  static constexpr T max = std::numeric_limits<T>::max();
};

TEMPLATE_TEST_CASE("carriers special values: Compensated", "[fast][carriers][special]", float,
                   double) {
  using T = TestType;
  using C = Compensated<T>;
  const T inf = V<T>::inf, nan = V<T>::nan;
  CheckScalarRow<C>("empty", {}, {T(0)});
  CheckNaNEverywhere<C>({nan});
  CheckScalarRow<C>("+inf", {T(1), inf, T(2)}, {inf});
  CheckScalarRow<C>("-inf", {T(1), -inf, T(2)}, {-inf});
  CheckScalarRow<C>("+inf and -inf", {inf, T(1), -inf}, {nan});
  CheckScalarRow<C>("inf and NaN", {inf, nan}, {nan});
  CheckScalarRow<C>("two +inf", {inf, inf}, {inf});
  CheckScalarRow<C>("overflow", {V<T>::max, V<T>::max, T(1)}, {inf});
  CheckScalarRow<C>("cancellation is exact", {T(1), T(1e30), T(-1e30), T(1)}, {T(2)});
  // The compensation recovers what the plain sum loses (1 + 2^-p twice).
  const T tiny = std::numeric_limits<T>::epsilon() / 2;
  CheckScalarRow<C>("compensated tiny terms", {T(1), tiny, tiny}, {T(1) + 2 * tiny});
}

TEMPLATE_TEST_CASE("carriers special values: Max", "[fast][carriers][special]", float, double) {
  using T = TestType;
  using C = Max<T>;
  const T inf = V<T>::inf, nan = V<T>::nan;
  CheckScalarRow<C>("empty", {}, {-inf});
  CheckNaNEverywhere<C>({nan});
  CheckScalarRow<C>("all -inf", {-inf, -inf, -inf}, {-inf});
  CheckScalarRow<C>("+inf", {T(1), inf, T(2)}, {inf});
  CheckScalarRow<C>("+inf and NaN", {inf, nan}, {nan});
  CheckScalarRow<C>("+0 beats -0", {-T(0), T(0), -T(0)}, {T(0)});
  CheckScalarRow<C>("-0 alone", {-T(0), -T(0)}, {-T(0)});
}

TEMPLATE_TEST_CASE("carriers special values: ArgMax", "[fast][carriers][special]", float, double) {
  using T = TestType;
  using C = ArgMax<T>;
  const T inf = V<T>::inf, nan = V<T>::nan;
  auto row = [](const std::vector<T>& v) {
    std::vector<IndexedValue<T>> x;
    for (std::size_t i = 0; i < v.size(); ++i) x.push_back({v[i], static_cast<std::int64_t>(i)});
    return x;
  };
  auto check = [&](const std::string& what, const std::vector<T>& v, T value, T index) {
    CheckRow<C>(what, row(v), ShowValues(v), {value, index});
  };
  check("empty", {}, -inf, T(-1));
  for (int k = 0; k < 5; ++k) {
    std::vector<T> v = {T(1), T(9), T(3), T(9), T(4)};
    v[k] = nan;
    check("NaN at position " + std::to_string(k), v, nan, T(k));
  }
  check("first NaN wins", {T(1), nan, T(2), nan}, nan, T(1));
  check("all -inf: first element", {-inf, -inf, -inf}, -inf, T(0));
  check("+inf, first one", {T(1), inf, T(2), inf}, inf, T(1));
  check("ties: lowest index", {T(3), T(1), T(3), T(3)}, T(3), T(0));
  check("signed zeros tie", {-T(0), T(0)}, -T(0), T(0));
  // The pad input lifts to the empty state on every path.
  CheckRow<C>("pad only", {C::PadInput(), C::PadInput()}, "[pad, pad]", {-inf, T(-1)});
}

TEMPLATE_TEST_CASE("carriers special values: OnlineSoftmax (log-sum-exp)",
                   "[fast][carriers][special]", float, double) {
  using T = TestType;
  using C = OnlineSoftmax<T>;
  const T inf = V<T>::inf, nan = V<T>::nan;
  CheckScalarRow<C>("empty", {}, {-inf});
  CheckScalarRow<C>("all -inf", {-inf, -inf, -inf, -inf}, {-inf});
  CheckNaNEverywhere<C>({nan});
  CheckScalarRow<C>("NaN beside -inf", {-inf, nan, -inf}, {nan});
  CheckScalarRow<C>("+inf", {T(1), inf, T(2)}, {inf});
  CheckScalarRow<C>("+inf and -inf", {inf, -inf}, {inf});
  CheckScalarRow<C>("two +inf", {inf, T(0), inf}, {inf});
  CheckScalarRow<C>("+inf and NaN", {inf, nan}, {nan});
  CheckScalarRow<C>("one finite among -inf", {-inf, T(0), -inf}, {T(0)});
  CheckScalarRow<C>("huge finite, no overflow", {V<T>::max, T(0)}, {V<T>::max});
}

TEMPLATE_TEST_CASE("carriers special values: softmax outputs of one row",
                   "[fast][carriers][special]", float, double) {
  using T = TestType;
  using C = OnlineSoftmax<T>;
  const T inf = V<T>::inf, nan = V<T>::nan;
  struct Case {
    std::string what;
    std::vector<T> x;
    std::vector<T> expect_nan_policy;
    std::vector<T> expect_zeros_policy;
  };
  const std::vector<Case> cases = {
      {"all -inf", {-inf, -inf, -inf}, {nan, nan, nan}, {T(0), T(0), T(0)}},
      {"NaN in the row", {T(1), nan, T(2)}, {nan, nan, nan}, {nan, nan, nan}},
      {"two +inf",
       {inf, T(1), inf, -inf},
       {T(0.5), T(0), T(0.5), T(0)},
       {T(0.5), T(0), T(0.5), T(0)}},
      {"one finite", {-inf, T(3), -inf}, {T(0), T(1), T(0)}, {T(0), T(1), T(0)}},
      {"equal values",
       {T(2), T(2), T(2), T(2)},
       {T(0.25), T(0.25), T(0.25), T(0.25)},
       {T(0.25), T(0.25), T(0.25), T(0.25)}},
  };
  for (const auto& c : cases) {
    for (const auto& [path, s] : AllPaths<C>(c.x)) {
      for (std::size_t i = 0; i < c.x.size(); ++i) {
        const T by_default = C::SoftmaxOutput(c.x[i], s);
        const T with_zeros = C::SoftmaxOutput(c.x[i], s, SoftmaxEmptyRow::kZeros);
        test::Repro repro{0, c.x.size(), path, std::string("softmax<") + ScalarName<T>() + ">",
                          ShowValues(c.x)};
        INFO(c.what << " element " << i << ": default " << test::Exact(by_default) << ", kZeros "
                    << test::Exact(with_zeros) << "\n"
                    << repro.Text());
        REQUIRE(ScalarTraits<T>::BitEqual(by_default, c.expect_nan_policy[i]));
        REQUIRE(ScalarTraits<T>::BitEqual(with_zeros, c.expect_zeros_policy[i]));
      }
    }
  }
  // The empty row has no elements; its state answers like the all -inf row.
  CHECK(std::isnan(C::SoftmaxOutput(T(0), C::Identity())));
  CHECK(C::SoftmaxOutput(T(0), C::Identity(), SoftmaxEmptyRow::kZeros) == T(0));
}

TEMPLATE_TEST_CASE("carriers special values: Welford", "[fast][carriers][special]", float, double) {
  using T = TestType;
  using C = Welford<T>;
  const T inf = V<T>::inf, nan = V<T>::nan;
  CheckScalarRow<C>("empty", {}, {nan, nan, nan});
  CheckScalarRow<C>("one element", {T(5)}, {T(5), T(0), nan});
  CheckScalarRow<C>("two elements, exact", {T(2), T(4)}, {T(3), T(1), T(2)});
  CheckNaNEverywhere<C>({nan, nan, nan});
  CheckScalarRow<C>("one +inf", {inf}, {inf, nan, nan});
  CheckScalarRow<C>("finite and +inf", {T(1), inf}, {inf, nan, nan});
  CheckScalarRow<C>("+inf among finite", {T(1), T(2), inf, T(3)}, {inf, nan, nan});
  CheckScalarRow<C>("+inf and -inf", {inf, -inf}, {nan, nan, nan});
  CheckScalarRow<C>("+inf, finite, -inf", {inf, T(1), -inf}, {nan, nan, nan});
  CheckScalarRow<C>("all -inf", {-inf, -inf, -inf}, {-inf, nan, nan});
  CheckScalarRow<C>("inf and NaN", {inf, nan}, {nan, nan, nan});
}

TEMPLATE_TEST_CASE("carriers special values: ScaledNorm2", "[fast][carriers][special]", float,
                   double) {
  using T = TestType;
  using C = ScaledNorm2<T>;
  const T inf = V<T>::inf, nan = V<T>::nan;
  CheckScalarRow<C>("empty", {}, {T(0)});
  CheckScalarRow<C>("zeros", {T(0), -T(0), T(0)}, {T(0)});
  CheckNaNEverywhere<C>({nan});
  CheckScalarRow<C>("inf then NaN", {inf, nan}, {nan});
  CheckScalarRow<C>("NaN then inf", {nan, T(1), -inf}, {nan});
  CheckScalarRow<C>("-inf", {T(1), -inf, T(2)}, {inf});
  CheckScalarRow<C>("two +inf", {inf, inf}, {inf});
  CheckScalarRow<C>("3-4-5, exact", {T(3), -T(4)}, {T(5)});
  CheckScalarRow<C>("max alone", {-V<T>::max, T(0)}, {V<T>::max});
}

TEMPLATE_TEST_CASE("carriers special values: Dot", "[fast][carriers][special]", float, double) {
  using T = TestType;
  using C = Dot<T>;
  using P = ValuePair<T>;
  const T inf = V<T>::inf, nan = V<T>::nan;
  auto show = [](const std::vector<P>& x) {
    std::ostringstream os;
    for (const auto& p : x) os << "(" << test::Exact(p.a) << "," << test::Exact(p.b) << ")";
    return os.str();
  };
  auto check = [&](const std::string& what, const std::vector<P>& x, T expected) {
    CheckRow<C>(what, x, show(x), {expected});
  };
  check("empty", {}, T(0));
  for (int k = 0; k < 4; ++k) {
    std::vector<P> x = {{T(1), T(2)}, {T(3), T(-1)}, {T(0.5), T(4)}, {T(2), T(2)}};
    (k % 2 ? x[k].a : x[k].b) = nan;
    check("NaN factor at position " + std::to_string(k), x, nan);
  }
  check("inf * 0", {{T(1), T(1)}, {inf, T(0)}}, nan);
  check("inf * 1", {{inf, T(1)}, {T(1), T(1)}}, inf);
  check("inf * -1", {{inf, T(-1)}, {T(2), T(3)}}, -inf);
  check("+inf and -inf products", {{inf, T(1)}, {T(-1), inf}}, nan);
  // Pads alone: Fold gives Identity's +0, a tree of lifts (-0) + (-0) = -0; both are the
  // empty sum's zero (Sum behaves the same way), so only the value is checked here.
  for (const auto& [path, s] : AllPaths<C>({C::PadInput(), C::PadInput()})) {
    INFO("pad only, path=" << path);
    REQUIRE(C::Finalize(s) == T(0));
  }
}

TEMPLATE_TEST_CASE("carriers special values: Affine", "[fast][carriers][special]", float, double) {
  using T = TestType;
  using C = Affine<T>;
  using P = ValuePair<T>;
  const T inf = V<T>::inf, nan = V<T>::nan;
  auto show = [](const std::vector<P>& x) {
    std::ostringstream os;
    for (const auto& p : x) os << "(" << test::Exact(p.a) << "," << test::Exact(p.b) << ")";
    return os.str();
  };
  // Components plus Apply(result, 1): the recurrence's last value from h0 = 1.
  auto check = [&](const std::string& what, const std::vector<P>& x, std::vector<T> expected,
                   T applied) {
    CheckRow<C>(what, x, show(x), expected);
    for (const auto& [path, s] : AllPaths<C>(x)) {
      INFO(what << " path=" << path << " inputs=" << show(x));
      REQUIRE(ScalarTraits<T>::BitEqual(C::Apply(C::Finalize(s), T(1)), applied));
    }
  };
  check("empty", {}, {T(1), T(0)}, T(1));
  for (int k = 0; k < 4; ++k) {
    std::vector<P> x = {{T(2), T(1)}, {T(0.5), T(-1)}, {T(3), T(0.25)}, {T(1), T(2)}};
    x[k].b = nan;
    check("NaN b at position " + std::to_string(k), x, {T(3), nan}, nan);
  }
  for (int k = 0; k < 4; ++k) {
    std::vector<P> x = {{T(2), T(1)}, {T(0.5), T(-1)}, {T(3), T(0.25)}, {T(1), T(2)}};
    x[k].a = nan;
    // b = sum_k (prod_{j>k} a_j) b_k does not contain a_0, so b stays 0.75 for k == 0.
    check("NaN a at position " + std::to_string(k), x, {nan, k == 0 ? T(0.75) : nan}, nan);
  }
  check("+inf slope", {{T(2), T(1)}, {inf, T(0)}, {T(1), T(1)}}, {inf, inf}, inf);
  check("+inf slope first", {{inf, T(1)}, {T(2), T(0)}, {T(1), T(1)}}, {inf, T(3)}, inf);
  check("-inf slope, NaN from inf * 0", {{T(0), T(1)}, {-inf, T(0)}, {T(0), T(1)}}, {nan, nan},
        nan);
  // Pads alone: the identity map; the zero's sign depends on the path, as for Dot.
  for (const auto& [path, s] : AllPaths<C>({C::PadInput(), C::PadInput()})) {
    INFO("pad only, path=" << path);
    REQUIRE(C::Finalize(s).a == T(1));
    REQUIRE(C::Finalize(s).b == T(0));
  }
}

template <class C>
void CheckFlashNaNColumn() {
  using T = typename C::Scalar;
  const T nan = V<T>::nan, inf = V<T>::inf;
  const T v0[3] = {T(1), T(2), T(3)};
  const T vnan[3] = {T(1), nan, T(2)};
  const T vinf[3] = {inf, T(1), T(2)};
  const T v2[3] = {T(-1), T(0.5), T(8)};
  std::vector<FlashInput<T>> x = {{T(1), v0}, {T(2), vnan}, {T(0.5), v2}};
  for (const auto& [path, s] : AllPaths<C>(x)) {
    auto r = C::Finalize(s);
    INFO("NaN in v at position 1, path=" << path);
    CHECK(std::isfinite(r.o[0]));
    CHECK(std::isnan(r.o[1]));
    CHECK(std::isfinite(r.o[2]));
  }
  std::vector<FlashInput<T>> y = {{T(1), v0}, {T(2), vinf}, {T(0.5), v2}};
  for (const auto& [path, s] : AllPaths<C>(y)) {
    auto r = C::Finalize(s);
    INFO("+inf in v at position 1, path=" << path);
    CHECK(r.o[0] == inf);
    CHECK(std::isfinite(r.o[1]));
    CHECK(std::isfinite(r.o[2]));
  }
}

TEMPLATE_TEST_CASE("carriers special values: FlashRow", "[fast][carriers][special]",
                   (FlashRow<float, 3, FlashVariant::kFA2>),
                   (FlashRow<double, 3, FlashVariant::kFA2>),
                   (FlashRow<float, 3, FlashVariant::kFA1>),
                   (FlashRow<double, 3, FlashVariant::kFA1>)) {
  using C = TestType;
  CheckFlashNaNColumn<C>();
  // Rows whose expected values are exact on every path.
  using T = typename C::Scalar;
  const T inf = V<T>::inf, nan = V<T>::nan;
  const T v0[3] = {T(1), T(2), T(3)};
  const T v1[3] = {T(3), T(4), T(5)};
  const T v2[3] = {T(-1), T(0.5), T(8)};
  const T vnan[3] = {T(1), nan, T(2)};
  using In = FlashInput<T>;
  auto both = [&](const std::string& what, const std::vector<In>& x, std::vector<T> by_default,
                  std::vector<T> with_zeros) {
    const std::string shown = "(" + std::to_string(x.size()) + " inputs)";
    CheckRow<C>(what + " [kNaN]", x, shown, by_default,
                [](const typename C::State& s) { return C::Finalize(s, SoftmaxEmptyRow::kNaN); });
    CheckRow<C>(what + " [kZeros]", x, shown, with_zeros,
                [](const typename C::State& s) { return C::Finalize(s, SoftmaxEmptyRow::kZeros); });
  };
  const std::vector<T> nans = {nan, nan, nan}, zeros = {T(0), T(0), T(0)};
  both("empty", {}, nans, zeros);
  both("all -inf (v not read)", {{-inf, nullptr}, {-inf, nullptr}, {-inf, nullptr}}, nans, zeros);
  for (int k = 0; k < 3; ++k) {
    std::vector<In> x = {{T(1), v0}, {T(2), v1}, {T(0.5), v2}};
    x[k].score = nan;
    both("NaN score at position " + std::to_string(k), x, nans, nans);
  }
  both("one score, -inf elsewhere (masked NaN v ignored)",
       {{-inf, nullptr}, {T(1.5), v2}, {-inf, vnan}}, {T(-1), T(0.5), T(8)}, {T(-1), T(0.5), T(8)});
  both("two +inf scores: the mean of their rows",
       {{T(1), v2}, {inf, v0}, {-inf, nullptr}, {inf, v1}}, {T(2), T(3), T(4)}, {T(2), T(3), T(4)});
  both("+inf and NaN scores", {{inf, v0}, {nan, v1}}, nans, nans);
}

}  // namespace
}  // namespace carrier
