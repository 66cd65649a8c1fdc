// The omp backend of eval and sweep (backends.hpp): kernels/omp through cpu_kernels.hpp. An
// empty schedule runs omp:P:pairwise with P the OpenMP thread count and the native SIMD
// schedule inside; `omp:P[:seq|pairwise]` without an inner schedule gets the native one. The
// executed schedule text is returned and replays to the same bits.
#include "backends/backends.hpp"
#include "core/carriers/all.hpp"

#if defined(CARRIER_HAVE_OMP_KERNELS) && CARRIER_HAVE_OMP_KERNELS
#include "backends/cpu_kernels.hpp"
#include "kernels/omp/omp.hpp"

namespace carrier::backends {
namespace {

struct OmpKernels {
  template <class C, class TS>
  static Schedule Executed(const std::string& text) {
    const Schedule s = text.empty() ? Schedule::Omp(static_cast<std::uint64_t>(omp::MaxThreads()),
                                                    OuterOrder::kPairwise)
                                    : ParseSchedule(text);
    return omp::Executed<C, TS>(s);
  }
  template <class C, class TS>
  static typename C::State Reduce(const TS* x, std::size_t n, const Schedule& s) {
    return omp::Reduce<C, TS>(x, n, s);
  }
  template <class TS>
  static auto ReduceDot(const TS* a, const TS* b, std::size_t n, const Schedule& s) {
    return omp::ReduceDot<TS>(a, b, n, s);
  }
};

}  // namespace

template <template <class> class CT>
Result RunOmpCarrier(const Request& request) {
  return cpu::RunCarrier<OmpKernels, CT>(request, "omp");
}
Result RunOmpSoftmax(const Request& request) { return cpu::RunSoftmax<OmpKernels>(request, "omp"); }
Result RunOmpDot(const Request& request) { return cpu::RunDot<OmpKernels>(request, "omp"); }

#define CARRIER_INSTANTIATE(CT) template Result RunOmpCarrier<CT>(const Request&);
CARRIER_CPU_KERNEL_CARRIERS(CARRIER_INSTANTIATE)
#undef CARRIER_INSTANTIATE

}  // namespace carrier::backends

#else

namespace carrier::backends {

namespace {
[[noreturn]] void OmpNotBuilt() {
  throw Unavailable("backend omp is not built: it needs OpenMP and Highway at configure time");
}
}  // namespace

template <template <class> class CT>
Result RunOmpCarrier(const Request&) {
  OmpNotBuilt();
}
Result RunOmpSoftmax(const Request&) { OmpNotBuilt(); }
Result RunOmpDot(const Request&) { OmpNotBuilt(); }

#define CARRIER_INSTANTIATE(CT) template Result RunOmpCarrier<CT>(const Request&);
CARRIER_CPU_KERNEL_CARRIERS(CARRIER_INSTANTIATE)
#undef CARRIER_INSTANTIATE

}  // namespace carrier::backends

#endif
