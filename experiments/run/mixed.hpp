// experiments/run/mixed.hpp: two-level accumulation (acc "INNER>OUTER", ResolvedTrial::mixed):
// chains in INNER, combines in OUTER through core/replay_oracle.hpp's ReplayMixedChains +
// ReplayCombines (FABsum's shape), each phase under its own thread-local emulation format.
// registry::MixedOf<F> (register.hpp) builds an op's two-level replay from these.
#pragma once

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "core/hash.hpp"
#include "core/replay_oracle.hpp"
#include "precision/emulated_oracle.hpp"
#include "precision/mpfr_scalar.hpp"
#include "precision/scalars.hpp"
#include "run/trial.hpp"

namespace carrier::run {

using MixedEmu = EmulatedOracle<DynamicFormatTag, kDynamicRounding>;

// A state field from INNER to OUTER through double: exact for every INNER here (float, double
// and emulated values are doubles), then OUTER's constructor rounds once — exactly, since
// ResolveTrial admits only pairs where every INNER value is an OUTER value. (Mpfr has no
// constructor from an emulated value, hence the double in between.) Counts are copied.
struct ViaDouble {
  template <class To, class From>
  static To Cast(const From& v) {
    if constexpr (std::is_integral_v<To>) {
      return static_cast<To>(v);
    } else {
      return To(static_cast<double>(v));
    }
  }
};

// The second stochastic stream (OUTER's) of a trial with round = sr: a SplitMix64 step away
// from INNER's, so the two levels never reuse the same random bits.
inline std::uint64_t OuterSrSeed(std::uint64_t seed) { return SplitMix64(seed); }

// The chains in Ci under INNER's emulation scope (when Ci computes in an emulated format),
// then the combines in Co under OUTER's.
template <class Ci, class Co>
typename Co::Result MixedResult(const ResolvedTrial& t, const MergeTree& tree,
                                std::span<const double> a) {
  std::vector<typename Co::State> states;
  {
    std::optional<EmulationScope> scope;
    if constexpr (std::is_same_v<typename Ci::Scalar, MixedEmu>)
      scope.emplace(t.inner.format, t.rounding, t.spec.sr_seed);
    std::vector<typename Ci::Input> x;
    x.reserve(a.size());
    for (double v : a) x.push_back(typename Ci::Input(v));
    states = ReplayMixedChains<Ci, Co>(tree, std::span<const typename Ci::Input>(x),
                                       StateFieldCast<Ci, Co, ViaDouble>{});
  }
  std::optional<EmulationScope> scope;
  if constexpr (std::is_same_v<typename Co::Scalar, MixedEmu>)
    scope.emplace(t.compute.format, t.rounding, OuterSrSeed(t.spec.sr_seed));
  return Co::Finalize(ReplayCombines<Co>(tree, std::move(states)));
}

// Calls body.template operator()<Ti, To>() with the pair of compute scalars of a mixed trial
// (the pairs ResolveTrial admits; an MPFR outer level under its precision scope).
template <class Body>
auto WithMixedPair(const ResolvedTrial& t, Body&& body) {
  auto outer = [&]<class Ti>() {
    switch (t.compute.kind) {
      case ComputeKind::kFloat:
        if constexpr (!std::is_same_v<Ti, double>) return body.template operator()<Ti, float>();
        break;
      case ComputeKind::kDouble:
        return body.template operator()<Ti, double>();
      case ComputeKind::kEmulated:
        if constexpr (std::is_same_v<Ti, MixedEmu>)
          return body.template operator()<MixedEmu, MixedEmu>();
        break;
      case ComputeKind::kMpfr: {
        MpfrPrecisionScope scope(t.compute.mpfr_bits);
        return body.template operator()<Ti, Mpfr>();
      }
      case ComputeKind::kFloat128:  // refused by ResolveTrial (one level only)
        break;
    }
    throw SpecError("acc '" + t.compute.text + "': this pair of compute types is not built");
  };
  switch (t.inner.kind) {
    case ComputeKind::kFloat:
      return outer.template operator()<float>();
    case ComputeKind::kDouble:
      return outer.template operator()<double>();
    case ComputeKind::kEmulated:
      return outer.template operator()<MixedEmu>();
    case ComputeKind::kMpfr:
    case ComputeKind::kFloat128:
      break;
  }
  throw SpecError("acc '" + t.compute.text + "': the inner type cannot be mpfr");
}

}  // namespace carrier::run

#endif  // CARRIER_HAVE_MPFR
