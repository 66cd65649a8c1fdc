// core/laws.hpp: the algebraic laws of a carrier as library functions.
//
// Tests use them now and `carrier laws` later. Each returns a LawReport: how many cases were
// checked, how many violated the law, the largest relative difference seen (for laws that
// floating point only keeps approximately), and the first counterexample as printable text.
//
//   CheckIdentity            Combine(Identity, s) and Combine(s, Identity) are s, bitwise
//   CheckBitwiseCommutative  Combine(a, b) and Combine(b, a) have identical bits
//   CheckPushIsCombineLift   Push(s, x) has the bits of Combine(s, Lift(x))
//   CheckPadInput            Push(s, PadInput()) is s, bitwise
//   CheckHomomorphism        h(x ++ y) against Combine(h(x), h(y)) at given split points,
//                            h = the sequential fold; bitwise mismatches are counted and the
//                            relative difference of the results measured
//   ScheduleSpread           one input through several schedules: each result and the largest
//                            relative difference between any two
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "core/carrier.hpp"
#include "core/replay_oracle.hpp"

namespace carrier {

struct LawReport {
  std::string law;
  std::uint64_t checked = 0;
  std::uint64_t violations = 0;
  long double max_rel_diff = 0;
  std::string counterexample;
  bool Holds() const { return violations == 0; }
};

namespace law_detail {

template <class F>
void PrintField(std::ostream& os, const F& f) {
  if constexpr (std::is_integral_v<F>) {
    os << f;
  } else if constexpr (std::is_array_v<F>) {
    os << "[";
    for (std::size_t i = 0; i < std::extent_v<F>; ++i) {
      if (i) os << ", ";
      if (i == 8 && std::extent_v < F >> 9) {
        os << "... (" << std::extent_v<F> << " values)";
        break;
      }
      PrintField(os, f[i]);
    }
    os << "]";
  } else {
    os << std::hexfloat << static_cast<double>(f) << std::defaultfloat;
  }
}

}  // namespace law_detail

// "(f0, f1, ...)" with scalars as hex floats: exact, so a counterexample can be re-entered.
template <Carrier C>
std::string DescribeState(const typename C::State& s) {
  std::ostringstream os;
  os << "(";
  bool first = true;
  std::apply(
      [&](const auto&... f) {
        ((os << (first ? "" : ", "), law_detail::PrintField(os, f), first = false), ...);
      },
      s.Tie());
  os << ")";
  return os.str();
}

// Largest over components of |a - b| / max(|a|, |b|); 0 when both are 0 or both NaN, +inf when
// exactly one is NaN or the infinities differ.
template <Carrier C>
long double RelativeDifference(const typename C::Result& a, const typename C::Result& b) {
  auto ca = C::Components(a);
  auto cb = C::Components(b);
  long double worst = 0;
  for (std::size_t i = 0; i < ca.size(); ++i) {
    const long double x = static_cast<long double>(ca[i]);
    const long double y = static_cast<long double>(cb[i]);
    long double d;
    if (std::isnan(x) || std::isnan(y)) {
      d = (std::isnan(x) && std::isnan(y)) ? 0 : INFINITY;
    } else if (std::isinf(x) || std::isinf(y)) {
      d = x == y ? 0 : INFINITY;
    } else {
      const long double scale = std::max(std::fabs(x), std::fabs(y));
      d = scale == 0 ? 0 : std::fabs(x - y) / scale;
    }
    worst = std::max(worst, d);
  }
  return worst;
}

template <Carrier C>
bool ResultsBitEqual(const typename C::Result& a, const typename C::Result& b) {
  auto ca = C::Components(a);
  auto cb = C::Components(b);
  for (std::size_t i = 0; i < ca.size(); ++i)
    if (!FieldBitEqual(ca[i], cb[i])) return false;
  return true;
}

template <Carrier C>
LawReport CheckIdentity(std::span<const typename C::State> states) {
  LawReport r;
  r.law = "identity";
  for (const auto& s : states) {
    for (int side = 0; side < 2; ++side) {
      auto got = side == 0 ? C::Combine(C::Identity(), s) : C::Combine(s, C::Identity());
      ++r.checked;
      if (!StatesBitEqual<C>(got, s)) {
        if (r.violations++ == 0)
          r.counterexample =
              std::string(side == 0 ? "Combine(Identity, s)" : "Combine(s, Identity)") + " = " +
              DescribeState<C>(got) + " but s = " + DescribeState<C>(s);
      }
    }
  }
  return r;
}

// Checks every ordered pair (states[i], states[i + 1]).
template <Carrier C>
LawReport CheckBitwiseCommutative(std::span<const typename C::State> states) {
  LawReport r;
  r.law = "bitwise commutativity";
  for (std::size_t i = 0; i + 1 < states.size(); ++i) {
    const auto& a = states[i];
    const auto& b = states[i + 1];
    auto ab = C::Combine(a, b);
    auto ba = C::Combine(b, a);
    ++r.checked;
    r.max_rel_diff =
        std::max(r.max_rel_diff, RelativeDifference<C>(C::Finalize(ab), C::Finalize(ba)));
    if (!StatesBitEqual<C>(ab, ba) && r.violations++ == 0)
      r.counterexample = "a = " + DescribeState<C>(a) + ", b = " + DescribeState<C>(b) +
                         ": Combine(a, b) = " + DescribeState<C>(ab) +
                         ", Combine(b, a) = " + DescribeState<C>(ba);
  }
  return r;
}

template <Carrier C>
LawReport CheckPushIsCombineLift(std::span<const typename C::State> states,
                                 std::span<const typename C::Input> inputs) {
  LawReport r;
  r.law = "push == combine(lift)";
  for (std::size_t i = 0; i < states.size() && i < inputs.size(); ++i) {
    auto pushed = PushOne<C>(states[i], inputs[i]);
    auto combined = C::Combine(states[i], C::Lift(inputs[i]));
    ++r.checked;
    r.max_rel_diff =
        std::max(r.max_rel_diff, RelativeDifference<C>(C::Finalize(pushed), C::Finalize(combined)));
    if (!StatesBitEqual<C>(pushed, combined) && r.violations++ == 0)
      r.counterexample = "s = " + DescribeState<C>(states[i]) + ", input " + std::to_string(i) +
                         ": Push = " + DescribeState<C>(pushed) +
                         ", Combine(s, Lift(x)) = " + DescribeState<C>(combined);
  }
  return r;
}

template <Carrier C>
LawReport CheckPadInput(std::span<const typename C::State> states) {
  LawReport r;
  r.law = "pad input is a no-op";
  if constexpr (HasPadInput<C>) {
    for (const auto& s : states) {
      auto got = PushOne<C>(s, C::PadInput());
      ++r.checked;
      if (!StatesBitEqual<C>(got, s) && r.violations++ == 0)
        r.counterexample =
            "s = " + DescribeState<C>(s) + ": Push(s, pad) = " + DescribeState<C>(got);
    }
  }
  return r;
}

template <Carrier C>
LawReport CheckHomomorphism(std::span<const typename C::Input> x,
                            std::span<const std::size_t> splits) {
  LawReport r;
  r.law = "homomorphism";
  const auto whole = C::Finalize(Fold<C>(x.data(), x.size()));
  for (std::size_t k : splits) {
    if (k > x.size()) continue;
    auto merged =
        C::Finalize(C::Combine(Fold<C>(x.data(), k), Fold<C>(x.data() + k, x.size() - k)));
    ++r.checked;
    r.max_rel_diff = std::max(r.max_rel_diff, RelativeDifference<C>(whole, merged));
    if (!ResultsBitEqual<C>(whole, merged) && r.violations++ == 0) {
      std::ostringstream os;
      os << "split at " << k << " of " << x.size() << ": relative difference "
         << static_cast<double>(RelativeDifference<C>(whole, merged));
      r.counterexample = os.str();
    }
  }
  return r;
}

template <Carrier C>
struct SpreadReport {
  std::vector<std::string> schedules;
  std::vector<typename C::Result> results;
  long double max_rel_diff = 0;
  bool all_bit_equal = true;
};

template <Carrier C>
SpreadReport<C> ScheduleSpread(std::span<const typename C::Input> x,
                               std::span<const Schedule> schedules) {
  SpreadReport<C> rep;
  for (const Schedule& s : schedules) {
    rep.schedules.push_back(ToString(s));
    rep.results.push_back(ReplayOracleResult<C>(s, x));
  }
  for (std::size_t i = 0; i < rep.results.size(); ++i)
    for (std::size_t j = i + 1; j < rep.results.size(); ++j) {
      rep.max_rel_diff =
          std::max(rep.max_rel_diff, RelativeDifference<C>(rep.results[i], rep.results[j]));
      rep.all_bit_equal = rep.all_bit_equal && ResultsBitEqual<C>(rep.results[i], rep.results[j]);
    }
  return rep;
}

}  // namespace carrier
