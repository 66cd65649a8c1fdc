// experiments/ops/builtin.hpp: what the built-in registrations (experiments/ops/*.cpp) share:
// the makers (ops/register.hpp), the backends' entry points and the schedule texts each
// backend realises. One .cpp per op (or per family of ops) registers it with
// CARRIER_REGISTER_OP; nothing else in the tree names the op.
#pragma once

#include <string>
#include <vector>

#include "backends/backends.hpp"
#include "core/cuda_schedule.hpp"
#include "ops/register.hpp"
#include "precision/op_bounds.hpp"
#include "registry/registry.hpp"

namespace carrier::ops {

using registry::BackendEntry;
using registry::Entry;

// kernels/simd's pinned schedules (kernels/simd/simd.hpp); empty = the target's native one.
inline constexpr const char* kSimdStrided = "strided:K (K 16 32 64)";
inline constexpr const char* kSimdStridedTiles = "strided:K or strided:K:tile:T:lift (K 16 32 64)";
inline constexpr const char* kSimdSeq = "seq (lanes merged by index)";

inline std::string OmpSchedules(const char* inner) {
  return std::string("omp:P[:seq|pairwise] with ") + inner + " inside";
}

// simd, omp and cuda for a carrier all three have a kernel for (CARRIER_CPU_KERNEL_CARRIERS).
template <template <class> class CT>
std::vector<BackendEntry> KernelBackends(const char* simd_schedules) {
  return {{"simd", simd_schedules, &backends::RunSimdCarrier<CT>},
          {"omp", OmpSchedules(simd_schedules), &backends::RunOmpCarrier<CT>},
          {"cuda", kCudaScheduleGrammar, &backends::RunCudaCarrier<CT>}};
}

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
inline void SetReference(run::SharedReference& out, reference::Reference r) {
  out.ref = std::move(r);
  out.tier = std::string(reference::TierName(out.ref.cert.tier));
}
#endif

}  // namespace carrier::ops
