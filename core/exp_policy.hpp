// core/exp_policy.hpp: the exponential and logarithm a carrier uses, as a template parameter.
//
// An ExpPolicy is a type with static Exp(T) and Log(T). core/ ships only LibmExp (the
// compute scalar's own exp/log found by argument-dependent lookup, std:: for builtin types, so
// EmulatedOracle and Mpfr scalars bring their own). The precision layer adds `portable` (identical
// bits on host and device) and `fast` (exp2 with log2(e) folded in). Which exp a result used
// changes its bits, so it is always part of the carrier's type, never implicit.
#pragma once

#include <cmath>

#include "core/platform.hpp"

namespace carrier {

struct LibmExp {
  static constexpr const char* kName = "libm";
  template <class T>
  CARRIER_HD static T Exp(T x) {
    using std::exp;
    return exp(x);
  }
  template <class T>
  CARRIER_HD static T Log(T x) {
    using std::log;
    return log(x);
  }
};

}  // namespace carrier
