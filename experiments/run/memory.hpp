// experiments/run/memory.hpp: how much memory a trial of length n holds, and whether this
// machine has it, so that eval and sweep refuse an n that cannot run (one line, exit 2) before
// generating anything, instead of being killed half-way.
//
// Contract
//   TrialBytes(t, n) estimates the peak bytes one trial holds beyond the program itself: the
//   stored input as fp64 (MakeInput: 8 bytes per value; pairs two columns, attention
//   3 n head_dim values), the replay's copy in the compute type (4 bytes fp32, 8 emulated, an
//   Mpfr value with its limbs for mpfr:BITS; none for fp64, nor for an emulated format that
//   holds every storage value under a deterministic rounding: those replays read the stored
//   doubles in place, register.hpp CachedInputs), the (a, b) pairs the bound reads
//   for the pair ops, and for the oracle engine (or a schedule the fast engine cannot walk,
//   run/tree_shape.hpp) the explicit tree with the statistics' and hash's per-node arrays:
//   about 2n nodes of 96 bytes. An estimate of what the code allocates, not a bound.
//   AvailableBytes() is the smaller of /proc/meminfo's MemAvailable and the cgroup's
//   memory.max minus memory.current (cgroup v2), or 0 when neither can be read (no check).
//   CheckTrialMemory throws SpecError "n = N needs about X bytes (...) but only Y are
//   available" when copies * TrialBytes exceeds AvailableBytes.
#pragma once

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <cstdint>

#include "run/trial.hpp"

namespace carrier::run {

inline constexpr std::uint64_t kMaxTrialN = std::uint64_t{1} << 30;  // eval and sweep

std::uint64_t TrialBytes(const ResolvedTrial& t, std::uint64_t n);
std::uint64_t AvailableBytes();
// `copies`: how many trials' inputs may be held at once (sweep: its jobs).
void CheckTrialMemory(const ResolvedTrial& t, std::uint64_t n, std::uint64_t copies = 1);

}  // namespace carrier::run

#endif  // CARRIER_HAVE_MPFR
