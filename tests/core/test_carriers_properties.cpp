// Declared properties of every carrier in core/carriers: each `true` must hold bitwise on random
// reachable states (built by lifts, pushes, tile lifts and combines, with signed zeros, infs,
// NaNs, huge and tiny values mixed in) and on every pair of special states; each `false` must be
// witnessed by a counterexample, which the test prints. Also: every carrier satisfies the
// Carrier concept and keeps a trivially copyable State.
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <deque>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/carrier.hpp"
#include "core/carriers/all.hpp"
#include "support/test_support.hpp"

namespace carrier {
namespace {

using test::Rng;

// ---- The carriers under test -------------------------------------------------------------

using FlashF2 = FlashRow<float, 3, FlashVariant::kFA2>;
using FlashD2 = FlashRow<double, 3, FlashVariant::kFA2>;
using FlashF1 = FlashRow<float, 3, FlashVariant::kFA1>;
using FlashD1 = FlashRow<double, 3, FlashVariant::kFA1>;

#define CARRIERS_UNDER_TEST                                                                        \
  Compensated<float>, Compensated<double>, Max<float>, Max<double>, ArgMax<float>, ArgMax<double>, \
      OnlineSoftmax<float>, OnlineSoftmax<double>, Welford<float>, Welford<double>,                \
      ScaledNorm2<float>, ScaledNorm2<double>, Dot<float>, Dot<double>, Affine<float>,             \
      Affine<double>, FlashF2, FlashD2, FlashF1, FlashD1

template <class C>
constexpr bool CarrierOk() {
  if constexpr (!Carrier<C>) {
    return false;
  } else {
    constexpr bool pad_ok = !C::kHasPadInput || HasPadInput<C>;
    constexpr bool commutative_ok = !C::kBitwiseCommutative || C::kCommutative;
    return std::is_trivially_copyable_v<typename C::State> &&
           std::is_trivially_copyable_v<typename C::Input> && pad_ok && commutative_ok;
  }
}

template <class... C>
constexpr bool AllCarriersOk() {
  return (CarrierOk<C>() && ...);
}
static_assert(AllCarriersOk<Sum<float>, Sum<double>, CARRIERS_UNDER_TEST>(),
              "every carrier must satisfy carrier::Carrier, keep trivially copyable State and "
              "Input, provide PadInput when it declares one, and never claim bitwise "
              "commutativity without commutativity");
static_assert(HasPush<Compensated<float>> && HasPush<Welford<double>> &&
              HasTileLift<OnlineSoftmax<float>> && HasTileLift<Welford<float>> &&
              HasTileLift<FlashF2> && HasTileLift<FlashD1>);
static_assert(kComponentCount<ArgMax<float>> == 2 && kComponentCount<Welford<double>> == 3 &&
              kComponentCount<OnlineSoftmax<float>> == 1 && kComponentCount<FlashF2> == 3 &&
              kComponentCount<Affine<double>> == 2);

// ---- Printing ----------------------------------------------------------------------------

template <class F>
void AppendField(std::ostream& os, const F& f) {
  if constexpr (std::is_integral_v<F>) {
    os << f;
  } else if constexpr (std::is_array_v<F>) {
    os << "[";
    for (std::size_t i = 0; i < std::extent_v<F>; ++i) {
      if (i) os << " ";
      AppendField(os, f[i]);
    }
    os << "]";
  } else {
    os << test::Exact(static_cast<double>(f));
  }
}

template <class C>
std::string Show(const typename C::State& s) {
  std::ostringstream os;
  os << "(";
  std::apply(
      [&](const auto&... f) {
        int k = 0;
        ((os << (k++ ? ", " : ""), AppendField(os, f)), ...);
      },
      s.Tie());
  os << ")";
  return os.str();
}

using test::ScalarName;

template <class C>
std::string TypeName() {
  return std::string(C::kName) + "<" + ScalarName<typename C::Scalar>() + ">";
}

// ---- Inputs: every carrier's input is built from two scalars and an index ----------------

template <class T>
std::vector<T> SpecialScalars() {
  using L = std::numeric_limits<T>;
  return {
      T(0),           -T(0),    T(1),      T(-1),           T(2),    L::infinity(), -L::infinity(),
      L::quiet_NaN(), L::max(), -L::max(), L::denorm_min(), L::min()};
}

template <class T>
T RandomScalar(Rng& rng, bool special) {
  const std::uint64_t u = rng.Below(100);
  if (special && u < 6) {
    static const std::vector<T> s = SpecialScalars<T>();
    return s[rng.Below(s.size())];
  }
  if (u < 25) {
    // A small set, so ties (equal maxima, equal scales, equal scores) happen often.
    static const T small[] = {T(0), -T(0), T(1), T(-1), T(2), T(-2), T(0.5), T(3), T(0.75)};
    return small[rng.Below(9)];
  }
  if (u < 32) {
    const int e = static_cast<int>(rng.Below(101)) - 50;
    return static_cast<T>(std::ldexp(rng.Normal(), e));
  }
  return static_cast<T>(std::ldexp(rng.Normal(), static_cast<int>(rng.Below(9)) - 4));
}

template <class C>
struct Tag {};

template <class T>
T MakeInput(Tag<Compensated<T>>, T a, T, std::int64_t) {
  return a;
}
template <class T>
T MakeInput(Tag<Max<T>>, T a, T, std::int64_t) {
  return a;
}
template <class T>
IndexedValue<T> MakeInput(Tag<ArgMax<T>>, T a, T, std::int64_t i) {
  return {a, i};
}
template <class T, class E>
T MakeInput(Tag<OnlineSoftmax<T, E>>, T a, T, std::int64_t) {
  return a;
}
template <class T>
T MakeInput(Tag<Welford<T>>, T a, T, std::int64_t) {
  return a;
}
template <class T>
T MakeInput(Tag<ScaledNorm2<T>>, T a, T, std::int64_t) {
  return a;
}
template <class T>
ValuePair<T> MakeInput(Tag<Dot<T>>, T a, T b, std::int64_t) {
  return {a, b};
}
template <class T>
ValuePair<T> MakeInput(Tag<Affine<T>>, T a, T b, std::int64_t) {
  return {a, b};
}
template <class T, std::size_t Dv, FlashVariant V, class E>
FlashInput<T> MakeInput(Tag<FlashRow<T, Dv, V, E>>, T a, T b, std::int64_t i) {
  // v rows live in a deque, so the pointers stay valid for the whole test run. Each row mixes
  // the second scalar, -0 and a third value so that signed zeros reach o.
  static std::deque<std::array<T, Dv>> rows;
  std::array<T, Dv> row{};
  for (std::size_t j = 0; j < Dv; ++j)
    row[j] = j % 3 == 0 ? b : (j % 3 == 1 ? -T(0) : static_cast<T>(i % 5) - T(2));
  rows.push_back(row);
  return {a, rows.back().data()};
}

template <class C>
typename C::Input Draw(Rng& rng, bool special) {
  using T = typename C::Scalar;
  T a = RandomScalar<T>(rng, special);
  T b = RandomScalar<T>(rng, special);
  return MakeInput(Tag<C>{}, a, b, static_cast<std::int64_t>(rng.Below(8)));
}

// ---- Reachable states --------------------------------------------------------------------

template <class C>
typename C::State RandomState(Rng& rng, bool special, int depth = 3) {
  const std::uint64_t kind = rng.Below(depth > 0 ? 8 : 5);
  std::vector<typename C::Input> x(1 + rng.Below(12));
  for (auto& xi : x) xi = Draw<C>(rng, special);
  switch (kind) {
    case 0:
      return C::Identity();
    case 1:
      return C::Lift(x[0]);
    case 2:
    case 3:
      return Fold<C>(x.data(), x.size());
    case 4:
      if constexpr (HasTileLift<C>) return C::LiftTile(x.data(), x.size());
      return Fold<C>(x.data(), x.size());
    default: {
      auto a = RandomState<C>(rng, special, depth - 1);
      auto b = RandomState<C>(rng, special, depth - 1);
      return C::Combine(a, b);
    }
  }
}

// Identity, the lifts of every pair of special scalars, and a few folds of two of them.
template <class C>
std::vector<typename C::State> SpecialStates() {
  using T = typename C::Scalar;
  std::vector<typename C::State> out{C::Identity()};
  const auto s = SpecialScalars<T>();
  std::vector<typename C::Input> lifted;
  for (std::size_t i = 0; i < s.size(); ++i)
    for (std::size_t j = 0; j < s.size(); j += 3) {
      lifted.push_back(MakeInput(Tag<C>{}, s[i], s[j], static_cast<std::int64_t>(i)));
      out.push_back(C::Lift(lifted.back()));
    }
  for (std::size_t i = 0; i + 1 < lifted.size(); i += 5) {
    typename C::Input two[2] = {lifted[i], lifted[lifted.size() - 1 - i]};
    out.push_back(Fold<C>(two, 2));
  }
  return out;
}

constexpr std::uint64_t kSeed = 0x5eed'ca22'1e25ULL;

// ---- Properties --------------------------------------------------------------------------

TEMPLATE_TEST_CASE("carriers: bitwise commutativity holds or is witnessed", "[fast][carriers]",
                   CARRIERS_UNDER_TEST) {
  using C = TestType;
  Rng rng(kSeed);
  const int trials = test::Trials(3000);
  if constexpr (C::kBitwiseCommutative) {
    int checked = 0;
    for (int t = 0; t < trials; ++t) {
      const bool special = t % 2 == 1;
      auto a = RandomState<C>(rng, special);
      auto b = RandomState<C>(rng, special);
      auto ab = C::Combine(a, b), ba = C::Combine(b, a);
      INFO("seed=" << kSeed << " trial=" << t << " types=" << TypeName<C>() << " a=" << Show<C>(a)
                   << " b=" << Show<C>(b) << " ab=" << Show<C>(ab) << " ba=" << Show<C>(ba));
      REQUIRE(StatesBitEqual<C>(ab, ba));
      ++checked;
    }
    const auto sp = SpecialStates<C>();
    for (const auto& a : sp)
      for (const auto& b : sp) {
        auto ab = C::Combine(a, b), ba = C::Combine(b, a);
        INFO("special states, types=" << TypeName<C>() << " a=" << Show<C>(a)
                                      << " b=" << Show<C>(b));
        REQUIRE(StatesBitEqual<C>(ab, ba));
        ++checked;
      }
    std::cout << TypeName<C>() << ": Combine(a,b) == Combine(b,a) bitwise on " << checked
              << " pairs (" << sp.size() << " special states)\n";
  } else {
    bool found = false;
    for (int t = 0; t < 100000 && !found; ++t) {
      auto a = RandomState<C>(rng, false);
      auto b = RandomState<C>(rng, false);
      auto ab = C::Combine(a, b), ba = C::Combine(b, a);
      if (!StatesBitEqual<C>(ab, ba)) {
        found = true;
        std::cout << TypeName<C>() << ": not bitwise commutative, witness (seed=" << kSeed
                  << ", trial " << t << "): a=" << Show<C>(a) << " b=" << Show<C>(b)
                  << " Combine(a,b)=" << Show<C>(ab) << " Combine(b,a)=" << Show<C>(ba) << "\n";
      }
    }
    INFO("seed=" << kSeed << " types=" << TypeName<C>());
    REQUIRE(found);
  }
}

// Exact-arithmetic commutativity: a `false` needs results that differ by more than rounding;
// a `true` without bitwise commutativity (Welford) needs results within rounding.
TEMPLATE_TEST_CASE("carriers: commutativity in exact arithmetic holds or is witnessed",
                   "[fast][carriers]", CARRIERS_UNDER_TEST) {
  using C = TestType;
  using T = typename C::Scalar;
  const T u = std::numeric_limits<T>::epsilon() / 2;
  Rng rng(kSeed + 1);
  if constexpr (!C::kCommutative) {
    bool found = false;
    for (int t = 0; t < 100000 && !found; ++t) {
      auto a = RandomState<C>(rng, false);
      auto b = RandomState<C>(rng, false);
      auto ra = C::Components(C::Finalize(C::Combine(a, b)));
      auto rb = C::Components(C::Finalize(C::Combine(b, a)));
      for (std::size_t k = 0; k < ra.size() && !found; ++k) {
        const T diff = std::fabs(ra[k] - rb[k]);
        const T scale = std::fmax(std::fabs(ra[k]), std::fabs(rb[k]));
        if (std::isfinite(diff) && diff > T(1e-3) * scale) {
          found = true;
          std::cout << TypeName<C>() << ": not commutative, witness (seed=" << kSeed + 1
                    << ", trial " << t << "): a=" << Show<C>(a) << " b=" << Show<C>(b)
                    << " component " << k << ": " << test::Exact(ra[k]) << " vs "
                    << test::Exact(rb[k]) << "\n";
        }
      }
    }
    INFO("seed=" << kSeed + 1 << " types=" << TypeName<C>());
    REQUIRE(found);
  } else if constexpr (!C::kBitwiseCommutative) {
    // Welford: m2 and n commute bitwise; the means differ by at most a few roundings of the
    // operands' means.
    static_assert(std::is_same_v<C, Welford<T>>, "extend this check for a new carrier");
    const int trials = test::Trials(3000);
    double worst = 0;
    for (int t = 0; t < trials; ++t) {
      auto a = RandomState<C>(rng, false);
      auto b = RandomState<C>(rng, false);
      auto ab = C::Combine(a, b), ba = C::Combine(b, a);
      INFO("seed=" << kSeed + 1 << " trial=" << t << " types=" << TypeName<C>()
                   << " a=" << Show<C>(a) << " b=" << Show<C>(b) << " ab=" << Show<C>(ab)
                   << " ba=" << Show<C>(ba));
      REQUIRE(ab.n == ba.n);
      REQUIRE(ScalarTraits<T>::BitEqual(ab.m2, ba.m2));
      if (!std::isfinite(ab.mean) || !std::isfinite(ba.mean)) {
        REQUIRE(ScalarTraits<T>::BitEqual(ab.mean, ba.mean));
        continue;
      }
      const T scale = std::fabs(a.mean) + std::fabs(b.mean);
      const T diff = std::fabs(ab.mean - ba.mean);
      if (scale > 0) worst = std::max(worst, double(diff / (u * scale)));
      REQUIRE(diff <= T(4) * u * scale);
    }
    std::cout << TypeName<C>() << ": Combine(a,b) and Combine(b,a) means within " << worst
              << " u (|a.mean| + |b.mean|) on " << trials << " pairs (bound 4), n and m2 equal\n";
  } else {
    SUCCEED(TypeName<C>() << ": commutativity follows from the bitwise test");
  }
}

TEMPLATE_TEST_CASE("carriers: Push is Combine(s, Lift(x)) or a witness is found",
                   "[fast][carriers]", CARRIERS_UNDER_TEST) {
  using C = TestType;
  Rng rng(kSeed + 2);
  const int trials = test::Trials(3000);
  if constexpr (C::kPushIsCombineLift) {
    int checked = 0;
    for (int t = 0; t < trials; ++t) {
      const bool special = t % 2 == 1;
      auto s = RandomState<C>(rng, special);
      auto x = Draw<C>(rng, special);
      auto pushed = PushOne<C>(s, x);
      auto combined = C::Combine(s, C::Lift(x));
      INFO("seed=" << kSeed + 2 << " trial=" << t << " types=" << TypeName<C>()
                   << " s=" << Show<C>(s) << " Lift(x)=" << Show<C>(C::Lift(x))
                   << " push=" << Show<C>(pushed) << " combine=" << Show<C>(combined));
      REQUIRE(StatesBitEqual<C>(pushed, combined));
      ++checked;
    }
    const auto sp = SpecialStates<C>();
    const auto scalars = SpecialScalars<typename C::Scalar>();
    for (const auto& s : sp)
      for (std::size_t i = 0; i < scalars.size(); ++i)
        for (std::size_t j = 0; j < scalars.size(); j += 4) {
          auto x = MakeInput(Tag<C>{}, scalars[i], scalars[j], 7);
          auto pushed = PushOne<C>(s, x);
          auto combined = C::Combine(s, C::Lift(x));
          INFO("special, types=" << TypeName<C>() << " s=" << Show<C>(s)
                                 << " Lift(x)=" << Show<C>(C::Lift(x)));
          REQUIRE(StatesBitEqual<C>(pushed, combined));
          ++checked;
        }
    std::cout << TypeName<C>() << ": Push(s,x) == Combine(s,Lift(x)) bitwise on " << checked
              << " cases\n";
  } else {
    bool found = false;
    for (int t = 0; t < 100000 && !found; ++t) {
      auto s = RandomState<C>(rng, false);
      auto x = Draw<C>(rng, false);
      auto pushed = PushOne<C>(s, x);
      auto combined = C::Combine(s, C::Lift(x));
      if (!StatesBitEqual<C>(pushed, combined)) {
        found = true;
        std::cout << TypeName<C>()
                  << ": Push differs from Combine(s, Lift(x)), witness (seed=" << kSeed + 2
                  << ", trial " << t << "): s=" << Show<C>(s) << " Lift(x)=" << Show<C>(C::Lift(x))
                  << " push=" << Show<C>(pushed) << " combine=" << Show<C>(combined) << "\n";
      }
    }
    INFO("seed=" << kSeed + 2 << " types=" << TypeName<C>());
    REQUIRE(found);
  }
}

TEMPLATE_TEST_CASE("carriers: the pad input is a bitwise no-op or a witness is found",
                   "[fast][carriers]", CARRIERS_UNDER_TEST) {
  using C = TestType;
  using T = typename C::Scalar;
  Rng rng(kSeed + 3);
  if constexpr (C::kHasPadInput) {
    const int trials = test::Trials(3000);
    const auto pad = C::PadInput();
    int checked = 0;
    auto check = [&](const typename C::State& s, int t) {
      auto padded = PushOne<C>(s, pad);
      INFO("seed=" << kSeed + 3 << " trial=" << t << " types=" << TypeName<C>()
                   << " s=" << Show<C>(s) << " Push(s, pad)=" << Show<C>(padded));
      REQUIRE(StatesBitEqual<C>(padded, s));
      ++checked;
    };
    for (int t = 0; t < trials; ++t) check(RandomState<C>(rng, t % 2 == 1), t);
    for (const auto& s : SpecialStates<C>()) check(s, -1);
    std::cout << TypeName<C>() << ": Push(s, PadInput()) == s bitwise on " << checked
              << " states\n";
  } else if constexpr (std::is_same_v<C, Welford<T>>) {
    // No input leaves n unchanged, so no pad can exist.
    auto s = RandomState<C>(rng, false);
    auto x = Draw<C>(rng, false);
    INFO("types=" << TypeName<C>() << " s=" << Show<C>(s));
    REQUIRE(PushOne<C>(s, x).n == s.n + 1);
    std::cout << TypeName<C>() << ": no pad input, every push increments n (" << s.n << " -> "
              << PushOne<C>(s, x).n << ")\n";
  } else {
    // FlashRow: the only candidate is a masked position (score -inf); find a state it changes.
    bool found = false;
    const T unread[C::kDv] = {};
    const typename C::Input masked{-std::numeric_limits<T>::infinity(), unread};
    for (int t = 0; t < 100000 && !found; ++t) {
      auto s = RandomState<C>(rng, false);
      auto padded = PushOne<C>(s, masked);
      if (!StatesBitEqual<C>(padded, s)) {
        found = true;
        std::cout << TypeName<C>() << ": a masked input is not a no-op, witness (seed=" << kSeed + 3
                  << ", trial " << t << "): s=" << Show<C>(s)
                  << " Push(s, masked)=" << Show<C>(padded) << "\n";
      }
    }
    INFO("seed=" << kSeed + 3 << " types=" << TypeName<C>());
    REQUIRE(found);
  }
}

// Signed zeros spelled out where the contracts promise a particular sign.
TEST_CASE("carriers: signed zeros", "[fast][carriers]") {
  const double p = 0.0, n = -0.0;
  CHECK_FALSE(std::signbit(Max<double>::Finalize(Max<double>::Combine({p}, {n}))));
  CHECK_FALSE(std::signbit(Max<double>::Finalize(Max<double>::Combine({n}, {p}))));
  CHECK(std::signbit(Max<double>::Finalize(Max<double>::Combine({n}, {n}))));
  // ArgMax: +0 and -0 tie, the earlier one stays.
  auto am = ArgMax<float>::Combine({-0.0f, 0}, {0.0f, 1});
  CHECK(am.index == 0);
  CHECK(std::signbit(am.value));
  // OnlineSoftmax: the max of +0 and -0 is +0 in both orders.
  using S = OnlineSoftmax<double>;
  CHECK_FALSE(std::signbit(S::Combine(S::Lift(p), S::Lift(n)).m));
  CHECK_FALSE(std::signbit(S::Combine(S::Lift(n), S::Lift(p)).m));
  CHECK(S::Combine(S::Lift(n), S::Lift(p)).d == 2.0);
  // Compensated: the error term stays +0 on -0 inputs, so Push(-0) is a no-op.
  using K = Compensated<double>;
  auto k = K::Push(K::Lift(n), n);
  CHECK(std::signbit(k.s));
  CHECK_FALSE(std::signbit(k.c));
  // Dot and Sum-like pads keep -0 sums.
  using Dd = Dot<double>;
  CHECK(std::signbit(Dd::Push({n}, Dd::PadInput()).s));
}

}  // namespace
}  // namespace carrier
