// experiments/run/memory.hpp: how much memory a trial of length n holds, and whether this
// machine has it, so that eval and sweep refuse an n that cannot run (one line, exit 2) before
// generating anything, instead of being killed half-way.
//
// Contract
//   TrialBytes(t, n, generator) estimates the peak bytes one trial holds beyond the program
//   itself. A one-column input is held in a StoredColumn (run/trial.hpp): 1 byte per value for
//   fp8 storage, 2 for bf16 and fp16, 4 for tf32 and fp32, 8 for fp64; the fast engine's walk
//   (core/orders/shape.hpp IsShapeWalked) reads it a window at a time, and the fast references of
//   the entries with Entry::column_reference a chunk at a time, so that is all such a trial
//   holds (plus O(window + depth)). Any other reader gets the column decoded (8 bytes per value)
//   and the replay's copy in the compute type (4 bytes fp32, 8 emulated, an Mpfr value with its
//   limbs for mpfr:BITS; none for fp64, nor for an emulated format that holds every storage
//   value under a deterministic rounding: those replays read the doubles in place, register.hpp
//   CachedInputs); a generator that is not inputs::Chunked (ill, exact, blockscaled, p4016, sorted)
//   holds all its values as doubles while the column is built (generator: its text; empty: not
//   counted). Pairs are two such columns, read the same way (the bounds read them by chunks).
//   Attention inputs are fp64 (3 n head_dim values) with the compute copy. The oracle engine (or a
//   schedule the fast engine cannot walk) adds the explicit tree with the statistics' and hash's
//   per-node arrays: about 2n nodes of 96 bytes. An estimate of what the code allocates, not a
//   bound.
//   AvailableBytes() is the smaller of /proc/meminfo's MemAvailable and the cgroup's
//   memory.max minus memory.current (cgroup v2), or 0 when neither can be read (no check).
//   CheckTrialMemory throws SpecError "n = N needs about X bytes (...) but only Y are
//   available" when copies * TrialBytes exceeds AvailableBytes.
#pragma once

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <cstdint>
#include <string>

#include "run/trial.hpp"

namespace carrier::run {

inline constexpr std::uint64_t kMaxTrialN = std::uint64_t{1} << 30;  // eval and sweep

std::uint64_t TrialBytes(const ResolvedTrial& t, std::uint64_t n,
                         const std::string& generator = "");
std::uint64_t AvailableBytes();
// `copies`: how many trials' inputs may be held at once (sweep: its jobs).
void CheckTrialMemory(const ResolvedTrial& t, std::uint64_t n, std::uint64_t copies = 1,
                      const std::string& generator = "");

}  // namespace carrier::run

#endif  // CARRIER_HAVE_MPFR
