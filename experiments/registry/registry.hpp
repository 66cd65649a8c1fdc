// experiments/registry/registry.hpp: user-defined carriers, by name, for `carrier laws`,
// `carrier derive` and `carrier eval` (experiments/user_carriers/README.md says how to add one).
//
// Contract of a registered carrier: a template CT<T> such that CT<T> is a core Carrier
// (core/carrier.hpp: State with Tie(), Identity, Lift, Combine, Finalize, Components, kName
// and the four declared properties) for T = float, double, the emulated formats and Mpfr, with
// Input = T (one column of scalars) and only ScalarTraits / the scalar's operators used inside.
// Optionally a Third Homomorphism Theorem derivation D (core/derive.hpp; usually
// CarrierDerivation<CT<double>> plus Inverse, RandomList, DescribeInput).
//
// What each verb does with an entry (when NAME is not a built-in op):
//   carrier laws NAME    RunLawsFor<CT> (experiments/verbs/laws_run.hpp): the full table, every
//                        declaration compared with the measurement; exit 0 / 1.
//   carrier derive NAME  RunOne<D> (experiments/verbs/derive_run.hpp) when a derivation was
//                        registered; otherwise exit 2 saying none was.
//   carrier eval --op NAME  replays CT<compute type> over the schedule's tree on the stored
//                        one-column input; the reference is CT<Mpfr> folded at p and 2p bits
//                        (p = 128, doubling up to kMpfrCapBits), certified when the two agree
//                        to 2^-100 relative per component (reference_tier "mpfr-carrier"); no
//                        a-priori bound (a registered carrier declares none).
// Entries are created by CARRIER_REGISTER / CARRIER_REGISTER_DERIVABLE (register.hpp) in a
// source compiled into the executable itself (static registration objects in a static library
// may be dropped by the linker).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace carrier {
struct MergeTree;
namespace cli::laws {
struct Options;
}
}  // namespace carrier

namespace carrier::registry {

// The compute type of a replay; the caller holds the EmulationScope / MpfrPrecisionScope.
enum class ScalarKind { kFloat, kDouble, kEmulated, kMpfr };

inline constexpr long kMpfrStartBits = 128;
inline constexpr long kMpfrCapBits = 4096;

// The MPFR reference of a registered carrier, per component of Finalize.
struct CarrierReference {
  std::vector<double> as_double;
  std::vector<long double> as_long_double;
  bool certified = false;
  long precision_bits = 0;  // p of the agreeing pair (values computed at 2p)
  std::string note;         // why not certified; empty otherwise
};

struct Entry {
  std::string name;
  std::string summary;
  bool commutative = false;  // CT<double>::kCommutative: may schedules permute inputs?
  std::size_t components = 0;
  int (*laws)(const cli::laws::Options&) = nullptr;
  int (*derive)(std::uint64_t trials, std::uint64_t seed) = nullptr;  // null: no derivation
  std::vector<long double> (*replay)(ScalarKind, const MergeTree&, std::span<const double>) =
      nullptr;
  CarrierReference (*reference)(std::span<const double>) = nullptr;
};

// Adds an entry (a duplicate name aborts with a message at start-up); returns true.
bool Register(const Entry& e);
// The entry named `name`, or null.
const Entry* Find(const std::string& name);
// Registered names, sorted.
std::vector<std::string> Names();
// Names() joined by spaces, with a leading space when not empty ("" when none): for the
// "must be one of" lists.
std::string NamesSuffix();

}  // namespace carrier::registry
