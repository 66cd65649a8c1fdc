// core/derivations/common.hpp: CarrierDerivation<C>, the parts of a Third Homomorphism Theorem
// derivation (core/derive.hpp) that every carrier shares: h = the carrier's sequential fold,
// the leftward step = Push, the rightward step = Combine(Lift(x), s), the hand-written combine
// = C::Combine, the distance = the carrier's relative difference of finalized results. A
// worked derivation adds Inverse (h°), RandomList and DescribeInput.
#pragma once

#include <random>
#include <sstream>
#include <string>

#include "core/carrier.hpp"
#include "core/laws.hpp"

namespace carrier {

template <Carrier C>
struct CarrierDerivation {
  using Input = typename C::Input;
  using State = typename C::State;
  static State Empty() { return C::Identity(); }
  static State PushBack(const State& s, const Input& x) { return PushOne<C>(s, x); }
  static State PushFront(const Input& x, const State& s) { return C::Combine(C::Lift(x), s); }
  static State Combine(const State& a, const State& b) { return C::Combine(a, b); }
  static long double Distance(const State& a, const State& b) {
    return RelativeDifference<C>(C::Finalize(a), C::Finalize(b));
  }
  static std::string Describe(const State& s) { return DescribeState<C>(s); }
  // The finalized result's components in decimal: "the answer" of h.
  static std::string Answer(const State& s) {
    std::ostringstream os;
    os.precision(17);
    const auto c = C::Components(C::Finalize(s));
    for (std::size_t i = 0; i < c.size(); ++i) os << (i ? ", " : "") << static_cast<double>(c[i]);
    return os.str();
  }
};

inline std::string DescribeDouble(double x) {
  std::ostringstream os;
  os.precision(17);
  os << x;
  return os.str();
}

}  // namespace carrier
