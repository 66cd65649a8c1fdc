// experiments/registry/register.hpp: CARRIER_REGISTER and CARRIER_REGISTER_DERIVABLE, which turn
// a carrier template into a registry Entry (registry.hpp). Include it from the one .cpp that
// registers a user carrier (experiments/user_carriers/*.cpp); it pulls in the laws and derive
// machinery, so it is not for headers.
//
//   CARRIER_REGISTER("range", Range, "running (min, max); result max - min");
//   CARRIER_REGISTER_DERIVABLE("range", Range, RangeDerivation, "...");
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "core/carrier.hpp"
#include "core/replay.hpp"
#include "registry/registry.hpp"
#include "verbs/derive_run.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
#include "precision/emulated.hpp"
#include "precision/mpfr_scalar.hpp"
#include "precision/scalars.hpp"
#include "verbs/laws_run.hpp"
#endif

namespace carrier::registry {

// carrier derive needs no MPFR (it runs in fp64).
template <class D>
int DeriveOf(std::uint64_t trials, std::uint64_t seed) {
  return cli::derive::RunOne<D>(trials, seed);
}

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

template <template <class> class CT>
int LawsOf(const cli::laws::Options& o) {
  return cli::laws::RunLawsFor<CT>(o, cli::laws::OpTraits{});
}

template <template <class> class CT, class T>
std::vector<long double> ReplayAs(const MergeTree& tree, std::span<const double> a) {
  using C = CT<T>;
  static_assert(std::is_same_v<typename C::Input, T>,
                "a registered carrier takes one column of scalars (Input = T)");
  std::vector<T> x;
  x.reserve(a.size());
  for (double v : a) x.push_back(static_cast<T>(v));
  const auto c = C::Components(C::Finalize(Replay<C>(tree, std::span<const T>(x))));
  std::vector<long double> out;
  for (const auto& v : c) out.push_back(static_cast<long double>(v));
  return out;
}

template <template <class> class CT>
std::vector<long double> ReplayOf(ScalarKind k, const MergeTree& tree, std::span<const double> a) {
  switch (k) {
    case ScalarKind::kFloat:
      return ReplayAs<CT, float>(tree, a);
    case ScalarKind::kDouble:
      return ReplayAs<CT, double>(tree, a);
    case ScalarKind::kEmulated:
      return ReplayAs<CT, Emulated<DynamicFormatTag, kDynamicRounding>>(tree, a);
    case ScalarKind::kMpfr:
      break;
  }
  return ReplayAs<CT, Mpfr>(tree, a);
}

// CT<Mpfr>'s sequential fold of the inputs at `bits`, per component (values keep `bits`).
template <template <class> class CT>
std::vector<Mpfr> MpfrComponents(std::span<const double> a, long bits) {
  using C = CT<Mpfr>;
  MpfrPrecisionScope scope(bits);
  std::vector<Mpfr> x;
  for (double v : a) x.push_back(Mpfr(v));
  const auto c = C::Components(C::Finalize(Fold<C>(x.data(), x.size())));
  return std::vector<Mpfr>(c.begin(), c.end());
}

// Agreement of two MPFR values to 2^-100 relative (specials: the same special).
inline bool AgreeTo2m100(const Mpfr& lo, const Mpfr& hi, long bits) {
  using S = ScalarTraits<Mpfr>;
  if (S::IsNaN(lo) || S::IsNaN(hi)) return S::IsNaN(lo) && S::IsNaN(hi);
  if (S::IsInf(lo) || S::IsInf(hi)) return lo == hi;
  MpfrPrecisionScope scope(bits);
  const Mpfr diff = abs(hi - lo);
  const Mpfr tol = abs(hi) * Mpfr(0x1p-100);
  return diff <= tol;  // hi == 0: only an exact zero agrees
}

// The reference of registry.hpp: p and 2p bits, p = 128 doubling to the cap.
template <template <class> class CT>
CarrierReference ReferenceOf(std::span<const double> a) {
  CarrierReference r;
  for (long p = kMpfrStartBits; 2 * p <= kMpfrCapBits; p *= 2) {
    const auto lo = MpfrComponents<CT>(a, p);
    const auto hi = MpfrComponents<CT>(a, 2 * p);
    bool agree = true;
    for (std::size_t i = 0; i < lo.size(); ++i) agree = agree && AgreeTo2m100(lo[i], hi[i], 4 * p);
    r.as_double.clear();
    r.as_long_double.clear();
    for (const auto& v : hi) {
      r.as_double.push_back(static_cast<double>(v));
      r.as_long_double.push_back(static_cast<long double>(v));
    }
    r.precision_bits = p;
    if (agree) {
      r.certified = true;
      return r;
    }
  }
  r.note = "the carrier in MPFR did not settle to 2^-100 relative between " +
           std::to_string(kMpfrCapBits / 2) + " and " + std::to_string(kMpfrCapBits) + " bits";
  return r;
}

template <template <class> class CT>
Entry MakeEntry(const char* name, const char* summary) {
  Entry e;
  e.name = name;
  e.summary = summary;
  e.commutative = CT<double>::kCommutative;
  e.components = kComponentCount<CT<double>>;
  e.laws = &LawsOf<CT>;
  e.replay = &ReplayOf<CT>;
  e.reference = &ReferenceOf<CT>;
  return e;
}

template <template <class> class CT, class D>
Entry MakeEntry(const char* name, const char* summary) {
  Entry e = MakeEntry<CT>(name, summary);
  e.derive = &DeriveOf<D>;
  return e;
}

#else  // no MPFR: laws and eval refuse to run (as for built-in ops); derive still works.

template <template <class> class CT>
Entry MakeEntry(const char* name, const char* summary) {
  Entry e;
  e.name = name;
  e.summary = summary;
  e.commutative = CT<double>::kCommutative;
  e.components = kComponentCount<CT<double>>;
  return e;
}
template <template <class> class CT, class D>
Entry MakeEntry(const char* name, const char* summary) {
  Entry e = MakeEntry<CT>(name, summary);
  e.derive = &DeriveOf<D>;
  return e;
}

#endif

}  // namespace carrier::registry

#define CARRIER_REGISTRY_CAT2(a, b) a##b
#define CARRIER_REGISTRY_CAT(a, b) CARRIER_REGISTRY_CAT2(a, b)

// Registers the carrier template CT under NAME (a string literal) with a one-line SUMMARY.
#define CARRIER_REGISTER(NAME, CT, SUMMARY)                                          \
  namespace {                                                                        \
  [[maybe_unused]] const bool CARRIER_REGISTRY_CAT(carrier_registered_, __LINE__) = \
      ::carrier::registry::Register(::carrier::registry::MakeEntry<CT>(NAME, SUMMARY)); \
  }

// The same, with a Third Homomorphism Theorem derivation D for `carrier derive NAME`.
#define CARRIER_REGISTER_DERIVABLE(NAME, CT, D, SUMMARY)                             \
  namespace {                                                                        \
  [[maybe_unused]] const bool CARRIER_REGISTRY_CAT(carrier_registered_, __LINE__) = \
      ::carrier::registry::Register(::carrier::registry::MakeEntry<CT, D>(NAME, SUMMARY)); \
  }
